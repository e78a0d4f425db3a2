/* What the application left to run once its response is sent and logged (psgix.cleanup: a
 * mod_perl request's log and cleanup phases, a CGI script's reaping), run by the loop in C as
 * Perennial::Connection's _cleanups runs it; included by Loop.c (see there).
 *
 * Every request of a mod_perl handler module leaves one (its phases close after the response),
 * and the loop gave each such request to the Perl's _after_response, which did the counts, the
 * log line and the rest again in Perl: about a tenth of a handler's request. */

/* The handlers, each called with the environment; one that dies is logged by the Perl
 * (cleanup_failed), and the rest still run */
static void
run_cleanups(pTHX_ struct pending *p, int keep)
{
    struct conn_loop *l = p->l;
    HV *c = MADE(p);
    SV *list = hv_deletes(p->env, "psgix.cleanup.handlers", 0), *status;
    AV *codes;
    SSize_t i;

    /* A connection that ends with this response ends for the client first, or a response
     * framed by that end would wait for them (a CGI script's standard error, read for up to
     * Timeout) */
    if (!keep && !TRUE_IN(l->self, "parked")) shutdown(l->fd, SHUT_WR);

    /* The status sent is the request's from now on: mod_perl's $r->status in a cleanup says it */
    status = c ? DEFINED_IN(c, "status") : p->status;
    if (status && SvTRUE(status)) (void)hv_stores(p->env, "perennial.status", newSVsv(status));
    if (!list || !SvROK(list) || SvTYPE(SvRV(list)) != SVt_PVAV) return;
    codes = (AV *)SvREFCNT_inc_simple_NN(SvRV(list));
    SAVEFREESV((SV *)codes);    /* Held while the handlers run; let go with the caller's scope */
    for (i = 0; i <= av_top_index(codes); i++) {
        SV **code = av_fetch(codes, i, 0), *argv[2] = {p->env_ref, NULL};
        dSP;
        ENTER;
        SAVETMPS;
        if (code && SvROK(*code)) {    /* A code reference, or an object that is one (&{}) */
            /* On a stack of its own, as perl calls a DESTROY: a `last` in the handler finds
             * no loop of the server's below it to leave to, and dies, caught here */
            PUSHSTACKi(PERLSI_MAGIC);
            PUSHMARK(SP);
            XPUSHs(p->env_ref);
            PUTBACK;
            (void)call_sv(*code, G_DISCARD | G_EVAL | G_VOID);
            POPSTACK;
            SPAGAIN;
            if (died(aTHX)) argv[1] = KEEP_ERROR();
        }
        else argv[1] = sv_2mortal(newSVpvs("Not a CODE reference"));    /* As $code->() dies */
        if (argv[1]) SvREFCNT_dec(call_on(aTHX_ l->self_ref, "cleanup_failed", G_EVAL, 2, argv));
        FREETMPS;
        LEAVE;
    }
}
