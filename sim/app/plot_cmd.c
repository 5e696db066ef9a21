/* plot_cmd.c — `epochsim plot` (see plot_cmd.h). Rows a sweep marked as failed (a non-empty
 * `error`, or `oom` set) are skipped with a note; each distinct --by value becomes one line
 * series sorted by x; a non-numeric x column (e.g. system.gpu) is drawn as categories. */
#include "sim/app/plot_cmd.h"

#include "plots/plt_csv.h"
#include "plots/plt_gnuplot.h"
#include "sim/app/app.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: epochsim plot CSV --x COL --y COL [--by COL] [-o OUT.png|OUT.svg]\n"
            "                     [--term png|svg|dumb] [--title TEXT] [--logx]\n\n"
            "Draws column --y against column --x of a CSV file with a header row (the output\n"
            "of `epochsim sweep`), one line per distinct value of --by, with gnuplot.\n"
            "Rows with a non-empty `error` column or `oom` set are skipped (noted on stderr).\n"
            "A non-numeric --x column (e.g. system.gpu) is plotted as categories.\n\n"
            "  --x COL, --y COL  columns for the axes (--y must be numeric)\n"
            "  --by COL          one series per value of this column\n"
            "  -o, --output OUT  image file; the format comes from .png or .svg\n"
            "  --term T          png, svg or dumb (text; on stdout without -o); default: from\n"
            "                    -o, or dumb without -o\n"
            "  --title TEXT      plot title (default: \"Y vs X by BY\")\n"
            "  --logx            logarithmic x axis (base 2)\n\n"
            "Needs gnuplot on PATH (Debian package gnuplot-nox).\n\n"
            "examples:\n"
            "  epochsim plot sweep.csv --x loader.batch_size --y epoch_time_s --by system.gpu \\\n"
            "      -o batch.png\n"
            "  epochsim plot sweep.csv --x loader.num_workers --y gpu_util_pct --term dumb\n"
            "  epochsim plot sweep.csv --x loader.batch_size --y samples_per_s --logx -o tp.svg\n");
}

const char *plt_unit_of(const char *col)
{
    static const struct {
        const char *suffix, *unit;
    } units[] = {
        {"_per_s", "1/s"}, {"_pct", "%"}, {"_ms", "ms"},       {"_us", "us"},
        {"_ns", "ns"},     {"_s", "s"},   {"_gbps", "GB/s"},   {"_mbps", "MB/s"},
        {"_gb", "GB"},     {"_mb", "MB"}, {"_bytes", "bytes"},
    };
    size_t n = strlen(col);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t k = strlen(units[i].suffix);
        if (n > k && !strcmp(col + n - k, units[i].suffix)) return units[i].unit;
    }
    return "count";
}

static bool number(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return s[0] && !*end && !errno && isfinite(*v);
}

static bool failed_row(const plt_csv *t, size_t r, int c_err, int c_oom, const char **why)
{
    if (c_err >= 0 && plt_csv_cell(t, r, c_err)[0]) {
        *why = plt_csv_cell(t, r, c_err);
        return true;
    }
    if (c_oom >= 0) {
        const char *o = plt_csv_cell(t, r, c_oom);
        if (!strcmp(o, "1") || !strcmp(o, "true")) {
            *why = "out of GPU memory (oom)";
            return true;
        }
    }
    return false;
}

typedef struct point {
    double x, y;
    int series;
} point;

static int cmp_point(const void *a, const void *b)
{
    const point *p = a, *q = b;
    if (p->series != q->series) return p->series - q->series;
    return (p->x > q->x) - (p->x < q->x);
}

/* Index of s in names[0..*n), appending it if new. */
static int intern(const char **names, int *n, const char *s)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(names[i], s)) return i;
    names[*n] = s;
    return (*n)++;
}

