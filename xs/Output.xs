/* A resident script's print in C (issue 16): through the tied STDOUT each print cost about 11k
 * instructions of Perl (PRINT, then add), the header block's about 25k, and CGI scripts print
 * line by line. Here the common case (plain bytes, no $, or $\, no layers, no autoflush,
 * nothing of the script's child processes to read first) is added to the head, read when it is
 * whole, or appended to the body at once; everything else, and the body's going out once it
 * passes the buffer, is the Perl's, which is also the twin (pp_PRINT in
 * lib/Perennial/Executor/Output.pm); the tests run both. The same for a mod_perl handler's
 * $r->print and its usual head (module_head), and APR::Table's tied hash (tied_table), each
 * in a section of its package below. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"
#include "perliol.h"
#include "PlainHash.h"

#define BUFFER 8192
#define HEAD_LIMIT 65536

/* The keys the C reads: the output object's, the request object's (for a print, a handler
 * module's head and $r->print), a table's entries' list; each hashed once as the module loads
 * and looked up in its bucket (PlainHash.h): a lookup by name hashed the name each time, and
 * the eight lookups of a print were half its cost in C (1.4k of 2.4k instructions). */
enum {
    K_CLOSED, K_CHILDREN, K_LAYERS, K_LOCAL, K_NPH, K_HEADERS, K_REQUEST, K_BASE, K_ERROR,
    K_HEAD, K_BODY, K_STATUS, K_AUTOFLUSH, K_HEAD_SENT, K_HEAD_SET, K_MODULE, K_HANDLES,
    K_SET, K_PARSE_HEADERS, K_HEADERS_OUT, K_ERR_HEADERS_OUT, K_CONTENT_ENCODING,
    K_CONTENT_LANGUAGES, K_NO_CACHE, K_CONTENT_TYPE, K_OUT, K_LIST, K_PENDING, K_COUNT
};

#define KEY(name) {name, sizeof(name) - 1, 0}    /* Its length from the literal, its hash at load */

static struct key {
    const char *name;
    I32 len;
    U32 hash;
} keys[K_COUNT] = {
    KEY("closed"), KEY("children"), KEY("layers"), KEY("local"), KEY("nph"), KEY("headers"),
    KEY("request"), KEY("base"), KEY("error"), KEY("head"), KEY("body"), KEY("status"),
    KEY("autoflush"), KEY("head_sent"), KEY("head_set"), KEY("module"), KEY("handles"),
    KEY("set"), KEY("parse_headers"), KEY("headers_out"), KEY("err_headers_out"),
    KEY("content_encoding"), KEY("content_languages"), KEY("no_cache"), KEY("content_type"),
    KEY("out"), KEY("list"), KEY("pending"),
};

/* The value's place under a key, made when lval is set; NULL when there is none */
static SV **
fetch_key(pTHX_ HV *hv, int k, int lval)
{
    return plain_fetch(aTHX_ hv, keys[k].name, keys[k].len, keys[k].hash, lval);
}

static void
store_key(pTHX_ HV *hv, int k, SV *value)
{
    (void)hv_common_key_len(hv, keys[k].name, keys[k].len, HV_FETCH_ISSTORE | HV_FETCH_JUST_SV,
                            value, keys[k].hash);
}

#define IS_SET(self, k) true_in(aTHX_ fetch_key(aTHX_(self), (k), 0))

/* $| of the selected handle, read as its magic reads it */
static int
autoflush(pTHX)
{
    IO *io = PL_defoutgv ? GvIO(PL_defoutgv) : NULL;
    return io && (IoFLAGS(io) & IOf_FLUSH);
}

/* Whether the print's arguments are plain bytes the C can append as they are: no $, or $\,
 * no autoflush (the Perl sends at once), no objects, ties, undef or wide strings */
static int
plain_args(pTHX_ SV **args, I32 n)
{
    I32 i;
    SV *ofs = PL_ofsgv ? GvSV(PL_ofsgv) : NULL;
    if ((ofs && SvOK(ofs)) || (PL_ors_sv && SvOK(PL_ors_sv))) return 0;
    if (autoflush(aTHX)) return 0;    /* The Perl sends it now */
    for (i = 0; i < n; i++) {
        SV *sv = args[i];
        if (SvROK(sv) || SvMAGICAL(sv) || !SvOK(sv)) return 0;    /* Objects, ties, undef */
        if (SvPOK(sv) && SvUTF8(sv)) return 0;
        if (!SvPOK(sv) && !SvIOK(sv) && !SvNOK(sv)) return 0;
    }
    return 1;
}

