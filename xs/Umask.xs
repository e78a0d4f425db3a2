/* Whether a script request may have changed the process's umask (issue 16): putting it back
 * after every request is a system call, the fifth of a kept-alive Registry request. Every
 * umask op perl compiles once this has loaded is marked (an op checker, perl's API for it),
 * and notes when it runs; the executor puts the umask back only after a request in which one
 * ran. An op compiled before this loaded is not marked: the worker loads it before the site's
 * code, and CORE::umask (which POSIX::umask is), made earlier, is marked when this loads. The
 * Perl twins in lib/Perennial/Executor/Umask.pm say yes, and put it back, always. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

static Perl_check_t next_checker;
static int ran = 1;    /* Nothing known before the first request: put it back then */

static OP *
pp_umask_noted(pTHX)
{
    ran = 1;
    return PL_ppaddr[OP_UMASK](aTHX);
}

static void
mark_op(OP *o)
{
    if (o->op_type == OP_UMASK && o->op_ppaddr == PL_ppaddr[OP_UMASK])
        o->op_ppaddr = pp_umask_noted;
}

static OP *
check_umask(pTHX_ OP *o)
{
    o = next_checker(aTHX_ o);
    mark_op(o);
    return o;
}

MODULE = Perennial::Executor::Umask    PACKAGE = Perennial::Executor::Umask

PROTOTYPES: DISABLE

BOOT:
{
    CV *core;
    OP *o;
    wrap_op_checker(OP_UMASK, check_umask, &next_checker);
    /* CORE::umask as perl made it (now, through the checker above, if it had not yet) */
    core = get_cvs("CORE::umask", 0);
    if (core && !CvISXSUB(core))
        for (o = CvSTART(core); o; o = o->op_next) mark_op(o);
}

# Whether a umask op ran since the last call (or this is the first)
int
xs_ran()
  CODE:
    RETVAL = ran;
    ran = 0;
  OUTPUT:
    RETVAL

# The worker's umask put back when a umask op ran since the last call; its own call is not one
# (a umask op in Perl would be, compiled after this loaded, and mark every request after it)
void
xs_put_back(mask)
    int mask
  CODE:
    if (ran) umask((mode_t)mask);
    ran = 0;
