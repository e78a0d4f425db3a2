/* An access log's line in C (issue 16): the Perl formatter called a sub for each field of a
 * compiled LogFormat, and a combined line cost about 55k instructions, a third of a PSGI hello
 * request's. The common fields (those of Apache's common and combined formats, and a few
 * more) are made here from the request's values; any other field's sub, the Perl one, is
 * called from here with the record it reads, so every format gives the same line as
 * Perennial::Log::Format's Perl `line` (the twin; the tests compare them). Two ways in: `line`
 * from the Perl, with the record, and the loop in C's (xs/FormatApi.h), with the values as
 * the loop has them and the record made only if a field's Perl asks for it. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"
#include <time.h>
#include <sys/time.h>
#include "FormatApi.h"

/* A value of a hash, or NULL when it is not there or undefined; hash: the key's, or 0 */
static SV *
value_of(pTHX_ HV *hv, const char *key, I32 klen, U32 hash)
{
    SV **v;
    if (!hv) return NULL;
    v = (SV **)hv_common_key_len(hv, key, klen, HV_FETCH_JUST_SV, NULL, hash);
    if (!v) return NULL;
    SvGETMAGIC(*v);
    return SvOK(*v) ? *v : NULL;
}

/* The keys the common fields read, each hashed once (BOOT): a combined line reads ten, and
 * hashing each again was a third of their cost */
enum key {
    K_PEER, K_REMOTE_ADDR, K_REMOTE_USER, K_LINE, K_METHOD, K_URI, K_PROTOCOL, K_STATUS, K_BYTES,
    K_MICROS, K_KEEP_ALIVE, K_COUNT
};

#define KEY(name) {"" name "", sizeof(name) - 1, 0}

static struct {
    const char *name;
    I32 len;
    U32 hash;
} KEYS[K_COUNT] = {KEY("perennial.peer"), KEY("REMOTE_ADDR"),    KEY("REMOTE_USER"),
                   KEY("perennial.line"), KEY("REQUEST_METHOD"), KEY("REQUEST_URI"),
                   KEY("SERVER_PROTOCOL"), KEY("status"),        KEY("bytes"),
                   KEY("micros"),          KEY("keep_alive")};

#define VALUE(hv, k) value_of(aTHX_ (hv), KEYS[k].name, KEYS[k].len, KEYS[k].hash)

#include "FormatText.c"    /* Bytes, values and escaped values onto a line */

