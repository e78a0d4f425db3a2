/* The response side of the loop in C, included by Loop.c (see there): what it writes itself,
 * as Perennial::HTTP::Response's respond writes it, and the response object, made only when
 * the Perl is to see the response. */

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

/* A request the loop is serving, and its response as far as the C knows it. The response
 * object (a Perennial::HTTP::Response, as Response->for_request makes it) is made only when
 * the Perl is to see it: a response the C does not write, an application that died, a client
 * that did not take it all at once, the Perl's _after_response, or the worker's own
 * abort_request and client_socket (a deadline, an exit, a fork) while the application runs.
 * Made for every request, it and the fields the write set cost a kept-alive PSGI request 13k
 * of its 55k instructions. */
struct pending {
    struct conn_loop *l;    /* The loop's state: the connection's, and its head's facts */
    SV *env_ref;            /* A reference the request holds */
    HV *env;
    NV t0;
    int keep_alive;
    SV *c_ref;        /* The response object once made: a reference the request holds */
    int written;      /* write_usual wrote the response: what it wrote, below */
    int framing;
    SV *status, *headers, *length;    /* The application's values, a count held on each */
    STRLEN head_bytes, bytes;
};

/* The request whose application (or its response's write) is running in this process, for the
 * Perl's abort_request and client_socket (xs_current_response); one at a time */
static struct pending PENDING;
static struct pending *CURRENT = NULL;

/* The fields a whole write gives the response object (as respond sets them) */
static void
store_written(pTHX_ HV *c, struct pending *p)
{
    (void)hv_stores(c, "framing", newSVpv(FRAMING[p->framing], 0));
    (void)hv_stores(c, "length", p->length ? newSVsv(p->length) : newSV(0));
    (void)hv_stores(c, "keep_alive", newSViv(p->keep_alive));
    (void)hv_stores(c, "status", newSVsv(p->status));    /* Copies, as respond keeps them */
    (void)hv_stores(c, "res_headers", newSVsv(p->headers));
    (void)hv_stores(c, "head_bytes", newSVuv(p->head_bytes));
    (void)hv_stores(c, "bytes", newSVuv(p->bytes));
}

/* The request's response object, made now if it was not (with what the C wrote of it) */
static SV *
response_object(pTHX_ struct pending *p)
{
    struct conn_loop *l = p->l;
    HV *c;
    if (p->c_ref) return p->c_ref;
    c = newHV();
    (void)hv_stores(c, "bytes", newSViv(0));
    (void)hv_stores(c, "sock", newSVsv(l->sock));
    (void)hv_stores(c, "env", newSVsv(p->env_ref));
    (void)hv_stores(c, "t0", newSVnv(p->t0));
    (void)hv_stores(c, "timeout", newSVsv(l->timeout));
    (void)hv_stores(c, "may_spool", newSVsv(l->spooling));
    (void)hv_stores(c, "keep_alive", newSViv(p->keep_alive));
    (void)hv_stores(c, "head_only", newSVsv(boolSV(l->facts.head_only)));
    (void)hv_stores(c, "http11", newSVsv(boolSV(l->facts.http11)));
    if (p->written) store_written(aTHX_ c, p);
    p->c_ref = sv_bless(newRV_noinc((SV *)c), l->response);
    return p->c_ref;
}

/* The response object if it was made, as a hash */
#define MADE(p) ((p)->c_ref ? (HV *)SvRV((p)->c_ref) : NULL)

/* Whether the connection may stay open after the response, and the body's bytes that went: the
 * object's fields when it was made (the Perl may have changed them), else the state's */
static int
response_keep_alive(pTHX_ struct pending *p)
{
    HV *c = MADE(p);
    return c ? TRUE_IN(c, "keep_alive") : p->keep_alive;
}

static UV
response_bytes(pTHX_ struct pending *p)
{
    HV *c = MADE(p);
    SV *bytes = c ? DEFINED_IN(c, "bytes") : NULL;
    return c ? (bytes ? SvUV(bytes) : 0) : p->bytes;
}

