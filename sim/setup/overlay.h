/* overlay.h — a catalog overlay: a YAML file that changes fields of catalog entries without
 * editing the catalog, as `epochsim calibrate` writes it and `system.catalog_overlay` applies it:
 *
 *     gpus:                      # a kind's folder name: gpus, cpus, storage, links
 *       v100-sxm2-32gb:          # an entry's name
 *         kernel_overhead_us: 2.6   # any field of that kind, as in the entry's own file
 *
 * Every entry is checked against its kind's field table (unknown kinds, fields or bad values are
 * errors with file:line:col), whether or not the run uses it. */
#ifndef SIM_OVERLAY_H
#define SIM_OVERLAY_H

#include "sim/base/err.h"
#include "sim/setup/catalog.h"

/* Applies the overlay file's entry for `name` of `kind` (if it has one) onto desc, a loaded
 * description of that kind. Returns 0, or SIM_ENOENT / SIM_EINVAL with the place. */
int cfg_overlay_apply(const char *path, cfg_catalog_kind kind, const char *name, void *desc,
                      sim_err *err);

#endif
