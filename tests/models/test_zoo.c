/* test_zoo.c — the zoo's networks have the published parameter counts and forward MACs of the
 * implementations they follow, shapes propagate, and bad names or shapes are clean errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "models/zoo.h"

#include <math.h>
#include <string.h>

static double params_of(const char *name, const mdl_shape *s, double *macs)
{
    mdl_net net;
    sim_err err;
    int rc = mdl_zoo_build(name, s, &net, &err);
    if (rc) fail_msg("%s: %s", name, err.msg);
    double p = mdl_net_params(&net);
    if (macs) *macs = mdl_net_fwd_macs(&net);
    mdl_net_free(&net);
    return p;
}

/* Parameter counts: exact figures of the reference implementations (torchvision model cards,
 * Hugging Face configs). The layer lists are built to match them exactly, so the tolerance is
 * 0.01 %; a miscounted bias or norm would move them by more. */
static void check_params(const char *name, double expect)
{
    double p = params_of(name, NULL, NULL);
    if (fabs(p - expect) > 1e-4 * expect)
        fail_msg("%s: %.0f parameters, expected %.0f", name, p, expect);
}

static void test_zoo_param_counts_match_references(void **state)
{
    (void)state;
    check_params("resnet18", 11689512);          /* torchvision: 11,689,512 */
    check_params("resnet34", 21797672);          /* torchvision: 21,797,672 */
    check_params("resnet50", 25557032);          /* torchvision: 25,557,032 */
    check_params("resnet101", 44549160);         /* torchvision: 44,549,160 */
    check_params("resnet152", 60192808);         /* torchvision: 60,192,808 */
    check_params("wide_resnet50_2", 68883240);   /* torchvision: 68,883,240 */
    check_params("wide_resnet101_2", 126886696); /* torchvision: 126,886,696 */
    check_params("resnext50_32x4d", 25028904);   /* torchvision: 25,028,904 */
    check_params("resnext101_32x8d", 88791336);  /* torchvision: 88,791,336 */
    check_params("vgg11", 132863336);            /* torchvision: 132,863,336 */
    check_params("vgg13", 133047848);            /* torchvision: 133,047,848 */
    check_params("vgg16", 138357544);            /* torchvision: 138,357,544 */
    check_params("vgg19", 143667240);            /* torchvision: 143,667,240 */
    check_params("vgg11_bn", 132868840);         /* torchvision: 132,868,840 */
    check_params("vgg13_bn", 133053736);         /* torchvision: 133,053,736 */
    check_params("vgg16_bn", 138365992);         /* torchvision: 138,365,992 */
    check_params("vgg19_bn", 143678248);         /* torchvision: 143,678,248 */
    check_params("mobilenet_v2", 3504872);       /* torchvision: 3,504,872 */
    check_params("mnasnet0_5", 2218512);         /* torchvision: 2,218,512 */
    check_params("mnasnet0_75", 3170208);        /* torchvision: 3,170,208 */
    check_params("mnasnet1_0", 4383312);         /* torchvision: 4,383,312 */
    check_params("mnasnet1_3", 6282256);         /* torchvision: 6,282,256 */
    check_params("squeezenet1_0", 1248424);      /* torchvision: 1,248,424 */
    check_params("squeezenet1_1", 1235496);      /* torchvision: 1,235,496 */
    check_params("shufflenet_v2_x0_5", 1366792); /* torchvision: 1,366,792 */
    check_params("shufflenet_v2_x1_0", 2278604); /* torchvision: 2,278,604 */
    check_params("shufflenet_v2_x1_5", 3503624); /* torchvision: 3,503,624 */
    check_params("shufflenet_v2_x2_0", 7393996); /* torchvision: 7,393,996 */
    check_params("densenet121", 7978856);        /* torchvision: 7,978,856 */
    check_params("densenet161", 28681000);       /* torchvision: 28,681,000 */
    check_params("densenet169", 14149480);       /* torchvision: 14,149,480 */
    check_params("densenet201", 20013928);       /* torchvision: 20,013,928 */
    check_params("efficientnet_b0", 5288548);    /* torchvision: 5,288,548 */
    check_params("efficientnet_b1", 7794184);    /* torchvision: 7,794,184 */
    check_params("efficientnet_b2", 9109994);    /* torchvision: 9,109,994 */
    check_params("efficientnet_b3", 12233232);   /* torchvision: 12,233,232 */
    check_params("efficientnet_b4", 19341616);   /* torchvision: 19,341,616 */
    check_params("resnext101_64x4d", 83455272);  /* torchvision: 83,455,272 */
    check_params("resnext101_32x4d", 44177704);  /* timm: 44.18 M */
    check_params("vit_b_16", 86567656);          /* torchvision: 86,567,656 */
    check_params("vit_b_32", 88224232);          /* torchvision: 88,224,232 */
    check_params("vit_l_16", 304326632);         /* torchvision: 304,326,632 */
    check_params("vit_l_32", 306535400);         /* torchvision: 306,535,400 */
    check_params("vit_h_14", 632045800);         /* torchvision: 632,045,800 */
    check_params("gpt2", 124439808);             /* HF gpt2: 124,439,808 (tied lm_head) */
    check_params("gpt2-large", 774030080);       /* HF gpt2-large: 774,030,080 */
    check_params("opt-1.3b", 1315758080);        /* HF facebook/opt-1.3b: 1,315,758,080 */
    /* DLE's SEBottleneck: 16 squeeze channels whatever the block's c, so each block adds
     * (c x 16 + 16) + (16 x c + c) to ResNeXt-101 32x4d's: 33 x (3 x 256 + 4 x 512 + 23 x 1024 +
     * 3 x 2048) + 33 x 16 = 1,073,424 */
    check_params("se_resnext101_32x4d", 44177704 + 1073424);
    /* HF GPT2LMHeadModel configs of NeuSight's gpt3_27 and gpt3_xl: (12 d^2 + 13 d) per layer,
     * vocab and 2048 positions of d, ln_f 2 d, tied lm_head. */
    check_params("gpt3-2.7b", 2651553280.0);    /* d 2560, 32 layers */
    check_params("gpt3-xl-3072", 2879554560.0); /* d 3072, 24 layers */
    check_params("llama-7b", 6738415616.0);     /* Llama-2-7B: 6,738,415,616 */
    check_params("mlp", 784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10);
    /* HF BertModel with pooler: 109,482,240 (base), 335,141,888 (large); our classifier adds
     * Linear(hidden, 2). */
    check_params("bert-base", 109482240 + 768 * 2 + 2);
    check_params("bert-large", 335141888 + 1024 * 2 + 2);
    /* BertForPreTraining without its NSP side: BertModel less the pooler (h^2 + h), plus the
     * MLM transform (dense h^2 + h, LayerNorm 2h) and the decoder's own bias (30,522); the
     * decoder weight is the word embeddings'. */
    check_params("bert-base-pretraining", 109482240 + 2.0 * 768 + 30522);
    check_params("bert-large-pretraining", 335141888 + 2.0 * 1024 + 30522);
}

