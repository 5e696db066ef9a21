/* heap.h — the one binary min-heap of the engine, for any element type: the event queue
 * (queue.c, by time then insertion) and processor sharing (ps.c, by finish point then arrival)
 * instantiate it with their own order. Elements are kept by value in the caller's array, which
 * the caller grows; the functions are static inline so each instance compiles to a loop over
 * its own type.
 *
 *   SIM_HEAP_DEFINE(name, T, before)   defines
 *     void name_push(T *h, size_t *n, T x)   adds x (h has room for *n + 1)
 *     T name_pop(T *h, size_t *n)            removes and returns the first (*n > 0)
 *   where before(const T *a, const T *b) is true when a comes first. */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H

#include <stddef.h>

#define SIM_HEAP_DEFINE(name, T, before)                                                           \
    static inline void name##_push(T *h, size_t *n, T x)                                           \
    {                                                                                              \
        size_t i = (*n)++;                                                                         \
        while (i > 0) {                                                                            \
            size_t parent = (i - 1) / 2;                                                           \
            if (!before(&x, &h[parent])) break;                                                    \
            h[i] = h[parent];                                                                      \
            i = parent;                                                                            \
        }                                                                                          \
        h[i] = x;                                                                                  \
    }                                                                                              \
    static inline T name##_pop(T *h, size_t *n)                                                    \
    {                                                                                              \
        T top = h[0];                                                                              \
        T last = h[--(*n)];                                                                        \
        size_t i = 0, m = *n;                                                                      \
        for (;;) {                                                                                 \
            size_t child = 2 * i + 1;                                                              \
            if (child >= m) break;                                                                 \
            if (child + 1 < m && before(&h[child + 1], &h[child])) child++;                        \
            if (!before(&h[child], &last)) break;                                                  \
            h[i] = h[child];                                                                       \
            i = child;                                                                             \
        }                                                                                          \
        if (m) h[i] = last;                                                                        \
        return top;                                                                                \
    }

#endif
