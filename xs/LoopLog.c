/* The access log's lines for a request the loop in C served, included by Loop.c (see there).
 *
 * Perennial::Log's access took the response object, which the C then made for every request
 * only for the log, and built the record the formats read in Perl: with a combined access log
 * kept, a kept-alive PSGI hello cost 80k instructions a request against 38k without one
 * (callgrind; the object 12k with its free, the Perl around the line 16k). The record made
 * here and each format asked its `line` with it still cost 15.7k a line: 3.5k to make the
 * record's hash, 2.1k to free it, 2.3k for the method call. A format of Perennial's own is
 * now given the request's values directly, through its C (xs/FormatApi.h), and the record is
 * made only for a field that only the Perl makes; each line goes in one write(2), as the
 * Perl's syswrite writes it. */

/* A response's field as the log reads it: the object's when it was made (the Perl may have
 * changed it), else the value kept (which this takes) */
static SV *
logged(pTHX_ struct pending *p, const char *key, I32 klen, SV *kept)
{
    HV *c = MADE(p);
    SV *v;
    if (!c) return kept;
    SvREFCNT_dec(kept);
    v = defined_in(aTHX_ c, key, klen);
    return v ? newSVsv(v) : newSV(0);
}

#define LOGGED(p, key, kept) logged(aTHX_ (p), ("" key ""), (I32)(sizeof(key) - 1), (kept))

/* The record Perennial::Log's access makes: {env, status, bytes, micros, vhost, headers,
 * head_bytes, keep_alive} (a mortal reference) */
static SV *
log_record(pTHX_ struct pending *p, UV micros)
{
    HV *r = newHV();
    SV *vhost = DEFINED_IN(p->env, "perennial.vhost");
    SV *status = LOGGED(p, "status", p->status ? newSVsv(p->status) : newSV(0));
    if (!SvOK(status)) sv_setiv(status, 0);    /* As the Perl's `$c->{status} // 0` */
    (void)hv_stores(r, "env", newSVsv(p->env_ref));
    (void)hv_stores(r, "status", status);
    (void)hv_stores(r, "bytes", LOGGED(p, "bytes", newSVuv(p->bytes)));
    (void)hv_stores(r, "micros", newSVuv(micros));
    (void)hv_stores(r, "vhost", vhost ? newSVsv(vhost) : newSV(0));
    (void)hv_stores(r, "headers",
                    LOGGED(p, "res_headers", p->headers ? newSVsv(p->headers) : newSV(0)));
    (void)hv_stores(r, "head_bytes",
                    LOGGED(p, "head_bytes", p->written ? newSVuv(p->head_bytes) : newSV(0)));
    (void)hv_stores(r, "keep_alive", LOGGED(p, "keep_alive", newSViv(p->keep_alive)));
    return sv_2mortal(newRV_noinc((SV *)r));
}

/* A log's descriptor, or -1 (asked before its line is made: a layer's FILENO could be Perl,
 * which could ask for another line while the format's kept one waits to be written) */
static int
log_fd(pTHX_ SV *handle)
{
    IO *io = handle_io(handle);
    PerlIO *f = io ? IoOFP(io) : NULL;
    return f ? PerlIO_fileno(f) : -1;
}

/* One line to one log, in one write(2), in bytes (a wide line, which no format's fields make,
 * encoded as UTF-8 rather than refused) */
static void
write_log_line(pTHX_ int fd, SV *line)
{
    STRLEN len;
    const char *text;
    if (SvUTF8(line) && !sv_utf8_downgrade(line, TRUE)) sv_utf8_encode(line);
    text = SvPV_const(line, len);
    while (write(fd, text, len) < 0 && errno == EINTR) {}
}

/* The format's C (xs/FormatApi.h), found once; NULL while Perennial::Log::Format's C is not
 * loaded (its lines are then asked of its `line`) */
static struct format_api *
format_api(pTHX)
{
    static struct format_api *api;
    SV **sv;
    if (!api && (sv = hv_fetchs(PL_modglobal, FORMAT_API_KEY, 0)) && SvIOK(*sv))
        api = INT2PTR(struct format_api *, SvIV(*sv));
    return api;
}

/* What the formats' Perl fields read, made when the first of them asks */
struct log_ctx {
    struct pending *p;
    UV micros;
};

static SV *
make_record(pTHX_ void *ctx)
{
    struct log_ctx *x = (struct log_ctx *)ctx;
    return log_record(aTHX_ x->p, x->micros);
}

/* A response's value as the log reads it, borrowed: the object's when it was made (the Perl may
 * have changed it), else the one given (a mortal the caller made, or one the request holds) */
static SV *
value_logged(pTHX_ struct pending *p, const char *key, I32 klen, SV *kept)
{
    HV *c = MADE(p);
    return c ? defined_in(aTHX_ c, key, klen) : kept;
}

#define VALUE_LOGGED(p, key, kept) value_logged(aTHX_ (p), ("" key ""), (I32)(sizeof(key) - 1), (kept))

/* Every access log's line for this request: each entry of the log's list is [handle, format].
 * A format of Perennial::Log::Format's own class is given the request's values (its C asks for
 * the record only if a field of its has no C); any other is asked its `line` with the record. */
static void
log_access(pTHX_ struct pending *p, AV *list, UV micros)
{
    struct format_api *api = format_api(aTHX);
    struct log_ctx ctx = {p, micros};
    struct log_values v;
    SSize_t i;
    ENTER;
    SAVETMPS;
    SAVEFREESV(SvREFCNT_inc_simple_NN((SV *)list));    /* Held while the formats' Perl runs */
    v.env = p->env;
    v.status = VALUE_LOGGED(p, "status", p->status);
    if (!v.status || !SvOK(v.status)) v.status = sv_2mortal(newSViv(0));    /* As `// 0` */
    v.bytes = VALUE_LOGGED(p, "bytes", sv_2mortal(newSVuv(p->bytes)));
    v.micros = sv_2mortal(newSVuv(micros));
    v.keep_alive = VALUE_LOGGED(p, "keep_alive", p->keep_alive ? &PL_sv_yes : &PL_sv_no);
    v.record = NULL;
    v.make_record = make_record;
    v.ctx = &ctx;
    for (i = 0; i <= av_top_index(list); i++) {
        SV **entry = av_fetch(list, i, 0), **handle, **format, *line;
        int fd;
        if (!entry || !SvROK(*entry) || SvTYPE(SvRV(*entry)) != SVt_PVAV) continue;
        handle = av_fetch((AV *)SvRV(*entry), 0, 0);
        format = av_fetch((AV *)SvRV(*entry), 1, 0);
        if (!handle || !format || (fd = log_fd(aTHX_ *handle)) < 0) continue;
        if (api && SvROK(*format) && SvOBJECT(SvRV(*format))
            && SvSTASH(SvRV(*format)) == api->stash) {
            write_log_line(aTHX_ fd, api->line(aTHX_ *format, &v));
            continue;
        }
        if (!v.record) v.record = make_record(aTHX_ &ctx);
        line = call_on(aTHX_ *format, "line", 0, 1, &v.record);
        if (!line) continue;
        write_log_line(aTHX_ fd, line);
        SvREFCNT_dec(line);
    }
    FREETMPS;
    LEAVE;
}
