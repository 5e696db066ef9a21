/* names.h — "did you mean": the nearest of a list of names by edit distance, for unknown keys,
 * catalog entries, zoo models and enum values. */
#ifndef SIM_NAMES_H
#define SIM_NAMES_H

#include <stddef.h>

/* Levenshtein distance between a and b; SIZE_MAX when either is longer than 64 characters. */
size_t sim_edit_distance(const char *a, const char *b);

/* The name `word` abbreviates (the one sharing its longest prefix, when that is all of it but at
 * most its last character, 3 or more: "a100x" -> "a100-pcie-40gb", "nvm" -> "nvme-gen3"), else the
 * closest of n names by edit distance, or NULL when none is within a third of its length plus one
 * edits (a typo, not another name). */
const char *sim_nearest_name(const char *word, const char *const *names, size_t n);

#endif
