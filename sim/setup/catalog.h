/* catalog.h — the hardware catalog: one YAML file per device under configs/hardware/.
 *   gpus/NAME.yaml  cpus/NAME.yaml  storage/NAME.yaml  links/NAME.yaml  systems/NAME.yaml
 * The keys of each file are the field names of the matching sim_*_desc in sim/hw.h (curves are
 * lists of [x, y] pairs); `sources` (a map of source key -> citation) and `notes` (text) are
 * allowed everywhere; any other key is an error with file:line:col. A file's `name` must equal
 * its file name. Numbers carry their source as a trailing `# [Sx]` comment. */
#ifndef SIM_CATALOG_H
#define SIM_CATALOG_H

#include "sim/setup/cfgtable.h"
#include "sim/base/err.h"
#include "sim/core/hw.h"

#include <stddef.h>

typedef enum cfg_catalog_kind {
    CFG_CAT_GPU,
    CFG_CAT_CPU,
    CFG_CAT_STORAGE,
    CFG_CAT_LINK,
    CFG_CAT_SYSTEM,
    CFG_CAT_COUNT
} cfg_catalog_kind;

/* Folder name of a kind ("gpus", "cpus", "storage", "links", "systems"). */
const char *cfg_catalog_kind_dir(cfg_catalog_kind kind);

/* Loads entry NAME of a kind from catalog folder DIR into out (a sim_gpu_desc, sim_cpu_desc,
 * sim_storage_desc, sim_link_desc or sim_system_desc, matching kind). Unknown names give
 * SIM_ENOENT with the list of known ones; bad files give SIM_EINVAL with file:line:col. */
int cfg_catalog_load(const char *dir, cfg_catalog_kind kind, const char *name, void *out,
                     sim_err *err);

/* Lists the entry names of a kind, sorted. *names is a malloc'd array of malloc'd strings;
 * free with cfg_catalog_names_free. */
int cfg_catalog_list(const char *dir, cfg_catalog_kind kind, char ***names, size_t *n,
                     sim_err *err);
void cfg_catalog_names_free(char **names, size_t n);

/* The link of PCIe generation GEN (loads links/pcie-genGEN.yaml) scaled to LANES lanes. */
/* The field table of a kind (for `hw show` and tests). */
const cfg_table *cfg_catalog_table(cfg_catalog_kind kind);

int cfg_catalog_pcie(const char *dir, int gen, int lanes, sim_link_desc *out, sim_err *err);

/* The memory a job can use under ECC mode `mode` (SIM_ECC_*; SIM_ECC_DEFAULT = as the card
 * ships): a GDDR part keeps ECC check bits in the same DRAM, so with ECC on its mem_gb shrinks by
 * ecc_reserve (nvidia-smi reports an A10's 24 GB as 23,028 MiB with ECC on, 15/16 of 24,576;
 * docs/kernel-cost.md). An HBM part carries them aside: ecc_reserve 0, nothing changes. */
void cfg_gpu_apply_ecc(sim_gpu_desc *g, int mode);

/* Sets g's clock factors from its power_ref (a card of catalog `dir`) or its measured clocks
 * (docs/kernel-cost.md), as cfg_catalog_load does; again after a catalog overlay changed them.
 * `path` names the file in errors. Returns 0 or SIM_EINVAL with *err set. */
int cfg_gpu_resolve_clock(const char *dir, sim_gpu_desc *g, const char *path, sim_err *err);

#endif
