/* cfgtable.h — table-driven loading of YAML into plain structs.
 * A table row names a dotted key ("loader.batch_size"), its type, where it lives in the struct
 * and its valid range. One walker serves experiment files, catalog entries and `--set` overrides,
 * so every key gets the same checks and the same `file:line:col` errors with a did-you-mean. */
#ifndef SIM_CFGTABLE_H
#define SIM_CFGTABLE_H

#include "sim/base/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

typedef enum cfg_type {
    CFG_T_INT,    /* int */
    CFG_T_INT64,  /* int64_t */
    CFG_T_U64,    /* uint64_t */
    CFG_T_DOUBLE, /* double */
    CFG_T_BOOL,   /* bool: true/false/yes/no/on/off */
    CFG_T_STR,    /* char[size] */
    CFG_T_PREC,   /* sim_precision by name */
    CFG_T_CURVE,  /* sim_curve: a list of [x, y] pairs, x ascending */
    CFG_T_ENUM,   /* int: the index of the value in `names` */
    CFG_T_LIST,   /* sim_int_list: distinct integers in [min, max], as [a, b] or "a,b" */
} cfg_type;

typedef struct cfg_field {
    const char *key;
    cfg_type type;
    size_t offset;
    size_t size;              /* CFG_T_STR: buffer size */
    double min, max;          /* numeric range, inclusive; min > max means "no range" */
    const char *help;         /* one line, with the unit */
    const char *const *names; /* CFG_T_ENUM: the accepted values, NULL-terminated */
} cfg_field;

#define CFG_NO_RANGE 1.0, 0.0

typedef struct cfg_table {
    const cfg_field *fields;
    size_t n;
    const char *const *extra_keys; /* top-level keys accepted and skipped (NULL-terminated) */
} cfg_table;

/* Where a key was given, so that errors found later (an unknown catalog name, a relation between
 * keys) point at it: `where` is the file path or "--set ARG" ("" = not given), line and col are
 * 1-based in the file (0 for --set). */
typedef struct cfg_mark {
    char where[160];
    int line, col;
} cfg_mark;

/* Fills err's place from mark when err has none and the mark was given. */
void cfg_mark_locate(const cfg_mark *mark, sim_err *err);

/* Parses the YAML file at path into *doc (free it with yaml_document_delete). A missing file or
 * a syntax error is an error naming the file (and the line and column). */
int cfg_yaml_load_file(const char *path, yaml_document_t *doc, sim_err *err);

/* Loads a YAML file (one mapping) into base. `set`, if not NULL, has t->n flags set to true for
 * each key the file gives; `marks`, if not NULL, t->n places filled for those keys (the value's
 * line and column). Errors name the file, 1-based line and column. */
int cfg_table_load_file(const cfg_table *t, const char *path, void *base, bool *set,
                        cfg_mark *marks, sim_err *err);

/* Loads one mapping node of a parsed document (see cfg_yaml_load_file) into base, as
 * cfg_table_load_file does for a whole file; errors name `path` with the node's line and column. */
int cfg_table_load_node(const cfg_table *t, yaml_document_t *doc, yaml_node_t *map,
                        const char *path, void *base, bool *set, cfg_mark *marks, sim_err *err);

/* Applies one `key.path=value` assignment; errors name the argument. */
int cfg_table_set(const cfg_table *t, const char *assignment, void *base, bool *set,
                  cfg_mark *marks, sim_err *err);

/* The row for a key, or NULL; *index gets its position when not NULL. */
const cfg_field *cfg_table_find(const cfg_table *t, const char *key, size_t *index);

/* Formats the value of a field into buf (for reports and sweep CSV columns). */
void cfg_table_format(const cfg_field *f, const void *base, char *buf, size_t size);

/* The closest key to `key` (edit distance), or NULL when none is close. */
const char *cfg_table_suggest(const cfg_table *t, const char *key);

#endif
