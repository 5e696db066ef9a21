/* allreduce_cmd.c — `epochsim hw allreduce` (see allreduce_cmd.h).
 * The system is resolved exactly as a run resolves it (sim_system_hardware), and each size goes
 * through the same sim_topo_allreduce the DDP all-reduce of a run takes, so the table is what the
 * simulator believes, in the columns of all_reduce_perf (float, sum, out-of-place). */
#include "sim/app/allreduce_cmd.h"

#include "sim/app/app.h"
#include "sim/base/json.h"
#include "sim/core/topo.h"
#include "sim/setup/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SETS 16
#define FLOAT_BYTES 4
#define MAX_BYTES 1099511627776.0 /* 1 TiB: above any GPU's memory */

typedef struct ar_args {
    const char *system, *catalog, *json;
    int gpus;
    double min_bytes, max_bytes;
    const char *sets[MAX_SETS + 1];
    int n_sets;
} ar_args;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: epochsim hw allreduce SYSTEM [--gpus N] [--bytes SIZE|MIN:MAX]\n"
            "                             [--set KEY=VALUE]... [--json PATH|-] [--catalog DIR]\n"
            "\n"
            "Prints what nccl-tests' all_reduce_perf would print on SYSTEM (float, sum): time,\n"
            "algbw = size / time, busbw = algbw x 2 (n - 1) / n, and the algorithm and protocol\n"
            "NCCL's cost model picks, from the model the runs' DDP all-reduce uses. On an\n"
            "NVSwitch box of Hopper or later GPUs with PyTorch 2.1+ (NCCL 2.18+) the switches\n"
            "reduce (NVLS): busbw is then nccl-tests' figure, not what a wire carries.\n"
            "\n"
            "options:\n"
            "  --gpus N          GPUs taking part (default: the system's)\n"
            "  --bytes SIZE      one size; K, M, G are powers of 1024 (default 8:8G)\n"
            "  --bytes MIN:MAX   every power-of-two step from MIN to MAX (-b MIN -e MAX -f 2)\n"
            "  --set KEY=VALUE   an experiment key on top of the system (system.nvlink=bridge)\n"
            "  --json PATH       write JSON to PATH ('-' = stdout) instead of the table\n"
            "  --catalog DIR     catalog folder (default: $EPOCHSIM_CATALOG, else built-in)\n"
            "\n"
            "examples:\n"
            "  epochsim hw allreduce dgx-a100 --bytes 4G\n"
            "  epochsim hw allreduce server-4x-a100-pcie --gpus 2 --set system.nvlink=bridge \\\n"
            "      --set system.nvlink_links=12\n"
            "  epochsim hw allreduce dgx-h100 --bytes 4G --set system.nvls=off\n");
}

/* "8", "64K", "1G": bytes; -1 when not a size in [1, MAX_BYTES]. */
static double parse_size(const char *s, const char *end)
{
    char *stop;
    errno = 0;
    double v = strtod(s, &stop);
    if (errno || stop == s) return -1;
    if (stop < end && (*stop == 'K' || *stop == 'k'))
        v *= 1024, stop++;
    else if (stop < end && (*stop == 'M' || *stop == 'm'))
        v *= 1048576, stop++;
    else if (stop < end && (*stop == 'G' || *stop == 'g'))
        v *= 1073741824, stop++;
    return stop == end && v >= 1 && v <= MAX_BYTES ? v : -1;
}

static int parse_bytes(const char *s, ar_args *a)
{
    const char *colon = strchr(s, ':');
    const char *end = s + strlen(s);
    a->min_bytes = parse_size(s, colon ? colon : end);
    a->max_bytes = colon ? parse_size(colon + 1, end) : a->min_bytes;
    if (a->min_bytes > 0 && a->max_bytes >= a->min_bytes) return 0;
    fprintf(stderr,
            "epochsim hw allreduce: --bytes '%s': expected SIZE or MIN:MAX with MIN <= MAX, "
            "sizes from 1 to 1T (K, M, G suffixes)\n",
            s);
    return SIM_EXIT_USAGE;
}

