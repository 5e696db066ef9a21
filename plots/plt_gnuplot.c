/* plt_gnuplot.c — a gnuplot process behind a pipe (see plt_gnuplot.h). SIGPIPE is ignored while
 * the pipe is open so that a gnuplot that dies early gives an error, not a killed epochsim. */
#include "plots/plt_gnuplot.h"

#include "sim/base/outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int plt_term_parse(const char *name, plt_term *t, sim_err *err)
{
    if (!strcmp(name, "png"))
        *t = PLT_TERM_PNG;
    else if (!strcmp(name, "svg"))
        *t = PLT_TERM_SVG;
    else if (!strcmp(name, "dumb"))
        *t = PLT_TERM_DUMB;
    else
        return sim_err_set(err, SIM_EUSAGE, "--term", 0, 0,
                           "unknown terminal '%s' (png, svg or dumb)", name);
    return SIM_OK;
}

int plt_term_from_path(const char *path, plt_term *t, sim_err *err)
{
    const char *dot = strrchr(path, '.');
    if (dot && !strcmp(dot, ".png"))
        *t = PLT_TERM_PNG;
    else if (dot && !strcmp(dot, ".svg"))
        *t = PLT_TERM_SVG;
    else
        return sim_err_set(err, SIM_EUSAGE, path, 0, 0,
                           "cannot tell the image format: name the file .png or .svg");
    return SIM_OK;
}

int plt_gnuplot_check(sim_err *err)
{
    const char *path = getenv("PATH");
    if (path) {
        const char *p = path;
        while (*p) {
            const char *colon = strchr(p, ':');
            size_t len = colon ? (size_t)(colon - p) : strlen(p);
            char buf[4096];
            if (len > 0 && len + sizeof "/gnuplot" < sizeof buf) {
                memcpy(buf, p, len);
                strcpy(buf + len, "/gnuplot");
                if (access(buf, X_OK) == 0) return SIM_OK;
            }
            if (!colon) break;
            p = colon + 1;
        }
    }
    return sim_err_set(err, SIM_ENOENT, NULL, 0, 0,
                       "gnuplot not found: install the Debian package gnuplot-nox");
}

void plt_quote(FILE *fp, const char *s)
{
    fputc('\'', fp);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', fp);
        if (*s != '\n') fputc(*s, fp);
    }
    fputc('\'', fp);
}

int plt_gnuplot_open(plt_gnuplot *g, plt_term term, const char *path, int width, int height,
                     sim_err *err)
{
    memset(g, 0, sizeof *g);
    g->term = term;
    int rc = plt_gnuplot_check(err);
    if (rc) return rc;
    if (path && strcmp(path, "-")) {
        if ((rc = sim_outfile_prepare(&g->out, path, err))) return rc;
        g->has_out = 1;
    }
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &g->old_pipe);
    fflush(stdout); /* gnuplot's dumb output shares our stdout */
    g->fp = popen("gnuplot", "w");
    if (!g->fp) {
        sigaction(SIGPIPE, &g->old_pipe, NULL);
        if (g->has_out) sim_outfile_finish(&g->out, 0, NULL);
        return sim_err_set(err, SIM_EIO, NULL, 0, 0, "cannot start gnuplot: %s", strerror(errno));
    }
    switch (term) {
    case PLT_TERM_PNG:
        fprintf(g->fp, "set terminal pngcairo size %d,%d enhanced font 'sans,10'\n",
                width > 0 ? width : 1000, height > 0 ? height : 600);
        break;
    case PLT_TERM_SVG:
        fprintf(g->fp, "set terminal svg size %d,%d enhanced font 'sans,10' background 'white'\n",
                width > 0 ? width : 1000, height > 0 ? height : 600);
        break;
    case PLT_TERM_DUMB:
        fprintf(g->fp, "set terminal dumb size %d,%d\n", width > 0 ? width : 100,
                height > 0 ? height : 30);
        break;
    }
    if (g->has_out) {
        fprintf(g->fp, "set output ");
        plt_quote(g->fp, g->out.tmp[0] ? g->out.tmp : g->out.path);
        fputc('\n', g->fp);
    }
    return SIM_OK;
}

int plt_gnuplot_close(plt_gnuplot *g, sim_err *err)
{
    if (g->has_out) fprintf(g->fp, "set output\n");
    fprintf(g->fp, "exit\n");
    int bad_write = ferror(g->fp);
    int st = pclose(g->fp);
    g->fp = NULL;
    sigaction(SIGPIPE, &g->old_pipe, NULL);
    int rc = SIM_OK;
    if (st == -1)
        rc = sim_err_set(err, SIM_EIO, NULL, 0, 0, "gnuplot: %s", strerror(errno));
    else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || bad_write)
        rc = sim_err_set(err, SIM_EIO, g->has_out ? g->out.path : NULL, 0, 0,
                         "gnuplot failed (exit status %d); see its message above",
                         WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    if (g->has_out) {
        int frc = sim_outfile_finish(&g->out, !rc, err);
        if (!rc) rc = frc;
    }
    return rc;
}
