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
 * 'DEFAULT', a sub's), or both unset. A handler set is %SIG's element itself, whose get magic
 * copies it onto itself: its value is read as it lies (sv_eq's magic was 350 instructions a
 * compare, 3.5k a request). */
static int
same_handler(pTHX_ SV *a, SV *b)
{
    if (!a || !SvOK(a)) return !b || !SvOK(b);
    if (!b || !SvOK(b)) return 0;
    if (SvROK(a) || SvROK(b)) return SvROK(a) && SvROK(b) && SvRV(a) == SvRV(b);
    if (isGV_with_GP(a) || isGV_with_GP(b)) return a == b;
    if (SvPOK(a) && SvPOK(b) && !SvUTF8(a) && !SvUTF8(b))    /* 'IGNORE', a sub's name */
        return SvCUR(a) == SvCUR(b) && memEQ(SvPVX_const(a), SvPVX_const(b), SvCUR(a));
    return sv_eq_flags(a, b, 0);
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

/* Signal numbers with a name of their own (the aliases at the end of the list are skipped),
 * then SIG_SIZE for the __DIE__ hook: listed once, so that a walk looks at those alone */
static int signals[SIG_SIZE + 1];
static int n_signals = 0;

static void
list_signals(void)
{
    int i;
    if (n_signals) return;
    for (i = 1; i < SIG_SIZE; i++)
        if (PL_sig_num[i] == i) signals[n_signals++] = i;
    signals[n_signals++] = SIG_SIZE;
}

/* The slot of a snapshot for a signal number, or NULL */
static SV *
saved_at(AV *saved, int i)
{
    return i <= AvFILLp(saved) ? AvARRAY(saved)[i] : NULL;
}

/* The first signal number from `from` on whose handler is not as the snapshot has it, or 0:
 * what snapshot, changed and restore each walk. Most signals have no handler, then or now:
 * those are passed over first (two walks a request, 4.9k instructions when each number was
 * asked whether it is an alias and compared in full, about 1.5k now). */
static int
next_changed(pTHX_ AV *saved, int from)
{
    int k;
    list_signals();
    for (k = 0; k < n_signals; k++) {
        int i = signals[k];
        SV *now, *was;
        if (i < from) continue;
        now = handler_of(aTHX_ i);
        was = saved_at(saved, i);
        if (!now && !was) continue;
        if (!same_handler(aTHX_ now, was)) return i;
    }
    return 0;
}

/* The snapshot a reference points to, for the function named */
static AV *
snapshot_of(pTHX_ SV *ref, const char *what)
{
    if (!SvROK(ref) || SvTYPE(SvRV(ref)) != SVt_PVAV) croak("%s: not a snapshot", what);
    return (AV *)SvRV(ref);
}

/* The last snapshot made: while the handlers stay as it has them (a worker's, request after
 * request), each request's snapshot is it again, and nothing is copied */
static AV *latest = NULL;

static AV *
copy_handlers(pTHX)
{
    AV *saved = newAV();
    int k;
    list_signals();
    av_extend(saved, SIG_SIZE);
    for (k = 0; k < n_signals; k++) {
        SV *h = handler_of(aTHX_ signals[k]);
        if (h && SvOK(h)) av_store(saved, signals[k], newSVsv(h));    /* Unset is the default */
    }
    return saved;
}

MODULE = Perennial::Executor::Signals    PACKAGE = Perennial::Executor::Signals

PROTOTYPES: DISABLE

# A copy of every handler that is set, indexed by signal number, the __DIE__ hook last: the
# last one made, when the handlers are still as it has them
SV *
xs_snapshot(...)
  CODE:
    PERL_UNUSED_VAR(items);
    if (!latest || next_changed(aTHX_ latest, 1)) {
        if (latest) SvREFCNT_dec((SV *)latest);
        latest = copy_handlers(aTHX);
    }
    RETVAL = newRV_inc((SV *)latest);
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
    saved = snapshot_of(aTHX_ saved_ref, "changed");
    for (i = next_changed(aTHX_ saved, 1); i; i = next_changed(aTHX_ saved, i + 1)) {
        SV *was = saved_at(saved, i);
        XPUSHs(sv_2mortal(newSVpv(name_of(i), 0)));
        XPUSHs(was ? was : &PL_sv_undef);
    }

# Puts back, through %SIG (so that perl's own sigaction runs), each handler that differs from
# the snapshot; returns their names
void
xs_restore(saved_ref)
    SV *saved_ref
  PREINIT:
    AV *saved;
    HV *sig;
    int i;
  PPCODE:
    saved = snapshot_of(aTHX_ saved_ref, "restore");
    sig   = get_hv("main::SIG", GV_ADD);
    for (i = next_changed(aTHX_ saved, 1); i; i = next_changed(aTHX_ saved, i + 1)) {
        SV *was = saved_at(saved, i), **slot;
        const char *name = name_of(i);
        slot = hv_fetch(sig, name, (I32)strlen(name), 1);
        if (!slot) croak("Can't put back the handler of %s", name);
        sv_setsv_mg(*slot, was ? was : &PL_sv_undef);
        XPUSHs(sv_2mortal(newSVpv(name, 0)));
    }
