/* Perennial's hot path in C: the work of each request that Perl cannot make cheap enough
 * (issue 16). Each function has a pure-Perl twin in lib/Perennial/HTTP/Core.pm that does the
 * same thing byte for byte; the tests run both. Nothing here keeps state between calls but
 * the Date line of the current second, the package's stash (for the handles it makes) and
 * the process's id. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"
#include <time.h>
#include <errno.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/uio.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/time.h>
#include <sys/epoll.h>
#include <string.h>

/* The framings of a response body, as the Perl side names them */
static const char *const FRAMING[] = { "length", "chunked", "close", "none" };
enum { F_LENGTH, F_CHUNKED, F_CLOSE, F_NONE };

/* Headers the server writes itself: Content-Length is kept and read, Transfer-Encoding and
 * Connection are dropped (Connection: close is noted), Date and Server are kept and noted */
enum { OWN_NONE, OWN_LENGTH, OWN_TE, OWN_CONNECTION, OWN_DATE, OWN_SERVER };

static int
own_header(const char *name, STRLEN len)
{
    switch (len) {
    case 4:
        if (strncasecmp(name, "date", 4) == 0) return OWN_DATE;
        break;
    case 6:
        if (strncasecmp(name, "server", 6) == 0) return OWN_SERVER;
        break;
    case 10:
        if (strncasecmp(name, "connection", 10) == 0) return OWN_CONNECTION;
        break;
    case 14:
        if (strncasecmp(name, "content-length", 14) == 0) return OWN_LENGTH;
        break;
    case 17:
        if (strncasecmp(name, "transfer-encoding", 17) == 0) return OWN_TE;
        break;
    }
    return OWN_NONE;
}

/* The bytes of a header name or value, or of a body part: a string of characters is written
 * as Latin-1 when it can be (as syswrite would); one with wider characters cannot be sent */
static const char *
bytes_of(pTHX_ SV *sv, STRLEN *len, const char *what)
{
    const char *p;
    if (!sv) sv = &PL_sv_undef;    /* An odd count: the last name has no value */
    p = SvPV_const(sv, *len);      /* Undefined: empty, with perl's warning */
    if (SvUTF8(sv)) {
        SV *copy = sv_2mortal(newSVpvn_flags(p, *len, SVf_UTF8));
        if (!sv_utf8_downgrade(copy, TRUE))
            croak("Wide character in %s\n", what);
        p = SvPV_const(copy, *len);
    }
    return p;
}

/* Appends bytes, a line break in them written as a space: a break would start a header, or a
 * body, of the client's choosing */
static void
cat_without_breaks(pTHX_ SV *out, const char *p, STRLEN len)
{
    STRLEN start = SvCUR(out), i;
    char *d;
    sv_catpvn(out, p, len);
    d = SvPVX(out) + start;
    for (i = 0; i < len; i++)
        if (d[i] == '\r' || d[i] == '\n') d[i] = ' ';
}