/* Whether a request object (mod_perl's $r, a hash) attached to the output has a head of its
 * own that a printed head is read over or gives way to: one set through it and not sent yet,
 * or a handler module's. The Perl's add asks the object (head_for_output); a request that has
 * none changes nothing of a print, which is then the C's as without a request. */
static int
request_head(pTHX_ HV *self)
{
    SV **r = fetch_key(aTHX_ self, K_REQUEST, 0);
    HV *req;
    if (!r || !SvTRUE(*r)) return 0;
    if (!SvROK(*r) || SvTYPE(SvRV(*r)) != SVt_PVHV) return 1;    /* Not known: the Perl's */
    req = (HV *)SvRV(*r);
    if (IS_SET(req, K_HEAD_SENT)) return 0;
    return IS_SET(req, K_HEAD_SET) || IS_SET(req, K_MODULE);
}

/* Whether a handler module's head waits for its body to leave (the output's pending, while
 * its request object has sent no head of its own), as the Perl's add asks */
static int
head_pending(pTHX_ HV *self)
{
    SV **r;
    if (!IS_SET(self, K_PENDING)) return 0;
    r = fetch_key(aTHX_ self, K_REQUEST, 0);
    return r && SvROK(*r) && SvTYPE(SvRV(*r)) == SVt_PVHV
        && !IS_SET((HV *)SvRV(*r), K_HEAD_SENT);
}

/* Whether the output is in a state the C knows: nothing set that the Perl's add looks at
 * first (child processes, a request object's head, layers, nph, an error, a local redirect);
 * 1 before the header block is read, 2 after, 3 while a handler module's head waits (its
 * bytes are body, and the Perl's flush takes the head) */
static int
plain_state(pTHX_ HV *self)
{
    if (IS_SET(self, K_CLOSED) || IS_SET(self, K_CHILDREN) || IS_SET(self, K_LAYERS)
        || IS_SET(self, K_LOCAL) || IS_SET(self, K_NPH))
        return 0;
    if (IS_SET(self, K_HEADERS)) return 2;
    if (head_pending(aTHX_ self)) return 3;
    return request_head(aTHX_ self) || IS_SET(self, K_BASE) || IS_SET(self, K_ERROR) ? 0 : 1;
}

/* A print's arguments (plain: see plain_args) as one string, as print joins them */
static const char *
joined_args(pTHX_ SV **args, I32 n, STRLEN *len)
{
    SV *joined;
    I32 i;
    if (n == 1) return SvPV_const(args[0], *len);
    joined = sv_2mortal(newSVpvs(""));
    for (i = 0; i < n; i++) {
        STRLEN part;
        const char *a = SvPV_const(args[i], part);
        sv_catpvn(joined, a, part);
    }
    return SvPV_const(joined, *len);
}

/* The Perl twin (a print's), with the same arguments */
static SV *
perl_twin(pTHX_ const char *name, I32 ax, I32 n)
{
    dSP;
    CV *pp = get_cv(name, 0);
    I32 i, count;
    SV *ret;
    if (!pp) croak("%s is missing", name);
    ENTER;
    SAVETMPS;
    PUSHMARK(SP);
    EXTEND(SP, n);    /* May move the stack: the arguments are read from it after */
    for (i = 0; i < n; i++) PUSHs(PL_stack_base[ax + i]);
    PUTBACK;
    count = call_sv((SV *)pp, G_SCALAR);
    SPAGAIN;
    ret = newSVsv(count ? POPs : &PL_sv_undef);
    PUTBACK;
    FREETMPS;
    LEAVE;
    return sv_2mortal(ret);
}

/* A CGI header block (the part before the blank line), read as the Perl parse_cgi_headers
 * reads it, for a block of ASCII with no head set another way; anything else is the Perl's.
 * The Perl's regular expressions and splice cost about 30k instructions for a one-line head. */
static int
token_char(U8 c)
{
    return isALPHANUMERIC_A(c) || (c && strchr("!#$%&'*+.^_`|~-", c));
}

static int
word_char(U8 c)
{
    return isALPHANUMERIC_A(c) || c == '_';
}