/* The end of a request's pending state, however the request ends. One that ends while its
 * application or response still runs was cut short: by an exit (CORE::exit unwinds the
 * contexts, this with them, while the C frames still stand, and then runs the END blocks,
 * where Server's asks abort_request to answer the request), or by a die through the loop
 * (which ends the worker: the Runner's eval rethrows it). Its object goes where the Perl
 * loop's is then, in the connection's in_app, as the loop in C left it before its object was
 * made late. */
static void
pending_end(pTHX_ void *ptr)
{
    struct pending *p = (struct pending *)ptr;
    if (CURRENT == p) {
        (void)hv_stores(p->l->self, "in_app", newSVsv(response_object(aTHX_ p)));
        CURRENT = NULL;
    }
    SvREFCNT_dec(p->env_ref);
    p->env_ref = NULL;
    SvREFCNT_dec(p->c_ref);
    SvREFCNT_dec(p->status);
    SvREFCNT_dec(p->headers);
    SvREFCNT_dec(p->length);
    p->c_ref = p->status = p->headers = p->length = NULL;
}

/* Writes the application's response when it is the usual kind (as the response's respond does,
 * its fields kept as respond sets them); false when the Perl is to write it */
static int
write_usual(pTHX_ struct pending *p, SV *res)
{
    struct conn_loop *l = p->l;
    AV *r;
    SV **status, **headers, **body, *line, *head, *length;
    HV *c = MADE(p);
    IV keep_alive = response_keep_alive(aTHX_ p);
    int framing, failed, whole;
    STRLEN total;
    ssize_t n;

    if (!res || !SvROK(res) || SvTYPE(SvRV(res)) != SVt_PVAV || SvRMAGICAL(SvRV(res))) return 0;
    if (!still_open(aTHX_ l)) return 0;    /* The application closed psgix.io: the Perl's */
    r = (AV *)SvRV(res);
    if (av_top_index(r) != 2) return 0;
    status = av_fetch(r, 0, 0);
    headers = av_fetch(r, 1, 0);
    body = av_fetch(r, 2, 0);
    if (!status || !plain_value(*status) || !looks_like_number(*status)) return 0;
    if (!headers || !plain_array(aTHX_ *headers, 1) || !body || !plain_array(aTHX_ *body, 0))
        return 0;
    line = known_status_line(aTHX_ l, l->facts.http11, *status);
    if (!line) return 0;
    n = send_response(aTHX_ l->fd, line, SvIV(*status), *headers, *body, l->facts.http11,
                      l->facts.head_only, &keep_alive, l->server, &head, &framing, &length,
                      &total);
    failed = n < 0 ? errno : 0;
    whole = n >= 0 && (STRLEN)n == SvCUR(head) + total;

    /* Kept as they are, for an object made later to copy (most requests never make one) */
    p->written = 1;
    p->framing = framing;
    p->keep_alive = (int)keep_alive;
    SvREFCNT_dec(p->length);
    SvREFCNT_dec(p->status);
    SvREFCNT_dec(p->headers);
    p->length = length ? SvREFCNT_inc_simple_NN(length) : NULL;
    p->status = SvREFCNT_inc_simple_NN(*status);
    p->headers = SvREFCNT_inc_simple_NN(*headers);
    p->head_bytes = SvCUR(head);
    p->bytes = whole ? total : 0;
    if (c) store_written(aTHX_ c, p);
    if (whole) return 1;
    {
        /* What the client did not take at once goes as it can, within Timeout */
        SV *argv[5], *done, *c_ref = response_object(aTHX_ p);
        argv[0] = sv_2mortal(newSViv(failed));
        argv[1] = n < 0 ? &PL_sv_undef : sv_2mortal(newSViv(n));
        argv[2] = head;
        argv[3] = sv_2mortal(newSVuv(total));
        argv[4] = *body;
        done = call_on(aTHX_ c_ref, "written_in_part", G_EVAL, 5, argv);
        if (done) SvREFCNT_dec(done);
        else app_failed(aTHX_ l, c_ref, p->env_ref, KEEP_ERROR());
    }
    return 1;
}
