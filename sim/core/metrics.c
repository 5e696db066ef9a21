/* metrics.c — integrates component states over time (see metrics.h).
 * GPU-Util follows NVML utilization.gpu: the share of each sample window in which a kernel ran on
 * either stream (a compute kernel, or an NCCL kernel on the communication stream); copies and
 * all-reduces queued on the compute stream are not kernel time. The compute stream's idle time is
 * charged to the stall named by its own state (a copy or collective holding it, or its wait for
 * the communication stream) or else by its main thread's. */
#include "sim/core/metrics.h"

#include "sim/core/windows.h"

#include "sim/base/err.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct gpu_track {
    sim_main_state main;
    sim_stall data_cause; /* what a batch wait is charged to */
    sim_gpu_state gpu;
    float sm_fraction;
    float comm_sm; /* SM share of the NCCL kernel running on the communication stream; 0 = none */
    int64_t t_last_ns;
    sim_gpu_totals tot;
} gpu_track;

struct sim_metrics {
    sim_engine *e;
    int n;
    gpu_track *g;
    int64_t window_ns;
    int64_t max_win;   /* 0 = no bound */
    int64_t *win_busy; /* GPU 0: kernel ns per window */
    int64_t cap_win;
    int64_t covered_ns;      /* cap_win x window_ns: the time the windows cover */
    int64_t kernel_start_ns; /* GPU 0: start of the busy interval (a kernel on either stream)
                                not yet in the windows */
    int64_t *steps;
    int64_t n_steps, cap_steps;
    int64_t taken;
};

sim_metrics *sim_metrics_create(sim_engine *e, int n_gpus, int64_t window_ns, int64_t max_windows)
{
    sim_metrics *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->g = calloc((size_t)n_gpus, sizeof *m->g);
    if (!m->g) {
        free(m);
        return NULL;
    }
    m->e = e;
    m->n = n_gpus;
    m->window_ns = window_ns;
    m->max_win = max_windows;
    for (int i = 0; i < n_gpus; i++) {
        m->g[i].main = SIM_MAIN_OTHER;
        m->g[i].data_cause = SIM_STALL_DECODE;
    }
    return m;
}

void sim_metrics_destroy(sim_metrics *m)
{
    if (!m) return;
    free(m->g);
    free(m->win_busy);
    free(m->steps);
    free(m);
}

static sim_stall stall_of(const gpu_track *g)
{
    if (g->gpu == SIM_GPUST_COPY) return SIM_STALL_H2D;
    if (g->gpu == SIM_GPUST_COLLECTIVE) return SIM_STALL_COMM;
    if (g->gpu == SIM_GPUST_SHARED) return SIM_STALL_SHARED;
    switch (g->main) {
    case SIM_MAIN_DATA:
        return g->data_cause;
    case SIM_MAIN_H2D:
        return SIM_STALL_H2D;
    case SIM_MAIN_DISPATCH:
        return SIM_STALL_DISPATCH;
    case SIM_MAIN_SYNC:
        return SIM_STALL_SYNC;
    case SIM_MAIN_OTHER:
        break;
    }
    return SIM_STALL_OTHER;
}

static int grow_windows(sim_metrics *m, int64_t need)
{
    int rc = sim_windows_reserve((void **)&m->win_busy, sizeof *m->win_busy, &m->cap_win, need,
                                 m->max_win);
    m->covered_ns = m->cap_win * m->window_ns;
    return rc;
}

/* Adds the kernel interval [s, e) of GPU 0 to the windows it overlaps. */
static void add_busy(sim_metrics *m, int64_t s, int64_t e)
{
    if (e <= s) return;
    int64_t last = (e - 1) / m->window_ns;
    int rc = grow_windows(m, last + 1);
    if (rc) {
        sim_engine_fail(m->e, rc);
        return;
    }
    sim_windows_add(m->win_busy, m->window_ns, s, e);
}

