/* The output's PerlIO layer: a resident script's STDOUT (issue 16). Part of xs/Output.xs,
 * which includes it after the output's own C (the keys, add_bytes, call_output) that it uses;
 * in a file of its own because it is a responsibility of its own: the handle, not the bytes. */

/* A resident script's STDOUT as a PerlIO layer of the output's own (issue 16), as mod_perl's
 * STDOUT is its :Apache2 layer: a print through the tie cost 3.1k instructions (perl's tie
 * call, then the C PRINT's lookups), against 0.5k under mod_perl. The handle is this layer
 * under perl's own buffer (:perlio), so a print is perl copying bytes, and the output takes
 * them in pieces of up to 8 KiB, when the script flushes ($| on), when a process is made
 * (perl flushes every handle first) and when the request ends. While a request object ($r)
 * answers for the output, the buffer goes: its methods add to the output directly, and a
 * print must be there before them, as under mod_perl. Being a real handle, STDOUT can be
 * duplicated (`open my $save, '>&STDOUT'`), takes a format's `write`, and tells how many
 * bytes went out, as a pipe does under mod_cgi. */
typedef struct {
    struct _PerlIO base;
    SV *out;          /* A counted reference to the output */
    Off_t written;    /* Bytes taken, which tell reports */
} PerlIOOutput;

static HV *
layer_output(PerlIOOutput *l)
{
    return l->out && SvROK(l->out) ? (HV *)SvRV(l->out) : NULL;
}

/* The duplicates of the output's handle (`open my $save, '>&STDOUT'`) count on it: the output
 * closes when the last of its handles closes (a script that saved STDOUT and reopened it on a
 * file has its response still), and a handle that closes while the count is 0 is the last */
static void
closing(pTHX_ HV *h)
{
    SV **count = fetch_key(aTHX_ h, K_HANDLES, 0);
    if (count && SvIV(*count) > 0) sv_setiv(*count, SvIV(*count) - 1);
    else store_key(aTHX_ h, K_CLOSED, newSViv(1));
}

static IV
output_pushed(pTHX_ PerlIO *f, const char *mode, SV *arg, PerlIO_funcs *tab)
{
    PerlIOOutput *l = PerlIOSelf(f, PerlIOOutput);
    if (!arg || !SvROK(arg) || SvTYPE(SvRV(arg)) != SVt_PVHV || !SvOBJECT(SvRV(arg))) {
        SETERRNO(EINVAL, LIB_INVARG);    /* binmode STDOUT, ':perennial' by a script */
        return -1;
    }
    l->out     = newRV_inc(SvRV(arg));
    l->written = 0;
    return PerlIOBase_pushed(aTHX_ f, mode, NULL, tab);
}

static IV
output_popped(pTHX_ PerlIO *f)
{
    PerlIOOutput *l = PerlIOSelf(f, PerlIOOutput);
    SV *out = l->out;
    l->out = NULL;
    SvREFCNT_dec(out);
    return PerlIOBase_popped(aTHX_ f);
}

static SSize_t
output_write(pTHX_ PerlIO *f, const void *bytes, Size_t count)
{
    PerlIOOutput *l = PerlIOSelf(f, PerlIOOutput);
    HV *h = layer_output(l);
    if (!h || !(PerlIOBase(f)->flags & PERLIO_F_CANWRITE)) {
        SETERRNO(EBADF, SS_IVCHAN);
        return -1;
    }
    if (!count) return 0;
    if (!add_bytes(aTHX_ l->out, h, (const char *)bytes, count)) {
        SETERRNO(EPIPE, SS_IVCHAN);    /* The response takes no more: closed, or bad */
        return -1;
    }
    l->written += count;
    return (SSize_t)count;
}

/* A flush sends what the output has when the script asked for it ($| on the selected handle,
 * as the tie's print looked at it); the flush perl makes before a process starts only hands
 * the bytes over, so that they keep their place before the process's */
static IV
output_flush(pTHX_ PerlIO *f)
{
    HV *h = layer_output(PerlIOSelf(f, PerlIOOutput));
    if (h && autoflush(aTHX) && (IS_SET(h, K_HEADERS) || head_pending(aTHX_ h))
        && !IS_SET(h, K_LOCAL)
        && !IS_SET(h, K_CLOSED))
        (void)call_output(aTHX_ PerlIOSelf(f, PerlIOOutput)->out, "flush", NULL);
    return 0;
}

