/* The connection loop's usual requests in C (issue 16), included by Core.xs.
 *
 * A kept-alive PSGI request cost 109k instructions in the Perl loop, where the C functions it
 * calls (read, parse_plain, the application, write_response, ready) cost 43k in a loop of
 * their own: the rest was the loop's bookkeeping, about twenty Perl calls around the C. This is
 * that loop, for the requests it can serve alone: a plain head (parse_plain) without a body,
 * whose application answers with an array body that goes in one write. It does what
 * Perennial::Connection's _requests does for such a request, in the same order: the
 * scoreboard's R, request_start and request_done (ScoreboardSlot.h), the keep-alive decision,
 * the response object (a Perennial::HTTP::Response the watchdog and an exit can answer
 * through, as $self->{in_app}), the application called in an eval, the write, the access
 * log's line (the log's own method), and the keep-alive wait (K).
 *
 * It gives the rest to Perl, where the Perl loop's own code does it:
 * - before a request has begun (a read that failed or ended, a head that is not whole or not
 *   plain, a body, OPTIONS *, no empty input yet): it returns, and the Perl loop goes on with
 *   the request from there (the read's result, or the parsed head);
 * - once the application has answered, by calling the Perl method for it: _respond for a
 *   response it does not write (a handle or streaming body, a status line not made yet, a
 *   virtual host to note, a value it would have to convert), _app_failed for an application
 *   that died, the response's written_in_part for a client that did not take it all at once,
 *   _after_response when there is more to do after it than the counts and the log line
 *   (a spool, cleanup handlers, a size limit, an exit asked for), _still_idle when the
 *   keep-alive wait runs past its first limit (parking, lingering).
 * Policy stays where it was: the values it decides by (KeepAlive, MaxKeepAliveRequests, the
 * stop flag, the requests left) are the connection object's, read as the Perl reads them. */

#include "ScoreboardSlot.h"

/* What the loop reads of the connection object once a call */
struct conn_loop {
    HV *self;
    SV *self_ref, *sock, *buf, *app, *stopping, *park, *log, *timeout, *spooling;
    HV *base, *peer, *limits, *response;
    AV *status_lines;    /* Perennial::HTTP::Response's, and its Server line */
    SV *server;
    char *slot;
    int fd, keep;
    IV keep_max;
    NV keep_wait, park_wait;
};

/* A value of the hash, or NULL when it has none or it is undefined */
static SV *
defined_in(pTHX_ HV *hv, const char *key, I32 klen)
{
    SV **v = hv_fetch(hv, key, klen, 0);
    return v && SvOK(*v) ? *v : NULL;
}

#define DEFINED_IN(hv, key) defined_in(aTHX_ (hv), ("" key ""), (I32)(sizeof(key) - 1))

static int
true_in(pTHX_ HV *hv, const char *key, I32 klen)
{
    SV *v = defined_in(aTHX_ hv, key, klen);
    return v && SvTRUE(v);
}

#define TRUE_IN(hv, key) true_in(aTHX_ (hv), ("" key ""), (I32)(sizeof(key) - 1))

/* The hash a reference refers to, or NULL */
static HV *
hash_of(SV *ref)
{
    return ref && SvROK(ref) && SvTYPE(SvRV(ref)) == SVt_PVHV ? (HV *)SvRV(ref) : NULL;
}

static NV
now_time(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + tv.tv_usec / 1e6;
}

/* Whether a word stands in a header's value as Perl's /\bword\b/i finds it (the value's bytes
 * as Latin-1, as perl reads them under unicode_strings) */
static int
has_word(const char *s, STRLEN len, const char *word, STRLEN wlen)
{
    STRLEN i;
    for (i = 0; i + wlen <= len; i++) {
        if (strncasecmp(s + i, word, wlen) != 0) continue;
        if (i > 0 && isWORDCHAR_L1((U8)s[i - 1])) continue;
        if (i + wlen < len && isWORDCHAR_L1((U8)s[i + wlen])) continue;
        return 1;
    }
    return 0;
}

/* Whether the call_sv or call_method just made with G_EVAL died: perl empties $@ when the call
 * returns normally, so anything there is the call's error (an object, even a false one) */
