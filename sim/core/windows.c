/* windows.c — time windows shared by GPU-Util and the run's series (see windows.h). */
#include "sim/core/windows.h"

#include "sim/base/err.h"

#include <stdlib.h>
#include <string.h>

int64_t sim_windows_count(int64_t end_ns, int64_t window_ns)
{
    return (end_ns + window_ns - 1) / window_ns;
}

int64_t sim_windows_len(int64_t w, int64_t end_ns, int64_t window_ns)
{
    int64_t left = end_ns - w * window_ns;
    return left < window_ns ? left : window_ns;
}

int sim_windows_reserve(void **arr, size_t elem, int64_t *cap, int64_t need, int64_t max)
{
    if (need <= *cap) return 0;
    if (max && need > max) return SIM_EBUDGET;
    int64_t n = *cap ? *cap : 1024;
    while (n < need)
        n *= 2;
    char *a = realloc(*arr, (size_t)n * elem);
    if (!a) return SIM_ENOMEM;
    memset(a + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
    *arr = a;
    *cap = n;
    return 0;
}

void sim_windows_add(int64_t *acc, int64_t window_ns, int64_t s, int64_t e)
{
    for (int64_t w = s / window_ns; w <= (e - 1) / window_ns; w++) {
        int64_t ws = w * window_ns, we = ws + window_ns;
        int64_t a = s > ws ? s : ws, b = e < we ? e : we;
        acc[w] += b - a;
    }
}
