/* json.c — object members for yajl_gen documents (see json.h). */
#include "sim/base/json.h"

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