static void settle(sim_metrics *m, int i)
{
    gpu_track *g = &m->g[i];
    int64_t now = sim_engine_now(m->e);
    double dt = (double)(now - g->t_last_ns);
    if (g->gpu == SIM_GPUST_KERNEL) {
        g->tot.kernel_ns += dt;
        /* NCCL's blocks take SMs of their own: together at most every SM */
        g->tot.sm_active_ns +=
            dt * (g->comm_sm > 0 ? fmin(1, g->sm_fraction + g->comm_sm) : g->sm_fraction);
    } else {
        g->tot.stall_ns[stall_of(g)] += dt;
        if (g->comm_sm > 0) {
            g->tot.comm_kernel_ns += dt;
            g->tot.sm_active_ns += dt * g->comm_sm;
        }
    }
    if (g->main == SIM_MAIN_DISPATCH || g->main == SIM_MAIN_OTHER ||
        (g->main == SIM_MAIN_DATA && g->data_cause == SIM_STALL_MAIN))
        g->tot.main_busy_ns += dt;
    g->t_last_ns = now;
}

void sim_metrics_main(sim_metrics *m, int gpu, sim_main_state s)
{
    settle(m, gpu);
    m->g[gpu].main = s;
}

void sim_metrics_data_cause(sim_metrics *m, int gpu, sim_stall cause)
{
    settle(m, gpu);
    m->g[gpu].data_cause = cause;
}

static bool busy(const gpu_track *g)
{
    return g->gpu == SIM_GPUST_KERNEL || g->comm_sm > 0;
}

/* GPU 0 was busy (`was`) before a change of state: its busy interval ends or begins now. An
 * interval that goes on (a kernel right after a kernel) is added whole when it ends, which adds
 * the same ns to each window, unless it passes the windows' end: then the windows grow (and meet
 * their budget) here, as they would kernel by kernel. */
static void busy_changed(sim_metrics *m, int gpu, bool was)
{
    if (gpu != 0) return;
    bool is = busy(&m->g[0]);
    int64_t now = sim_engine_now(m->e);
    bool cut = was && is && now > m->covered_ns;
    if (was && (!is || cut)) add_busy(m, m->kernel_start_ns, now);
    if (is && (!was || cut)) m->kernel_start_ns = now;
}

void sim_metrics_gpu(sim_metrics *m, int gpu, sim_gpu_state s, float sm_fraction)
{
    settle(m, gpu);
    gpu_track *g = &m->g[gpu];
    bool was = busy(g);
    g->gpu = s;
    g->sm_fraction = sm_fraction;
    busy_changed(m, gpu, was);
}

void sim_metrics_comm(sim_metrics *m, int gpu, float sm_share)
{
    settle(m, gpu);
    gpu_track *g = &m->g[gpu];
    bool was = busy(g);
    g->comm_sm = sm_share;
    busy_changed(m, gpu, was);
}

void sim_metrics_step(sim_metrics *m, int gpu, int64_t dur_ns)
{
    if (gpu != 0) return;
    if (m->n_steps == m->cap_steps) {
        int64_t cap = m->cap_steps ? 2 * m->cap_steps : 1024;
        int64_t *s = realloc(m->steps, (size_t)cap * sizeof *s);
        if (!s) {
            sim_engine_fail(m->e, SIM_ENOMEM);
            return;
        }
        m->steps = s;
        m->cap_steps = cap;
    }
    m->steps[m->n_steps++] = dur_ns;
}

sim_gpu_totals sim_metrics_totals(sim_metrics *m, int gpu)
{
    settle(m, gpu);
    return m->g[gpu].tot;
}

const int64_t *sim_metrics_take_steps(sim_metrics *m, int64_t *n)
{
    *n = m->n_steps - m->taken;
    const int64_t *p = m->steps + m->taken;
    m->taken = m->n_steps;
    return p;
}

uint8_t *sim_metrics_util_series(sim_metrics *m, int64_t *n)
{
    /* Close the running kernel's share without changing state. */
    int64_t now = sim_engine_now(m->e);
    if (busy(&m->g[0])) {
        add_busy(m, m->kernel_start_ns, now);
        m->kernel_start_ns = now;
    }
    int64_t windows = sim_windows_count(now, m->window_ns);
    if (grow_windows(m, windows)) return NULL;
    uint8_t *out = malloc((size_t)(windows ? windows : 1));
    if (!out) return NULL;
    for (int64_t w = 0; w < windows; w++) {
        int64_t len = sim_windows_len(w, now, m->window_ns); /* the last may be partial */
        int64_t pct = (m->win_busy[w] * 100 + len / 2) / len;
        out[w] = (uint8_t)(pct > 100 ? 100 : pct);
    }
    *n = windows;
    return out;
}
