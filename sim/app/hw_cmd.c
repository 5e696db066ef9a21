/* hw_cmd.c — `epochsim hw list|show|allreduce`: the hardware catalog as tables or JSON.
 * Every column comes from the loader's field tables (cfg_catalog_table), so what `hw show` prints
 * is exactly what a run would load; the per-field source comments, notes and citations are read
 * from the YAML file itself, because the structs do not carry them. */
#include "sim/app/hw_cmd.h"

#include "sim/app/allreduce_cmd.h"
#include "sim/core/topo.h"
#include "sim/setup/scenario.h"

#include "sim/setup/catalog.h"
#include "sim/setup/mig.h"
#include "sim/setup/cfgtable.h"
#include "sim/app/app.h"
#include "sim/base/err.h"
#include "sim/core/hw.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yaml.h>

#define MAX_FIELDS 64
#define VALUE_MAX 256

typedef union hw_entry {
    sim_gpu_desc gpu;
    sim_cpu_desc cpu;
    sim_storage_desc storage;
    sim_link_desc link;
    sim_system_desc system;
} hw_entry;

/* What the YAML file says beyond the struct: the trailing `# ...` of each field, `notes`, and
 * `sources` (key -> citation), in file order. */
typedef struct hw_file_info {
    char *comment[MAX_FIELDS];
    char *notes;
    size_t n_sources;
    char **source_key;
    char **source_text;
} hw_file_info;

/* Columns of `hw list`, per kind: the figures that tell entries apart at a glance. */
static const char *const list_columns[CFG_CAT_COUNT][9] = {
    [CFG_CAT_GPU] = {"label", "sms", "fp32_tflops", "fp16_tflops", "mem_gb", "mem_bw_gbps",
                     "nvlink_gbps", NULL},
    [CFG_CAT_CPU] = {"label", "cores", "threads", "boost_ghz", "single_thread", "mem_bw_gbps",
                     NULL},
    [CFG_CAT_STORAGE] = {"label", "read_mbps", "latency_us", "queue_depth", NULL},
    [CFG_CAT_LINK] = {"gen", "lanes", "pinned_gbps", "pageable_gbps", "copy_overhead_us", NULL},
    [CFG_CAT_SYSTEM] = {"gpu", "gpu_count", "cpu", "cpu_cores", "cpu_threads", "storage",
                        "host_memory_gb", "nvlink", NULL},
};

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: epochsim hw list [gpus|cpus|storage|links|systems] [--json] [--catalog DIR]\n"
        "       epochsim hw show NAME [--kind KIND] [--json] [--catalog DIR]\n"
        "       epochsim hw allreduce SYSTEM [--gpus N] [--bytes SIZE|MIN:MAX] ... (--help)\n"
        "\n"
        "Lists the hardware catalog or shows one entry with every field, its unit, the source\n"
        "comment of its line, the notes and the citations.\n"
        "\n"
        "options:\n"
        "  --json         print JSON (stable keys: the catalog field names) instead of a table\n"
        "  --kind KIND    with show: look NAME up in one kind only\n"
        "  --catalog DIR  catalog folder (default: $EPOCHSIM_CATALOG, else the built-in one)\n"
        "\n"
        "examples:\n"
        "  epochsim hw list                      every kind, one table each\n"
        "  epochsim hw list gpus                 the GPUs with their key figures\n"
        "  epochsim hw show a100-sxm4-80gb       all fields of one GPU, with sources\n"
        "  epochsim hw show dgx-a100 --json      one system as JSON\n"
        "  epochsim hw allreduce dgx-a100 --bytes 4G   all_reduce_perf as the model sees it\n"
        "  epochsim hw list cpus --json | jq '.cpus[] | {name, single_thread}'\n");
}

static bool parse_kind(const char *s, cfg_catalog_kind *out)
{
    static const char *const singular[CFG_CAT_COUNT] = {"gpu", "cpu", "storage", "link", "system"};
    for (int k = 0; k < CFG_CAT_COUNT; k++)
        if (!strcmp(s, cfg_catalog_kind_dir((cfg_catalog_kind)k)) || !strcmp(s, singular[k])) {
            *out = (cfg_catalog_kind)k;
            return true;
        }
    return false;
}

/* Units live in the field names (_tflops, _gbps, ...); the rest are spelled out here. */
static const char *unit_of(const char *key)
{
    static const struct {
        const char *suffix, *unit;
    } suffixes[] = {
        {"_tflops", "TFLOP/s"}, {"_gbps", "GB/s"}, {"_mbps", "MB/s"}, {"_gb", "GB"},
        {"_mb", "MB"},          {"_mhz", "MHz"},   {"_ghz", "GHz"},   {"_ms", "ms"},
        {"_us", "us"},          {"_ns", "ns"},     {"_w", "W"},
    };
    static const struct {
        const char *key, *unit;
    } named[] = {
        {"pcie_lanes", "lanes"},
        {"lanes", "lanes"},
        {"launch_queue_depth", "kernels"},
        {"max_blocks_per_sm", "blocks"},
        {"single_thread", "x ref. core"},
        {"smt_gain", "cores"},
        {"queue_depth", "requests"},
        {"gpu_count", "GPUs"},
        {"cpu_cores", "cores"},
        {"cpu_threads", "threads"},
        {"eff_tensor", "[log10 FLOPs, fraction]"},
        {"eff_cuda", "[log10 FLOPs, fraction]"},
        {"eff_mem", "[log10 bytes, fraction]"},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (!strcmp(key, named[i].key)) return named[i].unit;
    size_t len = strlen(key);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t sl = strlen(suffixes[i].suffix);
        if (len > sl && !strcmp(key + len - sl, suffixes[i].suffix)) return suffixes[i].unit;
    }
    return "";
}