/* "Date: Tue, 24 Nov 2026 12:00:00 GMT\r\n", made once a second */
static const char *
date_line(void)
{
    static const char *const day[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
    static const char *const month[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    static time_t second = -1;
    static char line[64];
    time_t now = time(NULL);
    if (now != second) {
        struct tm t;
        gmtime_r(&now, &t);
        snprintf(line, sizeof line, "Date: %s, %02d %s %04d %02d:%02d:%02d GMT\r\n",
                 day[t.tm_wday], t.tm_mday, month[t.tm_mon], t.tm_year + 1900, t.tm_hour,
                 t.tm_min, t.tm_sec);
        second = now;
    }
    return line;
}

/* The head of a response (see response_head in Core.pm); sets *framing, *length (a mortal or
 * body_length, or NULL) and *keep_alive */
static SV *
build_head(pTHX_ SV *status_line, IV status, SV *headers, SV *body_length, IV http11,
           IV head_only, IV *keep_alive, SV *server_line, int *framing, SV **length)
{
    AV *av;
    SSize_t i, last;
    SV *out, *head;
    int has_date = 0, has_server = 0, close = 0;
    STRLEN len;
    const char *p;
    if (!SvROK(headers) || SvTYPE(SvRV(headers)) != SVt_PVAV)
        croak("Not an ARRAY reference");
    av = (AV *)SvRV(headers);
    last = av_top_index(av);
    out = sv_2mortal(newSVpvs(""));
    *length = NULL;
    *framing = F_LENGTH;
    for (i = 0; i <= last; i += 2) {
        SV **name_sv = av_fetch(av, i, 0), **value_sv = av_fetch(av, i + 1, 0);
        STRLEN nlen, vlen;
        const char *name = bytes_of(aTHX_ name_sv ? *name_sv : NULL, &nlen, "a response header");
        const char *value = bytes_of(aTHX_ value_sv ? *value_sv : NULL, &vlen, "a response header");
        switch (own_header(name, nlen)) {
        case OWN_TE:
            continue;
        case OWN_CONNECTION:
            if (vlen == 5 && strncasecmp(value, "close", 5) == 0) close = 1;
            continue;
        case OWN_LENGTH:
            *length = sv_2mortal(newSVpvs(""));
            cat_without_breaks(aTHX_ *length, value, vlen);
            break;
        case OWN_DATE:
            has_date = 1;
            break;
        case OWN_SERVER:
            has_server = 1;
            break;
        }
        cat_without_breaks(aTHX_ out, name, nlen);
        sv_catpvs(out, ": ");
        cat_without_breaks(aTHX_ out, value, vlen);
        sv_catpvs(out, "\r\n");
    }
    p = SvPV_const(status_line, len);
    head = sv_2mortal(newSV(len + SvCUR(out) + 160));
    sv_setpvn(head, p, len);
    if (!has_server) {
        p = SvPV_const(server_line, len);
        sv_catpvn(head, p, len);
    }
    sv_catsv(head, out);
    if (status < 200 || status == 204 || status == 304) *framing = F_NONE;
    else if (!*length) {
        if (body_length && SvOK(body_length)) {
            *length = body_length;
            p = SvPV_const(body_length, len);
            sv_catpvs(head, "Content-Length: ");
            sv_catpvn(head, p, len);
            sv_catpvs(head, "\r\n");
        }
        else if (head_only) *framing = F_NONE;
        else if (http11) {
            *framing = F_CHUNKED;
            sv_catpvs(head, "Transfer-Encoding: chunked\r\n");
        }
        else *framing = F_CLOSE;
    }
    if (close || *framing == F_CLOSE) *keep_alive = 0;
    if (head_only) *framing = F_NONE;
    if (!*keep_alive) sv_catpvs(head, "Connection: close\r\n");
    else if (!http11) sv_catpvs(head, "Connection: keep-alive\r\n");
    if (!has_date) sv_catpv(head, date_line());
    sv_catpvs(head, "\r\n");
    return head;
}

/* The descriptor of a Perl file handle (a glob, a reference to one, or an IO object) */
static int
handle_fd(pTHX_ SV *handle)
{
    IO *io = sv_2io(handle);
    PerlIO *f = io ? IoOFP(io) : NULL;
    if (!f) f = io ? IoIFP(io) : NULL;
    if (!f) croak("write_response: not an open handle");
    return PerlIO_fileno(f);
}

#define MAX_PARTS 64
#define MAX_PLAIN_NAME 64

/* RFC 9110's tchar */
static int
is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return 1;
    return c && strchr("!#$%&'*+-.^`|~", c) != NULL;    /* '_' aside: see parse_plain */
}

static int
hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* A limit from the limits hash, or a default */
static IV
limit_of(pTHX_ HV *limits, const char *key, I32 klen, IV otherwise)
{
    SV **v = hv_fetch(limits, key, klen, 0);
    return v && SvOK(*v) ? SvIV(*v) : otherwise;
}

/* A copy of the listener's and the connection's keys, in a hash sized for the request's keys
 * besides ($more: its fields, its line's and those the Perl adds), so that it never grows: a
 * hash bigger than it needs costs as much as one that grows, in the making and the freeing.
 * The listener's hash is copied whole by newHVhv, bucket by bucket, which costs less than a
 * store of each key (2.6k instructions of a kept-alive PSGI request); the copy has the size of
 * the listener's hash, so that hash is given the size the copy needs, once (its keys and
 * values do not change). */
static HV *
env_from(pTHX_ HV *base, HV *peer, IV more)
{
    HV *env;
    HE *he;
    IV want = HvUSEDKEYS(base) + HvUSEDKEYS(peer) + more;
    if ((IV)HvMAX(base) + 1 < want) hv_ksplit(base, want);
    env = newHVhv(base);
    hv_iterinit(peer);
    while ((he = hv_iternext(peer))) {
        I32 klen = HeKLEN(he);
        if (klen == HEf_SVKEY) {
            (void)hv_store_ent(env, HeSVKEY(he), newSVsv(HeVAL(he)), 0);
            continue;
        }
        (void)hv_common_key_len(env, HeKEY(he), HeKUTF8(he) ? -klen : klen,
                                HV_FETCH_ISSTORE, newSVsv(HeVAL(he)), HeHASH(he));
    }
    return env;
}

/* Methods a plain request has; any other goes the whole way through the Perl judge */
static int
plain_method(const char *m, STRLEN len)
{
    switch (len) {
    case 3: return memEQ(m, "GET", 3) || memEQ(m, "PUT", 3);
    case 4: return memEQ(m, "HEAD", 4) || memEQ(m, "POST", 4);
    case 5: return memEQ(m, "PATCH", 5);
    case 6: return memEQ(m, "DELETE", 6);
    case 7: return memEQ(m, "OPTIONS", 7);
    }
    return 0;
}

#define MAX_PLAIN_FIELDS 100

/* This process's id, asked of the kernel once: perl's $$ asks on every read (glibc keeps no
 * copy since 2.25), and a script request read it twice. A fork forgets it in the child. */
static pid_t cached_pid = 0;

static void
forget_pid(void)
{
    cached_pid = 0;
}

/* An IPv4 address as inet_ntop writes it (which formats it through sprintf, 1.7k instructions) */
static void
ipv4_text(char *text, const unsigned char *b)
{
    int i;
    for (i = 0; i < 4; i++) {
        unsigned v = b[i];
        if (v >= 100) *text++ = '0' + v / 100;
        if (v >= 10) *text++ = '0' + v / 10 % 10;
        *text++ = '0' + v % 10;
        *text++ = i < 3 ? '.' : '\0';
    }
}

/* The connection's own keys of a request's environment: psgix.io, and the client's address
 * and port (REMOTE_ADDR, REMOTE_PORT) unless it came on a Unix socket */
static HV *
peer_env(pTHX_ SV *handle, struct sockaddr_storage *addr)
{
    HV *peer = newHV();
    char text[INET6_ADDRSTRLEN];
    const char *ip = NULL;
    int port = 0;
    (void)hv_stores(peer, "psgix.io", newSVsv(handle));
    if (addr->ss_family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)addr;
        ipv4_text(text, (const unsigned char *)&in->sin_addr);
        ip   = text;
        port = ntohs(in->sin_port);
    }
    else if (addr->ss_family == AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)addr;
        ip   = inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
        port = ntohs(in6->sin6_port);
    }
    if (ip) {
        (void)hv_stores(peer, "REMOTE_ADDR", newSVpv(text, 0));
        (void)hv_stores(peer, "REMOTE_PORT", newSViv(port));
    }
    return peer;
}


