/* plt_demo.c — the before/after bars of a demo, and a study's curves (see plt_demo.h). */
#include "plots/plt_demo.h"

#include <stdio.h>

/* A label as one column of an inline data block: in double quotes, any double quote in it
 * turned into a single one. */
static void data_label(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        fputc(*s == '"' ? '\'' : *s, f);
    fputc('"', f);
}

/* One panel: the two values as bars with their labels on the x axis; y from 0 to ymax (0: a
 * fifth above the larger bar, room for its value). */
static void panel(FILE *f, const char *ylabel, double ymax, const char *const label[2],
                  const double v[2], const char *fmt)
{
    if (!(ymax > 0)) ymax = 1.2 * (v[0] > v[1] ? v[0] : v[1]);
    fprintf(f, "set ylabel '%s'\nset yrange [0:%g]\n$bars << EOD\n", ylabel, ymax > 0 ? ymax : 1);
    for (int i = 0; i < 2; i++) {
        fprintf(f, "%d ", i);
        data_label(f, label[i]);
        fprintf(f, " %.6g\n", v[i]);
    }
    fprintf(f,
            "EOD\nplot $bars using 1:3:xtic(2) with boxes lc rgb '#1f77b4' notitle, "
            "$bars using 1:3:(sprintf('%s', $3)) with labels offset 0,1 notitle\n",
            fmt);
}

/* Starts gnuplot on path with two panels side by side under title. */
static int open_two_panels(plt_gnuplot *g, const char *path, const char *title, sim_err *err)
{
    plt_term term;
    int rc = plt_term_from_path(path, &term, err);
    if (!rc) rc = plt_gnuplot_open(g, term, path, 1100, 500, err);
    if (rc) return rc;
    fprintf(g->fp, "set multiplot layout 1,2 title ");
    plt_quote(g->fp, title);
    fprintf(g->fp, " noenhanced\n");
    return 0;
}

int plt_demo_draw(const char *path, const char *title, const char *const label[2],
                  const double time_s[2], const double util_pct[2], const char *util_label,
                  sim_err *err)
{
    plt_gnuplot g;
    int rc = open_two_panels(&g, path, title, err);
    if (rc) return rc;
    FILE *f = g.fp;
    fprintf(f, "set style fill solid 0.8\nset boxwidth 0.6\nset xrange [-0.6:1.6]\n"
               "set grid ytics\nset xtics noenhanced\n");
    panel(f, "time of the run [s]", 0, label, time_s, "%.3g s");
    panel(f, util_label, 115, label, util_pct, "%.0f %%");
    fprintf(f, "unset multiplot\n");
    return plt_gnuplot_close(&g, err);
}

/* One curve panel: v against x, y from 0 to ymax (0: a tenth above the largest value). */
static void curve(FILE *f, const char *ylabel, double ymax, size_t n, const double *x,
                  const double *v)
{
    double top = 0;
    for (size_t i = 0; i < n; i++)
        top = v[i] > top ? v[i] : top;
    fprintf(f, "set ylabel '%s'\nset yrange [0:%g]\n$curve << EOD\n", ylabel,
            ymax > 0  ? ymax
            : top > 0 ? 1.1 * top
                      : 1);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.9g %.6g\n", x[i], v[i]);
    fprintf(f, "EOD\nplot $curve using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' notitle\n");
}

int plt_demo_study_draw(const char *path, const char *title, const char *xlabel, size_t n,
                        const double *x, const double *samples_per_s, const double *util_pct,
                        const char *util_label, sim_err *err)
{
    plt_gnuplot g;
    int rc = open_two_panels(&g, path, title, err);
    if (rc) return rc;
    FILE *f = g.fp;
    fprintf(f, "set logscale x 2\nset grid\nset xlabel ");
    plt_quote(f, xlabel);
    fprintf(f, " noenhanced\n");
    curve(f, "samples/s", 0, n, x, samples_per_s);
    curve(f, util_label, 105, n, x, util_pct);
    fprintf(f, "unset multiplot\n");
    return plt_gnuplot_close(&g, err);
}