/* [%d/%b/%Y:%H:%M:%S %z] of this second, made once a second as the Perl makes it */
static void
append_time(pTHX_ SV *line)
{
    static const char *month[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    static time_t second = -1;
    static char text[64];
    static int length;
    struct timeval tv;
    time_t now;
    /* The clock the Perl twin reads (gettimeofday, as Time::HiRes): time(2) reads a coarser one,
     * which can still show the last second a few milliseconds into the next */
    gettimeofday(&tv, NULL);
    now = tv.tv_sec;
    if (now != second) {
        struct tm t;
        char zone[16];
        tzset();
        localtime_r(&now, &t);
        strftime(zone, sizeof zone, "%z", &t);
        length = snprintf(text, sizeof text, "[%02d/%s/%04d:%02d:%02d:%02d %s]", t.tm_mday,
                          month[t.tm_mon], t.tm_year + 1900, t.tm_hour, t.tm_min, t.tm_sec, zone);
        if (length < 0 || length >= (int)sizeof text) length = (int)strlen(text);
        second = now;
    }
    put(aTHX_ line, text, (STRLEN)length);
}

/* The record the Perl fields read: the caller's, or made once for the line's first */
static SV *
record_of(pTHX_ struct log_values *v)
{
    if (!v->record) v->record = v->make_record(aTHX_ v->ctx);
    return v->record;
}

/* A field the C does not make: its Perl sub's answer */
static void
append_from_perl(pTHX_ SV *line, SV *code, struct log_values *v, SV *arg)
{
    dSP;
    int n;
    SV *got, *r = record_of(aTHX_ v);
    ENTER;
    SAVETMPS;
    PUSHMARK(SP);
    XPUSHs(r);
    XPUSHs(arg);
    PUTBACK;
    n = call_sv(code, G_SCALAR);
    SPAGAIN;
    got = n ? POPs : &PL_sv_undef;
    SvGETMAGIC(got);
    if (SvOK(got)) put_sv(aTHX_ line, got);
    PUTBACK;
    FREETMPS;
    LEAVE;
}

/* One field; false when the C does not make it (its arguments, or the letter) */
static int
append_field(pTHX_ SV *line, char letter, SV *arg, struct log_values *r, HV *env)
{
    STRLEN alen;
    const char *a = SvPV_const(arg, alen);
    SV *v;
    switch (letter) {
    case 'a':
    case 'h':
        if (alen == 1 && a[0] == 'c') {
            v = VALUE(env, K_PEER);
            append_raw(aTHX_ line, v ? v : VALUE(env, K_REMOTE_ADDR), "-");
        }
        else append_raw(aTHX_ line, VALUE(env, K_REMOTE_ADDR), "-");
        return 1;
    case 'l':
        PUTS(line, "-");
        return 1;
    case 'u':
        append_clean(aTHX_ line, VALUE(env, K_REMOTE_USER));
        return 1;
    case 't':
        if (alen && !memEQs(a, alen, "begin") && !memEQs(a, alen, "end")
            && !memEQs(a, alen, "begin:") && !memEQs(a, alen, "end:"))
            return 0;
        append_time(aTHX_ line);
        return 1;
    case 'r':
        /* The request line as sent (a refused request's), or its method, target and protocol
         * as the Perl joins them: each cleaned alone gives what the joined line cleaned gives */
        v = VALUE(env, K_LINE);
        if (v) append_clean(aTHX_ line, v);
        else {
            SV *method = VALUE(env, K_METHOD), *uri = VALUE(env, K_URI),
               *protocol = VALUE(env, K_PROTOCOL);
            if (!method || !uri || !protocol) return 0;
            append_clean(aTHX_ line, method);
            PUTS(line, " ");
            append_clean(aTHX_ line, uri);
            PUTS(line, " ");
            append_clean(aTHX_ line, protocol);
        }
        return 1;
    case 's':
        append_raw(aTHX_ line, r->status, "");
        return 1;
    case 'b':
        append_raw(aTHX_ line, r->bytes && SvTRUE(r->bytes) ? r->bytes : NULL, "-");
        return 1;
    case 'B':
        append_raw(aTHX_ line, r->bytes, "0");
        return 1;
    case 'D':
        append_raw(aTHX_ line, r->micros, "");
        return 1;
    case 'i':
        append_clean(aTHX_ line, value_of(aTHX_ env, a, (I32)alen, 0));
        return 1;
    case 'm':
        append_clean(aTHX_ line, VALUE(env, K_METHOD));
        return 1;
    case 'H':
        append_raw(aTHX_ line, VALUE(env, K_PROTOCOL), "-");
        return 1;
    case 'X':
        if (r->keep_alive && SvTRUE(r->keep_alive)) PUTS(line, "+");
        else PUTS(line, "-");
        return 1;
    }
    return 0;
}

/* A compiled format's pieces: an array perl made and nothing ties, read without av_fetch (45
 * calls a combined line); NULL for a hole */
#define PIECE(av, i) (SvRMAGICAL(av) ? av_fetch((av), (i), 0) : AvARRAY(av) + (i))

/* The line the C makes, kept and used again (a new buffer for each line cost about 600
 * instructions); one made for a line asked for while another is being made (by a field's
 * Perl) */
static SV *LINE = NULL;
static int LINE_BUSY = 0;

/* A compiled format's line for a request's values, with its newline: LINE, or a mortal */
static SV *
format_line(pTHX_ SV *self, struct log_values *v)
{
    SV **pieces_sv, *line;
    AV *pieces;
    HV *env = v->env;
    SSize_t i;
    if (!SvROK(self) || SvTYPE(SvRV(self)) != SVt_PVHV) croak("line: not a compiled format");
    pieces_sv = hv_fetchs((HV *)SvRV(self), "pieces", 0);
    if (!pieces_sv || !SvROK(*pieces_sv) || SvTYPE(SvRV(*pieces_sv)) != SVt_PVAV)
        croak("line: not a compiled format");
    pieces = (AV *)SvRV(*pieces_sv);
    if (LINE_BUSY) line = sv_2mortal(newSV(256));
    else {
        if (!LINE) LINE = newSV(256);
        line = LINE;
        SAVEINT(LINE_BUSY);    /* Free again if a field's Perl dies */
        LINE_BUSY = 1;
    }
    sv_setpvs(line, "");
    SvUTF8_off(line);    /* A string of bytes, empty */
    for (i = 0; i <= av_top_index(pieces); i++) {
        SV **piece = PIECE(pieces, i);
        AV *field;
        SV **code, **arg, **letter;
        if (!piece || !*piece) continue;
        if (!SvROK(*piece)) {
            put_sv(aTHX_ line, *piece);
            continue;
        }
        field = (AV *)SvRV(*piece);
        if (SvTYPE(field) != SVt_PVAV || av_top_index(field) < 1)
            croak("line: a field without its sub");
        code   = PIECE(field, 0);
        arg    = PIECE(field, 1);
        letter = av_top_index(field) >= 2 ? PIECE(field, 2) : NULL;
        if (!code || !*code || !arg || !*arg) croak("line: a field without its sub");
        if (env && letter && *letter && SvPOK(*letter) && SvCUR(*letter) == 1
            && append_field(aTHX_ line, SvPVX(*letter)[0], *arg, v, env))
            continue;
        append_from_perl(aTHX_ line, *code, v, *arg);
    }
    PUTS(line, "\n");
    *SvEND(line) = '\0';
    if (line == LINE) LINE_BUSY = 0;
    return line;
}

static struct format_api format_api = {NULL, format_line};

MODULE = Perennial::Log::Format    PACKAGE = Perennial::Log::Format

PROTOTYPES: DISABLE

BOOT:
{
    int k;
    for (k = 0; k < K_COUNT; k++) PERL_HASH(KEYS[k].hash, KEYS[k].name, KEYS[k].len);
    format_api.stash = gv_stashpvs("Perennial::Log::Format", GV_ADD);
    (void)hv_stores(PL_modglobal, FORMAT_API_KEY, newSViv(PTR2IV(&format_api)));
}

# One line of a compiled format for the request $r (a hash: Perennial::Log::Format's record),
# with its newline
SV *
xs_line(self, r)
    SV *self
    SV *r
  PREINIT:
    struct log_values v;
    SV **env_sv;
    HV *rh;
  CODE:
    if (!SvROK(r) || SvTYPE(SvRV(r)) != SVt_PVHV) croak("line: the request is not a hash");
    rh           = (HV *)SvRV(r);
    env_sv       = hv_fetchs(rh, "env", 0);
    v.env        = env_sv && SvROK(*env_sv) && SvTYPE(SvRV(*env_sv)) == SVt_PVHV
                     ? (HV *)SvRV(*env_sv) : NULL;
    v.status     = VALUE(rh, K_STATUS);
    v.bytes      = VALUE(rh, K_BYTES);
    v.micros     = VALUE(rh, K_MICROS);
    v.keep_alive = VALUE(rh, K_KEEP_ALIVE);
    v.record     = r;
    v.make_record = NULL;
    v.ctx        = NULL;
    RETVAL = newSVsv(format_line(aTHX_ self, &v));
  OUTPUT:
    RETVAL
