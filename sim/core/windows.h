/* windows.h — the fixed-length time windows that GPU-Util (NVML's sample periods, metrics.c) and
 * the host-side series of a run (CPU util and loader queue, run.c) share: how many there are up to
 * a time, how long each is (the last one may be partial), a per-window array that grows held to a
 * budget, and an interval spread over the windows it overlaps. Pure functions and plain arrays. */
#ifndef SIM_WINDOWS_H
#define SIM_WINDOWS_H

#include <stddef.h>
#include <stdint.h>

/* Windows that cover [0, end_ns): ceil(end_ns / window_ns). */
int64_t sim_windows_count(int64_t end_ns, int64_t window_ns);

/* Length of window w of a run that ended at end_ns: window_ns, or less for the last, partial one.
 */
int64_t sim_windows_len(int64_t w, int64_t end_ns, int64_t window_ns);

/* Grows the array *arr of elem-byte entries (capacity *cap) to hold `need` windows, zero-filling
 * the new ones, doubling from 1024. Returns 0, SIM_EBUDGET when need exceeds max (0 = no bound),
 * or SIM_ENOMEM (then *arr and *cap are unchanged). */
int sim_windows_reserve(void **arr, size_t elem, int64_t *cap, int64_t need, int64_t max);

/* Adds the part of [s, e) that falls in each window to acc[window] (ns); acc must hold the window
 * of e - 1. */
void sim_windows_add(int64_t *acc, int64_t window_ns, int64_t s, int64_t e);

#endif
