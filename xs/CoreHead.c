/* A plain request head read in C: included by Core.xs (the Perl judge,
 * lib/Perennial/HTTP/Request.pm, reads every other head, and all of them in Perl). */

/* RFC 9110's tchar */
static int
is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return 1;
    return c && strchr("!#$%&'*+-.^`|~", c) != NULL;    /* '_' aside: see parse_plain */
}

static int
hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* A limit from the limits hash, or a default */
static IV
limit_of(pTHX_ HV *limits, const char *key, I32 klen, IV otherwise)
{
    SV **v = hv_fetch(limits, key, klen, 0);
    return v && SvOK(*v) ? SvIV(*v) : otherwise;
}

/* What plain_head reads of a listener's limits hash: read once a connection by the loop in C
 * (six lookups a request, 1.3k instructions), once a call by xs_parse_plain */
struct plain_limits {
    int perl_only;    /* HttpProtocolOptions Unsafe, or RegisteredMethods: the judge reads all */
    IV line, field_size, fields;
    HV *hosts;        /* The Host values the judge found good on these limits */
    int merge;        /* MergeSlashes: a path with a run of slashes is the judge's to merge */
};

static void
plain_limits_of(pTHX_ HV *limits, struct plain_limits *lim)
{
    SV **flag, **hosts;
    flag = hv_fetchs(limits, "unsafe", 0);
    lim->perl_only = flag && SvTRUE(*flag);
    flag = hv_fetchs(limits, "registered", 0);
    lim->perl_only = lim->perl_only || (flag && SvTRUE(*flag));
    lim->line = limit_of(aTHX_ limits, "line", 4, 8190);
    lim->field_size = limit_of(aTHX_ limits, "field_size", 10, 8190);
    lim->fields = limit_of(aTHX_ limits, "fields", 6, 100);
    flag = hv_fetchs(limits, "merge_slashes", 0);
    lim->merge = flag && SvTRUE(*flag);
    hosts = hv_fetchs(limits, "hosts", 0);
    lim->hosts = hosts && SvROK(*hosts) && SvTYPE(SvRV(*hosts)) == SVt_PVHV ? (HV *)SvRV(*hosts)
                                                                            : NULL;
}

/* What plain_head saw of a head, for the loop in C to ask without looking in the environment
 * it made (the values are that environment's, as made) */
struct head_facts {
    SV *method, *uri, *protocol;
    SV *connection;                   /* The Connection field's value, or NULL */
    int http11, head_only;            /* head_only: a HEAD, whose response has no body */
    int has_body;                     /* A Content-Length or Transfer-Encoding */
};

/* A copy of the listener's and the connection's keys, in a hash sized for the request's keys
 * besides ($more: its fields, its line's and those the Perl adds), so that it never grows: a
 * hash bigger than it needs costs as much as one that grows, in the making and the freeing.
 * The listener's hash is copied whole by newHVhv, bucket by bucket, which costs less than a
 * store of each key (2.6k instructions of a kept-alive PSGI request); the copy has the size of
 * the listener's hash, so that hash is given the size the copy needs, once (its keys and
 * values do not change). */
static HV *
env_from(pTHX_ HV *base, HV *peer, IV more)
{
    HV *env;
    HE *he;
    IV want = HvUSEDKEYS(base) + HvUSEDKEYS(peer) + more;
    if ((IV)HvMAX(base) + 1 < want) hv_ksplit(base, want);
    env = newHVhv(base);
    hv_iterinit(peer);
    while ((he = hv_iternext(peer))) {
        I32 klen = HeKLEN(he);
        if (klen == HEf_SVKEY) {
            (void)hv_store_ent(env, HeSVKEY(he), newSVsv(HeVAL(he)), 0);
            continue;
        }
        (void)hv_common_key_len(env, HeKEY(he), HeKUTF8(he) ? -klen : klen,
                                HV_FETCH_ISSTORE, newSVsv(HeVAL(he)), HeHASH(he));
    }
    return env;
}

