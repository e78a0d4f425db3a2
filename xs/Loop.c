/* The connection loop's usual requests in C (issue 16), included by Core.xs.
 *
 * A kept-alive PSGI request cost 109k instructions in the Perl loop, where the C functions it
 * calls (read, parse_plain, the application, write_response, ready) cost 43k in a loop of
 * their own: the rest was the loop's bookkeeping, about twenty Perl calls around the C. This is
 * that loop, for the requests it can serve alone: a plain head (parse_plain) without a body,
 * whose application answers with an array body that goes in one write. It does what
 * Perennial::Connection's _requests does for such a request, in the same order: the
 * scoreboard's R, request_start and request_done (ScoreboardSlot.h), the keep-alive decision,
 * the application called in an eval, the write, the access log's line (LoopLog.c), the size
 * limit's check (LoopSize.c),
 * and the keep-alive wait (K). The response object (a Perennial::HTTP::Response, which the
 * Perl's $self->{in_app} holds while its application runs) is made only when the Perl is to
 * see the response (LoopResponse.c): the watchdog and an exit find the request through
 * xs_current_response.
 *
 * A delayed response (a code reference) it calls with a responder of its own (LoopDelayed.c),
 * which writes a whole response of plain values as a returned array is written.
 *
 * It gives the rest to Perl, where the Perl loop's own code does it:
 * - before a request has begun (a read that failed or ended, a head that is not whole or not
 *   plain, a body, OPTIONS *, no empty input yet): it returns, and the Perl loop goes on with
 *   the request from there (the read's result, or the parsed head);
 * - once the application has answered, by calling the Perl method for it: _respond for a
 *   response it does not write (a handle or streaming body, a status line not made yet, a
 *   value it would have to convert), _app_failed for an application that died, the
 *   response's written_in_part for a client that did not take it all at once,
 *   _after_response when there is more to do after it than the counts, the log line, the
 *   cleanup handlers and the size limit's check (a spool, an exit asked for), _still_idle when the
 *   keep-alive wait runs past its first limit (parking, lingering).
 * Policy stays where it was: the values it decides by (KeepAlive, MaxKeepAliveRequests, the
 * stop flag, the requests left) are the connection object's, read as the Perl reads them. */

#include "ScoreboardSlot.h"
#include "PlainHash.h"
#include "FormatApi.h"
#include "LoopState.c"       /* The loop's state, and its calls of Perl */
#include "LoopResponse.c"    /* What it writes itself, and the response object */
#include "LoopDelayed.c"     /* A delayed response, with a responder in C */
#include "LoopLog.c"         /* The access log's lines */
#include "LoopSize.c"        /* The size limit's check after each request */
#include "LoopCleanup.c"     /* What the application left to run after its response */

/* Whether the connection may stay open after this request (_answer's decision): what the
 * client asked, KeepAlive, the stop flag, the requests left, MaxKeepAliveRequests */