/* The value of option argv[*i] (in the next word); NULL after a usage message. */
static const char *value_of(int argc, char **argv, int *i)
{
    if (*i + 1 < argc) return argv[++*i];
    fprintf(stderr, "epochsim hw allreduce: %s needs a value\n", argv[*i]);
    return NULL;
}

/* Returns 0, -1 after --help, or an exit code. */
static int parse_args(int argc, char **argv, ar_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage(stdout);
            return -1;
        }
        if (o[0] != '-') {
            if (a->system) {
                fprintf(stderr, "epochsim hw allreduce: unexpected argument '%s'\n", o);
                return SIM_EXIT_USAGE;
            }
            a->system = o;
            continue;
        }
        bool known = !strcmp(o, "--gpus") || !strcmp(o, "--bytes") || !strcmp(o, "--set") ||
                     !strcmp(o, "--json") || !strcmp(o, "--catalog");
        if (!known) {
            fprintf(stderr, "epochsim hw allreduce: unknown option '%s'\n", o);
            return SIM_EXIT_USAGE;
        }
        if (!(v = value_of(argc, argv, &i))) return SIM_EXIT_USAGE;
        if (!strcmp(o, "--gpus")) {
            char *stop;
            long n = strtol(v, &stop, 10);
            if (*stop || n < 2 || n > SIM_MAX_GPUS) {
                fprintf(stderr, "epochsim hw allreduce: --gpus '%s': from 2 to %d\n", v,
                        SIM_MAX_GPUS);
                return SIM_EXIT_USAGE;
            }
            a->gpus = (int)n;
        } else if (!strcmp(o, "--bytes")) {
            if (parse_bytes(v, a)) return SIM_EXIT_USAGE;
        } else if (!strcmp(o, "--set")) {
            if (a->n_sets == MAX_SETS) {
                fprintf(stderr, "epochsim hw allreduce: at most %d --set\n", MAX_SETS);
                return SIM_EXIT_USAGE;
            }
            a->sets[a->n_sets++] = v;
        } else if (!strcmp(o, "--json")) {
            a->json = v;
        } else {
            a->catalog = v;
        }
    }
    if (a->system) return 0;
    fprintf(stderr, "epochsim hw allreduce: expected a SYSTEM (epochsim hw list systems)\n");
    usage(stderr);
    return SIM_EXIT_USAGE;
}

static void print_table(const ar_args *a, const sim_hardware *hw, const sim_ring *r)
{
    printf("# epochsim hw allreduce: %s, %d x %s, float sum\n", a->system, r->n,
           hw->gpu.label[0] ? hw->gpu.label : hw->gpu.name);
    printf("# ring: slowest hop %s at %.2f GB/s per direction; NVLink %s (%d links); P2P %s; "
           "PCIe slots",
           sim_path_name(r->path), r->bw_gbps, sim_nvlink_names[hw->topo.nvlink],
           hw->topo.nvlink_links,
           !hw->topo.p2p              ? "no"
           : r->path == SIM_PATH_HOST ? "not across the CPU (NCCL's P2P level)"
                                      : "yes");
    for (int i = 0; i < r->n; i++)
        printf(" x%d", sim_topo_gpu_lanes(hw, i));
    if (r->nvls_eff > 0)
        printf("\n# NVLS: the NVSwitches reduce, at n/(n+1) x %.2f of the link rate", r->nvls_eff);
    printf("\n#\n#%12s %13s %9s %7s %10s %8s %8s %6s %7s\n", "size", "count", "type", "redop",
           "time", "algbw", "busbw", "algo", "proto");
    printf("#%12s %13s %9s %7s %10s %8s %8s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)",
           "(GB/s)");
    for (double b = a->min_bytes; b <= a->max_bytes; b *= 2) {
        sim_allreduce ar;
        sim_topo_allreduce(r, b, &ar);
        printf(" %12.0f %13.0f %9s %7s %10.1f %8.2f %8.2f %6s %7s\n", b, b / FLOAT_BYTES, "float",
               "sum", ar.time_us, ar.algbw_gbps, ar.busbw_gbps, sim_coll_algo_name(ar.algo),
               sim_coll_proto_name(ar.proto));
    }
}

