/* A key's value in a plain hash, looked up in the bucket of a hash computed once (issue 16).
 * perl's hv_common takes every kind of hash and key (tied, %ENV, restricted, UTF-8, a key to
 * hash each time) and cost about 125 instructions a lookup, most of which find nothing: a
 * field not set, an env key a request did not bring. A hash with magic (tied, %ENV) goes the
 * general way. The keys asked here are ASCII, which perl stores as they are (it downgrades
 * a key that can be bytes); a restricted hash's placeholder is no value. Perl's hash function
 * and seed are the process's, the same for every hash and kept across fork, so a key's hash
 * computed once stays right. */
#ifndef PERENNIAL_PLAIN_HASH_H
#define PERENNIAL_PLAIN_HASH_H

/* The value's place, or NULL; lval: made when there is none (by hv_common) */
static SV **
plain_fetch(pTHX_ HV *hv, const char *key, I32 klen, U32 hash, int lval)
{
    if (!SvMAGICAL(hv)) {
        HE *he = HvARRAY(hv) ? HvARRAY(hv)[hash & HvMAX(hv)] : NULL;
        for (; he; he = HeNEXT(he)) {
            if (HeHASH(he) == hash && HeKLEN(he) == klen && memEQ(HeKEY(he), key, klen)
                && HeVAL(he) != &PL_sv_placeholder)
                return &HeVAL(he);
        }
        if (!lval) return NULL;
    }
    return (SV **)hv_common_key_len(hv, key, klen,
                                    lval ? HV_FETCH_JUST_SV | HV_FETCH_LVALUE : HV_FETCH_JUST_SV,
                                    NULL, hash);
}

/* A value found (plain_fetch's), defined or NULL; true or not (get magic read, undef false) */
static SV *
defined_in(SV **v)
{
    return v && SvOK(*v) ? *v : NULL;
}

static int
true_in(pTHX_ SV **v)
{
    return v && SvTRUE(*v);
}

/* The same for a literal key, its hash computed at the first lookup from this place */
#define PLAIN_FETCH(hv, key)                                                     \
    ({                                                                           \
        static U32 hash_;                                                        \
        static int hashed_;                                                      \
        if (!hashed_) {                                                          \
            PERL_HASH(hash_, "" key "", sizeof(key) - 1);                        \
            hashed_ = 1;                                                         \
        }                                                                        \
        plain_fetch(aTHX_ (hv), "" key "", (I32)(sizeof(key) - 1), hash_, 0);    \
    })

#endif
