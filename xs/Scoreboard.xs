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
    STRLEN len = 0;
    const char *p = value ? SvPV_const(value, len) : "";
    if (len > size) len = size;
    memcpy(at, p, len);
    memset(at + len, 0, size - len);
}

#define HEADER 64

/* Slot $i of a scoreboard object ($self->{map}), for the method named */
static char *
slot_of(pTHX_ SV *self, IV i, const char *method)
{
    SV **map;
    if (!SvROK(self) || SvTYPE(SvRV(self)) != SVt_PVHV) croak("%s: not a scoreboard", method);
    map = hv_fetchs((HV *)SvRV(self), "map", 0);
    if (!map) croak("%s: the scoreboard has no map", method);
    return slot_at(aTHX_ *map, HEADER + SLOT * i);
}

/* A string value of the hash, or NULL when it has none (undef counts as none) */
static SV *
hv_value(pTHX_ HV *hv, const char *key, I32 klen)
{
    SV **v = hv_fetch(hv, key, klen, 0);
    return v && SvOK(*v) ? *v : NULL;
}

static UV
get_n(const char *at)
{
    uint32_t n;
    memcpy(&n, at, 4);
    return ntohl(n);
}

static UV
get_q(const char *at)
{
    uint64_t q;
    memcpy(&q, at, 8);
    return (UV)q;
}

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
    HV *e;
    STRLEN at = 0;
    int k;
    static const char *const PART[] = { "REQUEST_METHOD", "REQUEST_URI", "SERVER_PROTOCOL" };
  CODE:
    if (!SvROK(env) || SvTYPE(SvRV(env)) != SVt_PVHV) croak("request_start: no environment");
    e = (HV *)SvRV(env);
    slot = slot_of(aTHX_ self, i, "request_start");
    slot[0] = 'W';
    put_n(slot + 16, done);
    put_d(slot + 32, started);
    put_a(aTHX_ slot + 64, hv_value(aTHX_ e, "REMOTE_ADDR", 11), 48);
    for (k = 0; k < 3; k++) {
        STRLEN len;
        const char *p;
        SV *part = hv_value(aTHX_ e, PART[k], strlen(PART[k]));
        if (k && at < 144) slot[112 + at++] = ' ';
        p = part ? SvPV_const(part, len) : (len = 0, "");
        if (len > 144 - at) len = 144 - at;
        memcpy(slot + 112 + at, p, len);
        at += len;
    }
    memset(slot + 112 + at, 0, 144 - at);

# $board->request_done($i, $bytes, $micros, $n): the request's counts added to the slot's
# (read from the slot itself), its time, and the count on its connection; the worker's count
UV
xs_request_done(self, i, bytes, micros, n)
    SV *self
    IV i
    UV bytes
    UV micros
    UV n
  PREINIT:
    char *slot;
  CODE:
    slot = slot_of(aTHX_ self, i, "request_done");
    RETVAL = get_n(slot + 12) + 1;
    put_n(slot + 12, RETVAL);
    put_n(slot + 16, n);
    put_n(slot + 20, micros);
    put_q(slot + 40, get_q(slot + 40) + 1);
    put_q(slot + 48, get_q(slot + 48) + bytes);
    put_q(slot + 56, get_q(slot + 56) + bytes);
    put_q(slot + 272, get_q(slot + 272) + micros);
  OUTPUT:
    RETVAL
