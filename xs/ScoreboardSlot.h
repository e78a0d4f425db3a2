/* A worker's scoreboard slot, written in C: the stores of Scoreboard.xs's methods, and of the
 * connection loop in C (xs/Loop.c), which writes the same slot without a method call. The
 * offsets and formats are the slot's (lib/Perennial/Scoreboard.pm: N is big-endian, d and Q
 * native, a48 and a144 NUL-padded). */
#ifndef PERENNIAL_SCOREBOARD_SLOT_H
#define PERENNIAL_SCOREBOARD_SLOT_H
#include <arpa/inet.h>
#include <stdint.h>

#define SLOT 336

/* The slot at base in the mapped string, checked to lie inside it */
static inline char *
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

static inline void
put_n(char *at, UV value)
{
    uint32_t n = htonl((uint32_t)value);
    memcpy(at, &n, 4);
}

static inline void
put_q(char *at, UV value)
{
    uint64_t q = (uint64_t)value;
    memcpy(at, &q, 8);
}

static inline void
put_d(char *at, NV value)
{
    double d = (double)value;
    memcpy(at, &d, 8);
}

/* A string into a field of size bytes, cut or padded with NULs, as pack's 'a' */
static inline void
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
static inline char *
slot_of(pTHX_ SV *self, IV i, const char *method)
{
    SV **map;
    if (!SvROK(self) || SvTYPE(SvRV(self)) != SVt_PVHV) croak("%s: not a scoreboard", method);
    map = hv_fetchs((HV *)SvRV(self), "map", 0);
    if (!map) croak("%s: the scoreboard has no map", method);
    return slot_at(aTHX_ *map, HEADER + SLOT * i);
}

/* A string value of the hash, or NULL when it has none (undef counts as none) */
static inline SV *
hv_value(pTHX_ HV *hv, const char *key, I32 klen)
{
    SV **v = hv_fetch(hv, key, klen, 0);
    return v && SvOK(*v) ? *v : NULL;
}

static inline UV
get_n(const char *at)
{
    uint32_t n;
    memcpy(&n, at, 4);
    return ntohl(n);
}

static inline UV
get_q(const char *at)
{
    uint64_t q;
    memcpy(&q, at, 8);
    return (UV)q;
}

/* The slot is busy (W) with the client: its address, the request line made from its parts
 * (cut at the field's end, as pack's 'a144' cuts the joined line; a part may be NULL), the
 * time the request began and how many went before it on its connection */
static inline void
slot_request_parts(pTHX_ char *slot, SV *client, SV *method, SV *uri, SV *protocol, NV started,
                   UV done)
{
    STRLEN at = 0;
    int k;
    SV *part[3];
    part[0] = method;
    part[1] = uri;
    part[2] = protocol;
    slot[0] = 'W';
    put_n(slot + 16, done);
    put_d(slot + 32, started);
    put_a(aTHX_ slot + 64, client, 48);
    for (k = 0; k < 3; k++) {
        STRLEN len = 0;
        const char *p = part[k] ? SvPV_const(part[k], len) : "";
        if (k && at < 144) slot[112 + at++] = ' ';
        if (len > 144 - at) len = 144 - at;
        memcpy(slot + 112 + at, p, len);
        at += len;
    }
    memset(slot + 112 + at, 0, 144 - at);
}

/* The same, the parts read from the request's environment */
static inline void
slot_request_start(pTHX_ char *slot, HV *e, NV started, UV done)
{
    slot_request_parts(aTHX_ slot, hv_value(aTHX_ e, "REMOTE_ADDR", 11),
                       hv_value(aTHX_ e, "REQUEST_METHOD", 14), hv_value(aTHX_ e, "REQUEST_URI", 11),
                       hv_value(aTHX_ e, "SERVER_PROTOCOL", 15), started, done);
}

/* The virtual host that answers the request (Scoreboard.pm's vhost, a40), for the status page */
static inline void
slot_vhost(pTHX_ char *slot, SV *name)
{
    put_a(aTHX_ slot + 280, name, 40);
}

/* A request's counts added to the slot's (read from the slot itself), its time, and the count
 * on its connection; returns the worker's count */
static inline UV
slot_request_done(char *slot, UV bytes, UV micros, UV n)
{
    UV count = get_n(slot + 12) + 1;
    put_n(slot + 12, count);
    put_n(slot + 16, n);
    put_n(slot + 20, micros);
    put_q(slot + 40, get_q(slot + 40) + 1);
    put_q(slot + 48, get_q(slot + 48) + bytes);
    put_q(slot + 56, get_q(slot + 56) + bytes);
    put_q(slot + 272, get_q(slot + 272) + micros);
    return count;
}

#endif
