/* A worker's scoreboard writes each request, in C (issue 16): as substr assignments on the
 * mapped string, with File::Map's magic on each, a request's start and end cost about 14k
 * instructions, and their Perl methods around the stores 17k more. Here each method is a few
 * stores into the mapping, at the offsets and in the formats of the slot
 * (lib/Perennial/Scoreboard.pm: N is big-endian, d and Q native, a48 and a144 NUL-padded).
 * The Perl twins are the methods of the same names; the tests run both. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

#include "ScoreboardSlot.h"

MODULE = Perennial::Scoreboard    PACKAGE = Perennial::Scoreboard

PROTOTYPES: DISABLE

# $board->state($i, $letter): the method itself, called twice a request
void
xs_state(self, i, state)
    SV *self
    IV i
    SV *state
  PREINIT:
    STRLEN len;
    const char *letter;
  CODE:
    letter = SvPV_const(state, len);
    if (len != 1) croak("state: '%s' is not one letter", letter);
    slot_of(aTHX_ self, i, "state")[0] = letter[0];

# $board->arm($i, $deadline, $slow): the limits of the request now running, for the request
# that began at request_started (copied beside them), as floats
void
xs_arm(self, i, deadline, slow)
    SV *self
    IV i
    NV deadline
    NV slow
  PREINIT:
    char *slot;
    float f;
  CODE:
    slot = slot_of(aTHX_ self, i, "arm");
    memcpy(slot + 256, slot + 32, 8);
    f = (float)deadline;
    memcpy(slot + 264, &f, 4);
    f = (float)slow;
    memcpy(slot + 268, &f, 4);

# $board->request_start($i, $env, $started, $done): the slot is busy (W) with the client, the
# request line made from the environment (its parts cut at the field's end, as pack's 'a144'
# cuts the joined line), the time the request began and how many went before it on its connection
void
xs_request_start(self, i, env, started, done)
    SV *self
    IV i
    SV *env
    NV started
    UV done
  PREINIT:
    char *slot;
  CODE:
    if (!SvROK(env) || SvTYPE(SvRV(env)) != SVt_PVHV) croak("request_start: no environment");
    slot = slot_of(aTHX_ self, i, "request_start");
    slot_request_start(aTHX_ slot, (HV *)SvRV(env), started, done);

# $board->request_done($i, $bytes, $micros, $n): the request's counts added to the slot's
# (read from the slot itself), its time, and the count on its connection; the worker's count
UV
xs_request_done(self, i, bytes, micros, n)
    SV *self
    IV i
    UV bytes
    UV micros
    UV n
  CODE:
    RETVAL = slot_request_done(slot_of(aTHX_ self, i, "request_done"), bytes, micros, n);
  OUTPUT:
    RETVAL