/* Forward MACs at the default shape. torchvision's model cards quote "GFLOPS" that are
 * multiply-accumulates of conv/linear layers: resnet50 4.09, resnet18 1.81, resnet34 3.66,
 * resnet101 7.8, resnet152 11.51, wide_resnet50_2 11.4, vgg16 15.47, efficientnet_b0 0.39,
 * mobilenet_v2 0.3, vit_b_16 17.56, wide_resnet101_2 22.75, resnext50_32x4d 4.23,
 * resnext101_32x8d 16.41, vgg11 7.61, vgg13 11.31, vgg19 19.63 (the _bn variants the same),
 * mnasnet0_5 0.1, 0_75 0.21, 1_0 0.31, 1_3 0.53, squeezenet1_0 0.82, 1_1 0.35,
 * shufflenet_v2_x1_0 0.14, x1_5 0.3, x2_0 0.58, densenet121 2.83, 161 7.73, 169 3.36, 201 4.29,
 * efficientnet_b1 0.69, b2 1.09, b3 1.83, b4 4.39 (each at its weights' crop), resnext101_64x4d
 * 15.46, vit_b_32 4.41, vit_l_16 61.55, vit_l_32 15.38, vit_h_14 167.29 (at 224).
 * They are rounded to 2-3 digits, hence 1.5 % (two-digit figures 2-5 %, the one-digit 0.1 5 %). */
