/* The CGI variables of a script request put into %ENV in C (issue 16): the Perl that compared
 * and set them cost about 100k instructions a request, most of it joins and hash slices. The
 * pure-Perl twin, pp_sync_env in lib/Perennial/Executor/Environment.pm, leaves %ENV and the
 * real environment the same; the tests run both. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* A name and its NUL at the end of the names put */
static void
append_name(pTHX_ SV *put, const char *name, STRLEN len)
{
    STRLEN cur = SvCUR(put);
    char *p = SvGROW(put, cur + len + 2);
    memcpy(p + cur, name, len);
    p[cur + len] = '\0';
    SvCUR_set(put, cur + len + 1);
}

/* Whether two values are the same string: two plain byte strings compared as they lie (sv_eq
 * cost 125 instructions a variable, 3k a request), anything else by sv_eq */
static int
same_string(pTHX_ SV *a, SV *b)
{
    if (SvPOK(a) && SvPOK(b) && !SvUTF8(a) && !SvUTF8(b) && !SvGMAGICAL(a) && !SvGMAGICAL(b))
        return SvCUR(a) == SvCUR(b) && memEQ(SvPVX_const(a), SvPVX_const(b), SvCUR(a));
    return sv_eq(a, b);
}

/* One variable: set in %ENV (and so in the real environment, through %ENV's magic) unless it
 * holds the same string already; an undefined value is the empty string. Its name is added to
 * the names this call put. */
static void
put_env(pTHX_ HV *envhv, SV *put, const char *name, STRLEN len, SV *val)
{
    SV **now = hv_fetch(envhv, name, (I32)len, 0);
    SV **slot;
    append_name(aTHX_ put, name, len);
    if (now && SvOK(*now)) {
        if (SvOK(val) ? same_string(aTHX_ *now, val) : SvPOK(*now) && SvCUR(*now) == 0) return;
    }
    slot = hv_fetch(envhv, name, (I32)len, 1);
    if (!slot) croak("Can't set %s in the environment\n", name);
    if (SvOK(val)) sv_setsv_mg(*slot, val);
    else sv_setpvn_mg(*slot, "", 0);
}

static SV *
env_value(pTHX_ HV *env, const char *key, I32 len)
{
    SV **v = hv_fetch(env, key, len, 0);
    return v ? *v : &PL_sv_undef;
}

/* The descriptor of psgix.io, or -1: a glob or a reference to one, with an open IO (perl's
 * sv_2io would die on anything else, and the application may have emptied the glob) */
static int
io_fd(pTHX_ SV *sv)
{
    GV *gv;
    IO *io;
    PerlIO *f;
    if (SvROK(sv)) sv = SvRV(sv);
    if (!isGV_with_GP(sv)) return -1;
    gv = (GV *)sv;
    io = GvIOp(gv);
    f = io ? IoIFP(io) : NULL;
    return f ? PerlIO_fileno(f) : -1;
}

/* An address as text, a v4-mapped IPv6 one as its IPv4 address (as APR gives it); false for
 * another family */
static int
address_text(const struct sockaddr_storage *ss, char *text, size_t size)
{
    if (ss->ss_family == AF_INET)
        return inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, text, size) != NULL;
    if (ss->ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) return inet_ntop(AF_INET, &a->s6_addr[12], text, size) != NULL;
        return inet_ntop(AF_INET6, a, text, size) != NULL;
    }
    return 0;
}

/* The address a connection came to, as text (getsockname), for a listener of every address:
 * the last connection's is kept, by its descriptor and its peer's address and port (the
 * proxy's, under RemoteIP), so that a kept-alive connection asks once. NULL if it cannot be
 * had. */
