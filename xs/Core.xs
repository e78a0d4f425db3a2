/* Perennial's hot path in C: the work of each request that Perl cannot make cheap enough
 * (issue 16). Each function has a pure-Perl twin in lib/Perennial/HTTP/Core.pm that does the
 * same thing byte for byte; the two loops (xs_serve_plain, xs_serve_connections: Loop.c,
 * Accept.c) have theirs in Perennial::Connection and Perennial::Server. The tests run both.
 * Nothing here keeps state between calls but the Date line of the current second, the
 * package's stash and the last connection's handle, the process's id, a read's buffer and
 * where Perennial::HTTP::Response keeps its status lines and Server line. Its parts, by what
 * they do, are the .c files it includes. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"
#include "perliol.h"    /* The :unix layer, for a connection's stream (CoreConnection.c) */
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
#include <fcntl.h>

/* The framings of a response body, as the Perl side names them */
static const char *const FRAMING[] = { "length", "chunked", "close", "none" };
enum { F_LENGTH, F_CHUNKED, F_CLOSE, F_NONE };

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

/* The descriptor of a waiter: the epoll instance's number, as xs_waiter makes it */
static int
waiter_fd(pTHX_ SV *waiter)
{
    if (SvROK(waiter) || !SvIOK(waiter)) croak("not a waiter");
    return (int)SvIV(waiter);
}

#define MAX_PARTS 64
#define MAX_PLAIN_NAME 64

#include "CoreResponse.c"      /* A response's head and its write */
#include "CoreHead.c"          /* A plain request head */
#include "CoreConnection.c"    /* A connection's handle, its client, a wait */
#include "Loop.c"
#include "Accept.c"

MODULE = Perennial::HTTP::Core    PACKAGE = Perennial::HTTP::Core

PROTOTYPES: DISABLE

BOOT:
    pthread_atfork(NULL, NULL, forget_pid);
    pthread_atfork(NULL, NULL, forget_statm);

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
    struct plain_limits lim;
  PPCODE:
    plain_limits_of(aTHX_ limits, &lim);
    env = plain_head(aTHX_ buf, base, peer, &lim, &len, NULL);
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
    /* An epoll instance that watches each handle for input, and says which by its index: each
     * worker makes its own, in which every handle is exclusive (EPOLLEXCLUSIVE: Linux wakes
     * one of the workers waiting for a handle, see Server.pm). Linux::Epoll calls a Perl
     * callback for each ready handle (2.4k instructions a connection); next_ready returns the
     * index. */
    if (!SvROK(handles) || SvTYPE(SvRV(handles)) != SVt_PVAV) croak("waiter: not an array reference");
    av = (AV *)SvRV(handles);
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) XSRETURN_UNDEF;
    for (i = 0; i <= av_len(av); i++) {
        each = av_fetch(av, i, 0);
        memset(&ev, 0, sizeof ev);
        ev.events = EPOLLIN | EPOLLEXCLUSIVE;
        ev.data.u32 = (uint32_t)i;
        if (!each || epoll_ctl(ep, EPOLL_CTL_ADD, handle_fd(aTHX_ *each), &ev) < 0) {
            saved_errno = errno;
            close(ep);
            errno = saved_errno;
            XSRETURN_UNDEF;
        }
    }
    /* The descriptor's number, not a Perl handle: a handle made in each worker (a glob, a
     * PerlIO stream and its layers) copied some 13 pages it shares with the manager
     * (bench/pages.pl --from-fork). The process keeps it open until it ends; close-on-exec. */
    RETVAL = newSViv(ep);
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
    n = epoll_wait(waiter_fd(aTHX_ waiter), &ev, 1, 1000);
    if (n < 0 && errno != EINTR) croak("Can't wait on the listeners: %s", strerror(errno));
    if (n != 1) {
        PERL_ASYNC_CHECK();
        XSRETURN_EMPTY;
    }
    mXPUSHu(ev.data.u32);

# The response object of the request whose application the loop in C is running (made now if
# it was not), or undef: for the Perl's abort_request and client_socket
SV *
xs_current_response()
  CODE:
    RETVAL = CURRENT ? newSVsv(response_object(aTHX_ CURRENT)) : &PL_sv_undef;
  OUTPUT:
    RETVAL

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
    int take, ready;
  PPCODE:
    if (!SvROK(listeners) || SvTYPE(SvRV(listeners)) != SVt_PVAV || !SvROK(bases)
        || SvTYPE(SvRV(bases)) != SVt_PVAV || !SvROK(unix_flags)
        || SvTYPE(SvRV(unix_flags)) != SVt_PVAV || !SvROK(stopping) || !SvROK(reopen))
        croak("serve_connections: bad arguments");
    PUTBACK;
    served = accept_loop(aTHX_ conn, waiter_fd(aTHX_ waiter), (AV *)SvRV(listeners),
                         (AV *)SvRV(bases), (AV *)SvRV(unix_flags), stopping, reopen,
                         memory_due, remaining, &take, &ready);
    SPAGAIN;
    EXTEND(SP, 3);
    PUSHs(sv_2mortal(newSViv(served)));
    PUSHs(take ? &PL_sv_yes : &PL_sv_no);
    PUSHs(ready >= 0 ? sv_2mortal(newSViv(ready)) : &PL_sv_undef);