static int
may_keep(pTHX_ struct conn_loop *l, int http11, IV served, SV *remaining)
{
    SV *conn = l->facts.connection;    /* HTTP_CONNECTION, as plain_head made it */
    STRLEN len = 0;
    const char *p = conn ? SvPV_const(conn, len) : NULL;
    int wanted = http11 ? !p || !has_word(p, len, "close", 5)
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

/* After a response the loop wrote or had written: its counts, its access log line, the cleanup
 * handlers (LoopCleanup.c) and the worker's own check (as _after_response), or the Perl's
 * _after_response when there is more to it (a spool, a note to log, an exit asked for); whether
 * the connection stays open */
static int
after_response(pTHX_ struct pending *p, IV served)
{
    struct conn_loop *l = p->l;
    HV *c = MADE(p), *env = p->env, *log_hv;
    SV *log = DEFINED_IN(env, "perennial.log"), *access;
    UV us, bytes;
    NV micros;
    int keep_open, asked = 0;
    if ((c && (DEFINED_IN(c, "spool") || TRUE_IN(c, "too_slow") || TRUE_IN(c, "spool_full")))
        || TRUE_IN(env, "psgix.harakiri.commit")) {
        SV *argv[5], *keep;
        int kept;
        argv[0] = response_object(aTHX_ p);
        argv[1] = p->env_ref;
        argv[2] = sv_2mortal(newSVnv(p->t0));
        argv[3] = sv_2mortal(newSViv(served));
        argv[4] = sv_2mortal(newSVuv(SvPOK(l->buf) ? SvCUR(l->buf) : 0));    /* Read of the next */
        keep = call_on(aTHX_ l->self_ref, "_after_response", 0, 5, argv);
        kept = keep && SvTRUE(keep);
        if (keep) SvREFCNT_dec(keep);
        return kept;
    }
    micros = (now_time() - p->t0) * 1e6;
    us = micros > 0 ? (UV)micros : 0;
    bytes = response_bytes(aTHX_ p);
    keep_open = response_keep_alive(aTHX_ p);
    slot_request_done(l->slot, bytes, us, (UV)served);
    log_hv = hash_of(log ? log : l->log);
    access = log_hv ? DEFINED_IN(log_hv, "access") : NULL;    /* Its list of [handle, format] */
    if (access && SvROK(access) && SvTYPE(SvRV(access)) == SVt_PVAV)
        log_access(aTHX_ p, (AV *)SvRV(access), us, bytes, keep_open);
    if (TRUE_IN(env, "psgix.cleanup.handlers")) {
        run_cleanups(aTHX_ p, keep_open);
        asked = TRUE_IN(env, "psgix.harakiri.commit");    /* By a cleanup (one before: the Perl's) */
    }
    check_empty_input(aTHX_ l);
    return asked ? retire(aTHX_ l, keep_open) : retire_check(aTHX_ l, keep_open);
}

/* A delayed response the C calls itself: a code reference, not blessed (the Perl's `ref $res
 * eq 'CODE'`) */
static int
delayed(SV *res)
{
    return res && SvROK(res) && SvTYPE(SvRV(res)) == SVt_PVCV && !SvOBJECT(SvRV(res));
}

/* One request whose plain head was read: request_start, the application (in an eval), its
 * response and what follows it, the response object made only if the Perl is to see it;
 * whether the connection stays open */
static int
serve_request(pTHX_ struct conn_loop *l, SV *env_ref, SV *input, NV t0, STRLEN len, IV *served,
              SV *remaining)
{
    HV *env = (HV *)SvRV(env_ref);
    SV *res = NULL, *error = NULL;
    struct pending *p = &PENDING;
    int keep;
    dSP;

    slot_request_parts(aTHX_ l->slot, l->remote_addr, l->facts.method, l->facts.uri,
                       l->facts.protocol, t0, (UV)*served);
    ++*served;
    sv_chop(l->buf, SvPVX(l->buf) + len);
    (void)hv_stores(env, "perennial.head_bytes", newSVuv(len));
    if (SvOK(remaining)) sv_setiv(remaining, SvIV(remaining) - 1);
    Zero(p, 1, struct pending);
    p->l = l;
    p->env_ref = SvREFCNT_inc_simple_NN(env_ref);
    p->env = env;
    p->t0 = t0;
    p->keep_alive = may_keep(aTHX_ l, l->facts.http11, *served, remaining);
    (void)hv_stores(env, "psgi.input", newSVsv(input));

    ENTER;    /* The request's pending state ends with this scope, or as a die unwinds it */
    SAVEDESTRUCTOR_X(pending_end, p);
    CURRENT = p;    /* For abort_request, while the application runs and its response goes */
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
    if (error) app_failed(aTHX_ l, response_object(aTHX_ p), env_ref, sv_2mortal(error));
    else {
        SV *vhost = DEFINED_IN(env, "perennial.vhost");
        if (vhost) slot_vhost(aTHX_ l->slot, vhost);    /* As the Perl's _respond notes it */
        if (delayed(res)) call_delayed(aTHX_ p, res);
        else if (!write_usual(aTHX_ p, res)) {
            SV *argv[3], *done;
            argv[0] = response_object(aTHX_ p);
            argv[1] = env_ref;
            argv[2] = res ? res : &PL_sv_undef;
            done = call_on(aTHX_ l->self_ref, "_respond", G_EVAL, 3, argv);
            if (done) SvREFCNT_dec(done);
            else app_failed(aTHX_ l, argv[0], env_ref, KEEP_ERROR());
        }
    }
    CURRENT = NULL;
    keep = after_response(aTHX_ p, *served);
    LEAVE;
    return keep;
}

/* Whether the connection can be read (or has ended) before the deadline, as fd_ready, with the
 * worker's file watch in the same poll, after the connection: what the watch reports (inotify's
 * events, and the mount table's changes, which the kernel flags once to each open mountinfo)
 * is taken (its notice, its remount) before the request is served, and a request that came
 * after a change finds the watch readable, as the kernel looks at the descriptors in order */
#define MAX_NOTICES 16

static int
request_ready(pTHX_ struct conn_loop *l, NV until)
{
    struct pollfd pfd[3];
    int n, notices = 0;
    if (l->files_fd < 0) return fd_ready(aTHX_ l->fd, until, 0);
    pfd[1].fd = l->files_fd;
    pfd[2].fd = l->mounts_fd;
    pfd[0].fd = l->fd;
    pfd[0].events = pfd[1].events = POLLIN;
    pfd[2].events = POLLPRI;
    while (1) {
        struct timeval now;
        NV left;
        gettimeofday(&now, NULL);
        left = until - (now.tv_sec + now.tv_usec / 1e6);
        pfd[0].revents = pfd[1].revents = pfd[2].revents = 0;
        n = poll(pfd, pfd[2].fd < 0 ? 2 : 3,
                 left <= 0 ? 0 : left > 2000000 ? 2000000000 : (int)(left * 1000 + 0.999));
        if (n < 0) {
            if (errno != EINTR) return 0;
            PERL_ASYNC_CHECK();
            continue;
        }
        /* Each notice reads the watch to its end, so readable again is new events (a busy
         * directory beside the path: /tmp under parallel tests); past MAX_NOTICES in one wait,
         * or on an error, the rest of the wait is the connection's alone and its request is
         * not trusted, so that a watch that never goes quiet cannot spin the wait */
        if (pfd[1].revents && (++notices > MAX_NOTICES || pfd[1].revents & (POLLERR | POLLNVAL)))
            return fd_ready(aTHX_ l->fd, until, 0);
        if (pfd[1].revents) SvREFCNT_dec(call_on(aTHX_ l->files, "notice", G_EVAL, 0, NULL));
        if (pfd[2].revents & POLLNVAL) return fd_ready(aTHX_ l->fd, until, 0);
        if (pfd[2].revents) SvREFCNT_dec(call_on(aTHX_ l->files, "remount", G_EVAL, 0, NULL));
        if (pfd[0].revents) {
            l->polled = 1;
            return 1;
        }
        if (n == 0) return 0;
    }
}

/* Waits on a kept-alive connection for its next request (next_request); false when it is
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
    if (request_ready(aTHX_ l, now + (park ? l->park_wait : l->keep_wait))) return 1;
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

/* Reads what the connection object holds that is the same for each of its connections (the
 * accept loop reads it once for all it accepts, about 3.5k instructions a connection); false
 * when the loop cannot run on it */
static int
loop_state(pTHX_ struct conn_loop *l, SV *self_ref)
{
    SV *v, *board;
    HV *board_hv, *watch;
    Zero(l, 1, struct conn_loop);
    l->self_ref = self_ref;
    l->self = hash_of(self_ref);
    if (!l->self) return 0;
    l->app = DEFINED_IN(l->self, "app");
    l->stopping = DEFINED_IN(l->self, "stopping");
    l->log = DEFINED_IN(l->self, "log");
    board = DEFINED_IN(l->self, "board");
    board_hv = hash_of(board);
    v = DEFINED_IN(l->self, "slot");
    if (!l->app || !l->stopping || !SvROK(l->stopping) || !board_hv || !v) return 0;
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
    l->files = DEFINED_IN(l->self, "files");
    l->files_fd = l->mounts_fd = -1;
    if ((watch = hash_of(l->files))) {
        v = DEFINED_IN(watch, "fd");
        l->files_fd = v ? (int)SvIV(v) : -1;
        v = DEFINED_IN(watch, "mounts_fd");
        l->mounts_fd = v ? (int)SvIV(v) : -1;
    }
    l->spooling = DEFINED_IN(l->self, "spooling");
    if (!l->spooling) l->spooling = &PL_sv_undef;
    l->after = DEFINED_IN(l->self, "after");
    if (l->after && !SvTRUE(l->after)) l->after = NULL;    /* As the Perl's `$self->{after} &&` */
    size_limit_state(aTHX_ l);
    return response_globals(aTHX_ l);
}

/* A connection's own part of the loop's state: its handle, its buffer, its listener's keys
 * and limits (the connection object's, read here, unless given read already: the accept loop
 * reads them once a listener); false when the loop cannot run on it */
static int
loop_connection(pTHX_ struct conn_loop *l, SV *sock, SV *buf_ref, SV *base, SV *peer,
                const struct plain_limits *plain)
{
    HV *limits = plain ? NULL : hash_of(DEFINED_IN(l->self, "limits"));
    l->base = hash_of(base);
    l->peer = hash_of(peer);
    if (!l->base || !l->peer || !(plain || limits) || !SvROK(buf_ref)) return 0;
    l->buf = SvRV(buf_ref);
    l->sock = sock;
    l->fd = handle_fd(aTHX_ sock);
    l->polled = 0;
    if (plain) l->plain = *plain;
    else plain_limits_of(aTHX_ limits, &l->plain);
    l->remote_addr = DEFINED_IN(l->peer, "REMOTE_ADDR");
    return 1;
}

/* Reads what the connection object holds; false when the loop cannot run on it */
static int
loop_setup(pTHX_ struct conn_loop *l, SV *self_ref, SV *sock, SV *buf_ref, SV *base, SV *peer)
{
    return loop_state(aTHX_ l, self_ref) && loop_connection(aTHX_ l, sock, buf_ref, base, peer, NULL);
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

/* The empty input a request without a body reads: the connection's, made by the Perl
 * (keep_empty_input) when the connection has none yet or a request left none (as _answer
 * makes it); NULL if that failed */
static SV *
empty_input(pTHX_ struct conn_loop *l)
{
    SV *in = DEFINED_IN(l->self, "empty_input");
    if (in) return in;
    in = call_on(aTHX_ l->self_ref, "keep_empty_input", G_EVAL, 0, NULL);
    SvREFCNT_dec(in);
    return DEFINED_IN(l->self, "empty_input");
}

/* The empty input for a plain head the loop serves itself, or NULL when the Perl is to: a
 * request with a body, or no empty input to be had (a plain head's target begins with a slash:
 * OPTIONS * is not one). A worker's first request, and one after a request that left no empty
 * input, were the Perl's too, copying the Perl loop's pages in each worker. */
static SV *
input_in_c(pTHX_ struct conn_loop *l)
{
    return l->facts.has_body ? NULL : empty_input(aTHX_ l);
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
        int keep, saved_errno, fresh;
        SV *input = NULL;
        ENTER;
        SAVETMPS;
        l->slot[0] = 'R';
        *t0 = now_time();
        *env = NULL;
        *n = SvPOK(l->buf) ? (ssize_t)SvCUR(l->buf) : 0;

        /* Read after a wait that looked at the watch (not one pipelined behind the last) */
        fresh = l->polled && !*n;
        l->polled = 0;
        while (!*n) {
            /* A signal never ends a request (as the Perl's _read); a read that ends or fails
             * before a byte came ends the connection quietly (as read_head) */
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
            *env = plain_head(aTHX_ l->buf, l->base, l->peer, &l->plain, len, &l->facts);
        /* The worker's file watch, for a request whose wait looked at it: it knows every
         * change reported before the request came, and the Resolver may trust what it knew */
        if (*env && fresh)
            (void)hv_stores(*env, "perennial.files", newSVsv(l->files));
        if (!*env || !(input = input_in_c(aTHX_ l))) {
            saved_errno = errno;
            FREETMPS;
            LEAVE;
            errno = saved_errno;
            return 1;
        }
        keep = serve_request(aTHX_ l, sv_2mortal(newRV_noinc((SV *)*env)), input, *t0, *len,
                             served, remaining);
        *env = NULL;
        FREETMPS;
        LEAVE;
        if (!keep) return 0;
        if (!SvCUR(l->buf) && !next_request(aTHX_ l, *served)) return 0;
    }
}
