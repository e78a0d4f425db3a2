/* The loop in C's state, read from the connection object, and its calls of Perl: included by
 * Loop.c (see there). */

/* What the loop reads of the connection object once a call */
struct conn_loop {
    HV *self;
    SV *self_ref, *sock, *buf, *app, *stopping, *park, *log, *timeout, *spooling;
    HV *base, *peer, *response;
    AV *status_lines;    /* Perennial::HTTP::Response's, and its Server line */
    SV *server;
    SV *files;    /* The worker's Perennial::FileWatch, if it has one */
    SV *after;    /* Its check after each request (a size limit's), if it has one */
    HV *limit;    /* The size limit (Perennial::SizeLimit), when the C counts (LoopSize.c) */
    IV limit_every, limit_max, limit_min_shared, limit_max_unshared;
    char *slot;
    int fd, keep;
    int files_fd, mounts_fd;    /* Its inotify instance and its mount table, or -1 */
    int polled;                 /* The last wait for a request looked at the watch too */
    IV keep_max;
    NV keep_wait, park_wait;
    struct plain_limits plain;    /* The connection's limits as plain_head reads them */
    SV *remote_addr;              /* The peer's address, for the scoreboard */
    struct head_facts facts;      /* What plain_head saw of the request's head */
};

/* A value of the hash, or NULL when it has none or it is undefined; whether it is true */
#define DEFINED_IN(hv, key) defined_in(PLAIN_FETCH(hv, key))
#define TRUE_IN(hv, key) true_in(aTHX_ PLAIN_FETCH(hv, key))

/* The hash a reference refers to, or NULL */
static HV *
hash_of(SV *ref)
{
    return ref && SvROK(ref) && SvTYPE(SvRV(ref)) == SVt_PVHV ? (HV *)SvRV(ref) : NULL;
}

static NV
now_time(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + tv.tv_usec / 1e6;
}

/* Whether a word stands in a header's value as Perl's /\bword\b/i finds it (the value's bytes
 * as Latin-1, as perl reads them under unicode_strings) */
static int
has_word(const char *s, STRLEN len, const char *word, STRLEN wlen)
{
    STRLEN i;
    for (i = 0; i + wlen <= len; i++) {
        if (strncasecmp(s + i, word, wlen) != 0) continue;
        if (i > 0 && isWORDCHAR_L1((U8)s[i - 1])) continue;
        if (i + wlen < len && isWORDCHAR_L1((U8)s[i + wlen])) continue;
        return 1;
    }
    return 0;
}

/* Whether the call_sv or call_method just made with G_EVAL died: perl empties $@ when the call
 * returns normally, so anything there is the call's error (an object, even a false one) */
static int
died(pTHX)
{
    SV *err = ERRSV;
    return SvROK(err) || SvTRUE(err);
}

/* The error of the call that died, kept from what runs after it (a mortal copy) */
#define KEEP_ERROR() sv_mortalcopy(ERRSV)

/* A method of an object, called with the arguments given, in scalar context: its result (a
 * new reference the caller owns, or NULL when it died under G_EVAL) */
static SV *
call_on(pTHX_ SV *object, const char *method, I32 flags, int argc, SV **argv)
{
    dSP;
    int i, count;
    SV *result = NULL;
    ENTER;
    SAVETMPS;
    PUSHMARK(SP);
    EXTEND(SP, argc + 1);
    PUSHs(object);
    for (i = 0; i < argc; i++) PUSHs(argv[i]);
    PUTBACK;
    count = call_method(method, G_SCALAR | flags);
    SPAGAIN;
    if (count == 1) result = newSVsv(POPs);
    PUTBACK;

    /* Whether it died, asked before the temporaries go: a DESTROY among them may set $@ */
    if ((flags & G_EVAL) && died(aTHX)) {
        SvREFCNT_dec(result);
        result = NULL;
    }
    FREETMPS;
    LEAVE;
    return result;
}

/* An application that died, or a response that died on its way: the Perl's answer (500) */
static void
app_failed(pTHX_ struct conn_loop *l, SV *c, SV *env, SV *err)
{
    SV *argv[3];
    argv[0] = c;
    argv[1] = env;
    argv[2] = err;
    SvREFCNT_dec(call_on(aTHX_ l->self_ref, "_app_failed", 0, 3, argv));
}
