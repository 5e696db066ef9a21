/* plt_run.c — util and timeline (Gantt) plots of one run (see plt_run.h). Data go inline as
 * gnuplot data blocks ($name << EOD), one per series or span category, so nothing is left in
 * temporary files; each category gets its colour and a legend entry. */
#include "plots/plt_run.h"

#include <stdlib.h>
#include <string.h>

int plt_run_plot_parse(const char *arg, plt_run_plot *p, sim_err *err)
{
    memset(p, 0, sizeof *p);
    const char *path = arg;
    if (!strncmp(arg, "util:", 5)) {
        p->kind = PLT_RUN_UTIL;
        path = arg + 5;
    } else if (!strncmp(arg, "timeline:", 9)) {
        p->kind = PLT_RUN_TIMELINE;
        path = arg + 9;
    } else {
        const char *base = strrchr(arg, '/');
        base = base ? base + 1 : arg;
        if (!strncmp(base, "util", 4))
            p->kind = PLT_RUN_UTIL;
        else if (!strncmp(base, "timeline", 8))
            p->kind = PLT_RUN_TIMELINE;
        else
            return sim_err_set(err, SIM_EUSAGE, arg, 0, 0,
                               "which plot? name the file util... or timeline..., or write "
                               "util:PATH or timeline:PATH");
    }
    if (!path[0]) return sim_err_set(err, SIM_EUSAGE, arg, 0, 0, "no file name");
    p->path = path;
    return plt_term_from_path(path, &p->term, err);
}

static void title_hw(char *buf, size_t size, const sim_scenario *sc)
{
    const sim_hardware *hw = &sc->hw;
    snprintf(buf, size, "%s x%d, %s, %d DataLoader worker%s, batch %d",
             hw->gpu.label[0] ? hw->gpu.label : hw->gpu.name, hw->gpu_count,
             hw->cpu.label[0] ? hw->cpu.label : hw->cpu.name, sc->loader.num_workers,
             sc->loader.num_workers == 1 ? "" : "s", sc->loader.batch_size);
}

#define MAX_POINTS 400

static int draw_util(const plt_run_plot *p, const sim_scenario *sc, const sim_result *res,
                     const sim_run_series *s, sim_err *err)
{
    if (!s || s->n != res->n_util || s->n < 1)
        return sim_err_set(err, SIM_EINVAL, p->path, 0, 0, "no utilization series recorded");
    plt_gnuplot g;
    int rc = plt_gnuplot_open(&g, p->term, p->path, 1200, 600, err);
    if (rc) return rc;
    char hw[512], title[640];
    title_hw(hw, sizeof hw, sc);
    snprintf(title, sizeof title, "Utilization over time: %s", hw);
    FILE *f = g.fp;
    fprintf(f, "set title ");
    plt_quote(f, title);
    fprintf(f, " noenhanced\nset xlabel 'time [s]'\nset ylabel 'utilization [%%]'\n"
               "set y2label 'ready batches in the loader queue [batches]'\n"
               "set yrange [0:105]\nset y2range [0:*]\nset ytics nomirror\nset y2tics\n"
               "set grid\nset key outside bottom center horizontal\n$util << EOD\n");
    /* A long run has thousands of NVML windows: average groups of them so that at most
     * MAX_POINTS steps are drawn (the plot says how many windows a point holds). */
    int64_t group = (s->n + MAX_POINTS - 1) / MAX_POINTS;
    double w_s = (double)s->window_ns / 1e9, last[3] = {0, 0, 0};
    for (int64_t i = 0; i < s->n; i += group) {
        double sum[3] = {0, 0, 0};
        int64_t k = 0;
        for (; k < group && i + k < s->n; k++) {
            sum[0] += res->util_series[i + k];
            sum[1] += s->cpu_util_pct[i + k];
            sum[2] += s->queue_depth[i + k];
        }
        for (int j = 0; j < 3; j++)
            last[j] = sum[j] / (double)k;
        fprintf(f, "%.6f %.3f %.3f %.4f\n", (double)i * w_s, last[0], last[1], last[2]);
    }
    /* `steps` holds each point's value until the next; repeat the last one at the end. */
    fprintf(f, "%.6f %.3f %.3f %.4f\nEOD\n", res->total_time_s, last[0], last[1], last[2]);
    fprintf(f, "set label 1 ");
    char note[128];
    snprintf(note, sizeof note, "one point = %lld NVML window%s of %.0f ms", (long long)group,
             group == 1 ? "" : "s (mean)", w_s * 1e3);
    plt_quote(f, note);
    fprintf(f, " at graph 0.01, graph 0.97 font ',8'\n");
    fprintf(f, "plot $util using 1:2 with steps lw 2 lc rgb '#2ca02c' title "
               "'GPU-Util (NVML utilization.gpu, %%)', \\\n"
               "     $util using 1:3 with steps lw 1.5 lc rgb '#1f77b4' title "
               "'CPU utilization (all hardware threads, %%)', \\\n"
               "     $util using 1:4 axes x1y2 with steps lw 1.5 lc rgb '#ff7f0e' title "
               "'loader queue depth (ready batches, right axis)'\n");
    return plt_gnuplot_close(&g, err);
}