static IV
output_close(pTHX_ PerlIO *f)
{
    HV *h   = layer_output(PerlIOSelf(f, PerlIOOutput));
    IV code = PerlIOBase_close(aTHX_ f);
    if (h) closing(aTHX_ h);
    return code;
}

static SV *
output_getarg(pTHX_ PerlIO *f, CLONE_PARAMS *param, int flags)
{
    PerlIOOutput *l = PerlIOSelf(f, PerlIOOutput);
    PERL_UNUSED_ARG(param);
    PERL_UNUSED_ARG(flags);
    return l->out ? newSVsv(l->out) : newSV(0);
}

/* A duplicate on the same output; none for a thread perl starts (param set: a copy of every
 * handle for the new interpreter), which must not touch the output of this one's request */
static PerlIO *
output_dup(pTHX_ PerlIO *f, PerlIO *o, CLONE_PARAMS *param, int flags)
{
    HV *h = layer_output(PerlIOSelf(o, PerlIOOutput));
    SV **count;
    if (param) {
        SETERRNO(EBADF, SS_IVCHAN);
        return NULL;
    }
    f = PerlIOBase_dup(aTHX_ f, o, param, flags);
    if (f && h && (count = fetch_key(aTHX_ h, K_HANDLES, 1)))
        sv_setiv(*count, (SvOK(*count) ? SvIV(*count) : 0) + 1);
    return f;
}

/* No descriptor: a process the script makes writes to the files the output lends it
 * (Perennial::Executor::Children) */
static IV
output_fileno(pTHX_ PerlIO *f)
{
    PERL_UNUSED_ARG(f);
    return -1;
}

static Off_t
output_tell(pTHX_ PerlIO *f)
{
    return PerlIOSelf(f, PerlIOOutput)->written;
}

static IV
output_seek(pTHX_ PerlIO *f, Off_t offset, int whence)
{
    PERL_UNUSED_ARG(f);
    PERL_UNUSED_ARG(offset);
    PERL_UNUSED_ARG(whence);
    SETERRNO(ESPIPE, LIB_INVARG);    /* A response is a stream */
    return -1;
}

PERLIO_FUNCS_DECL(PerlIO_output) = {
    sizeof(PerlIO_funcs), "perennial", sizeof(PerlIOOutput), PERLIO_K_RAW,
    output_pushed, output_popped, NULL, PerlIOBase_binmode, output_getarg, output_fileno,
    output_dup, NULL, NULL, output_write, output_seek, output_tell, output_close, output_flush,
    NULL, PerlIOBase_eof, PerlIOBase_error, PerlIOBase_clearerr, PerlIOBase_setlinebuf,
    NULL, NULL, NULL, NULL, NULL
};

/* The lowest layer of a handle */
static PerlIO *
bottom_of(PerlIO *f)
{
    while (PerlIOValid(PerlIONext(f))) f = PerlIONext(f);
    return f;
}

/* Whether a handle is the output's: this layer at its bottom, for out (or any output) */
static int
is_output(pTHX_ PerlIO *f, SV *out)
{
    PerlIO *b;
    PerlIOOutput *l;
    if (!PerlIOValid(f)) return 0;
    b = bottom_of(f);
    if (PerlIOBase(b)->tab != PERLIO_FUNCS_CAST(&PerlIO_output)) return 0;
    l = PerlIOSelf(b, PerlIOOutput);
    return !out || (l->out && SvROK(out) && SvRV(l->out) == SvRV(out));
}

/* A request's STDOUT, as Handles (xs/Handles.xs) opens and closes it (xs/OutputApi.h). The
 * handle of the process's one STDOUT IO is kept from one request to the next (no handle to
 * make, push and free, and no buffer to allocate, each request), idle between them: this
 * layer, with no output, under perl's buffer, nothing else pushed. */
#include "OutputApi.h"

