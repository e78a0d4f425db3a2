/* Whether CGI.pm's pragma variables hold their defaults, asked in C (issue 16): PerlRun asks
 * before and after each compile, and reading the fifteen variables in Perl (a map over their
 * references, or setting them one by one) cost 25k to 30k instructions each time. The Perl
 * twin is pp_same_values in lib/Perennial/Executor/CGIPragmas.pm; the tests run both. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

static AV *
array_of(pTHX_ SV *ref)
{
    if (!SvROK(ref) || SvTYPE(SvRV(ref)) != SVt_PVAV) croak("same_values: not an array reference");
    return (AV *)SvRV(ref);
}

/* Both undefined, or the same string. Two integers that are only integers are compared as
 * such: CGI.pm's reset sets its numbers anew each request, and sv_eq would write each out as
 * a string again (4k instructions a request for the fifteen). */
static int
same(pTHX_ SV *a, SV *b)
{
    if (!SvOK(a) || !SvOK(b)) return !SvOK(a) && !SvOK(b);
    if ((SvFLAGS(a) & (SVf_IOK | SVf_NOK | SVf_POK | SVf_ROK)) == SVf_IOK
        && (SvFLAGS(b) & (SVf_IOK | SVf_NOK | SVf_POK | SVf_ROK)) == SVf_IOK)
        return SvIsUV(a) == SvIsUV(b) ? SvIVX(a) == SvIVX(b)
               : SvIsUV(a)             ? SvIVX(b) >= 0 && SvUVX(a) == (UV)SvIVX(b)
                                       : SvIVX(a) >= 0 && SvUVX(b) == (UV)SvIVX(a);
    return sv_eq(a, b);
}

MODULE = Perennial::Executor::CGIPragmas    PACKAGE = Perennial::Executor::CGIPragmas

PROTOTYPES: DISABLE

# same_values(\@references, \@values): whether each scalar referred to holds the value at its
# place
int
xs_same_values(refs_ref, values_ref)
    SV *refs_ref
    SV *values_ref
  PREINIT:
    AV *refs, *values;
    SSize_t i, top;
  CODE:
    refs   = array_of(aTHX_ refs_ref);
    values = array_of(aTHX_ values_ref);
    top    = av_top_index(refs);
    RETVAL = top == av_top_index(values);
    for (i = 0; RETVAL && i <= top; i++) {
        SV **r = av_fetch(refs, i, 0), **v = av_fetch(values, i, 0);
        if (!r || !SvROK(*r)) croak("same_values: not a reference at %ld", (long)i);
        SvGETMAGIC(SvRV(*r));
        RETVAL = same(aTHX_ SvRV(*r), v ? *v : &PL_sv_undef);
    }
  OUTPUT:
    RETVAL
