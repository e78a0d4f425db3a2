/* A script request's global variables, as a new perl has them, and the worker's put back after
 * it (issue 16): Perennial::Executor's `local` of each of them cost 21k instructions a request
 * (six punctuation variables at 1.4k each, $^W, @ARGV, a copy of @INC, $^T), where nearly
 * always nothing differs from what the script is to get. enter() returns a guard: it sets what
 * differs and keeps what was there, and the guard, freed as the scope that holds it ends (on
 * every way out, as a `local` is put back), puts the worker's values back. The Perl twin is in
 * lib/Perennial/Executor/Globals.pm; the tests run both. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

/* The punctuation variables a script starts with as a new perl has them: $/ $, $\ $" $; $@
 * (a NULL value: undefined) */
#define PUNCTUATION 6
static const char *const NAME[PUNCTUATION] = {"/", ",", "\\", "\"", ";", "@"};
static const char *const VALUE[PUNCTUATION] = {"\n", NULL, NULL, " ", "\034", ""};

/* What a request's guard puts back */
struct worker_globals {
    SV *slot[PUNCTUATION];   /* The variable itself, put back if a script replaced it (*\ = \"x") */
    SV *was[PUNCTUATION];    /* A value that differed from a new perl's, or NULL */
    AV *inc, *argv;          /* The worker's @INC and @ARGV */
    Time_t basetime;         /* $^T */
    U8 dowarn;               /* $^W */
};

/* Their globs, found once a process (a lookup by name is 1k instructions) */
static GV *
punctuation_gv(pTHX_ int i)
{
    static GV *found[PUNCTUATION];
    if (!found[i]) found[i] = gv_fetchpv(NAME[i], GV_ADD | GV_NOTQUAL, SVt_PV);
    return found[i];
}

/* Whether a variable holds the value a new perl gives it */
static int
as_new(pTHX_ SV *sv, int i)
{
    STRLEN len = VALUE[i] ? strlen(VALUE[i]) : 0;
    SvGETMAGIC(sv);
    if (!VALUE[i]) return !SvOK(sv);
    return SvPOK(sv) && !SvROK(sv) && SvCUR(sv) == len && memEQ(SvPVX(sv), VALUE[i], len);
}

static void
set_new(pTHX_ SV *sv, int i)
{
    if (VALUE[i]) sv_setpv_mg(sv, VALUE[i]);
    else sv_setsv_mg(sv, &PL_sv_undef);
}

/* The array a script's @INC is during its requests: one kept with the script's own list (in
 * magic of that list's), made again only when a request changed it (a copy each request was 6k
 * instructions, and freeing it 3k) */
static MGVTBL WORKING = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

/* Whether two values are the same: the same string, or a reference to the same thing */
static int
same_value(pTHX_ SV *a, SV *b)
{
    if (SvGMAGICAL(a) || SvGMAGICAL(b) || SvROK(a) != SvROK(b)) return 0;
    if (SvROK(a)) return SvRV(a) == SvRV(b);
    if (!SvPOK(a) || !SvPOK(b)) return !SvOK(a) && !SvOK(b);
    return SvCUR(a) == SvCUR(b) && SvUTF8(a) == SvUTF8(b) && memEQ(SvPVX(a), SvPVX(b), SvCUR(a));
}

/* Whether the working array (no magic, not blessed) holds what the script's list does, element
 * by element (the list has the magic that keeps the working array, and nothing tied to it) */
static int
same_array(pTHX_ AV *a, AV *b)
{
    SSize_t i, last = av_top_index(a);
    if (SvRMAGICAL(a) || SvOBJECT((SV *)a) || mg_find((SV *)b, PERL_MAGIC_tied)) return 0;
    if (av_top_index(b) != last) return 0;
    for (i = 0; i <= last; i++) {
        SV **x = av_fetch(a, i, 0), **y = av_fetch(b, i, 0);
        if (!x || !y || !same_value(aTHX_ *x, *y)) return 0;
    }
    return 1;
}

static AV *
copy_of(pTHX_ AV *from)
{
    AV *to = newAV();
    SSize_t i, last = av_top_index(from);
    av_extend(to, last);
    for (i = 0; i <= last; i++) {
        SV **v = av_fetch(from, i, 0);
        av_push(to, v ? newSVsv(*v) : newSV(0));
    }
    return to;
}

/* The array for a script's @INC this request (a new reference): the kept one while it still
 * holds the script's list */