static int
died(pTHX)
{
    SV *err = ERRSV;
    return SvROK(err) || SvTRUE(err);
}

/* The error of the call that died, kept from what runs after it (a mortal copy) */
#define KEEP_ERROR() sv_mortalcopy(ERRSV)

/* A method of an object, called with the arguments given, in scalar context: its result (a
 * new reference the caller owns, or NULL when it died under G_EVAL) */
static SV *
call_on(pTHX_ SV *object, const char *method, I32 flags, int argc, SV **argv)
{
    dSP;
    int i, count;
    SV *result = NULL;
    ENTER;
    SAVETMPS;
    PUSHMARK(SP);
    EXTEND(SP, argc + 1);
    PUSHs(object);
    for (i = 0; i < argc; i++) PUSHs(argv[i]);
    PUTBACK;
    count = call_method(method, G_SCALAR | flags);
    SPAGAIN;
    if (count == 1) result = newSVsv(POPs);
    PUTBACK;

    /* Whether it died, asked before the temporaries go: a DESTROY among them may set $@ */
    if ((flags & G_EVAL) && died(aTHX)) {
        SvREFCNT_dec(result);
        result = NULL;
    }
    FREETMPS;
    LEAVE;
    return result;
}

/* An application that died, or a response that died on its way: the Perl's answer (500) */
static void
app_failed(pTHX_ struct conn_loop *l, SV *c, SV *env, SV *err)
{
    SV *argv[3];
    argv[0] = c;
    argv[1] = env;
    argv[2] = err;
    SvREFCNT_dec(call_on(aTHX_ l->self_ref, "_app_failed", 0, 3, argv));
}

/* A value C writes as perl would without running code or warning: a defined plain string or
 * number, not a reference, without magic, in bytes */
static int
plain_value(SV *sv)
{
    return sv && SvOK(sv) && !SvROK(sv) && !SvGMAGICAL(sv) && !SvUTF8(sv)
           && (SvPOK(sv) || SvIOK(sv) || SvNOK(sv));
}

/* Every element of an array a plain value (the headers: names and values, in pairs) */
static int
plain_array(pTHX_ SV *ref, int pairs)
{
    AV *av;
    SSize_t i, last;
    if (!ref || !SvROK(ref) || SvTYPE(SvRV(ref)) != SVt_PVAV || SvRMAGICAL(SvRV(ref))) return 0;
    av = (AV *)SvRV(ref);
    last = av_top_index(av);
    if (pairs && last % 2 == 0) return 0;
    if (!pairs && last >= MAX_PARTS) return 0;
    for (i = 0; i <= last; i++) {
        SV **v = av_fetch(av, i, 0);
        if (!v || !plain_value(*v)) return 0;
    }
    return 1;
}

/* The IO of a reference to a glob, or NULL: an application may have emptied the glob
 * (`undef *{$env->{'psgix.io'}}`), where perl's sv_2io would die outside any eval */
static IO *
handle_io(SV *handle)
{
    SV *gv = handle && SvROK(handle) ? SvRV(handle) : NULL;
    return gv && isGV_with_GP(gv) ? GvIOp((GV *)gv) : NULL;
}

/* The connection's handle still open on the descriptor the loop writes to (an application
 * may close psgix.io, and a file opened after it take the number) */
static int
still_open(pTHX_ struct conn_loop *l)
{
    IO *io = handle_io(l->sock);
    PerlIO *f = io ? IoOFP(io) : NULL;
    return f && PerlIO_fileno(f) == l->fd;
}

/* The status line the Perl response has made for this version and status, or NULL */
static SV *
known_status_line(pTHX_ struct conn_loop *l, IV http11, SV *status)
{
    SV **made = av_fetch(l->status_lines, http11, 0);
    HV *by_status = made ? hash_of(*made) : NULL;
    HE *line;
    if (!by_status) return NULL;
    line = hv_fetch_ent(by_status, status, 0, 0);
    return line && SvOK(HeVAL(line)) ? HeVAL(line) : NULL;
}

/* Writes the application's response when it is the usual kind (as the response's respond does,
 * its fields set as respond sets them); false when the Perl is to write it */
