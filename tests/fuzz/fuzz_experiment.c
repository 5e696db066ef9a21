/* fuzz_experiment.c — libFuzzer harness for experiment YAML: load the file as `run FILE` does and
 * resolve it into a scenario against the built-in catalog (catalog look-ups, zoo expansion, memory
 * model; traces the input names are read too). Any outcome but a crash or a sanitizer report is
 * fine: bad input must come back as an error. */
#include "fuzz_input.h"

#include "sim/setup/config.h"
#include "sim/setup/scenario.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size, ".yaml");
    sim_experiment x;
    sim_experiment_defaults(&x);
    cfg_experiment_set set;
    memset(&set, 0, sizeof set);
    sim_err err;
    if (cfg_experiment_load(path, &x, &set, &err) != SIM_OK) return 0;
    sim_scenario sc;
    if (sim_scenario_build(&x, &set, EPOCHSIM_CATALOG_DIR, &sc, &err) == SIM_OK)
        sim_scenario_free(&sc);
    return 0;
}
