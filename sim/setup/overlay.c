/* overlay.c — reads a catalog overlay and applies one entry of it (see overlay.h). */
#include "sim/setup/overlay.h"

#include "sim/setup/cfgtable.h"

#include <string.h>
#include <yaml.h>

/* Room for any kind's description: an entry the run does not use is loaded here, to check it. */
typedef union any_desc {
    sim_gpu_desc gpu;
    sim_cpu_desc cpu;
    sim_storage_desc storage;
    sim_link_desc link;
    sim_system_desc system;
} any_desc;

static int at(sim_err *err, const char *path, const yaml_node_t *n, const char *msg,
              const char *what)
{
    return sim_err_set(err, SIM_EINVAL, path, (int)n->start_mark.line + 1,
                       (int)n->start_mark.column + 1, msg, what);
}

static const char *scalar(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The kind whose folder name is s, or CFG_CAT_COUNT. Systems are not overlaid: a system names
 * its parts, and the experiment's system.* keys already change them. */
static cfg_catalog_kind kind_named(const char *s)
{
    for (int k = 0; k < CFG_CAT_COUNT; k++)
        if (k != CFG_CAT_SYSTEM && !strcmp(s, cfg_catalog_kind_dir((cfg_catalog_kind)k)))
            return (cfg_catalog_kind)k;
    return CFG_CAT_COUNT;
}

/* One kind's section: every entry is loaded (into desc for `name`, else into scratch). */
static int apply_section(yaml_document_t *doc, yaml_node_t *sec, const char *path,
                         cfg_catalog_kind kind, const char *name, void *desc, sim_err *err)
{
    if (sec->type != YAML_MAPPING_NODE)
        return at(err, path, sec, "'%s': expected a mapping of entry names",
                  cfg_catalog_kind_dir(kind));
    const cfg_table *t = cfg_catalog_table(kind);
    for (yaml_node_pair_t *p = sec->data.mapping.pairs.start; p < sec->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        yaml_node_t *v = yaml_document_get_node(doc, p->value);
        const char *entry = scalar(k);
        if (!entry) return at(err, path, k, "entry names must be plain names%s", "");
        any_desc scratch;
        memset(&scratch, 0, sizeof scratch);
        void *into = name && !strcmp(entry, name) ? desc : &scratch;
        int rc = cfg_table_load_node(t, doc, v, path, into, NULL, NULL, err);
        if (rc) return rc;
    }
    return SIM_OK;
}

int cfg_overlay_apply(const char *path, cfg_catalog_kind kind, const char *name, void *desc,
                      sim_err *err)
{
    yaml_document_t doc;
    int rc = cfg_yaml_load_file(path, &doc, err);
    if (rc) return rc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        rc = root ? at(err, path, root,
                       "expected a mapping of catalog kinds (gpus, cpus, "
                       "storage, links)%s",
                       "")
                  : sim_err_set(err, SIM_EINVAL, path, 1, 1, "the file is empty");
        yaml_document_delete(&doc);
        return rc;
    }
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
         !rc && p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&doc, p->key);
        const char *s = scalar(k);
        cfg_catalog_kind sk = s ? kind_named(s) : CFG_CAT_COUNT;
        if (sk == CFG_CAT_COUNT)
            rc = at(err, path, k,
                    "unknown section '%s' (an overlay has gpus, cpus, storage, links)", s ? s : "");
        else
            rc = apply_section(&doc, yaml_document_get_node(&doc, p->value), path, sk,
                               sk == kind ? name : NULL, desc, err);
    }
    yaml_document_delete(&doc);
    return rc;
}