static int
write_usual(pTHX_ struct conn_loop *l, HV *c, SV *c_ref, HV *env, SV *res)
{
    AV *r;
    SV **status, **headers, **body, *line, *head, *length;
    IV http11 = TRUE_IN(c, "http11"), keep_alive = TRUE_IN(c, "keep_alive");
    int framing, failed;
    STRLEN total;
    ssize_t n;

    if (!res || !SvROK(res) || SvTYPE(SvRV(res)) != SVt_PVAV || SvRMAGICAL(SvRV(res))) return 0;
    if (!still_open(aTHX_ l)) return 0;    /* The application closed psgix.io: the Perl's */
    r = (AV *)SvRV(res);
    if (av_top_index(r) != 2 || DEFINED_IN(env, "perennial.vhost")) return 0;
    status = av_fetch(r, 0, 0);
    headers = av_fetch(r, 1, 0);
    body = av_fetch(r, 2, 0);
    if (!status || !plain_value(*status) || !looks_like_number(*status)) return 0;
    if (!headers || !plain_array(aTHX_ *headers, 1) || !body || !plain_array(aTHX_ *body, 0))
        return 0;
    line = known_status_line(aTHX_ l, http11, *status);
    if (!line) return 0;
    n = send_response(aTHX_ l->fd, line, SvIV(*status), *headers, *body, http11,
                      TRUE_IN(c, "head_only"), &keep_alive, l->server, &head, &framing, &length,
                      &total);
    failed = n < 0 ? errno : 0;
    (void)hv_stores(c, "framing", newSVpv(FRAMING[framing], 0));
    (void)hv_stores(c, "length", length ? newSVsv(length) : newSV(0));
    (void)hv_stores(c, "keep_alive", newSViv(keep_alive));
    (void)hv_stores(c, "status", newSVsv(*status));
    (void)hv_stores(c, "res_headers", newSVsv(*headers));
    (void)hv_stores(c, "head_bytes", newSVuv(SvCUR(head)));
    if (n >= 0 && (STRLEN)n == SvCUR(head) + total) {
        (void)hv_stores(c, "bytes", newSVuv(total));
        return 1;
    }
    {
        /* What the client did not take at once goes as it can, within Timeout */
        SV *argv[5], *done;
        argv[0] = sv_2mortal(newSViv(failed));
        argv[1] = n < 0 ? &PL_sv_undef : sv_2mortal(newSViv(n));
        argv[2] = head;
        argv[3] = sv_2mortal(newSVuv(total));
        argv[4] = *body;
        done = call_on(aTHX_ c_ref, "written_in_part", G_EVAL, 5, argv);
        if (done) SvREFCNT_dec(done);
        else app_failed(aTHX_ l, c_ref, sv_2mortal(newRV_inc((SV *)env)), KEEP_ERROR());
    }
    return 1;
}

/* A new response object for the request, as Response->for_request makes it */
static SV *
new_response(pTHX_ struct conn_loop *l, SV *env_ref, HV *env, NV t0, int keep_alive)
{
    HV *c = newHV();
    SV *method = DEFINED_IN(env, "REQUEST_METHOD"), *protocol = DEFINED_IN(env, "SERVER_PROTOCOL");
    STRLEN len = 0;
    const char *p = method ? SvPV_const(method, len) : "";
    int head_only = len == 4 && memEQ(p, "HEAD", 4);
    int http11 = protocol && sv_eq(protocol, sv_2mortal(newSVpvs("HTTP/1.1")));
    (void)hv_stores(c, "bytes", newSViv(0));
    (void)hv_stores(c, "sock", newSVsv(l->sock));
    (void)hv_stores(c, "env", newSVsv(env_ref));
    (void)hv_stores(c, "t0", newSVnv(t0));
    (void)hv_stores(c, "timeout", newSVsv(l->timeout));
    (void)hv_stores(c, "may_spool", newSVsv(l->spooling));
    (void)hv_stores(c, "keep_alive", newSViv(keep_alive));
    (void)hv_stores(c, "head_only", newSVsv(boolSV(head_only)));
    (void)hv_stores(c, "http11", newSVsv(boolSV(http11)));
    return sv_bless(sv_2mortal(newRV_noinc((SV *)c)), l->response);
}

