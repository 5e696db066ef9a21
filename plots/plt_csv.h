/* plt_csv.h — a CSV file with a header row read whole into memory (libcsv), for plotting sweep
 * results: cells stay strings; callers convert the columns they use. */
#ifndef PLT_CSV_H
#define PLT_CSV_H

#include "sim/base/err.h"

#include <stddef.h>

typedef struct plt_csv {
    char **cols; /* header names */
    int n_cols;
    char **cells; /* row-major, n_rows x n_cols */
    size_t n_rows;
} plt_csv;

/* Reads path. A row whose field count differs from the header's is an error naming its line.
 * Returns 0, SIM_ENOENT/SIM_EIO, SIM_EFORMAT or SIM_ENOMEM; free with plt_csv_free. */
int plt_csv_read(const char *path, plt_csv *t, sim_err *err);
void plt_csv_free(plt_csv *t);
/* Column index of name, or -1. */
int plt_csv_col(const plt_csv *t, const char *name);
/* Cell of row r, column c (borrowed). */
const char *plt_csv_cell(const plt_csv *t, size_t r, int c);

#endif
