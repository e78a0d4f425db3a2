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

/* Whether an IO is tied (tie magic on it) */
static int
is_tied(pTHX_ IO *io)
{
    return io && SvRMAGICAL(io) && mg_find((SV *)io, PERL_MAGIC_tiedscalar) ? 1 : 0;
}

/* Unties an IO as perl's untie does: its class's UNTIE, if it has one, is called first (not
 * looked for when it is tied to ours, whose class has none) */
static void
untie_io(pTHX_ IO *io, SV *ours)
{
    MAGIC *mg;
    SV *obj;
    GV *method;
    if (!io || !SvRMAGICAL(io) || !(mg = mg_find((SV *)io, PERL_MAGIC_tiedscalar))) return;
    obj = SvTIED_obj((SV *)io, mg);
    if (obj && SvROK(obj) && SvOBJECT(SvRV(obj)) && !(SvROK(ours) && SvRV(obj) == SvRV(ours))
        && (method = gv_fetchmethod_autoload(SvSTASH(SvRV(obj)), "UNTIE", FALSE))
        && isGV(method) && GvCV(method)) {
        dSP;
        ENTER;
        SAVETMPS;
        PUSHMARK(SP);
        XPUSHs(obj);
        mXPUSHi(SvREFCNT(SvRV(obj)) - 1);
        PUTBACK;
        call_sv((SV *)GvCV(method), G_VOID | G_DISCARD);
        FREETMPS;
        LEAVE;
    }
    sv_unmagic((SV *)io, PERL_MAGIC_tiedscalar);
}

MODULE = Perennial::Executor::Handles    PACKAGE = Perennial::Executor::Handles

PROTOTYPES: DISABLE

void
xs_use_io(glob, handle)
    SV *glob
    SV *handle
  CODE:
    put_io(aTHX_ glob, io_of(aTHX_ handle));

SV *
xs_tie_stdout(glob, handle, out)
    SV *glob
    SV *handle
    SV *out
  PREINIT:
    IO *io;
    GV *gv;
    SV *obj;
  CODE:
    /* STDOUT for a script's request, tied to out (a new reference to the object, as a
     * TIEHANDLE that returns its argument would give): handle's IO while it is free, neither
     * tied nor open (not while a request run inside another, an internal redirect, finds it
     * the outer one's: the glob then gets a new one, as tie makes it); selected, as a new perl
     * starts with it, since a script may have left another handle selected; and without
     * autoflush, which a script may have left on it. Returns what was selected, for
     * untie_stdout to select again. */
    if (!SvROK(out) || !SvOBJECT(SvRV(out))) croak("tie_stdout: not an object");
    if (!SvROK(glob) || !isGV_with_GP(SvRV(glob))) croak("tie_stdout: not a glob reference");
    io = io_of(aTHX_ handle);
    if (io && !is_tied(aTHX_ io) && !IoIFP(io)) put_io(aTHX_ glob, io);
    gv     = (GV *)SvRV(glob);
    RETVAL = PL_defoutgv ? newRV_inc((SV *)PL_defoutgv) : &PL_sv_undef;
    if (PL_defoutgv != gv) setdefout(gv);
    io = GvIOn(gv);
    IoFLAGS(io) &= ~IOf_FLUSH;
    sv_unmagic((SV *)io, PERL_MAGIC_tiedscalar);
    obj = newRV_inc(SvRV(out));
    sv_magic((SV *)io, obj, PERL_MAGIC_tiedscalar, NULL, 0);
    SvREFCNT_dec(obj);
  OUTPUT:
    RETVAL

bool
xs_untie_stdout(glob, handle, out, was)
    SV *glob
    SV *handle
    SV *out
    SV *was
  PREINIT:
    IO *io;
    IO *kept;
    MAGIC *mg;
    SV *obj;
  CODE:
    /* After the request: its tie gone (with its class's UNTIE, as untie calls it, when the
     * script tied it to a class of its own); the kept IO untied too if it is still tied to
     * out (a script that assigned another handle to the glob left it so); what was selected
     * before, selected again. True when a file is open on the glob's IO: one the script
     * opened itself, for the caller to close. */
    if (!SvROK(glob) || !isGV_with_GP(SvRV(glob))) croak("untie_stdout: not a glob reference");
    io = GvIOp((GV *)SvRV(glob));
    untie_io(aTHX_ io, out);
    kept = io_of(aTHX_ handle);
    if (kept && kept != io && SvRMAGICAL(kept)
        && (mg = mg_find((SV *)kept, PERL_MAGIC_tiedscalar))
        && (obj = SvTIED_obj((SV *)kept, mg)) && SvROK(obj) && SvROK(out)
        && SvRV(obj) == SvRV(out))
        sv_unmagic((SV *)kept, PERL_MAGIC_tiedscalar);
    if (SvROK(was) && isGV_with_GP(SvRV(was)) && PL_defoutgv != (GV *)SvRV(was))
        setdefout((GV *)SvRV(was));
    io     = GvIOp((GV *)SvRV(glob));
    RETVAL = io && IoIFP(io) ? TRUE : FALSE;
  OUTPUT:
    RETVAL