/* Whether the connection may stay open after this request (_answer's decision): what the
 * client asked, KeepAlive, the stop flag, the requests left, MaxKeepAliveRequests */
static int
may_keep(pTHX_ struct conn_loop *l, HV *env, IV served, SV *remaining)
{
    SV *conn = DEFINED_IN(env, "HTTP_CONNECTION"), *protocol = DEFINED_IN(env, "SERVER_PROTOCOL");
    STRLEN len = 0, plen = 0;
    const char *p = conn ? SvPV_const(conn, len) : NULL;
    const char *proto = protocol ? SvPV_const(protocol, plen) : "";
    int wanted = plen == 8 && memEQ(proto, "HTTP/1.1", 8)
                     ? !p || !has_word(p, len, "close", 5)
                     : p && has_word(p, len, "keep-alive", 10);
    if (!wanted || !l->keep || SvTRUE(SvRV(l->stopping))) return 0;
    if (SvOK(remaining) && SvIV(remaining) <= 0) return 0;
    return !(l->keep_max && served >= l->keep_max);
}

/* The empty input is kept while it still is one: not after a request closed it, reopened it
 * on something else, or tied it (as _after_response) */
static void
check_empty_input(pTHX_ struct conn_loop *l)
{
    SV *in = DEFINED_IN(l->self, "empty_input"), *string = DEFINED_IN(l->self, "empty_string");
    IO *io;
    if (!in) return;
    io = SvROK(in) && isGV_with_GP(SvRV(in)) ? GvIOp((GV *)SvRV(in)) : NULL;
    if (!string || !SvROK(string) || SvREFCNT(SvRV(string)) != 2
        || (io && mg_find((SV *)io, PERL_MAGIC_tiedscalar)))
        (void)hv_deletes(l->self, "empty_input", G_DISCARD);
}

/* After a response the loop wrote or had written: its counts, its access log line (as
 * _after_response), or the Perl's _after_response when there is more to it (a spool, a note to
 * log, cleanup handlers, a size limit or an exit asked for); whether the connection stays open */
static int
after_response(pTHX_ struct conn_loop *l, SV *c_ref, HV *c, SV *env_ref, HV *env, NV t0,
               IV served)
{
    SV *log = DEFINED_IN(env, "perennial.log"), *bytes;
    HV *log_hv;
    NV micros;
    if (DEFINED_IN(c, "spool") || TRUE_IN(c, "too_slow") || TRUE_IN(c, "spool_full")
        || TRUE_IN(env, "psgix.cleanup.handlers") || TRUE_IN(env, "psgix.harakiri.commit")
        || TRUE_IN(l->self, "after")) {
        SV *argv[4], *keep;
        int kept;
        argv[0] = c_ref;
        argv[1] = env_ref;
        argv[2] = sv_2mortal(newSVnv(t0));
        argv[3] = sv_2mortal(newSViv(served));
        keep = call_on(aTHX_ l->self_ref, "_after_response", 0, 4, argv);
        kept = keep && SvTRUE(keep);
        if (keep) SvREFCNT_dec(keep);
        return kept;
    }
    bytes = DEFINED_IN(c, "bytes");
    micros = (now_time() - t0) * 1e6;
    slot_request_done(l->slot, bytes ? SvUV(bytes) : 0, micros > 0 ? (UV)micros : 0,
                      (UV)served);
    if (!log) log = l->log;
    log_hv = hash_of(log);
    if (log_hv && TRUE_IN(log_hv, "access")) {
        SV *argv[5], *status = DEFINED_IN(c, "status");
        argv[0] = env_ref;
        argv[1] = status ? status : sv_2mortal(newSViv(0));
        argv[2] = bytes ? bytes : sv_2mortal(newSViv(0));
        argv[3] = sv_2mortal(newSVuv(micros > 0 ? (UV)micros : 0));
        argv[4] = c_ref;
        SvREFCNT_dec(call_on(aTHX_ log, "access", 0, 5, argv));
    }
    check_empty_input(aTHX_ l);
    return TRUE_IN(c, "keep_alive");
}