static bool is_numeric(const cfg_field *f)
{
    return f->type == CFG_T_INT || f->type == CFG_T_INT64 || f->type == CFG_T_U64 ||
           f->type == CFG_T_DOUBLE;
}

/* A system leaves fields empty or zero to mean "the part's own value" (hw.h). */
static bool is_unset(cfg_catalog_kind kind, const cfg_field *f, const void *base)
{
    const char *p = (const char *)base + f->offset;
    if (f->type == CFG_T_CURVE) return ((const sim_curve *)p)->n == 0;
    if (kind != CFG_CAT_SYSTEM || !strcmp(f->key, "name")) return false;
    switch (f->type) {
    case CFG_T_STR:
        return p[0] == 0;
    case CFG_T_INT:
        return *(const int *)p == 0;
    case CFG_T_DOUBLE:
        return *(const double *)p == 0;
    default:
        return false;
    }
}

static void format_value(const cfg_field *f, const void *base, char *buf, size_t size)
{
    if (!strcmp(f->key, "compute_capability")) /* 8.0, not 8 */
        snprintf(buf, size, "%.1f", *(const double *)((const char *)base + f->offset));
    else if (f->type == CFG_T_DOUBLE)
        snprintf(buf, size, "%.10g", *(const double *)((const char *)base + f->offset));
    else
        cfg_table_format(f, base, buf, size);
}

static void file_info_free(hw_file_info *fi)
{
    for (int i = 0; i < MAX_FIELDS; i++)
        free(fi->comment[i]);
    free(fi->notes);
    for (size_t i = 0; i < fi->n_sources; i++) {
        free(fi->source_key[i]);
        free(fi->source_text[i]);
    }
    free(fi->source_key);
    free(fi->source_text);
    memset(fi, 0, sizeof *fi);
}

static char *trimmed_dup(const char *s, size_t len)
{
    while (len && (*s == ' ' || *s == '\t')) {
        s++;
        len--;
    }
    while (len &&
           (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' || s[len - 1] == '\r'))
        len--;
    return strndup(s, len);
}

/* The comment after a top-level `key: value`, skipping a quoted value; NULL when none. */
static const char *line_comment(const char *line)
{
    const char *p = strchr(line, ':');
    if (!p) return NULL;
    p++;
    while (*p == ' ')
        p++;
    if (*p == '"' || *p == '\'') {
        char q = *p++;
        while (*p && *p != q)
            p += (*p == '\\' && q == '"' && p[1]) ? 2 : 1;
    }
    for (; *p; p++)
        if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) return p + 1;
    return NULL;
}

static int read_comments(const cfg_table *t, const char *path, hw_file_info *fi, sim_err *err)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return sim_err_set(err, SIM_EIO, path, 0, 0, "cannot open");
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, fp) > 0) {
        if (line[0] < 'a' || line[0] > 'z') continue;
        size_t klen = strcspn(line, ":");
        if (!line[klen] || klen >= 128) continue;
        char key[128];
        memcpy(key, line, klen);
        key[klen] = 0;
        size_t index = 0;
        const char *c = line_comment(line);
        if (c && cfg_table_find(t, key, &index) && index < MAX_FIELDS && !fi->comment[index])
            fi->comment[index] = trimmed_dup(c, strlen(c));
    }
    free(line);
    fclose(fp);
    return SIM_OK;
}

static int add_source(hw_file_info *fi, const char *key, const char *text)
{
    char **k = realloc(fi->source_key, (fi->n_sources + 1) * sizeof *k);
    if (!k) return SIM_ENOMEM;
    fi->source_key = k;
    char **v = realloc(fi->source_text, (fi->n_sources + 1) * sizeof *v);
    if (!v) return SIM_ENOMEM;
    fi->source_text = v;
    fi->source_key[fi->n_sources] = strdup(key);
    fi->source_text[fi->n_sources] = strdup(text);
    fi->n_sources++;
    return SIM_OK;
}