/* The handle of the last connection, kept for the next one: a new handle costs perl about 8k
 * instructions, most of them in making its IO object, which empties perl's cache of class
 * names (each `Class->method` after it looks its class up again). It is used again only when
 * nothing but this holds it (no application kept it, nor aliased a glob of its own to it:
 * the glob's own count), it was closed, not blessed, and nothing was put in the glob; else it
 * is let go (closing it, when nothing did) and a new one made. */
static GV *kept_handle = NULL;

/* A glob for a handle, as perl's anonymous ones */
static GV *
new_glob(pTHX)
{
    static HV *stash = NULL;
    GV *gv;
    if (!stash) stash = gv_stashpvs("Perennial::HTTP::Core", GV_ADD);
    gv = (GV *)newSV(0);
    gv_init_pvn(gv, stash, "__ANONIO__", 10, 0);
    return gv;
}

static GV *
spare_handle(pTHX)
{
    GV *gv = kept_handle;
    IO *io;
    if (gv) {
        io = GvIOp(gv);
        if (SvREFCNT(gv) == 1 && GvREFCNT(gv) == 1 && !SvOBJECT(gv) && !SvMAGICAL(gv) && io
            && SvREFCNT(io) == 1 && !SvMAGICAL(io)
            && !IoIFP(io) && !IoOFP(io) && !IoDIRP(io) && !GvAV(gv) && !GvHV(gv) && !GvCV(gv)
            && !GvFORM(gv) && !(GvSV(gv) && SvOK(GvSV(gv)))) {
            IoLINES(io) = 0;
            IoPAGE(io) = 0;
            IoLINES_LEFT(io) = 0;
            IoFLAGS(io) = 0;
            return gv;
        }
        kept_handle = NULL;
        SvREFCNT_dec((SV *)gv);
    }
    return kept_handle = new_glob(aTHX);
}