/* One request whose plain head was read: request_start, the response object, the application
 * (in an eval), its response and what follows it; whether the connection stays open */
static int
serve_request(pTHX_ struct conn_loop *l, SV *env_ref, NV t0, STRLEN len, IV *served, SV *remaining)
{
    HV *env = (HV *)SvRV(env_ref);
    SV *c_ref, *res = NULL, *input, *error = NULL;
    HV *c;
    int keep;
    dSP;

    slot_request_start(aTHX_ l->slot, env, t0, (UV)*served);
    ++*served;
    sv_chop(l->buf, SvPVX(l->buf) + len);
    (void)hv_stores(env, "perennial.head_bytes", newSVuv(len));
    if (SvOK(remaining)) sv_setiv(remaining, SvIV(remaining) - 1);
    c_ref = new_response(aTHX_ l, env_ref, env, t0, may_keep(aTHX_ l, env, *served, remaining));
    c = (HV *)SvRV(c_ref);
    input = DEFINED_IN(l->self, "empty_input");
    (void)hv_stores(env, "psgi.input", newSVsv(input));
    (void)hv_stores(l->self, "in_app", newSVsv(c_ref));

    ENTER;
    SAVETMPS;
    PUSHMARK(SP);
    XPUSHs(env_ref);
    PUTBACK;
    if (call_sv(l->app, G_SCALAR | G_EVAL) == 1) {
        SPAGAIN;
        res = newSVsv(POPs);
        PUTBACK;
    }
    /* Asked before the application's temporaries go (a DESTROY among them may set $@) */
    if (died(aTHX)) error = newSVsv(ERRSV);
    FREETMPS;
    LEAVE;
    if (res) sv_2mortal(res);
    if (error) app_failed(aTHX_ l, c_ref, env_ref, sv_2mortal(error));
    else if (!write_usual(aTHX_ l, c, c_ref, env, res)) {
        SV *argv[3], *done;
        argv[0] = c_ref;
        argv[1] = env_ref;
        argv[2] = res ? res : &PL_sv_undef;
        done = call_on(aTHX_ l->self_ref, "_respond", G_EVAL, 3, argv);
        if (done) SvREFCNT_dec(done);
        else app_failed(aTHX_ l, c_ref, env_ref, KEEP_ERROR());
    }
    (void)hv_deletes(l->self, "in_app", G_DISCARD);
    keep = after_response(aTHX_ l, c_ref, c, env_ref, env, t0, *served);
    return keep;
}

/* Waits on a kept-alive connection for its next request (_next_request); false when it is
 * closed or went to the parking process */
static int
next_request(pTHX_ struct conn_loop *l, IV served)
{
    NV now;
    int park;
    l->slot[0] = 'K';
    PERL_ASYNC_CHECK();    /* A stop that came while the C wrote: its flag, before parking */
    now = now_time();
    park = !SvTRUE(SvRV(l->stopping)) && l->park && SvTRUE(l->park);
    if (fd_ready(aTHX_ l->fd, now + (park ? l->park_wait : l->keep_wait), 0)) return 1;
    {
        SV *argv[4], *more;
        int go_on;
        argv[0] = l->sock;
        argv[1] = sv_2mortal(newSViv(served));
        argv[2] = sv_2mortal(newSVnv(now));
        argv[3] = park ? &PL_sv_yes : &PL_sv_no;
        more = call_on(aTHX_ l->self_ref, "_still_idle", 0, 4, argv);
        go_on = more && SvTRUE(more);
        if (more) SvREFCNT_dec(more);
        return go_on;
    }
}

/* Perennial::HTTP::Response's class, status lines and Server line, found once a process (the
 * lookups by name cost 3k instructions a connection) */
static int
response_globals(pTHX_ struct conn_loop *l)
{
    static HV *stash = NULL;
    static AV *lines = NULL;
    static SV *server = NULL;
    if (!stash || !lines || !server) {
        stash = gv_stashpvs("Perennial::HTTP::Response", 0);
        lines = get_av("Perennial::HTTP::Response::STATUS_LINE", 0);
        server = get_sv("Perennial::HTTP::Response::SERVER", 0);
    }
    l->response = stash;
    l->status_lines = lines;
    l->server = server;
    return stash && lines && server;
}

