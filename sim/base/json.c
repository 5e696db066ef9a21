/* json.c — object members for yajl_gen documents (see json.h). */
#include "sim/base/json.h"

#include "sim/base/outfile.h"

#include <math.h>
#include <string.h>

void sim_json_key(yajl_gen g, const char *k)
{
    yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

void sim_json_str(yajl_gen g, const char *k, const char *v)
{
    sim_json_key(g, k);
    yajl_gen_string(g, (const unsigned char *)v, strlen(v));
}

void sim_json_int(yajl_gen g, const char *k, long long v)
{
    sim_json_key(g, k);
    yajl_gen_integer(g, v);
}

void sim_json_num(yajl_gen g, const char *k, double v)
{
    sim_json_key(g, k);
    if (isfinite(v))
        yajl_gen_double(g, v);
    else
        yajl_gen_null(g);
}

void sim_json_bool(yajl_gen g, const char *k, bool v)
{
    sim_json_key(g, k);
    yajl_gen_bool(g, v);
}

yajl_gen sim_json_doc_open(sim_err *err)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g) {
        sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        return NULL;
    }
    yajl_gen_config(g, yajl_gen_beautify, 1);
    yajl_gen_map_open(g);
    return g;
}

int sim_json_write(yajl_gen g, const char *path, sim_err *err)
{
    const unsigned char *buf;
    size_t len;
    if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
        return sim_err_set(err, SIM_EINVAL, path, 0, 0, "the JSON document is incomplete");
    sim_outfile o;
    int rc = sim_outfile_open(&o, path, err);
    if (!rc) {
        fwrite(buf, 1, len, o.fp);
        rc = sim_outfile_commit(&o, err);
    }
    return rc;
}