static void check_macs(const char *name, double expect, double rel)
{
    double macs;
    params_of(name, NULL, &macs);
    if (fabs(macs - expect) > rel * expect)
        fail_msg("%s: %.4g forward MACs, expected %.4g", name, macs, expect);
}

static void test_zoo_forward_macs_match_model_cards(void **state)
{
    (void)state;
    check_macs("resnet50", 4.09e9, 0.015);
    check_macs("resnet18", 1.81e9, 0.015);
    check_macs("resnet34", 3.66e9, 0.015);
    check_macs("resnet101", 7.8e9, 0.015);
    check_macs("resnet152", 11.51e9, 0.015);
    check_macs("wide_resnet50_2", 11.4e9, 0.015);
    check_macs("vgg16", 15.47e9, 0.015);
    check_macs("mobilenet_v2", 0.30e9, 0.02);
    check_macs("vit_b_16", 17.56e9, 0.015);
    check_macs("efficientnet_b0", 0.39e9, 0.02);
    check_macs("wide_resnet101_2", 22.75e9, 0.015);
    check_macs("resnext50_32x4d", 4.23e9, 0.015);
    check_macs("resnext101_32x8d", 16.41e9, 0.015);
    check_macs("vgg11", 7.61e9, 0.015);
    check_macs("vgg13", 11.31e9, 0.015);
    check_macs("vgg19", 19.63e9, 0.015);
    check_macs("vgg11_bn", 7.61e9, 0.015); /* batch norm adds no MACs */
    check_macs("vgg19_bn", 19.63e9, 0.015);
    check_macs("mnasnet0_75", 0.21e9, 0.03); /* rounded to 2 digits */
    check_macs("mnasnet1_0", 0.31e9, 0.03);
    check_macs("mnasnet1_3", 0.53e9, 0.03);
    check_macs("mnasnet0_5", 0.10e9, 0.05); /* torchvision's card: 0.1 (one digit) */
    check_macs("squeezenet1_0", 0.82e9, 0.02);
    check_macs("squeezenet1_1", 0.35e9, 0.02);
    check_macs("shufflenet_v2_x1_0", 0.14e9, 0.05); /* the card shows 0.145 as 0.14 */
    check_macs("shufflenet_v2_x1_5", 0.30e9, 0.02);
    check_macs("shufflenet_v2_x2_0", 0.58e9, 0.02);
    check_macs("densenet121", 2.83e9, 0.015);
    check_macs("densenet161", 7.73e9, 0.015);
    check_macs("densenet169", 3.36e9, 0.015);
    check_macs("densenet201", 4.29e9, 0.015);
    check_macs("efficientnet_b1", 0.69e9, 0.02);  /* at its default 240 */
    check_macs("efficientnet_b2", 1.09e9, 0.02);  /* 288 */
    check_macs("efficientnet_b3", 1.83e9, 0.015); /* 300 */
    check_macs("efficientnet_b4", 4.39e9, 0.015); /* 380 */
    check_macs("resnext101_64x4d", 15.46e9, 0.015);
    check_macs("vit_b_32", 4.41e9, 0.015);
    check_macs("vit_l_16", 61.55e9, 0.015);
    check_macs("vit_l_32", 15.38e9, 0.015);
    check_macs("vit_h_14", 167.29e9, 0.015);
}

/* Transformer MACs follow the closed form: per token 12 h^2 per layer (qkv, out, 4h MLP x 2)
 * plus attention 2 s h per layer (QK^T and PV). BERT-base at 128 tokens (h = 768, 12 layers),
 * plus pooler and classifier. Exact up to float rounding. */
static void test_zoo_bert_macs_closed_form(void **state)
{
    (void)state;
    double h = 768, s = 128, L = 12;
    double expect = L * (s * 12 * h * h + 2 * s * s * h) + h * h + h * 2;
    double macs;
    mdl_shape sh = {.seq = 128};
    params_of("bert-base", &sh, &macs);
    assert_true(fabs(macs - expect) < 1e-9 * expect);
}

