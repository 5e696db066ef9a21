/* zoo.h — the model zoo: named networks built layer by layer for a given input shape.
 * Each entry follows one public implementation (torchvision, Hugging Face, nanoGPT) closely
 * enough that parameter counts match it exactly and its kernels are the ones PyTorch eager
 * launches; `source` says which. Add a model = one build function + one row in zoo.c. */
#ifndef MDL_ZOO_H
#define MDL_ZOO_H

#include "models/net.h"
#include "sim/base/err.h"

#include <stddef.h>

typedef enum mdl_input_kind {
    MDL_IN_IMAGE,  /* 3 x H x W images */
    MDL_IN_TOKENS, /* a sequence of token ids */
    MDL_IN_VECTOR, /* a feature vector */
} mdl_input_kind;

/* Input shape of one sample; 0 = the model's default. */
typedef struct mdl_shape {
    int h, w;     /* images */
    int seq;      /* tokens */
    int features; /* vectors */
} mdl_shape;

typedef struct mdl_zoo_entry {
    const char *name;  /* key: "resnet50" */
    const char *label; /* "ResNet-50 (torchvision v1.5)" */
    mdl_input_kind input;
    int def_h, def_w, def_seq, def_features;
    int max_seq;        /* longest sequence the position table allows; 0 = no limit */
    const char *source; /* the implementation the layer list follows */
    /* Builds the net for a resolved shape; returns 0 or a SIM_E* code (net->error_msg says why). */
    int (*build)(mdl_net *net, const mdl_shape *shape);
    int vectors; /* MDL_IN_VECTOR: feature vectors per sample (a triplet 3, two views 2); 0 = 1 */
} mdl_zoo_entry;

/* Number of models, and the i-th (in listing order). */
size_t mdl_zoo_count(void);
const mdl_zoo_entry *mdl_zoo_at(size_t i);
/* The model called NAME, or NULL. */
const mdl_zoo_entry *mdl_zoo_find(const char *name);
/* Fills the zeros of *shape with the entry's defaults. */
void mdl_zoo_resolve_shape(const mdl_zoo_entry *e, mdl_shape *shape);

/* Builds model NAME for input shape *shape (zeros = defaults) into *net (initialised here; free
 * with mdl_net_free, also after a failure). Unknown names give SIM_ENOENT listing the known ones;
 * impossible shapes give SIM_EINVAL. */
int mdl_zoo_build(const char *name, const mdl_shape *shape, mdl_net *net, sim_err *err);

#endif