/* One field of the block: its name and value, or false for a line that is not one */
static int
split_field(const char *line, STRLEN len, STRLEN *name_len, const char **value, STRLEN *value_len)
{
    STRLEN i = 0, end = len;
    while (i < len && token_char((U8)line[i])) i++;
    if (i == 0 || i >= len || line[i] != ':') return 0;
    *name_len = i++;
    while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
    while (end > i && (line[end - 1] == ' ' || line[end - 1] == '\t')) end--;
    *value     = line + i;
    *value_len = end - i;
    return 1;
}

/* A Status value as the Perl's /\A([2-5]\d\d)\b/ takes it: three digits from 200 to 599 (a final
 * status: a 1xx is interim), and no word character (nor a byte past ASCII, which the Perl's \b
 * reads as one) after them */
static int
status_ok(const char *v, STRLEN len)
{
    return len >= 3 && v[0] >= '2' && v[0] <= '5' && isDIGIT_A(v[1]) && isDIGIT_A(v[2])
           && !(len > 3 && (word_char((U8)v[3]) || (U8)v[3] >= 0x80));
}

/* Whether a header's value holds a line end */
static int
has_crlf(const char *v, STRLEN len)
{
    return memchr(v, '\r', len) || memchr(v, '\n', len);
}

static int
named(const char *name, STRLEN len, const char *what)
{
    STRLEN i;
    if (len != strlen(what)) return 0;
    for (i = 0; i < len; i++)
        if (toLOWER_A((U8)name[i]) != (U8)what[i]) return 0;
    return 1;
}

/* A head as read: its status, its fields, and the path of a local redirect (or NULL) */
struct head {
    SV *status;
    AV *headers;
    SV *local;
};

/* Reads a header block into *got (mortal values) and returns NULL, or returns the error */
static SV *
read_head(pTHX_ const char *head, STRLEN len, struct head *got)
{
    AV *headers = newAV(), *kept;
    const char *status = NULL, *location = NULL, *p = head, *end = head + len;
    STRLEN location_len = 0;
    SSize_t i;
    (void)sv_2mortal(newRV_noinc((SV *)headers));    /* Freed with the caller's temporaries */
    /* split /\r?\n/ leaves out the empty fields at the end */
    while (end > head && end[-1] == '\n') {
        end--;
        if (end > head && end[-1] == '\r') end--;
    }
    /* First every line must be a field, then the fields are read in order */
    while (p < end) {
        const char *nl = memchr(p, '\n', end - p), *line_end = nl ? nl : end;
        const char *value;
        STRLEN name_len, value_len, line_len;
        if (nl && line_end > p && line_end[-1] == '\r') line_end--;
        line_len = line_end - p;
        if (!split_field(p, line_len, &name_len, &value, &value_len))
            return sv_2mortal(newSVpvf("malformed header from script: '%" UTF8f "'",
                UTF8fARG(0, line_len, p)));
        av_push(headers, newSVpvn(p, name_len));
        av_push(headers, newSVpvn(value, value_len));
        p = nl ? nl + 1 : end;
    }
    kept = newAV();
    got->headers = (AV *)sv_2mortal((SV *)kept);
    for (i = 0; i + 1 <= av_top_index(headers); i += 2) {
        SV *name = AvARRAY(headers)[i], *value = AvARRAY(headers)[i + 1];
        const char *v = SvPVX(value);
        STRLEN vlen = SvCUR(value);
        if (has_crlf(v, vlen))
            return sv_2mortal(newSVpvf("header '%" SVf "' from script holds a CR or LF",
                SVfARG(name)));
        if (named(SvPVX(name), SvCUR(name), "status")) {
            if (!status_ok(v, vlen))
                return sv_2mortal(newSVpvf("bad Status header from script: '%" SVf "'",
                    SVfARG(value)));
            status = v;
            continue;
        }
        if (named(SvPVX(name), SvCUR(name), "location")) {
            location     = v;
            location_len = vlen;
        }
        av_push(kept, SvREFCNT_inc_simple_NN(name));
        av_push(kept, SvREFCNT_inc_simple_NN(value));
    }
    if (av_top_index(kept) < 0 && !status)
        return sv_2mortal(newSVpvs("empty header block from script"));
    got->status = status ? sv_2mortal(newSVpvn(status, 3))
                         : sv_2mortal(newSViv(location ? 302 : 200));
    got->local  = !status && location && location_len && location[0] == '/'
                    ? sv_2mortal(newSVpvn(location, location_len))
                    : NULL;
    return NULL;
}

