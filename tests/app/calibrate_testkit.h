/* calibrate_testkit.h — what the `epochsim calibrate` tests and benchmark share: a temp folder
 * that commands run in, and measured-run tables for `calibrate --runs` whose rows (in the
 * published table's format) carry as `value` the model's own prediction on a GPU entry with
 * known fields, so that a fit from the catalog's entry has a known answer. */
#ifndef TESTS_CALIBRATE_TESTKIT_H
#define TESTS_CALIBRATE_TESTKIT_H

#include "sim/app/validate.h"
#include "sim/setup/catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* ---- the temp folder -------------------------------------------------------------------- */

/* The folder's path (empty until cal_dir_make). */
static inline char *cal_dir(void)
{
    static char dir[64];
    return dir;
}

/* cmocka group setup and teardown: make and remove the folder. */
static inline int cal_dir_make(void **state)
{
    (void)state;
    snprintf(cal_dir(), 64, "/tmp/epochsim-calibrate-XXXXXX");
    return mkdtemp(cal_dir()) ? 0 : -1;
}

static inline int cal_dir_remove(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cal_dir());
    return system(cmd);
}

/* name inside the folder; the last four results stay valid. */
static inline const char *cal_dir_path(const char *name)
{
    static char path[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", cal_dir(), name);
    return path[k];
}

/* Runs the shell command in the folder; its exit status, or -1. */
static inline int cal_dir_sh(const char *cmd)
{
    char full[4096];
    snprintf(full, sizeof full, "cd %s && %s", cal_dir(), cmd);
    int st = system(full);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The file's text (up to 64 KiB) in a buffer the next call reuses; NULL when unreadable. */
static inline char *cal_dir_slurp(const char *name)
{
    static char buf[65536];
    FILE *fp = fopen(cal_dir_path(name), "r");
    if (!fp) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = 0;
    fclose(fp);
    return buf;
}

/* ---- measured-run tables ---------------------------------------------------------------- */

typedef struct cal_row_spec {
    const char *model, *precision;
    int batch;
} cal_row_spec;

/* The settings of a row of `model`: Lambda's (tests/data/published/lambda.csv). */
static inline const char *cal_row_settings(const char *model)
{
    return strncmp(model, "bert", 4)
               ? "workload.optimizer=sgd;workload.optimizer_impl=forloop"
               : "workload.seq_len=384;workload.optimizer=adamw;workload.optimizer_impl=fused";
}

/* The catalog entry of gpu with field `key` scaled by `factor` for each of the n pairs. */
static inline int cal_rows_scaled_gpu(const char *catalog, const char *gpu, const char *const *keys,
                                      const double *factors, size_t n, sim_gpu_desc *out)
{
    sim_err err;
    if (cfg_catalog_load(catalog, CFG_CAT_GPU, gpu, out, &err)) return -1;
    for (size_t i = 0; i < n; i++) {
        const cfg_field *f = cfg_table_find(cfg_catalog_table(CFG_CAT_GPU), keys[i], NULL);
        if (!f) return -1;
        *(double *)((char *)out + f->offset) *= factors[i];
    }
    return 0;
}

/* Writes a table of the n rows on gpu to path, each `value` the metric (samples_per_s or
 * step_ms) the model predicts on *truth. Returns 0, or -1 when a row cannot be predicted or
 * written. */
static inline int cal_rows_write(const char *path, const char *gpu, const cal_row_spec *rows,
                                 size_t n, const sim_gpu_desc *truth, const char *catalog,
                                 sim_val_metric metric)
{
    FILE *fp = fopen(path, "w");
    if (!fp) return -1;
    fprintf(fp, "%s\n", SIM_VAL_COLUMNS);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char id[128];
        snprintf(id, sizeof id, "%s-%s-b%d", rows[i].model, rows[i].precision, rows[i].batch);
        sim_val_row r = {.file = path,
                         .line = (int)i + 2,
                         .id = id,
                         .group = rows[i].model,
                         .gpu = gpu,
                         .model = rows[i].model,
                         .precision = rows[i].precision,
                         .settings = cal_row_settings(rows[i].model),
                         .source = "-",
                         .role = SIM_VAL_CHECK,
                         .metric = metric,
                         .value = 1,
                         .gpus = 1,
                         .batch = rows[i].batch};
        sim_val_predict_row(&r, catalog, truth);
        if (!(r.predicted > 0)) {
            fprintf(stderr, "%s: %s\n", id, r.error);
            rc = -1;
        }
        fprintf(fp, "%s,%s,check,%s,%.17g,%s,1,%s,%s,%d,%s,-,-,-\n", id, rows[i].model,
                sim_val_metric_name(metric), r.predicted, gpu, rows[i].model, rows[i].precision,
                rows[i].batch, r.settings);
    }
    return fclose(fp) || rc ? -1 : 0;
}

#endif
