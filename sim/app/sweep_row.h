/* sweep_row.h — the rows of a sweep file: which columns, in which order, and one line per point
 * in CSV (libcsv quoting) or JSON lines (yajl). The figures are those of `run --json`
 * (sim_report_json_members), flattened once by sim_sweep_flatten — nested objects become dotted
 * names (`stall_pct.storage`), the per-epoch array is left out — and both formats are written from
 * the same cells, so CSV and JSONL cannot drift apart.
 * Columns: point, every swept key, seed, the figures (with R > 1 replications each numeric figure
 * `f` is the mean and `f_ci95` the 95 % confidence half-width), oom, memory.peak_gb,
 * memory.capacity_gb, memory.max_batch, error. */
#ifndef SIM_SWEEP_ROW_H
#define SIM_SWEEP_ROW_H

#include "sim/base/err.h"
#include "sim/core/run.h"
#include "sim/app/sweep_spec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum sim_sweep_format { SIM_SWEEP_CSV, SIM_SWEEP_JSONL } sim_sweep_format;

/* One flattened figure of a run. */
typedef struct sim_sweep_fig {
    char *name;  /* dotted JSON path, malloc'd */
    bool is_str; /* else a number */
    bool is_int; /* a JSON integer (steps, events): printed exactly */
    double num;
    char *str; /* is_str: malloc'd text */
} sim_sweep_fig;

/* Flattens the figures of res as `run --json` names them. *figs is malloc'd (free with
 * sim_sweep_figs_free). */
int sim_sweep_flatten(const sim_result *res, sim_sweep_fig **figs, size_t *n, sim_err *err);
void sim_sweep_figs_free(sim_sweep_fig *figs, size_t n);

/* The column layout of one sweep. */
typedef struct sim_sweep_layout {
    sim_sweep_format format;
    int replications;
    size_t n_swept;      /* swept columns, after `point` */
    sim_sweep_fig *tmpl; /* figure names and kinds (of an empty result) */
    size_t n_figs;
    char **names; /* every column, in order */
    size_t n_cols;
    size_t seed_col;
} sim_sweep_layout;

/* sampled: the rows are of sampled runs (run.sampled_pct > 0), which report more figures. */
int sim_sweep_layout_init(sim_sweep_layout *L, const sim_sweep_spec *s, sim_sweep_format format,
                          int replications, bool sampled, sim_err *err);
void sim_sweep_layout_free(sim_sweep_layout *L);

typedef enum sim_sweep_status { SIM_SWEEP_RAN, SIM_SWEEP_OOM, SIM_SWEEP_FAILED } sim_sweep_status;

/* What one point gave, to be written as a row. */
typedef struct sim_sweep_outcome {
    uint64_t index;
    const char **values; /* swept values, n_swept */
    uint64_t seed;
    sim_sweep_status status;
    sim_sweep_fig **figs; /* RAN: replications arrays of n_figs figures */
    sim_memory_info memory;
    const char *error; /* FAILED: the message */
} sim_sweep_outcome;

/* The header line (CSV; "" for JSONL), malloc'd, ending in a newline. */
char *sim_sweep_header(const sim_sweep_layout *L, size_t *len);

/* The row of one outcome: one line ending in a newline, malloc'd; NULL when out of memory. */
char *sim_sweep_row(const sim_sweep_layout *L, const sim_sweep_outcome *o, size_t *len);

/* Reads the identity of a row written before (for --resume): its point index, seed and swept
 * values (malloc'd array of n_swept malloc'd strings, free with sim_sweep_values_free; JSONL rows
 * give the values as they print). Returns SIM_EFORMAT when the line is not a row of this layout. */
int sim_sweep_row_identity(const sim_sweep_layout *L, const char *line, size_t len, uint64_t *index,
                           uint64_t *seed, char ***values);
void sim_sweep_values_free(char **values, size_t n);

/* The point index a row of format f begins with: the `point` column is first in both formats and
 * printed as a plain integer (`17,...` in CSV, `{"point":17,...` in JSON lines). Reads only that
 * much, for sweep merge, which copies rows without parsing them. Returns SIM_EFORMAT when the
 * line does not begin so. */
int sim_sweep_row_point(sim_sweep_format f, const char *line, size_t len, uint64_t *index);

/* Shortest text that reads back as exactly v (%.15g, else %.17g). */
void sim_sweep_format_num(double v, char *buf, size_t size);

#endif
