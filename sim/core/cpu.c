/* cpu.c — the host CPU as one shared server (see pipeline.h).
 * Every thread of the job (loader workers, main thread, pin-memory thread) is a job on it. When
 * more threads are runnable than cores, SMT siblings add smt_gain of a core each, not a core:
 * two threads on one core get (1 + smt_gain) between them. A thread never runs faster than one
 * core, which is single_thread times the reference core. */
#include "sim/core/pipeline.h"

#include <stdlib.h>

double sim_cpu_capacity(const sim_cpu_model *m, int n)
{
    if (n <= m->cores) return n;
    int siblings = n < m->threads ? n - m->cores : m->threads - m->cores;
    if (siblings < 0) siblings = 0;
    return m->cores + m->smt_gain * siblings;
}

static double capacity(const void *ctx, int n)
{
    const sim_cpu_model *m = ctx;
    return sim_cpu_capacity(m, n) * m->single_thread;
}

sim_ps *sim_cpu_create(sim_engine *e, const sim_cpu_model *m)
{
    sim_ps_config cfg = {
        .name = "cpu",
        .capacity = capacity,
        .ctx = m,
        .per_job_max = m->single_thread,
        .busy_units = m->threads,
    };
    return sim_ps_create(e, &cfg);
}
