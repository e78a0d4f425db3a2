/* A known script's file, looked at again on each request (PerlScriptCheck Always, issue 16):
 * Time::HiRes' stat in Perl makes a list of thirteen values to keep four, about 10k
 * instructions a request; here one stat(2) writes the four into the hit. The values are the
 * ones Time::HiRes gives: the modification and change times to the nanosecond as a number
 * when they have a fraction (seconds + nanoseconds / 1e9, its own sum), a whole number
 * otherwise. The Perl twin is pp_restat in lib/Perennial/Executor/Resolver.pm;
 * t/scripts/restat.t compares the two. */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"
#include <string.h>
#include <sys/stat.h>

MODULE = Perennial::Executor::Resolver    PACKAGE = Perennial::Executor::Resolver

PROTOTYPES: DISABLE

# Whether the hit's file is still a regular file with the inode it had; if so, its mtime, ctime,
# size and mode are written into the hit
int
xs_restat(hit)
    HV *hit
  PREINIT:
    SV **file, **ino;
    const char *path;
    STRLEN len;
    struct stat st;
  CODE:
    RETVAL = 0;
    file = hv_fetchs(hit, "file", 0);
    ino  = hv_fetchs(hit, "ino", 0);
    if (file && ino && SvOK(*file)) {
        path = SvPV(*file, len);
        if (strlen(path) == len && stat(path, &st) == 0 && S_ISREG(st.st_mode)
            && SvOK(*ino) && (UV)st.st_ino == SvUV(*ino)) {
            (void)hv_stores(hit, "mtime", st.st_mtim.tv_nsec
                ? newSVnv((NV)st.st_mtime + (NV)st.st_mtim.tv_nsec / 1e9)
                : newSViv((IV)st.st_mtime));
            (void)hv_stores(hit, "ctime", st.st_ctim.tv_nsec
                ? newSVnv((NV)st.st_ctime + (NV)st.st_ctim.tv_nsec / 1e9)
                : newSViv((IV)st.st_ctime));
            (void)hv_stores(hit, "size", newSViv((IV)st.st_size));
            (void)hv_stores(hit, "mode", newSVuv((UV)st.st_mode));
            RETVAL = 1;
        }
    }
  OUTPUT:
    RETVAL
