/* An access log's line in C (issue 16): the Perl formatter called a sub for each field of a
 * compiled LogFormat, and a combined line cost about 55k instructions, a third of a PSGI hello
 * request's. The common fields (those of Apache's common and combined formats, and a few
 * more) are made here from the request's hashes; any other field's sub, the Perl one, is
 * called from here, so every format gives the same line as Perennial::Log::Format's Perl
 * `line` (the twin; the tests compare them). */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"
#include <time.h>
#include <sys/time.h>

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

static int
printable(U8 c)
{
    return c == 0x20 || c == 0x21 || (c >= 0x23 && c <= 0x5b) || (c >= 0x5d && c <= 0x7e);
}

/* The escapes Apache's ap_escape_logitem writes by name: the quote and the backslash after a
 * backslash, and \b \n \r \t \v; NULL for a byte written as \xNN */
static const char *
escape_name(U8 c)
{
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\v': return "\\v";
    }
    return NULL;
}

/* A value as Apache escapes it (Perennial::Log::Format::clean): the quote, the backslash and
 * the named controls after a backslash, other bytes that are not printable ASCII as \xNN, '-'
 * for nothing. Characters past a byte go to the Perl clean, which writes them as it does. */
static void
append_clean(pTHX_ SV *line, SV *value)
{
    STRLEN len, i;
    const char *p;
    int plain = 1;
    if (!value) {
        sv_catpvs(line, "-");
        return;
    }
    p = SvPV_const(value, len);
    for (i = 0; i < len; i++) {
        if (printable((U8)p[i])) continue;
        plain = 0;
        if (SvUTF8(value) && (U8)p[i] >= 0x80) {
            dSP;
            SV *clean;
            int n;
            ENTER;
            SAVETMPS;
            PUSHMARK(SP);
            XPUSHs(value);
            PUTBACK;
            n = call_pv("Perennial::Log::Format::clean", G_SCALAR);
            SPAGAIN;
            clean = n ? POPs : &PL_sv_undef;
            if (SvOK(clean)) sv_catsv(line, clean);
            PUTBACK;
            FREETMPS;
            LEAVE;
            return;
        }
    }
    if (plain) {
        sv_catpvn(line, p, len);
        return;
    }
    for (i = 0; i < len; i++) {
        U8 c = (U8)p[i];
        const char *named;
        if (printable(c)) sv_catpvn(line, p + i, 1);
        else if ((named = escape_name(c))) sv_catpvn(line, named, 2);
        else sv_catpvf(line, "\\x%02x", (unsigned)c);
    }
}

static void
append_raw(pTHX_ SV *line, SV *value, const char *otherwise)
{
    if (value) sv_catsv(line, value);
    else sv_catpv(line, otherwise);
}

/* [%d/%b/%Y:%H:%M:%S %z] of this second, made once a second as the Perl makes it */
static void
append_time(pTHX_ SV *line)
{
    static const char *month[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    static time_t second = -1;
    static char text[64];
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
        snprintf(text, sizeof text, "[%02d/%s/%04d:%02d:%02d:%02d %s]", t.tm_mday,
                 month[t.tm_mon], t.tm_year + 1900, t.tm_hour, t.tm_min, t.tm_sec, zone);
        second = now;
    }
    sv_catpv(line, text);
}

/* A field the C does not make: its Perl sub's answer */
static void
append_from_perl(pTHX_ SV *line, SV *code, SV *r, SV *arg)
{
    dSP;
    int n;
    SV *got;
    ENTER;
    SAVETMPS;
    PUSHMARK(SP);
    XPUSHs(r);
    XPUSHs(arg);
    PUTBACK;
    n = call_sv(code, G_SCALAR);
    SPAGAIN;
    got = n ? POPs : &PL_sv_undef;
    if (SvOK(got)) sv_catsv(line, got);
    PUTBACK;
    FREETMPS;
    LEAVE;
}

/* One field; false when the C does not make it (its arguments, or the letter) */
static int
append_field(pTHX_ SV *line, char letter, SV *arg, HV *r, HV *env)
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
        sv_catpvs(line, "-");
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
            sv_catpvs(line, " ");
            append_clean(aTHX_ line, uri);
            sv_catpvs(line, " ");
            append_clean(aTHX_ line, protocol);
        }
        return 1;
    case 's':
        append_raw(aTHX_ line, VALUE(r, K_STATUS), "");
        return 1;
    case 'b':
        v = VALUE(r, K_BYTES);
        append_raw(aTHX_ line, v && SvTRUE(v) ? v : NULL, "-");
        return 1;
    case 'B':
        append_raw(aTHX_ line, VALUE(r, K_BYTES), "0");
        return 1;
    case 'D':
        append_raw(aTHX_ line, VALUE(r, K_MICROS), "");
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
        v = VALUE(r, K_KEEP_ALIVE);
        sv_catpv(line, v && SvTRUE(v) ? "+" : "-");
        return 1;
    }
    return 0;
}

/* A compiled format's pieces: an array perl made and nothing ties, read without av_fetch (45
 * calls a combined line); NULL for a hole */
#define PIECE(av, i) (SvRMAGICAL(av) ? av_fetch((av), (i), 0) : AvARRAY(av) + (i))

MODULE = Perennial::Log::Format    PACKAGE = Perennial::Log::Format

PROTOTYPES: DISABLE

BOOT:
{
    int k;
    for (k = 0; k < K_COUNT; k++) PERL_HASH(KEYS[k].hash, KEYS[k].name, KEYS[k].len);
}

# One line of a compiled format for the request $r, with its newline
SV *
xs_line(self, r)
    SV *self
    SV *r
  PREINIT:
    SV **pieces_sv, **env_sv;
    AV *pieces;
    HV *rh, *env = NULL;
    SSize_t i;
    SV *line;
  CODE:
    if (!SvROK(self) || SvTYPE(SvRV(self)) != SVt_PVHV) croak("line: not a compiled format");
    if (!SvROK(r) || SvTYPE(SvRV(r)) != SVt_PVHV) croak("line: the request is not a hash");
    rh        = (HV *)SvRV(r);
    pieces_sv = hv_fetchs((HV *)SvRV(self), "pieces", 0);
    if (!pieces_sv || !SvROK(*pieces_sv) || SvTYPE(SvRV(*pieces_sv)) != SVt_PVAV)
        croak("line: not a compiled format");
    pieces = (AV *)SvRV(*pieces_sv);
    env_sv = hv_fetchs(rh, "env", 0);
    if (env_sv && SvROK(*env_sv) && SvTYPE(SvRV(*env_sv)) == SVt_PVHV) env = (HV *)SvRV(*env_sv);
    line = sv_2mortal(newSVpvs(""));    /* Freed with the temporaries if a field's sub dies */
    SvGROW(line, 256);
    for (i = 0; i <= av_top_index(pieces); i++) {
        SV **piece = PIECE(pieces, i);
        AV *field;
        SV **code, **arg, **letter;
        if (!piece || !*piece) continue;
        if (!SvROK(*piece)) {
            sv_catsv(line, *piece);
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
            && append_field(aTHX_ line, SvPVX(*letter)[0], *arg, rh, env))
            continue;
        append_from_perl(aTHX_ line, *code, r, *arg);
    }
    sv_catpvs(line, "\n");
    RETVAL = SvREFCNT_inc_simple_NN(line);
  OUTPUT:
    RETVAL
