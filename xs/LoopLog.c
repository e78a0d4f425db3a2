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

/* A response's value as the log reads it, borrowed: the object's when it was made (the Perl may
 * have changed it), else the one given (one the request holds) */
#define VALUE_LOGGED(p, key, kept) (MADE(p) ? DEFINED_IN(MADE(p), key) : (kept))

/* The record Perennial::Log's access makes: {env, status, bytes, micros, vhost, headers,
 * head_bytes, keep_alive} (a mortal reference), from the values the line was given */
static SV *
log_record(pTHX_ struct pending *p, const struct log_values *v)
{
    HV *r = newHV(), *c = MADE(p);
    SV *vhost = DEFINED_IN(p->env, "perennial.vhost");
    SV *headers = VALUE_LOGGED(p, "res_headers", p->headers);
    SV *head = c ? DEFINED_IN(c, "head_bytes") : NULL;
    (void)hv_stores(r, "env", newSVsv(p->env_ref));
    (void)hv_stores(r, "status", newSVsv(v->status));
    (void)hv_stores(r, "bytes", newSVsv(v->bytes));
    (void)hv_stores(r, "micros", newSVsv(v->micros));
    (void)hv_stores(r, "vhost", vhost ? newSVsv(vhost) : newSV(0));
    (void)hv_stores(r, "headers", headers ? newSVsv(headers) : newSV(0));
    (void)hv_stores(r, "head_bytes",
                    c ? (head ? newSVsv(head) : newSV(0))
                      : p->written ? newSVuv(p->head_bytes) : newSV(0));
    (void)hv_stores(r, "keep_alive", newSViv(SvTRUE(v->keep_alive) ? 1 : 0));
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
    const struct log_values *v;
};

static SV *
make_record(pTHX_ void *ctx)
{
    struct log_ctx *x = (struct log_ctx *)ctx;
    return log_record(aTHX_ x->p, x->v);
}

/* Every access log's line for this request, with its bytes and keep-alive as after_response
 * worked them out: each entry of the log's list is [handle, format].
 * A format of Perennial::Log::Format's own class is given the request's values (its C asks for
 * the record only if a field of its has no C); any other is asked its `line` with the record. */
static void
log_access(pTHX_ struct pending *p, AV *list, UV micros, UV bytes, int keep)
{
    static SV *bytes_sv = NULL, *micros_sv = NULL;    /* Set again for each request's lines */
    struct format_api *api = format_api(aTHX);
    struct log_values v;
    struct log_ctx ctx = {p, &v};
    SSize_t i;
    ENTER;
    SAVETMPS;
    SAVEFREESV(SvREFCNT_inc_simple_NN((SV *)list));    /* Held while the formats' Perl runs */
    if (!bytes_sv) {
        bytes_sv = newSV(0);
        micros_sv = newSV(0);
    }
    sv_setuv(bytes_sv, bytes);
    sv_setuv(micros_sv, micros);
    v.env = p->env;
    v.status = VALUE_LOGGED(p, "status", p->status);
    if (!v.status || !SvOK(v.status)) v.status = &PL_sv_zero;    /* As `// 0` */
    v.bytes = bytes_sv;
    v.micros = micros_sv;
    v.keep_alive = keep ? &PL_sv_yes : &PL_sv_no;
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
