/* A CGI script started without copying the worker (issue 16): posix_spawn(3), which glibc
 * makes with a child that shares the worker's memory until it execs, instead of fork(2), which
 * copies the page tables of a worker of 40 MB and then the pages either side writes before the
 * exec. The Perl twin, pp_spawn in lib/Perennial/Executor/Spawn.pm, forks and execs; both give
 * the program the same descriptors, directory, environment and signals, and both say why it
 * could not start ($!) before they return. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"
#include <fcntl.h>
#include <spawn.h>
#include <signal.h>

/* A NULL-ended list of C strings, freed with the mortal SV that holds it */
static char **
string_list(pTHX_ SSize_t n)
{
    SV *hold = sv_2mortal(newSV((n + 1) * sizeof(char *)));
    char **list = (char **)SvPVX(hold);
    list[n] = NULL;
    return list;
}

/* A Perl string as a C string: its bytes up to a NUL (an environment or argument cannot hold
 * one), undef as the empty string; a character string as perl's %ENV stores it, one byte a
 * character where it can be, UTF-8 where it cannot */
static char *
c_string(pTHX_ SV *sv)
{
    if (!SvOK(sv)) return (char *)"";
    if (SvUTF8(sv)) {
        sv = sv_mortalcopy(sv);
        sv_utf8_downgrade(sv, TRUE);
    }
    return SvPV_nolen(sv);
}

/* A descriptor that is not 0, 1 or 2: one of those could be overwritten by the child's dup2
 * onto another before it is copied. A copy closed on exec, to be closed after the spawn (or
 * the descriptor itself, with *copy -1) */
static int
above_stdio(int fd, int *copy)
{
    *copy = fd >= 0 && fd < 3 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
    return *copy >= 0 ? *copy : fd;
}

static char **
argv_list(pTHX_ const char *file, AV *args)
{
    SSize_t n = av_len(args) + 1, i;
    char **argv = string_list(aTHX_ n + 1);
    argv[0] = (char *)file;
    for (i = 0; i < n; i++) {
        SV **a = av_fetch(args, i, 0);
        argv[i + 1] = a ? c_string(aTHX_ *a) : (char *)"";
    }
    return argv;
}

/* NAME=VALUE for each pair of the hash, made in one mortal buffer */
static char **
env_list(pTHX_ HV *env)
{
    SSize_t n = HvUSEDKEYS(env), i = 0;
    char **list = string_list(aTHX_ n);
    SV *text = sv_2mortal(newSVpvs(""));
    STRLEN *ends;
    HE *he;
    Newx(ends, n + 1, STRLEN);
    SAVEFREEPV(ends);
    hv_iterinit(env);
    while (i < n && (he = hv_iternext(env))) {
        STRLEN klen;
        const char *key = HePV(he, klen);
        char *value = c_string(aTHX_ HeVAL(he));
        sv_catpvn(text, key, strnlen(key, klen));
        sv_catpvn(text, "=", 1);
        sv_catpvn(text, value, strlen(value));
        sv_catpvn(text, "", 1);    /* The NUL that ends it */
        ends[i++] = SvCUR(text);
    }
    list[i] = NULL;
    while (i-- > 0) list[i] = SvPVX(text) + (i ? ends[i - 1] : 0);
    return list;
}

MODULE = Perennial::Executor::Spawn    PACKAGE = Perennial::Executor::Spawn

PROTOTYPES: DISABLE

# spawn($file, \@args, \%env, $dir, $in, $out, $err): see the Perl twin
SV *
xs_spawn(file, args_ref, env_ref, dir, in, out, err)
    const char *file
    SV *args_ref
    SV *env_ref
    const char *dir
    int in
    int out
    int err
  PREINIT:
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    sigset_t none, reset;
    struct sigaction ignore, was[3];
    char **argv, **envp;
    pid_t pid;
    int failed, copies[3], i;
  CODE:
    if (!SvROK(args_ref) || SvTYPE(SvRV(args_ref)) != SVt_PVAV)
        croak("spawn: the arguments are not an array reference");
    if (!SvROK(env_ref) || SvTYPE(SvRV(env_ref)) != SVt_PVHV)
        croak("spawn: the environment is not a hash reference");
    argv = argv_list(aTHX_ file, (AV *)SvRV(args_ref));
    envp = env_list(aTHX_ (HV *)SvRV(env_ref));
    in  = above_stdio(in, &copies[0]);
    out = above_stdio(out, &copies[1]);
    err = above_stdio(err, &copies[2]);
    posix_spawn_file_actions_init(&actions);
    failed = posix_spawn_file_actions_adddup2(&actions, in, 0);
    if (!failed) failed = posix_spawn_file_actions_adddup2(&actions, out, 1);
    if (!failed) failed = posix_spawn_file_actions_adddup2(&actions, err, 2);
    if (!failed) failed = posix_spawn_file_actions_addchdir_np(&actions, dir);

    /* The signals as Apache's CGI scripts start with them: none blocked, PIPE, INT and XFSZ
     * ignored (an ignored signal stays ignored across exec, and those are ignored in Apache's
     * children: the worker ignores them for the spawn, and has its own back after), the rest
     * at their default, FPE too, which perl ignores from its start and its own exec puts back.
     * (glibc's child leaves its two internal signals, 32 and 33, ignored.) */
    posix_spawnattr_init(&attr);
    sigemptyset(&none);
    sigemptyset(&reset);
    sigaddset(&reset, SIGFPE);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &reset);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &was[0]);
    sigaction(SIGINT, &ignore, &was[1]);
    sigaction(SIGXFSZ, &ignore, &was[2]);
    if (!failed) failed = posix_spawn(&pid, file, &actions, &attr, argv, envp);
    sigaction(SIGPIPE, &was[0], NULL);
    sigaction(SIGINT, &was[1], NULL);
    sigaction(SIGXFSZ, &was[2], NULL);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    for (i = 0; i < 3; i++)
        if (copies[i] >= 0) close(copies[i]);
    if (failed) {
        SETERRNO(failed, 0);
        RETVAL = &PL_sv_undef;
    }
    else RETVAL = newSViv(pid);
  OUTPUT:
    RETVAL
