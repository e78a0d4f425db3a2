/* What each file perl compiles requires by name (issue 18): a resident script depends on the
 * site's libraries it uses, and on those they use, whichever script loaded them first in the
 * worker. A `use` or `require` of a module that is loaded already does nothing at run time,
 * and leaves nothing in the compiled script (a `use` is a BEGIN block, run and freed), so only
 * the compiler sees it: every require op perl compiles with a constant name (`use Foo`,
 * `require Foo::Bar`, `require "lib.pl"`) is noted here, once this has loaded, as the name
 * under the file being compiled, in %Perennial::Executor::Libraries::REQUIRES:
 * { file, as perl names it (its %INC value, or the #line name of a script) => { name => 1 } }.
 * String evals are left out (each is a file of its own name, "(eval 42)", and would add one
 * per run). Nothing is done at run time. Without this, lib/Perennial/Executor/Libraries.pm
 * takes every library loaded to be required by every script. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

static Perl_check_t next_checker;

/* %REQUIRES's glob, found once as the module loads: get_hv by its full name walked the four
 * levels of its package's name at every require compiled, 1.6k instructions, and PerlRun
 * compiles each of a script's `use` lines on every request. The glob is the one the Perl's
 * `our %REQUIRES` names; a `local` of the hash is seen through it. */
static GV *graph_gv;

static void
note_required(pTHX_ SV *name)
{
    const char *file = CopFILE(PL_curcop);
    HV *graph, *names;
    SV **slot;
    if (!file || !*file || *file == '(') return;
    graph = GvHVn(graph_gv);
    slot  = hv_fetch(graph, file, (I32)strlen(file), 1);
    if (!slot) return;
    if (!SvROK(*slot) || SvTYPE(SvRV(*slot)) != SVt_PVHV) sv_setsv(*slot, sv_2mortal(newRV_noinc((SV *)newHV())));
    names = (HV *)SvRV(*slot);
    (void)hv_store_ent(names, name, newSViv(1), 0);
}

static OP *
check_require(pTHX_ OP *o)
{
    OP *kid;
    SV *name;
    o = next_checker(aTHX_ o);
    if (o->op_type != OP_REQUIRE || !(o->op_flags & OPf_KIDS)) return o;
    kid = cUNOPo->op_first;
    if (!kid || kid->op_type != OP_CONST) return o;
    name = cSVOPx_sv(kid);
    /* require VERSION: a number, or a v-string */
    if (!name || !SvPOK(name) || SvNIOK(name) || SvVOK(name) || !SvCUR(name)) return o;
    note_required(aTHX_ name);
    return o;
}

MODULE = Perennial::Executor::Libraries    PACKAGE = Perennial::Executor::Libraries

PROTOTYPES: DISABLE

BOOT:
    graph_gv = (GV *)SvREFCNT_inc_simple_NN(
        gv_fetchpvs("Perennial::Executor::Libraries::REQUIRES", GV_ADD | GV_ADDMULTI, SVt_PVHV));
    wrap_op_checker(OP_REQUIRE, check_require, &next_checker);
