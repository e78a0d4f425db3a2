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

/* What opens and closes a request's STDOUT on its output (its PerlIO layer, xs/OutputLayer.c),
 * found once through PL_modglobal; NULL while the output's C is not loaded (then STDOUT is
 * tied to the output, as by the Perl twin) */
#include "OutputApi.h"

static struct output_api *
output_api(pTHX)
{
    static struct output_api *api;
    SV **sv;
    if (!api && (sv = hv_fetchs(PL_modglobal, OUTPUT_API_KEY, 0)) && SvIOK(*sv))
        api = INT2PTR(struct output_api *, SvIV(*sv));
    return api;
}

/* A handle's format state ($~, $^, $=, $-, $%) as a new handle has it, since a request's
 * STDOUT is one IO for the process */
static void
fresh_formats(IO *io)
{
    Safefree(IoFMT_NAME(io));
    Safefree(IoTOP_NAME(io));
    IoFMT_NAME(io)   = NULL;
    IoTOP_NAME(io)   = NULL;
    IoFMT_GV(io)     = NULL;
    IoTOP_GV(io)     = NULL;
    IoLINES(io)      = 0;
    IoPAGE(io)       = 0;
    IoPAGE_LEN(io)   = 60;
    IoLINES_LEFT(io) = 0;
}

/* The Perl twin of a function, with the same arguments: where the output's layer is not */
static SV *
perl_twin(pTHX_ const char *name, I32 ax, I32 items)
{
    dSP;
    I32 i;
    SV *ret;
    ENTER;
    SAVETMPS;
    PUSHMARK(SP);
    EXTEND(SP, items);
    for (i = 0; i < items; i++) PUSHs(PL_stack_base[ax + i]);
    PUTBACK;
    ret = call_pv(name, G_SCALAR) ? newSVsv(*PL_stack_sp) : newSV(0);
    FREETMPS;
    LEAVE;
    return ret;
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
xs_open_stdout(glob, handle, out, layers = &PL_sv_undef)
    SV *glob
    SV *handle
    SV *out
    SV *layers
  PREINIT:
    IO *io;
    GV *gv;
    SV *was;
    struct output_api *api;
  CODE:
    /* STDOUT for a script's request, a handle on its output (the output's layer): handle's IO
     * while it is free (as the Perl twin), selected, without autoflush, with the layers the
     * script pushed as it compiled ($layers, Perennial::Executor::Layers). Returns what was
     * selected. Tied, as by the Perl twin, where the output's C is not loaded. */
    if (!(api = output_api(aTHX))) {
        RETVAL = perl_twin(aTHX_ "Perennial::Executor::Handles::pp_open_stdout", ax, items);
    }
    else {
        if (!SvROK(out) || !SvOBJECT(SvRV(out))) croak("open_stdout: not an object");
        if (!SvROK(glob) || !isGV_with_GP(SvRV(glob))) croak("open_stdout: not a glob reference");
        io = io_of(aTHX_ handle);
        if (io && !is_tied(aTHX_ io) && (!IoIFP(io) || api->idle(aTHX_ io))) put_io(aTHX_ glob, io);
        gv     = (GV *)SvRV(glob);
        was = PL_defoutgv ? sv_2mortal(newRV_inc((SV *)PL_defoutgv)) : &PL_sv_undef;
        if (PL_defoutgv != gv) setdefout(gv);
        io = GvIOn(gv);
        IoFLAGS(io) &= ~IOf_FLUSH;
        sv_unmagic((SV *)io, PERL_MAGIC_tiedscalar);
        if (IoFMT_NAME(io) || IoTOP_NAME(io) || IoLINES(io) || IoPAGE(io) || IoLINES_LEFT(io)
            || IoPAGE_LEN(io) != 60)
            fresh_formats(io);
        if (!api->attach(aTHX_ io, out))
            croak("Can't open STDOUT on the response: %s", Strerror(errno));
        RETVAL = SvREFCNT_inc(was);
        if (SvOK(layers)) {    /* As the script's binmode pushed them as it compiled */
            dSP;
            const char *names;
            PUSHMARK(SP);
            XPUSHs(layers);
            PUTBACK;
            ENTER;
            SAVETMPS;
            if (call_method("perlio", G_SCALAR)) {
                SPAGAIN;
                names = SvPV_nolen(POPs);
                PUTBACK;
                if (*names) (void)PerlIO_apply_layers(aTHX_ IoOFP(io), "w", names);
            }
            FREETMPS;
            LEAVE;
        }
    }
  OUTPUT:
    RETVAL

bool
xs_close_stdout(glob, handle, out, was)
    SV *glob
    SV *handle
    SV *out
    SV *was
  PREINIT:
    IO *io, *kept;
    SV *twin;
    struct output_api *api;
  CODE:
    /* After the request: the output's handle idle again, or closed (what perl's buffer holds
     * goes to the output first), or its tie gone, as by the Perl twin; what was selected
     * before, selected again. True when a file is open on the glob's IO: one the script opened
     * itself, for the caller to close. */
    if (!(api = output_api(aTHX))) {
        twin   = perl_twin(aTHX_ "Perennial::Executor::Handles::pp_close_stdout", ax, items);
        RETVAL = SvTRUE(twin);
        SvREFCNT_dec(twin);
    }
    else {
        if (!SvROK(glob) || !isGV_with_GP(SvRV(glob))) croak("close_stdout: not a glob reference");
        io = GvIOp((GV *)SvRV(glob));
        untie_io(aTHX_ io, out);    /* The script tied it to a class of its own */
        RETVAL = api->detach(aTHX_ io, out) ? TRUE : FALSE;
        kept   = io_of(aTHX_ handle);    /* A script that gave the glob another IO left it on */
        if (kept && kept != io) (void)api->detach(aTHX_ kept, out);
        if (SvROK(was) && isGV_with_GP(SvRV(was)) && PL_defoutgv != (GV *)SvRV(was))
            setdefout((GV *)SvRV(was));
    }
  OUTPUT:
    RETVAL