/* Whether the C reads this block: bytes below 0x80 only (the Perl's \b and \w go by Unicode
 * rules past them) */
static int
ascii_only(const char *p, STRLEN len)
{
    STRLEN i;
    for (i = 0; i < len; i++)
        if ((U8)p[i] >= 0x80) return 0;
    return 1;
}

/* Where the header block ends, as the Perl's split on /\r?\n\r?\n/ finds it: the length of
 * the head before the blank line, with *rest where what follows begins; or -1 */
static SSize_t
head_end(const char *p, STRLEN len, STRLEN *rest)
{
    STRLEN i;
    for (i = 0; i < len; i++) {
        const char *nl = memchr(p + i, '\n', len - i);
        STRLEN start;
        if (!nl) return -1;
        i     = nl - p;
        start = i > 0 && p[i - 1] == '\r' ? i - 1 : i;
        if (i + 1 < len && p[i + 1] == '\n') {
            *rest = i + 2;
            return (SSize_t)start;
        }
        if (i + 2 < len && p[i + 1] == '\r' && p[i + 2] == '\n') {
            *rest = i + 3;
            return (SSize_t)start;
        }
    }
    return -1;
}

/* A print before the header block is read: added to the head, which is read once it is whole
 * (and what follows it is body, left in *body for the caller to send when past the buffer; NULL
 * while there is none to send). False, with the head as it was, where the Perl is to do it: a
 * head the C does not read (past ASCII, bad: the Perl says why) or past its limit. The Perl's
 * add cost about 25k instructions for CGI.pm's header. */
static int
print_head(pTHX_ HV *self, const char *bytes, STRLEN n, SV **body)
{
    SV **now = fetch_key(aTHX_ self, K_HEAD, 1), **to;
    STRLEN was, len, rest;
    SSize_t end;
    const char *p;
    struct head got;
    *body = NULL;
    if (!now) return 0;
    if (!SvOK(*now)) sv_setpvs(*now, "");
    if (!SvPOK(*now) || SvUTF8(*now)) return 0;
    was = SvCUR(*now);
    sv_catpvn(*now, bytes, n);
    p   = SvPV_const(*now, len);
    end = head_end(p, len, &rest);
    if (end < 0 && len <= HEAD_LIMIT) return 1;    /* Not whole yet */
    if (end < 0 || !ascii_only(p, (STRLEN)end) || read_head(aTHX_ p, (STRLEN)end, &got)
        || !(to = fetch_key(aTHX_ self, K_BODY, 1))) {
        SvCUR_set(*now, was);    /* As it was: the Perl adds these bytes and says why */
        *SvEND(*now) = '\0';
        return 0;
    }
    store_key(aTHX_ self, K_STATUS, SvREFCNT_inc_simple_NN(got.status));
    store_key(aTHX_ self, K_HEADERS, newRV_inc((SV *)got.headers));
    store_key(aTHX_ self, K_LOCAL, got.local ? SvREFCNT_inc_simple_NN(got.local) : newSV(0));
    if (SvOK(*to)) sv_catpvn(*to, p + rest, len - rest);
    else sv_setpvn(*to, p + rest, len - rest);
    sv_setpvs(*now, "");
    if (!got.local) *body = *to;    /* A local redirect's body is kept back */
    return 1;
}

/* Bytes after the header block is read: appended to the body, which is returned */
static SV *
print_body(pTHX_ HV *self, const char *bytes, STRLEN n)
{
    SV **body = fetch_key(aTHX_ self, K_BODY, 1);
    if (!body) croak("print: no body");
    if (!SvOK(*body)) sv_setpvs(*body, "");
    sv_catpvn(*body, bytes, n);
    return *body;
}


/* A plain string value without CR or LF (as a header's value must be), or NULL */
static const char *
plain_value(pTHX_ SV *sv, STRLEN *len)
{
    const char *p;
    if (SvROK(sv) || SvGMAGICAL(sv) || !SvOK(sv)) return NULL;
    p = SvPV_const(sv, *len);
    return has_crlf(p, *len) ? NULL : p;
}

