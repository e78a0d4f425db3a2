/* For bench/pages.pl --from-fork, preloaded (LD_PRELOAD) into the server it watches: a fault
 * in a write-protected page must reach bench/xs/PageWrites.xs's handler, and a SIGSEGV that
 * comes while it is blocked kills the process instead. POSIX::sigaction blocks every signal
 * while it installs a handler, and perl blocks a signal while it sets its %SIG entry, both
 * through these two calls; here they block all that was asked but SIGSEGV. (glibc's own
 * short blocks of every signal, in raise() for one, do not go through them.) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>

typedef int (*mask_call)(int, const sigset_t *, sigset_t *);

static int
without_segv(mask_call real, int how, const sigset_t *set, sigset_t *old)
{
    sigset_t copy;
    if (set && how != SIG_UNBLOCK) {
        copy = *set;
        sigdelset(&copy, SIGSEGV);
        set = &copy;
    }
    return real(how, set, old);
}

int
sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    static mask_call real;
    if (!real) real = (mask_call)dlsym(RTLD_NEXT, "sigprocmask");
    return without_segv(real, how, set, old);
}

int
pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    static mask_call real;
    if (!real) real = (mask_call)dlsym(RTLD_NEXT, "pthread_sigmask");
    return without_segv(real, how, set, old);
}
