/* mig.h — Multi-Instance GPU profiles: the `mig:` section of a catalog GPU and the GPU that one
 * instance of a profile is. An instance owns whole compute slices (its SMs) and whole memory
 * slices (DRAM capacity, memory controllers and L2 banks), so every figure of the instance is the
 * whole GPU's scaled by one of the two shares; the SMs are listed per profile because MIG leaves
 * some unused (an A100's 7 one-slice instances hold 98 of its 108 SMs). */
#ifndef SIM_MIG_H
#define SIM_MIG_H

#include "sim/base/err.h"
#include "sim/core/hw.h"

#define SIM_MIG_PROFILES_MAX 12
#define SIM_MIG_SLOTS_MAX 8

typedef struct sim_mig_profile {
    char name[24];                 /* "1g.10gb", as nvidia-smi names it */
    int slices;                    /* compute slices (the "1g") */
    int mem_slices;                /* memory slices (capacity, bandwidth and L2) */
    int sms;                       /* SMs the instance gets */
    int copy_engines;              /* DMA engines the instance owns */
    int max_instances;             /* instances of this profile that fit on one GPU */
    int n_starts;                  /* legal placements: first compute slice of an instance */
    int starts[SIM_MIG_SLOTS_MAX]; /* ascending */
} sim_mig_profile;

/* The profiles of one GPU; n = 0 when the GPU has no MIG. */
typedef struct sim_mig_table {
    int compute_slices; /* slices the GPU is cut into (A100: 7) */
    int memory_slices;  /* (A100: 8) */
    int n;
    sim_mig_profile p[SIM_MIG_PROFILES_MAX];
} sim_mig_table;

/* Reads the `mig:` section of catalog GPU NAME (DIR/gpus/NAME.yaml) into *out; a GPU without
 * one gives n = 0. Checks each profile against the GPU (its SMs at most the GPU's, slices
 * within the GPU's, placements inside the slices, mig_instances equal to the largest
 * max_instances). Errors name the file, line and field. */
int cfg_mig_load(const char *dir, const char *gpu_name, sim_mig_table *out, sim_err *err);

/* The profile named NAME, or NULL. */
const sim_mig_profile *sim_mig_find(const sim_mig_table *t, const char *name);

/* "unknown MIG profile 'x' on GPU (did you mean 'y'?; profiles: a, b)" or, for a GPU without
 * MIG, "GPU has no MIG"; returns SIM_EINVAL. */
int sim_mig_unknown(const sim_mig_table *t, const sim_gpu_desc *gpu, const char *name,
                    sim_err *err);

/* Turns *gpu into the GPU one instance of p is: SMs, CUDA cores and every peak rate scale by
 * p->sms / gpu->sms; memory, DRAM bandwidth and L2 by p->mem_slices / t->memory_slices (the
 * instance owns those memory controllers and L2 banks and no others); NVLink is gone (MIG
 * instances do not do peer-to-peer). The catalog name stays; the label gains "MIG PROFILE". */
void sim_mig_apply(const sim_mig_table *t, const sim_mig_profile *p, sim_gpu_desc *gpu);

#endif