static void axis_label(FILE *f, const char *axis, const char *col, bool categorical)
{
    char buf[600];
    if (categorical)
        snprintf(buf, sizeof buf, "%s (name)", col);
    else
        snprintf(buf, sizeof buf, "%s [%s]", col, plt_unit_of(col));
    fprintf(f, "set %slabel ", axis);
    plt_quote(f, buf);
    fprintf(f, " noenhanced\n");
}

static int bad_column(const plt_csv *t, const char *path, const char *opt, const char *name)
{
    fprintf(stderr, "epochsim plot: %s: %s: no column '%s'; the columns are:", path, opt, name);
    for (int i = 0; i < t->n_cols; i++)
        fprintf(stderr, "%s %s", i ? "," : "", t->cols[i]);
    fputc('\n', stderr);
    return SIM_EXIT_ERROR;
}

/* What to plot: the command line. */
typedef struct plot_spec {
    const char *path, *xc, *yc, *byc; /* the CSV and its columns (byc may be NULL) */
    const char *out, *title;          /* title NULL: "y vs x by by" */
    plt_term term;
    bool logx;
} plot_spec;

/* The CSV's column indexes: x, y, by (-1: none), error and oom (-1: absent). */
typedef struct plot_cols {
    int x, y, by, err, oom;
} plot_cols;

/* The points to plot, and the names of categorical x values and of the series. */
typedef struct plot_data {
    point *pts;
    size_t n, skipped;   /* skipped: rows of failed points */
    const char **xnames; /* categorical x values, n_x of them */
    const char **series; /* values of the --by column, n_series of them */
    int n_x, n_series;
    bool categorical; /* x is categorical: some kept row's x is not a number */
} plot_data;

/* The columns of ps in t; returns 0 or an exit code (the column named is missing). */
static int find_columns(const plt_csv *t, const plot_spec *ps, plot_cols *c)
{
    c->x = plt_csv_col(t, ps->xc);
    c->y = plt_csv_col(t, ps->yc);
    c->by = ps->byc ? plt_csv_col(t, ps->byc) : -1;
    if (c->x < 0) return bad_column(t, ps->path, "--x", ps->xc);
    if (c->y < 0) return bad_column(t, ps->path, "--y", ps->yc);
    if (ps->byc && c->by < 0) return bad_column(t, ps->path, "--by", ps->byc);
    c->err = plt_csv_col(t, "error");
    c->oom = plt_csv_col(t, "oom");
    return 0;
}

/* Whether one kept row's x is not a number. */
static bool categorical_x(const plt_csv *t, const plot_cols *c)
{
    bool categorical = false;
    for (size_t r = 0; r < t->n_rows; r++) {
        const char *why;
        double v;
        if (!failed_row(t, r, c->err, c->oom, &why) && !number(plt_csv_cell(t, r, c->x), &v))
            categorical = true;
    }
    return categorical;
}

/* The kept rows of t as points in d (arrays of t's row count); false after an error said. */
static bool collect_points(const plt_csv *t, const plot_spec *ps, const plot_cols *c, plot_data *d)
{
    for (size_t r = 0; r < t->n_rows; r++) {
        const char *why;
        if (failed_row(t, r, c->err, c->oom, &why)) {
            /* Line numbers assume one line per row (sweep files have no quoted newlines). */
            fprintf(stderr, "epochsim plot: %s:%zu: row skipped: %s\n", ps->path, r + 2, why);
            d->skipped++;
            continue;
        }
        point p;
        if (!number(plt_csv_cell(t, r, c->y), &p.y)) {
            fprintf(stderr, "epochsim plot: %s:%zu: error: %s is '%s', not a number\n", ps->path,
                    r + 2, ps->yc, plt_csv_cell(t, r, c->y));
            return false;
        }
        if (d->categorical)
            p.x = intern(d->xnames, &d->n_x, plt_csv_cell(t, r, c->x));
        else
            number(plt_csv_cell(t, r, c->x), &p.x);
        if (ps->logx && p.x <= 0) {
            fprintf(stderr, "epochsim plot: %s:%zu: error: --logx needs x > 0, not %g\n", ps->path,
                    r + 2, p.x);
            return false;
        }
        p.series = c->by >= 0 ? intern(d->series, &d->n_series, plt_csv_cell(t, r, c->by)) : 0;
        d->pts[d->n++] = p;
    }
    if (c->by < 0) d->n_series = d->n ? 1 : 0;
    return true;
}