/* Span categories of the Gantt chart, drawn in this order (later ones on top). */
enum { C_WAIT, C_DISPATCH, C_READ, C_LOADER, C_COPY, C_COLL, C_KERNEL, C_IDLE, C_COUNT };
static const char *const cat_name[C_COUNT] = {
    [C_WAIT] = "main thread waits (data, sync, copy, full launch queue)",
    [C_DISPATCH] = "CPU dispatch / Python",
    [C_READ] = "sample read (storage / page cache)",
    [C_LOADER] = "decode, collate, pin, worker start",
    [C_COPY] = "memcpy (stream) / PCIe transfer",
    [C_COLL] = "all-reduce",
    [C_KERNEL] = "GPU kernel",
    [C_IDLE] = "GPU stream idle",
};
static const char *const cat_color[C_COUNT] = {
    [C_WAIT] = "#c7c7c7", [C_DISPATCH] = "#1f77b4", [C_READ] = "#8c564b",   [C_LOADER] = "#9467bd",
    [C_COPY] = "#ff7f0e", [C_COLL] = "#17becf",     [C_KERNEL] = "#2ca02c", [C_IDLE] = "#d62728",
};

static int category(sim_tl_what w)
{
    switch (w) {
    case SIM_TL_STEP:
    case SIM_TL_BATCH:
        return -1; /* enclosing spans: their children are drawn */
    case SIM_TL_DATA_WAIT:
    case SIM_TL_COPY_WAIT:
    case SIM_TL_LAUNCH_WAIT:
    case SIM_TL_SYNC:
        return C_WAIT;
    case SIM_TL_COPY_ISSUE:
    case SIM_TL_DISPATCH:
    case SIM_TL_GRAPH_LAUNCH:
    case SIM_TL_STEP_TAIL:
        return C_DISPATCH;
    case SIM_TL_READ:
    case SIM_TL_STORAGE_READ:
        return C_READ;
    case SIM_TL_WORKER_START:
    case SIM_TL_DECODE:
    case SIM_TL_COLLATE:
    case SIM_TL_PIN_BATCH:
        return C_LOADER;
    case SIM_TL_MEMCPY:
    case SIM_TL_TRANSFER:
        return C_COPY;
    case SIM_TL_ALLREDUCE:
        return C_COLL;
    case SIM_TL_KERNEL:
        return C_KERNEL;
    case SIM_TL_WHAT_COUNT:
        break;
    }
    return -1;
}

typedef struct lane_pos {
    int lane;
    int order;
} lane_pos;

static int cmp_lane(const void *a, const void *b)
{
    const lane_pos *x = a, *y = b;
    return (x->order > y->order) - (x->order < y->order);
}