/* Whether a handle is in the shape it is kept in: perl's buffer on this layer, nothing else */
static int
idle_shape(pTHX_ PerlIO *f)
{
    PerlIO *b;
    if (!PerlIOValid(f) || PerlIOBase(f)->tab != PERLIO_FUNCS_CAST(&PerlIO_perlio)) return 0;
    b = PerlIONext(f);
    return PerlIOValid(b) && PerlIOBase(b)->tab == PERLIO_FUNCS_CAST(&PerlIO_output)
        && !PerlIOValid(PerlIONext(b));
}

/* The idle handle's buffer layer, if io has one: kept in shape, on no output */
static PerlIO *
idle_handle(pTHX_ IO *io)
{
    PerlIO *f = IoOFP(io);
    if (!f || !idle_shape(aTHX_ f) || PerlIOSelf(PerlIONext(f), PerlIOOutput)->out) return NULL;
    return f;
}

/* A handle whose every layer a script popped (`binmode STDOUT, ':pop'` twice) is no handle:
 * perl counts its place as free and gives it to the next handle opened */
static void
forget_emptied(pTHX_ IO *io)
{
    if (io && IoOFP(io) && !PerlIOValid(IoOFP(io))) {
        IoIFP(io) = IoOFP(io) = NULL;
        IoTYPE(io)            = IoTYPE_CLOSED;
    }
}

static int
api_idle(pTHX_ IO *io)
{
    forget_emptied(aTHX_ io);
    return io && (!IoOFP(io) || idle_handle(aTHX_ io)) ? 1 : 0;
}

/* Gives io a handle on out: its idle one, or a new one (the layer, under perl's buffer unless
 * a request object answers for the output). False, with errno, if none could be made. */
static int
api_attach(pTHX_ IO *io, SV *out)
{
    PerlIO *f = idle_handle(aTHX_ io), *b;
    HV *h     = (HV *)SvRV(out);
    if (f && !IS_SET(h, K_REQUEST)) {
        b = PerlIONext(f);
        PerlIOSelf(b, PerlIOOutput)->out     = newRV_inc((SV *)h);
        PerlIOSelf(b, PerlIOOutput)->written = 0;
        PerlIOSelf(f, PerlIOBuf)->posn       = 0;    /* tell, as on a new handle */
        if (PerlIOBase(f)->flags & PERLIO_F_WRBUF)    /* Printed while idle: to no request */
            PerlIOSelf(f, PerlIOBuf)->ptr = PerlIOSelf(f, PerlIOBuf)->end = PerlIOSelf(f, PerlIOBuf)->buf;
        PerlIOBase(f)->flags &= ~(PERLIO_F_UTF8 | PERLIO_F_ERROR | PERLIO_F_EOF | PERLIO_F_WRBUF);
        return 1;
    }
    if (IoOFP(io)) (void)PerlIO_close(IoOFP(io));    /* Idle, but a request object's turn */
    IoIFP(io) = IoOFP(io) = NULL;
    if (!(f = PerlIO_allocate(aTHX))) return 0;
    if (!PerlIO_push(aTHX_ f, PERLIO_FUNCS_CAST(&PerlIO_output), "w", out)) return 0;
    if (!IS_SET(h, K_REQUEST)
        && !PerlIO_push(aTHX_ f, PERLIO_FUNCS_CAST(&PerlIO_perlio), "w", NULL)) {
        PerlIO_close(f);
        return 0;
    }
    IoIFP(io) = IoOFP(io) = f;
    IoTYPE(io)            = IoTYPE_WRONLY;
    return 1;
}

/* The request ended: io's handle on out (if it has one) gives the output what its buffer holds
 * and goes idle, in its shape still, or closes; and the output takes nothing more, from any
 * handle (a duplicate of STDOUT a script kept in a global would otherwise write into a
 * response that is over). True when io has a handle that is not an output's: a file the
 * script opened on it itself. */
