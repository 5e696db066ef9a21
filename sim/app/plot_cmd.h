/* plot_cmd.h — `epochsim plot SWEEP.csv --x COL --y COL [--by COL] ...`: line plots of sweep
 * results (or any CSV with a header row) through gnuplot. */
#ifndef PLT_CLI_H
#define PLT_CLI_H

int sim_plot_cmd(int argc, char **argv);

/* Draws column y against x of the CSV at path, one line per value of by (NULL = one line), into
 * out (.png or .svg), as `epochsim plot` does; messages go to stderr. Returns an exit code. */
int sim_plot_csv(const char *path, const char *x, const char *y, const char *by, const char *out);

/* The unit of a column from its name's suffix (STYLE: units live in names), e.g. "s" for
 * epoch_time_s, "%" for gpu_util_pct; "count" for other numeric columns. Borrowed string. */
const char *plt_unit_of(const char *col);

#endif