/* A descriptor as a handle of its own (one unbuffered stream, closed with it); NULL if perl
 * cannot open it */
static SV *
handle_of_fd(pTHX_ int fd)
{
    PerlIO *f = PerlIO_openn(aTHX_ ":unix", "r", fd, 0, 0, NULL, 0, NULL);
    GV *gv;
    IO *io;
    if (!f) return NULL;
    gv = new_glob(aTHX);
    io = GvIOn(gv);
    IoIFP(io) = f;
    IoTYPE(io) = IoTYPE_RDONLY;
    return newRV_noinc((SV *)gv);
}

/* A connection, as perl's accept() gives it but as one unbuffered stream for reading and
 * writing: perl opens two buffered ones, each asking the kernel three questions (fcntl, ioctl,
 * lseek) a socket never needs answered. Its handle (a mortal reference) and, in *peer, the
 * connection's keys of a request's environment; NULL, errno set, when there is none. */
static SV *
accept_connection(pTHX_ int listener, HV **peer)
{
    struct sockaddr_storage addr;
    socklen_t len = sizeof addr;
    int fd, saved_errno;
    PerlIO *f;
    GV *gv;
    IO *io;
    SV *handle;

    fd = accept4(listener, (struct sockaddr *)&addr, &len, SOCK_CLOEXEC);
    if (fd < 0) return NULL;
    f = PerlIO_openn(aTHX_ ":unix", "r+", fd, 0, 0, NULL, 0, NULL);
    if (!f) {
        saved_errno = errno;
        close(fd);
        errno = saved_errno;
        return NULL;
    }
    gv = spare_handle(aTHX);
    io = GvIOn(gv);
    IoIFP(io) = f;
    IoOFP(io) = f;
    IoTYPE(io) = IoTYPE_SOCKET;
    handle = sv_2mortal(newRV_inc((SV *)gv));
    *peer = peer_env(aTHX_ handle, &addr);
    return handle;
}

/* A plain request: what HttpProtocolOptions Strict serves as it is, and that C can read as
 * Perennial::HTTP::Request reads it. Its environment (a new hash) and the head's length in
 * *head_len; anything else returns NULL, and the Perl judge reads it from the start: this
 * function refuses nothing. */
