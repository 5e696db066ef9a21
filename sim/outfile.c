/* outfile.c — whole-or-nothing output files (see outfile.h). */
#include "sim/outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sim_outfile_temp(const char *path, char *tmp, size_t tmp_size, sim_err *err)
{
    if ((size_t)snprintf(tmp, tmp_size, "%s.tmp.XXXXXX", path) >= tmp_size)
        return sim_err_set(err, SIM_EINVAL, path, 0, 0, "path too long");
    int fd = mkstemp(tmp);
    if (fd < 0)
        return sim_err_set(err, SIM_EIO, path, 0, 0, "cannot create: %s", strerror(errno));
    /* mkstemp creates 0600. The umask is read by setting it and back: output files are opened
     * from the CLI's one thread. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return sim_err_set(err, SIM_EIO, path, 0, 0, "cannot set mode: %s", strerror(e));
    }
    return fd;
}

int sim_outfile_open(sim_outfile *o, const char *path, sim_err *err)
{
    memset(o, 0, sizeof *o);
    if (!strcmp(path, "-")) {
        o->fp = stdout;
        o->is_stdout = 1;
        return SIM_OK;
    }
    if (strlen(path) >= sizeof o->path)
        return sim_err_set(err, SIM_EINVAL, path, 0, 0, "path too long");
    strcpy(o->path, path);
    int fd = sim_outfile_temp(path, o->tmp, sizeof o->tmp, err);
    if (fd < 0)
        return fd;
    o->fp = fdopen(fd, "w");
    if (!o->fp) {
        close(fd);
        unlink(o->tmp);
        return sim_err_set(err, SIM_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    }
    return SIM_OK;
}

int sim_outfile_commit(sim_outfile *o, sim_err *err)
{
    if (o->is_stdout)
        return fflush(stdout) ? sim_err_set(err, SIM_EIO, "stdout", 0, 0, "write failed") : 0;
    int bad = ferror(o->fp);
    bad |= fclose(o->fp) != 0;
    o->fp = NULL;
    if (bad || rename(o->tmp, o->path) != 0) {
        int e = errno;
        unlink(o->tmp);
        return sim_err_set(err, SIM_EIO, o->path, 0, 0, "cannot write: %s", strerror(e));
    }
    return SIM_OK;
}

void sim_outfile_abort(sim_outfile *o)
{
    if (o->is_stdout || !o->fp)
        return;
    fclose(o->fp);
    o->fp = NULL;
    unlink(o->tmp);
}