static const char *
local_address(pTHX_ HV *env)
{
    static int last_fd = -1;
    static char last_client[INET6_ADDRSTRLEN + 32], last_local[INET6_ADDRSTRLEN];
    char client[INET6_ADDRSTRLEN + 32];
    SV **io = hv_fetchs(env, "psgix.io", 0), **addr = hv_fetchs(env, "perennial.peer", 0),
       **port = hv_fetchs(env, "REMOTE_PORT", 0);
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd = io ? io_fd(aTHX_ *io) : -1;
    if (fd < 0) return NULL;
    if (!addr || !SvOK(*addr)) addr = hv_fetchs(env, "REMOTE_ADDR", 0);
    snprintf(client, sizeof client, "%d %s %s", fd,
        addr && SvOK(*addr) ? SvPV_nolen(*addr) : "", port && SvOK(*port) ? SvPV_nolen(*port) : "");
    if (fd == last_fd && strEQ(client, last_client)) return last_local;
    last_fd = -1;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) return NULL;
    if (!address_text(&ss, last_local, sizeof last_local)) return NULL;
    last_fd = fd;
    my_strlcpy(last_client, client, sizeof last_client);
    return last_local;
}

/* SERVER_ADDR: the listener's address, or the connection's on a listener of every address
 * (0.0.0.0, ::); none on a Unix socket (whose listener's name is its path) */
static SV *
server_address(pTHX_ HV *env)
{
    SV **name = hv_fetchs(env, "SERVER_NAME", 0);
    const char *p, *local;
    STRLEN len, i;
    if (!name || !SvOK(*name)) return NULL;
    p = SvPV_const(*name, len);
    if (!len) return NULL;
    for (i = 0; i < len; i++)    /* An address (glibc's strspn cost 230 instructions here) */
        if (!isXDIGIT(p[i]) && p[i] != ':' && p[i] != '.') return NULL;
    if (!strEQ(p, "0.0.0.0") && !strEQ(p, "::")) return *name;
    local = local_address(aTHX_ env);
    return local ? sv_2mortal(newSVpv(local, 0)) : NULL;
}

#define PUT(name, sv) put_env(aTHX_ envhv, put, name, sizeof(name) - 1, sv)
#define FROM(name) env_value(aTHX_ env, name, sizeof(name) - 1)

/* The request's own variables. SERVER_NAME and SERVER_PORT are the server as the client named
 * it, as Apache's with UseCanonicalName Off (Perennial::ErrorPage::server_of, the Perl's): Host's
 * name in lower case (an IPv6 address in brackets whole) and its port, else ServerName's
 * (perennial.server_port), else the scheme's (behind a proxy that maps ports, the client's,
 * not the listener's); without Host, ServerName, else the listener's address. HTTPS with https; the body's and
 * user's variables only when it has them. */
static void
put_request(pTHX_ HV *envhv, SV *put, HV *env)
{
    SV *host = FROM("HTTP_HOST");
    SV *v, *name, *scheme;
    int https;
    IV port = -1;
    STRLEN len, end = 0, i;
    const char *p;
    scheme = FROM("psgi.url_scheme");
    https = SvOK(scheme) && strEQ(SvPV_nolen_const(scheme), "https");
    if (SvOK(host)) {
        p = SvPV_const(host, len);
        if (len && p[0] == '[' && memchr(p, ']', len))
            end = (const char *)memchr(p, ']', len) - p + 1;
        else
            while (end < len && p[end] != ':') end++;
        if (end + 1 < len && p[end] == ':' && isDIGIT(p[end + 1])) {
            for (port = 0, i = end + 1; i < len && isDIGIT(p[i]) && port < 100000; i++)
                port = port * 10 + (p[i] - '0');
        }
        if (end > 1 && p[end - 1] == '.' && p[0] != '[') end--;    /* A trailing dot, as Apache */
        name = sv_2mortal(newSVpvn_flags(p, end, SvUTF8(host)));
        for (i = 0; i < end; i++)
            if (isUPPER(p[i])) {
                char *q = SvPVX(name);
                for (i = 0; i < end; i++) q[i] = toLOWER(q[i]);
                break;
            }
    }
    else {
        name = FROM("perennial.server_name");    /* ServerName, else the listener's address */
        if (!SvOK(name)) name = FROM("SERVER_NAME");
    }
    PUT("SERVER_NAME", name);
    if (port >= 0)
        PUT("SERVER_PORT", sv_2mortal(newSViv(port)));
    else if (SvOK(v = FROM("perennial.server_port")))
        PUT("SERVER_PORT", v);
    else
        PUT("SERVER_PORT", sv_2mortal(newSViv(https ? 443 : 80)));
    PUT("SERVER_PROTOCOL", FROM("SERVER_PROTOCOL"));
    PUT("REQUEST_METHOD", FROM("REQUEST_METHOD"));
    v = FROM("perennial.original_uri");    /* After an internal redirect: the client's */
    PUT("REQUEST_URI", SvOK(v) ? v : FROM("REQUEST_URI"));
    PUT("QUERY_STRING", FROM("QUERY_STRING"));
    PUT("REMOTE_ADDR", FROM("REMOTE_ADDR"));
    PUT("REMOTE_PORT", FROM("REMOTE_PORT"));
    PUT("REQUEST_SCHEME", SvOK(scheme) ? scheme : sv_2mortal(newSVpvs("http")));
    if ((v = server_address(aTHX_ env))) PUT("SERVER_ADDR", v);
    if (https) PUT("HTTPS", sv_2mortal(newSVpvs("on")));
    v = FROM("CONTENT_LENGTH");
    if (SvTRUE(v)) PUT("CONTENT_LENGTH", v);
    if (SvOK(v = FROM("CONTENT_TYPE"))) PUT("CONTENT_TYPE", v);
    if (SvOK(v = FROM("REMOTE_USER"))) PUT("REMOTE_USER", v);
    if (SvOK(v = FROM("AUTH_TYPE"))) PUT("AUTH_TYPE", v);
}

