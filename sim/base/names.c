/* names.c — nearest names by edit distance, or a longer name the word abbreviates (see
 * names.h). */
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

static size_t common_prefix(const char *a, const char *b)
{
    size_t k = 0;
    while (a[k] && a[k] == b[k])
        k++;
    return k;
}

const char *sim_nearest_name(const char *word, const char *const *names, size_t n)
{
    /* A short form of a longer name ("a100" for a100-pcie-40gb, "nvm" for nvme-gen3): the name
     * sharing the longest prefix with the word (the first of equals), when that prefix is all of
     * the word but at most its last character, and 3 or more characters. */
    size_t len = strlen(word), need = len > 3 ? len - 1 : 3, longest = 0;
    const char *abbreviated = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t k = common_prefix(word, names[i]);
        if (k > longest && strcmp(word, names[i])) {
            longest = k;
            abbreviated = names[i];
        }
    }
    if (len >= 3 && longest >= need) return abbreviated;
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
