/* The worker's size limit after each request (Apache2::SizeLimit's, when MaxProcessSize,
 * MinSharedSize or MaxUnsharedSize is set), included by Loop.c (see there).
 *
 * The Perl's check (the worker's closure, Perennial::SizeLimit's exceeded and its read of
 * /proc/self/statm) cost a kept-alive PSGI hello 12.6k instructions a request with
 * SizeCheckInterval 1, the default (as Apache2::SizeLimit's): a third of the request. Here the
 * C counts the requests in the SizeLimit object's own count (the Perl loop's, the same key) and
 * reads the resident size, statm's second field, with one pread of a descriptor it keeps; the
 * Perl is called, with the size, only when the size passes a limit or shared memory is to be
 * looked at (MinSharedSize, or MaxUnsharedSize once the size passes it, as exceeded does): it
 * judges, and logs why the worker retires. */

/* /proc/self/statm, kept open; a child closes its parent's (a process's own /proc/self is
 * the process that opened it) */
static int STATM_FD = -1;

static void
forget_statm(void)
{
    if (STATM_FD >= 0) close(STATM_FD);
    STATM_FD = -1;
}

/* This process's resident size in KB, or -1 when it cannot be read (as _size's undef) */
static IV
resident_kb(void)
{
    static long page_kb = 0;
    char text[160], *end;
    const char *p;
    unsigned long pages;
    ssize_t n;
    if (!page_kb) page_kb = sysconf(_SC_PAGESIZE) / 1024;
    if (STATM_FD < 0) STATM_FD = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (STATM_FD < 0 || page_kb <= 0) return -1;
    do n = pread(STATM_FD, text, sizeof text - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return -1;
    text[n] = '\0';
    (void)strtoul(text, &end, 10);    /* The whole size, then the resident one */
    if (end == text) return -1;
    p = end;
    pages = strtoul(p, &end, 10);
    if (end == p || !pages) return -1;
    return (IV)(pages * (unsigned long)page_kb);
}

/* The SizeLimit object's counts and limits, when the connection has one (size_limit); else the
 * Perl's check counts for itself */
static void
size_limit_state(pTHX_ struct conn_loop *l)
{
    HV *limit = hash_of(DEFINED_IN(l->self, "size_limit"));
    SV *v;
    l->limit = NULL;
    if (!l->after || !limit) return;
    l->limit = limit;
    v = DEFINED_IN(limit, "interval");
    l->limit_every = v ? SvIV(v) : 1;
    v = DEFINED_IN(limit, "max_size");
    l->limit_max = v ? SvIV(v) : 0;
    v = DEFINED_IN(limit, "min_shared");
    l->limit_min_shared = v ? SvIV(v) : 0;
    v = DEFINED_IN(limit, "max_unshared");
    l->limit_max_unshared = v ? SvIV(v) : 0;
}

/* The resident size to give the Perl's check, or -1 when it need not be asked: exceeded's
 * count, its read and its first look */
static IV
size_to_judge(pTHX_ struct conn_loop *l)
{
    SV **count = hv_fetchs(l->limit, "count", 1);    /* Asked each time: the Perl may replace it */
    IV n, size;
    if (!count) return -1;
    n = SvIV(*count) + 1;
    if (n < l->limit_every) {
        sv_setiv_mg(*count, n);
        return -1;
    }
    sv_setiv_mg(*count, 0);
    size = resident_kb();
    if (size < 0) return -1;
    if ((l->limit_max && size > l->limit_max) || l->limit_min_shared
        || (l->limit_max_unshared && size > l->limit_max_unshared))
        return size;
    return -1;
}

/* The worker ends after this connection (an exit asked for, or its size): as the Perl's
 * _after_response has it, closed lingering if it was to stay open (a request may already be on
 * its way); the connection does not stay open */
static int
retire(pTHX_ struct conn_loop *l, int keep)
{
    (void)hv_stores(l->self, "harakiri", newSViv(1));
    if (keep) (void)hv_stores(l->self, "linger", newSViv(1));
    return 0;
}

/* The worker's own check after each request: when it says to retire, the worker ends after
 * this connection, which closes lingering (a request may already be on its way), as
 * _after_response has it; whether the connection stays open */
static int
retire_check(pTHX_ struct conn_loop *l, int keep)
{
    SV *answer = NULL;
    IV size = -1;
    int n;
    dSP;
    if (!l->after) return keep;
    if (l->limit && (size = size_to_judge(aTHX_ l)) < 0) return keep;
    ENTER;
    SAVETMPS;
    PUSHMARK(SP);
    if (size >= 0) XPUSHs(sv_2mortal(newSViv(size)));
    PUTBACK;
    n = call_sv(l->after, G_SCALAR);    /* (G_NOARGS would lend it the caller's @_) */
    SPAGAIN;
    if (n == 1) answer = POPs;
    n = answer && SvTRUE(answer);
    PUTBACK;
    FREETMPS;
    LEAVE;
    return n ? retire(aTHX_ l, keep) : keep;
}