/* `notes` and `sources` through libyaml (the loader skips both keys). */
static int read_extras(const char *path, hw_file_info *fi, sim_err *err)
{
    yaml_document_t doc;
    int rc = cfg_yaml_load_file(path, &doc, err);
    if (rc) return rc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && root->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
             pr < root->data.mapping.pairs.top && rc == SIM_OK; pr++) {
            yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
            yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
            if (k->type != YAML_SCALAR_NODE) continue;
            const char *key = (const char *)k->data.scalar.value;
            if (!strcmp(key, "notes") && v->type == YAML_SCALAR_NODE && !fi->notes) {
                fi->notes = strdup((const char *)v->data.scalar.value);
            } else if (!strcmp(key, "sources") && v->type == YAML_MAPPING_NODE) {
                for (yaml_node_pair_t *sp = v->data.mapping.pairs.start;
                     sp < v->data.mapping.pairs.top && rc == SIM_OK; sp++) {
                    yaml_node_t *sk = yaml_document_get_node(&doc, sp->key);
                    yaml_node_t *sv = yaml_document_get_node(&doc, sp->value);
                    if (sk->type == YAML_SCALAR_NODE && sv->type == YAML_SCALAR_NODE)
                        rc = add_source(fi, (const char *)sk->data.scalar.value,
                                        (const char *)sv->data.scalar.value);
                }
                if (rc) rc = sim_err_set(err, rc, path, 0, 0, "out of memory");
            }
        }
    }
    yaml_document_delete(&doc);
    return rc;
}

static void entry_path(const char *dir, cfg_catalog_kind kind, const char *name, char *buf,
                       size_t size)
{
    snprintf(buf, size, "%s/%s/%s.yaml", dir, cfg_catalog_kind_dir(kind), name);
}

/* ---------------------------------------------------------------- JSON */

static void json_str(yajl_gen g, const char *s)
{
    yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void json_value(yajl_gen g, cfg_catalog_kind kind, const cfg_field *f, const void *base)
{
    const char *p = (const char *)base + f->offset;
    char buf[VALUE_MAX];
    if (is_unset(kind, f, base)) {
        yajl_gen_null(g);
        return;
    }
    switch (f->type) {
    case CFG_T_INT:
        yajl_gen_integer(g, *(const int *)p);
        break;
    case CFG_T_DOUBLE:
        /* %.10g keeps catalog numbers as written (166.7, not 166.69999999999999). */
        snprintf(buf, sizeof buf, "%.10g", *(const double *)p);
        yajl_gen_number(g, buf, strlen(buf));
        break;
    case CFG_T_BOOL:
        yajl_gen_bool(g, *(const bool *)p);
        break;
    case CFG_T_CURVE: {
        const sim_curve *c = (const sim_curve *)p;
        yajl_gen_array_open(g);
        for (int i = 0; i < c->n; i++) {
            yajl_gen_array_open(g);
            yajl_gen_double(g, c->x[i]);
            yajl_gen_double(g, c->y[i]);
            yajl_gen_array_close(g);
        }
        yajl_gen_array_close(g);
        break;
    }
    default:
        cfg_table_format(f, base, buf, sizeof buf);
        json_str(g, buf);
        break;
    }
}

static void json_entry(yajl_gen g, cfg_catalog_kind kind, const void *base)
{
    const cfg_table *t = cfg_catalog_table(kind);
    yajl_gen_map_open(g);
    for (size_t i = 0; i < t->n; i++) {
        json_str(g, t->fields[i].key);
        json_value(g, kind, &t->fields[i], base);
    }
    yajl_gen_map_close(g);
}

static yajl_gen json_open(void)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    if (g) yajl_gen_config(g, yajl_gen_beautify, 1);
    return g;
}

static void json_close(yajl_gen g)
{
    const unsigned char *buf = NULL;
    size_t len = 0;
    if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok) fwrite(buf, 1, len, stdout);
    yajl_gen_free(g);
}

/* ---------------------------------------------------------------- tables */

typedef struct table {
    size_t cols, rows, cap;
    char **cell; /* rows x cols, row-major; row 0 is the header */
    bool right[16];
} table;

static int table_add(table *t, const char *const *values)
{
    if (t->rows == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 32;
        char **grown = realloc(t->cell, cap * t->cols * sizeof *grown);
        if (!grown) return SIM_ENOMEM;
        t->cell = grown;
        t->cap = cap;
    }
    for (size_t c = 0; c < t->cols; c++)
        t->cell[t->rows * t->cols + c] = strdup(values[c] ? values[c] : "");
    t->rows++;
    return SIM_OK;
}

static void table_print(const table *t, FILE *out)
{
    size_t width[16] = {0};
    size_t line_size = 1;
    for (size_t c = 0; c < t->cols; c++) {
        for (size_t r = 0; r < t->rows; r++) {
            size_t w = strlen(t->cell[r * t->cols + c]);
            if (w > width[c]) width[c] = w;
        }
        line_size += width[c] + 2;
    }
    char *line = malloc(line_size);
    if (!line) return;
    for (size_t r = 0; r < t->rows; r++) {
        size_t used = 0;
        for (size_t c = 0; c < t->cols; c++) {
            const char *s = t->cell[r * t->cols + c];
            int w = (int)width[c];
            used += (size_t)snprintf(line + used, line_size - used,
                                     t->right[c] && r > 0 ? "%*s%s" : "%-*s%s", w, s,
                                     c + 1 < t->cols ? "  " : "");
        }
        while (used && line[used - 1] == ' ') /* no trailing blanks after an empty last cell */
            line[--used] = 0;
        fprintf(out, "%s\n", line);
    }
    free(line);
}

