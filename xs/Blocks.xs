/* How many END and INIT blocks perl has queued (issue 16). The executor counts them before and
 * after a script compiles, to take out those the script added; asked through B (an object for
 * each list, its class looked at, a reference made), that cost every PerlRun request 22k
 * instructions. The Perl twin in lib/Perennial/Executor/Blocks.pm asks through B. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

MODULE = Perennial::Executor::Blocks    PACKAGE = Perennial::Executor::Blocks

PROTOTYPES: DISABLE

# The END blocks queued, and the INIT blocks
void
xs_counts()
  PPCODE:
    EXTEND(SP, 2);
    mPUSHi(PL_endav ? (IV)av_count(PL_endav) : 0);
    mPUSHi(PL_initav ? (IV)av_count(PL_initav) : 0);
