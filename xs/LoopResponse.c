/* The response side of the loop in C, included by Loop.c (see there): what it writes itself,
 * as Perennial::HTTP::Response's respond writes it, and the response object it makes for each
 * request. */

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
new_response(pTHX_ struct conn_loop *l, SV *env_ref, HV *env, NV t0, int http11,
             int keep_alive)
{
    HV *c = newHV();
    SV *method = DEFINED_IN(env, "REQUEST_METHOD");
    STRLEN len = 0;
    const char *p = method ? SvPV_const(method, len) : "";
    int head_only = len == 4 && memEQ(p, "HEAD", 4);
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