static AV *
working_inc(pTHX_ SV *ref)
{
    AV *list;
    MAGIC *mg;
    if (!SvROK(ref) || SvTYPE(SvRV(ref)) != SVt_PVAV)
        croak("enter: the script's @INC is not an array reference");
    list = (AV *)SvRV(ref);
    mg = mg_findext((SV *)list, PERL_MAGIC_ext, &WORKING);
    if (mg && SvREFCNT(mg->mg_obj) == 1 && same_array(aTHX_ (AV *)mg->mg_obj, list))
        return (AV *)SvREFCNT_inc_simple_NN(mg->mg_obj);
    if (mg) sv_unmagicext((SV *)list, PERL_MAGIC_ext, &WORKING);
    mg = sv_magicext((SV *)list, (SV *)copy_of(aTHX_ list), PERL_MAGIC_ext, &WORKING, NULL, 0);
    mg->mg_flags |= MGf_REFCOUNTED;
    SvREFCNT_dec(mg->mg_obj);    /* The magic's alone (sv_magicext counted one more) */
    return (AV *)SvREFCNT_inc_simple_NN(mg->mg_obj);
}

/* The words of an ISINDEX query, in a new array (an empty one kept for the rest) */
static AV *
request_argv(pTHX_ SV *ref)
{
    static AV *empty = NULL;
    if (SvOK(ref)) {
        if (!SvROK(ref) || SvTYPE(SvRV(ref)) != SVt_PVAV)
            croak("enter: @ARGV is not an array reference");
        return copy_of(aTHX_ (AV *)SvRV(ref));
    }
    if (!empty || SvREFCNT(empty) != 1 || av_top_index(empty) >= 0 || SvRMAGICAL(empty)
        || SvOBJECT((SV *)empty)) {
        SvREFCNT_dec((SV *)empty);
        empty = newAV();
    }
    return (AV *)SvREFCNT_inc_simple_NN((SV *)empty);
}

/* The array of a glob replaced: the old one is the caller's to keep */
static AV *
swap_array(GV *gv, AV *now)
{
    AV *was = GvAV(gv);
    GvAV(gv) = now;
    return was;
}

/* The guard's end: the punctuation as a new perl has it, then what the worker had where it
 * differed; the worker's arrays, $^T and $^W */
static int
put_back(pTHX_ SV *sv, MAGIC *mg)
{
    struct worker_globals *w = (struct worker_globals *)mg->mg_ptr;
    int i;
    PERL_UNUSED_ARG(sv);
    if (!w) return 0;
    mg->mg_ptr = NULL;
    SvREFCNT_dec((SV *)swap_array(PL_incgv, w->inc));
    SvREFCNT_dec((SV *)swap_array(PL_argvgv, w->argv));
    PL_basetime = w->basetime;
    PL_dowarn = w->dowarn;
    for (i = 0; i < PUNCTUATION; i++) {
        GV *gv = punctuation_gv(aTHX_ i);
        SV *now = GvSV(gv);
        if (now != w->slot[i]) {    /* The glob's variable replaced: the worker's again */
            GvSV(gv) = w->slot[i];
            SvREFCNT_dec(now);
        }
        else SvREFCNT_dec(w->slot[i]);
        now = GvSV(gv);
        if (w->was[i]) {
            if (!SvREADONLY(now)) sv_setsv_mg(now, w->was[i]);
            SvREFCNT_dec(w->was[i]);
        }
        else if (!SvREADONLY(now) && !as_new(aTHX_ now, i)) set_new(aTHX_ now, i);
    }
    Safefree(w);
    return 0;
}

static MGVTBL GUARD = {NULL, NULL, NULL, NULL, put_back, NULL, NULL, NULL};

MODULE = Perennial::Executor::Globals    PACKAGE = Perennial::Executor::Globals

PROTOTYPES: DISABLE

# enter(\@inc, \@argv or undef): the guard (a reference) that puts the worker's values back
SV *
xs_enter(inc_ref, argv_ref)
    SV *inc_ref
    SV *argv_ref
  PREINIT:
    struct worker_globals *w;
    AV *inc, *argv;
    SV *guard;
    int i;
  CODE:
    inc = working_inc(aTHX_ inc_ref);
    argv = request_argv(aTHX_ argv_ref);
    Newxz(w, 1, struct worker_globals);
    for (i = 0; i < PUNCTUATION; i++) {
        GV *gv = punctuation_gv(aTHX_ i);
        SV *now = GvSVn(gv);
        w->slot[i] = SvREFCNT_inc_simple_NN(now);
        if (as_new(aTHX_ now, i)) continue;
        w->was[i] = newSVsv(now);
        if (SvREADONLY(now)) now = GvSV(gv) = newSV(0);    /* As local gives a new one */
        set_new(aTHX_ now, i);
    }
    w->dowarn = PL_dowarn;
    w->basetime = PL_basetime;
    PL_basetime = time(NULL);
    w->inc = swap_array(PL_incgv, inc);
    w->argv = swap_array(PL_argvgv, argv);
    guard = newSV(0);
    sv_magicext(guard, NULL, PERL_MAGIC_ext, &GUARD, (const char *)w, 0);
    RETVAL = newRV_noinc(guard);
  OUTPUT:
    RETVAL