/* The gnuplot settings: title, axis labels, grid, key, log scale, categorical x tics. */
static void write_axes(FILE *f, const plot_spec *ps, const plot_data *d)
{
    char def_title[600];
    const char *title = ps->title;
    if (!title) {
        snprintf(def_title, sizeof def_title, "%s vs %s%s%s", ps->yc, ps->xc, ps->byc ? " by " : "",
                 ps->byc ? ps->byc : "");
        title = def_title;
    }
    fprintf(f, "set title ");
    plt_quote(f, title);
    fprintf(f, " noenhanced\n");
    axis_label(f, "x", ps->xc, d->categorical);
    axis_label(f, "y", ps->yc, false);
    fprintf(f, "set grid\nset key outside right top noenhanced\n");
    if (ps->logx) fprintf(f, "set logscale x 2\n");
    if (d->categorical) {
        fprintf(f, "set xrange [-0.5:%f]\nset xtics (", d->n_x - 0.5);
        for (int i = 0; i < d->n_x; i++) {
            fprintf(f, "%s", i ? ", " : "");
            plt_quote(f, d->xnames[i]);
            fprintf(f, " %d", i);
        }
        fprintf(f, ") noenhanced\n");
    }
}

/* One data block per series and the plot command that draws them. */
static void write_series(FILE *f, const plot_spec *ps, const plot_cols *c, const plot_data *d)
{
    for (int s = 0; s < d->n_series; s++) {
        fprintf(f, "$s%d << EOD\n", s);
        for (size_t i = 0; i < d->n; i++)
            if (d->pts[i].series == s) fprintf(f, "%.17g %.17g\n", d->pts[i].x, d->pts[i].y);
        fprintf(f, "EOD\n");
    }
    fprintf(f, "plot ");
    for (int s = 0; s < d->n_series; s++) {
        char key[600];
        if (c->by >= 0)
            snprintf(key, sizeof key, "%s = %s", ps->byc, d->series[s]);
        else
            snprintf(key, sizeof key, "%s", ps->yc);
        fprintf(f, "%s$s%d using 1:2 with linespoints lw 2 pt 7 title ", s ? ", \\\n     " : "", s);
        plt_quote(f, key);
    }
    fputc('\n', f);
}

/* Draws the points through gnuplot; false after an error said. */
static bool draw(const plot_spec *ps, const plot_cols *c, const plot_data *d)
{
    sim_err err;
    sim_err_clear(&err);
    plt_gnuplot g;
    if (plt_gnuplot_open(&g, ps->term, ps->out, 0, 0, &err)) {
        fputs("epochsim plot: ", stderr);
        sim_err_print(&err, stderr);
        return false;
    }
    write_axes(g.fp, ps, d);
    write_series(g.fp, ps, c, d);
    if (plt_gnuplot_close(&g, &err)) {
        fputs("epochsim plot: ", stderr);
        sim_err_print(&err, stderr);
        return false;
    }
    return true;
}