/* Reads what the connection object holds; false when the loop cannot run on it */
static int
loop_setup(pTHX_ struct conn_loop *l, SV *self_ref, SV *sock, SV *buf_ref, SV *base, SV *peer)
{
    SV *v, *board;
    HV *board_hv;
    Zero(l, 1, struct conn_loop);
    l->self_ref = self_ref;
    l->self = hash_of(self_ref);
    l->base = hash_of(base);
    l->peer = hash_of(peer);
    if (!l->self || !l->base || !l->peer || !SvROK(buf_ref)) return 0;
    l->buf = SvRV(buf_ref);
    l->sock = sock;
    l->fd = handle_fd(aTHX_ sock);
    l->app = DEFINED_IN(l->self, "app");
    l->limits = hash_of(DEFINED_IN(l->self, "limits"));
    l->stopping = DEFINED_IN(l->self, "stopping");
    l->log = DEFINED_IN(l->self, "log");
    board = DEFINED_IN(l->self, "board");
    board_hv = hash_of(board);
    v = DEFINED_IN(l->self, "slot");
    if (!l->app || !l->limits || !l->stopping || !SvROK(l->stopping) || !board_hv || !v)
        return 0;
    if (!DEFINED_IN(board_hv, "map")) return 0;
    l->slot = slot_of(aTHX_ board, SvIV(v), "serve_plain");
    l->park = DEFINED_IN(l->self, "park");
    l->keep = TRUE_IN(l->self, "keep");
    v = DEFINED_IN(l->self, "keep_max");
    l->keep_max = v ? SvIV(v) : 0;
    v = DEFINED_IN(l->self, "keep_wait");
    l->keep_wait = v ? SvNV(v) : 0;
    v = DEFINED_IN(l->self, "park_wait");
    l->park_wait = v ? SvNV(v) : 0;
    l->timeout = DEFINED_IN(l->self, "timeout");
    if (!l->timeout) l->timeout = &PL_sv_undef;
    l->spooling = DEFINED_IN(l->self, "spooling");
    if (!l->spooling) l->spooling = &PL_sv_undef;
    return response_globals(aTHX_ l);
}

/* Reads into the connection's buffer, as the Perl's sysread of $READ_SIZE does; through a
 * buffer of its own, so that a new connection's string grows to what came, not to 64 KB
 * (a realloc and its free each connection, 4.5k instructions) */
static ssize_t
read_more(pTHX_ struct conn_loop *l)
{
    static char bytes[65536];
    ssize_t n;
    if (SvTHINKFIRST(l->buf)) sv_force_normal_flags(l->buf, 0);
    if (!SvPOK(l->buf)) sv_setpvs(l->buf, "");
    n = read(l->fd, bytes, sizeof bytes);
    if (n > 0) {
        sv_catpvn_nomg(l->buf, bytes, n);
        SvPOK_only(l->buf);
    }
    return n;
}

/* A head the loop leaves to the Perl: not plain, or with a body, OPTIONS *, or no empty input
 * made yet for the application to read */
static int
for_perl(pTHX_ struct conn_loop *l, HV *env)
{
    SV *uri = DEFINED_IN(env, "REQUEST_URI");
    STRLEN len = 0;
    const char *p = uri ? SvPV_const(uri, len) : "";
    return DEFINED_IN(env, "CONTENT_LENGTH") || DEFINED_IN(env, "HTTP_TRANSFER_ENCODING")
           || (len == 1 && *p == '*') || !DEFINED_IN(l->self, "empty_input");
}

/* The requests of the connection while the loop can serve them: 0 when the connection is over
 * (closed, lingering, parked, or ended before a request's first byte), 1 when the Perl is to
 * go on with a request the loop began: *t0 its time, *n the bytes in the buffer, and *env (a
 * new hash) and *len when its head was read */
