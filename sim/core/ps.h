/* ps.h — the shared server: one generic processor-sharing resource.
 * Jobs bring an amount of work; all active jobs progress at the same rate
 * r(n) = min(per_job_max, capacity(n) / n). The capacity may depend on the number of active jobs,
 * which is how CPU cores with SMT, a storage device, a PCIe link direction or a memory bus are all
 * modelled with this one server. A finished job is reported to its owner as an event.
 * Implementation: each job's finish point is kept in "attained service" units, so an arrival or
 * departure costs O(log n) and never touches the other jobs. */
#ifndef SIM_PS_H
#define SIM_PS_H

#include "sim/core/engine.h"

#include <stdint.h>

typedef struct sim_ps sim_ps;

/* Total service rate (work units per ns) when n >= 1 jobs are active: a function of n alone (ctx
 * must not change), which the server asks at creation for the first few dozen n and keeps. */
typedef double (*sim_ps_capacity_fn)(const void *ctx, int n);

typedef struct sim_ps_config {
    const char *name;
    sim_ps_capacity_fn capacity; /* NULL: constant `rate` */
    const void *ctx;             /* borrowed, for capacity */
    double rate;                 /* work units per ns when capacity is NULL */
    double per_job_max;          /* cap on one job's rate (a thread uses at most one core) */
    int busy_units;              /* for utilization: units busy = min(n, busy_units) */
} sim_ps_config;

/* Creates the server and registers it with the engine. NULL on out-of-memory. */
sim_ps *sim_ps_create(sim_engine *e, const sim_ps_config *cfg);
void sim_ps_destroy(sim_ps *ps);

/* Starts a job of `work` units (> 0). When it is done, `reply_to` gets event `reply_kind` with
 * payload `a`. Returns 0 or SIM_ENOMEM. */
int sim_ps_submit(sim_ps *ps, double work, uint32_t reply_to, uint32_t reply_kind, uint64_t a);

/* Counts the busy integral per group 0 .. n-1 from now on (several jobs on one server), before
 * any job is submitted. Returns 0 or SIM_ENOMEM. */
int sim_ps_groups(sim_ps *ps, int n);
/* sim_ps_submit for a job of `group` (0 .. the n of sim_ps_groups - 1); sim_ps_submit is group
 * 0. Without sim_ps_groups the group is not counted. */
int sim_ps_submit_as(sim_ps *ps, int group, double work, uint32_t reply_to, uint32_t reply_kind,
                     uint64_t a);
/* Integral over time of min(n, busy_units), in unit-ns, up to now. */
double sim_ps_busy_integral(sim_ps *ps);
/* Integral over time of n, the jobs active (on the CPU: runnable threads), in job-ns, up to
 * now. */
double sim_ps_load_integral(sim_ps *ps);
/* Time with at least one active job, ns, up to now. */
double sim_ps_busy_time(sim_ps *ps);
/* The group's part of the busy integral, unit-ns, up to now: while n jobs are active, each holds
 * min(n, busy_units) / n units (on the CPU: the hardware threads its threads keep busy; on a link
 * with busy_units 1: its share of the time the link is busy). The groups' parts add up to
 * sim_ps_busy_integral from sim_ps_groups on. Needs sim_ps_groups. */
double sim_ps_group_busy_integral(sim_ps *ps, int group);

#endif
