/* json.h — object members for yajl_gen documents: a key and its value in one call. Every JSON
 * writer of epochsim (run --json, timelines, model and trace reports) uses these, so a number
 * that is not finite becomes null everywhere instead of breaking the document. */
#ifndef SIM_JSON_H
#define SIM_JSON_H

#include <stdbool.h>
#include <yajl/yajl_gen.h>

void sim_json_key(yajl_gen g, const char *k);
void sim_json_str(yajl_gen g, const char *k, const char *v);
void sim_json_int(yajl_gen g, const char *k, long long v);
/* A double; NaN and infinities (which yajl refuses) are written as null. */
void sim_json_num(yajl_gen g, const char *k, double v);
void sim_json_bool(yajl_gen g, const char *k, bool v);

#endif
