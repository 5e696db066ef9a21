/* outfile.c — whole-or-nothing output files (see outfile.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sim/base/outfile.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- temporary-file registry ----------------------------------------------------------------- */

enum { SLOT_FREE, SLOT_FILLING, SLOT_TRACKED };

static struct {
    atomic_int state;
    char path[SIM_OUTFILE_PATH_MAX + 16];
} tracked[SIM_OUTFILE_TRACK_MAX];

void sim_outfile_track(const char *tmp)
{
    if (strlen(tmp) >= sizeof tracked[0].path) return;
    for (int i = 0; i < SIM_OUTFILE_TRACK_MAX; i++) {
        int free_slot = SLOT_FREE;
        if (atomic_compare_exchange_strong(&tracked[i].state, &free_slot, SLOT_FILLING)) {
            strcpy(tracked[i].path, tmp);
            atomic_store(&tracked[i].state, SLOT_TRACKED);
            return;
        }
    }
}

int sim_outfile_mkstemp(char *tmpl)
{
    sigset_t hold, old;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    sigaddset(&hold, SIGTERM);
    sigaddset(&hold, SIGHUP);
    sigprocmask(SIG_BLOCK, &hold, &old);
    int fd = mkstemp(tmpl);
    int e = errno;
    if (fd >= 0) sim_outfile_track(tmpl);
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return fd;
}

void sim_outfile_untrack(const char *tmp)
{
    for (int i = 0; i < SIM_OUTFILE_TRACK_MAX; i++)
        if (atomic_load(&tracked[i].state) == SLOT_TRACKED && !strcmp(tracked[i].path, tmp)) {
            atomic_store(&tracked[i].state, SLOT_FREE);
            return;
        }
}

void sim_outfile_cleanup(void)
{
    for (int i = 0; i < SIM_OUTFILE_TRACK_MAX; i++)
        if (atomic_load(&tracked[i].state) == SLOT_TRACKED) unlink(tracked[i].path);
}

/* ---- where the data goes --------------------------------------------------------------------- */

/* Fills o->path with PATH, a symbolic link followed, and says whether it is written in place
 * (*in_place = 1: a device, FIFO or socket) or replaced whole through a temporary file. */
static int resolve(sim_outfile *o, const char *path, int *in_place, sim_err *err)
{
    struct stat st;
    *in_place = 0;
    if (strlen(path) >= sizeof o->path)
        return sim_err_set(err, SIM_EINVAL, path, 0, 0, "path too long");
    strcpy(o->path, path);
    if (lstat(path, &st) != 0)
        return errno == ENOENT
                   ? SIM_OK
                   : sim_err_set(err, SIM_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
    if (S_ISLNK(st.st_mode)) {
        char resolved[PATH_MAX];
        if (!realpath(path, resolved))
            return sim_err_set(err, SIM_EIO, path, 0, 0,
                               "cannot write through the symbolic link: %s", strerror(errno));
        if (strlen(resolved) >= sizeof o->path)
            return sim_err_set(err, SIM_EINVAL, path, 0, 0, "link target path too long");
        strcpy(o->path, resolved);
        if (stat(o->path, &st) != 0)
            return sim_err_set(err, SIM_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
    }
    if (S_ISDIR(st.st_mode))
        return sim_err_set(err, SIM_EINVAL, path, 0, 0, "is a directory, not a file");
    *in_place = !S_ISREG(st.st_mode);
    return SIM_OK;
}

/* Creates the empty temporary file beside o->path, mode 0666 & ~umask, registered for cleanup;
 * returns its descriptor or a negative SIM_E* code. */
static int make_temp(sim_outfile *o, sim_err *err)
{
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", o->path);
    int fd = sim_outfile_mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        o->tmp[0] = 0;
        return sim_err_set(err, e == ENOENT ? SIM_ENOENT : SIM_EIO, o->path, 0, 0,
                           "cannot create: %s", strerror(e));
    }
    /* mkstemp creates 0600. The umask is read by setting it and back: output files are opened
     * from the CLI's one thread. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        int e = errno;
        close(fd);
        sim_outfile_finish(o, 0, NULL);
        return sim_err_set(err, SIM_EIO, o->path, 0, 0, "cannot set mode: %s", strerror(e));
    }
    return fd;
}

int sim_outfile_prepare(sim_outfile *o, const char *path, sim_err *err)
{
    memset(o, 0, sizeof *o);
    int in_place;
    int rc = resolve(o, path, &in_place, err);
    if (rc || in_place) return rc;
    int fd = make_temp(o, err);
    if (fd < 0) return fd;
    close(fd);
    return SIM_OK;
}

int sim_outfile_finish(sim_outfile *o, int ok, sim_err *err)
{
    if (!o->tmp[0]) return SIM_OK;
    int rc = SIM_OK;
    if (ok && rename(o->tmp, o->path) != 0)
        rc = sim_err_set(err, SIM_EIO, o->path, 0, 0, "cannot write: %s", strerror(errno));
    if (!ok || rc) unlink(o->tmp);
    sim_outfile_untrack(o->tmp);
    o->tmp[0] = 0;
    return rc;
}

int sim_outfile_open(sim_outfile *o, const char *path, sim_err *err)
{
    memset(o, 0, sizeof *o);
    if (!strcmp(path, "-")) {
        o->fp = stdout;
        o->is_stdout = 1;
        return SIM_OK;
    }
    int in_place;
    int rc = resolve(o, path, &in_place, err);
    if (rc) return rc;
    if (in_place) {
        if (!(o->fp = fopen(o->path, "w")))
            return sim_err_set(err, SIM_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
        return SIM_OK;
    }
    int fd = make_temp(o, err);
    if (fd < 0) return fd;
    if (!(o->fp = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        sim_outfile_finish(o, 0, NULL);
        return sim_err_set(err, SIM_EIO, path, 0, 0, "cannot open: %s", strerror(e));
    }
    return SIM_OK;
}

/* Flushes and closes fp; 0 or the errno of the first failure (EIO when a write failed earlier
 * without one). */
static int close_checked(FILE *fp)
{
    int e = 0;
    if (fflush(fp) != 0)
        e = errno;
    else if (ferror(fp))
        e = EIO;
    if (fclose(fp) != 0 && !e) e = errno;
    return e;
}

int sim_outfile_commit(sim_outfile *o, sim_err *err)
{
    if (o->is_stdout) {
        if (fflush(stdout) != 0 || ferror(stdout))
            return sim_err_set(err, SIM_EIO, "standard output", 0, 0, "write failed: %s",
                               strerror(errno ? errno : EIO));
        return SIM_OK;
    }
    int e = close_checked(o->fp);
    o->fp = NULL;
    if (e) {
        sim_outfile_finish(o, 0, NULL);
        return sim_err_set(err, SIM_EIO, o->path, 0, 0, "cannot write: %s", strerror(e));
    }
    return sim_outfile_finish(o, 1, err);
}

void sim_outfile_abort(sim_outfile *o)
{
    if (o->is_stdout || !o->fp) return;
    fclose(o->fp);
    o->fp = NULL;
    sim_outfile_finish(o, 0, NULL);
}

int sim_outfile_close_stdout(void)
{
    errno = 0;
    int e = close_checked(stdout);
    if (!e) return 0;
    fprintf(stderr, "epochsim: error writing standard output: %s\n", strerror(e));
    return 1;
}