static void box(FILE *f, int64_t s_ns, int64_t e_ns, int y, double half_h)
{
    double s = (double)s_ns / 1e6, e = (double)e_ns / 1e6;
    fprintf(f, "%.6f %d %.6f %.2f\n", (s + e) / 2, y, (e - s) / 2, half_h);
}

/* Per lane of the timeline: its place on the y axis and, for GPU streams, their idle gaps. */
typedef struct lanes {
    int n;
    lane_pos *pos;       /* lanes in display order */
    int *y_of;           /* y of each lane; the first in display order at the top */
    int64_t *stream_end; /* GPU streams: end of the latest span so far (ns) */
    double *idle_ns;     /* GPU streams: gaps between spans (ns) */
} lanes;

static void lanes_free(lanes *ln)
{
    free(ln->pos);
    free(ln->y_of);
    free(ln->stream_end);
    free(ln->idle_ns);
}

/* Allocates ln for the timeline's lanes and places them on the y axis. */
static int place_lanes(const sim_timeline *tl, lanes *ln, sim_err *err)
{
    ln->n = sim_timeline_lanes(tl);
    ln->pos = malloc((size_t)ln->n * sizeof *ln->pos);
    ln->y_of = malloc((size_t)ln->n * sizeof *ln->y_of);
    ln->stream_end = calloc((size_t)ln->n, sizeof *ln->stream_end);
    ln->idle_ns = calloc((size_t)ln->n, sizeof *ln->idle_ns);
    if (!ln->pos || !ln->y_of || !ln->stream_end || !ln->idle_ns)
        return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    for (int i = 0; i < ln->n; i++)
        ln->pos[i] = (lane_pos){i, sim_timeline_lane_order(tl, i)};
    qsort(ln->pos, (size_t)ln->n, sizeof *ln->pos, cmp_lane);
    for (int k = 0; k < ln->n; k++)
        ln->y_of[ln->pos[k].lane] = ln->n - 1 - k; /* the first lane at the top */
    return SIM_OK;
}

/* The boxes of category c (C_IDLE: the gaps on each GPU stream, summed into ln); returns whether
 * there was any. */
static bool write_boxes(FILE *f, const sim_timeline *tl, const sim_tl_span *sp, size_t n, int c,
                        lanes *ln)
{
    bool any = false;
    if (c == C_IDLE) {
        /* Gaps on each GPU stream: spans there are in order (one in-order stream). */
        for (size_t i = 0; i < n; i++) {
            int l = sp[i].lane;
            if (sim_timeline_lane_kind(tl, l) != SIM_TL_LANE_STREAM) continue;
            if (sp[i].start_ns > ln->stream_end[l]) {
                box(f, ln->stream_end[l], sp[i].start_ns, ln->y_of[l], 0.35);
                ln->idle_ns[l] += (double)(sp[i].start_ns - ln->stream_end[l]);
                any = true;
            }
            if (sp[i].end_ns > ln->stream_end[l]) ln->stream_end[l] = sp[i].end_ns;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            if (category((sim_tl_what)sp[i].what) != c) continue;
            box(f, sp[i].start_ns, sp[i].end_ns, ln->y_of[sp[i].lane], c == C_WAIT ? 0.15 : 0.35);
            any = true;
        }
    }
    return any;
}

/* The title: the hardware and how idle GPU 0's stream was. */
static void write_title(FILE *f, const sim_scenario *sc, const sim_timeline *tl, const lanes *ln)
{
    double idle0 = 0, busy_end = 0;
    for (int l = 0; l < ln->n; l++)
        if (sim_timeline_lane_kind(tl, l) == SIM_TL_LANE_STREAM &&
            sim_timeline_lane_rank(tl, l) == 0) {
            idle0 = ln->idle_ns[l];
            busy_end = (double)ln->stream_end[l];
        }
    char hw[512], title[800];
    title_hw(hw, sizeof hw, sc);
    double begin = (double)sim_timeline_begin_ns(tl), shown = busy_end - begin;
    int64_t first = sim_timeline_first_step(tl), steps = sim_timeline_steps(tl);
    if (first == 0)
        snprintf(title, sizeof title,
                 "Timeline of the first %lld steps: %s; GPU 0 stream idle %.1f%% of the first "
                 "%.1f ms",
                 (long long)steps, hw, shown > 0 ? 100.0 * idle0 / shown : 0, shown / 1e6);
    else
        snprintf(title, sizeof title,
                 "Timeline of steps %lld-%lld: %s; GPU 0 stream idle %.1f%% of %.1f ms",
                 (long long)first, (long long)(first + steps - 1), hw,
                 shown > 0 ? 100.0 * idle0 / shown : 0, shown / 1e6);
    fprintf(f, "set title ");
    plt_quote(f, title);
    fprintf(f, " noenhanced\n");
}