static HV *
plain_head(pTHX_ SV *buf, HV *base, HV *peer, HV *limits, STRLEN *head_len)
{
    STRLEN size, mlen, i, path_end, tlen;
    const char *b, *end, *p, *target;
    SV **flag;
    const char *names[MAX_PLAIN_FIELDS], *values[MAX_PLAIN_FIELDS];
    STRLEN nlens[MAX_PLAIN_FIELDS], vlens[MAX_PLAIN_FIELDS];
    int fields = 0, http11, f, has_host = -1;
    IV line_limit, field_limit, field_count;
    SV *path;
    HV *env, *hosts = NULL;
    SV **hosts_sv;
    char key[MAX_PLAIN_NAME + 6];

    flag = hv_fetchs(limits, "unsafe", 0);
    if (flag && SvTRUE(*flag)) return NULL;
    flag = hv_fetchs(limits, "registered", 0);
    if (flag && SvTRUE(*flag)) return NULL;
    b = SvPV_const(buf, size);
    end = b + size;
    line_limit = limit_of(aTHX_ limits, "line", 4, 8190);
    field_limit = limit_of(aTHX_ limits, "field_size", 10, 8190);
    field_count = limit_of(aTHX_ limits, "fields", 6, 100);
    hosts_sv = hv_fetchs(limits, "hosts", 0);
    if (hosts_sv && SvROK(*hosts_sv) && SvTYPE(SvRV(*hosts_sv)) == SVt_PVHV)
        hosts = (HV *)SvRV(*hosts_sv);

    /* The request line: METHOD SP /target SP HTTP/1.x CRLF */
    for (p = b; p < end && *p >= 'A' && *p <= 'Z'; p++) ;
    mlen = p - b;
    if (p >= end || *p != ' ' || !plain_method(b, mlen)) return NULL;
    target = ++p;
    if (p >= end || *p != '/') return NULL;
    path_end = 0;
    for (; p < end && *p != ' '; p++) {
        unsigned char c = *p;
        if (c <= 0x20 || c >= 0x7f || c == '#') return NULL;
        if (c == '?' && !path_end) path_end = p - target;
    }
    tlen = p - target;
    if (!path_end) path_end = tlen;
    if (end - p < 11 || memNE(p, " HTTP/1.", 8) || (p[8] != '0' && p[8] != '1')
        || p[9] != '\r' || p[10] != '\n')
        return NULL;
    http11 = p[8] == '1';
    p += 11;
    if ((IV)(p - b - 1) > line_limit) return NULL;

    /* Header lines: token ":" OWS value CRLF, within the limits, each name once, no Expect */
    while (1) {
        const char *name = p, *value;
        if (end - p >= 2 && p[0] == '\r' && p[1] == '\n') { p += 2; break; }
        while (p < end && is_tchar(*p)) p++;
        if (p >= end || *p != ':' || p == name || p - name > MAX_PLAIN_NAME) return NULL;
        if (fields >= MAX_PLAIN_FIELDS || fields >= field_count) return NULL;
        nlens[fields] = p - name;
        names[fields] = name;
        for (p++; p < end && (*p == ' ' || *p == '\t'); p++) ;
        value = p;
        for (; p < end; p++) {
            unsigned char c = *p;
            if (c == '\r' || (c < 0x20 && c != '\t') || c == 0x7f) break;
        }
        if (end - p < 2 || p[0] != '\r' || p[1] != '\n') return NULL;
        if ((IV)(p - name) > field_limit) return NULL;
        values[fields] = value;
        vlens[fields] = p - value;
        for (f = 0; f < fields; f++)
            if (nlens[f] == nlens[fields] && strncasecmp(names[f], name, nlens[f]) == 0)
                return NULL;
        if (nlens[fields] == 6 && strncasecmp(name, "expect", 6) == 0) return NULL;
        if (nlens[fields] == 4 && strncasecmp(name, "host", 4) == 0) has_host = fields;
        fields++;
        p += 2;
    }

    /* The Host: one the Perl judge has found good on these limits (it keeps its judgements) */
    if (has_host < 0 ? http11 : !hosts) return NULL;
    if (has_host >= 0) {
        SV **known = hv_fetch(hosts, values[has_host], vlens[has_host], 0);
        if (!known || !SvTRUE(*known)) return NULL;
    }

    /* The path, its %XX decoded: no NUL, no dot segment, nothing the judge would change */
    path = sv_2mortal(newSV(path_end + 1));
    SvPOK_on(path);
    {
        char *d = SvPVX(path);
        for (i = 0; i < path_end; i++) {
            char c = target[i];
            if (c == '%') {
                int hi, lo;
                if (i + 2 >= path_end) return NULL;
                hi = hex_value(target[i + 1]);
                lo = hex_value(target[i + 2]);
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return NULL;
                c = (char)(hi * 16 + lo);
                i += 2;
            }
            *d++ = c;
        }
        *d = '\0';
        SvCUR_set(path, d - SvPVX(path));
    }
    if (strstr(SvPVX(path), "/.") || memmem(target, tlen, "%00", 3)) return NULL;

    env = env_from(aTHX_ base, peer, fields + 6 + 4);    /* The line's 6, then Perl's */
    (void)hv_stores(env, "REQUEST_METHOD", newSVpvn(b, mlen));
    (void)hv_stores(env, "REQUEST_URI", newSVpvn(target, tlen));
    (void)hv_stores(env, "SCRIPT_NAME", newSVpvs(""));
    (void)hv_stores(env, "PATH_INFO", SvREFCNT_inc_simple_NN(path));
    (void)hv_stores(env, "QUERY_STRING",
                    path_end < tlen ? newSVpvn(target + path_end + 1, tlen - path_end - 1)
                                    : newSVpvs(""));
    (void)hv_stores(env, "SERVER_PROTOCOL", newSVpvn(http11 ? "HTTP/1.1" : "HTTP/1.0", 8));
    for (f = 0; f < fields; f++) {
        STRLEN k = 0, n = nlens[f];
        const char *name = names[f];
        if (!((n == 14 && strncasecmp(name, "content-length", 14) == 0)
              || (n == 12 && strncasecmp(name, "content-type", 12) == 0))) {
            memcpy(key, "HTTP_", 5);
            k = 5;
        }
        for (i = 0; i < n; i++) key[k++] = name[i] == '-' ? '_' : toUPPER(name[i]);
        (void)hv_store(env, key, k, newSVpvn(values[f], vlens[f]), 0);
    }
    *head_len = p - b;
    return env;
}