static void table_free(table *t)
{
    for (size_t i = 0; i < t->rows * t->cols; i++)
        free(t->cell[i]);
    free(t->cell);
    memset(t, 0, sizeof *t);
}

/* Prints text indented and wrapped at width columns. */
static void print_wrapped(const char *text, int indent, int width, FILE *out)
{
    int col = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\n')
            p++;
        size_t len = strcspn(p, " \n");
        if (!len) break;
        if (col > indent && col + 1 + (int)len > width) {
            fputc('\n', out);
            col = 0;
        }
        if (col == 0)
            col = fprintf(out, "%*s", indent, "");
        else
            col += fprintf(out, " ");
        col += fprintf(out, "%.*s", (int)len, p);
        p += len;
    }
    if (col) fputc('\n', out);
}

/* ---------------------------------------------------------------- list */

static int list_kind_table(const char *dir, cfg_catalog_kind kind, char **names, size_t n,
                           const hw_entry *entries, const bool *ok)
{
    const cfg_table *t = cfg_catalog_table(kind);
    table tab = {0};
    const cfg_field *cols[10];
    size_t nc = 0;
    for (const char *const *k = list_columns[kind]; *k; k++)
        cols[nc++] = cfg_table_find(t, *k, NULL);
    tab.cols = nc + 1;
    const char *row[12];
    row[0] = "name";
    for (size_t c = 0; c < nc; c++) {
        row[c + 1] = cols[c]->key;
        tab.right[c + 1] = is_numeric(cols[c]);
    }
    int rc = table_add(&tab, row);
    char vals[10][VALUE_MAX];
    for (size_t i = 0; i < n && rc == SIM_OK; i++) {
        if (!ok[i]) continue;
        row[0] = names[i];
        for (size_t c = 0; c < nc; c++) {
            if (is_unset(kind, cols[c], &entries[i]))
                snprintf(vals[c], sizeof vals[c], "-");
            else
                format_value(cols[c], &entries[i], vals[c], sizeof vals[c]);
            row[c + 1] = vals[c];
        }
        rc = table_add(&tab, row);
    }
    if (rc == SIM_OK) {
        printf("%s (%zu) in %s/%s\n", cfg_catalog_kind_dir(kind), n, dir,
               cfg_catalog_kind_dir(kind));
        table_print(&tab, stdout);
    } else {
        fprintf(stderr, "epochsim hw: out of memory\n");
    }
    table_free(&tab);
    return rc == SIM_OK ? SIM_EXIT_OK : SIM_EXIT_ERROR;
}

static int cmd_list(const char *dir, int kind_filter, bool json)
{
    int exit_code = SIM_EXIT_OK;
    yajl_gen g = NULL;
    if (json) {
        g = json_open();
        if (!g) {
            fprintf(stderr, "epochsim hw: out of memory\n");
            return SIM_EXIT_ERROR;
        }
        yajl_gen_map_open(g);
    }
    bool first = true;
    for (int k = 0; k < CFG_CAT_COUNT; k++) {
        if (kind_filter >= 0 && k != kind_filter) continue;
        cfg_catalog_kind kind = (cfg_catalog_kind)k;
        sim_err err;
        sim_err_clear(&err);
        char **names = NULL;
        size_t n = 0;
        if (cfg_catalog_list(dir, kind, &names, &n, &err)) {
            fputs("epochsim hw: ", stderr);
            sim_err_print(&err, stderr);
            exit_code = SIM_EXIT_ERROR;
            continue;
        }
        hw_entry *entries = calloc(n ? n : 1, sizeof *entries);
        bool *ok = calloc(n ? n : 1, sizeof *ok);
        if (!entries || !ok) {
            fprintf(stderr, "epochsim hw: out of memory\n");
            free(entries);
            free(ok);
            cfg_catalog_names_free(names, n);
            exit_code = SIM_EXIT_ERROR;
            break;
        }
        for (size_t i = 0; i < n; i++) {
            sim_err_clear(&err);
            if (cfg_catalog_load(dir, kind, names[i], &entries[i], &err)) {
                fputs("epochsim hw: ", stderr);
                sim_err_print(&err, stderr);
                exit_code = SIM_EXIT_ERROR;
            } else {
                ok[i] = true;
            }
        }
        if (json) {
            json_str(g, cfg_catalog_kind_dir(kind));
            yajl_gen_array_open(g);
            for (size_t i = 0; i < n; i++)
                if (ok[i]) json_entry(g, kind, &entries[i]);
            yajl_gen_array_close(g);
        } else {
            if (!first) putchar('\n');
            if (list_kind_table(dir, kind, names, n, entries, ok)) exit_code = SIM_EXIT_ERROR;
        }
        first = false;
        free(entries);
        free(ok);
        cfg_catalog_names_free(names, n);
    }
    if (json) {
        yajl_gen_map_close(g);
        json_close(g);
    }
    return exit_code;
}