/* Methods a plain request has; any other goes the whole way through the Perl judge */
static int
plain_method(const char *m, STRLEN len)
{
    switch (len) {
    case 3: return memEQ(m, "GET", 3) || memEQ(m, "PUT", 3);
    case 4: return memEQ(m, "HEAD", 4) || memEQ(m, "POST", 4);
    case 5: return memEQ(m, "PATCH", 5);
    case 6: return memEQ(m, "DELETE", 6);
    case 7: return memEQ(m, "OPTIONS", 7);
    }
    return 0;
}

#define MAX_PLAIN_FIELDS 100

/* A plain request: what HttpProtocolOptions Strict serves as it is, and that C can read as
 * Perennial::HTTP::Request reads it. Its environment (a new hash) and the head's length in
 * *head_len; anything else returns NULL, and the Perl judge reads it from the start: this
 * function refuses nothing. */
static HV *
plain_head(pTHX_ SV *buf, HV *base, HV *peer, const struct plain_limits *lim, STRLEN *head_len,
           struct head_facts *facts)
{
    STRLEN size, mlen, i, path_end, tlen;
    const char *b, *end, *p, *target;
    const char *names[MAX_PLAIN_FIELDS], *values[MAX_PLAIN_FIELDS];
    STRLEN nlens[MAX_PLAIN_FIELDS], vlens[MAX_PLAIN_FIELDS];
    int fields = 0, http11, f, has_host = -1, has_body = 0, connection = -1;
    IV line_limit = lim->line, field_limit = lim->field_size, field_count = lim->fields;
    SV *path, *method, *uri, *protocol, *connection_sv = NULL;
    HV *env, *hosts = lim->hosts;
    char key[MAX_PLAIN_NAME + 6];

    if (lim->perl_only) return NULL;
    b = SvPV_const(buf, size);
    end = b + size;

    /* The request line: METHOD SP /target SP HTTP/1.x CRLF */
    for (p = b; p < end && *p >= 'A' && *p <= 'Z'; p++) ;
    mlen = p - b;
    if (p >= end || *p != ' ' || !plain_method(b, mlen)) return NULL;
    target = ++p;
    if (p >= end || *p != '/') return NULL;
    path_end = 0;
    for (; p < end && *p != ' '; p++) {
        unsigned char c = *p;
        if (c <= 0x20 || c >= 0x7f || c == '#') return NULL;
        if (c == '?' && !path_end) path_end = p - target;
    }
    tlen = p - target;
    if (!path_end) path_end = tlen;
    if (end - p < 11 || memNE(p, " HTTP/1.", 8) || (p[8] != '0' && p[8] != '1')
        || p[9] != '\r' || p[10] != '\n')
        return NULL;
    http11 = p[8] == '1';
    p += 11;
    if ((IV)(p - b - 1) > line_limit) return NULL;

    /* Header lines: token ":" OWS value CRLF, within the limits, each name once, no Expect */
    while (1) {
        const char *name = p, *value;
        if (end - p >= 2 && p[0] == '\r' && p[1] == '\n') { p += 2; break; }
        while (p < end && is_tchar(*p)) p++;
        if (p >= end || *p != ':' || p == name || p - name > MAX_PLAIN_NAME) return NULL;
        if (fields >= MAX_PLAIN_FIELDS || fields >= field_count) return NULL;
        nlens[fields] = p - name;
        names[fields] = name;
        for (p++; p < end && (*p == ' ' || *p == '\t'); p++) ;
        value = p;
        for (; p < end; p++) {
            unsigned char c = *p;
            if (c == '\r' || (c < 0x20 && c != '\t') || c == 0x7f) break;
        }
        if (end - p < 2 || p[0] != '\r' || p[1] != '\n') return NULL;
        if ((IV)(p - name) > field_limit) return NULL;
        values[fields] = value;
        vlens[fields] = p - value;
        while (vlens[fields] && (value[vlens[fields] - 1] == ' ' || value[vlens[fields] - 1] == '\t'))
            vlens[fields]--; /* The white space after a value is not the value's (RFC 9110 5.5) */
        for (f = 0; f < fields; f++)
            if (nlens[f] == nlens[fields] && strncasecmp(names[f], name, nlens[f]) == 0)
                return NULL;
        if (nlens[fields] == 6 && strncasecmp(name, "expect", 6) == 0) return NULL;
        if (nlens[fields] == 4 && strncasecmp(name, "host", 4) == 0) has_host = fields;
        if (nlens[fields] == 10 && strncasecmp(name, "connection", 10) == 0) connection = fields;
        if ((nlens[fields] == 14 && strncasecmp(name, "content-length", 14) == 0)
            || (nlens[fields] == 17 && strncasecmp(name, "transfer-encoding", 17) == 0))
            has_body = 1;
        fields++;
        p += 2;
    }

