/* A script request's STDIN, STDOUT and STDERR (issue 16). Perl empties its cache of class names
 * (PL_stashcache) whenever a glob gets an IO object by assignment (`local *STDIN = $fh`, or
 * `*STDOUT = *FH{IO}`), since a handle could hide a package of the same name; every
 * `Class->method` and `bless` by name after it looks its class up again through the symbol
 * table. STDIN, STDOUT and STDERR always are handles, so giving them another IO hides nothing:
 * this puts the IO in the glob's slot without emptying the cache. The caller makes the glob
 * local first (`local *STDIN`), so perl puts the old one back, and frees this one's count,
 * when the scope ends. The Perl twin in lib/Perennial/Executor/Handles.pm assigns. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

/* The IO object of a glob, a reference to one, or a reference to an IO; NULL for anything else */
static IO *
io_of(pTHX_ SV *sv)
{
    if (SvROK(sv)) sv = SvRV(sv);
    if (isGV_with_GP(sv)) return GvIOp((GV *)sv);
    if (SvTYPE(sv) == SVt_PVIO) return (IO *)sv;
    return NULL;
}

/* Puts io (or none) in the glob's IO slot, with its count; the slot's old one loses its count */
static void
put_io(pTHX_ SV *glob, IO *io)
{
    GV *gv;
    IO *old;
    if (!SvROK(glob) || !isGV_with_GP(SvRV(glob))) croak("use_io: not a glob reference");
    gv  = (GV *)SvRV(glob);
    old = GvIOp(gv);
    GvIOp(gv) = io ? (IO *)SvREFCNT_inc_simple_NN((SV *)io) : NULL;
    SvREFCNT_dec(old);
}

MODULE = Perennial::Executor::Handles    PACKAGE = Perennial::Executor::Handles

PROTOTYPES: DISABLE

void
xs_use_io(glob, handle)
    SV *glob
    SV *handle
  CODE:
    put_io(aTHX_ glob, io_of(aTHX_ handle));

void
xs_tie_stdout(glob, handle, out)
    SV *glob
    SV *handle
    SV *out
  PREINIT:
    IO *io;
    GV *gv;
  CODE:
    /* STDOUT for a script's request, tied to out (a reference to the object, as a TIEHANDLE
     * that returns its argument would give): handle's IO, unless that is tied now (a request's
     * STDOUT, while a request run inside it uses it: the glob then gets a new one, as tie
     * makes it); selected, as a new perl starts with it, since a script may have left another
     * handle selected; and without autoflush, which a script may have left on it */
    if (!SvROK(out) || !SvOBJECT(SvRV(out))) croak("tie_stdout: not an object");
    io = io_of(aTHX_ handle);
    if (!(io && SvRMAGICAL(io) && mg_find((SV *)io, PERL_MAGIC_tiedscalar))) put_io(aTHX_ glob, io);
    gv = (GV *)SvRV(glob);
    if (PL_defoutgv != gv) setdefout(gv);
    io = GvIOn(gv);
    IoFLAGS(io) &= ~IOf_FLUSH;
    sv_unmagic((SV *)io, PERL_MAGIC_tiedscalar);
    sv_magic((SV *)io, out, PERL_MAGIC_tiedscalar, NULL, 0);

bool
xs_untie_stdout(glob)
    SV *glob
  PREINIT:
    IO *io;
  CODE:
    /* Its tie gone; true when a file is open on it: one the script opened itself */
    if (!SvROK(glob) || !isGV_with_GP(SvRV(glob))) croak("untie_stdout: not a glob reference");
    io = GvIOp((GV *)SvRV(glob));
    if (io) sv_unmagic((SV *)io, PERL_MAGIC_tiedscalar);
    RETVAL = io && IoIFP(io) ? TRUE : FALSE;
  OUTPUT:
    RETVAL