/* Writes a response with an array body, its head and body in one sendmsg, without waiting (a
 * client slow to take it is the caller's to wait for, within Timeout): what was written (-1,
 * errno set, on an error), the head in *head (a mortal), its framing, length and keep_alive as
 * build_head sets them, the body's length in *total (0 when the framing sends none) */
static ssize_t
send_response(pTHX_ int fd, SV *status_line, IV status, SV *headers, SV *body, IV http11,
              IV head_only, IV *keep_alive, SV *server_line, SV **head, int *framing,
              SV **length, STRLEN *total)
{
    AV *av;
    SSize_t i, last, parts;
    SV *joined = NULL, *body_length;
    STRLEN len;
    struct iovec iov[MAX_PARTS + 1];
    struct msghdr msg;
    ssize_t n;

    if (!SvROK(body) || SvTYPE(SvRV(body)) != SVt_PVAV)
        croak("Not an ARRAY reference");
    av = (AV *)SvRV(body);
    last = av_top_index(av);
    parts = last + 1;
    *total = 0;
    if (parts > MAX_PARTS) {
        joined = sv_2mortal(newSVpvs(""));
        for (i = 0; i <= last; i++) {
            SV **part = av_fetch(av, i, 0);
            const char *p = bytes_of(aTHX_ part ? *part : NULL, &len, "the response body");
            sv_catpvn(joined, p, len);
        }
        parts = 1;
        iov[1].iov_base = SvPVX(joined);
        iov[1].iov_len = SvCUR(joined);
        *total = SvCUR(joined);
    }
    else {
        for (i = 0; i <= last; i++) {
            SV **part = av_fetch(av, i, 0);
            iov[i + 1].iov_base
                = (void *)bytes_of(aTHX_ part ? *part : NULL, &len, "the response body");
            iov[i + 1].iov_len = len;
            *total += len;
        }
    }
    body_length = sv_2mortal(newSVuv(*total));
    *head = build_head(aTHX_ status_line, status, headers, body_length, http11, head_only,
                       keep_alive, server_line, framing, length);
    if (*framing == F_NONE) { parts = 0; *total = 0; }
    iov[0].iov_base = SvPVX(*head);
    iov[0].iov_len = SvCUR(*head);
    Zero(&msg, 1, struct msghdr);
    msg.msg_iov = iov;
    msg.msg_iovlen = parts + 1;
    n = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = writev(fd, iov, parts + 1);
    return n;
}

/* Whether a descriptor can be read (or has ended), or with write can take more, before the
 * deadline (an epoch time; one look when it has passed); a signal does not cut the wait */
static int
fd_ready(pTHX_ int fd, NV until, IV write)
{
    struct pollfd pfd;
    struct timeval now;
    NV left;
    int n;
    pfd.fd = fd;
    pfd.events = write ? POLLOUT : POLLIN;
    while (1) {
        gettimeofday(&now, NULL);
        left = until - (now.tv_sec + now.tv_usec / 1e6);
        pfd.revents = 0;
        /* Milliseconds, a wait past 24 days cut to it (poll takes an int) */
        n = poll(&pfd, 1, left <= 0 ? 0 : left > 2000000 ? 2000000000 : (int)(left * 1000 + 0.999));
        if (n > 0) return 1;
        if (n == 0 || errno != EINTR) return 0;
        PERL_ASYNC_CHECK();    /* Perl's handlers run now, as after select in Perl */
    }
}

#include "Loop.c"
#include "Accept.c"

MODULE = Perennial::HTTP::Core    PACKAGE = Perennial::HTTP::Core

