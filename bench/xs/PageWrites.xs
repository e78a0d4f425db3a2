/* Which lines of Perl copy the pages a worker shares with its manager (bench/pages.pl).
 *
 * Loaded in the manager (PerlModule), so every worker has it. A worker told to (a real-time
 * signal, SIGRTMIN+5) write-protects the pages of its heap that it still shares with the
 * manager: its first write to each then faults, and the handler notes the faulting address,
 * the Perl statement and op that were running, and the current phase, makes the page
 * writable again and lets the write happen. Each page faults once, so the run is barely
 * slower. The next SIGRTMIN+5 starts the next phase; SIGRTMIN+6 writes what was noted to
 * $PERENNIAL_PAGE_WRITES (a file the worker can write), through a file of the same name with
 * ".part" added, renamed once it is whole.
 *
 * A diagnostic, not a part of the server: a fault while all signals are blocked kills the
 * process (POSIX::sigaction blocks them all while it installs a handler, as a worker's start
 * does), which is why it arms only once the worker waits for requests, and why it is never
 * built by the Makefile. With $PERENNIAL_PAGE_WRITES_AT_FORK set, every child of the manager
 * arms as it is forked instead (pthread_atfork), its start then phase 0; bench/pages.pl
 * --from-fork preloads bench/xs/no-segv-block.c for that, so that SIGSEGV is never blocked. A kernel write into a
 * protected page (a read() into a buffer there: a request's body, a script's source, a file
 * perl reads through PerlIO) fails with EFAULT instead of faulting, and the request can fail:
 * bench/pages.pl checks every answer it gets. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <unistd.h>

#define MAX_NOTES 200000
#define PAGE 4096

struct note {
    uintptr_t addr;
    int phase;
    line_t line;
    U16 op;
    char file[96];
};

static struct note *notes;
static int count, phase, armed, again, protected_pages;
static uintptr_t heap_start, heap_end;
static char out_path[1024], part_path[1030];

/* The start of the heap, from the maps of the process loading the module */
static void
find_heap(void)
{
    char line[512];
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps) return;
    while (fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        if (strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) heap_start = lo;
    }
    fclose(maps);
}

/* Protects the runs of heap pages that are present and not the process's alone (pagemap's
 * bit 63, present; bit 56, mapped by this process only) */
static void
arm(void)
{
    static uint64_t entries[1 << 16];
    uintptr_t page;
    size_t n, i, run = 0;
    uintptr_t start = 0;
    int fd;
    heap_end = (uintptr_t)syscall(SYS_brk, 0);
    n = (heap_end - heap_start) / PAGE;
    if (n > sizeof entries / sizeof entries[0]) n = sizeof entries / sizeof entries[0];
    fd = open("/proc/self/pagemap", O_RDONLY);
    if (fd < 0) return;
    if (pread(fd, entries, n * 8, (off_t)(heap_start / PAGE * 8)) != (ssize_t)(n * 8)) n = 0;
    close(fd);
    for (i = 0; i <= n; i++) {
        int shared = i < n && (entries[i] >> 63 & 1) && !(entries[i] >> 56 & 1);
        page = heap_start + i * PAGE;
        if (shared) {
            if (!run++) start = page;
        }
        else if (run) {
            if (mprotect((void *)start, run * PAGE, PROT_READ) == 0) protected_pages += run;
            run = 0;
        }
    }
}

static void
on_fault(int sig, siginfo_t *info, void *context)
{
    uintptr_t addr = (uintptr_t)info->si_addr;
    if (addr >= heap_start && addr < heap_end) {
        if (count < MAX_NOTES) {
            dTHX;
            struct note *note = &notes[count++];
            const char *file = PL_curcop ? CopFILE(PL_curcop) : NULL;
            note->addr = addr;
            note->phase = phase;
            note->line = PL_curcop ? CopLINE(PL_curcop) : 0;
            note->op = PL_op ? PL_op->op_type : OP_NULL;
            note->file[0] = '\0';
            if (file) {
                size_t len = strlen(file);
                if (len >= sizeof note->file) file += len - (sizeof note->file - 1);
                strcpy(note->file, file);
            }
        }
        if (mprotect((void *)(addr & ~(uintptr_t)(PAGE - 1)), PAGE, PROT_READ | PROT_WRITE) == 0)
            return;
    }
    signal(SIGSEGV, SIG_DFL); /* Not ours, or not mendable: the fault again, as it would be */
}

/* Protects again every page noted so far: a later write to one is noted in its phase too */
static void
arm_again(void)
{
    int i;
    for (i = 0; i < count; i++)
        mprotect((void *)(notes[i].addr & ~(uintptr_t)(PAGE - 1)), PAGE, PROT_READ);
}

static void
on_phase(int sig)
{
    if (!armed++) arm();
    else {
        phase++;
        if (again) arm_again();
    }
}

static void
arm_at_fork(void)
{
    armed = 1;
    arm();
}

static void
on_write(int sig)
{
    char line[256];
    int i, len, fd = open(part_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    len = snprintf(line, sizeof line, "protected %d\n", protected_pages);
    if (write(fd, line, len) != len) {
        close(fd);
        return;
    }
    for (i = 0; i < count; i++) {
        len = snprintf(line, sizeof line, "%lx %d %s %u %s\n", (unsigned long)notes[i].addr,
                       notes[i].phase, notes[i].file[0] ? notes[i].file : "-",
                       (unsigned)notes[i].line, PL_op_name[notes[i].op]);
        if (write(fd, line, len) != len) {
            close(fd);
            return;
        }
    }
    if (close(fd) == 0) rename(part_path, out_path);
}

MODULE = Perennial::Bench::PageWrites    PACKAGE = Perennial::Bench::PageWrites

PROTOTYPES: DISABLE

void
install(path)
    const char *path
  CODE:
    struct sigaction sa;
    my_strlcpy(out_path, path, sizeof out_path);
    snprintf(part_path, sizeof part_path, "%s.part", out_path);
    notes = mmap(NULL, sizeof(struct note) * MAX_NOTES, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (notes == MAP_FAILED) croak("PageWrites: no memory for the notes");
    find_heap();
    if (!heap_start) croak("PageWrites: no [heap] in /proc/self/maps");
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    signal(SIGRTMIN + 5, on_phase);
    signal(SIGRTMIN + 6, on_write);
    again = getenv("PERENNIAL_PAGE_WRITES_AGAIN") != NULL;
    if (getenv("PERENNIAL_PAGE_WRITES_AT_FORK")) pthread_atfork(NULL, NULL, arm_at_fork);