static int
run_loop(pTHX_ struct conn_loop *l, IV *served, SV *remaining, NV *t0, ssize_t *n, HV **env,
         STRLEN *len)
{
    for (;;) {
        int keep, saved_errno;
        ENTER;
        SAVETMPS;
        l->slot[0] = 'R';
        *t0 = now_time();
        *env = NULL;
        *n = SvPOK(l->buf) ? (ssize_t)SvCUR(l->buf) : 0;
        while (!*n) {
            /* A signal never ends a request (as the Perl's _read); a read that ends or fails
             * before a byte came ends the connection quietly (as _read_head) */
            *n = read_more(aTHX_ l);
            if (*n < 0 && errno == EINTR) {
                PERL_ASYNC_CHECK();
                *n = 0;
                continue;
            }
            if (*n <= 0) {
                FREETMPS;
                LEAVE;
                return 0;
            }
        }
        if (*n > 0 && memmem(SvPVX(l->buf), SvCUR(l->buf), "\r\n\r\n", 4))
            *env = plain_head(aTHX_ l->buf, l->base, l->peer, l->limits, len);
        if (!*env || for_perl(aTHX_ l, *env)) {
            saved_errno = errno;
            FREETMPS;
            LEAVE;
            errno = saved_errno;
            return 1;
        }
        keep = serve_request(aTHX_ l, sv_2mortal(newRV_noinc((SV *)*env)), *t0, *len, served,
                             remaining);
        *env = NULL;
        FREETMPS;
        LEAVE;
        if (!keep) return 0;
        if (!SvCUR(l->buf) && !next_request(aTHX_ l, *served)) return 0;
    }
}

/* The connection's handle closed, as CORE::close closes it */
static void
close_handle(pTHX_ SV *handle)
{
    IO *io = handle_io(handle);
    if (!io || !IoIFP(io)) return;
    PerlIO_close(IoIFP(io));
    IoIFP(io) = NULL;
    IoOFP(io) = NULL;
    IoTYPE(io) = IoTYPE_CLOSED;
}

/* The end of a connection the loop served to its end (Connection's _end_connection): closed at
 * once, or by the Perl when it was parked, is to linger, or has bytes unread */
static void
end_connection(pTHX_ struct conn_loop *l, IV served)
{
    char peek;
    if (!TRUE_IN(l->self, "parked") && !TRUE_IN(l->self, "linger") && !SvCUR(l->buf)
        && !(served > 1 && recv(l->fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT) > 0)) {
        l->slot[0] = 'C';
        (void)hv_deletes(l->self, "head_back", G_DISCARD);
        close_handle(aTHX_ l->sock);
        return;
    }
    {
        SV *argv[3];
        argv[0] = l->sock;
        argv[1] = sv_2mortal(newRV_inc(l->buf));
        argv[2] = sv_2mortal(newSViv(served));
        SvREFCNT_dec(call_on(aTHX_ l->self_ref, "_end_connection", 0, 3, argv));
    }
}

/* One connection the accept loop took (Connection's serve, without a parked state): the number
 * of requests served on it. A request the loop gives to the Perl goes on in the Perl's
 * serve_rest, which serves the rest of the connection and ends it. */
static IV
serve_accepted(pTHX_ SV *conn_ref, HV *conn, SV *handle, HV *peer, SV *base, IV index,
               SV *remaining)
{
    struct conn_loop l;
    SV *buf = sv_2mortal(newSVpvs("")), *peer_ref = sv_2mortal(newRV_noinc((SV *)peer));
    SV *limits_of = DEFINED_IN(conn, "limits_of"), **limits = NULL;
    IV served = 0;
    NV t0 = 0;
    ssize_t n = 0;
    HV *env = NULL;
    STRLEN len = 0;

    if (limits_of && SvROK(limits_of) && SvTYPE(SvRV(limits_of)) == SVt_PVAV) {
        limits = av_fetch((AV *)SvRV(limits_of), index, 0);
        if (!limits || !SvOK(*limits)) limits = av_fetch((AV *)SvRV(limits_of), 0, 0);
    }
    if (!limits) croak("serve_connections: no limits for listener %" IVdf, index);
    (void)hv_stores(conn, "limits", newSVsv(*limits));
    (void)hv_stores(conn, "listener", newSViv(index));
    if (!loop_setup(aTHX_ &l, conn_ref, handle, sv_2mortal(newRV_inc(buf)), base, peer_ref))
        croak("serve_connections: not a connection loop");
    if (run_loop(aTHX_ &l, &served, remaining, &t0, &n, &env, &len)) {
        SV *argv[10], *total;
        IV all;
        argv[0] = handle;
        argv[1] = sv_2mortal(newRV_inc(buf));
        argv[2] = base;
        argv[3] = peer_ref;
        argv[4] = remaining;
        argv[5] = sv_2mortal(newSViv(served));
        argv[6] = sv_2mortal(newSVnv(t0));
        argv[7] = sv_2mortal(newSViv(n));
        argv[8] = env ? sv_2mortal(newSVuv(len)) : &PL_sv_undef;
        argv[9] = env ? sv_2mortal(newRV_noinc((SV *)env)) : &PL_sv_undef;
        total = call_on(aTHX_ conn_ref, "serve_rest", 0, 10, argv);
        all = total ? SvIV(total) : served;
        SvREFCNT_dec(total);
        return all;
    }
    end_connection(aTHX_ &l, served);
    return served;
}