/* The request headers a CGI script sees (HTTP_*, but not those in skip, nor one whose name has
 * a byte other than a letter, a digit or "-", "_" in its key: Apache's http2env does not export
 * those) and the variables of an earlier request that redirected here (REDIRECT_*) */
static int
exported(pTHX_ const char *key, STRLEN len, HV *skip)
{
    STRLEN i;
    if (len > 9 && memEQ(key, "REDIRECT_", 9)) return 1;
    if (len < 6 || !memEQ(key, "HTTP_", 5)) return 0;
    for (i = 5; i < len; i++)
        if (!isALPHANUMERIC_A(key[i]) && key[i] != '_') return 0;
    return !(skip && hv_exists(skip, key, (I32)len));
}

static int
by_key(const void *a, const void *b)
{
    HE *x = *(HE *const *)a, *y = *(HE *const *)b;
    STRLEN xl = HeKLEN(x), yl = HeKLEN(y);
    int c = memcmp(HeKEY(x), HeKEY(y), xl < yl ? xl : yl);
    return c ? c : xl < yl ? -1 : xl > yl;
}

/* The headers in the order of their names, so that the same set is put as the same names
 * (a hash's order differs from one hash to the next) */
static void
put_headers(pTHX_ HV *envhv, SV *put, HV *env, HV *skip)
{
    HE *found[128], **all = found;
    size_t n = 0, size = sizeof(found) / sizeof(found[0]), i;
    HE *he;
    hv_iterinit(env);
    while ((he = hv_iternext(env))) {
        if (HeKLEN(he) == HEf_SVKEY || !exported(aTHX_ HeKEY(he), HeKLEN(he), skip)) continue;
        if (n == size) {
            HE **more;
            Newx(more, size * 2, HE *);
            SAVEFREEPV(more);
            Copy(all, more, n, HE *);
            all = more;
            size *= 2;
        }
        all[n++] = he;
    }
    qsort(all, n, sizeof(HE *), by_key);
    for (i = 0; i < n; i++) put_env(aTHX_ envhv, put, HeKEY(all[i]), HeKLEN(all[i]), HeVAL(all[i]));
}

/* What the last call put and this one did not is deleted from %ENV, or given back the value
 * it had when start-up ended (the state's base: a request's variable that replaced one of the
 * server's); the names are compared whole first, as they are nearly always the same */
