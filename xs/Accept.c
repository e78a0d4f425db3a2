/* The worker's accept loop in C (issue 16), included by Core.xs after Loop.c, whose request
 * loop serves each connection it accepts. Server::serve's loop is its twin: it waits on the
 * worker's epoll, accepts, serves, ends the connection, and goes on while nothing is due in
 * the Perl loop (a stop, a reopen, the memory to publish, the request limit, an exit asked
 * for, a second without a connection, a connection the Perl takes itself). With a new
 * connection for each request, the Perl around the request loop cost a PSGI hello 27k of its
 * 97k instructions (docs/design-notes.md, "The accept loop in C"). */

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

/* What the accept loop reads once for all the connections it takes: the connection object's
 * state (loop_state), each listener's limits, and the listener whose limits the object has */
struct accept_state {
    struct conn_loop shared;
    AV *limits_of;
    IV noted;    /* The listener whose limits and index the connection object holds, or -1 */
    struct plain_limits plain;    /* That listener's limits, as plain_head reads them */
};

/* One connection the accept loop took (Connection's serve, without a parked state): the number
 * of requests served on it. A request the loop gives to the Perl goes on in the Perl's
 * serve_rest, which serves the rest of the connection and ends it. */
static IV
serve_accepted(pTHX_ struct accept_state *a, SV *handle, HV *peer, SV *base, IV index,
               SV *remaining)
{
    struct conn_loop l = a->shared;
    SV *conn_ref = l.self_ref;
    HV *conn = l.self;
    SV *buf = sv_2mortal(newSVpvs("")), *peer_ref = sv_2mortal(newRV_noinc((SV *)peer));
    SV **limits = av_fetch(a->limits_of, index, 0);
    IV served = 0;
    NV t0 = 0;
    ssize_t n = 0;
    HV *env = NULL;
    STRLEN len = 0;

    if (!limits || !SvOK(*limits)) limits = av_fetch(a->limits_of, 0, 0);
    if (!limits) croak("serve_connections: no limits for listener %" IVdf, index);
    if (a->noted != index) {    /* For the Perl: what Connection's serve sets; and for the C */
        HV *hv = hash_of(*limits);
        if (!hv) croak("serve_connections: the limits of listener %" IVdf " are not a hash", index);
        (void)hv_stores(conn, "limits", newSVsv(*limits));
        (void)hv_stores(conn, "listener", newSViv(index));
        plain_limits_of(aTHX_ hv, &a->plain);
        a->noted = index;
    }
    if (!loop_connection(aTHX_ &l, handle, sv_2mortal(newRV_inc(buf)), base, peer_ref, &a->plain))
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
        a->noted = -1;    /* The Perl served the rest: it may have set them itself */
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
 * worker's epoll (at most a second, as next_ready), accepts on the listener it names and
 * serves the connection, again and again. Returns the requests served; *take is set when the
 * next connection is the Perl's to take (one on a Unix listener, a parked one coming back, an
 * accept that failed for another reason than a sibling taking it first), and *ready to the
 * index of the handle the wait named, if one did: the Perl takes from that one, not from
 * whatever a wait of its own would name (a parked connection coming back lost its turn to the
 * listener whenever both were ready, and waited behind new connections). */
static IV
accept_loop(pTHX_ SV *conn_ref, int epfd, AV *fhs, AV *bases, AV *unix_flags, SV *stopping,
            SV *reopen, NV memory_due, SV *remaining, int *take, int *ready)
{
    HV *conn = hash_of(conn_ref);
    SV *board = conn ? DEFINED_IN(conn, "board") : NULL, *slot_sv, *limits_of;
    char *slot;
    IV served = 0;
    struct accept_state a;
    if (!conn || !board || !(slot_sv = DEFINED_IN(conn, "slot")))
        croak("serve_connections: not a connection loop");
    slot = slot_of(aTHX_ board, SvIV(slot_sv), "serve_connections");
    limits_of = DEFINED_IN(conn, "limits_of");
    if (!limits_of || !SvROK(limits_of) || SvTYPE(SvRV(limits_of)) != SVt_PVAV
        || !loop_state(aTHX_ &a.shared, conn_ref))
        croak("serve_connections: not a connection loop");
    a.limits_of = (AV *)SvRV(limits_of);
    a.noted = -1;
    *take = 0;
    *ready = -1;
    while (!accept_due(aTHX_ conn, stopping, reopen, memory_due, remaining, served)) {
        struct epoll_event ev;
        SV **fh, **unix_flag, **base, *handle, *left;
        HV *peer;
        int n;
        slot[0] = '_';
        n = epoll_wait(epfd, &ev, 1, 1000);
        if (n < 0 && errno != EINTR) { *take = 1; break; }
        if (n != 1) { PERL_ASYNC_CHECK(); break; }

        /* A signal that came with the connection runs first: asked to reopen the logs, the
         * worker does before it takes the connection, or its request would go to the old ones */
        PERL_ASYNC_CHECK();
        if (SvTRUE(SvRV(reopen))) break;
        unix_flag = av_fetch(unix_flags, ev.data.u32, 0);
        fh = av_fetch(fhs, ev.data.u32, 0);
        base = av_fetch(bases, ev.data.u32, 0);
        if (!fh || !base || (unix_flag && SvTRUE(*unix_flag))) {
            *take = 1;
            *ready = (int)ev.data.u32;
            break;
        }
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
        served += serve_accepted(aTHX_ &a, handle, peer, *base, (IV)ev.data.u32, left);
        FREETMPS;
        LEAVE;
    }
    return served;
}