/* Causal flash attention computes half of the score matrix: GPT-2's attention MACs are half of
 * the non-causal closed form. */
static void test_zoo_gpt2_causal_attention_counts_half(void **state)
{
    (void)state;
    double h = 768, s = 1024, L = 12, vocab = 50257;
    double expect = L * (s * 12 * h * h + 0.5 * 2 * s * s * h) + s * h * vocab;
    double macs;
    params_of("gpt2", NULL, &macs);
    assert_true(fabs(macs - expect) < 1e-9 * expect);
}

/* Conv MACs scale with the pixel count: ResNet-50's conv MACs at 128x128 are exactly a quarter
 * of those at 256x256 (both sizes halve evenly through all five strides); the fc layer (2048 x
 * 1000 MACs) does not scale. */
static void test_zoo_image_shape_scales_macs(void **state)
{
    (void)state;
    double m224, m112;
    mdl_shape s224 = {.h = 256, .w = 256}, s112 = {.h = 128, .w = 128};
    params_of("resnet50", &s224, &m224);
    params_of("resnet50", &s112, &m112);
    double fc = 2048.0 * 1000;
    assert_true(fabs((m112 - fc) - (m224 - fc) / 4) < 1);
    /* A rectangular image is accepted. */
    mdl_shape r = {.h = 160, .w = 320};
    double mr;
    params_of("resnet50", &r, &mr);
    assert_true(mr > m112 && mr < m224 * 1.1);
}

static void test_zoo_unknown_model_lists_known(void **state)
{
    (void)state;
    mdl_net net;
    sim_err err;
    assert_int_equal(mdl_zoo_build("resnet51", NULL, &net, &err), SIM_ENOENT);
    assert_non_null(strstr(err.msg, "resnet51"));
    assert_non_null(strstr(err.msg, "resnet50"));
    mdl_net_free(&net);
}

static void test_zoo_bad_shapes_are_errors(void **state)
{
    (void)state;
    mdl_net net;
    sim_err err;
    mdl_shape vit = {.h = 225, .w = 225};
    assert_int_equal(mdl_zoo_build("vit_b_16", &vit, &net, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "divisible"));
    mdl_net_free(&net);
    mdl_shape neg_img = {.h = -8, .w = 8};
    assert_int_equal(mdl_zoo_build("resnet50", &neg_img, &net, &err), SIM_EINVAL);
    mdl_net_free(&net);
    mdl_shape huge = {.h = 10000, .w = 10000};
    assert_int_equal(mdl_zoo_build("resnet50", &huge, &net, &err), SIM_EINVAL);
    mdl_net_free(&net);
    /* A window larger than the padded input is a builder error, not a crash. */
    mdl_val x;
    mdl_net_init(&net, "t", 3, 2, 2, MDL_DT_ACT32, &x);
    mdl_val y = mdl_conv(&net, "c", x, 8, 7, 1, 0, 1, false);
    assert_int_equal(net.error, SIM_EINVAL);
    assert_true(y.t < 0);
    mdl_bn(&net, "after", y); /* later calls are no-ops */
    assert_int_equal(net.n_layers, 0);
    mdl_net_free(&net);
    mdl_shape long_seq = {.seq = 513};
    assert_int_equal(mdl_zoo_build("bert-base", &long_seq, &net, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "513"));
    mdl_net_free(&net);
    mdl_shape neg = {.features = -3};
    assert_int_equal(mdl_zoo_build("mlp", &neg, &net, &err), SIM_EINVAL);
    mdl_net_free(&net);
}

/* Pooling and concatenation shapes follow PyTorch: MaxPool2d(3, 2, ceil_mode=True) maps 109 to
 * 54 and 13 to 6 (SqueezeNet 1.0's pools), AvgPool2d(2, 2) halves; torch.cat adds channels and
 * refuses mismatched images or no inputs; x.chunk(2) takes half the channels and refuses an odd
 * count. */
