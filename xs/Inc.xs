/* %INC against the executor's list of the modules it knows (issue 16): in Perl, comparing the
 * two made an SV of every key of %INC, and rebuilt the list from them, and each such key
 * shares its text with perl's string table, whose count of users it raises and lowers again.
 * Those counts are spread over the whole heap that a worker shares with the manager, so a
 * worker's first script request copied some 300 pages (1.2 MB) for nothing else. Here the keys
 * are compared where they lie, and only a key that is new, or gone, is touched. The Perl twins
 * are in lib/Perennial/Executor/Inc.pm; the tests run both. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

static HV *
hash_of(pTHX_ SV *ref, const char *what)
{
    if (!SvROK(ref) || SvTYPE(SvRV(ref)) != SVt_PVHV) croak("%s: not a hash reference", what);
    return (HV *)SvRV(ref);
}

/* Whether the key of an entry of one hash is in another, without making an SV of it */
static int
has_key(pTHX_ HV *hv, HE *he)
{
    if (HeKLEN(he) == HEf_SVKEY) return hv_exists_ent(hv, HeSVKEY(he), 0);
    return hv_common_key_len(hv, HeKEY(he), HeKUTF8(he) ? -HeKLEN(he) : HeKLEN(he),
                             HV_FETCH_ISEXISTS, NULL, HeHASH(he)) != NULL;
}

/* Puts into `into` each key of `from` that `other` lacks; returns how many */
static int
push_missing(pTHX_ HV *from, HV *other, AV *into)
{
    STRLEN i;
    int n = 0;
    HE **array = HvARRAY(from);
    if (!array) return 0;
    for (i = 0; i <= HvMAX(from); i++) {
        HE *he;
        for (he = array[i]; he; he = HeNEXT(he)) {
            if (has_key(aTHX_ other, he)) continue;
            av_push(into, HeKLEN(he) == HEf_SVKEY ? newSVsv(HeSVKEY(he)) : newSVhek(HeKEY_hek(he)));
            n++;
        }
    }
    return n;
}

MODULE = Perennial::Executor::Inc    PACKAGE = Perennial::Executor::Inc

PROTOTYPES: DISABLE

# The keys of %$inc that %$known lacks
void
xs_new_keys(inc_ref, known_ref)
    SV *inc_ref
    SV *known_ref
  PREINIT:
    HV *inc, *known;
    AV *found;
    SSize_t i;
  PPCODE:
    inc   = hash_of(aTHX_ inc_ref, "new_keys");
    known = hash_of(aTHX_ known_ref, "new_keys");
    found = (AV *)sv_2mortal((SV *)newAV());
    push_missing(aTHX_ inc, known, found);
    EXTEND(SP, AvFILLp(found) + 1);
    for (i = 0; i <= AvFILLp(found); i++) PUSHs(sv_2mortal(SvREFCNT_inc_simple_NN(AvARRAY(found)[i])));

# %$known becomes the keys of %$inc (each with the value 1): the new ones added, the gone ones
# deleted, the others left as they are
void
xs_sync_known(inc_ref, known_ref)
    SV *inc_ref
    SV *known_ref
  PREINIT:
    HV *inc, *known;
    AV *added, *gone;
    SSize_t i;
  CODE:
    inc   = hash_of(aTHX_ inc_ref, "sync_known");
    known = hash_of(aTHX_ known_ref, "sync_known");
    added = (AV *)sv_2mortal((SV *)newAV());
    gone  = (AV *)sv_2mortal((SV *)newAV());
    push_missing(aTHX_ inc, known, added);
    push_missing(aTHX_ known, inc, gone);
    for (i = 0; i <= AvFILLp(added); i++)
        (void)hv_store_ent(known, AvARRAY(added)[i], newSViv(1), 0);
    for (i = 0; i <= AvFILLp(gone); i++)
        (void)hv_delete_ent(known, AvARRAY(gone)[i], G_DISCARD, 0);
