/* names.c — nearest names by edit distance (see names.h). */
#include "sim/base/names.h"

#include <stdint.h>
#include <string.h>

size_t sim_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return SIZE_MAX;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *sim_nearest_name(const char *word, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t d = sim_edit_distance(word, names[i]);
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    return best_d <= strlen(word) / 3 + 1 ? best : NULL;
}
