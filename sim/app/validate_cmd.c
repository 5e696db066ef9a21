/* validate_cmd.c — `epochsim validate [--data DIR] [--json PATH|-] [--role fit|check|all]
 * [--group G] [--catalog DIR]`: predicts every row of the published accuracy table and prints
 * the signed error per row and the MAPE per group, per GPU generation, overall and of cross-GPU
 * ratios, for fitting and checking rows apart (validate.h, docs/accuracy.md). */
#include "sim/app/validate_cmd.h"

#include "sim/app/app.h"
#include "sim/app/validate.h"
#include "sim/base/json.h"
#include "sim/base/outfile.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: epochsim validate [--data DIR] [--json PATH|-] [--role fit|check|all]\n"
            "                         [--group G] [--catalog DIR]\n\n"
            "Predicts every published measurement of the accuracy table (DIR/*.csv, "
            "columns\n" SIM_VAL_COLUMNS ")\n"
            "with the same code `run` uses, and prints each row's signed error, then the mean\n"
            "absolute percentage error (MAPE) per group, per GPU generation, overall and of\n"
            "cross-GPU ratios, for fitting rows and checking rows apart. Generations, overall\n"
            "and ratios are over training runs; kernel, copy and collective rows count in\n"
            "their groups only. Rows that cannot be predicted are listed with the reason and\n"
            "counted apart. See docs/accuracy.md.\n\n"
            "  --data DIR      the table (default: tests/data/published beside the catalog)\n"
            "  --json PATH|-   write rows and statistics as JSON (- = stdout; the table goes to\n"
            "                  stderr)\n"
            "  --role R        fit, check or all (default all)\n"
            "  --group G       only rows of group G (resnet50, bert-large, h2d, gemm, ...)\n"
            "  --catalog DIR   hardware catalog (default $EPOCHSIM_CATALOG or the built-in one)\n\n"
            "examples:\n"
            "  epochsim validate\n"
            "  epochsim validate --role check --group resnet50\n"
            "  epochsim validate --json accuracy.json\n"
            "  epochsim validate --data my-measurements/ --json -\n");
}

/* The table shipped beside the catalog: CATALOG/../../tests/data/published. */
static const char *default_data(const char *catalog)
{
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s/../../tests/data/published", catalog);
    return dir;
}

/* Keeps the rows of role (SIM_VAL_ROLES = all) and group (NULL = all), in order. */
static void filter(sim_val_table *t, int role, const char *group)
{
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++) {
        const sim_val_row *r = &t->rows[i];
        if ((role == SIM_VAL_ROLES || (int)r->role == role) && (!group || !strcmp(r->group, group)))
            t->rows[m++] = *r;
    }
    t->n = m;
}

static void print_rows(FILE *out, const sim_val_table *t)
{
    fprintf(out, "%-46s %-26s %-5s %-16s %-9s %11s %11s %8s\n", "id", "group", "role", "gpu",
            "arch", "published", "predicted", "error");
    for (size_t i = 0; i < t->n; i++) {
        const sim_val_row *r = &t->rows[i];
        if (r->error[0]) continue;
        fprintf(out, "%-46s %-26s %-5s %-16s %-9s %11.4g %11.4g %+7.1f%%%s%s\n", r->id, r->group,
                sim_val_role_name(r->role), r->gpu, r->arch, r->value, r->predicted,
                sim_val_error_pct(r), r->note[0] ? "  note: " : "", r->note);
    }
}

static void print_failed(FILE *out, const sim_val_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        const sim_val_row *r = &t->rows[i];
        if (r->error[0])
            fprintf(out, "  %s:%d: %s (%s): %s\n", r->file, r->line, r->id,
                    sim_val_role_name(r->role), r->error);
    }
}

static void print_summary(FILE *out, const sim_val_table *t, const sim_val_summary *s)
{
    for (int role = 0; role < SIM_VAL_ROLES; role++) {
        if (!s->predicted[role] && !s->failed[role]) continue;
        fprintf(out, "\n%s rows: %d predicted, %d could not be predicted\n",
                sim_val_role_name((sim_val_role)role), s->predicted[role], s->failed[role]);
        fprintf(out, "  %-11s %-26s %5s %9s\n", "scope", "name", "n", "MAPE");
        for (size_t i = 0; i < s->n; i++) {
            const sim_val_stat *st = &s->stats[i];
            if ((int)st->role == role)
                fprintf(out, "  %-11s %-26s %5d %8.1f%%\n", sim_val_scope_name(st->scope), st->name,
                        st->n, st->mape_pct);
        }
    }
    if (s->failed[SIM_VAL_FIT] + s->failed[SIM_VAL_CHECK]) {
        fprintf(out, "\nrows that could not be predicted:\n");
        print_failed(out, t);
    }
}