static int
api_detach(pTHX_ IO *io, SV *out)
{
    PerlIO *f;
    PerlIOOutput *l;
    SV *was;
    int own = 0;
    forget_emptied(aTHX_ io);    /* Then f is a handle, or none */
    f = io ? IoOFP(io) : NULL;
    if (f && !is_output(aTHX_ f, NULL)) own = 1;
    else if (f && is_output(aTHX_ f, out)) {
        l = PerlIOSelf(bottom_of(f), PerlIOOutput);
        if (idle_shape(aTHX_ f) && PerlIO_flush(f) == 0
            && !(PerlIOBase(f)->flags & PERLIO_F_ERROR)) {
            was    = l->out;    /* Its bytes are in: idle, for the next request */
            l->out = NULL;
            SvREFCNT_dec(was);
        }
        else {
            (void)PerlIO_close(f);
            IoIFP(io) = IoOFP(io) = NULL;
            IoTYPE(io)            = IoTYPE_CLOSED;
        }
    }
    if (SvROK(out) && SvTYPE(SvRV(out)) == SVt_PVHV)
        store_key(aTHX_ (HV *)SvRV(out), K_CLOSED, newSViv(1));
    return own;
}

static struct output_api output_api = {api_attach, api_detach, api_idle};

/* The IO of *main::STDOUT now (a `local *STDOUT` gives the glob another GP), found in the
 * calling interpreter's own symbol table */
static IO *
stdout_io(pTHX)
{
    GV *gv = gv_fetchpvs("main::STDOUT", 0, SVt_PVIO);
    return gv ? GvIO(gv) : NULL;
}

/* syswrite on the output's handle, which has no descriptor: the bytes go to the output after
 * what perl's buffer holds, as through the tie (mod_perl's layer drops them). Perl's own rules
 * for its arguments. */
static OP *(*next_ck_syswrite)(pTHX_ OP *);

static OP *
syswrite_output(pTHX_ PerlIO *f)
{
    dSP;
    dMARK;
    dORIGMARK;
    SV *bufsv;
    const char *buf;
    STRLEN blen;
    IV length, offset = 0;
    SSize_t done;
    PerlIO *b = bottom_of(f);
    MARK++;    /* The handle */
    bufsv = *++MARK;
    SETERRNO(0, 0);
    if (PerlIO_isutf8(f)) Perl_croak(aTHX_ "syswrite() isn't allowed on :utf8 handles");
    buf = SvPV_const(bufsv, blen);    /* First, as perl reads it: magic and overloading */
    if (DO_UTF8(bufsv)) {
        SV *bytes = newSVpvn_flags(buf, blen, SVf_UTF8 | SVs_TEMP);
        if (!sv_utf8_downgrade(bytes, TRUE)) Perl_croak(aTHX_ "Wide character in syswrite");
        buf = SvPV_const(bytes, blen);
    }
    length = (IV)blen;
    if (MARK < SP) {
        length = SvIVx(*++MARK);
        if (length < 0) Perl_croak(aTHX_ "Negative length");
    }
    if (MARK < SP) {
        offset = SvIVx(*++MARK);
        if (offset < 0) {
            if (-offset > (IV)blen) Perl_croak(aTHX_ "Offset outside string");
            offset += (IV)blen;
        }
        else if (offset > (IV)blen) Perl_croak(aTHX_ "Offset outside string");
    }
    if (length > (IV)blen - offset) length = (IV)blen - offset;
    SP = ORIGMARK;
    PUTBACK;
    done = PerlIO_flush(f) == 0 ? output_write(aTHX_ b, buf + offset, (Size_t)length) : -1;
    SPAGAIN;
    if (done < 0) PUSHs(&PL_sv_undef);
    else mPUSHi(done);
    RETURN;
}

static OP *
pp_syswrite_output(pTHX)
{
    SV **mark = PL_stack_base + TOPMARK;
    GV *gv    = mark + 1 < PL_stack_sp ? (GV *)mark[1] : NULL;
    IO *io    = gv && isGV_with_GP(gv) ? GvIO(gv) : NULL;
    PerlIO *f = io && !SvTIED_mg((SV *)io, PERL_MAGIC_tiedscalar) ? IoOFP(io) : NULL;
    if (f && is_output(aTHX_ f, NULL)) return syswrite_output(aTHX_ f);
    return PL_ppaddr[OP_SYSWRITE](aTHX);
}

static OP *
ck_syswrite(pTHX_ OP *o)
{
    o = next_ck_syswrite(aTHX_ o);
    if (o->op_type == OP_SYSWRITE) o->op_ppaddr = pp_syswrite_output;
    return o;
}
