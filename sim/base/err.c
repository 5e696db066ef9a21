/* err.c — filling and printing sim_err (see err.h). */
#include "sim/base/err.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int fill(sim_err *err, int code, const char *where, int line, int col, long long offset,
                const char *fmt, va_list ap)
{
    if (!err) return code;
    err->code = code;
    snprintf(err->where, sizeof err->where, "%s", where ? where : "");
    err->line = line;
    err->col = col;
    err->offset = offset;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return code;
}

int sim_err_set(sim_err *err, int code, const char *where, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fill(err, code, where, line, col, -1, fmt, ap);
    va_end(ap);
    return code;
}

int sim_err_set_offset(sim_err *err, int code, const char *where, long long offset, const char *fmt,
                       ...)
{
    va_list ap;
    va_start(ap, fmt);
    fill(err, code, where, 0, 0, offset, fmt, ap);
    va_end(ap);
    return code;
}

void sim_err_clear(sim_err *err)
{
    if (!err) return;
    memset(err, 0, sizeof *err);
    err->offset = -1;
}

void sim_err_print(const sim_err *err, FILE *out)
{
    if (err->where[0]) {
        fputs(err->where, out);
        if (err->line > 0) {
            fprintf(out, ":%d", err->line);
            if (err->col > 0) fprintf(out, ":%d", err->col);
        }
        if (err->offset >= 0) fprintf(out, ": at byte %lld", err->offset);
        fputs(": ", out);
    }
    fprintf(out, "error: %s\n", err->msg);
}

_Noreturn void sim_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "%s:%d: internal error: assertion failed: %s\n", file, line, expr);
    abort();
}