static void json_rows(yajl_gen g, const sim_val_table *t)
{
    sim_json_key(g, "rows");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < t->n; i++) {
        const sim_val_row *r = &t->rows[i];
        yajl_gen_map_open(g);
        sim_json_str(g, "id", r->id);
        sim_json_str(g, "group", r->group);
        sim_json_str(g, "role", sim_val_role_name(r->role));
        sim_json_str(g, "metric", sim_val_metric_name(r->metric));
        sim_json_str(g, "gpu", r->gpu);
        sim_json_str(g, "arch", r->arch);
        sim_json_num(g, "published", r->value);
        sim_json_num(g, "predicted", r->error[0] ? NAN : r->predicted);
        sim_json_num(g, "error_pct", r->error[0] ? NAN : sim_val_error_pct(r));
        sim_json_str(g, "source", r->source);
        if (r->note[0]) sim_json_str(g, "note", r->note);
        if (r->error[0]) sim_json_str(g, "error", r->error);
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
}

static void json_stats(yajl_gen g, const sim_val_summary *s)
{
    sim_json_key(g, "stats");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < s->n; i++) {
        const sim_val_stat *st = &s->stats[i];
        yajl_gen_map_open(g);
        sim_json_str(g, "role", sim_val_role_name(st->role));
        sim_json_str(g, "scope", sim_val_scope_name(st->scope));
        sim_json_str(g, "name", st->name);
        sim_json_int(g, "n", st->n);
        sim_json_num(g, "mape_pct", st->mape_pct);
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    for (int role = 0; role < SIM_VAL_ROLES; role++) {
        char k[32];
        snprintf(k, sizeof k, "%s_predicted", sim_val_role_name((sim_val_role)role));
        sim_json_int(g, k, s->predicted[role]);
        snprintf(k, sizeof k, "%s_failed", sim_val_role_name((sim_val_role)role));
        sim_json_int(g, k, s->failed[role]);
    }
}

static int write_json(const char *path, const sim_val_table *t, const sim_val_summary *s,
                      sim_err *err)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g) return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    yajl_gen_config(g, yajl_gen_beautify, 1);
    yajl_gen_map_open(g);
    json_rows(g, t);
    json_stats(g, s);
    yajl_gen_map_close(g);
    const unsigned char *buf;
    size_t len;
    yajl_gen_get_buf(g, &buf, &len);
    sim_outfile o;
    int rc = sim_outfile_open(&o, path, err);
    if (!rc) {
        fwrite(buf, 1, len, o.fp);
        rc = sim_outfile_commit(&o, err);
    }
    yajl_gen_free(g);
    return rc;
}

typedef struct options {
    const char *data, *json, *group, *catalog;
    int role; /* SIM_VAL_ROLES = all */
} options;

/* Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, options *o)
{
    static const struct option opts[] = {
        {"data", required_argument, 0, 'd'},
        {"json", required_argument, 0, 'j'},
        {"role", required_argument, 0, 'r'},
        {"group", required_argument, 0, 'g'},
        {"catalog", required_argument, 0, 'c'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    *o = (options){.role = SIM_VAL_ROLES};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "d:j:r:g:c:h", opts, NULL)) != -1) {
        if (c == 'd')
            o->data = optarg;
        else if (c == 'j')
            o->json = optarg;
        else if (c == 'g')
            o->group = optarg;
        else if (c == 'c')
            o->catalog = optarg;
        else if (c == 'r' && !strcmp(optarg, "all"))
            o->role = SIM_VAL_ROLES;
        else if (c == 'r' && !strcmp(optarg, "fit"))
            o->role = SIM_VAL_FIT;
        else if (c == 'r' && !strcmp(optarg, "check"))
            o->role = SIM_VAL_CHECK;
        else if (c == 'h') {
            usage(stdout);
            return SIM_EXIT_OK;
        } else {
            fprintf(stderr, "epochsim validate: bad option '%s'%s\n", argv[optind - 1],
                    c == 'r' ? " (--role wants fit, check or all)" : "");
            usage(stderr);
            return SIM_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "epochsim validate: unexpected argument '%s'\n", argv[optind]);
        return SIM_EXIT_USAGE;
    }
    return -1;
}

int sim_validate_cmd(int argc, char **argv)
{
    options o;
    int status = parse_args(argc, argv, &o);
    if (status >= 0) return status;
    const char *catalog = sim_app_catalog_dir(o.catalog);
    sim_val_table t = {0};
    sim_val_summary s = {0};
    sim_err err;
    sim_err_clear(&err);
    int rc = sim_val_read_dir(&t, o.data ? o.data : default_data(catalog), &err);
    if (!rc) {
        filter(&t, o.role, o.group);
        sim_val_predict(&t, catalog);
        if (sim_val_summarize(&t, &s))
            rc = sim_err_set(&err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    if (!rc && o.json) rc = write_json(o.json, &t, &s, &err);
    if (!rc) {
        FILE *out = o.json && !strcmp(o.json, "-") ? stderr : stdout;
        print_rows(out, &t);
        print_summary(out, &t, &s);
    }
    if (rc) {
        fputs("epochsim: ", stderr);
        sim_err_print(&err, stderr);
    }
    sim_val_summary_free(&s);
    sim_val_table_free(&t);
    return rc ? SIM_EXIT_ERROR : SIM_EXIT_OK;
}
