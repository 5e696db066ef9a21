/* workload.c — growing and summarising a step program (see workload.h). */
#include "sim/core/workload.h"

#include "sim/base/err.h"

#include <stdlib.h>
#include <string.h>

int sim_program_push(sim_program *p, const sim_op *op)
{
    if (p->n_ops == p->cap_ops) {
        size_t cap = p->cap_ops ? 2 * p->cap_ops : 64;
        sim_op *ops = realloc(p->ops, cap * sizeof *ops);
        if (!ops) return SIM_ENOMEM;
        p->ops = ops;
        p->cap_ops = cap;
    }
    p->ops[p->n_ops++] = *op;
    return SIM_OK;
}

void sim_program_free(sim_program *p)
{
    free(p->ops);
    memset(p, 0, sizeof *p);
}

int64_t sim_program_gpu_ns(const sim_program *p)
{
    int64_t sum = 0;
    for (size_t i = 0; i < p->n_ops; i++)
        if (p->ops[i].kind == SIM_OP_KERNEL) sum += p->ops[i].gpu_ns;
    return sum;
}

int64_t sim_program_dispatch_ns(const sim_program *p)
{
    int64_t sum = 0;
    for (size_t i = 0; i < p->n_ops; i++)
        sum += p->ops[i].dispatch_ns;
    return sum;
}

size_t sim_program_kernels(const sim_program *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_ops; i++)
        n += p->ops[i].kind == SIM_OP_KERNEL;
    return n;
}

int sim_program_batches_per_step(const sim_program *p)
{
    int n = 1;
    for (size_t i = 0; i < p->n_ops; i++)
        n += p->ops[i].kind == SIM_OP_NEXT_BATCH;
    return n;
}

const char *sim_unit_name(int unit)
{
    switch ((sim_unit)unit) {
    case SIM_UNIT_TENSOR:
        return "tensor";
    case SIM_UNIT_CUDA:
        return "cuda";
    case SIM_UNIT_MEMORY:
        return "memory";
    case SIM_UNIT_NONE:
        break;
    }
    return "none";
}
