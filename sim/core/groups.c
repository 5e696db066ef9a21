/* groups.c — each group's part of a shared resource's busy time (see groups.h). */
#include "sim/core/groups.h"

#include "sim/base/err.h"

#include <stdlib.h>

int sim_groups_init(sim_groups *g, int n)
{
    g->part = calloc((size_t)n, sizeof *g->part);
    g->n = g->part ? n : 0;
    return g->part ? SIM_OK : SIM_ENOMEM;
}

void sim_groups_free(sim_groups *g)
{
    free(g->part);
    g->part = NULL;
    g->n = 0;
}

void sim_groups_change(sim_groups *g, int group, int delta, double share)
{
    SIM_ASSERT(group >= 0 && group < g->n);
    sim_group_part *p = &g->part[group];
    p->integral += p->active * (share - p->mark);
    p->mark = share;
    p->active += delta;
    SIM_ASSERT(p->active >= 0);
}

double sim_groups_integral(const sim_groups *g, int group, double share)
{
    SIM_ASSERT(group >= 0 && group < g->n);
    const sim_group_part *p = &g->part[group];
    return p->integral + p->active * (share - p->mark);
}