/* The entries of one of the request object's tables (headers_out, err_headers_out: an APR::Table
 * is a hash tied to Perennial::ModPerl::Table::Entries, whose list holds [name, value] pairs),
 * or NULL when it is not one the C knows */
static AV *
table_list(pTHX_ SV *table)
{
    HV *hv;
    MAGIC *mg;
    SV *obj, **list;
    if (!SvROK(table) || SvTYPE(SvRV(table)) != SVt_PVHV) return NULL;
    hv = (HV *)SvRV(table);
    if (!SvRMAGICAL(hv) || !(mg = mg_find((SV *)hv, PERL_MAGIC_tied))) return NULL;
    obj = SvTIED_obj((SV *)hv, mg);
    if (!sv_isa(obj, "Perennial::ModPerl::Table::Entries") || SvTYPE(SvRV(obj)) != SVt_PVHV)
        return NULL;
    list = fetch_key(aTHX_ (HV *)SvRV(obj), K_LIST, 0);
    return list && SvROK(*list) && SvTYPE(SvRV(*list)) == SVt_PVAV ? (AV *)SvRV(*list) : NULL;
}

/* A header field's name the C takes as the Perl's head would: an RFC 9110 token, and not
 * Status (which sets the status) */
static int
plain_name(pTHX_ SV *sv)
{
    STRLEN len, i;
    const char *p;
    if (SvROK(sv) || SvGMAGICAL(sv) || !SvOK(sv)) return 0;
    p = SvPV_const(sv, len);
    if (!len || named(p, len, "status")) return 0;
    for (i = 0; i < len; i++)
        if (!token_char((U8)p[i])) return 0;
    return 1;
}

/* A table's entries copied onto the head's fields, in order: 0 when one is not plain (a name
 * that is not a token or is Status, a value with a CR or LF: the Perl's way says why) */
static int
add_entries(pTHX_ AV *headers, AV *list)
{
    SSize_t i, n = av_top_index(list);
    for (i = 0; i <= n; i++) {
        SV **entry = av_fetch(list, i, 0), **name, **value;
        STRLEN len;
        if (!entry || !SvROK(*entry) || SvTYPE(SvRV(*entry)) != SVt_PVAV) return 0;
        name  = av_fetch((AV *)SvRV(*entry), 0, 0);
        value = av_fetch((AV *)SvRV(*entry), 1, 0);
        if (!name || !value || !plain_name(aTHX_ *name) || !plain_value(aTHX_ *value, &len))
            return 0;
        av_push(headers, newSVsv(*name));
        av_push(headers, newSVsv(*value));
    }
    return 1;
}

/* A handler module's head (PerlResponseHandler without PerlOptions +ParseHeaders), set as the
 * Perl sets it as the body first leaves (the object's head_fields, read by cgi_head: five Perl
 * calls, about 12k instructions, and the tables' seven more): its status (200 unless one was
 * set), the Content-Type if one was set, then headers_out's entries and err_headers_out's, in
 * their order. Only the usual head: with content_encoding, content_languages or no_cache set
 * through the object, a status that is not three digits from 100 to 599 alone, a name that is
 * not a token or is Status, or a value with a CR or LF, the Perl sets it, or says why it
 * cannot. 1 once set, else 0 with nothing changed. */