PROTOTYPES: DISABLE

BOOT:
    pthread_atfork(NULL, NULL, forget_pid);

IV
xs_pid()
  CODE:
    if (!cached_pid) cached_pid = getpid();
    RETVAL = cached_pid;
  OUTPUT:
    RETVAL

void
xs_response_head(status_line, status, headers, body_length, http11, head_only, keep_alive, server_line)
    SV *status_line
    IV status
    SV *headers
    SV *body_length
    IV http11
    IV head_only
    IV keep_alive
    SV *server_line
  PREINIT:
    SV *head, *length;
    int framing;
  PPCODE:
    head = build_head(aTHX_ status_line, status, headers, body_length, http11, head_only,
                      &keep_alive, server_line, &framing, &length);
    EXTEND(SP, 4);
    PUSHs(head);
    PUSHs(sv_2mortal(newSVpv(FRAMING[framing], 0)));
    PUSHs(length ? sv_mortalcopy(length) : &PL_sv_undef);
    PUSHs(sv_2mortal(newSViv(keep_alive)));

void
xs_write_response(handle, status_line, status, headers, body, http11, head_only, keep_alive, server_line)
    SV *handle
    SV *status_line
    IV status
    SV *headers
    SV *body
    IV http11
    IV head_only
    IV keep_alive
    SV *server_line
  PREINIT:
    SV *head, *length;
    int framing, saved_errno;
    STRLEN total;
    ssize_t n;
  PPCODE:
    n = send_response(aTHX_ handle_fd(aTHX_ handle), status_line, status, headers, body, http11,
                      head_only, &keep_alive, server_line, &head, &framing, &length, &total);
    saved_errno = errno;
    EXTEND(SP, 6);
    PUSHs(n < 0 ? &PL_sv_undef : sv_2mortal(newSViv(n)));
    PUSHs(head);
    PUSHs(sv_2mortal(newSVpv(FRAMING[framing], 0)));
    PUSHs(length ? sv_mortalcopy(length) : &PL_sv_undef);
    PUSHs(sv_2mortal(newSViv(keep_alive)));
    PUSHs(sv_2mortal(newSVuv(total)));
    errno = saved_errno;    /* $! for the caller */

void
xs_parse_plain(buf, base, peer, limits)
    SV *buf
    HV *base
    HV *peer
    HV *limits
  PREINIT:
    STRLEN len;
    HV *env;
  PPCODE:
    env = plain_head(aTHX_ buf, base, peer, limits, &len);
    if (!env) XSRETURN_EMPTY;
    EXTEND(SP, 2);
    PUSHs(sv_2mortal(newSViv(len)));
    PUSHs(sv_2mortal(newRV_noinc((SV *)env)));

int
xs_ready(handle, until, write = 0)
    SV *handle
    NV until
    IV write
  CODE:
    RETVAL = fd_ready(aTHX_ handle_fd(aTHX_ handle), until, write);
  OUTPUT:
    RETVAL

void
xs_accept_client(listener)
    SV *listener
  PREINIT:
    SV *handle;
    HV *peer;
  PPCODE:
    handle = accept_connection(aTHX_ handle_fd(aTHX_ listener), &peer);
    if (!handle) XSRETURN_EMPTY;
    EXTEND(SP, 2);
    PUSHs(handle);
    PUSHs(sv_2mortal(newRV_noinc((SV *)peer)));

SV *
xs_waiter(handles)
    SV *handles
  PREINIT:
    AV *av;
    SV **each;
    struct epoll_event ev;
    int ep, i, saved_errno;
  CODE:
    /* An epoll instance that watches each handle for input, and says which by its index: the
     * workers wait on the manager's one (Linux wakes the last to come first, see Server.pm).
     * Linux::Epoll calls a Perl callback for each ready handle (2.4k instructions a connection);
     * next_ready returns the index. */
    if (!SvROK(handles) || SvTYPE(SvRV(handles)) != SVt_PVAV) croak("waiter: not an array reference");
    av = (AV *)SvRV(handles);
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) XSRETURN_UNDEF;
    for (i = 0; i <= av_len(av); i++) {
        each = av_fetch(av, i, 0);
        memset(&ev, 0, sizeof ev);
        ev.events = EPOLLIN;
        ev.data.u32 = (uint32_t)i;
        if (!each || epoll_ctl(ep, EPOLL_CTL_ADD, handle_fd(aTHX_ *each), &ev) < 0) {
            saved_errno = errno;
            close(ep);
            errno = saved_errno;
            XSRETURN_UNDEF;
        }
    }
    RETVAL = handle_of_fd(aTHX_ ep);
    if (!RETVAL) {
        saved_errno = errno;
        close(ep);
        errno = saved_errno;
        XSRETURN_UNDEF;
    }
  OUTPUT:
    RETVAL

