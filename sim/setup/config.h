/* config.h — experiment files and `--set` overrides (the YAML contract of DESIGN.md §3).
 * Keys are dotted paths into sim_experiment; see cfg_experiment_table for the list, with units
 * and ranges. Cross-field checks (batch size vs dataset, ...) run in cfg_experiment_check. */
#ifndef SIM_CONFIG_H
#define SIM_CONFIG_H

#include "sim/setup/cfgtable.h"
#include "sim/base/err.h"
#include "sim/setup/experiment.h"

#include <stdbool.h>

/* The table of every experiment key. */
const cfg_table *cfg_experiment_table(void);

/* Set-flags for each key of the table (which keys a file or --set gave). */
typedef struct cfg_experiment_set {
    bool flag[128];
    cfg_mark mark[128]; /* where each given key was given */
} cfg_experiment_set;

/* Loads FILE on top of x (start from sim_experiment_defaults). */
int cfg_experiment_load(const char *path, sim_experiment *x, cfg_experiment_set *set, sim_err *err);
/* Like cfg_experiment_load, also accepting and skipping the top-level keys extra_keys names (a
 * sweep file's `sweep:` block). A relative workload.trace is resolved against FILE's folder. */
int cfg_experiment_load_with(const char *path, const char *const *extra_keys, sim_experiment *x,
                             cfg_experiment_set *set, sim_err *err);
/* Like cfg_experiment_load_with for one mapping `map` of a parsed document of the file at path
 * (an item of a `jobs:` list): errors name path with the node's line and column. */
int cfg_experiment_load_node(const char *path, yaml_document_t *doc, yaml_node_t *map,
                             const char *const *extra_keys, sim_experiment *x,
                             cfg_experiment_set *set, sim_err *err);
/* Whether key's value is a file path (workload.trace, system.catalog_overlay,
 * workload.seq_lengths): given in a file, a relative one is relative to the file's folder. */
bool cfg_experiment_path_key(const char *key);
/* Applies `key.path=value`. */
int cfg_experiment_apply(const char *assignment, sim_experiment *x, cfg_experiment_set *set,
                         sim_err *err);
/* Whether a key was given (by file or --set). */
bool cfg_experiment_was_set(const cfg_experiment_set *set, const char *key);
/* Points err at where `key` was given (file:line:col or --set ARG), if it was and err has no
 * place yet; returns rc, so that `return cfg_experiment_locate(set, "k", rc, err)` reads. */
int cfg_experiment_locate(const cfg_experiment_set *set, const char *key, int rc, sim_err *err);
/* Checks relations between keys that no single range can express. */
int cfg_experiment_check(const sim_experiment *x, const cfg_experiment_set *set, sim_err *err);

#endif