static int
module_head(pTHX_ HV *self, SV *request)
{
    static const int others[] = {K_CONTENT_ENCODING, K_CONTENT_LANGUAGES, K_NO_CACHE};
    static const int tables[] = {K_HEADERS_OUT, K_ERR_HEADERS_OUT};
    SV **r, **set, **v, **head, *status, *type = NULL;
    HV *req;
    AV *headers, *list[2] = {NULL, NULL};
    const char *p;
    STRLEN len;
    size_t i;
    if (IS_SET(self, K_HEADERS) || IS_SET(self, K_NPH) || IS_SET(self, K_BASE)
        || IS_SET(self, K_CLOSED) || IS_SET(self, K_CHILDREN))
        return 0;
    head = fetch_key(aTHX_ self, K_HEAD, 0);
    if (head && SvOK(*head) && (!SvPOK(*head) || SvCUR(*head))) return 0;
    r = request ? &request : fetch_key(aTHX_ self, K_REQUEST, 0);
    if (!r || !SvROK(*r) || SvTYPE(SvRV(*r)) != SVt_PVHV) return 0;
    req = (HV *)SvRV(*r);
    if (!IS_SET(req, K_MODULE) || IS_SET(req, K_HEAD_SENT)) return 0;
    for (i = 0; i < sizeof others / sizeof others[0]; i++)
        if (defined_in(fetch_key(aTHX_ req, others[i], 0))) return 0;
    for (i = 0; i < 2; i++) {    /* A table that is there must be one the C knows */
        v = fetch_key(aTHX_ req, tables[i], 0);
        if (v && SvOK(*v) && !(list[i] = table_list(aTHX_ *v))) return 0;
    }
    set = fetch_key(aTHX_ req, K_SET, 0);
    if (set && SvROK(*set) && SvTYPE(SvRV(*set)) == SVt_PVHV
        && IS_SET((HV *)SvRV(*set), K_PARSE_HEADERS))
        return 0;
    v = fetch_key(aTHX_ req, K_CONTENT_TYPE, 0);
    if (v && SvOK(*v)) {
        if (!plain_value(aTHX_ *v, &len)) return 0;
        type = *v;
    }
    v = fetch_key(aTHX_ req, K_STATUS, 0);
    if (v && SvOK(*v)) {
        if (!(p = plain_value(aTHX_ *v, &len)) || !status_ok(p, len)) return 0;
        status = newSVpvn(p, 3);    /* The digits, as the Perl's match takes them */
    }
    else status = newSViv(200);
    headers = newAV();
    if (type) {
        av_push(headers, newSVpvs("Content-Type"));
        av_push(headers, newSVsv(type));    /* A copy, as the Perl's list has */
    }
    for (i = 0; i < 2; i++)
        if (list[i] && !add_entries(aTHX_ headers, list[i])) {
            SvREFCNT_dec((SV *)headers);
            SvREFCNT_dec(status);
            return 0;
        }
    store_key(aTHX_ self, K_STATUS, status);
    store_key(aTHX_ self, K_HEADERS, newRV_noinc((SV *)headers));
    store_key(aTHX_ self, K_LOCAL, newSV(0));
    return 1;
}

/* A method of the output's Perl with one argument, or none: its answer's truth */
static int
call_output(pTHX_ SV *self, const char *method, SV *arg)
{
    dSP;
    int count, ok;
    ENTER;
    SAVETMPS;
    PUSHMARK(SP);
    EXTEND(SP, 2);
    PUSHs(self);
    if (arg) PUSHs(arg);
    PUTBACK;
    count = call_method(method, G_SCALAR);
    SPAGAIN;
    ok = count && SvTRUE(TOPs);
    if (count) (void)POPs;
    PUTBACK;
    FREETMPS;
    LEAVE;
    return ok;
}

/* Bytes for the output, added as the Perl's add adds them: in C in the state the C knows
 * (plain_state's 1: the head read once whole; 2: the body, sent by the Perl's flush once past
 * the buffer), else by the Perl's add. False once the output is known to be bad. The state:
 * 0 when the head could not be read in C, with nothing taken (the Perl's add then); the body,
 * when the bytes went there. */
static int
add_in_state(pTHX_ HV *h, int state, const char *p, STRLEN len, SV **body)
{
    if (state == 1 && !print_head(aTHX_ h, p, len, body)) return 0;
    if (state == 2 || state == 3) *body = print_body(aTHX_ h, p, len);
    return state;
}

/* The same in a state the caller found already (plain_state's) */
static int
add_bytes_in(pTHX_ SV *self, HV *h, int state, const char *p, STRLEN len)
{
    SV *body = NULL;
    if (!add_in_state(aTHX_ h, state, p, len, &body))
        return call_output(aTHX_ self, "add", sv_2mortal(newSVpvn(p, len)));
    if (body && SvCUR(body) > BUFFER) (void)call_output(aTHX_ self, "flush", NULL);
    return 1;
}

static int
add_bytes(pTHX_ SV *self, HV *h, const char *p, STRLEN len)
{
    return add_bytes_in(aTHX_ self, h, plain_state(aTHX_ h), p, len);
}


#include "OutputLayer.c"    /* The layer that a script's STDOUT is */

MODULE = Perennial::Executor::Output    PACKAGE = Perennial::Executor::Output

PROTOTYPES: DISABLE

