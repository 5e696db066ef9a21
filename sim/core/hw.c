/* hw.c — names of the enumerations in hw.h. */
#include "sim/core/hw.h"

#include "sim/base/err.h"

#include <string.h>

static const char *const precision_names[SIM_PREC_COUNT] = {
    [SIM_PREC_FP32] = "fp32", [SIM_PREC_TF32] = "tf32",         [SIM_PREC_FP16] = "fp16",
    [SIM_PREC_BF16] = "bf16", [SIM_PREC_AMP_FP16] = "amp_fp16", [SIM_PREC_AMP_BF16] = "amp_bf16",
};

const char *const sim_gpu_ecc_names[] = {"default", "on", "off", NULL};

const char *sim_precision_name(sim_precision p)
{
    return (unsigned)p < SIM_PREC_COUNT ? precision_names[p] : NULL;
}

int sim_precision_parse(const char *s, sim_precision *out)
{
    for (int i = 0; i < SIM_PREC_COUNT; i++)
        if (strcmp(s, precision_names[i]) == 0) {
            *out = (sim_precision)i;
            return SIM_OK;
        }
    return SIM_EINVAL;
}
