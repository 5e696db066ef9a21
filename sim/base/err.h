/* err.h — how fallible functions report what went wrong.
 * Every fallible call returns 0 or a negative SIM_E* code and fills an optional sim_err with the
 * place (file, 1-based line and column, or a command-line argument) and a sentence, so the CLI
 * can print it like a compiler: `configs/x.yaml:12:5: error: unknown key 'pcie_gne'`. */
#ifndef SIM_ERR_H
#define SIM_ERR_H

#include <stdio.h>

enum {
    SIM_OK = 0,
    SIM_EINVAL = -1,  /* bad input: config, trace, command line */
    SIM_ENOENT = -2,  /* a named file or catalog entry does not exist */
    SIM_EIO = -3,     /* reading or writing a file failed */
    SIM_ENOMEM = -4,  /* out of host memory */
    SIM_EFORMAT = -5, /* a file is truncated, corrupt or of an unknown version */
    SIM_EOOM = -6,    /* the simulated job does not fit in GPU memory */
    SIM_EUSAGE = -7,  /* wrong command-line usage */
    SIM_EBUDGET = -8, /* a run would take more host memory than its budget allows */
};

#define SIM_ERR_MSG_MAX 512
#define SIM_ERR_WHERE_MAX 512

typedef struct sim_err {
    int code;
    char where[SIM_ERR_WHERE_MAX]; /* file path, "--set ARG", or "" */
    int line;                      /* 1-based; 0 = unknown */
    int col;                       /* 1-based; 0 = unknown */
    long long offset;              /* byte offset in a binary file; -1 = unknown */
    char msg[SIM_ERR_MSG_MAX];
} sim_err;

/* Fills err (if not NULL) and returns code. `where` may be NULL. */
int sim_err_set(sim_err *err, int code, const char *where, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Like sim_err_set for binary files: records the byte offset of the problem. */
int sim_err_set_offset(sim_err *err, int code, const char *where, long long offset, const char *fmt,
                       ...) __attribute__((format(printf, 5, 6)));

/* Clears err to "no error". */
void sim_err_clear(sim_err *err);

/* Prints `where:line:col: error: msg` (parts that are unknown are left out) and a newline. */
void sim_err_print(const sim_err *err, FILE *out);

/* Aborts with file:line and the expression when a broken invariant (a bug, never bad input)
 * is found. Cheap checks stay on in release builds. */
#define SIM_ASSERT(expr) ((expr) ? (void)0 : sim_assert_fail(#expr, __FILE__, __LINE__))
_Noreturn void sim_assert_fail(const char *expr, const char *file, int line);

#endif
