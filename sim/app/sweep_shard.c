/* sweep_shard.c — shard assignment, the grid fingerprint and the shard line (see sweep_shard.h).
 * FNV-1a is written here (sim_sweep_fnv1a) because none of the chosen Debian libraries exports a
 * documented stable 64-bit string hash: glib's g_str_hash is 32 bit and not promised stable, and
 * the others have none. FNV-1a is a few lines with a published definition and test vectors. */
#include "sim/app/sweep_shard.h"

#include "sim/setup/config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A decimal count of 1 to 18 digits at s, ending at `end`; returns its length or 0. */
static size_t count_at(const char *s, char end, unsigned long long *v)
{
    size_t len = strspn(s, "0123456789");
    if (len == 0 || len > 18 || s[len] != end) return 0;
    *v = strtoull(s, NULL, 10);
    return len;
}

int sim_sweep_shard_parse(const char *text, sim_sweep_shard *sh, sim_err *err)
{
    unsigned long long i = 0, n = 0;
    size_t li = count_at(text, '/', &i);
    if (!li || !count_at(text + li + 1, 0, &n))
        return sim_err_set(err, SIM_EINVAL, "--shard", 0, 0,
                           "'%s' is not I/N (shard I of N, counted from 0: 0/4 ... 3/4)", text);
    if (n == 0 || n > SIM_SWEEP_SHARDS_MAX)
        return sim_err_set(err, SIM_EINVAL, "--shard", 0, 0,
                           "'%s': the shard count N must be 1 to %llu", text,
                           (unsigned long long)SIM_SWEEP_SHARDS_MAX);
    if (i >= n)
        return sim_err_set(err, SIM_EINVAL, "--shard", 0, 0,
                           "'%s': the shard index I must be below N (0 to %llu)", text, n - 1);
    sh->index = i;
    sh->count = n;
    return SIM_OK;
}

uint64_t sim_sweep_shard_of(const char *point_key, uint64_t count)
{
    return sim_sweep_fnv1a(point_key, SIM_SWEEP_FNV_BASIS) % count;
}

/* Every key of the base experiment, `key=value` and a '*' when given, one per line. */
static uint64_t hash_base(const sim_experiment *base, const cfg_experiment_set *set, uint64_t h)
{
    const cfg_table *t = cfg_experiment_table();
    for (size_t i = 0; i < t->n; i++) {
        char value[1024];
        cfg_table_format(&t->fields[i], base, value, sizeof value);
        h = sim_sweep_fnv1a(t->fields[i].key, h);
        h = sim_sweep_fnv1a("=", h);
        h = sim_sweep_fnv1a(value, h);
        h = sim_sweep_fnv1a(set->flag[i] ? "*\n" : "\n", h);
    }
    return h;
}

/* The start of the fingerprint: format, replications, columns, base experiment, point count. */
static uint64_t hash_layout(const sim_sweep_layout *L, const sim_experiment *base,
                            const cfg_experiment_set *set, uint64_t points)
{
    char buf[64];
    uint64_t h = sim_sweep_fnv1a("epochsim sweep\n", SIM_SWEEP_FNV_BASIS);
    snprintf(buf, sizeof buf, "%s\nreplications=%d\n", L->format == SIM_SWEEP_CSV ? "csv" : "jsonl",
             L->replications);
    h = sim_sweep_fnv1a(buf, h);
    for (size_t i = 0; i < L->n_cols; i++) {
        h = sim_sweep_fnv1a(L->names[i], h);
        h = sim_sweep_fnv1a(",", h);
    }
    h = hash_base(base, set, sim_sweep_fnv1a("\n", h));
    snprintf(buf, sizeof buf, "points=%" PRIu64 "\n", points);
    return sim_sweep_fnv1a(buf, h);
}

int sim_sweep_shard_plan(const sim_sweep_spec *spec, const sim_experiment *base,
                         const cfg_experiment_set *base_set, const sim_sweep_layout *L,
                         sim_sweep_shard sh, unsigned char *member, sim_sweep_shard_head *head,
                         sim_err *err)
{
    uint64_t n = sim_sweep_spec_points(spec);
    const char **values = calloc(sim_sweep_spec_columns(spec) + 1, sizeof *values);
    if (!values) return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    memset(head, 0, sizeof *head);
    head->shard = sh;
    head->points = n;
    head->format = L->format;
    uint64_t h = hash_layout(L, base, base_set, n);
    for (uint64_t i = 0; i < n; i++) {
        sim_sweep_point p;
        sim_sweep_spec_point(spec, i, &p, values);
        char *key = sim_sweep_point_key(spec, &p, base, base_set);
        if (!key) {
            free(values);
            return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        }
        member[i] = sim_sweep_shard_of(key, sh.count) == sh.index;
        head->rows += member[i];
        h = sim_sweep_fnv1a("\n", sim_sweep_fnv1a(key, h));
        free(key);
    }
    head->fingerprint = h;
    free(values);
    return SIM_OK;
}

#define SHARD_LINE(u) "# epochsim sweep shard %" u "/%" u ": %" u " of %" u " points, "

char *sim_sweep_shard_line(const sim_sweep_shard_head *head, size_t *len)
{
    char buf[256];
    int n = snprintf(buf, sizeof buf, SHARD_LINE(PRIu64) "%s, grid fnv1a64:%016" PRIx64 "\n",
                     head->shard.index, head->shard.count, head->rows, head->points,
                     head->format == SIM_SWEEP_CSV ? "csv" : "jsonl", head->fingerprint);
    char *out = strdup(buf);
    if (out) *len = (size_t)n;
    return out;
}

int sim_sweep_shard_line_parse(const char *line, size_t len, sim_sweep_shard_head *head)
{
    char text[256], format[8];
    if (len >= sizeof text) return SIM_EFORMAT;
    memcpy(text, line, len);
    text[len] = 0;
    sim_sweep_shard_head h;
    int end = -1;
    if (sscanf(text, SHARD_LINE(SCNu64) "%7[a-z], grid fnv1a64:%16" SCNx64 "%n", &h.shard.index,
               &h.shard.count, &h.rows, &h.points, format, &h.fingerprint, &end) != 6 ||
        end != (int)len)
        return SIM_EFORMAT;
    if (!strcmp(format, "csv"))
        h.format = SIM_SWEEP_CSV;
    else if (!strcmp(format, "jsonl"))
        h.format = SIM_SWEEP_JSONL;
    else
        return SIM_EFORMAT;
    if (h.shard.count == 0 || h.shard.count > SIM_SWEEP_SHARDS_MAX ||
        h.shard.index >= h.shard.count || h.points > SIM_SWEEP_MAX_POINTS || h.rows > h.points)
        return SIM_EFORMAT;
    *head = h;
    return SIM_OK;
}