static void test_zoo_pool_and_cat_shapes(void **state)
{
    (void)state;
    mdl_net net;
    mdl_val x;
    mdl_net_init(&net, "t", 8, 109, 109, MDL_DT_ACT32, &x);
    mdl_val p = mdl_maxpool_ceil(&net, "pool", x, 3, 2);
    assert_int_equal(p.h, 54);
    mdl_val q = mdl_maxpool_ceil(&net, "pool13", mdl_view(x, 8, 13, 13), 3, 2);
    assert_int_equal(q.h, 6);
    mdl_val a = mdl_avgpool_window(&net, "avg", p, 2, 2);
    assert_int_equal(a.h, 27);
    mdl_val parts[2] = {p, mdl_conv(&net, "c", p, 4, 1, 1, 0, 1, false)};
    mdl_val c = mdl_cat(&net, "cat", parts, 2, false);
    assert_int_equal(c.c, 12);
    assert_int_equal(c.h, 54);
    mdl_val h = mdl_chunk_copy(&net, "half", c, 2);
    assert_int_equal(h.c, 6);
    assert_int_equal(net.error, SIM_OK);
    mdl_net_free(&net);
    mdl_net_init(&net, "t", 8, 4, 4, MDL_DT_ACT32, &x);
    mdl_cat(&net, "none", &x, 0, false);
    assert_int_equal(net.error, SIM_EINVAL);
    assert_non_null(strstr(net.error_msg, "none"));
    mdl_net_free(&net);
    mdl_net_init(&net, "t", 8, 109, 109, MDL_DT_ACT32, &x);
    p = mdl_maxpool_ceil(&net, "pool", x, 3, 2);
    a = mdl_avgpool_window(&net, "avg", p, 2, 2);
    mdl_val bad[2] = {p, a};
    mdl_cat(&net, "mismatch", bad, 2, false);
    assert_int_equal(net.error, SIM_EINVAL);
    assert_non_null(strstr(net.error_msg, "mismatch"));
    mdl_net_free(&net);
    mdl_net_init(&net, "t", 7, 4, 4, MDL_DT_ACT32, &x);
    mdl_chunk_copy(&net, "odd", x, 2);
    assert_int_equal(net.error, SIM_EINVAL);
    mdl_net_free(&net);
}

/* mdl_addcmul: a broadcast multiply and the in-place add that carries MDL_F_ADDCMUL, the
 * residual as the add's second operand; a scale that is not one value per channel is an error
 * naming the layer. */
static void test_zoo_addcmul_layers(void **state)
{
    (void)state;
    mdl_net net;
    mdl_val x;
    mdl_net_init(&net, "t", 8, 14, 14, MDL_DT_ACT32, &x);
    mdl_val s = mdl_avgpool(&net, "pool", x);
    mdl_val y = mdl_addcmul(&net, "se", x, mdl_bn(&net, "bn", x), s);
    assert_int_equal(net.error, SIM_OK);
    assert_int_equal(y.c, 8);
    assert_int_equal(y.h, 14);
    const mdl_layer *mul = &net.layers[net.n_layers - 2], *add = &net.layers[net.n_layers - 1];
    assert_int_equal(mul->kind, MDL_L_MUL);
    assert_true(mul->flags & MDL_F_BROADCAST);
    assert_string_equal(mul->name, "se.mul");
    assert_int_equal(add->kind, MDL_L_ADD);
    assert_true((add->flags & MDL_F_ADDCMUL) && (add->flags & MDL_F_INPLACE));
    assert_int_equal(add->in, mul->out);
    assert_int_equal(add->in2, x.t);
    mdl_net_free(&net);
    mdl_net_init(&net, "t", 8, 14, 14, MDL_DT_ACT32, &x);
    mdl_addcmul(&net, "wide", x, x, mdl_view(x, 4, 2, 1));
    assert_int_equal(net.error, SIM_EINVAL);
    assert_non_null(strstr(net.error_msg, "wide"));
    mdl_net_free(&net);
}

