/* A resident script's print, once its header block is read, in C (issue 16): through the tied
 * STDOUT each print cost about 11k instructions of Perl (PRINT, then add), and CGI scripts
 * print line by line. Here the common case (plain bytes, no $, or $\, no layers, no autoflush,
 * nothing of the script's child processes to read first) is appended to the body at once;
 * everything else, and the body's going out once it passes the buffer, is the Perl's, which
 * is also the twin (pp_PRINT in lib/Perennial/Executor/Output.pm); the tests run both. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

#define BUFFER 8192

static int
is_set(pTHX_ HV *self, const char *key, I32 len)
{
    SV **v = hv_fetch(self, key, len, 0);
    return v && SvTRUE(*v);
}

#define IS_SET(self, key) is_set(aTHX_ self, key, sizeof(key) - 1)

/* $| of the selected handle, read as its magic reads it */
static int
autoflush(pTHX)
{
    IO *io = PL_defoutgv ? GvIO(PL_defoutgv) : NULL;
    return io && (IoFLAGS(io) & IOf_FLUSH);
}

/* Whether this print can be appended as it is */
static int
plain_print(pTHX_ HV *self, SV **args, I32 n)
{
    I32 i;
    SV *ofs = PL_ofsgv ? GvSV(PL_ofsgv) : NULL;
    if (!IS_SET(self, "headers") || IS_SET(self, "closed") || IS_SET(self, "children")
        || IS_SET(self, "layers") || IS_SET(self, "local") || IS_SET(self, "nph"))
        return 0;
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

/* The Perl's print, with the same arguments */
static SV *
perl_print(pTHX_ I32 ax, I32 n)
{
    dSP;
    CV *pp = get_cv("Perennial::Executor::Output::pp_PRINT", 0);
    I32 i, count;
    SV *ret;
    if (!pp) croak("Perennial::Executor::Output::pp_PRINT is missing");
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

MODULE = Perennial::Executor::Output    PACKAGE = Perennial::Executor::Output

PROTOTYPES: DISABLE

SV *
xs_PRINT(self, ...)
    SV *self
  PREINIT:
    HV *h;
    SV **body, **flag;
    I32 i;
  CODE:
    if (!SvROK(self) || SvTYPE(SvRV(self)) != SVt_PVHV
        || !plain_print(aTHX_ (HV *)SvRV(self), &ST(1), items - 1)) {
        RETVAL = SvREFCNT_inc(perl_print(aTHX_ ax, items));
    }
    else {
        h    = (HV *)SvRV(self);
        body = hv_fetch(h, "body", 4, 1);
        if (!body) croak("print: no body");
        if (!SvOK(*body)) sv_setpvs(*body, "");
        for (i = 1; i < items; i++) {
            STRLEN len;
            const char *p = SvPV_const(ST(i), len);
            sv_catpvn(*body, p, len);
        }
        flag = hv_fetch(h, "autoflush", 9, 0);    /* $| is off: as the Perl notes it */
        if (flag && SvTRUE(*flag)) sv_setiv(*flag, 0);
        if (SvCUR(*body) > BUFFER) {
            dSP;
            ENTER;
            PUSHMARK(SP);
            XPUSHs(self);
            PUTBACK;
            call_method("flush", G_DISCARD);
            LEAVE;
        }
        RETVAL = newSViv(1);
    }
  OUTPUT:
    RETVAL