/* Axes and lane names, then the plot command for the categories that have boxes. */
static void write_axes_plot(FILE *f, const sim_timeline *tl, const lanes *ln, int64_t end_ns,
                            const bool *any)
{
    fprintf(f,
            "set xlabel 'time since the run started [ms]'\n"
            "set ylabel 'lane (thread, link, GPU stream, storage slot)'\n"
            "set yrange [-0.7:%f]\nset xrange [%f:%f]\nset grid x\n"
            "set key outside bottom center horizontal noenhanced\nset ytics (",
            ln->n - 0.3, (double)sim_timeline_begin_ns(tl) / 1e6, (double)end_ns / 1e6);
    for (int k = 0; k < ln->n; k++) {
        if (k) fputs(", ", f);
        plt_quote(f, sim_timeline_lane_name(tl, ln->pos[k].lane));
        fprintf(f, " %d", ln->y_of[ln->pos[k].lane]);
    }
    fprintf(f, ") noenhanced\nplot ");
    bool first = true;
    for (int c = 0; c < C_COUNT; c++) {
        if (!any[c]) continue;
        fprintf(f,
                "%s$c%d using 1:2:3:4 with boxxyerror fs solid 1.0 noborder lc rgb '%s' "
                "title '%s'",
                first ? "" : ", \\\n     ", c, cat_color[c], cat_name[c]);
        first = false;
    }
    fputc('\n', f);
}

static int draw_timeline(const plt_run_plot *p, const sim_scenario *sc, const sim_timeline *tl,
                         sim_err *err)
{
    size_t n;
    const sim_tl_span *sp = tl ? sim_timeline_spans(tl, &n) : NULL;
    if (!sp || n == 0)
        return sim_err_set(err, SIM_EINVAL, p->path, 0, 0, "nothing was recorded to draw");
    lanes ln = {0};
    int rc = place_lanes(tl, &ln, err);
    if (rc) goto out;
    for (int l = 0; l < ln.n; l++) /* a stream's first gap counts from the window's start */
        ln.stream_end[l] = sim_timeline_begin_ns(tl);
    int64_t end_ns = 0;
    for (size_t i = 0; i < n; i++)
        if (sp[i].end_ns > end_ns && category((sim_tl_what)sp[i].what) >= 0) end_ns = sp[i].end_ns;

    plt_gnuplot g;
    rc = plt_gnuplot_open(&g, p->term, p->path, 1600, 160 + 22 * ln.n, err);
    if (rc) goto out;
    bool any[C_COUNT] = {0};
    for (int c = 0; c < C_COUNT; c++) {
        fprintf(g.fp, "$c%d << EOD\n", c);
        any[c] = write_boxes(g.fp, tl, sp, n, c, &ln);
        fprintf(g.fp, "EOD\n");
    }
    write_title(g.fp, sc, tl, &ln);
    write_axes_plot(g.fp, tl, &ln, end_ns, any);
    rc = plt_gnuplot_close(&g, err);
out:
    lanes_free(&ln);
    return rc;
}

int plt_run_draw(const plt_run_plot *p, const sim_scenario *sc, const sim_result *res,
                 const sim_run_series *series, const sim_timeline *tl, sim_err *err)
{
    if (p->kind == PLT_RUN_UTIL) return draw_util(p, sc, res, series, err);
    return draw_timeline(p, sc, tl, err);
}