/* The seed-003 net: three encoder passes share one set of weights, and the loss is one layer. */
static void test_zoo_contrastive_shares_encoder(void **state)
{
    (void)state;
    mdl_net net;
    sim_err err;
    mdl_shape s = {.features = 256};
    assert_int_equal(mdl_zoo_build("contrastive-triplet", &s, &net, &err), SIM_OK);
    int linears = 0, shared = 0, losses = 0;
    for (int i = 0; i < net.n_layers; i++) {
        linears += net.layers[i].kind == MDL_L_LINEAR;
        shared += net.layers[i].shares >= 0;
        losses += net.layers[i].kind == MDL_L_LOSS_TRIPLET;
    }
    assert_int_equal(linears, 9);
    assert_int_equal(shared, 6);
    assert_int_equal(losses, 1);
    assert_true(
        fabs(mdl_net_params(&net) - (256.0 * 512 + 512 + 512 * 256 + 256 + 256 * 128 + 128)) < 0.5);
    mdl_net_free(&net);
}

/* The in-batch loss builder: a batch-hard triplet compares one batch with itself, InfoNCE two
 * views of equal width; anything else is a builder error naming the layer, not a crash. */
static void test_zoo_inbatch_loss_checks_its_inputs(void **state)
{
    (void)state;
    mdl_net net;
    mdl_val x;
    mdl_net_init(&net, "t", 16, 1, 1, MDL_DT_ACT32, &x);
    mdl_val a = mdl_linear(&net, "a", x, 8, false);
    mdl_val b = mdl_linear(&net, "b", x, 8, false);
    mdl_val loss = mdl_loss_inbatch(&net, "pairs", a, b, 0);
    assert_int_equal(net.error, SIM_EINVAL);
    assert_true(loss.t < 0);
    assert_non_null(strstr(net.error_msg, "pairs"));
    mdl_net_free(&net);
    mdl_net_init(&net, "t", 16, 1, 1, MDL_DT_ACT32, &x);
    a = mdl_linear(&net, "a", x, 8, false);
    b = mdl_linear(&net, "b", x, 4, false);
    mdl_loss_inbatch(&net, "nce", a, b, MDL_F_INFONCE);
    assert_int_equal(net.error, SIM_EINVAL);
    mdl_net_free(&net);
    mdl_net_init(&net, "t", 16, 1, 1, MDL_DT_ACT32, &x);
    a = mdl_linear(&net, "a", x, 8, false);
    b = mdl_linear(&net, "b", x, 8, false);
    mdl_loss_inbatch(&net, "nce", a, b, MDL_F_INFONCE);
    assert_int_equal(net.error, 0);
    assert_int_equal(net.layers[net.n_layers - 1].in2, b.t);
    assert_true(fabs(net.layers[net.n_layers - 1].aux - 8) < 1e-9);
    mdl_net_free(&net);
}

/* Every model builds at its defaults and has blocks to checkpoint where it has repeated units. */
static void test_zoo_every_entry_builds(void **state)
{
    (void)state;
    assert_true(mdl_zoo_count() >= 10);
    for (size_t i = 0; i < mdl_zoo_count(); i++) {
        const mdl_zoo_entry *e = mdl_zoo_at(i);
        mdl_net net;
        sim_err err;
        assert_int_equal(mdl_zoo_build(e->name, NULL, &net, &err), SIM_OK);
        assert_true(net.n_layers > 3);
        assert_true(mdl_net_params(&net) > 0);
        assert_ptr_equal(mdl_zoo_find(e->name), e);
        mdl_net_free(&net);
    }
    assert_null(mdl_zoo_at(mdl_zoo_count()));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zoo_param_counts_match_references),
        cmocka_unit_test(test_zoo_forward_macs_match_model_cards),
        cmocka_unit_test(test_zoo_bert_macs_closed_form),
        cmocka_unit_test(test_zoo_gpt2_causal_attention_counts_half),
        cmocka_unit_test(test_zoo_image_shape_scales_macs),
        cmocka_unit_test(test_zoo_unknown_model_lists_known),
        cmocka_unit_test(test_zoo_bad_shapes_are_errors),
        cmocka_unit_test(test_zoo_pool_and_cat_shapes),
        cmocka_unit_test(test_zoo_addcmul_layers),
        cmocka_unit_test(test_zoo_contrastive_shares_encoder),
        cmocka_unit_test(test_zoo_inbatch_loss_checks_its_inputs),
        cmocka_unit_test(test_zoo_every_entry_builds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
