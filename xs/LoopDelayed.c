/* A delayed response (PSGI's `sub ($respond) {...}`) in the loop in C, included by Loop.c (see
 * there). The Perl's _respond calls the application's callback with a Perl closure as its
 * responder, and the closure has the response object write what it is given: for a Registry
 * script, whose output arrives whole once it has run, that was 20k instructions a request
 * (bench/instructions.pl, a script of one print) for three Perl calls and the Perl write.
 *
 * Here the responder is a sub in C, kept for the next request when nothing holds it (see
 * take_responder). A whole response of plain values
 * (what write_usual writes) goes out as the application gives it, written by the C as a
 * returned array is; anything else is the response object's, as the closure does it: respond
 * for a whole response, start for a streaming one, the object then being its own writer,
 * closed when the callback returns. A responder called after its request ended refuses. */

/* What the responder of a request knows, while the application's callback runs */
struct delayed {
    struct pending *p;
    SV *writer;
};

/* Whether the Perl's response object has begun a response (its status), or (with broken)
 * given up on one */
static int
began(pTHX_ struct pending *p, int broken)
{
    HV *c = MADE(p);
    return c && (DEFINED_IN(c, "status") || (broken && TRUE_IN(c, "broken")));
}

/* The responder: $respond->([status, headers, body]) or, to stream, ->([status, headers]),
 * which returns the writer */
static XSPROTO(delayed_responder)
{
    dXSARGS;
    struct delayed *d = (struct delayed *)CvXSUBANY(cv).any_ptr;
    SV *res, **part;
    AV *r;
    if (!d) croak("the application responded after its request had ended\n");
    if (items != 1) croak("the responder takes one response, an array, not %d values\n", (int)items);
    res = ST(0);
    if (!SvROK(res) || SvTYPE(SvRV(res)) != SVt_PVAV) croak("Not an ARRAY reference\n");
    if (!d->p->written && !d->writer && !began(aTHX_ d->p, 1) && write_usual(aTHX_ d->p, res))
        XSRETURN_EMPTY;
    r = (AV *)SvRV(res);
    part = av_fetch(r, 2, 0);
    if (part && SvOK(*part)) {
        SvREFCNT_dec(call_on(aTHX_ response_object(aTHX_ d->p), "respond", 0, 1, &res));
        XSRETURN_EMPTY;
    }
    {
        SV *argv[2], **status = av_fetch(r, 0, 0), **headers = av_fetch(r, 1, 0);
        argv[0] = status ? *status : &PL_sv_undef;
        argv[1] = headers ? *headers : &PL_sv_undef;
        SvREFCNT_dec(call_on(aTHX_ response_object(aTHX_ d->p), "start", 0, 2, argv));
    }
    if (!d->writer) d->writer = SvREFCNT_inc_simple_NN(response_object(aTHX_ d->p));
    ST(0) = sv_mortalcopy(d->writer);    /* Its own writer; a copy, as the Perl returns one */
    XSRETURN(1);
}

/* The responder refuses from now: its request has ended, or is being unwound (an exit from
 * the callback leaves this C frame, and its state with it, before the END blocks run) */
static void
responder_ended(pTHX_ void *responder)
{
    CvXSUBANY((CV *)responder).any_ptr = NULL;
}

/* A responder that nothing held after its request, kept for the next: making one (an anonymous
 * sub in C, with a copy of its file's name) and freeing it after cost a delayed response about
 * 6k instructions, a fifth of what a delayed response costs beyond a returned array. One at a
 * time, as the process serves one request at a time. */
static CV *SPARE_RESPONDER = NULL;

static CV *
take_responder(pTHX)
{
    CV *responder = SPARE_RESPONDER;
    SPARE_RESPONDER = NULL;
    return responder ? responder : newXS_flags(NULL, delayed_responder, __FILE__, NULL, 0);
}

/* The responder after its request: kept when the application left no hold on it (no reference,
 * strong or weak, and not blessed), so that none it kept can answer for a later request, and
 * changed nothing of it (`undef &$respond` empties the sub, a prototype can be set on it); else
 * let go (it refuses from now) */
static void
give_back_responder(pTHX_ CV *responder)
{
    if (!SPARE_RESPONDER && SvREFCNT(responder) == 1 && !SvMAGICAL(responder)
        && !SvOBJECT(responder) && CvISXSUB(responder) && CvXSUB(responder) == delayed_responder
        && !SvPOK(responder))
        SPARE_RESPONDER = responder;
    else SvREFCNT_dec(responder);
}

/* The application's callback, called with a responder of this request's; what it streamed is
 * closed after it. An error (the callback's, the writer's, or a callback that never responded)
 * goes to the Perl's _app_failed, as one from _respond does. */
static void
call_delayed(pTHX_ struct pending *p, SV *callback)
{
    struct delayed d;
    CV *responder = take_responder(aTHX);
    SV *error = NULL;
    dSP;
    d.p = p;
    d.writer = NULL;
    CvXSUBANY(responder).any_ptr = &d;
    ENTER;
    SAVEDESTRUCTOR_X(responder_ended, responder);
    SAVETMPS;
    PUSHMARK(SP);
    XPUSHs(sv_2mortal(newRV_inc((SV *)responder)));
    PUTBACK;
    (void)call_sv(callback, G_VOID | G_DISCARD | G_EVAL);
    CvXSUBANY(responder).any_ptr = NULL;    /* Kept by the application: it refuses from now */
    if (died(aTHX)) error = newSVsv(ERRSV);
    FREETMPS;
    LEAVE;
    give_back_responder(aTHX_ responder);
    if (!error && d.writer) {
        SV *done = call_on(aTHX_ d.writer, "close", G_EVAL, 0, NULL);
        if (done) SvREFCNT_dec(done);
        else error = newSVsv(ERRSV);
    }
    SvREFCNT_dec(d.writer);
    if (!error && !p->written && !began(aTHX_ p, 0))
        error = newSVpvs("the application's streaming callback returned without responding\n");
    if (error) app_failed(aTHX_ p->l, response_object(aTHX_ p), p->env_ref, sv_2mortal(error));
}