/* Plots the points of t (read from ps->path); returns an exit code. */
static int plot_table(const plt_csv *t, const plot_spec *ps)
{
    plot_cols c = {-1, -1, -1, -1, -1};
    int rc = find_columns(t, ps, &c);
    if (rc) return rc;
    rc = SIM_EXIT_ERROR;
    size_t nr = t->n_rows ? t->n_rows : 1;
    plot_data d = {
        .pts = malloc(nr * sizeof *d.pts),
        .xnames = malloc(nr * sizeof *d.xnames),
        .series = malloc(nr * sizeof *d.series),
    };
    if (!d.pts || !d.xnames || !d.series) {
        fprintf(stderr, "epochsim plot: out of memory\n");
        goto out;
    }
    d.categorical = categorical_x(t, &c);
    if (!collect_points(t, ps, &c, &d)) goto out;
    if (d.n == 0) {
        fprintf(stderr, "epochsim plot: %s: no rows to plot (%zu skipped)\n", ps->path, d.skipped);
        goto out;
    }
    if (ps->logx && d.categorical) {
        fprintf(stderr, "epochsim plot: --logx needs a numeric --x column\n");
        goto out;
    }
    qsort(d.pts, d.n, sizeof *d.pts, cmp_point);
    if (!draw(ps, &c, &d)) goto out;
    if (d.skipped)
        fprintf(stderr, "epochsim plot: %zu row%s skipped (error or oom)\n", d.skipped,
                d.skipped == 1 ? "" : "s");
    rc = SIM_EXIT_OK;
out:
    free(d.pts);
    free(d.xnames);
    free(d.series);
    return rc;
}

/* Reads the CSV of ps and plots it; returns an exit code. */
static int plot(const plot_spec *ps)
{
    plt_csv t;
    sim_err err;
    sim_err_clear(&err);
    if (plt_csv_read(ps->path, &t, &err)) {
        fputs("epochsim plot: ", stderr);
        sim_err_print(&err, stderr);
        return SIM_EXIT_ERROR;
    }
    int rc = plot_table(&t, ps);
    plt_csv_free(&t);
    return rc;
}

int sim_plot_csv(const char *path, const char *x, const char *y, const char *by, const char *out)
{
    sim_err err;
    sim_err_clear(&err);
    plt_term term;
    if (plt_term_from_path(out, &term, &err)) {
        fputs("epochsim: --plot: ", stderr);
        sim_err_print(&err, stderr);
        return SIM_EXIT_USAGE;
    }
    plot_spec ps = {path, x, y, by, out, NULL, term, false};
    return plot(&ps);
}

int sim_plot_cmd(int argc, char **argv)
{
    static const struct option opts[] = {
        {"x", required_argument, 0, 'x'},
        {"y", required_argument, 0, 'y'},
        {"by", required_argument, 0, 'b'},
        {"output", required_argument, 0, 'o'},
        {"term", required_argument, 0, 't'},
        {"title", required_argument, 0, 'T'},
        {"logx", no_argument, 0, 'l'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *xc = NULL, *yc = NULL, *byc = NULL, *out = NULL, *term_name = NULL, *title = NULL;
    bool logx = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'x':
            xc = optarg;
            break;
        case 'y':
            yc = optarg;
            break;
        case 'b':
            byc = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 't':
            term_name = optarg;
            break;
        case 'T':
            title = optarg;
            break;
        case 'l':
            logx = true;
            break;
        case 'h':
            usage(stdout);
            return SIM_EXIT_OK;
        default:
            fprintf(stderr, "epochsim plot: bad option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return SIM_EXIT_USAGE;
        }
    }
    if (argc - optind != 1 || !xc || !yc) {
        fprintf(stderr, "epochsim plot: one CSV file, --x and --y are needed\n");
        usage(stderr);
        return SIM_EXIT_USAGE;
    }
    sim_err err;
    sim_err_clear(&err);
    plt_term term = PLT_TERM_DUMB;
    if ((term_name && plt_term_parse(term_name, &term, &err)) ||
        (!term_name && out && plt_term_from_path(out, &term, &err))) {
        fputs("epochsim plot: ", stderr);
        sim_err_print(&err, stderr);
        return SIM_EXIT_USAGE;
    }
    if (term != PLT_TERM_DUMB && (!out || !strcmp(out, "-"))) {
        fprintf(stderr, "epochsim plot: --term %s needs -o FILE\n", term_name);
        return SIM_EXIT_USAGE;
    }
    plot_spec ps = {argv[optind], xc, yc, byc, out, title, term, logx};
    return plot(&ps);
}
