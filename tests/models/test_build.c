/* test_build.c — models/build.c: which attention a zoo network runs once the options are applied
 * (mdl_build_net). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "models/build.h"

/* Attention layers of `model` built under (pytorch, attention), and how many of them run SDPA's
 * flash kernels. */
static int flash_layers(const char *model, int pytorch, int attention, int *attn_layers)
{
    mdl_options o;
    mdl_options_defaults(&o);
    o.pytorch = pytorch;
    o.attention = attention;
    mdl_net net;
    sim_err err;
    sim_err_clear(&err);
    if (mdl_build_net(model, &o, &net, &err)) fail_msg("%s", err.msg);
    int flash = 0;
    *attn_layers = 0;
    for (int i = 0; i < net.n_layers; i++) {
        if (net.layers[i].kind != MDL_L_ATTN) continue;
        ++*attn_layers;
        flash += (net.layers[i].flags & MDL_F_FLASH) != 0;
    }
    mdl_net_free(&net);
    return flash;
}

/* torchvision's ViT calls nn.MultiheadAttention, which runs scaled_dot_product_attention from
 * PyTorch 2.0 (the release that added it) and the scores as plain ops before; an attention the
 * user names is kept whatever the release. */
static void test_build_own_sdpa_from_pytorch_2(void **state)
{
    (void)state;
    int n = 0;
    assert_int_equal(flash_layers("vit_b_16", 112, MDL_ATTN_MODEL, &n), 0);
    assert_int_equal(n, 12);
    assert_int_equal(flash_layers("vit_b_16", 113, MDL_ATTN_MODEL, &n), 0);
    assert_int_equal(flash_layers("vit_b_16", 200, MDL_ATTN_MODEL, &n), 12);
    assert_int_equal(flash_layers("vit_b_16", 112, MDL_ATTN_SDPA, &n), 12);
    assert_int_equal(flash_layers("vit_b_16", 209, MDL_ATTN_EAGER, &n), 0);
}

/* A model whose own code is eager (Hugging Face's GPT-2 large, eager attention) stays eager in
 * every release unless SDPA is asked for; nanoGPT's GPT-2 runs SDPA from 2.0 and its fallback
 * before. */
static void test_build_eager_model_stays_eager(void **state)
{
    (void)state;
    int n = 0;
    assert_int_equal(flash_layers("gpt2-large", 209, MDL_ATTN_MODEL, &n), 0);
    assert_int_equal(n, 36);
    assert_int_equal(flash_layers("gpt2-large", 209, MDL_ATTN_SDPA, &n), 36);
    assert_int_equal(flash_layers("gpt2", 209, MDL_ATTN_MODEL, &n), 12);
    assert_int_equal(flash_layers("gpt2", 113, MDL_ATTN_MODEL, &n), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_own_sdpa_from_pytorch_2),
        cmocka_unit_test(test_build_eager_model_stays_eager),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