void
xs_next_ready(waiter)
    SV *waiter
  PREINIT:
    struct epoll_event ev;
    int n;
  PPCODE:
    /* The index of a handle that can be read, waiting at most a second; nothing after a
     * signal (its Perl handler has run) or the second. A signal whose Perl handler ran just
     * before the wait began (perl runs them between ops) would not end a wait without end:
     * a worker told to stop there slept on, so the caller looks at its flag each second. Dies
     * on an error, as Linux::Epoll does. */
    n = epoll_wait(handle_fd(aTHX_ waiter), &ev, 1, 1000);
    if (n < 0 && errno != EINTR) croak("Can't wait on the listeners: %s", strerror(errno));
    if (n != 1) {
        PERL_ASYNC_CHECK();
        XSRETURN_EMPTY;
    }
    mXPUSHu(ev.data.u32);

# The connection loop's usual requests (xs/Loop.c): (served, remaining) and, when the Perl is
# to go on with a request, its time, what the read returned, and its head's length and
# environment when it was read
void
xs_serve_plain(self, sock, buf_ref, base, peer, served, remaining)
    SV *self
    SV *sock
    SV *buf_ref
    SV *base
    SV *peer
    IV served
    SV *remaining
  PREINIT:
    struct conn_loop l;
    NV t0 = 0;
    ssize_t n = 0;
    HV *env = NULL;
    STRLEN len = 0;
    SV *left;
    int going_on, saved_errno;
  PPCODE:
    if (!loop_setup(aTHX_ &l, self, sock, buf_ref, base, peer))
        croak("serve_plain: not a connection loop");
    left = sv_2mortal(newSVsv(remaining));
    PUTBACK;
    going_on = run_loop(aTHX_ &l, &served, left, &t0, &n, &env, &len);
    saved_errno = errno;
    SPAGAIN;
    EXTEND(SP, 6);
    PUSHs(sv_2mortal(newSViv(served)));
    PUSHs(left);
    if (going_on) {
        PUSHs(sv_2mortal(newSVnv(t0)));
        PUSHs(n < 0 ? &PL_sv_undef : sv_2mortal(newSViv(n)));
        if (env) {
            PUSHs(sv_2mortal(newSVuv(len)));
            PUSHs(sv_2mortal(newRV_noinc((SV *)env)));
        }
    }
    errno = saved_errno;    /* $! for the caller, after a read that failed */

# The worker's accept loop in C (xs/Loop.c): the requests served, and whether the next
# connection is the Perl's to take
void
xs_serve_connections(conn, waiter, listeners, bases, unix_flags, stopping, reopen, memory_due, remaining)
    SV *conn
    SV *waiter
    SV *listeners
    SV *bases
    SV *unix_flags
    SV *stopping
    SV *reopen
    NV memory_due
    SV *remaining
  PREINIT:
    IV served;
    int take;
  PPCODE:
    if (!SvROK(listeners) || SvTYPE(SvRV(listeners)) != SVt_PVAV || !SvROK(bases)
        || SvTYPE(SvRV(bases)) != SVt_PVAV || !SvROK(unix_flags)
        || SvTYPE(SvRV(unix_flags)) != SVt_PVAV || !SvROK(stopping) || !SvROK(reopen))
        croak("serve_connections: bad arguments");
    PUTBACK;
    served = accept_loop(aTHX_ conn, handle_fd(aTHX_ waiter), (AV *)SvRV(listeners),
                         (AV *)SvRV(bases), (AV *)SvRV(unix_flags), stopping, reopen,
                         memory_due, remaining, &take);
    SPAGAIN;
    EXTEND(SP, 2);
    PUSHs(sv_2mortal(newSViv(served)));
    PUSHs(take ? &PL_sv_yes : &PL_sv_no);
