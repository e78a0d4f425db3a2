/* The signal handlers a script request may change, seen in C (issue 16): reading %SIG from Perl
 * goes through its magic for each signal, about 27k instructions a request for the usual nine
 * before and after; perl keeps each handler in PL_psig_ptr, by signal number, and the __DIE__
 * hook in PL_diehook, where C reads every one of them for less. The Perl twin is in
 * lib/Perennial/Executor/Signals.pm; the tests run both. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

/* Whether two handlers are the same: the same code (or glob), or the same name ('IGNORE',
 * 'DEFAULT', a sub's), or both unset */
static int
same_handler(pTHX_ SV *a, SV *b)
{
    if (!a || !SvOK(a)) return !b || !SvOK(b);
    if (!b || !SvOK(b)) return 0;
    if (SvROK(a) || SvROK(b)) return SvROK(a) && SvROK(b) && SvRV(a) == SvRV(b);
    if (isGV_with_GP(a) || isGV_with_GP(b)) return a == b;
    return sv_eq(a, b);
}

/* The slot of a signal number, or the __DIE__ hook (number SIG_SIZE) */
static SV *
handler_of(pTHX_ int i)
{
    return i == SIG_SIZE ? PL_diehook : PL_psig_ptr[i];
}

static const char *
name_of(int i)
{
    return i == SIG_SIZE ? "__DIE__" : PL_sig_name[i];
}

/* Signal numbers with a name of their own (the aliases at the end of the list are skipped) */
static int
is_signal(int i)
{
    return i == SIG_SIZE || (i > 0 && i < SIG_SIZE && PL_sig_num[i] == i);
}

MODULE = Perennial::Executor::Signals    PACKAGE = Perennial::Executor::Signals

PROTOTYPES: DISABLE

# A copy of every handler that is set, indexed by signal number, the __DIE__ hook last
SV *
xs_snapshot(...)
  PREINIT:
    AV *saved;
    int i;
  CODE:
    saved = newAV();
    av_extend(saved, SIG_SIZE);
    for (i = 1; i <= SIG_SIZE; i++) {
        SV *h;
        if (!is_signal(i)) continue;
        h = handler_of(aTHX_ i);
        if (h && SvOK(h)) av_store(saved, i, newSVsv(h));    /* Unset is the default */
    }
    RETVAL = newRV_noinc((SV *)saved);
  OUTPUT:
    RETVAL

# The handlers that differ from the snapshot: (name, handler then, ...)
void
xs_changed(saved_ref)
    SV *saved_ref
  PREINIT:
    AV *saved;
    int i;
  PPCODE:
    if (!SvROK(saved_ref) || SvTYPE(SvRV(saved_ref)) != SVt_PVAV)
        croak("changed: not a snapshot");
    saved = (AV *)SvRV(saved_ref);
    for (i = 1; i <= SIG_SIZE; i++) {
        SV **was;
        if (!is_signal(i)) continue;
        was = av_fetch(saved, i, 0);
        if (same_handler(aTHX_ handler_of(aTHX_ i), was ? *was : NULL)) continue;
        XPUSHs(sv_2mortal(newSVpv(name_of(i), 0)));
        XPUSHs(was ? *was : &PL_sv_undef);
    }
