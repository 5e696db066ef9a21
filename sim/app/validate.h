/* validate.h — the public accuracy table (the CSV files of tests/data/published) and how far
 * epochsim's predictions are from it: reading the rows, predicting each one with the same code
 * paths `run` uses, and the error statistics (MAPE per group, per GPU generation, overall, and of
 * cross-GPU ratios), kept apart for fitting rows and checking rows. See docs/accuracy.md. */
#ifndef SIM_VALIDATE_H
#define SIM_VALIDATE_H

#include "plots/plt_csv.h"
#include "sim/base/err.h"
#include "sim/core/hw.h"

#include <stdbool.h>
#include <stddef.h>

/* The columns of a table file, in this order, after one header row. */
#define SIM_VAL_COLUMNS                                                                            \
    "id,group,role,metric,value,gpu,gpus,model,precision,batch,settings,software,source,notes"

typedef enum sim_val_role { SIM_VAL_FIT, SIM_VAL_CHECK, SIM_VAL_ROLES } sim_val_role;

typedef enum sim_val_metric {
    SIM_VAL_SAMPLES_PER_S,  /* training throughput per GPU */
    SIM_VAL_STEP_MS,        /* training step time */
    SIM_VAL_GPU_UTIL_PCT,   /* nvidia-smi GPU-Util of the run */
    SIM_VAL_H2D_GBPS,       /* host-to-device copy rate, settings bytes= and pinned= */
    SIM_VAL_MAX_BATCH,      /* largest batch that fits */
    SIM_VAL_GEMM_TFLOPS,    /* one GEMM, settings m= n= k= */
    SIM_VAL_MEM_BW_GBPS,    /* one device copy kernel, settings bytes= (read + written counted) */
    SIM_VAL_LAUNCH_US,      /* one empty kernel's GPU time */
    SIM_VAL_BUSBW_GBPS,     /* nccl-tests all_reduce_perf bus bandwidth, settings bytes= */
    SIM_VAL_GEMM_SHARE_PCT, /* one GEMM (m= n= k=) on the MIG instance of placement.mig, as a
                               share of the whole GPU's throughput on it */
    SIM_VAL_COLOCATED_PCT,  /* the job's training throughput beside copies= - 1 copies of itself
                               on its GPU (system.gpu_sharing), as a share of its throughput alone */
    SIM_VAL_INFERENCE_MS,   /* one forward pass in eval mode under no_grad (workload.mode
                               inference, set by validate), ms */
    SIM_VAL_CONV_US,        /* one cuDNN convolution call of a training step, its kernels
                               together, us: settings cin= hw= cout= filter= stride= pad= and
                               pass=fwd|dgrad|wgrad, the batch column its batch */
    SIM_VAL_ROWWISE_US,     /* one forward row kernel, us: settings op=softmax|layernorm, rows=
                               and cols=, in the row's precision */
    SIM_VAL_METRICS
} sim_val_metric;

/* One published measurement and, after sim_val_predict, the model's figure for it. */
typedef struct sim_val_row {
    const char *file; /* borrowed from the table's file list */
    int line;         /* 1-based line of the row (rows do not span lines) */
    const char *id, *group, *gpu, *model, *precision, *settings, *software,
        *source; /* borrowed cells */
    sim_val_role role;
    sim_val_metric metric;
    double value;
    int gpus, batch;
    /* filled by sim_val_predict */
    char arch[32];    /* the catalog GPU's arch ("ampere"); "" when unknown */
    double predicted; /* NaN when the row could not be predicted */
    char error[512];  /* why it could not ("" when predicted) */
    char note[256];   /* keys skipped, ... ("" when none) */
} sim_val_row;

typedef struct sim_val_table {
    sim_val_row *rows;
    size_t n, cap;
    char **files; /* paths read, owned */
    plt_csv *csv; /* one per file: the cells the rows point into */
    size_t n_files;
} sim_val_table;

/* Appends the rows of one CSV file. A missing or extra column, a bad role, metric or number is
 * an error naming file:line and the column. Returns 0 or a SIM_E* code. */
int sim_val_read_file(sim_val_table *t, const char *path, sim_err *err);
/* Reads every *.csv of dir in name order, except recorded.csv (the recorded errors). */
int sim_val_read_dir(sim_val_table *t, const char *dir, sim_err *err);
void sim_val_table_free(sim_val_table *t);

/* Predicts every row (see validate_predict.c); a row that cannot be predicted gets its reason
 * in row->error and NaN. catalog_dir: the hardware catalog. */
void sim_val_predict(sim_val_table *t, const char *catalog_dir);

/* Predicts one row (as sim_val_predict does) with the catalog's entry for the row's GPU
 * replaced by *gpu; gpu = NULL: the catalog's. Fills r->predicted, r->error, r->note, r->arch. */
void sim_val_predict_row(sim_val_row *r, const char *catalog_dir, const sim_gpu_desc *gpu);

/* A row whose experiment and scenario are built once, for pricing it on many variants of its
 * GPU (`epochsim calibrate --runs`). Borrows r and catalog_dir until freed. */
typedef struct sim_val_prepared sim_val_prepared;
/* NULL when the row cannot be built (r->error says why, r->predicted is NaN) or out of memory. */
sim_val_prepared *sim_val_prepare(sim_val_row *r, const char *catalog_dir);
/* The row's prediction with its GPU entry replaced by *gpu: equal to
 * sim_val_predict_row(r, catalog_dir, gpu), cheaper (the experiment, catalog and scenario are
 * not read again; the step is re-priced and simulated). Fills the row as sim_val_predict_row;
 * returns r->predicted (NaN on failure). One prepared row may not be priced by two threads at
 * once; different ones may. */
double sim_val_reprice(sim_val_prepared *p, const sim_gpu_desc *gpu);
void sim_val_prepared_free(sim_val_prepared *p);

/* Signed error of a predicted row, percent: (predicted / published - 1) x 100. */
double sim_val_error_pct(const sim_val_row *r);

/* One line of the summary: MAPE over the predicted rows of a role in a group, a generation,
 * all of them ("overall"), or over cross-GPU ratios ("ratio"). */
typedef enum sim_val_scope {
    SIM_VAL_GROUP,
    SIM_VAL_GENERATION,
    SIM_VAL_OVERALL,
    SIM_VAL_RATIO
} sim_val_scope;
typedef struct sim_val_stat {
    sim_val_scope scope;
    sim_val_role role;
    char name[64]; /* group, generation ("ampere"), "overall" or "ratio" */
    int n;         /* rows (ratio: GPU pairs) */
    double mape_pct;
} sim_val_stat;

typedef struct sim_val_summary {
    sim_val_stat *stats;
    size_t n;
    int predicted[SIM_VAL_ROLES], failed[SIM_VAL_ROLES];
} sim_val_summary;

/* Groups in first-seen order, generations in catalog order (volta ... blackwell). Ratios: for
 * each source URL (the first word of `source`), group, metric and precision, every pair of rows
 * on different GPUs gives |(p_i / p_j) / (v_i / v_j) - 1|. Returns 0 or SIM_ENOMEM. */
int sim_val_summarize(const sim_val_table *t, sim_val_summary *s);
void sim_val_summary_free(sim_val_summary *s);

const char *sim_val_role_name(sim_val_role r);
const char *sim_val_metric_name(sim_val_metric m);
const char *sim_val_scope_name(sim_val_scope s);

#endif