static int write_json(const ar_args *a, const sim_hardware *hw, const sim_ring *r)
{
    sim_err err;
    sim_err_clear(&err);
    yajl_gen g = sim_json_doc_open(&err);
    if (!g) goto fail;
    sim_json_str(g, "system", a->system);
    sim_json_str(g, "gpu", hw->gpu.name);
    sim_json_int(g, "gpus", r->n);
    sim_json_str(g, "nvlink", sim_nvlink_names[hw->topo.nvlink]);
    sim_json_int(g, "nvlink_links", hw->topo.nvlink_links);
    sim_json_bool(g, "p2p", hw->topo.p2p);
    sim_json_key(g, "pcie_lanes");
    yajl_gen_array_open(g);
    for (int i = 0; i < r->n; i++)
        yajl_gen_integer(g, sim_topo_gpu_lanes(hw, i));
    yajl_gen_array_close(g);
    sim_json_str(g, "ring_path", sim_path_name(r->path));
    sim_json_num(g, "ring_bw_gbps", r->bw_gbps);
    sim_json_num(g, "nvls_eff", r->nvls_eff);
    sim_json_key(g, "results");
    yajl_gen_array_open(g);
    for (double b = a->min_bytes; b <= a->max_bytes; b *= 2) {
        sim_allreduce ar;
        sim_topo_allreduce(r, b, &ar);
        yajl_gen_map_open(g);
        sim_json_num(g, "size_bytes", b);
        sim_json_num(g, "count", b / FLOAT_BYTES);
        sim_json_str(g, "type", "float");
        sim_json_str(g, "redop", "sum");
        sim_json_num(g, "time_us", ar.time_us);
        sim_json_num(g, "algbw_gbps", ar.algbw_gbps);
        sim_json_num(g, "busbw_gbps", ar.busbw_gbps);
        sim_json_str(g, "algo", sim_coll_algo_name(ar.algo));
        sim_json_str(g, "proto", sim_coll_proto_name(ar.proto));
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
    int rc = sim_json_write(g, a->json, &err);
    yajl_gen_free(g);
    if (!rc) return SIM_EXIT_OK;
fail:
    fputs("epochsim hw allreduce: ", stderr);
    sim_err_print(&err, stderr);
    return SIM_EXIT_ERROR;
}

int sim_allreduce_cmd(int argc, char **argv)
{
    ar_args a = {.min_bytes = 8, .max_bytes = 8589934592.0};
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? SIM_EXIT_OK : rc;
    char gpus[32];
    if (a.gpus) {
        snprintf(gpus, sizeof gpus, "system.gpu_count=%d", a.gpus);
        a.sets[a.n_sets++] = gpus;
    }
    sim_hardware *hw = malloc(sizeof *hw);
    sim_err err;
    sim_err_clear(&err);
    if (!hw ||
        sim_system_hardware(sim_app_catalog_dir(a.catalog), a.system, a.sets, a.n_sets, hw, &err)) {
        if (!hw) sim_err_set(&err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        fputs("epochsim hw allreduce: ", stderr);
        sim_err_print(&err, stderr);
        free(hw);
        return SIM_EXIT_ERROR;
    }
    if (hw->gpu_count < 2) {
        fprintf(stderr, "epochsim hw allreduce: %s has one GPU; give --gpus N (2 or more)\n",
                a.system);
        free(hw);
        return SIM_EXIT_USAGE;
    }
    sim_ring r = sim_topo_ring(hw, NULL, hw->gpu_count);
    if (a.json)
        rc = write_json(&a, hw, &r);
    else
        print_table(&a, hw, &r);
    free(hw);
    return rc;
}