static void
forget_others(pTHX_ HV *envhv, HV *state, SV *put)
{
    SV **was = hv_fetch(state, "names", 5, 1), **basep;
    STRLEN wlen, plen, i = 0;
    const char *w, *p = SvPV_const(put, plen);
    HV *now, *base = NULL;
    if (!was) croak("sync_env: the state is not writable");
    w = SvOK(*was) ? SvPV_const(*was, wlen) : (wlen = 0, "");
    if (wlen == plen && memEQ(w, p, plen)) return;
    now = (HV *)sv_2mortal((SV *)newHV());
    while (i < plen) {
        STRLEN n = strlen(p + i);
        (void)hv_store(now, p + i, (I32)n, &PL_sv_yes, 0);
        i += n + 1;
    }
    basep = hv_fetch(state, "base", 4, 0);
    if (basep && SvROK(*basep) && SvTYPE(SvRV(*basep)) == SVt_PVHV) base = (HV *)SvRV(*basep);
    for (i = 0; i < wlen;) {
        STRLEN n = strlen(w + i);
        if (!hv_exists(now, w + i, (I32)n)) {
            SV **keep = base ? hv_fetch(base, w + i, (I32)n, 0) : NULL, **slot;
            if (keep && (slot = hv_fetch(envhv, w + i, (I32)n, 1))) sv_setsv_mg(*slot, *keep);
            else (void)hv_delete(envhv, w + i, (I32)n, G_DISCARD);
        }
        i += n + 1;
    }
    sv_setsv(*was, put);
}

MODULE = Perennial::Executor::Environment    PACKAGE = Perennial::Executor::Environment

PROTOTYPES: DISABLE

# sync_env(\%state, $env or undef, \%skip or undef, \@names, \@values, ...): see the Perl twin
void
xs_sync_env(state_ref, env_ref, skip_ref, ...)
    SV *state_ref
    SV *env_ref
    SV *skip_ref
  PREINIT:
    HV *envhv, *skip = NULL;
    SV *put;
    I32 g;
  CODE:
    if (!SvROK(state_ref) || SvTYPE(SvRV(state_ref)) != SVt_PVHV)
        croak("sync_env: the state is not a hash reference");
    if ((items - 3) % 2)
        croak("sync_env: names without values");
    envhv = GvHVn(PL_envgv);
    put   = sv_2mortal(newSV(1024));
    sv_setpvn(put, "", 0);
    if (SvROK(skip_ref) && SvTYPE(SvRV(skip_ref)) == SVt_PVHV) skip = (HV *)SvRV(skip_ref);
    for (g = 3; g + 1 < items; g += 2) {
        AV *names, *values;
        SSize_t i;
        if (!SvROK(ST(g)) || SvTYPE(SvRV(ST(g))) != SVt_PVAV
            || !SvROK(ST(g + 1)) || SvTYPE(SvRV(ST(g + 1))) != SVt_PVAV)
            croak("sync_env: a group is not two array references");
        names  = (AV *)SvRV(ST(g));
        values = (AV *)SvRV(ST(g + 1));
        for (i = 0; i <= av_len(names); i++) {
            SV **name = av_fetch(names, i, 0);
            SV **value = av_fetch(values, i, 0);
            STRLEN len;
            const char *n;
            if (!name || !SvOK(*name)) continue;
            n = SvPV_const(*name, len);
            put_env(aTHX_ envhv, put, n, len, value ? *value : &PL_sv_undef);
        }
    }
    if (SvROK(env_ref) && SvTYPE(SvRV(env_ref)) == SVt_PVHV) {
        put_request(aTHX_ envhv, put, (HV *)SvRV(env_ref));
        put_headers(aTHX_ envhv, put, (HV *)SvRV(env_ref), skip);
    }
    forget_others(aTHX_ envhv, (HV *)SvRV(state_ref), put);

# delete_perl_only($name): see the Perl twin
void
xs_delete_perl_only(name)
    SV *name
  PREINIT:
    HV *envhv;
    STRLEN len;
    const char *n;
    U32 magic;
  CODE:
    envhv = GvHVn(PL_envgv);
    n = SvPV_const(name, len);
    if (getenv(n)) {    /* Put in the C environment after all: taken out of both */
        (void)hv_delete(envhv, n, (I32)len, G_DISCARD);
        XSRETURN_EMPTY;
    }
    magic = SvFLAGS(envhv) & (SVs_GMG | SVs_SMG | SVs_RMG);
    SvFLAGS(envhv) &= ~magic;    /* No unsetenv: the element's magic is not asked */
    (void)hv_delete(envhv, n, (I32)len, G_DISCARD);
    SvFLAGS(envhv) |= magic;
