/* Putting text onto an access log's line, included by Format.xs (see there): bytes, a value
 * as it is, and a value escaped as Apache's ap_escape_logitem escapes it. The line is a string
 * that the caller made, without a character flag or with one; its end is written by the caller
 * once the line is whole. */

/* Bytes onto the line (ASCII is the same in a line of either kind) */
static void
put(pTHX_ SV *line, const char *s, STRLEN n)
{
    STRLEN cur = SvCUR(line);
    if (SvLEN(line) <= cur + n + 1) SvGROW(line, 2 * (cur + n) + 2);
    Copy(s, SvPVX(line) + cur, n, char);
    SvCUR_set(line, cur + n);
}

#define PUTS(line, s) put(aTHX_ (line), ("" s ""), sizeof(s) - 1)

/* A value as it is: its bytes, or as sv_catsv joins them when the line and the value differ in
 * being characters (sv_catsv cost about 160 instructions a value, most of a line's) */
static void
put_sv(pTHX_ SV *line, SV *value)
{
    STRLEN len;
    const char *p;
    if (SvIOK(value) && !SvPOK(value) && !SvIsUV(value) && SvIVX(value) >= 0) {
        /* A count or a status the C made: its digits, without the string perl would cache */
        char digits[24], *d = digits + sizeof digits;
        IV n = SvIVX(value);
        do *--d = (char)('0' + n % 10);
        while (n /= 10);
        put(aTHX_ line, d, (STRLEN)(digits + sizeof digits - d));
        return;
    }
    p = SvPV_nomg_const(value, len);    /* Any get magic: called by value_of */
    if (!SvUTF8(value) == !SvUTF8(line)) put(aTHX_ line, p, len);
    else sv_catpvn_flags(line, p, len, SvUTF8(value) ? SV_CATUTF8 : SV_CATBYTES);
}

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
    static const char hex[] = "0123456789abcdef";
    STRLEN len, i;
    const char *p;
    int plain = 1;
    if (!value) {
        PUTS(line, "-");
        return;
    }
    p = SvPV_nomg_const(value, len);
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
            if (SvOK(clean)) put_sv(aTHX_ line, clean);
            PUTBACK;
            FREETMPS;
            LEAVE;
            return;
        }
    }
    if (plain) {
        put(aTHX_ line, p, len);    /* Printable ASCII: the same bytes in a line of either kind */
        return;
    }
    for (i = 0; i < len; i++) {
        U8 c = (U8)p[i];
        const char *named;
        if (printable(c)) put(aTHX_ line, p + i, 1);
        else if ((named = escape_name(c))) put(aTHX_ line, named, 2);
        else {
            char x[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            put(aTHX_ line, x, 4);
        }
    }
}

static void
append_raw(pTHX_ SV *line, SV *value, const char *otherwise)
{
    if (value) put_sv(aTHX_ line, value);
    else put(aTHX_ line, otherwise, strlen(otherwise));
}

