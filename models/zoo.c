/* zoo.c — layer lists of the zoo's networks, written with the builder of net.h.
 * Each build function mirrors the forward() of the implementation named in its table row, module
 * call by module call, because the number of modules called is what the CPU dispatch cost and
 * the kernel count of a step come from. */
#include "models/zoo.h"

#include "sim/base/names.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Formats a layer name; names longer than the layer's field are cut by new_layer on purpose. */
static const char *nm(char *buf, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static const char *nm(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return buf;
}
#define NM(buf, ...) nm((buf), sizeof(buf), __VA_ARGS__)

/* torchvision's _make_divisible(v, 8) (EfficientNet, MobileNet) and MNASNet's
 * _round_to_multiple_of(v, 8, 0.9), the same rule: the nearest multiple of 8, at least 8, and
 * one step up if that fell below 90 % of v. */
static int round8(double v)
{
    int r = (int)(v + 4) / 8 * 8;
    if (r < 8) r = 8;
    return r >= 0.9 * v ? r : r + 8;
}

/* ---- ResNet (torchvision.models.resnet, v1.5: stride in the 3x3 conv) ---- */

static mdl_val basic_block(mdl_net *net, const char *p, mdl_val x, int width, int stride)
{
    char b[96];
    mdl_net_begin_block(net);
    mdl_val id = x;
    mdl_val y = mdl_conv(net, NM(b, "%s.conv1", p), x, width, 3, stride, 1, 1, false);
    y = mdl_bn(net, NM(b, "%s.bn1", p), y);
    y = mdl_act_layer(net, NM(b, "%s.relu", p), y, MDL_ACT_RELU, true);
    y = mdl_conv(net, NM(b, "%s.conv2", p), y, width, 3, 1, 1, 1, false);
    y = mdl_bn(net, NM(b, "%s.bn2", p), y);
    if (stride != 1 || x.c != width) {
        id = mdl_conv(net, NM(b, "%s.downsample.0", p), x, width, 1, stride, 0, 1, false);
        id = mdl_bn(net, NM(b, "%s.downsample.1", p), id);
    }
    y = mdl_add(net, NM(b, "%s.add", p), y, id, true); /* out += identity */
    y = mdl_act_layer(net, NM(b, "%s.relu", p), y, MDL_ACT_RELU, true);
    mdl_net_end_block(net);
    return y;
}

/* torchvision's Bottleneck: 1x1 to `width`, 3x3 at the stride in `groups` groups, 1x1 to `out`
 * (4 x planes; width = planes x width_per_group / 64 x groups, so wide_resnet50_2's is twice
 * ResNet-50's and resnext50_32x4d's is too, split into 32 groups). With se > 0 it is NVIDIA
 * DeepLearningExamples' SEBottleneck (image_classification/models/resnet.py and common.py): a
 * squeeze-and-excitation of `se` channels on the block's output (adaptive average pool, 1x1
 * convolutions with bias, ReLU, sigmoid) that torch.addcmul applies while adding the residual. */
static mdl_val bottleneck(mdl_net *net, const char *p, mdl_val x, int width, int out, int stride,
                          int groups, int se)
{
    char b[96];
    mdl_net_begin_block(net);
    mdl_val id = x;
    mdl_val y = mdl_conv(net, NM(b, "%s.conv1", p), x, width, 1, 1, 0, 1, false);
    y = mdl_bn(net, NM(b, "%s.bn1", p), y);
    y = mdl_act_layer(net, NM(b, "%s.relu", p), y, MDL_ACT_RELU, true);
    y = mdl_conv(net, NM(b, "%s.conv2", p), y, width, 3, stride, 1, groups, false);
    y = mdl_bn(net, NM(b, "%s.bn2", p), y);
    y = mdl_act_layer(net, NM(b, "%s.relu", p), y, MDL_ACT_RELU, true);
    y = mdl_conv(net, NM(b, "%s.conv3", p), y, out, 1, 1, 0, 1, false);
    y = mdl_bn(net, NM(b, "%s.bn3", p), y);
    if (stride != 1 || x.c != out) {
        id = mdl_conv(net, NM(b, "%s.downsample.0", p), x, out, 1, stride, 0, 1, false);
        id = mdl_bn(net, NM(b, "%s.downsample.1", p), id);
    }
    if (se > 0) {
        mdl_val s = mdl_avgpool(net, NM(b, "%s.squeeze.pooling", p), y);
        s = mdl_conv(net, NM(b, "%s.squeeze.squeeze", p), s, se, 1, 1, 0, 1, true);
        s = mdl_act_layer(net, NM(b, "%s.squeeze.activation", p), s, MDL_ACT_RELU, true);
        s = mdl_conv(net, NM(b, "%s.squeeze.expand", p), s, out, 1, 1, 0, 1, true);
        s = mdl_act_layer(net, NM(b, "%s.squeeze.sigmoid", p), s, MDL_ACT_SIGMOID, false);
        y = mdl_addcmul(net, NM(b, "%s.addcmul", p), id, y, s);
    } else {
        y = mdl_add(net, NM(b, "%s.add", p), y, id, true);
    }
    y = mdl_act_layer(net, NM(b, "%s.relu", p), y, MDL_ACT_RELU, true);
    mdl_net_end_block(net);
    return y;
}

/* deep: Bottleneck blocks (else BasicBlock); width_mult: the bottleneck's inner width over
 * ResNet-50's (torchvision's width_per_group / 64 x groups); groups: its 3x3's groups. */
static int resnet(mdl_net *net, const mdl_shape *s, const char *name, const int layers[4],
                  bool deep, int width_mult, int groups, int se)
{
    char b[96];
    mdl_val x;
    mdl_net_init(net, name, 3, s->h, s->w, MDL_DT_ACT32, &x);
    x = mdl_conv(net, "conv1", x, 64, 7, 2, 3, 1, false);
    x = mdl_bn(net, "bn1", x);
    x = mdl_act_layer(net, "relu", x, MDL_ACT_RELU, true);
    x = mdl_maxpool(net, "maxpool", x, 3, 2, 1);
    static const int widths[4] = {64, 128, 256, 512};
    for (int st = 0; st < 4; st++)
        for (int i = 0; i < layers[st]; i++) {
            int stride = (i == 0 && st > 0) ? 2 : 1;
            NM(b, "layer%d.%d", st + 1, i);
            x = deep ? bottleneck(net, b, x, widths[st] * width_mult, widths[st] * 4, stride,
                                  groups, se)
                     : basic_block(net, b, x, widths[st], stride);
        }
    x = mdl_avgpool(net, "avgpool", x);
    x = mdl_linear(net, "fc", mdl_view(x, x.c, 1, 1), 1000, true);
    mdl_loss_ce(net, "loss", x, 1000);
    return net->error;
}

/* depth: the four stages' block counts; width: the bottleneck's inner width over ResNet-50's
 * (wide: 2; ResNeXt 32x4d: 32 groups x 4 channels per 64 planes = 2, 32x8d: 4); se: the
 * squeeze-and-excitation's channels per block, 0 = none (DLE's SE-ResNeXt: 16, se_squeeze). */
#define RESNET_BUILD(fn, name, b1, b2, b3, b4, deep, width, groups, se)                            \
    static int fn(mdl_net *net, const mdl_shape *s)                                                \
    {                                                                                              \
        static const int layers[4] = {b1, b2, b3, b4};                                             \
        return resnet(net, s, name, layers, deep, width, groups, se);                              \
    }
RESNET_BUILD(build_resnet18, "resnet18", 2, 2, 2, 2, false, 1, 1, 0)
RESNET_BUILD(build_resnet34, "resnet34", 3, 4, 6, 3, false, 1, 1, 0)
RESNET_BUILD(build_resnet50, "resnet50", 3, 4, 6, 3, true, 1, 1, 0)
RESNET_BUILD(build_resnet101, "resnet101", 3, 4, 23, 3, true, 1, 1, 0)
RESNET_BUILD(build_resnet152, "resnet152", 3, 8, 36, 3, true, 1, 1, 0)
RESNET_BUILD(build_wide_resnet50_2, "wide_resnet50_2", 3, 4, 6, 3, true, 2, 1, 0)
RESNET_BUILD(build_wide_resnet101_2, "wide_resnet101_2", 3, 4, 23, 3, true, 2, 1, 0)
RESNET_BUILD(build_resnext50_32x4d, "resnext50_32x4d", 3, 4, 6, 3, true, 2, 32, 0)
RESNET_BUILD(build_resnext101_32x8d, "resnext101_32x8d", 3, 4, 23, 3, true, 4, 32, 0)
RESNET_BUILD(build_resnext101_32x4d, "resnext101_32x4d", 3, 4, 23, 3, true, 2, 32, 0)
RESNET_BUILD(build_resnext101_64x4d, "resnext101_64x4d", 3, 4, 23, 3, true, 4, 64, 0)
RESNET_BUILD(build_se_resnext101_32x4d, "se_resnext101_32x4d", 3, 4, 23, 3, true, 2, 32, 16)

/* ---- VGG (torchvision.models.vgg: configurations A, B, D, E; batch norm or not) ---- */

/* Output channels of each 3x3 convolution; 0 is a 2x2 max pool of stride 2; -1 ends the list
 * (torchvision's cfgs "A", "B", "D", "E"). */
static const int vgg_a[] = {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0, -1};
static const int vgg_b[] = {64, 64, 0, 128, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0, -1};
static const int vgg_d[] = {64,  64,  0,   128, 128, 0,   256, 256, 256, 0,
                            512, 512, 512, 0,   512, 512, 512, 0,   -1};
static const int vgg_e[] = {64,  64,  0,   128, 128, 0,   256, 256, 256, 256, 0,
                            512, 512, 512, 512, 0,   512, 512, 512, 512, 0,   -1};

/* make_layers: each convolution (with bias) is followed by BatchNorm2d when bn, then
 * ReLU(inplace=True); names carry the index in nn.Sequential features. */
static int vgg(mdl_net *net, const mdl_shape *s, const char *name, const int *cfg, bool bn)
{
    char b[96];
    mdl_val x;
    mdl_net_init(net, name, 3, s->h, s->w, MDL_DT_ACT32, &x);
    for (int i = 0, f = 0; cfg[i] >= 0; i++) {
        if (cfg[i] == 0) {
            x = mdl_maxpool(net, NM(b, "features.%d", f++), x, 2, 2, 0);
            continue;
        }
        x = mdl_conv(net, NM(b, "features.%d", f++), x, cfg[i], 3, 1, 1, 1, true);
        if (bn) x = mdl_bn(net, NM(b, "features.%d", f++), x);
        x = mdl_act_layer(net, NM(b, "features.%d", f++), x, MDL_ACT_RELU, true);
    }
    /* AdaptiveAvgPool2d((7, 7)): on a 224 input its input is already 7x7, and it still runs a
     * kernel that reads and writes the feature map. */
    x = mdl_copy(net, "avgpool", x, x.c, 7, 7);
    x = mdl_view(x, x.c * x.h * x.w, 1, 1);
    x = mdl_linear(net, "classifier.0", x, 4096, true);
    x = mdl_act_layer(net, "classifier.1", x, MDL_ACT_RELU, true);
    x = mdl_dropout(net, "classifier.2", x);
    x = mdl_linear(net, "classifier.3", x, 4096, true);
    x = mdl_act_layer(net, "classifier.4", x, MDL_ACT_RELU, true);
    x = mdl_dropout(net, "classifier.5", x);
    x = mdl_linear(net, "classifier.6", x, 1000, true);
    mdl_loss_ce(net, "loss", x, 1000);
    return net->error;
}

#define VGG_BUILD(fn, name, cfg, bn)                                                               \
    static int fn(mdl_net *net, const mdl_shape *s)                                                \
    {                                                                                              \
        return vgg(net, s, name, cfg, bn);                                                         \
    }
VGG_BUILD(build_vgg11, "vgg11", vgg_a, false)
VGG_BUILD(build_vgg13, "vgg13", vgg_b, false)
VGG_BUILD(build_vgg16, "vgg16", vgg_d, false)
VGG_BUILD(build_vgg19, "vgg19", vgg_e, false)
VGG_BUILD(build_vgg11_bn, "vgg11_bn", vgg_a, true)
VGG_BUILD(build_vgg13_bn, "vgg13_bn", vgg_b, true)
VGG_BUILD(build_vgg16_bn, "vgg16_bn", vgg_d, true)
VGG_BUILD(build_vgg19_bn, "vgg19_bn", vgg_e, true)

/* ---- EfficientNet-B0 (torchvision.models.efficientnet_b0) ---- */

static mdl_val conv_bn_act(mdl_net *net, const char *p, mdl_val x, int c_out, int k, int stride,
                           int groups, bool act)
{
    char b[96];
    x = mdl_conv(net, NM(b, "%s.0", p), x, c_out, k, stride, (k - 1) / 2, groups, false);
    x = mdl_bn(net, NM(b, "%s.1", p), x);
    /* SiLU(inplace=True) still keeps its input for backward (autograd saves the original
     * value), so it is modelled as out-of-place. */
    if (act) x = mdl_act_layer(net, NM(b, "%s.2", p), x, MDL_ACT_SILU, false);
    return x;
}

/* torchvision's EfficientNet at (width, depth) multipliers: each stage's channels by round8 of
 * width x, its blocks by ceil(depth x); the head 4 x the last stage's channels; stochastic depth
 * 0.2 growing with the block's index, dropout before the classifier. */
static int efficientnet(mdl_net *net, const mdl_shape *s, const char *name, double width,
                        double depth)
{
    /* expand ratio, kernel, stride, in, out, layers: torchvision _efficientnet_conf at b0 */
    static const int cfg[7][6] = {
        {1, 3, 1, 32, 16, 1},  {6, 3, 2, 16, 24, 2},   {6, 5, 2, 24, 40, 2},   {6, 3, 2, 40, 80, 3},
        {6, 5, 1, 80, 112, 3}, {6, 5, 2, 112, 192, 4}, {6, 3, 1, 192, 320, 1},
    };
    int layers[7], total = 0, id = 0;
    for (int st = 0; st < 7; st++) {
        layers[st] = (int)ceil(cfg[st][5] * depth);
        total += layers[st];
    }
    char b[96], p[64];
    mdl_val x;
    mdl_net_init(net, name, 3, s->h, s->w, MDL_DT_ACT32, &x);
    x = conv_bn_act(net, "features.0", x, round8(32 * width), 3, 2, 1, true);
    for (int st = 0; st < 7; st++)
        for (int i = 0; i < layers[st]; i++, id++) {
            int e = cfg[st][0], k = cfg[st][1], stride = i == 0 ? cfg[st][2] : 1;
            int c_in = round8((i == 0 ? cfg[st][3] : cfg[st][4]) * width);
            int c_out = round8(cfg[st][4] * width);
            int exp = c_in * e, sq = c_in / 4 > 1 ? c_in / 4 : 1;
            double sd_prob = 0.2 * id / total;
            NM(p, "features.%d.%d", st + 1, i);
            mdl_net_begin_block(net);
            mdl_val y = x;
            int j = 0;
            if (e != 1) y = conv_bn_act(net, NM(b, "%s.block.%d", p, j++), y, exp, 1, 1, 1, true);
            y = conv_bn_act(net, NM(b, "%s.block.%d", p, j++), y, exp, k, stride, exp, true);
            /* SqueezeExcitation: avgpool, fc1 (1x1 conv, bias), SiLU, fc2, Sigmoid, scale */
            mdl_val se = mdl_avgpool(net, NM(b, "%s.block.%d.avgpool", p, j), y);
            se = mdl_conv(net, NM(b, "%s.block.%d.fc1", p, j), se, sq, 1, 1, 0, 1, true);
            se = mdl_act_layer(net, NM(b, "%s.block.%d.act", p, j), se, MDL_ACT_SILU, false);
            se = mdl_conv(net, NM(b, "%s.block.%d.fc2", p, j), se, exp, 1, 1, 0, 1, true);
            se = mdl_act_layer(net, NM(b, "%s.block.%d.sig", p, j), se, MDL_ACT_SIGMOID, false);
            y = mdl_mul(net, NM(b, "%s.block.%d.scale", p, j++), y, se);
            y = conv_bn_act(net, NM(b, "%s.block.%d", p, j), y, c_out, 1, 1, 1, false);
            if (stride == 1 && c_in == c_out) {
                /* StochasticDepth with p = 0 returns its input without a kernel. */
                if (sd_prob > 0) y = mdl_stochdepth(net, NM(b, "%s.stochastic_depth", p), y);
                y = mdl_add(net, NM(b, "%s.add", p), y, x, true); /* result += input */
            }
            mdl_net_end_block(net);
            x = y;
        }
    x = conv_bn_act(net, "features.8", x, 4 * round8(320 * width), 1, 1, 1, true);
    x = mdl_avgpool(net, "avgpool", x);
    x = mdl_dropout(net, "classifier.0", mdl_view(x, x.c, 1, 1));
    x = mdl_linear(net, "classifier.1", x, 1000, true);
    mdl_loss_ce(net, "loss", x, 1000);
    return net->error;
}

#define EFFNET_BUILD(fn, name, width, depth)                                                       \
    static int fn(mdl_net *net, const mdl_shape *s)                                                \
    {                                                                                              \
        return efficientnet(net, s, name, width, depth);                                           \
    }
EFFNET_BUILD(build_efficientnet_b0, "efficientnet_b0", 1.0, 1.0)
EFFNET_BUILD(build_efficientnet_b1, "efficientnet_b1", 1.0, 1.1)
EFFNET_BUILD(build_efficientnet_b2, "efficientnet_b2", 1.1, 1.2)
EFFNET_BUILD(build_efficientnet_b3, "efficientnet_b3", 1.2, 1.4)
EFFNET_BUILD(build_efficientnet_b4, "efficientnet_b4", 1.4, 1.8)

/* ---- MobileNetV2 (torchvision.models.mobilenet_v2, width 1.0) ---- */

/* Conv2dNormActivation with ReLU6(inplace=True): hardtanh_ backward needs only its output. */
static mdl_val conv_bn_relu6(mdl_net *net, const char *p, mdl_val x, int c_out, int k, int stride,
                             int groups)
{
    char b[96];
    x = mdl_conv(net, NM(b, "%s.0", p), x, c_out, k, stride, (k - 1) / 2, groups, false);
    x = mdl_bn(net, NM(b, "%s.1", p), x);
    return mdl_act_layer(net, NM(b, "%s.2", p), x, MDL_ACT_RELU6, true);
}

static int build_mobilenet_v2(mdl_net *net, const mdl_shape *s)
{
    /* expand ratio t, output channels c, blocks n, first stride s: torchvision's
     * inverted_residual_setting */
    static const int cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    char b[96], p[48];
    mdl_val x;
    mdl_net_init(net, "mobilenet_v2", 3, s->h, s->w, MDL_DT_ACT32, &x);
    x = conv_bn_relu6(net, "features.0", x, 32, 3, 2, 1);
    int f = 1;
    for (int st = 0; st < 7; st++)
        for (int i = 0; i < cfg[st][2]; i++, f++) {
            int stride = i == 0 ? cfg[st][3] : 1, hidden = x.c * cfg[st][0], oup = cfg[st][1];
            bool residual = stride == 1 && x.c == oup;
            NM(p, "features.%d.conv", f);
            mdl_net_begin_block(net);
            mdl_val y = x;
            int j = 0;
            if (cfg[st][0] != 1) y = conv_bn_relu6(net, NM(b, "%s.%d", p, j++), y, hidden, 1, 1, 1);
            y = conv_bn_relu6(net, NM(b, "%s.%d", p, j++), y, hidden, 3, stride, hidden);
            y = mdl_conv(net, NM(b, "%s.%d", p, j), y, oup, 1, 1, 0, 1, false);
            y = mdl_bn(net, NM(b, "%s.%d", p, j + 1), y);
            if (residual) y = mdl_add(net, NM(b, "features.%d.add", f), x, y, false);
            mdl_net_end_block(net);
            x = y;
        }
    x = conv_bn_relu6(net, NM(b, "features.%d", f), x, 1280, 1, 1, 1);
    x = mdl_avgpool(net, "adaptive_avg_pool2d", x);
    x = mdl_dropout(net, "classifier.0", mdl_view(x, x.c, 1, 1));
    x = mdl_linear(net, "classifier.1", x, 1000, true);
    mdl_loss_ce(net, "loss", x, 1000);
    return net->error;
}

/* ---- MNASNet (torchvision.models.mnasnet: the B1 search result, depth multiplier alpha) ---- */

/* _InvertedResidual: 1x1 expand, BN, ReLU, depthwise k x k at the stride, BN, ReLU, 1x1
 * project, BN; the input added back when the shape is kept. */
static mdl_val mnas_block(mdl_net *net, const char *p, mdl_val x, int out, int k, int stride,
                          int expand)
{
    char b[96];
    int mid = x.c * expand;
    mdl_net_begin_block(net);
    mdl_val y = mdl_conv(net, NM(b, "%s.layers.0", p), x, mid, 1, 1, 0, 1, false);
    y = mdl_bn(net, NM(b, "%s.layers.1", p), y);
    y = mdl_act_layer(net, NM(b, "%s.layers.2", p), y, MDL_ACT_RELU, true);
    y = mdl_conv(net, NM(b, "%s.layers.3", p), y, mid, k, stride, k / 2, mid, false);
    y = mdl_bn(net, NM(b, "%s.layers.4", p), y);
    y = mdl_act_layer(net, NM(b, "%s.layers.5", p), y, MDL_ACT_RELU, true);
    y = mdl_conv(net, NM(b, "%s.layers.6", p), y, out, 1, 1, 0, 1, false);
    y = mdl_bn(net, NM(b, "%s.layers.7", p), y);
    if (stride == 1 && x.c == out) y = mdl_add(net, NM(b, "%s.add", p), y, x, false);
    mdl_net_end_block(net);
    return y;
}

static int mnasnet(mdl_net *net, const mdl_shape *s, const char *name, double alpha)
{
    /* out-channel index into depths, kernel, first stride, expansion, repeats: _stack calls */
    static const int stacks[6][5] = {{2, 3, 2, 3, 3}, {3, 5, 2, 3, 3}, {4, 5, 2, 6, 3},
                                     {5, 3, 1, 6, 2}, {6, 5, 2, 6, 4}, {7, 3, 1, 6, 1}};
    static const int base[8] = {32, 16, 24, 40, 80, 96, 192, 320};
    int d[8];
    for (int i = 0; i < 8; i++)
        d[i] = round8(base[i] * alpha);
    char b[96];
    mdl_val x;
    mdl_net_init(net, name, 3, s->h, s->w, MDL_DT_ACT32, &x);
    x = mdl_conv(net, "layers.0", x, d[0], 3, 2, 1, 1, false);
    x = mdl_bn(net, "layers.1", x);
    x = mdl_act_layer(net, "layers.2", x, MDL_ACT_RELU, true);
    x = mdl_conv(net, "layers.3", x, d[0], 3, 1, 1, d[0], false); /* depthwise */
    x = mdl_bn(net, "layers.4", x);
    x = mdl_act_layer(net, "layers.5", x, MDL_ACT_RELU, true);
    x = mdl_conv(net, "layers.6", x, d[1], 1, 1, 0, 1, false);
    x = mdl_bn(net, "layers.7", x);
    for (int st = 0; st < 6; st++)
        for (int i = 0; i < stacks[st][4]; i++)
            x = mnas_block(net, NM(b, "layers.%d.%d", 8 + st, i), x, d[stacks[st][0]],
                           stacks[st][1], i == 0 ? stacks[st][2] : 1, stacks[st][3]);
    x = mdl_conv(net, "layers.14", x, 1280, 1, 1, 0, 1, false);
    x = mdl_bn(net, "layers.15", x);
    x = mdl_act_layer(net, "layers.16", x, MDL_ACT_RELU, true);
    x = mdl_avgpool(net, "mean", x); /* x.mean([2, 3]) */
    x = mdl_dropout(net, "classifier.0", mdl_view(x, x.c, 1, 1));
    x = mdl_linear(net, "classifier.1", x, 1000, true);
    mdl_loss_ce(net, "loss", x, 1000);
    return net->error;
}

#define MNAS_BUILD(fn, name, alpha)                                                                \
    static int fn(mdl_net *net, const mdl_shape *s)                                                \
    {                                                                                              \
        return mnasnet(net, s, name, alpha);                                                       \
    }
MNAS_BUILD(build_mnasnet0_5, "mnasnet0_5", 0.5)
MNAS_BUILD(build_mnasnet0_75, "mnasnet0_75", 0.75)
MNAS_BUILD(build_mnasnet1_0, "mnasnet1_0", 1.0)
MNAS_BUILD(build_mnasnet1_3, "mnasnet1_3", 1.3)

/* ---- SqueezeNet (torchvision.models.squeezenet1_0 and 1_1) ---- */

/* Fire: 1x1 squeeze, then 1x1 and 3x3 expands side by side, each convolution with bias and an
 * in-place ReLU, the two expands concatenated. */
static mdl_val fire(mdl_net *net, const char *p, mdl_val x, int sq, int e1, int e3)
{
    char b[96];
    mdl_net_begin_block(net);
    x = mdl_conv(net, NM(b, "%s.squeeze", p), x, sq, 1, 1, 0, 1, true);
    x = mdl_act_layer(net, NM(b, "%s.squeeze_activation", p), x, MDL_ACT_RELU, true);
    mdl_val ys[2];
    ys[0] = mdl_conv(net, NM(b, "%s.expand1x1", p), x, e1, 1, 1, 0, 1, true);
    ys[0] = mdl_act_layer(net, NM(b, "%s.expand1x1_activation", p), ys[0], MDL_ACT_RELU, true);
    ys[1] = mdl_conv(net, NM(b, "%s.expand3x3", p), x, e3, 3, 1, 1, 1, true);
    ys[1] = mdl_act_layer(net, NM(b, "%s.expand3x3_activation", p), ys[1], MDL_ACT_RELU, true);
    x = mdl_cat(net, NM(b, "%s.cat", p), ys, 2, false);
    mdl_net_end_block(net);
    return x;
}

/* version 0: squeezenet1_0 (7x7 stem of 96, pools after Fire 3 and 7); 1: squeezenet1_1 (3x3
 * stem of 64, pools after Fire 2 and 4). Each Fire row: squeeze, expand channels; 0 = a 3x3
 * max pool of stride 2 with ceil_mode. */
static int squeezenet(mdl_net *net, const mdl_shape *s, const char *name, int version)
{
    static const int v0[][2] = {{0, 0},    {16, 64},  {16, 64},  {32, 128}, {0, 0},   {32, 128},
                                {48, 192}, {48, 192}, {64, 256}, {0, 0},    {64, 256}};
    static const int v1[][2] = {{0, 0}, {16, 64},  {16, 64},  {0, 0},    {32, 128}, {32, 128},
                                {0, 0}, {48, 192}, {48, 192}, {64, 256}, {64, 256}};
    const int(*cfg)[2] = version ? v1 : v0;
    char b[96];
    mdl_val x;
    mdl_net_init(net, name, 3, s->h, s->w, MDL_DT_ACT32, &x);
    x = version ? mdl_conv(net, "features.0", x, 64, 3, 2, 0, 1, true)
                : mdl_conv(net, "features.0", x, 96, 7, 2, 0, 1, true);
    x = mdl_act_layer(net, "features.1", x, MDL_ACT_RELU, true);
    for (int i = 0; i < 11; i++) {
        if (cfg[i][0] == 0)
            x = mdl_maxpool_ceil(net, NM(b, "features.%d", i + 2), x, 3, 2);
        else
            x = fire(net, NM(b, "features.%d", i + 2), x, cfg[i][0], cfg[i][1], cfg[i][1]);
    }
    x = mdl_dropout(net, "classifier.0", x);
    x = mdl_conv(net, "classifier.1", x, 1000, 1, 1, 0, 1, true);
    x = mdl_act_layer(net, "classifier.2", x, MDL_ACT_RELU, true);
    x = mdl_avgpool(net, "classifier.3", x); /* AdaptiveAvgPool2d((1, 1)), then flatten */
    mdl_loss_ce(net, "loss", x, 1000);
    return net->error;
}

static int build_squeezenet1_0(mdl_net *net, const mdl_shape *s)
{
    return squeezenet(net, s, "squeezenet1_0", 0);
}

static int build_squeezenet1_1(mdl_net *net, const mdl_shape *s)
{
    return squeezenet(net, s, "squeezenet1_1", 1);
}

/* ---- ShuffleNet V2 (torchvision.models.shufflenet_v2_x0_5 .. x2_0) ---- */

/* torchvision's InvertedResidual: at stride 1 the input's first half passes and its second half
 * goes through branch2 (1x1, depthwise 3x3, 1x1, with batch norms, ReLU after the 1x1s); at
 * stride 2 branch1 (depthwise 3x3, 1x1) takes the whole input beside branch2. The halves are
 * concatenated and channel_shuffle'd (view, transpose, contiguous: a strided copy). */
static mdl_val shuffle_block(mdl_net *net, const char *p, mdl_val x, int oup, int stride)
{
    char b[96];
    int bf = oup / 2;
    mdl_net_begin_block(net);
    mdl_val ys[2], in2 = x;
    if (stride > 1) {
        mdl_val y = mdl_conv(net, NM(b, "%s.branch1.0", p), x, x.c, 3, stride, 1, x.c, false);
        y = mdl_bn(net, NM(b, "%s.branch1.1", p), y);
        y = mdl_conv(net, NM(b, "%s.branch1.2", p), y, bf, 1, 1, 0, 1, false);
        y = mdl_bn(net, NM(b, "%s.branch1.3", p), y);
        ys[0] = mdl_act_layer(net, NM(b, "%s.branch1.4", p), y, MDL_ACT_RELU, true);
    } else {
        ys[0] = mdl_view(x, x.c / 2, x.h, x.w); /* x.chunk(2, dim=1)[0], read in place by cat */
        in2 = mdl_chunk_copy(net, NM(b, "%s.chunk", p), x, 2);
    }
    mdl_val y = mdl_conv(net, NM(b, "%s.branch2.0", p), in2, bf, 1, 1, 0, 1, false);
    y = mdl_bn(net, NM(b, "%s.branch2.1", p), y);
    y = mdl_act_layer(net, NM(b, "%s.branch2.2", p), y, MDL_ACT_RELU, true);
    y = mdl_conv(net, NM(b, "%s.branch2.3", p), y, bf, 3, stride, 1, bf, false);
    y = mdl_bn(net, NM(b, "%s.branch2.4", p), y);
    y = mdl_conv(net, NM(b, "%s.branch2.5", p), y, bf, 1, 1, 0, 1, false);
    y = mdl_bn(net, NM(b, "%s.branch2.6", p), y);
    ys[1] = mdl_act_layer(net, NM(b, "%s.branch2.7", p), y, MDL_ACT_RELU, true);
    y = mdl_cat(net, NM(b, "%s.cat", p), ys, 2, false);
    y = mdl_permute(net, NM(b, "%s.channel_shuffle", p), y);
    mdl_net_end_block(net);
    return y;
}

static int shufflenet_v2(mdl_net *net, const mdl_shape *s, const char *name, const int ch[5])
{
    static const int repeats[3] = {4, 8, 4};
    char b[96];
    mdl_val x;
    mdl_net_init(net, name, 3, s->h, s->w, MDL_DT_ACT32, &x);
    x = mdl_conv(net, "conv1.0", x, ch[0], 3, 2, 1, 1, false);
    x = mdl_bn(net, "conv1.1", x);
    x = mdl_act_layer(net, "conv1.2", x, MDL_ACT_RELU, true);
    x = mdl_maxpool(net, "maxpool", x, 3, 2, 1);
    for (int st = 0; st < 3; st++)
        for (int i = 0; i < repeats[st]; i++)
            x = shuffle_block(net, NM(b, "stage%d.%d", st + 2, i), x, ch[st + 1], i ? 1 : 2);
    x = mdl_conv(net, "conv5.0", x, ch[4], 1, 1, 0, 1, false);
    x = mdl_bn(net, "conv5.1", x);
    x = mdl_act_layer(net, "conv5.2", x, MDL_ACT_RELU, true);
    x = mdl_avgpool(net, "mean", x); /* x.mean([2, 3]) */
    x = mdl_linear(net, "fc", mdl_view(x, x.c, 1, 1), 1000, true);
    mdl_loss_ce(net, "loss", x, 1000);
    return net->error;
}

#define SHUFFLE_BUILD(fn, name, c1, c2, c3, c4)                                                    \
    static int fn(mdl_net *net, const mdl_shape *s)                                                \
    {                                                                                              \
        static const int ch[5] = {24, c1, c2, c3, c4};                                             \
        return shufflenet_v2(net, s, name, ch);                                                    \
    }
SHUFFLE_BUILD(build_shufflenet_v2_x0_5, "shufflenet_v2_x0_5", 48, 96, 192, 1024)
SHUFFLE_BUILD(build_shufflenet_v2_x1_0, "shufflenet_v2_x1_0", 116, 232, 464, 1024)
SHUFFLE_BUILD(build_shufflenet_v2_x1_5, "shufflenet_v2_x1_5", 176, 352, 704, 1024)
SHUFFLE_BUILD(build_shufflenet_v2_x2_0, "shufflenet_v2_x2_0", 244, 488, 976, 2048)

/* ---- DenseNet (torchvision.models.densenet121 .. 201, memory_efficient=False) ---- */

#define DENSE_MAX_LAYERS 48

/* _DenseLayer: torch.cat of every earlier feature map of the block, BN, ReLU, 1x1 to 4 x growth,
 * BN, ReLU, 3x3 to growth (no bias, drop rate 0). All but the block's last concatenation (the
 * one _DenseBlock returns) read tensors that a later one reads again, so their gradients add. */
static mdl_val dense_block(mdl_net *net, const char *p, mdl_val x, int layers, int growth)
{
    char b[96];
    mdl_val feats[DENSE_MAX_LAYERS + 1];
    feats[0] = x;
    for (int i = 0; i < layers; i++) {
        mdl_val y = mdl_cat(net, NM(b, "%s.denselayer%d.cat", p, i + 1), feats, i + 1, true);
        y = mdl_bn(net, NM(b, "%s.denselayer%d.norm1", p, i + 1), y);
        y = mdl_act_layer(net, NM(b, "%s.denselayer%d.relu1", p, i + 1), y, MDL_ACT_RELU, true);
        y = mdl_conv(net, NM(b, "%s.denselayer%d.conv1", p, i + 1), y, 4 * growth, 1, 1, 0, 1,
                     false);
        y = mdl_bn(net, NM(b, "%s.denselayer%d.norm2", p, i + 1), y);
        y = mdl_act_layer(net, NM(b, "%s.denselayer%d.relu2", p, i + 1), y, MDL_ACT_RELU, true);
        feats[i + 1] =
            mdl_conv(net, NM(b, "%s.denselayer%d.conv2", p, i + 1), y, growth, 3, 1, 1, 1, false);
    }
    return mdl_cat(net, NM(b, "%s.cat", p), feats, layers + 1, false);
}

static int densenet(mdl_net *net, const mdl_shape *s, const char *name, int growth,
                    const int blocks[4], int init)
{
    char b[96];
    mdl_val x;
    mdl_net_init(net, name, 3, s->h, s->w, MDL_DT_ACT32, &x);
    x = mdl_conv(net, "features.conv0", x, init, 7, 2, 3, 1, false);
    x = mdl_bn(net, "features.norm0", x);
    x = mdl_act_layer(net, "features.relu0", x, MDL_ACT_RELU, true);
    x = mdl_maxpool(net, "features.pool0", x, 3, 2, 1);
    for (int i = 0; i < 4; i++) {
        x = dense_block(net, NM(b, "features.denseblock%d", i + 1), x, blocks[i], growth);
        if (i == 3) break;
        x = mdl_bn(net, NM(b, "features.transition%d.norm", i + 1), x);
        x = mdl_act_layer(net, NM(b, "features.transition%d.relu", i + 1), x, MDL_ACT_RELU, true);
        x = mdl_conv(net, NM(b, "features.transition%d.conv", i + 1), x, x.c / 2, 1, 1, 0, 1,
                     false);
        x = mdl_avgpool_window(net, NM(b, "features.transition%d.pool", i + 1), x, 2, 2);
    }
    x = mdl_bn(net, "features.norm5", x);
    x = mdl_act_layer(net, "relu", x, MDL_ACT_RELU, true); /* F.relu(features, inplace=True) */
    x = mdl_avgpool(net, "adaptive_avg_pool2d", x);
    x = mdl_linear(net, "classifier", mdl_view(x, x.c, 1, 1), 1000, true);
    mdl_loss_ce(net, "loss", x, 1000);
    return net->error;
}

#define DENSE_BUILD(fn, name, growth, b1, b2, b3, b4, init)                                        \
    static int fn(mdl_net *net, const mdl_shape *s)                                                \
    {                                                                                              \
        static const int blocks[4] = {b1, b2, b3, b4};                                             \
        return densenet(net, s, name, growth, blocks, init);                                       \
    }
DENSE_BUILD(build_densenet121, "densenet121", 32, 6, 12, 24, 16, 64)
DENSE_BUILD(build_densenet161, "densenet161", 48, 6, 12, 36, 24, 96)
DENSE_BUILD(build_densenet169, "densenet169", 32, 6, 12, 32, 32, 64)
DENSE_BUILD(build_densenet201, "densenet201", 32, 6, 12, 48, 32, 64)

/* ---- ViT (torchvision.models.vit_b_16 .. vit_h_14; dropout 0, so no dropout kernels) ---- */

static int vit(mdl_net *net, const mdl_shape *s, const char *name, int patch, int dim, int layers,
               int heads, int mlp)
{
    mdl_val x;
    mdl_net_init(net, name, 3, s->h, s->w, MDL_DT_ACT32, &x);
    if (s->h % patch || s->w % patch) {
        net->error = SIM_EINVAL;
        snprintf(net->error_msg, sizeof net->error_msg,
                 "%s needs an image size divisible by %d (got %dx%d)", name, patch, s->h, s->w);
        return net->error;
    }
    char b[96];
    x = mdl_conv(net, "conv_proj", x, dim, patch, patch, 0, 1, true);
    int tokens = x.h * x.w + 1;
    x = mdl_copy(net, "cat_class_token", mdl_view(x, dim, x.h * x.w, 1), dim, tokens, 1);
    mdl_extra_params(net, dim, 1); /* class_token */
    x = mdl_add(net, "encoder.pos_embedding", x, x, false);
    mdl_extra_params(net, (double)tokens * dim, 1);
    for (int i = 0; i < layers; i++) {
        mdl_net_begin_block(net);
        mdl_val in = x;
        mdl_val y = mdl_layernorm(net, NM(b, "encoder.layers.%d.ln_1", i), x);
        y = mdl_linear(net, NM(b, "encoder.layers.%d.self_attention.in_proj", i), y, 3 * dim, true);
        y = mdl_attention(net, NM(b, "encoder.layers.%d.self_attention.sdpa", i), y, heads,
                          MDL_F_FLASH);
        y = mdl_permute(net, NM(b, "encoder.layers.%d.self_attention.permute", i), y);
        y = mdl_linear(net, NM(b, "encoder.layers.%d.self_attention.out_proj", i), y, dim, true);
        x = mdl_add(net, NM(b, "encoder.layers.%d.add_1", i), y, in, false);
        y = mdl_layernorm(net, NM(b, "encoder.layers.%d.ln_2", i), x);
        y = mdl_linear(net, NM(b, "encoder.layers.%d.mlp.0", i), y, mlp, true);
        y = mdl_act_layer(net, NM(b, "encoder.layers.%d.mlp.1", i), y, MDL_ACT_GELU, false);
        y = mdl_linear(net, NM(b, "encoder.layers.%d.mlp.3", i), y, dim, true);
        x = mdl_add(net, NM(b, "encoder.layers.%d.add_2", i), y, x, false);
        mdl_net_end_block(net);
    }
    x = mdl_layernorm(net, "encoder.ln", x);
    x = mdl_linear(net, "heads.head", mdl_view(x, dim, 1, 1), 1000, true); /* x[:, 0] */
    mdl_loss_ce(net, "loss", x, 1000);
    return net->error;
}

#define VIT_BUILD(fn, name, patch, dim, layers, heads, mlp)                                        \
    static int fn(mdl_net *net, const mdl_shape *s)                                                \
    {                                                                                              \
        return vit(net, s, name, patch, dim, layers, heads, mlp);                                  \
    }
VIT_BUILD(build_vit_b16, "vit_b_16", 16, 768, 12, 12, 3072)
VIT_BUILD(build_vit_b32, "vit_b_32", 32, 768, 12, 12, 3072)
VIT_BUILD(build_vit_l16, "vit_l_16", 16, 1024, 24, 16, 4096)
VIT_BUILD(build_vit_l32, "vit_l_32", 32, 1024, 24, 16, 4096)
VIT_BUILD(build_vit_h14, "vit_h_14", 14, 1280, 32, 16, 5120)

/* ---- BERT: Hugging Face BertModel with pooler + a 2-way classifier, eager attention; or NVIDIA
 * DeepLearningExamples' modeling.py (seq-first layout, torch.bmm attention) with the SQuAD
 * question-answering head, as DLE's and Lambda's run_squad.py train it ---- */

/* The head on the encoder: Hugging Face's classifier on the pooled first token, DLE's SQuAD
 * start/end logits (with DLE's seq-first layout), or Hugging Face BertForPreTraining's masked-LM
 * head over every token. */
typedef enum { BERT_CLASSIFIER, BERT_NVIDIA_SQUAD, BERT_PRETRAINING } bert_head;

static int bert(mdl_net *net, const mdl_shape *s, const char *name, int dim, int layers, int heads,
                bert_head head)
{
    bool nvidia = head == BERT_NVIDIA_SQUAD;
    char b[96];
    const int vocab = 30522, max_pos = 512, types = 2, inter = 4 * dim;
    mdl_val ids;
    mdl_net_init(net, name, 1, s->seq, 1, MDL_DT_I64, &ids);
    mdl_val x = mdl_embed(net, "embeddings.word_embeddings", ids, vocab, dim);
    int word_embeddings = net->n_layers - 1;
    mdl_val t = mdl_embed(net, "embeddings.token_type_embeddings", ids, types, dim);
    x = mdl_add(net, "embeddings.add_token_type", x, t, false);
    mdl_val p = mdl_embed(net, "embeddings.position_embeddings", ids, max_pos, dim);
    x = mdl_add(net, "embeddings.add_position", x, p, true);
    x = mdl_layernorm(net, "embeddings.LayerNorm", x);
    x = mdl_dropout(net, "embeddings.dropout", x);
    for (int i = 0; i < layers; i++) {
        mdl_net_begin_block(net);
        mdl_val in = x;
        mdl_val y =
            mdl_linear_qkv(net, NM(b, "encoder.layer.%d.attention.self.qkv", i), x, dim, true);
        y = mdl_attention(net, NM(b, "encoder.layer.%d.attention.self", i), y, heads,
                          MDL_F_MASK | MDL_F_DROPOUT | (nvidia ? MDL_F_SEQFIRST : 0));
        y = mdl_permute(net, NM(b, "encoder.layer.%d.attention.self.permute", i), y);
        y = mdl_linear(net, NM(b, "encoder.layer.%d.attention.output.dense", i), y, dim, true);
        y = mdl_dropout(net, NM(b, "encoder.layer.%d.attention.output.dropout", i), y);
        y = mdl_add(net, NM(b, "encoder.layer.%d.attention.output.add", i), y, in, false);
        x = mdl_layernorm(net, NM(b, "encoder.layer.%d.attention.output.LayerNorm", i), y);
        y = mdl_linear(net, NM(b, "encoder.layer.%d.intermediate.dense", i), x, inter, true);
        y = mdl_act_layer(net, NM(b, "encoder.layer.%d.intermediate.gelu", i), y, MDL_ACT_GELU,
                          false);
        y = mdl_linear(net, NM(b, "encoder.layer.%d.output.dense", i), y, dim, true);
        y = mdl_dropout(net, NM(b, "encoder.layer.%d.output.dropout", i), y);
        y = mdl_add(net, NM(b, "encoder.layer.%d.output.add", i), y, x, false);
        x = mdl_layernorm(net, NM(b, "encoder.layer.%d.output.LayerNorm", i), y);
        mdl_net_end_block(net);
    }
    if (nvidia) { /* BertForQuestionAnswering: start and end logits over the sequence */
        mdl_val qa = mdl_linear(net, "qa_outputs", x, 2, true);
        mdl_loss_ce(net, "loss", mdl_view(qa, s->seq, 2, 1), s->seq);
        return net->error;
    }
    if (head == BERT_PRETRAINING) {
        /* BertLMPredictionHead over every token: dense, GELU, LayerNorm, then the decoder whose
         * weight is the word embeddings' (tied) with a bias of its own (decoder.bias is
         * cls.predictions.bias, so the linear adds it). The NSP head (pooler and a dim x 2 linear
         * on the first token, ~0.01 % of the FLOPs) is left out. */
        x = mdl_linear(net, "cls.predictions.transform.dense", x, dim, true);
        x = mdl_act_layer(net, "cls.predictions.transform.gelu", x, MDL_ACT_GELU, false);
        x = mdl_layernorm(net, "cls.predictions.transform.LayerNorm", x);
        x = mdl_linear(net, "cls.predictions.decoder", x, vocab, true);
        mdl_share_last(net, word_embeddings);
        mdl_extra_params(net, vocab, 1); /* cls.predictions.bias */
        mdl_loss_ce(net, "loss", x, vocab);
        return net->error;
    }
    mdl_val cls = mdl_view(x, dim, 1, 1); /* hidden_states[:, 0] */
    cls = mdl_linear(net, "pooler.dense", cls, dim, true);
    cls = mdl_act_layer(net, "pooler.activation", cls, MDL_ACT_TANH, false);
    cls = mdl_dropout(net, "dropout", cls);
    cls = mdl_linear(net, "classifier", cls, 2, true);
    mdl_loss_ce(net, "loss", cls, 2);
    return net->error;
}

static int build_bert_base(mdl_net *net, const mdl_shape *s)
{
    return bert(net, s, "bert-base", 768, 12, 12, BERT_CLASSIFIER);
}

static int build_bert_large(mdl_net *net, const mdl_shape *s)
{
    return bert(net, s, "bert-large", 1024, 24, 16, BERT_CLASSIFIER);
}

static int build_bert_base_pretraining(mdl_net *net, const mdl_shape *s)
{
    return bert(net, s, "bert-base-pretraining", 768, 12, 12, BERT_PRETRAINING);
}

static int build_bert_large_pretraining(mdl_net *net, const mdl_shape *s)
{
    return bert(net, s, "bert-large-pretraining", 1024, 24, 16, BERT_PRETRAINING);
}

static int build_bert_base_nvidia(mdl_net *net, const mdl_shape *s)
{
    return bert(net, s, "bert-base-nvidia", 768, 12, 12, BERT_NVIDIA_SQUAD);
}

static int build_bert_large_nvidia(mdl_net *net, const mdl_shape *s)
{
    return bert(net, s, "bert-large-nvidia", 1024, 24, 16, BERT_NVIDIA_SQUAD);
}

/* ---- A pre-LN decoder layer (GPT-2, OPT): x + attn(ln_1(x)), then x + mlp(ln_2(x)), each
 * branch's output through a dropout; the two models differ in their module names, one fused
 * q/k/v projection or three, the attention's flags and the MLP's width and activation ---- */

typedef struct decoder_names { /* each after the layer's prefix */
    const char *ln_1, *qkv, *attn, *transpose, *out_proj, *attn_dropout, *add_1;
    const char *ln_2, *fc_in, *act, *fc_out, *mlp_dropout, *add_2;
} decoder_names;

typedef struct decoder_shape {
    int dim, heads, ffn;
    bool split_qkv; /* q, k and v projected by three GEMMs (else one of 3 x dim) */
    bool addmm;     /* projections are Conv1D modules: torch.addmm on a 2-D view, bias inside */
    unsigned attn;  /* MDL_F_* of the attention */
    mdl_act act;
} decoder_shape;

/* One of the layer's projections with its bias: a Conv1D (addmm) when the model has them. */
static mdl_val decoder_linear(mdl_net *net, const char *name, mdl_val x, int out,
                              const decoder_shape *d)
{
    x = mdl_linear(net, name, x, out, true);
    if (d->addmm) mdl_addmm_last(net);
    return x;
}

static mdl_val pre_ln_decoder_layer(mdl_net *net, const char *p, const decoder_names *n,
                                    const decoder_shape *d, mdl_val x)
{
    char b[128];
    mdl_val y = mdl_layernorm(net, NM(b, "%s.%s", p, n->ln_1), x);
    y = d->split_qkv ? mdl_linear_qkv(net, NM(b, "%s.%s", p, n->qkv), y, d->dim, true)
                     : decoder_linear(net, NM(b, "%s.%s", p, n->qkv), y, 3 * d->dim, d);
    y = mdl_attention(net, NM(b, "%s.%s", p, n->attn), y, d->heads, d->attn);
    y = mdl_permute(net, NM(b, "%s.%s", p, n->transpose), y);
    y = decoder_linear(net, NM(b, "%s.%s", p, n->out_proj), y, d->dim, d);
    y = mdl_dropout(net, NM(b, "%s.%s", p, n->attn_dropout), y);
    x = mdl_add(net, NM(b, "%s.%s", p, n->add_1), x, y, false);
    y = mdl_layernorm(net, NM(b, "%s.%s", p, n->ln_2), x);
    y = decoder_linear(net, NM(b, "%s.%s", p, n->fc_in), y, d->ffn, d);
    y = mdl_act_layer(net, NM(b, "%s.%s", p, n->act), y, d->act, false);
    y = decoder_linear(net, NM(b, "%s.%s", p, n->fc_out), y, d->dim, d);
    y = mdl_dropout(net, NM(b, "%s.%s", p, n->mlp_dropout), y);
    return mdl_add(net, NM(b, "%s.%s", p, n->add_2), x, y, false);
}

/* ---- GPT-2: 124M in nanoGPT's model.py layout (HF's 50257 vocab, 0.1 dropouts, SDPA flash
 * attention, F.gelu); or Hugging Face's GPT2LMHeadModel with eager attention (scale, causal
 * where, softmax, dropout as separate kernels on head-split copies) and gelu_new's Python
 * chain, at GPT-2's sizes or at GPT-3's (the same code with a 2048-token context) ---- */

typedef struct gpt2_size {
    int dim, layers, heads, ctx;
} gpt2_size;

static int gpt2(mdl_net *net, const mdl_shape *s, const char *name, gpt2_size z, bool hf_eager)
{
    char b[96];
    const int vocab = 50257, dim = z.dim, ctx = z.ctx;
    const unsigned attn = hf_eager ? MDL_F_MASK | MDL_F_DROPOUT : MDL_F_FLASH | MDL_F_CAUSAL;
    const mdl_act gelu = hf_eager ? MDL_ACT_GELU_PY : MDL_ACT_GELU;
    mdl_val ids;
    mdl_net_init(net, name, 1, s->seq, 1, MDL_DT_I64, &ids);
    mdl_val x = mdl_embed(net, "transformer.wte", ids, vocab, dim);
    int wte = net->n_layers - 1;
    mdl_val p = mdl_embed(net, "transformer.wpe", ids, ctx, dim);
    x = mdl_add(net, "transformer.add_wpe", x, p, false);
    x = mdl_dropout(net, "transformer.drop", x);
    const decoder_names names = {
        "ln_1",           "attn.c_attn", hf_eager ? "attn.eager" : "attn.sdpa",
        "attn.transpose", "attn.c_proj", "attn.resid_dropout",
        "add_1",          "ln_2",        "mlp.c_fc",
        "mlp.gelu",       "mlp.c_proj",  "mlp.dropout",
        "add_2"};
    const decoder_shape shape = {dim, z.heads, 4 * dim, false, hf_eager, attn, gelu};
    for (int i = 0; i < z.layers; i++) {
        mdl_net_begin_block(net);
        x = pre_ln_decoder_layer(net, NM(b, "transformer.h.%d", i), &names, &shape, x);
        mdl_net_end_block(net);
    }
    x = mdl_layernorm(net, "transformer.ln_f", x);
    x = mdl_linear(net, "lm_head", x, vocab, false);
    mdl_share_last(net, wte); /* weight tying: lm_head.weight is wte.weight */
    mdl_loss_ce(net, "loss", x, vocab);
    return net->error;
}

static int build_gpt2(mdl_net *net, const mdl_shape *s)
{
    return gpt2(net, s, "gpt2", (gpt2_size){768, 12, 12, 1024}, false);
}

static int build_gpt2_large(mdl_net *net, const mdl_shape *s)
{
    return gpt2(net, s, "gpt2-large", (gpt2_size){1280, 36, 20, 1024}, true);
}

/* GPT-3's 2.7B shape (Brown et al. 2020, table 2.1: 32 layers, d_model 2560, 32 heads) and its
 * XL row read as heads x head size (24 x 128 = 3072; the table's d_model column says 2048), as
 * NeuSight's gpt3_27.json and gpt3_xl.json configure GPT2LMHeadModel (sitar-lab/NeuSight,
 * scripts/asplos/data/DLmodel_configs). */
static int build_gpt3_2_7b(mdl_net *net, const mdl_shape *s)
{
    return gpt2(net, s, "gpt3-2.7b", (gpt2_size){2560, 32, 32, 2048}, true);
}

static int build_gpt3_xl_3072(mdl_net *net, const mdl_shape *s)
{
    return gpt2(net, s, "gpt3-xl-3072", (gpt2_size){3072, 24, 24, 2048}, true);
}

/* ---- OPT-1.3B (Hugging Face OPTForCausalLM, facebook/opt-1.3b, eager attention): pre-LN
 * decoder layers; q, k and v projected apart, q scaled before the product, the 4-D causal mask
 * added to the scores and clamped at finfo.min (torch.max), no attention dropout (0.0); ReLU
 * FFN of 8192; learned positions (2048 + 2); lm_head tied to the token embeddings ---- */

static int build_opt_1_3b(mdl_net *net, const mdl_shape *s)
{
    char b[96];
    const int vocab = 50272, positions = 2050, dim = 2048, layers = 24, heads = 32, ffn = 8192;
    mdl_val ids;
    mdl_net_init(net, "opt-1.3b", 1, s->seq, 1, MDL_DT_I64, &ids);
    mdl_val x = mdl_embed(net, "model.decoder.embed_tokens", ids, vocab, dim);
    int tokens = net->n_layers - 1;
    mdl_val p = mdl_embed(net, "model.decoder.embed_positions", ids, positions, dim);
    x = mdl_add(net, "model.decoder.add_positions", x, p, false);
    static const decoder_names names = {"self_attn_layer_norm",
                                        "self_attn.qkv_proj",
                                        "self_attn",
                                        "self_attn.transpose",
                                        "self_attn.out_proj",
                                        "dropout",
                                        "add_1",
                                        "final_layer_norm",
                                        "fc1",
                                        "activation_fn",
                                        "fc2",
                                        "fc2_dropout",
                                        "add_2"};
    const decoder_shape shape = {
        dim, heads, ffn, true, false, MDL_F_MASK | MDL_F_QSCALE | MDL_F_CLAMP, MDL_ACT_RELU};
    for (int i = 0; i < layers; i++) {
        mdl_net_begin_block(net);
        x = pre_ln_decoder_layer(net, NM(b, "model.decoder.layers.%d", i), &names, &shape, x);
        mdl_net_end_block(net);
    }
    x = mdl_layernorm(net, "model.decoder.final_layer_norm", x);
    x = mdl_linear(net, "lm_head", x, vocab, false);
    mdl_share_last(net, tokens); /* lm_head.weight is embed_tokens.weight */
    mdl_loss_ce(net, "loss", x, vocab);
    return net->error;
}

/* ---- Llama-style 7B decoder (HF LlamaForCausalLM, Llama-1/2 7B config, SDPA attention) ---- */

static int build_llama7b(mdl_net *net, const mdl_shape *s)
{
    char b[96];
    const int vocab = 32000, dim = 4096, layers = 32, heads = 32, inter = 11008;
    mdl_val ids;
    mdl_net_init(net, "llama-7b", 1, s->seq, 1, MDL_DT_I64, &ids);
    mdl_val x = mdl_embed(net, "model.embed_tokens", ids, vocab, dim);
    for (int i = 0; i < layers; i++) {
        mdl_net_begin_block(net);
        mdl_val y = mdl_rmsnorm(net, NM(b, "model.layers.%d.input_layernorm", i), x);
        y = mdl_linear_qkv(net, NM(b, "model.layers.%d.self_attn.qkv_proj", i), y, dim, false);
        y = mdl_rope(net, NM(b, "model.layers.%d.self_attn.rotary", i), y);
        y = mdl_attention(net, NM(b, "model.layers.%d.self_attn.sdpa", i), y, heads,
                          MDL_F_FLASH | MDL_F_CAUSAL);
        y = mdl_permute(net, NM(b, "model.layers.%d.self_attn.transpose", i), y);
        y = mdl_linear(net, NM(b, "model.layers.%d.self_attn.o_proj", i), y, dim, false);
        x = mdl_add(net, NM(b, "model.layers.%d.add_1", i), x, y, false);
        y = mdl_rmsnorm(net, NM(b, "model.layers.%d.post_attention_layernorm", i), x);
        mdl_val g = mdl_linear(net, NM(b, "model.layers.%d.mlp.gate_proj", i), y, inter, false);
        mdl_val u = mdl_linear(net, NM(b, "model.layers.%d.mlp.up_proj", i), y, inter, false);
        g = mdl_act_layer(net, NM(b, "model.layers.%d.mlp.act_fn", i), g, MDL_ACT_SILU, false);
        g = mdl_mul(net, NM(b, "model.layers.%d.mlp.mul", i), g, u);
        y = mdl_linear(net, NM(b, "model.layers.%d.mlp.down_proj", i), g, dim, false);
        x = mdl_add(net, NM(b, "model.layers.%d.add_2", i), x, y, false);
        mdl_net_end_block(net);
    }
    x = mdl_rmsnorm(net, "model.norm", x);
    x = mdl_linear(net, "lm_head", x, vocab, false);
    x = mdl_copy(net, "logits.float", x, x.c, x.h, x.w); /* logits = logits.float() */
    mdl_loss_ce(net, "loss", x, vocab);
    return net->error;
}

/* ---- A small MLP (MNIST-sized: 784 -> 512 -> 512 -> 10) ---- */

static int build_mlp(mdl_net *net, const mdl_shape *s)
{
    mdl_val x;
    mdl_net_init(net, "mlp", s->features, 1, 1, MDL_DT_ACT32, &x);
    x = mdl_linear(net, "fc1", x, 512, true);
    x = mdl_act_layer(net, "relu1", x, MDL_ACT_RELU, false);
    x = mdl_linear(net, "fc2", x, 512, true);
    x = mdl_act_layer(net, "relu2", x, MDL_ACT_RELU, false);
    x = mdl_linear(net, "fc3", x, 10, true);
    mdl_loss_ce(net, "loss", x, 10);
    return net->error;
}

/* ---- Contrastive-learning embedding net with a triplet loss (MISSION.md, seed 003) ----
 * One sample is a triplet (anchor, positive, negative) of feature vectors; the same MLP encoder
 * embeds each (three forward passes sharing weights, as a typical training loop calls
 * model(a), model(p), model(n)), and the loss launches the three kernels the seed names:
 * distance/dot, square, margin compare. */

static mdl_val encoder(mdl_net *net, const char *p, mdl_val x, const int *owners, int *ids)
{
    static const int dims[3] = {512, 256, 128};
    char b[96];
    for (int i = 0; i < 3; i++) {
        x = mdl_linear(net, NM(b, "%s.fc%d", p, i + 1), x, dims[i], true);
        if (owners)
            mdl_share_last(net, owners[i]);
        else if (ids)
            ids[i] = net->n_layers - 1;
        if (i < 2) x = mdl_act_layer(net, NM(b, "%s.relu%d", p, i + 1), x, MDL_ACT_RELU, false);
    }
    return x;
}

/* Starts a net whose sample is `views` feature vectors and embeds each with one encoder whose
 * weights the first view owns and the others share; z[i] is view i's embedding. */
static void embed_views(mdl_net *net, const char *name, const mdl_shape *s,
                        const char *const *prefix, int views, mdl_val *z)
{
    mdl_val in;
    mdl_net_init(net, name, s->features, views, 1, MDL_DT_ACT32, &in);
    mdl_val one = mdl_view(in, s->features, 1, 1);
    int own[3] = {0};
    for (int i = 0; i < views; i++)
        z[i] = encoder(net, prefix[i], one, i ? own : NULL, i ? NULL : own);
}

static int build_contrastive(mdl_net *net, const mdl_shape *s)
{
    static const char *const prefix[3] = {"anchor", "positive", "negative"};
    mdl_val z[3];
    embed_views(net, "contrastive-triplet", s, prefix, 3, z);
    mdl_loss_triplet(net, "triplet_loss", z[0], z[1], z[2]);
    return net->error;
}

/* ---- The same encoder under in-batch similarity losses (MDL_L_LOSS_INBATCH) ----
 * contrastive-batch-triplet: one labelled feature vector per sample, embedded once; the batch-
 * hard triplet loss compares every pair of the batch (seed 003 builds positive/negative masks so
 * that the loss is matrix products: distance/dot, square, margin compare over b x b).
 * contrastive-infonce: two views of each sample through the shared encoder (SimCLR, CLIP with one
 * tower), cross-entropy over the b x b similarity logits. */

static int build_batch_triplet(mdl_net *net, const mdl_shape *s)
{
    static const char *const prefix[1] = {"encoder"};
    mdl_val z;
    embed_views(net, "contrastive-batch-triplet", s, prefix, 1, &z);
    mdl_loss_inbatch(net, "batch_hard_triplet_loss", z, z, 0);
    return net->error;
}

static int build_infonce(mdl_net *net, const mdl_shape *s)
{
    static const char *const prefix[2] = {"view1", "view2"};
    mdl_val z[2];
    embed_views(net, "contrastive-infonce", s, prefix, 2, z);
    mdl_loss_inbatch(net, "infonce_loss", z[0], z[1], MDL_F_INFONCE);
    return net->error;
}

/* What the two NVIDIA BERT entries run (their source column). */
#define DLE_BERT_SOURCE                                                                            \
    "DLE modeling.py: (seq, batch, hidden) layout, torch.bmm attention on head-split views, "      \
    "BertForQuestionAnswering"

/* What the two Hugging Face pre-training entries run. */
#define HF_BERT_PRETRAINING_SOURCE                                                                 \
    "Hugging Face BertForPreTraining, eager attention: masked-LM head (dense, GELU, LayerNorm, "   \
    "decoder tied to the word embeddings) over every token; NSP head left out"

/* What the VGG and MNASNet entries run. */
#define VGG_SOURCE(fn, convs, bn)                                                                  \
    "torchvision.models." fn " (" convs " 3x3 convolutions with bias" bn                           \
    "; classifier 25088-4096-4096-1000 with dropout 0.5)"
#define MNAS_SOURCE(fn, alpha)                                                                     \
    "torchvision.models." fn                                                                       \
    " (inverted residuals with ReLU, depthwise 3x3 and 5x5, depth x" alpha ", dropout 0.2)"

#define SHUFFLE_SOURCE(fn, ch)                                                                     \
    "torchvision.models." fn " (stages [4,8,4] of " ch "; chunk, cat and channel shuffle per "     \
    "block)"
#define DENSE_SOURCE(fn, blocks)                                                                   \
    "torchvision.models." fn " (dense blocks " blocks ", bottleneck 4 x growth, transitions "      \
    "halving; a torch.cat per layer)"

static const mdl_zoo_entry zoo[] = {
    {"resnet18", "ResNet-18", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.resnet18 (BasicBlock [2,2,2,2])", build_resnet18, 0},
    {"resnet34", "ResNet-34", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.resnet34 (BasicBlock [3,4,6,3])", build_resnet34, 0},
    {"resnet50", "ResNet-50 v1.5", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.resnet50 (Bottleneck [3,4,6,3], stride in the 3x3 conv)", build_resnet50,
     0},
    {"resnet101", "ResNet-101 v1.5", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.resnet101 (Bottleneck [3,4,23,3], stride in the 3x3 conv)",
     build_resnet101, 0},
    {"resnet152", "ResNet-152 v1.5", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.resnet152 (Bottleneck [3,8,36,3], stride in the 3x3 conv)",
     build_resnet152, 0},
    {"wide_resnet50_2", "Wide ResNet-50-2", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.wide_resnet50_2 (Bottleneck [3,4,6,3], inner width x2)",
     build_wide_resnet50_2, 0},
    {"wide_resnet101_2", "Wide ResNet-101-2", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.wide_resnet101_2 (Bottleneck [3,4,23,3], inner width x2)",
     build_wide_resnet101_2, 0},
    {"resnext50_32x4d", "ResNeXt-50 32x4d", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.resnext50_32x4d (Bottleneck [3,4,6,3], 3x3 in 32 groups, inner width "
     "x2)",
     build_resnext50_32x4d, 0},
    {"resnext101_32x8d", "ResNeXt-101 32x8d", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.resnext101_32x8d (Bottleneck [3,4,23,3], 3x3 in 32 groups, inner "
     "width x4)",
     build_resnext101_32x8d, 0},
    {"vgg11", "VGG-11", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     VGG_SOURCE("vgg11", "8", ", no batch norm"), build_vgg11, 0},
    {"vgg13", "VGG-13", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     VGG_SOURCE("vgg13", "10", ", no batch norm"), build_vgg13, 0},
    {"vgg16", "VGG-16", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     VGG_SOURCE("vgg16", "13", ", no batch norm"), build_vgg16, 0},
    {"vgg19", "VGG-19", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     VGG_SOURCE("vgg19", "16", ", no batch norm"), build_vgg19, 0},
    {"vgg11_bn", "VGG-11 with batch norm", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     VGG_SOURCE("vgg11_bn", "8", ", each followed by BatchNorm2d"), build_vgg11_bn, 0},
    {"vgg13_bn", "VGG-13 with batch norm", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     VGG_SOURCE("vgg13_bn", "10", ", each followed by BatchNorm2d"), build_vgg13_bn, 0},
    {"vgg16_bn", "VGG-16 with batch norm", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     VGG_SOURCE("vgg16_bn", "13", ", each followed by BatchNorm2d"), build_vgg16_bn, 0},
    {"vgg19_bn", "VGG-19 with batch norm", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     VGG_SOURCE("vgg19_bn", "16", ", each followed by BatchNorm2d"), build_vgg19_bn, 0},
    {"efficientnet_b0", "EfficientNet-B0", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.efficientnet_b0 (MBConv + SE, stochastic depth 0.2)",
     build_efficientnet_b0, 0},
    {"efficientnet_b1", "EfficientNet-B1", MDL_IN_IMAGE, 240, 240, 0, 0, 0,
     "torchvision.models.efficientnet_b1 (B0 x1.1 deep; its weights' 240 crop)",
     build_efficientnet_b1, 0},
    {"efficientnet_b2", "EfficientNet-B2", MDL_IN_IMAGE, 288, 288, 0, 0, 0,
     "torchvision.models.efficientnet_b2 (B0 x1.1 wide, x1.2 deep; its weights' 288 crop)",
     build_efficientnet_b2, 0},
    {"efficientnet_b3", "EfficientNet-B3", MDL_IN_IMAGE, 300, 300, 0, 0, 0,
     "torchvision.models.efficientnet_b3 (B0 x1.2 wide, x1.4 deep; its weights' 300 crop)",
     build_efficientnet_b3, 0},
    {"efficientnet_b4", "EfficientNet-B4", MDL_IN_IMAGE, 380, 380, 0, 0, 0,
     "torchvision.models.efficientnet_b4 (B0 x1.4 wide, x1.8 deep; its weights' 380 crop)",
     build_efficientnet_b4, 0},
    {"resnext101_32x4d", "ResNeXt-101 32x4d", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "ResNeXt-101 32x4d as timm and NVIDIA DeepLearningExamples build it (torchvision's "
     "Bottleneck [3,4,23,3], 3x3 in 32 groups, inner width x2)",
     build_resnext101_32x4d, 0},
    {"se_resnext101_32x4d", "SE-ResNeXt-101 32x4d", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "NVIDIA DeepLearningExamples' se-resnext101-32x4d (ResNeXt-101 32x4d's blocks, each with a "
     "16-channel squeeze-and-excitation applied by torch.addcmul with the residual)",
     build_se_resnext101_32x4d, 0},
    {"resnext101_64x4d", "ResNeXt-101 64x4d", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.resnext101_64x4d (Bottleneck [3,4,23,3], 3x3 in 64 groups, inner "
     "width x4)",
     build_resnext101_64x4d, 0},
    {"mobilenet_v2", "MobileNetV2", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.mobilenet_v2 (inverted residuals with ReLU6, depthwise 3x3, dropout "
     "0.2)",
     build_mobilenet_v2, 0},
    {"squeezenet1_0", "SqueezeNet 1.0", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.squeezenet1_0 (Fire modules, 7x7 stem of 96, ceil-mode pools, 1x1 conv "
     "classifier with dropout 0.5)",
     build_squeezenet1_0, 0},
    {"squeezenet1_1", "SqueezeNet 1.1", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.squeezenet1_1 (Fire modules, 3x3 stem of 64, earlier pools, 1x1 conv "
     "classifier with dropout 0.5)",
     build_squeezenet1_1, 0},
    {"shufflenet_v2_x0_5", "ShuffleNet V2 x0.5", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     SHUFFLE_SOURCE("shufflenet_v2_x0_5", "48-96-192, conv5 1024"), build_shufflenet_v2_x0_5, 0},
    {"shufflenet_v2_x1_0", "ShuffleNet V2 x1.0", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     SHUFFLE_SOURCE("shufflenet_v2_x1_0", "116-232-464, conv5 1024"), build_shufflenet_v2_x1_0, 0},
    {"shufflenet_v2_x1_5", "ShuffleNet V2 x1.5", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     SHUFFLE_SOURCE("shufflenet_v2_x1_5", "176-352-704, conv5 1024"), build_shufflenet_v2_x1_5, 0},
    {"shufflenet_v2_x2_0", "ShuffleNet V2 x2.0", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     SHUFFLE_SOURCE("shufflenet_v2_x2_0", "244-488-976, conv5 2048"), build_shufflenet_v2_x2_0, 0},
    {"densenet121", "DenseNet-121", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     DENSE_SOURCE("densenet121", "[6,12,24,16], growth 32"), build_densenet121, 0},
    {"densenet161", "DenseNet-161", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     DENSE_SOURCE("densenet161", "[6,12,36,24], growth 48"), build_densenet161, 0},
    {"densenet169", "DenseNet-169", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     DENSE_SOURCE("densenet169", "[6,12,32,32], growth 32"), build_densenet169, 0},
    {"densenet201", "DenseNet-201", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     DENSE_SOURCE("densenet201", "[6,12,48,32], growth 32"), build_densenet201, 0},
    {"mnasnet0_5", "MNASNet 0.5", MDL_IN_IMAGE, 224, 224, 0, 0, 0, MNAS_SOURCE("mnasnet0_5", "0.5"),
     build_mnasnet0_5, 0},
    {"mnasnet0_75", "MNASNet 0.75", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     MNAS_SOURCE("mnasnet0_75", "0.75"), build_mnasnet0_75, 0},
    {"mnasnet1_0", "MNASNet 1.0", MDL_IN_IMAGE, 224, 224, 0, 0, 0, MNAS_SOURCE("mnasnet1_0", "1.0"),
     build_mnasnet1_0, 0},
    {"mnasnet1_3", "MNASNet 1.3", MDL_IN_IMAGE, 224, 224, 0, 0, 0, MNAS_SOURCE("mnasnet1_3", "1.3"),
     build_mnasnet1_3, 0},
    {"vit_b_16", "ViT-B/16", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.vit_b_16 (nn.MultiheadAttention -> SDPA flash, dropout 0)", build_vit_b16,
     0},
    {"vit_b_32", "ViT-B/32", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.vit_b_32 (12 layers of 768, 32x32 patches; SDPA, dropout 0)",
     build_vit_b32, 0},
    {"vit_l_16", "ViT-L/16", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.vit_l_16 (24 layers of 1024, 16 heads; SDPA, dropout 0)", build_vit_l16,
     0},
    {"vit_l_32", "ViT-L/32", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.vit_l_32 (24 layers of 1024, 32x32 patches; SDPA, dropout 0)",
     build_vit_l32, 0},
    {"vit_h_14", "ViT-H/14", MDL_IN_IMAGE, 224, 224, 0, 0, 0,
     "torchvision.models.vit_h_14 (32 layers of 1280, 14x14 patches; SDPA, dropout 0)",
     build_vit_h14, 0},
    {"bert-base", "BERT-base (uncased) + classifier", MDL_IN_TOKENS, 0, 0, 128, 0, 512,
     "Hugging Face BertModel with pooler, eager attention, + Linear(768, 2)", build_bert_base, 0},
    {"bert-large", "BERT-large (uncased) + classifier", MDL_IN_TOKENS, 0, 0, 128, 0, 512,
     "Hugging Face BertModel with pooler, eager attention, + Linear(1024, 2)", build_bert_large, 0},
    {"bert-base-pretraining", "BERT-base (uncased) + masked-LM head", MDL_IN_TOKENS, 0, 0, 128, 0,
     512, HF_BERT_PRETRAINING_SOURCE, build_bert_base_pretraining, 0},
    {"bert-large-pretraining", "BERT-large (uncased) + masked-LM head", MDL_IN_TOKENS, 0, 0, 128, 0,
     512, HF_BERT_PRETRAINING_SOURCE, build_bert_large_pretraining, 0},
    {"bert-base-nvidia", "BERT-base, NVIDIA DeepLearningExamples + SQuAD head", MDL_IN_TOKENS, 0, 0,
     384, 0, 512, DLE_BERT_SOURCE, build_bert_base_nvidia, 0},
    {"bert-large-nvidia", "BERT-large, NVIDIA DeepLearningExamples + SQuAD head", MDL_IN_TOKENS, 0,
     0, 384, 0, 512, DLE_BERT_SOURCE, build_bert_large_nvidia, 0},
    {"gpt2", "GPT-2 124M", MDL_IN_TOKENS, 0, 0, 1024, 0, 1024,
     "nanoGPT model.py (SDPA flash, tied lm_head) with HF vocab 50257 and dropout 0.1", build_gpt2,
     0},
    {"gpt2-large", "GPT-2 large 774M", MDL_IN_TOKENS, 0, 0, 1024, 0, 1024,
     "Hugging Face GPT2LMHeadModel (eager attention, gelu_new as its Python chain, tied lm_head)",
     build_gpt2_large, 0},
    {"gpt3-2.7b", "GPT-3 2.7B shape", MDL_IN_TOKENS, 0, 0, 2048, 0, 2048,
     "Hugging Face GPT2LMHeadModel at GPT-3 2.7B's shape (2560 wide, 32 layers, 32 heads, "
     "context 2048; eager attention, gelu_new)",
     build_gpt3_2_7b, 0},
    {"gpt3-xl-3072", "GPT-3 XL as 24 heads x 128", MDL_IN_TOKENS, 0, 0, 2048, 0, 2048,
     "Hugging Face GPT2LMHeadModel 3072 wide (GPT-3 XL's 24 heads x 128), 24 layers, context "
     "2048; eager attention, gelu_new (NeuSight's gpt3_xl)",
     build_gpt3_xl_3072, 0},
    {"opt-1.3b", "OPT-1.3B", MDL_IN_TOKENS, 0, 0, 2048, 0, 2048,
     "Hugging Face OPTForCausalLM (facebook/opt-1.3b; eager attention: q scaled, causal mask added "
     "and clamped; ReLU FFN; tied lm_head)",
     build_opt_1_3b, 0},
    {"llama-7b", "Llama-style 7B decoder", MDL_IN_TOKENS, 0, 0, 2048, 0, 0,
     "Hugging Face LlamaForCausalLM, Llama-2-7B config (32 x 4096, SwiGLU 11008, RMSNorm, "
     "RoPE), SDPA attention",
     build_llama7b, 0},
    {"mlp", "MLP 784-512-512-10", MDL_IN_VECTOR, 0, 0, 0, 784, 0,
     "three nn.Linear with ReLU, cross-entropy (MNIST-sized)", build_mlp, 0},
    {"contrastive-triplet", "Contrastive embedding MLP + triplet loss", MDL_IN_VECTOR, 0, 0, 0,
     1024, 0,
     "MISSION.md seed 003: MLP encoder F-512-256-128 applied to anchor/positive/negative, "
     "triplet loss of 3 kernels",
     build_contrastive, 3},
    {"contrastive-batch-triplet", "Contrastive embedding MLP + in-batch batch-hard triplet loss",
     MDL_IN_VECTOR, 0, 0, 0, 1024, 0,
     "MISSION.md seed 003: MLP encoder F-512-256-128 on one labelled vector per sample; "
     "batch-hard triplet loss over the b x b distance matrix (z @ z.T, square, margin compare)",
     build_batch_triplet, 0},
    {"contrastive-infonce", "Contrastive embedding MLP + InfoNCE over two views", MDL_IN_VECTOR, 0,
     0, 0, 1024, 0,
     "MLP encoder F-512-256-128 shared by two views; F.cross_entropy(z1 @ z2.T / t, arange(b)) "
     "(SimCLR / one direction of CLIP)",
     build_infonce, 2},
};

size_t mdl_zoo_count(void)
{
    return sizeof zoo / sizeof zoo[0];
}

const mdl_zoo_entry *mdl_zoo_at(size_t i)
{
    return i < mdl_zoo_count() ? &zoo[i] : NULL;
}

const mdl_zoo_entry *mdl_zoo_find(const char *name)
{
    for (size_t i = 0; i < mdl_zoo_count(); i++)
        if (!strcmp(zoo[i].name, name)) return &zoo[i];
    return NULL;
}

void mdl_zoo_resolve_shape(const mdl_zoo_entry *e, mdl_shape *s)
{
    if (!s->h) s->h = e->def_h;
    if (!s->w) s->w = s->h && e->def_w == e->def_h ? s->h : e->def_w;
    if (!s->seq) s->seq = e->def_seq;
    if (!s->features) s->features = e->def_features;
}

int mdl_zoo_build(const char *name, const mdl_shape *shape, mdl_net *net, sim_err *err)
{
    memset(net, 0, sizeof *net);
    const mdl_zoo_entry *e = mdl_zoo_find(name);
    if (!e) {
        char known[1024] = "";
        const char *names[64];
        size_t n = 0;
        for (size_t i = 0; i < mdl_zoo_count() && n < 64; i++) {
            strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, zoo[i].name, sizeof known - strlen(known) - 1);
            names[n++] = zoo[i].name;
        }
        const char *near = sim_nearest_name(name, names, n);
        return sim_err_set(err, SIM_ENOENT, NULL, 0, 0, "unknown model '%s' (%s%s%sknown: %s)",
                           name, near ? "did you mean '" : "", near ? near : "", near ? "'?; " : "",
                           known);
    }
    mdl_shape s = shape ? *shape : (mdl_shape){0};
    mdl_zoo_resolve_shape(e, &s);
    switch (e->input) {
    case MDL_IN_IMAGE:
        if (s.h < 1 || s.w < 1 || s.h > 8192 || s.w > 8192)
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                               "%s: image size %dx%d is out of range (1..8192)", name, s.h, s.w);
        break;
    case MDL_IN_TOKENS:
        if (s.seq < 1 || (e->max_seq && s.seq > e->max_seq) || s.seq > 1 << 20)
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                               "%s: sequence length %d is out of range (1..%d)", name, s.seq,
                               e->max_seq ? e->max_seq : 1 << 20);
        break;
    case MDL_IN_VECTOR:
        if (s.features < 1 || s.features > 1 << 24)
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                               "%s: %d input features is out of range (1..%d)", name, s.features,
                               1 << 24);
        break;
    }
    int rc = e->build(net, &s);
    if (rc)
        return sim_err_set(err, rc, NULL, 0, 0, "%s", net->error_msg[0] ? net->error_msg : name);
    return SIM_OK;
}
