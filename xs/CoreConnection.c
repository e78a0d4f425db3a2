/* A connection's handle and its client, and the wait for a descriptor, in C: included by
 * Core.xs. */

/* This process's id, asked of the kernel once: perl's $$ asks on every read (glibc keeps no
 * copy since 2.25), and a script request read it twice. A fork forgets it in the child. */
static pid_t cached_pid = 0;

static void
forget_pid(void)
{
    cached_pid = 0;
}

/* An IPv4 address as inet_ntop writes it (which formats it through sprintf, 1.7k instructions) */
static void
ipv4_text(char *text, const unsigned char *b)
{
    int i;
    for (i = 0; i < 4; i++) {
        unsigned v = b[i];
        if (v >= 100) *text++ = '0' + v / 100;
        if (v >= 10) *text++ = '0' + v / 10 % 10;
        *text++ = '0' + v % 10;
        *text++ = i < 3 ? '.' : '\0';
    }
}

/* The connection's own keys of a request's environment: psgix.io, and the client's address
 * and port (REMOTE_ADDR, REMOTE_PORT) unless it came on a Unix socket */
static HV *
peer_env(pTHX_ SV *handle, struct sockaddr_storage *addr)
{
    HV *peer = newHV();
    char text[INET6_ADDRSTRLEN];
    const char *ip = NULL;
    int port = 0;
    (void)hv_stores(peer, "psgix.io", newSVsv(handle));
    if (addr->ss_family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)addr;
        ipv4_text(text, (const unsigned char *)&in->sin_addr);
        ip   = text;
        port = ntohs(in->sin_port);
    }
    else if (addr->ss_family == AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)addr;
        ip   = inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
        port = ntohs(in6->sin6_port);
    }
    if (ip) {
        (void)hv_stores(peer, "REMOTE_ADDR", newSVpv(text, 0));
        (void)hv_stores(peer, "REMOTE_PORT", newSViv(port));
    }
    return peer;
}


/* The handle of the last connection, kept for the next one: a new handle costs perl about 8k
 * instructions, most of them in making its IO object, which empties perl's cache of class
 * names (each `Class->method` after it looks its class up again). It is used again only when
 * nothing but this holds it (no application kept it, nor aliased a glob of its own to it:
 * the glob's own count), it was closed, not blessed, and nothing was put in the glob; else it
 * is let go (closing it, when nothing did) and a new one made. */
static GV *kept_handle = NULL;

/* A glob for a handle, as perl's anonymous ones */
static GV *
new_glob(pTHX)
{
    static HV *stash = NULL;
    GV *gv;
    if (!stash) stash = gv_stashpvs("Perennial::HTTP::Core", GV_ADD);
    gv = (GV *)newSV(0);
    gv_init_pvn(gv, stash, "__ANONIO__", 10, 0);
    return gv;
}

static GV *
spare_handle(pTHX)
{
    GV *gv = kept_handle;
    IO *io;
    if (gv) {
        io = GvIOp(gv);
        if (SvREFCNT(gv) == 1 && GvREFCNT(gv) == 1 && !SvOBJECT(gv) && !SvMAGICAL(gv) && io
            && SvREFCNT(io) == 1 && !SvMAGICAL(io)
            && !IoIFP(io) && !IoOFP(io) && !IoDIRP(io) && !GvAV(gv) && !GvHV(gv) && !GvCV(gv)
            && !GvFORM(gv) && !(GvSV(gv) && SvOK(GvSV(gv)))) {
            IoLINES(io) = 0;
            IoPAGE(io) = 0;
            IoLINES_LEFT(io) = 0;
            IoFLAGS(io) = 0;
            return gv;
        }
        kept_handle = NULL;
        SvREFCNT_dec((SV *)gv);
    }
    return kept_handle = new_glob(aTHX);
}

/* The :unix layer's state, as perlio.c declares it for itself (perl's headers do not): the
 * layer's head, the descriptor and the open(2) flags it was opened with */
typedef struct {
    struct _PerlIO base;
    int fd;
    int oflags;
} unix_layer;

/* A descriptor accept4 made close-on-exec already, as one unbuffered stream for reading and
 * writing: what PerlIO_openn(":unix") makes of it, without the fcntl that sets close-on-exec
 * again (one system call a connection); made by PerlIO_openn after all by a perl whose layer
 * is not of that size. NULL if perl cannot make the stream. */
static PerlIO *
socket_stream(pTHX_ int fd)
{
    PerlIO *f;
    if (PerlIO_unix.size != sizeof(unix_layer))
        return PerlIO_openn(aTHX_ ":unix", "r+", fd, 0, 0, NULL, 0, NULL);
    f = PerlIO_allocate(aTHX);
    if (!f || !(f = PerlIO_push(aTHX_ f, PERLIO_FUNCS_CAST(&PerlIO_unix), "r+", NULL)))
        return NULL;
    PerlIOSelf(f, unix_layer)->fd = fd;
    PerlIOSelf(f, unix_layer)->oflags = 0;    /* As PerlIO_openn's, given no open flags */
    PerlIOUnix_refcnt_inc(fd);
    return f;
}

/* A connection, as perl's accept() gives it but as one unbuffered stream for reading and
 * writing: perl opens two buffered ones, each asking the kernel three questions (fcntl, ioctl,
 * lseek) a socket never needs answered. Its handle (a mortal reference) and, in *peer, the
 * connection's keys of a request's environment; NULL, errno set, when there is none. */
static SV *
accept_connection(pTHX_ int listener, HV **peer)
{
    struct sockaddr_storage addr;
    socklen_t len = sizeof addr;
    int fd, saved_errno;
    PerlIO *f;
    GV *gv;
    IO *io;
    SV *handle;

    fd = accept4(listener, (struct sockaddr *)&addr, &len, SOCK_CLOEXEC);
    if (fd < 0) return NULL;
    f = socket_stream(aTHX_ fd);
    if (!f) {
        saved_errno = errno;
        close(fd);
        errno = saved_errno;
        return NULL;
    }
    gv = spare_handle(aTHX);
    io = GvIOn(gv);
    IoIFP(io) = f;
    IoOFP(io) = f;
    IoTYPE(io) = IoTYPE_SOCKET;
    handle = sv_2mortal(newRV_inc((SV *)gv));
    *peer = peer_env(aTHX_ handle, &addr);
    return handle;
}

/* Whether a descriptor can be read (or has ended), or with write can take more, before the
 * deadline (an epoch time; one look when it has passed); a signal does not cut the wait */
static int
fd_ready(pTHX_ int fd, NV until, IV write)
{
    struct pollfd pfd;
    struct timeval now;
    NV left;
    int n;
    pfd.fd = fd;
    pfd.events = write ? POLLOUT : POLLIN;
    while (1) {
        gettimeofday(&now, NULL);
        left = until - (now.tv_sec + now.tv_usec / 1e6);
        pfd.revents = 0;
        /* Milliseconds, a wait past 24 days cut to it (poll takes an int) */
        n = poll(&pfd, 1, left <= 0 ? 0 : left > 2000000 ? 2000000000 : (int)(left * 1000 + 0.999));
        if (n > 0) return 1;
        if (n == 0 || errno != EINTR) return 0;
        PERL_ASYNC_CHECK();    /* Perl's handlers run now, as after select in Perl */
    }
}
