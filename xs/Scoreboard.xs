/* A worker's two scoreboard writes a request, in C (issue 16): as substr assignments on the
 * mapped string, with File::Map's magic on each, the two cost about 14k instructions a request.
 * Here each is a few stores into the mapping, at the offsets and in the formats of the slot
 * (lib/Perennial/Scoreboard.pm: N is big-endian, d and Q native, a48 and a144 NUL-padded).
 * The Perl twins are the substr writes beside them; the tests run both. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"
#include <arpa/inet.h>
#include <stdint.h>

#define SLOT 336

/* The slot at base in the mapped string, checked to lie inside it */
static char *
slot_at(pTHX_ SV *map_ref, IV base)
{
    SV *map;
    if (!SvROK(map_ref)) croak("scoreboard: not a reference to the map");
    map = SvRV(map_ref);
    if (!SvPOK(map) || base < 0 || (STRLEN)base + SLOT > SvCUR(map))
        croak("scoreboard: slot at %" IVdf " is outside the map", base);
    if (SvREADONLY(map)) croak("scoreboard: the map is read-only here");
    return SvPVX(map) + base;
}

static void
put_n(char *at, UV value)
{
    uint32_t n = htonl((uint32_t)value);
    memcpy(at, &n, 4);
}

static void
put_q(char *at, UV value)
{
    uint64_t q = (uint64_t)value;
    memcpy(at, &q, 8);
}

static void
put_d(char *at, NV value)
{
    double d = (double)value;
    memcpy(at, &d, 8);
}

/* A string into a field of size bytes, cut or padded with NULs, as pack's 'a' */
static void
put_a(pTHX_ char *at, SV *value, STRLEN size)
{
    STRLEN len;
    const char *p = SvPV_const(value, len);
    if (len > size) len = size;
    memcpy(at, p, len);
    memset(at + len, 0, size - len);
}

#define HEADER 64

MODULE = Perennial::Scoreboard    PACKAGE = Perennial::Scoreboard

PROTOTYPES: DISABLE

# $board->state($i, $letter): the method itself, called three or four times a request
void
xs_state(self, i, state)
    SV *self
    IV i
    SV *state
  PREINIT:
    SV **map;
    STRLEN len;
    const char *letter;
  CODE:
    if (!SvROK(self) || SvTYPE(SvRV(self)) != SVt_PVHV) croak("state: not a scoreboard");
    map = hv_fetchs((HV *)SvRV(self), "map", 0);
    if (!map) croak("state: the scoreboard has no map");
    letter = SvPV_const(state, len);
    if (len != 1) croak("state: '%s' is not one letter", letter);
    slot_at(aTHX_ *map, HEADER + SLOT * i)[0] = letter[0];

# $board->arm($i, $deadline, $slow): the limits of the request now running, for the request
# that began at request_started (copied beside them), as floats
void
xs_arm(self, i, deadline, slow)
    SV *self
    IV i
    NV deadline
    NV slow
  PREINIT:
    SV **map;
    char *slot;
    float f;
  CODE:
    if (!SvROK(self) || SvTYPE(SvRV(self)) != SVt_PVHV) croak("arm: not a scoreboard");
    map = hv_fetchs((HV *)SvRV(self), "map", 0);
    if (!map) croak("arm: the scoreboard has no map");
    slot = slot_at(aTHX_ *map, HEADER + SLOT * i);
    memcpy(slot + 256, slot + 32, 8);
    f = (float)deadline;
    memcpy(slot + 264, &f, 4);
    f = (float)slow;
    memcpy(slot + 268, &f, 4);

void
xs_write_start(map_ref, base, client, line, started, done)
    SV *map_ref
    IV base
    SV *client
    SV *line
    NV started
    UV done
  PREINIT:
    char *slot;
  CODE:
    slot = slot_at(aTHX_ map_ref, base);
    slot[0] = 'W';
    put_n(slot + 16, done);
    put_d(slot + 32, started);
    put_a(aTHX_ slot + 64, client, 48);
    put_a(aTHX_ slot + 112, line, 144);

void
xs_write_done(map_ref, base, requests, n, micros, slot_requests, slot_bytes, bytes, slot_micros)
    SV *map_ref
    IV base
    UV requests
    UV n
    UV micros
    UV slot_requests
    UV slot_bytes
    UV bytes
    UV slot_micros
  PREINIT:
    char *slot;
  CODE:
    slot = slot_at(aTHX_ map_ref, base);
    put_n(slot + 12, requests);
    put_n(slot + 16, n);
    put_n(slot + 20, micros);
    put_q(slot + 40, slot_requests);
    put_q(slot + 48, slot_bytes);
    put_q(slot + 56, bytes);
    put_q(slot + 272, slot_micros);
