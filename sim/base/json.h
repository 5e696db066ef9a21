/* json.h — object members for yajl_gen documents: a key and its value in one call. Every JSON
 * writer of epochsim (run --json, timelines, model and trace reports) uses these, so a number
 * that is not finite becomes null everywhere instead of breaking the document. */
#ifndef SIM_JSON_H
#define SIM_JSON_H

#include "sim/base/err.h"

#include <stdbool.h>
#include <yajl/yajl_gen.h>

void sim_json_key(yajl_gen g, const char *k);
void sim_json_str(yajl_gen g, const char *k, const char *v);
void sim_json_int(yajl_gen g, const char *k, long long v);
/* A double; NaN and infinities (which yajl refuses) are written as null. */
void sim_json_num(yajl_gen g, const char *k, double v);
void sim_json_bool(yajl_gen g, const char *k, bool v);

/* A new beautified document with its top-level object opened; NULL (err filled) when out of
 * memory. Close the object, sim_json_write, then yajl_gen_free. */
yajl_gen sim_json_doc_open(sim_err *err);

/* Writes the finished document of g to PATH under sim/base/outfile.h's rules ("-" = stdout). */
int sim_json_write(yajl_gen g, const char *path, sim_err *err);

#endif