BOOT:
{
    int k;
    for (k = 0; k < K_COUNT; k++) PERL_HASH(keys[k].hash, keys[k].name, keys[k].len);
    PerlIO_define_layer(aTHX_ PERLIO_FUNCS_CAST(&PerlIO_output));
    (void)hv_stores(PL_modglobal, OUTPUT_API_KEY, newSViv(PTR2IV(&output_api)));
    wrap_op_checker(OP_SYSWRITE, ck_syswrite, &next_ck_syswrite);
}

# The output that the script's STDOUT writes to now, if it is one (for the hook that hears a
# process being made, Perennial::Executor::Children)
SV *
xs_on_stdout()
  PREINIT:
    IO *io;
    PerlIO *f;
    MAGIC *mg;
  CODE:
    io     = stdout_io(aTHX);
    f      = io ? IoOFP(io) : NULL;
    RETVAL = &PL_sv_undef;
    if (f && is_output(aTHX_ f, NULL)) {
        PerlIOOutput *l = PerlIOSelf(bottom_of(f), PerlIOOutput);
        if (l->out) RETVAL = newSVsv(l->out);
    }
    else if (io && (mg = SvTIED_mg((SV *)io, PERL_MAGIC_tiedscalar))    /* Tied to one */
             && sv_isa(SvTIED_obj((SV *)io, mg), "Perennial::Executor::Output"))
        RETVAL = newSVsv(SvTIED_obj((SV *)io, mg));
  OUTPUT:
    RETVAL

# A request object now answers for the output ($r, Perennial::ModPerl): what the script's
# STDOUT holds goes to the output, and its prints go straight there from now on
void
xs_unbuffer(self)
    SV *self
  PREINIT:
    IO *io;
    PerlIO *f;
    U32 utf8;
  CODE:
    io = stdout_io(aTHX);
    f  = io ? IoOFP(io) : NULL;
    if (f && is_output(aTHX_ f, self) && PerlIOBase(f)->tab == PERLIO_FUNCS_CAST(&PerlIO_perlio)
        && bottom_of(f) == PerlIONext(f)) {
        utf8 = PerlIOBase(f)->flags & PERLIO_F_UTF8;    /* binmode :utf8 is the top layer's */
        (void)PerlIO_flush(f);
        PerlIO_pop(aTHX_ f);
        PerlIOBase(f)->flags |= utf8;
    }

SV *
xs_PRINT(self, ...)
    SV *self
  PREINIT:
    HV *h;
    SV **flag, *body = NULL;
    const char *p = NULL;
    STRLEN len = 0;
    int state = 0;
  CODE:
    h = SvROK(self) && SvTYPE(SvRV(self)) == SVt_PVHV ? (HV *)SvRV(self) : NULL;
    if (h && plain_args(aTHX_ &ST(1), items - 1)) state = plain_state(aTHX_ h);
    if (state) {
        p     = joined_args(aTHX_ &ST(1), items - 1, &len);
        state = add_in_state(aTHX_ h, state, p, len, &body);
    }
    if (!state) {
        RETVAL = SvREFCNT_inc(perl_twin(aTHX_ "Perennial::Executor::Output::pp_PRINT", ax, items));
    }
    else {
        flag = fetch_key(aTHX_ h, K_AUTOFLUSH, 0);    /* $| is off: as the Perl notes it */
        if (flag && SvTRUE(*flag)) sv_setiv(*flag, 0);
        if (body && SvCUR(body) > BUFFER)    /* Past the buffer: the Perl's flush sends it */
            (void)call_output(aTHX_ self, "flush", NULL);
        RETVAL = &PL_sv_yes;    /* Immortal: no new value a print */
    }
  OUTPUT:
    RETVAL

# A handler module's usual head, set from its request object (the one attached to the output,
# or the one given, once detached) as its body first leaves (see module_head): 1, or 0 when
# the Perl is to set it
int
xs_module_head(self, request = NULL)
    SV *self
    SV *request
  CODE:
    RETVAL = SvROK(self) && SvTYPE(SvRV(self)) == SVt_PVHV
        && module_head(aTHX_ (HV *)SvRV(self), request);
  OUTPUT:
    RETVAL