/* ---------------------------------------------------------------- show */

static bool has_name(char **names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return true;
    return false;
}

/* Finds the kinds holding NAME; prints names that contain it when there is none. */
static int find_kind(const char *dir, const char *name, int kind_filter, cfg_catalog_kind *out)
{
    int found = 0;
    char near[1024] = "";
    size_t used = 0;
    for (int k = 0; k < CFG_CAT_COUNT; k++) {
        if (kind_filter >= 0 && k != kind_filter) continue;
        char **names = NULL;
        size_t n = 0;
        if (cfg_catalog_list(dir, (cfg_catalog_kind)k, &names, &n, NULL)) continue;
        if (has_name(names, n, name)) {
            if (found++ == 0) *out = (cfg_catalog_kind)k;
        } else {
            for (size_t i = 0; i < n; i++)
                if (strstr(names[i], name) && used + strlen(names[i]) + 3 < sizeof near)
                    used += (size_t)snprintf(near + used, sizeof near - used, "%s%s",
                                             used ? ", " : "", names[i]);
        }
        cfg_catalog_names_free(names, n);
    }
    if (found == 0) {
        fprintf(stderr, "epochsim hw: no catalog entry named '%s' in %s", name, dir);
        if (near[0]) fprintf(stderr, " (did you mean: %s?)", near);
        fprintf(stderr, "; `epochsim hw list` shows them all\n");
        return SIM_EXIT_ERROR;
    }
    if (found > 1) {
        fprintf(stderr, "epochsim hw: '%s' names entries of several kinds; add --kind\n", name);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* A system's parts, resolved: a missing part is a catalog error. */
static int show_parts(const char *dir, const sim_system_desc *s, FILE *out)
{
    const struct {
        const char *role;
        cfg_catalog_kind kind;
        const char *name;
    } parts[] = {{"gpu", CFG_CAT_GPU, s->gpu},
                 {"cpu", CFG_CAT_CPU, s->cpu},
                 {"storage", CFG_CAT_STORAGE, s->storage}};
    int exit_code = SIM_EXIT_OK;
    fprintf(out, "\nparts:\n");
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (!parts[i].name[0]) {
            fprintf(out, "  %-8s (from the experiment)\n", parts[i].role);
            continue;
        }
        hw_entry e;
        sim_err err;
        sim_err_clear(&err);
        if (cfg_catalog_load(dir, parts[i].kind, parts[i].name, &e, &err)) {
            fputs("epochsim hw: ", stderr);
            sim_err_print(&err, stderr);
            exit_code = SIM_EXIT_ERROR;
            continue;
        }
        /* label follows name in every desc that has one */
        const char *label = parts[i].kind == CFG_CAT_GPU   ? e.gpu.label
                            : parts[i].kind == CFG_CAT_CPU ? e.cpu.label
                                                           : e.storage.label;
        fprintf(out, "  %-8s %s (%s)\n", parts[i].role, parts[i].name, label);
    }
    return exit_code;
}

/* A system's interconnect as a run resolves it: each GPU's slot (the CPU's lane budget), the
 * NVLink and P2P that decide the all-reduce ring, and that ring's slowest hop. */
static sim_hardware *resolve_system(const char *dir, const char *name)
{
    sim_hardware *hw = malloc(sizeof *hw);
    sim_err err;
    sim_err_clear(&err);
    if (hw && !sim_system_hardware(dir, name, NULL, 0, hw, &err)) return hw;
    if (!hw) sim_err_set(&err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    fputs("epochsim hw: ", stderr);
    sim_err_print(&err, stderr);
    free(hw);
    return NULL;
}

static int show_links(const char *dir, const char *name, FILE *out)
{
    sim_hardware *hw = resolve_system(dir, name);
    if (!hw) return SIM_EXIT_ERROR;
    fprintf(out, "\nlinks:\n  PCIe     %d lanes from %s for %d GPU%s:", hw->cpu.pcie_lanes,
            hw->cpu.name, hw->gpu_count, hw->gpu_count == 1 ? "" : "s");
    for (int i = 0; i < hw->gpu_count; i++)
        fprintf(out, " x%d", sim_topo_gpu_lanes(hw, i));
    fprintf(out, " (gen %d; H2D %.1f GB/s pinned at x%d)\n", hw->link.gen,
            sim_topo_pinned_gbps(hw, 0), sim_topo_gpu_lanes(hw, 0));
    if (hw->topo.switch_gpus > 0) {
        int n = sim_topo_switch_of(hw, hw->gpu_count - 1) + 1;
        fprintf(out,
                "  switches %d PCIe switch%s, %d GPUs behind each, on x%d uplinks (%.1f GB/s "
                "pinned, shared by the GPUs behind it)\n",
                n, n == 1 ? "" : "es", hw->topo.switch_gpus, hw->topo.uplink_lanes[0],
                sim_topo_uplink_gbps(hw, 0));
    }
    if (hw->topo.sockets > 1)
        fprintf(out,
                "  sockets  %d, the GPUs' slots split evenly among them; a ring across them is "
                "held to %.0f GB/s (NCCL's rate of the link between sockets for this CPU)\n",
                hw->topo.sockets, hw->topo.socket_link_gbps);
    fprintf(out, "  NVLink   %s", sim_nvlink_names[hw->topo.nvlink]);
    if (hw->topo.nvlink != SIM_NVLINK_NONE)
        fprintf(out, ", %d links per GPU at %.1f GB/s per direction (NCCL's rate)",
                hw->topo.nvlink_links, hw->topo.nvlink_link_gbps);
    if (hw->topo.nvlink == SIM_NVLINK_NVSWITCH && hw->topo.nvls_eff > 0)
        fprintf(out, "; the switches reduce (NVLS all-reduce at %.2f of the link rate)",
                hw->topo.nvls_eff);
    if (!hw->topo.p2p)
        fprintf(out, "\n  P2P      no: peer traffic bounces through host memory\n");
    else if (hw->topo.p2p_cpu_max_gpus >= hw->gpu_count)
        fprintf(out, "\n  P2P      yes\n");
    else
        fprintf(
            out,
            "\n  P2P      below a common PCIe switch; across the CPU %s, else through host "
            "memory\n",
            hw->topo.p2p_cpu_max_gpus > 0
                ? "for rings of two GPUs (NCCL 2.23.4+, bundled from PyTorch 2.7, on an AMD CPU)"
                : "never (NCCL's P2P level on Intel and ARM CPUs)");
    if (hw->gpu_count > 1) {
        sim_ring r = sim_topo_ring(hw, NULL, hw->gpu_count);
        fprintf(out,
                "  ring     slowest hop %s at %.2f GB/s per direction (epochsim hw allreduce %s)\n",
                sim_path_name(r.path), r.bw_gbps, name);
    }
    free(hw);
    return SIM_EXIT_OK;
}

/* A system's `links` member of `hw show --json`: what show_links prints. */
static int json_links(yajl_gen g, const char *dir, const char *name)
{
    sim_hardware *hw = resolve_system(dir, name);
    if (!hw) return SIM_EXIT_ERROR;
    json_str(g, "links");
    yajl_gen_map_open(g);
    json_str(g, "pcie_lanes");
    yajl_gen_array_open(g);
    for (int i = 0; i < hw->gpu_count; i++)
        yajl_gen_integer(g, sim_topo_gpu_lanes(hw, i));
    yajl_gen_array_close(g);
    json_str(g, "nvlink");
    json_str(g, sim_nvlink_names[hw->topo.nvlink]);
    json_str(g, "nvlink_links");
    yajl_gen_integer(g, hw->topo.nvlink_links);
    json_str(g, "pcie_switch_gpus");
    yajl_gen_integer(g, hw->topo.switch_gpus);
    json_str(g, "p2p");
    yajl_gen_bool(g, hw->topo.p2p);
    json_str(g, "p2p_cpu_max_gpus");
    yajl_gen_integer(g, hw->topo.p2p_cpu_max_gpus);
    json_str(g, "nvls_eff");
    yajl_gen_double(g, hw->topo.nvlink == SIM_NVLINK_NVSWITCH ? hw->topo.nvls_eff : 0);
    sim_ring r = sim_topo_ring(hw, NULL, hw->gpu_count);
    json_str(g, "ring_path");
    if (hw->gpu_count > 1)
        json_str(g, sim_path_name(r.path));
    else
        yajl_gen_null(g);
    json_str(g, "ring_bw_gbps");
    yajl_gen_double(g, r.bw_gbps);
    yajl_gen_map_close(g);
    free(hw);
    return SIM_EXIT_OK;
}

/* `hw show --json`: the entry, its units, comments, notes and sources as one object. */
static int show_json(const char *dir, const char *name, cfg_catalog_kind kind, const cfg_table *t,
                     const hw_entry *e, const hw_file_info *fi)
{
    yajl_gen g = json_open();
    if (!g) {
        fprintf(stderr, "epochsim hw: out of memory\n");
        return SIM_EXIT_ERROR;
    }
    yajl_gen_map_open(g);
    json_str(g, "kind");
    json_str(g, cfg_catalog_kind_dir(kind));
    json_str(g, "entry");
    json_entry(g, kind, e);
    json_str(g, "units");
    yajl_gen_map_open(g);
    for (size_t i = 0; i < t->n; i++) {
        json_str(g, t->fields[i].key);
        json_str(g, unit_of(t->fields[i].key));
    }
    yajl_gen_map_close(g);
    json_str(g, "comments");
    yajl_gen_map_open(g);
    for (size_t i = 0; i < t->n && i < MAX_FIELDS; i++)
        if (fi->comment[i]) {
            json_str(g, t->fields[i].key);
            json_str(g, fi->comment[i]);
        }
    yajl_gen_map_close(g);
    if (kind == CFG_CAT_SYSTEM && json_links(g, dir, name)) {
        yajl_gen_free(g);
        return SIM_EXIT_ERROR;
    }
    if (kind == CFG_CAT_GPU) { /* derived when the catalog is read (sim/setup/catalog.c) */
        json_str(g, "clock_factor");
        yajl_gen_double(g, e->gpu.clock_factor);
        json_str(g, "clock_factor_tensor");
        yajl_gen_double(g, e->gpu.clock_factor_tensor);
    }
    json_str(g, "notes");
    if (fi->notes)
        json_str(g, fi->notes);
    else
        yajl_gen_null(g);
    json_str(g, "sources");
    yajl_gen_map_open(g);
    for (size_t i = 0; i < fi->n_sources; i++) {
        json_str(g, fi->source_key[i]);
        json_str(g, fi->source_text[i]);
    }
    yajl_gen_map_close(g);
    yajl_gen_map_close(g);
    json_close(g);
    return SIM_EXIT_OK;
}

/* `hw show`: the table of fields, value, unit and comment; returns an exit code. */
static int field_table(cfg_catalog_kind kind, const cfg_table *t, const hw_entry *e,
                       const hw_file_info *fi)
{
    table tab = {.cols = 4};
    const char *row[4] = {"field", "value", "unit", "source / note"};
    int rc = table_add(&tab, row);
    for (size_t i = 0; i < t->n && rc == SIM_OK; i++) {
        const cfg_field *f = &t->fields[i];
        char val[VALUE_MAX];
        if (is_unset(kind, f, e))
            snprintf(val, sizeof val, f->type == CFG_T_CURVE ? "(model default)" : "-");
        else
            format_value(f, e, val, sizeof val);
        row[0] = f->key;
        row[1] = val;
        row[2] = unit_of(f->key);
        row[3] = i < MAX_FIELDS && fi->comment[i] ? fi->comment[i] : "";
        rc = table_add(&tab, row);
    }
    if (rc == SIM_OK) table_print(&tab, stdout);
    table_free(&tab);
    return rc == SIM_OK ? SIM_EXIT_OK : SIM_EXIT_ERROR;
}

/* The MIG profiles of a GPU, each with the instance's figures (sim/setup/mig.h). */
static int show_mig(const char *dir, const sim_gpu_desc *gpu, FILE *out)
{
    sim_mig_table t;
    sim_err err;
    sim_err_clear(&err);
    if (cfg_mig_load(dir, gpu->name, &t, &err)) {
        sim_err_print(&err, stderr);
        return 1;
    }
    if (!t.n) return 0;
    fprintf(out,
            "\nMIG: %d compute x %d memory slices (MIG leaves unused SMs out of each profile)\n",
            t.compute_slices, t.memory_slices);
    fprintf(out, "  %-10s %6s %4s %7s %9s %6s %3s %4s  %s\n", "profile", "slices", "SMs", "mem_gb",
            "bw_gbps", "l2_mb", "CE", "max", "starts");
    for (int i = 0; i < t.n; i++) {
        const sim_mig_profile *p = &t.p[i];
        sim_gpu_desc g = *gpu;
        sim_mig_apply(&t, p, &g);
        fprintf(out, "  %-10s %4d/%d %4d %7.1f %9.0f %6.1f %3d %4d ", p->name, p->slices,
                t.compute_slices, p->sms, g.mem_gb, g.mem_bw_gbps, g.l2_mb, p->copy_engines,
                p->max_instances);
        for (int k = 0; k < p->n_starts; k++)
            fprintf(out, "%s%d", k ? "," : " ", p->starts[k]);
        fputc('\n', out);
    }
    return 0;
}

/* `hw show` as text: heading, field table, a system's parts, notes and sources. */
static int show_text(const char *dir, const char *name, cfg_catalog_kind kind, const char *path,
                     const hw_entry *e, const hw_file_info *fi)
{
    printf("%s (%s)\nfile: %s\n\n", name, cfg_catalog_kind_dir(kind), path);
    int exit_code = field_table(kind, cfg_catalog_table(kind), e, fi);
    if (kind == CFG_CAT_SYSTEM) exit_code |= show_parts(dir, &e->system, stdout);
    if (kind == CFG_CAT_SYSTEM && !exit_code) exit_code = show_links(dir, name, stdout);
    if (kind == CFG_CAT_GPU)
        printf("\nsustained clock: %.3f of boost, %.0f MHz; %.3f, %.0f MHz while the tensor cores "
               "are busy (%s; docs/kernel-cost.md)\n",
               e->gpu.clock_factor, e->gpu.clock_factor * e->gpu.boost_mhz,
               e->gpu.clock_factor_tensor, e->gpu.clock_factor_tensor * e->gpu.boost_mhz,
               e->gpu.sustained_tensor_mhz > 0 ? "measured: sustained_mhz, sustained_tensor_mhz"
               : e->gpu.sustained_mhz > 0      ? "measured: sustained_mhz"
               : e->gpu.power_ref[0]           ? "limited by board power, against power_ref"
                                               : "holds boost: no power_ref");
    if (kind == CFG_CAT_GPU) exit_code |= show_mig(dir, &e->gpu, stdout);
    if (fi->notes) {
        printf("\nnotes:\n");
        print_wrapped(fi->notes, 2, 100, stdout);
    }
    if (fi->n_sources) {
        printf("\nsources:\n");
        for (size_t i = 0; i < fi->n_sources; i++)
            printf("  %-4s %s\n", fi->source_key[i], fi->source_text[i]);
    }
    return exit_code;
}

static int cmd_show(const char *dir, const char *name, int kind_filter, bool json)
{
    cfg_catalog_kind kind = CFG_CAT_GPU;
    int exit_code = find_kind(dir, name, kind_filter, &kind);
    if (exit_code) return exit_code;
    hw_entry e;
    sim_err err;
    sim_err_clear(&err);
    if (cfg_catalog_load(dir, kind, name, &e, &err)) {
        fputs("epochsim hw: ", stderr);
        sim_err_print(&err, stderr);
        return SIM_EXIT_ERROR;
    }
    const cfg_table *t = cfg_catalog_table(kind);
    char path[SIM_ERR_WHERE_MAX];
    entry_path(dir, kind, name, path, sizeof path);
    hw_file_info fi = {0};
    if (read_comments(t, path, &fi, &err) || read_extras(path, &fi, &err)) {
        fputs("epochsim hw: ", stderr);
        sim_err_print(&err, stderr);
        file_info_free(&fi);
        return SIM_EXIT_ERROR;
    }
    if (json)
        exit_code = show_json(dir, name, kind, t, &e, &fi);
    else
        exit_code = show_text(dir, name, kind, path, &e, &fi);
    file_info_free(&fi);
    return exit_code;
}

/* ---------------------------------------------------------------- entry point */

/* The command line: the options and up to three words (action, name or kind, one too many). */
typedef struct hw_args {
    const char *catalog, *kind;
    bool json;
    const char *pos[3];
    int npos;
} hw_args;

/* Returns 0, -1 after --help, or an exit code. */
static int parse_hw_args(int argc, char **argv, hw_args *h)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(a, "--json")) {
            h->json = true;
        } else if (!strcmp(a, "--catalog") || !strcmp(a, "--kind")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "epochsim hw: %s needs a value\n", a);
                usage(stderr);
                return SIM_EXIT_USAGE;
            }
            if (!strcmp(a, "--catalog"))
                h->catalog = argv[++i];
            else
                h->kind = argv[++i];
        } else if (!strncmp(a, "--catalog=", 10)) {
            h->catalog = a + 10;
        } else if (!strncmp(a, "--kind=", 7)) {
            h->kind = a + 7;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "epochsim hw: unknown option '%s'\n", a);
            usage(stderr);
            return SIM_EXIT_USAGE;
        } else if (h->npos < 3) {
            h->pos[h->npos++] = a;
        } else {
            fprintf(stderr, "epochsim hw: unexpected argument '%s'\n", a);
            usage(stderr);
            return SIM_EXIT_USAGE;
        }
    }
    if (h->npos == 0) {
        usage(stderr);
        return SIM_EXIT_USAGE;
    }
    return 0;
}