/* Whether the Perl's accept loop has something to do before the next connection: a stop, a
 * reopen, the memory to publish, an exit asked for, the last request of MaxRequestsPerChild */
static int
accept_due(pTHX_ HV *conn, SV *stopping, SV *reopen, NV memory_due, SV *remaining, IV served)
{
    return SvTRUE(SvRV(stopping)) || SvTRUE(SvRV(reopen)) || now_time() >= memory_due
           || TRUE_IN(conn, "harakiri") || (SvOK(remaining) && SvIV(remaining) - served <= 0);
}

/* The worker's accept loop (Server::serve) in C, while nothing is the Perl's: waits on the
 * workers' epoll (at most a second, as next_ready), accepts on the listener it names and
 * serves the connection, again and again. Returns the requests served; *take is set when the
 * next connection is the Perl's to take (one on a Unix listener, a parked one coming back, an
 * accept that failed for another reason than a sibling taking it first). */
static IV
accept_loop(pTHX_ SV *conn_ref, int epfd, AV *fhs, AV *bases, AV *unix_flags, SV *stopping,
            SV *reopen, NV memory_due, SV *remaining, int *take)
{
    HV *conn = hash_of(conn_ref);
    SV *board = conn ? DEFINED_IN(conn, "board") : NULL, *slot_sv;
    char *slot;
    IV served = 0;
    if (!conn || !board || !(slot_sv = DEFINED_IN(conn, "slot")))
        croak("serve_connections: not a connection loop");
    slot = slot_of(aTHX_ board, SvIV(slot_sv), "serve_connections");
    *take = 0;
    while (!accept_due(aTHX_ conn, stopping, reopen, memory_due, remaining, served)) {
        struct epoll_event ev;
        SV **fh, **unix_flag, **base, *handle, *left;
        HV *peer;
        int n;
        slot[0] = '_';
        n = epoll_wait(epfd, &ev, 1, 1000);
        if (n < 0 && errno != EINTR) { *take = 1; break; }
        if (n != 1) { PERL_ASYNC_CHECK(); break; }
        unix_flag = av_fetch(unix_flags, ev.data.u32, 0);
        fh = av_fetch(fhs, ev.data.u32, 0);
        base = av_fetch(bases, ev.data.u32, 0);
        if (!fh || !base || (unix_flag && SvTRUE(*unix_flag))) { *take = 1; break; }
        ENTER;
        SAVETMPS;
        handle = accept_connection(aTHX_ handle_fd(aTHX_ *fh), &peer);
        if (!handle) {
            int failed = errno;
            FREETMPS;
            LEAVE;
            if (failed == EINTR) PERL_ASYNC_CHECK();
            if (failed == EAGAIN || failed == EWOULDBLOCK || failed == EINTR) continue;
            *take = 1;    /* The Perl's accept fails too, and logs why */
            break;
        }
        left = sv_2mortal(SvOK(remaining) ? newSViv(SvIV(remaining) - served) : newSV(0));
        served += serve_accepted(aTHX_ conn_ref, conn, handle, peer, *base, (IV)ev.data.u32,
                                 left);
        FREETMPS;
        LEAVE;
    }
    return served;
}