# A printed header block: (status, \@headers, undef, local redirect) or (undef, undef, error);
# over a head set another way ($base), or past ASCII, the Perl twin's answer
void
xs_parse_cgi_headers(head, base = &PL_sv_undef)
    SV *head
    SV *base
  PREINIT:
    const char *p;
    STRLEN len;
  PPCODE:
    p = SvPV_const(head, len);
    if (SvOK(base) || SvUTF8(head) || !ascii_only(p, len)) {
        PUSHMARK(SP);
        XPUSHs(head);
        XPUSHs(base);
        PUTBACK;
        (void)call_pv("Perennial::Executor::Output::pp_parse_cgi_headers", G_LIST);
        SPAGAIN;
    }
    else {
        struct head got;
        SV *err = read_head(aTHX_ p, len, &got);
        if (err) {
            EXTEND(SP, 3);
            PUSHs(&PL_sv_undef);
            PUSHs(&PL_sv_undef);
            PUSHs(err);
        }
        else {
            EXTEND(SP, 4);
            PUSHs(got.status);
            PUSHs(sv_2mortal(newRV_inc((SV *)got.headers)));
            PUSHs(&PL_sv_undef);
            PUSHs(got.local ? got.local : &PL_sv_undef);
        }
    }

MODULE = Perennial::Executor::Output    PACKAGE = Perennial::ModPerl::RequestIO

# $r->print (a handler module's, or a script's request object's): the bytes added to the output
# in C where it is in a state the C knows, a handler module's usual head set first (see
# module_head); else the Perl twin, pp_print in lib/Perennial/ModPerl/RequestIO.pm. Through
# Perl, a handler's print was two calls and the head's five, about 20k instructions. The
# bytes' length, or "0E0" for none, as mod_perl returns.
SV *
xs_print(r, ...)
    SV *r
  PREINIT:
    SV **out = NULL;
    HV *h = NULL;
    const char *p;
    STRLEN len;
    int state = 0;
  CODE:
    if (SvROK(r) && SvTYPE(SvRV(r)) == SVt_PVHV) out = fetch_key(aTHX_ (HV *)SvRV(r), K_OUT, 0);
    if (out && SvROK(*out) && SvTYPE(SvRV(*out)) == SVt_PVHV && plain_args(aTHX_ &ST(1), items - 1)) {
        h = (HV *)SvRV(*out);
        if (!IS_SET(h, K_AUTOFLUSH)) {    /* Else the Perl's add flushes: the Perl's way */
            state = plain_state(aTHX_ h);
            if (!state && module_head(aTHX_ h, NULL)) state = plain_state(aTHX_ h);
        }
    }
    if (!state) {
        RETVAL = SvREFCNT_inc(perl_twin(aTHX_ "Perennial::ModPerl::RequestIO::pp_print", ax, items));
    }
    else {
        p = joined_args(aTHX_ &ST(1), items - 1, &len);
        (void)add_bytes_in(aTHX_ *out, h, state, p, len);    /* In the state found above */
        RETVAL = len ? newSViv((IV)len) : newSVpvs("0E0");
    }
  OUTPUT:
    RETVAL

MODULE = Perennial::Executor::Output    PACKAGE = Perennial::ModPerl::Table

# tied_table($via, $source): an APR::Table, a hash tied to a new
# Perennial::ModPerl::Table::Entries (empty, or a lazy table's source when $via is true), made
# as perl's tie makes it, without the call of TIEHASH: see pp_tied_table in
# lib/Perennial/ModPerl/Table.pm, which does the same through tie. A handler makes two or three
# tables a request.
SV *
xs_tied_table(via, source)
    SV *via
    SV *source
  PREINIT:
    HV *entries, *hash;
    SV *obj;
  CODE:
    entries = newHV();
    if (SvTRUE(via)) {
        (void)hv_stores(entries, "list", newSV(0));
        (void)hv_stores(entries, "via", newSVsv(via));
        (void)hv_stores(entries, "source", newSVsv(source));
    }
    else (void)hv_stores(entries, "list", newRV_noinc((SV *)newAV()));
    (void)hv_stores(entries, "at", newSV(0));
    obj  = sv_bless(newRV_noinc((SV *)entries),
                    gv_stashpvs("Perennial::ModPerl::Table::Entries", GV_ADD));
    hash = newHV();
    sv_magic((SV *)hash, obj, PERL_MAGIC_tied, NULL, 0);    /* Holds its own count on obj */
    SvREFCNT_dec(obj);
    RETVAL = sv_bless(newRV_noinc((SV *)hash), gv_stashpvs("APR::Table", GV_ADD));
  OUTPUT:
    RETVAL