/* `hw list [KIND]`; kind_filter is --kind's (-1: none), which a KIND word replaces. */
static int hw_list(const char *dir, const hw_args *h, int kind_filter)
{
    if (h->npos > 2) {
        fprintf(stderr, "epochsim hw list: unexpected argument '%s'\n", h->pos[2]);
        return SIM_EXIT_USAGE;
    }
    if (h->npos == 2) {
        cfg_catalog_kind k;
        if (!parse_kind(h->pos[1], &k)) {
            fprintf(stderr,
                    "epochsim hw list: unknown kind '%s' (gpus, cpus, storage, links, "
                    "systems)\n",
                    h->pos[1]);
            return SIM_EXIT_USAGE;
        }
        kind_filter = (int)k;
    }
    return cmd_list(dir, kind_filter, h->json);
}

int sim_hw_cmd(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "allreduce")) return sim_allreduce_cmd(argc - 1, argv + 1);
    hw_args h = {0};
    int rc = parse_hw_args(argc, argv, &h);
    if (rc) return rc < 0 ? SIM_EXIT_OK : rc;
    int kind_filter = -1;
    if (h.kind) {
        cfg_catalog_kind k;
        if (!parse_kind(h.kind, &k)) {
            fprintf(stderr,
                    "epochsim hw: unknown kind '%s' (gpus, cpus, storage, links, systems)\n",
                    h.kind);
            return SIM_EXIT_USAGE;
        }
        kind_filter = (int)k;
    }
    const char *dir = sim_app_catalog_dir(h.catalog);
    if (!strcmp(h.pos[0], "list")) return hw_list(dir, &h, kind_filter);
    if (!strcmp(h.pos[0], "show")) {
        if (h.npos != 2) {
            fprintf(stderr, "epochsim hw show: expected exactly one NAME\n");
            usage(stderr);
            return SIM_EXIT_USAGE;
        }
        return cmd_show(dir, h.pos[1], kind_filter, h.json);
    }
    fprintf(stderr, "epochsim hw: unknown action '%s' (list, show or allreduce)\n", h.pos[0]);
    usage(stderr);
    return SIM_EXIT_USAGE;
}