    /* The Host: one the Perl judge has found good on these limits (it keeps its judgements) */
    if (has_host < 0 ? http11 : !hosts) return NULL;
    if (has_host >= 0) {
        SV **known = hv_fetch(hosts, values[has_host], vlens[has_host], 0);
        if (!known || !SvTRUE(*known)) return NULL;
    }

    /* The path, its %XX decoded: no NUL, no dot segment, no run of slashes to merge (MergeSlashes),
     * nothing the judge would change */
    path = sv_2mortal(newSV(path_end + 1));
    SvPOK_on(path);
    {
        char *d = SvPVX(path);
        for (i = 0; i < path_end; i++) {
            char c = target[i];
            if (c == '%') {
                int hi, lo;
                if (i + 2 >= path_end) return NULL;
                hi = hex_value(target[i + 1]);
                lo = hex_value(target[i + 2]);
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return NULL;
                c = (char)(hi * 16 + lo);
                i += 2;
            }
            *d++ = c;
        }
        *d = '\0';
        SvCUR_set(path, d - SvPVX(path));
    }
    if (strstr(SvPVX(path), "/.") || (lim->merge && strstr(SvPVX(path), "//"))
        || memmem(target, tlen, "%00", 3))
        return NULL;

    env = env_from(aTHX_ base, peer, fields + 6 + 4);    /* The line's 6, then Perl's */
    method = newSVpvn(b, mlen);
    uri = newSVpvn(target, tlen);
    (void)hv_stores(env, "REQUEST_METHOD", method);
    (void)hv_stores(env, "REQUEST_URI", uri);
    (void)hv_stores(env, "SCRIPT_NAME", newSVpvs(""));
    (void)hv_stores(env, "PATH_INFO", SvREFCNT_inc_simple_NN(path));
    (void)hv_stores(env, "QUERY_STRING",
                    path_end < tlen ? newSVpvn(target + path_end + 1, tlen - path_end - 1)
                                    : newSVpvs(""));
    protocol = newSVpvn(http11 ? "HTTP/1.1" : "HTTP/1.0", 8);
    (void)hv_stores(env, "SERVER_PROTOCOL", protocol);
    for (f = 0; f < fields; f++) {
        STRLEN k = 0, n = nlens[f];
        const char *name = names[f];
        SV *value;
        if (!((n == 14 && strncasecmp(name, "content-length", 14) == 0)
              || (n == 12 && strncasecmp(name, "content-type", 12) == 0))) {
            memcpy(key, "HTTP_", 5);
            k = 5;
        }
        for (i = 0; i < n; i++) key[k++] = name[i] == '-' ? '_' : toUPPER(name[i]);
        value = newSVpvn(values[f], vlens[f]);
        (void)hv_store(env, key, k, value, 0);
        if (f == connection) connection_sv = value;
    }
    *head_len = p - b;
    if (facts) {
        facts->method = method;
        facts->uri = uri;
        facts->protocol = protocol;
        facts->connection = connection_sv;
        facts->http11 = http11;
        facts->head_only = mlen == 4 && memEQ(b, "HEAD", 4);
        facts->has_body = has_body;
    }
    return env;
}
