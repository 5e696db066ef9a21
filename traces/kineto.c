/* kineto.c — PyTorch profiler (Kineto) JSON to native trace (see kineto.h, FORMAT.md).
 * Pass 1 streams the JSON through yajl callbacks into compact per-event structs (CPU ops and
 * annotations, CUDA runtime calls, GPU activities); nothing else of the document is kept.
 * Pass 2 links runtime calls to GPU activities by correlation id, nests CPU events per thread,
 * cuts ProfilerStep#N windows (or makes steps from the kernel sequence when there are none),
 * applies the warm-up rules and writes one native step at a time. Kineto writes events in no
 * global time order (the old schema lists every CPU op before the first runtime call), so the
 * tables are whole-trace; past 1 MiB they live in temporary files (traces/spill.h) and the
 * resident set stays flat, every loop over them counting its steps with trc_spill_tick. */
#include "traces/kineto.h"

#include "sim/core/workload.h"
#include "sim/base/outfile.h"
#include "traces/kclass.h"
#include "traces/spill.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define MAX_IN 16    /* op inputs kept per event */
#define MAX_DEPTH 64 /* JSON nesting tracked; deeper containers are skipped */
#define READ_BYTES (256 * 1024)
#define KEY_SLOTS 256 /* the object keys' hash table (cb_map_key): 8 slots per key */
/* The event tables move into temporary files from 1 MiB on (traces/spill.h); above a 22 MiB
 * resident set their mapped pages are dropped. Small imports (tests, fuzzing) stay in malloc'd
 * memory; a large one keeps its resident set near 22 MiB whatever the trace size (a 16 MiB
 * budget cost 0.5 s more CPU on a 258 MB trace, most of it refetching dropped pages). */
#define SPILL_FILE_FROM (1u << 20)
#define SPILL_BUDGET (22u << 20)
/* The message of an allocation that failed: memory, or a temporary file's room on disk. */
#define NO_ROOM "out of memory (or of room for temporary files in $TMPDIR)"
/* Rule W1 (FORMAT.md): a GPU activity that starts this long after its launch while no recorded
 * GPU work runs was held up by work the profiler did not record. The largest such delay in the
 * steady steps of the five validation traces is 1.3 ms (trace 2, step 9, a pageable copy); the
 * profiler warm-up step of trace 2 shows 36 ms. */
#define HELD_NS 5000000LL
/* How far ahead (events on the thread) a forward conv looks for the op consuming its output. */
#define CONV_LOOKAHEAD 200
/* Timestamps are taken within +-TIME_LIMIT_NS (146 years of ns: an epoch timestamp fits, and the
 * difference of two of them cannot overflow); durations within [0, TRC_INT_MAX]. */
#define TIME_LIMIT_NS (INT64_MAX / 2)
/* A tensor of more elements than this is not believed (a petabyte in fp32, far beyond one GPU):
 * its sizes are treated as unknown, which also keeps their product from overflowing. */
#define NUMEL_LIMIT (INT64_C(1) << 48)
/* FLOPs or bytes of one op beyond this are not believed (11 days of an exaflop machine); the
 * sum over a step's ops then stays within the trace's TRC_NUM_MAX. */
#define COST_LIMIT 1e24

enum cat {
    CAT_NONE,
    CAT_CPU_OP,
    CAT_ANNOT,
    CAT_RUNTIME,
    CAT_KERNEL,
    CAT_MEMCPY,
    CAT_MEMSET,
    CAT_TRACE
};
enum rtk { RT_OTHER, RT_LAUNCH, RT_MEMCPY, RT_MEMSET, RT_SYNC };
enum gk { G_KERNEL, G_MEMCPY, G_MEMSET };
enum dt { DT_OTHER, DT_FLOAT, DT_HALF, DT_BF16 };

typedef struct ev_cpu {
    int64_t ts, dur, pid, tid; /* ns */
    int32_t name;
    int32_t parent;  /* innermost enclosing CPU event on the same thread; -1 none */
    int32_t step;    /* index into the steps; -1 outside */
    int32_t seq;     /* order in the file, for stable sorting */
    uint8_t annot;   /* a user annotation / record_function scope, not an op */
    uint8_t dtype0;  /* enum dt of the first tensor input */
    int8_t in0_ndim; /* dims of the first input, -1 none */
    uint8_t has_dims;
    int32_t group_size; /* record_param_comms "Group size" */
    double coll_bytes;  /* record_param_comms: message bytes */
    double in0_bytes;   /* bytes of the first tensor input */
    int64_t in0[4];
    trc_cost cost;
} ev_cpu;

typedef struct ev_rt {
    int64_t ts, dur, pid, tid, corr;
    int32_t name;
    uint8_t kind;             /* enum rtk */
    uint8_t sync;             /* trc_sync_kind */
    int32_t first_gpu, n_gpu; /* range in imp.gpu_by_rt */
    int32_t step;
    int32_t cpu; /* innermost enclosing CPU event; -1 none */
} ev_rt;

typedef struct ev_gpu {
    int64_t ts, dur, corr, bytes, blocks;
    int32_t name, stream, device;
    int32_t rt;   /* linked runtime call; -1 none */
    uint8_t kind; /* enum gk */
    uint8_t dir;  /* trc_memcpy_dir */
    int8_t pinned;
} ev_gpu;

typedef struct ev_step {
    int64_t ts, dur, pid, tid, index;
    int flag; /* -1 kept, else trc_drop_reason */
} ev_step;

/* An event dropped for its times. */
typedef struct ev_bad {
    int64_t ts;    /* its start, when usable; else INT64_MIN */
    int64_t index; /* its position in traceEvents */
    int reason;    /* trc_bad_time */
    int gpu;       /* a GPU activity */
} ev_bad;

typedef struct thread_range {
    int64_t pid, tid;
    size_t begin, end; /* range in imp.cpu */
    int ordinal;       /* record thread number; -1 = not included */
} thread_range;

typedef struct devprop {
    int64_t id, sms, cc_major, cc_minor, mem;
    char name[TRC_STR_MAX];
} devprop;

/* Growable arrays of the event structs, in tables of the import's spill set. VEC_PUSH appends
 * through trc_spill_push: what it pushed to a table in a file is read only after trc_spill_flush
 * (at the end of the parse, and of make_steps, the only pushes after it). */
#define VEC(T)                                                                                     \
    struct {                                                                                       \
        T *v;                                                                                      \
        size_t n, cap;                                                                             \
        trc_spill_buf sb;                                                                          \
    }

typedef enum ctx {
    C_ROOT,
    C_EVENTS,
    C_EVENT,
    C_ARGS,
    C_DIMS,
    C_DIM_ITEM,
    C_DIM_NESTED,
    C_TYPES,
    C_GRID,
    C_DEVS,
    C_DEV,
    C_DIST,
    C_SKIP
} pctx;

typedef enum key {
    K_NONE,
    K_TRACE_EVENTS,
    K_DEVPROPS,
    K_DISTINFO,
    K_PH,
    K_CAT,
    K_NAME,
    K_PID,
    K_TID,
    K_TS,
    K_DUR,
    K_ARGS,
    K_CORR,
    K_STREAM,
    K_DEVICE,
    K_BYTES,
    K_GRID,
    K_DIMS,
    K_TYPES,
    K_COLL_NAME,
    K_DTYPE,
    K_IN_NELEMS,
    K_GROUP_SIZE,
    K_ID,
    K_NUMSMS,
    K_CCMAJ,
    K_CCMIN,
    K_MEM,
    K_RANK,
    K_WORLD
} pkey;

typedef struct frame {
    uint8_t ctx;
    uint8_t key; /* maps: the key whose value comes next */
} frame;

/* The event being parsed. */
typedef struct scratch {
    char ph[4];
    int cat;
    char *name;
    size_t name_len, name_cap;
    int64_t pid, tid;
    int pid_is_str;
    int64_t ts, dur;
    int has_ts, has_dur;
    int dur_not_number; /* 'dur' was a string, null, true or false */
    int time_range;     /* 'ts' or 'dur' beyond the limits above */
    int64_t corr, stream, device, bytes;
    int has_corr, has_stream, has_device;
    int64_t grid[3];
    int n_grid;
    trc_tensor in[MAX_IN];
    int n_in;
    int dims_seen;
    uint8_t dtype[MAX_IN];
    int elem[MAX_IN];
    int n_types;
    char coll_name[48];
    char coll_dtype[32];
    int64_t in_nelems, group_size;
    int64_t tid_stream; /* "stream 7" */
} scratch;

typedef struct imp {
    /* parse state */
    frame st[MAX_DEPTH];
    int depth;                   /* number of open containers */
    uint8_t key_slot[KEY_SLOTS]; /* 1 + index into keys[] by key_hash; 0 empty */
    scratch ev;
    devprop dev;
    int schema_old, schema_new;
    int64_t events;
    int64_t trace_ts, trace_dur;
    int has_trace_span;
    int64_t min_ts;
    int saw_trace_events;
    int saw_dims, saw_grid;
    int saw_hip;     /* HIP runtime calls: a ROCm trace */
    int step_source; /* trc_step_source */
    int period;      /* TRC_STEPS_PERIOD: kernels per step */
    int world_size, rank;
    int fatal;       /* a callback failed: out of memory */
    trc_spill spill; /* where the event tables live */
    trc_spill *sp;   /* &spill: read-only passes count their loop steps through it */
    /* interned names */
    char **names;
    size_t n_names, cap_names;
    int32_t *hash; /* open addressing over names, -1 empty */
    size_t hash_cap;
    /* events */
    VEC(ev_cpu) cpu;
    VEC(ev_rt) rt;
    VEC(ev_gpu) gpu;
    VEC(ev_step) steps;
    VEC(devprop) devs;
    VEC(ev_bad) bad;
    /* pass 2 */
    int32_t *gpu_by_rt; /* GPU indices ordered by linked runtime */
    trc_spill_buf gpu_by_rt_sb;
    thread_range *thr;
    size_t n_thr, cap_thr;
    int64_t main_pid, main_tid;
    uint8_t *cpu_flags;
    trc_spill_buf cpu_flags_sb;
    int8_t *unit_of_name; /* -1 = not classified yet */
    int8_t *prec_of_name; /* PREC_ of a kernel name; -1 = not looked up yet */
    int32_t *local_name;  /* global name id -> index in the step being built */
} imp;

enum {
    F_WAIT = 1,
    F_IN_WAIT = 2,
    F_LOADER = 4,
    F_IN_LOADER = 8,
    F_NCCL = 16,
    F_IN_NCCL = 32,
    F_OP_ANCESTOR = 64
};

#define VEC_PUSH(m, vec, val, okvar)                                                               \
    do {                                                                                           \
        trc_spill_tick((m)->sp);                                                                   \
        if ((vec).n == (vec).cap) {                                                                \
            size_t c_ = (vec).cap ? 2 * (vec).cap : 1024;                                          \
            okvar = trc_spill_resize((m)->sp, &(vec).sb, c_ * sizeof *(vec).v) == SIM_OK;          \
            if (!okvar) break;                                                                     \
            (vec).v = (vec).sb.base;                                                               \
            (vec).cap = c_;                                                                        \
        }                                                                                          \
        okvar = trc_spill_push(&(vec).sb, (vec).n * sizeof *(vec).v, &(val), sizeof *(vec).v) ==   \
                SIM_OK;                                                                            \
        (vec).n += okvar;                                                                          \
    } while (0)

/* A temporary table of n elements (at least one) of `size` bytes in buf, zero-filled; NULL when
 * there is no memory or temporary file for it. Released with trc_spill_release. */
static void *table(const imp *m, trc_spill_buf *buf, size_t n, size_t size)
{
    return trc_spill_resize(m->sp, buf, (n ? n : 1) * size) == SIM_OK ? buf->base : NULL;
}

void trc_kineto_options_init(trc_kineto_options *o)
{
    memset(o, 0, sizeof *o);
}

const char *trc_kineto_bad_time_name(int reason)
{
    static const char *const names[TRC_BAD_TIME_COUNT] = {
        [TRC_BAD_DUR_MISSING] = "no dur",
        [TRC_BAD_DUR_NOT_NUMBER] = "dur not a number",
        [TRC_BAD_DUR_NEGATIVE] = "negative dur",
        [TRC_BAD_TIME_RANGE] = "ts or dur out of range",
    };
    return reason >= 0 && reason < TRC_BAD_TIME_COUNT ? names[reason] : "?";
}

const char *trc_kineto_step_source_name(int source)
{
    switch (source) {
    case TRC_STEPS_PROFILER:
        return "ProfilerStep#N annotations";
    case TRC_STEPS_PERIOD:
        return "repeating GPU kernel sequence (no ProfilerStep#N)";
    case TRC_STEPS_WHOLE:
        return "whole trace as one step (no ProfilerStep#N, no repetition)";
    default:
        return "?";
    }
}

void trc_kineto_summary_free(trc_kineto_summary *s)
{
    if (!s) return;
    free(s->steps);
    s->steps = NULL;
    s->n_steps = 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- names --------------------------------------------------------------------------------- */

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

/* The hash of a name for the interning table: FNV-1a over 8-byte words (the tail by bytes),
 * folded so that every byte reaches the low bits the table uses. Kernel names run to hundreds of
 * bytes, and a multiply per byte made interning cost more than the rest of an event's fields. */
static uint64_t name_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 1099511628211ULL;
    }
    for (; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h ^ (h >> 32);
}

/* Id of name s[0..n), adding it if new; -1 when out of memory. */
static int32_t intern(imp *m, const char *s, size_t n)
{
    if (m->n_names * 2 >= m->hash_cap) {
        size_t cap = m->hash_cap ? 2 * m->hash_cap : 4096;
        int32_t *h = malloc(cap * sizeof *h);
        if (!h) return -1;
        for (size_t i = 0; i < cap; i++)
            h[i] = -1;
        for (size_t i = 0; i < m->n_names; i++) {
            size_t j = name_hash(m->names[i], strlen(m->names[i])) & (cap - 1);
            while (h[j] >= 0)
                j = (j + 1) & (cap - 1);
            h[j] = (int32_t)i;
        }
        free(m->hash);
        m->hash = h;
        m->hash_cap = cap;
    }
    size_t j = name_hash(s, n) & (m->hash_cap - 1);
    while (m->hash[j] >= 0) {
        const char *t = m->names[m->hash[j]];
        if (!strncmp(t, s, n) && t[n] == 0) return m->hash[j];
        j = (j + 1) & (m->hash_cap - 1);
    }
    if (m->n_names == m->cap_names) {
        size_t cap = m->cap_names ? 2 * m->cap_names : 1024;
        char **p = realloc(m->names, cap * sizeof *p);
        if (!p) return -1;
        m->names = p;
        m->cap_names = cap;
    }
    char *copy = malloc(n + 1);
    if (!copy) return -1;
    memcpy(copy, s, n);
    copy[n] = 0;
    m->names[m->n_names] = copy;
    m->hash[j] = (int32_t)m->n_names;
    return (int32_t)m->n_names++;
}

/* ---- numbers ------------------------------------------------------------------------------- */

/* A JSON integer of up to 18 digits (which cannot overflow) into *v: 1, or 0 for other text. */
static int small_int(const char *s, size_t n, int64_t *v)
{
    size_t i = n > 0 && s[0] == '-';
    if (n - i < 1 || n - i > 18) return 0;
    int64_t x = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        x = x * 10 + (s[i] - '0');
    *v = s[0] == '-' ? -x : x;
    return i == n;
}

/* An integer from JSON number text (a fraction or exponent is rounded). The common case is
 * summed by small_int: strtoll through a copied buffer cost more than the pids, tids,
 * correlation ids and shapes of a large trace are worth. */
static int64_t num_int(const char *s, size_t n)
{
    int64_t v;
    if (small_int(s, n, &v)) return v;
    char buf[64];
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    int plain = 1;
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '.' || buf[i] == 'e' || buf[i] == 'E') plain = 0;
    if (plain) return strtoll(buf, NULL, 10);
    double d = strtod(buf, NULL);
    if (!(d > -9.2e18 && d < 9.2e18)) return 0;
    return (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
}

/* Microseconds as JSON number text to integer nanoseconds in *out, exactly for plain decimals: a
 * double cannot hold an epoch timestamp in microseconds to the nanosecond (1.7e15 us has 0.25 us
 * ulp). Returns 0 for a value beyond +-TIME_LIMIT_NS. */
static int num_us_to_ns(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    int64_t whole = 0;
    size_t digits = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
        if (whole > TIME_LIMIT_NS / 1000) return 0;
        whole = whole * 10 + (s[i] - '0');
    }
    int64_t frac = 0;
    if (i < n && s[i] == '.') {
        i++;
        int k = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, k++) {
            if (k < 3)
                frac = frac * 10 + (s[i] - '0');
            else if (k == 3 && s[i] >= '5')
                frac++;
        }
        for (; k < 3; k++)
            frac *= 10;
    }
    if (i < n) { /* exponent: take the slow path */
        char buf[64];
        size_t m = n < sizeof buf - 1 ? n : sizeof buf - 1;
        memcpy(buf, s, m);
        buf[m] = 0;
        double d = strtod(buf, NULL) * 1000.0;
        if (!(d >= -(double)TIME_LIMIT_NS && d <= (double)TIME_LIMIT_NS)) return 0;
        *out = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
        return 1;
    }
    if (whole > TIME_LIMIT_NS / 1000 || whole * 1000 + frac > TIME_LIMIT_NS) return 0;
    int64_t v = whole * 1000 + frac;
    *out = neg ? -v : v;
    return 1;
}

static int dtype_code(const char *t)
{
    if (!strcmp(t, "float")) return DT_FLOAT;
    if (!strcmp(t, "c10::Half") || !strcmp(t, "Half")) return DT_HALF;
    if (!strcmp(t, "c10::BFloat16") || !strcmp(t, "BFloat16")) return DT_BF16;
    return DT_OTHER;
}

/* Bytes of the scalar type names record_param_comms uses ("Float", "Half", "Long", ...). */
static int comm_dtype_bytes(const char *t)
{
    static const struct {
        const char *n;
        int b;
    } tab[] = {{"Float", 4}, {"Half", 2},  {"BFloat16", 2}, {"Double", 8}, {"Long", 8},
               {"Int", 4},   {"Short", 2}, {"Char", 1},     {"Byte", 1},   {"Bool", 1}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (!strcmp(t, tab[i].n)) return tab[i].b;
    int b = trc_dtype_bytes(t);
    return b ? b : 4;
}

/* ---- parse callbacks ----------------------------------------------------------------------- */

static frame *top(imp *m)
{
    return m->depth > 0 && m->depth <= MAX_DEPTH ? &m->st[m->depth - 1] : NULL;
}

static int cur_ctx(imp *m)
{
    frame *f = top(m);
    return f ? f->ctx : (m->depth > MAX_DEPTH ? C_SKIP : C_ROOT);
}

static int cur_key(imp *m)
{
    frame *f = top(m);
    return f ? f->key : K_NONE;
}

/* Context of a container opening in the current position. */
static int child_ctx(imp *m, int is_map)
{
    if (m->depth == 0) return is_map ? C_ROOT : C_SKIP;
    int c = cur_ctx(m), k = cur_key(m);
    switch (c) {
    case C_ROOT:
        if (!is_map && k == K_TRACE_EVENTS) return C_EVENTS;
        if (!is_map && k == K_DEVPROPS) return C_DEVS;
        if (is_map && k == K_DISTINFO) return C_DIST;
        return C_SKIP;
    case C_EVENTS:
        return is_map ? C_EVENT : C_SKIP;
    case C_EVENT:
        return is_map && k == K_ARGS ? C_ARGS : C_SKIP;
    case C_ARGS:
        if (!is_map && k == K_DIMS) return C_DIMS;
        if (!is_map && k == K_TYPES) return C_TYPES;
        if (!is_map && k == K_GRID) return C_GRID;
        return C_SKIP;
    case C_DIMS:
        return is_map ? C_SKIP : C_DIM_ITEM;
    case C_DIM_ITEM:
    case C_DIM_NESTED:
        return is_map ? C_SKIP : C_DIM_NESTED;
    case C_DEVS:
        return is_map ? C_DEV : C_SKIP;
    default:
        return C_SKIP;
    }
}

static void scratch_reset(scratch *e)
{
    char *name = e->name;
    size_t cap = e->name_cap;
    memset(e, 0, sizeof *e);
    e->name = name;
    e->name_cap = cap;
    e->name_len = 0;
    e->cat = CAT_NONE;
}

static int finish_event(imp *m);

static int push(imp *m, int is_map)
{
    int c = child_ctx(m, is_map);
    if (c == C_EVENT) scratch_reset(&m->ev);
    if (c == C_DEV) memset(&m->dev, 0, sizeof m->dev);
    if (c == C_DIM_ITEM && m->ev.n_in < MAX_IN) {
        trc_tensor *t = &m->ev.in[m->ev.n_in];
        memset(t, 0, sizeof *t);
        t->numel = 1;
    }
    if (c == C_DIM_NESTED && cur_ctx(m) == C_DIM_ITEM && m->ev.n_in < MAX_IN)
        m->ev.in[m->ev.n_in].ndim = -1; /* a list of tensors: not one tensor */
    if (c == C_DIMS) m->ev.dims_seen = 1;
    if (m->depth < MAX_DEPTH) {
        m->st[m->depth].ctx = (uint8_t)c;
        m->st[m->depth].key = K_NONE;
    }
    m->depth++;
    return 1;
}

static int pop(imp *m)
{
    int c = cur_ctx(m);
    m->depth--;
    if (c == C_DIM_ITEM && m->ev.n_in < MAX_IN)
        m->ev.n_in++;
    else if (c == C_DIM_ITEM)
        m->ev.n_in = MAX_IN;
    if (c == C_EVENT) return finish_event(m);
    if (c == C_DEV) {
        int ok;
        VEC_PUSH(m, m->devs, m->dev, ok);
        if (!ok) m->fatal = SIM_ENOMEM;
        return ok;
    }
    return 1;
}

static int cb_start_map(void *ctx)
{
    return push(ctx, 1);
}
static int cb_end_map(void *ctx)
{
    return pop(ctx);
}
static int cb_start_array(void *ctx)
{
    return push(ctx, 0);
}
static int cb_end_array(void *ctx)
{
    return pop(ctx);
}

/* The object keys the parser acts on, by the container they appear in; others are skipped. */
#define KEY(ctx, key, name)                                                                        \
    {                                                                                              \
        ctx, key, sizeof name - 1, name                                                            \
    }
static const struct {
    uint8_t ctx, key, len;
    const char *name;
} keys[] = {
    KEY(C_ROOT, K_TRACE_EVENTS, "traceEvents"),
    KEY(C_ROOT, K_DEVPROPS, "deviceProperties"),
    KEY(C_ROOT, K_DISTINFO, "distributedInfo"),
    KEY(C_EVENT, K_PH, "ph"),
    KEY(C_EVENT, K_CAT, "cat"),
    KEY(C_EVENT, K_NAME, "name"),
    KEY(C_EVENT, K_PID, "pid"),
    KEY(C_EVENT, K_TID, "tid"),
    KEY(C_EVENT, K_TS, "ts"),
    KEY(C_EVENT, K_DUR, "dur"),
    KEY(C_EVENT, K_ARGS, "args"),
    KEY(C_ARGS, K_CORR, "correlation"),
    KEY(C_ARGS, K_STREAM, "stream"),
    KEY(C_ARGS, K_DEVICE, "device"),
    KEY(C_ARGS, K_BYTES, "bytes"),
    KEY(C_ARGS, K_GRID, "grid"),
    KEY(C_ARGS, K_DIMS, "Input Dims"),
    KEY(C_ARGS, K_DIMS, "Input dims"),
    KEY(C_ARGS, K_TYPES, "Input type"),
    KEY(C_ARGS, K_COLL_NAME, "Collective name"),
    KEY(C_ARGS, K_DTYPE, "dtype"),
    KEY(C_ARGS, K_IN_NELEMS, "In msg nelems"),
    KEY(C_ARGS, K_IN_NELEMS, "In msg size"),
    KEY(C_ARGS, K_GROUP_SIZE, "Group size"),
    KEY(C_DEV, K_ID, "id"),
    KEY(C_DEV, K_NAME, "name"),
    KEY(C_DEV, K_NUMSMS, "numSms"),
    KEY(C_DEV, K_CCMAJ, "computeMajor"),
    KEY(C_DEV, K_CCMIN, "computeMinor"),
    KEY(C_DEV, K_MEM, "totalGlobalMem"),
    KEY(C_DIST, K_RANK, "rank"),
    KEY(C_DIST, K_WORLD, "world_size"),
};

/* A hash of an object key in its container: its length and end letters tell the keys apart,
 * so a lookup costs about one probe and one memcmp instead of a scan of keys[] (every event's
 * keys and its args' keys come here: millions of calls in a large trace). n > 0. */
static unsigned key_hash(int ctx, const unsigned char *k, size_t n)
{
    return (unsigned)(ctx * 131u + n * 31u + k[0] * 7u + k[n - 1]) % KEY_SLOTS;
}

/* Fills m->key_slot from keys[], by linear probing. */
static void index_keys(imp *m)
{
    memset(m->key_slot, 0, sizeof m->key_slot);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        unsigned h = key_hash(keys[i].ctx, (const unsigned char *)keys[i].name, keys[i].len);
        while (m->key_slot[h])
            h = (h + 1) % KEY_SLOTS;
        m->key_slot[h] = (uint8_t)(i + 1);
    }
}

/* The pkey of object key k[0..n) in a container of context ctx; K_NONE for one not acted on. */
static int find_key(const imp *m, int ctx, const unsigned char *k, size_t n)
{
    if (n == 0) return K_NONE;
    for (unsigned h = key_hash(ctx, k, n); m->key_slot[h]; h = (h + 1) % KEY_SLOTS) {
        int i = m->key_slot[h] - 1;
        if (keys[i].ctx == ctx && keys[i].len == n && !memcmp(k, keys[i].name, n))
            return keys[i].key;
    }
    return K_NONE;
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t n)
{
    imp *m = ctx;
    frame *f = top(m);
    if (!f) return 1;
    int key = find_key(m, f->ctx, k, n);
    if (key == K_TRACE_EVENTS) m->saw_trace_events = 1;
    f->key = (uint8_t)key;
    return 1;
}

static int cb_number(void *ctx, const char *s, size_t n)
{
    imp *m = ctx;
    int c = cur_ctx(m), k = cur_key(m);
    scratch *e = &m->ev;
    switch (c) {
    case C_EVENT:
        if (k == K_TS) {
            e->has_ts = 1;
            e->time_range |= !num_us_to_ns(s, n, &e->ts);
        } else if (k == K_DUR) {
            e->has_dur = 1;
            e->time_range |= !num_us_to_ns(s, n, &e->dur) || e->dur > TRC_INT_MAX;
        } else if (k == K_PID)
            e->pid = num_int(s, n);
        else if (k == K_TID)
            e->tid = num_int(s, n);
        break;
    case C_ARGS:
        if (k == K_CORR)
            e->corr = num_int(s, n), e->has_corr = 1;
        else if (k == K_STREAM)
            e->stream = num_int(s, n), e->has_stream = 1;
        else if (k == K_DEVICE)
            e->device = num_int(s, n), e->has_device = 1;
        else if (k == K_BYTES)
            e->bytes = num_int(s, n);
        else if (k == K_IN_NELEMS)
            e->in_nelems = num_int(s, n);
        else if (k == K_GROUP_SIZE)
            e->group_size = num_int(s, n);
        break;
    case C_GRID:
        if (e->n_grid < 3) e->grid[e->n_grid++] = num_int(s, n);
        break;
    case C_DIM_ITEM:
        if (e->n_in < MAX_IN) {
            trc_tensor *t = &e->in[e->n_in];
            int64_t v = num_int(s, n);
            if (t->ndim >= 0 && (v < 0 || (v > 0 && t->numel > NUMEL_LIMIT / v))) {
                t->ndim = -1; /* a negative size, or too many elements: not a usable tensor */
            } else if (t->ndim >= 0) {
                if (t->ndim < TRC_MAXDIM) t->dim[t->ndim] = v;
                t->ndim++;
                t->numel *= v;
            }
        }
        break;
    case C_DEV:
        if (k == K_ID)
            m->dev.id = num_int(s, n);
        else if (k == K_NUMSMS)
            m->dev.sms = num_int(s, n);
        else if (k == K_CCMAJ)
            m->dev.cc_major = num_int(s, n);
        else if (k == K_CCMIN)
            m->dev.cc_minor = num_int(s, n);
        else if (k == K_MEM)
            m->dev.mem = num_int(s, n);
        break;
    case C_DIST: {
        int64_t v = num_int(s, n);
        if (k == K_RANK && v >= 0 && v <= INT32_MAX)
            m->rank = (int)v;
        else if (k == K_WORLD && v >= 1 && v <= INT32_MAX)
            m->world_size = (int)v;
        break;
    }
    default:
        break;
    }
    return 1;
}

static void copy_str(char *dst, size_t cap, const unsigned char *s, size_t n)
{
    if (n >= cap) n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

/* Event categories (the "cat" of an event) and the schema each one shows. */
enum { SCHEMA_ANY, SCHEMA_OLD, SCHEMA_NEW };
#define CAT(name, cat, schema)                                                                     \
    {                                                                                              \
        name, sizeof name - 1, cat, schema                                                         \
    }
static const struct {
    const char *name;
    uint8_t len, cat, schema;
} cats[] = {
    CAT("cpu_op", CAT_CPU_OP, SCHEMA_NEW),         CAT("Operator", CAT_CPU_OP, SCHEMA_OLD),
    CAT("user_annotation", CAT_ANNOT, SCHEMA_NEW), CAT("cuda_runtime", CAT_RUNTIME, SCHEMA_NEW),
    CAT("cuda_driver", CAT_RUNTIME, SCHEMA_NEW),   CAT("Runtime", CAT_RUNTIME, SCHEMA_OLD),
    CAT("kernel", CAT_KERNEL, SCHEMA_ANY),         CAT("Kernel", CAT_KERNEL, SCHEMA_ANY),
    CAT("gpu_memcpy", CAT_MEMCPY, SCHEMA_ANY),     CAT("Memcpy", CAT_MEMCPY, SCHEMA_ANY),
    CAT("gpu_memset", CAT_MEMSET, SCHEMA_ANY),     CAT("Memset", CAT_MEMSET, SCHEMA_ANY),
    CAT("Trace", CAT_TRACE, SCHEMA_ANY),
};

/* An event's "cat": sets its category and marks the schema it shows; an unknown one does
 * neither. */
static void event_cat(imp *m, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < sizeof cats / sizeof cats[0]; i++) {
        if (cats[i].len != n || memcmp(s, cats[i].name, n) != 0) continue;
        m->ev.cat = cats[i].cat;
        m->schema_old |= cats[i].schema == SCHEMA_OLD;
        m->schema_new |= cats[i].schema == SCHEMA_NEW;
        return;
    }
}

/* An event's name, kept whole; 0 out of memory. */
static int event_name(imp *m, const unsigned char *s, size_t n)
{
    scratch *e = &m->ev;
    if (n + 1 > e->name_cap) {
        size_t cap = n + 1 < 256 ? 256 : 2 * (n + 1);
        char *p = realloc(e->name, cap);
        if (!p) {
            m->fatal = SIM_ENOMEM;
            return 0;
        }
        e->name = p;
        e->name_cap = cap;
    }
    memcpy(e->name, s, n);
    e->name[n] = 0;
    e->name_len = n;
    return 1;
}

/* A string pid: "Traces"/"Spans" rows are profiler spans, not a process; numeric text is a pid. */
static void event_pid(scratch *e, const unsigned char *s, size_t n)
{
    char buf[32];
    copy_str(buf, sizeof buf, s, n);
    char *end;
    long long v = strtoll(buf, &end, 10);
    if (end != buf && *end == 0)
        e->pid = v;
    else
        e->pid_is_str = 1;
}

/* A string tid: numeric text is the tid; other text ("stream 7") gives the stream number in it,
 * and a hash of it as the tid. */
static void event_tid(scratch *e, const unsigned char *s, size_t n)
{
    char buf[64];
    copy_str(buf, sizeof buf, s, n);
    char *end;
    long long v = strtoll(buf, &end, 10);
    if (end != buf && *end == 0) {
        e->tid = v;
    } else {
        const char *d = strpbrk(buf, "0123456789");
        e->tid_stream = d ? strtoll(d, NULL, 10) : 0;
        e->tid = (int64_t)(fnv(buf, strlen(buf)) >> 1);
    }
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
    imp *m = ctx;
    int c = cur_ctx(m), k = cur_key(m);
    scratch *e = &m->ev;
    if (c == C_EVENT) {
        if (k == K_DUR)
            e->dur_not_number = 1;
        else if (k == K_PH)
            copy_str(e->ph, sizeof e->ph, s, n);
        else if (k == K_CAT)
            event_cat(m, s, n);
        else if (k == K_NAME)
            return event_name(m, s, n);
        else if (k == K_PID)
            event_pid(e, s, n);
        else if (k == K_TID)
            event_tid(e, s, n);
    } else if (c == C_TYPES) {
        if (e->n_types < MAX_IN) {
            char t[48];
            copy_str(t, sizeof t, s, n);
            e->elem[e->n_types] = trc_dtype_bytes(t);
            e->dtype[e->n_types] = (uint8_t)dtype_code(t);
            e->n_types++;
        }
    } else if (c == C_ARGS) {
        if (k == K_COLL_NAME)
            copy_str(e->coll_name, sizeof e->coll_name, s, n);
        else if (k == K_DTYPE)
            copy_str(e->coll_dtype, sizeof e->coll_dtype, s, n);
    } else if (c == C_DEV && k == K_NAME) {
        copy_str(m->dev.name, sizeof m->dev.name, s, n);
    }
    return 1;
}

static int cb_scalar(void *ctx)
{
    imp *m = ctx;
    if (cur_ctx(m) == C_EVENT && cur_key(m) == K_DUR) m->ev.dur_not_number = 1;
    /* null/true/false inside an input's dims list makes it not a plain tensor */
    if (cur_ctx(m) == C_DIM_ITEM && m->ev.n_in < MAX_IN) m->ev.in[m->ev.n_in].ndim = -1;
    return 1;
}
static int cb_null(void *ctx)
{
    return cb_scalar(ctx);
}
static int cb_bool(void *ctx, int b)
{
    (void)b;
    return cb_scalar(ctx);
}

static int rt_kind(const char *name, uint8_t *sync)
{
    static const char *const launches[] = {"cudaLaunchKernel",
                                           "cudaLaunchKernelExC",
                                           "cuLaunchKernel",
                                           "cuLaunchKernelEx",
                                           "cudaLaunchCooperativeKernel",
                                           "cudaLaunchCooperativeKernelMultiDevice",
                                           "cudaGraphLaunch",
                                           "cuGraphLaunch",
                                           "cudaLaunchKernel_ptsz",
                                           "cudaLaunchKernelExC_ptsz"};
    for (size_t i = 0; i < sizeof launches / sizeof launches[0]; i++)
        if (!strcmp(name, launches[i])) return RT_LAUNCH;
    if (!strncmp(name, "cudaMemcpy", 10) || !strncmp(name, "cuMemcpy", 8)) return RT_MEMCPY;
    if (!strncmp(name, "cudaMemset", 10) || !strncmp(name, "cuMemset", 8)) return RT_MEMSET;
    if (!strcmp(name, "cudaStreamSynchronize") || !strcmp(name, "cuStreamSynchronize")) {
        *sync = TRC_SYNC_STREAM;
        return RT_SYNC;
    }
    if (!strcmp(name, "cudaDeviceSynchronize") || !strcmp(name, "cuCtxSynchronize")) {
        *sync = TRC_SYNC_DEVICE;
        return RT_SYNC;
    }
    if (!strcmp(name, "cudaEventSynchronize") || !strcmp(name, "cuEventSynchronize")) {
        *sync = TRC_SYNC_EVENT;
        return RT_SYNC;
    }
    return RT_OTHER;
}

/* Why an event's times are unusable (trc_bad_time), or -1 when they are usable. */
static int bad_time(const scratch *e)
{
    if (e->time_range) return TRC_BAD_TIME_RANGE;
    if (e->dur_not_number) return TRC_BAD_DUR_NOT_NUMBER;
    if (!e->has_dur) return TRC_BAD_DUR_MISSING;
    if (e->dur < 0) return TRC_BAD_DUR_NEGATIVE;
    return -1;
}

/* Records that the event being finished is dropped for reason (trc_bad_time). */
static int drop_event(imp *m, int reason, int gpu)
{
    const scratch *e = &m->ev;
    ev_bad d = {.ts = e->time_range ? INT64_MIN : e->ts,
                .index = m->events - 1,
                .reason = reason,
                .gpu = gpu};
    int ok;
    VEC_PUSH(m, m->bad, d, ok);
    if (!ok) m->fatal = SIM_ENOMEM;
    return ok;
}

/* The stream number of a GPU activity: a value outside int32's non-negative range (a hashed
 * string tid, a corrupt number) is folded into it. */
static int32_t stream_of(const scratch *e)
{
    int64_t v = e->has_stream ? e->stream : e->tid_stream ? e->tid_stream : e->tid;
    return (int32_t)(v >= 0 && v <= INT32_MAX ? v : (int64_t)((uint64_t)v & INT32_MAX));
}

/* Thread blocks of a grid of n sizes (a size below 1 counts as 1); 0 (unknown) when the product
 * passes TRC_INT_MAX, which no GPU's grid limits allow. */
static int64_t grid_blocks(const int64_t *grid, int n)
{
    int64_t b = 1;
    for (int i = 0; i < n; i++) {
        int64_t g = grid[i] > 0 ? grid[i] : 1;
        if (g > TRC_INT_MAX / b) return 0;
        b *= g;
    }
    return b;
}

/* A FLOP or byte estimate, or 0 (unknown) when it is negative, not finite or past COST_LIMIT. */
static double believable(double x)
{
    return x >= 0 && x <= COST_LIMIT ? x : 0;
}

/* The recording's own span ("Trace"): the earliest usable one is only a fallback for the time
 * origin, so one with unusable times is passed over. */
static void keep_trace_span(imp *m, int bad)
{
    const scratch *e = &m->ev;
    if (bad >= 0) return;
    if (!m->has_trace_span || e->ts < m->trace_ts) {
        m->trace_ts = e->ts;
        m->trace_dur = e->dur;
        m->has_trace_span = 1;
    }
}

/* What a CPU event keeps of its inputs: the first tensor's shape, type and bytes, the op's cost
 * estimate, and a collective's message size and group. */
static void describe_inputs(ev_cpu *c, scratch *e, const char *name)
{
    int n_in = e->n_in < MAX_IN ? e->n_in : MAX_IN;
    for (int i = 0; i < n_in; i++) {
        trc_tensor *t = &e->in[i];
        t->elem_bytes = i < e->n_types ? e->elem[i] : 0;
        if (t->ndim == 0 && t->elem_bytes == 0)
            t->ndim = -1; /* an int, a list of ints, None: not a tensor */
    }
    for (int i = 0; i < n_in; i++) {
        const trc_tensor *t = &e->in[i];
        if (t->ndim < 0) continue;
        c->in0_ndim = (int8_t)(t->ndim > 4 ? 5 : t->ndim);
        for (int d = 0; d < 4 && d < t->ndim; d++)
            c->in0[d] = t->dim[d];
        c->dtype0 = (uint8_t)(i < e->n_types ? e->dtype[i] : DT_OTHER);
        c->in0_bytes = believable((double)t->numel * (t->elem_bytes ? t->elem_bytes : 4));
        break;
    }
    c->has_dims = n_in > 0;
    if (n_in > 0 && !c->annot) {
        c->cost = trc_op_cost(name, e->in, n_in);
        c->cost.flops = believable(c->cost.flops);
        c->cost.bytes = believable(c->cost.bytes);
    }
    if (e->coll_name[0] || e->in_nelems > 0) {
        c->coll_bytes = believable((double)e->in_nelems * comm_dtype_bytes(e->coll_dtype));
        c->group_size =
            e->group_size > 0 && e->group_size <= INT32_MAX ? (int32_t)e->group_size : 0;
    }
}

/* A CPU op or annotation: a ProfilerStep#N span becomes a step, any other an ev_cpu. Returns 0
 * out of memory. */
static int finish_cpu(imp *m, const char *name, int bad)
{
    scratch *e = &m->ev;
    int ok;
    if (e->pid_is_str) return 1;
    if (bad >= 0) return drop_event(m, bad, 0);
    if (!strncmp(name, "ProfilerStep#", 13)) {
        ev_step s = {.ts = e->ts,
                     .dur = e->dur,
                     .pid = e->pid,
                     .tid = e->tid,
                     .index = strtoll(name + 13, NULL, 10),
                     .flag = -1};
        VEC_PUSH(m, m->steps, s, ok);
        return ok;
    }
    ev_cpu c;
    memset(&c, 0, sizeof c);
    c.ts = e->ts, c.dur = e->dur, c.pid = e->pid, c.tid = e->tid;
    c.parent = -1, c.step = -1, c.in0_ndim = -1;
    c.seq = (int32_t)m->cpu.n;
    c.annot = e->cat == CAT_ANNOT || strchr(name, '#') != NULL;
    c.name = intern(m, name, e->name_len);
    if (c.name < 0) return 0;
    if (e->dims_seen) m->saw_dims = 1;
    describe_inputs(&c, e, name);
    VEC_PUSH(m, m->cpu, c, ok);
    return ok;
}

/* A CUDA runtime call: launches, copies, memsets and syncs are kept. Returns 0 out of memory. */
static int finish_runtime(imp *m, const char *name, int bad)
{
    const scratch *e = &m->ev;
    uint8_t sync = 0;
    int kind = rt_kind(name, &sync);
    if (!strncmp(name, "hip", 3)) m->saw_hip = 1;
    if (kind == RT_OTHER || e->pid_is_str) return 1;
    if (bad >= 0) return drop_event(m, bad, 0);
    ev_rt r = {.ts = e->ts,
               .dur = e->dur,
               .pid = e->pid,
               .tid = e->tid,
               .corr = e->has_corr ? e->corr : -1,
               .kind = (uint8_t)kind,
               .sync = sync,
               .step = -1,
               .cpu = -1};
    r.name = intern(m, name, e->name_len);
    if (r.name < 0) return 0;
    int ok;
    VEC_PUSH(m, m->rt, r, ok);
    return ok;
}

/* A GPU activity: a kernel, copy or memset. Returns 0 out of memory. */
static int finish_gpu(imp *m, const char *name, int bad)
{
    const scratch *e = &m->ev;
    if (bad >= 0) return drop_event(m, bad, 1);
    ev_gpu g;
    memset(&g, 0, sizeof g);
    g.ts = e->ts, g.dur = e->dur, g.corr = e->has_corr ? e->corr : -1;
    g.bytes = e->bytes > 0 && e->bytes <= TRC_INT_MAX ? e->bytes : 0;
    g.stream = stream_of(e);
    g.device = (int32_t)(e->has_device ? e->device : e->pid);
    g.rt = -1;
    g.kind = e->cat == CAT_KERNEL ? G_KERNEL : e->cat == CAT_MEMCPY ? G_MEMCPY : G_MEMSET;
    g.pinned = -1;
    if (e->n_grid) {
        g.blocks = grid_blocks(e->grid, e->n_grid);
        m->saw_grid = 1;
    }
    if (g.kind == G_MEMCPY) {
        g.dir = strstr(name, "HtoD")   ? TRC_MEMCPY_H2D
                : strstr(name, "DtoH") ? TRC_MEMCPY_D2H
                : strstr(name, "DtoD") ? TRC_MEMCPY_D2D
                                       : TRC_MEMCPY_OTHER;
        g.pinned = strstr(name, "Pinned") ? 1 : strstr(name, "Pageable") ? 0 : -1;
    }
    g.name = intern(m, name, e->name_len);
    if (g.name < 0) return 0;
    int ok;
    VEC_PUSH(m, m->gpu, g, ok);
    return ok;
}

static int finish_event(imp *m)
{
    scratch *e = &m->ev;
    m->events++;
    if (strcmp(e->ph, "X") != 0 || !e->has_ts) return 1;
    if (!e->time_range && e->ts < m->min_ts) m->min_ts = e->ts;
    int bad = bad_time(e);
    if (e->dur < 0) e->dur = 0;
    const char *name = e->name_len ? e->name : "";
    int ok;
    switch (e->cat) {
    case CAT_TRACE:
        keep_trace_span(m, bad);
        return 1;
    case CAT_CPU_OP:
    case CAT_ANNOT:
        ok = finish_cpu(m, name, bad);
        break;
    case CAT_RUNTIME:
        ok = finish_runtime(m, name, bad);
        break;
    case CAT_KERNEL:
    case CAT_MEMCPY:
    case CAT_MEMSET:
        ok = finish_gpu(m, name, bad);
        break;
    default:
        return 1;
    }
    if (!ok) m->fatal = SIM_ENOMEM;
    return ok;
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_bool,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end_map,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end_array,
};

/* Line and column (1-based) of byte `pos` of buf, continuing from the line and column of the bytes
 * before buf. */
static void advance_pos(const unsigned char *buf, size_t pos, long long *line, long long *col)
{
    const unsigned char *p = buf, *end = buf + pos, *nl;
    while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        (*line)++;
        *col = 1;
        p = nl + 1;
    }
    *col += end - p;
}

/* Where the parser is in the decompressed JSON: bytes before the current chunk, and the line and
 * column (1-based) of its first byte. */
typedef struct json_pos {
    long long offset, line, col;
} json_pos;

/* The error for a gzread that returned got: negative, or 0 before the end of the file. */
static int read_error(gzFile f, int got, const json_pos *at, const char *path, sim_err *err)
{
    int zerr = 0;
    if (got == 0)
        return sim_err_set(err, SIM_EIO, path, 0, 0, "cannot read the trace: %s",
                           gzerror(f, &zerr));
    const char *msg = gzerror(f, &zerr);
    int rc =
        sim_err_set(err, SIM_EFORMAT, path, 0, 0,
                    "cannot decompress the trace after %lld bytes of JSON: %s", at->offset, msg);
    if (err) err->offset = at->offset;
    return rc;
}

/* The error for the chunk buf[0..got) that yajl refused, at the byte where it stopped (or out of
 * memory, when a callback failed). */
static int json_error(const imp *m, yajl_handle h, const unsigned char *buf, size_t got,
                      json_pos at, const char *path, sim_err *err)
{
    size_t used = yajl_get_bytes_consumed(h);
    if (used > got) used = got;
    advance_pos(buf, used, &at.line, &at.col);
    if (m->fatal) return sim_err_set(err, m->fatal, path, 0, 0, NO_ROOM " reading the trace");
    unsigned char *msg = yajl_get_error(h, 0, buf, got);
    int rc = sim_err_set(err, SIM_EFORMAT, path, (int)at.line, (int)at.col, "not valid JSON: %s",
                         msg ? (const char *)msg : "parse error");
    if (err) err->offset = at.offset + (long long)used;
    if (msg) yajl_free_error(h, msg);
    return rc;
}

/* Feeds the decompressed bytes of f through h to the end of the document; at->offset counts the
 * bytes of the chunks parsed without error. */
static int parse_stream(imp *m, yajl_handle h, gzFile f, unsigned char *buf, json_pos *at,
                        const char *path, sim_err *err)
{
    for (;;) {
        int got = gzread(f, buf, READ_BYTES);
        if (got < 0 || (got == 0 && !gzeof(f))) return read_error(f, got, at, path, err);
        if (got == 0) break;
        if (yajl_parse(h, buf, (size_t)got) != yajl_status_ok)
            return json_error(m, h, buf, (size_t)got, *at, path, err);
        advance_pos(buf, (size_t)got, &at->line, &at->col);
        at->offset += got;
    }
    if (yajl_complete_parse(h) != yajl_status_ok) {
        int rc = sim_err_set(err, SIM_EFORMAT, path, (int)at->line, (int)at->col,
                             "truncated JSON: the trace ends inside an %s",
                             m->depth > 0 ? "open object or list" : "unfinished value");
        if (err) err->offset = at->offset;
        return rc;
    }
    if (m->fatal) return sim_err_set(err, m->fatal, path, 0, 0, NO_ROOM " reading the trace");
    int rc = trc_spill_flush(m->sp); /* the tables as arrays from here on */
    return rc ? sim_err_set(err, rc, path, 0, 0, NO_ROOM " reading the trace") : SIM_OK;
}

static int parse_json(imp *m, const char *path, trc_kineto_summary *sum, sim_err *err)
{
    gzFile f = gzopen(path, "rb");
    if (!f) {
        int e = errno;
        return sim_err_set(err, e == ENOENT ? SIM_ENOENT : SIM_EIO, path, 0, 0,
                           "cannot open the trace: %s", e ? strerror(e) : NO_ROOM);
    }
    gzbuffer(f, READ_BYTES);
    yajl_handle h = yajl_alloc(&callbacks, NULL, m);
    unsigned char *buf = malloc(READ_BYTES);
    json_pos at = {0, 1, 1};
    int rc;
    if (h) /* names are copied as bytes; checking their UTF-8 buys nothing and costs time */
        yajl_config(h, yajl_dont_validate_strings, 1);
    if (!h || !buf)
        rc = sim_err_set(err, SIM_ENOMEM, path, 0, 0, NO_ROOM);
    else
        rc = parse_stream(m, h, f, buf, &at, path, err);
    if (sum) sum->json_bytes = at.offset;
    if (h) yajl_free(h);
    free(buf);
    gzclose(f);
    return rc;
}

/* ---- pass 2: linking ----------------------------------------------------------------------- */

/* A stable sort of the first n elements of table t (as glibc's qsort, a merge sort, ordered
 * them before the tables could live in files); t->base may change. 0, SIM_ENOMEM or SIM_EIO. */
static int sort_n(const imp *m, trc_spill_buf *t, size_t n, size_t size,
                  int (*cmp)(const void *, const void *))
{
    return trc_spill_sort(m->sp, t, n, size, cmp);
}

static int cmp_cpu(const void *x, const void *y)
{
    const ev_cpu *a = x, *b = y;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    if (a->dur != b->dur) return a->dur > b->dur ? -1 : 1; /* the enclosing event first */
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_rt_ts(const void *x, const void *y)
{
    const ev_rt *a = x, *b = y;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    return a->corr < b->corr ? -1 : a->corr > b->corr;
}

static int cmp_step(const void *x, const void *y)
{
    const ev_step *a = x, *b = y;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

typedef struct corr_ix {
    int64_t corr;
    int32_t rt;
} corr_ix;

static int cmp_corr(const void *x, const void *y)
{
    const corr_ix *a = x, *b = y;
    return a->corr < b->corr ? -1 : a->corr > b->corr;
}

/* The runtime call with correlation id corr in cx (sorted by corr); -1 none. */
static int32_t rt_of_corr(const corr_ix *cx, size_t n, int64_t corr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cx[mid].corr < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return corr >= 0 && lo < n && cx[lo].corr == corr ? cx[lo].rt : -1;
}

/* Sort keys for GPU activities (sorted as small key structs, not through a global). */
typedef struct gpu_key {
    int64_t a, b; /* (linked runtime, start) or (start, 0) */
    int32_t i;
} gpu_key;

static int cmp_gpu_key(const void *x, const void *y)
{
    const gpu_key *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return p->i < q->i ? -1 : p->i > q->i;
}

/* GPU indices ordered by (linked runtime, start) when by_rt, else by start. */
static int order_gpu(const imp *m, int by_rt, int32_t *out)
{
    trc_spill_buf sb = {0};
    gpu_key *k = table(m, &sb, m->gpu.n, sizeof *k);
    if (!k) {
        trc_spill_release(m->sp, &sb); /* a failed first allocation has registered it */
        return SIM_ENOMEM;
    }
    for (size_t i = 0; i < m->gpu.n; i++, trc_spill_tick(m->sp)) {
        const ev_gpu *g = &m->gpu.v[i];
        k[i] = by_rt ? (gpu_key){g->rt, g->ts, (int32_t)i} : (gpu_key){g->ts, 0, (int32_t)i};
    }
    int rc = sort_n(m, &sb, m->gpu.n, sizeof *k, cmp_gpu_key);
    k = sb.base;
    for (size_t i = 0; !rc && i < m->gpu.n; i++, trc_spill_tick(m->sp))
        out[i] = k[i].i;
    trc_spill_release(m->sp, &sb);
    return rc;
}

/* Step containing time t; -1 if none (steps are sorted and do not overlap). */
static int32_t step_of(const imp *m, int64_t t)
{
    size_t lo = 0, hi = m->steps.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->steps.v[mid].ts <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return -1;
    const ev_step *s = &m->steps.v[lo - 1];
    return t < s->ts + s->dur || (s->dur == 0 && t == s->ts) ? (int32_t)(lo - 1) : -1;
}

static thread_range *find_thread(imp *m, int64_t pid, int64_t tid)
{
    for (size_t i = 0; i < m->n_thr; i++)
        if (m->thr[i].pid == pid && m->thr[i].tid == tid) return &m->thr[i];
    return NULL;
}

/* Innermost CPU event of thread th that contains time t (starts at or before it, ends after). */
static int32_t enclosing(const imp *m, const thread_range *th, int64_t t)
{
    size_t lo = th->begin, hi = th->end;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->cpu.v[mid].ts <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == th->begin) return -1;
    int32_t i = (int32_t)(lo - 1);
    while (i >= 0) {
        const ev_cpu *c = &m->cpu.v[i];
        if (c->ts <= t && (t < c->ts + c->dur || (c->dur == 0 && t == c->ts))) return i;
        i = c->parent;
    }
    return -1;
}

static int is_wait_name(const char *n)
{
    return (strstr(n, "DataLoader") && strstr(n, "__next__")) || strstr(n, "wait_for_batch");
}

/* Appends a thread to m->thr. */
static int add_thread(imp *m, thread_range th)
{
    if (m->n_thr == m->cap_thr) {
        size_t cap = 2 * m->cap_thr;
        thread_range *p = realloc(m->thr, cap * sizeof *p);
        if (!p) return SIM_ENOMEM;
        m->thr = p;
        m->cap_thr = cap;
    }
    m->thr[m->n_thr++] = th;
    return SIM_OK;
}

/* Flags of CPU event k: what it is (a wait, a loader span, an NCCL annotation) and what
 * encloses it. */
static uint8_t cpu_flags_of(const imp *m, size_t k)
{
    const ev_cpu *c = &m->cpu.v[k];
    const char *name = m->names[c->name];
    uint8_t fl = 0;
    if (c->parent >= 0) {
        uint8_t pf = m->cpu_flags[c->parent];
        const ev_cpu *p = &m->cpu.v[c->parent];
        if (pf & (F_WAIT | F_IN_WAIT)) fl |= F_IN_WAIT;
        if (pf & (F_LOADER | F_IN_LOADER)) fl |= F_IN_LOADER;
        if (pf & (F_NCCL | F_IN_NCCL)) fl |= F_IN_NCCL;
        if ((pf & F_OP_ANCESTOR) || !p->annot) fl |= F_OP_ANCESTOR;
    }
    if (is_wait_name(name)) fl |= F_WAIT;
    if (strstr(name, "load_batch")) fl |= F_LOADER;
    if (c->annot && !strncmp(name, "nccl:", 5)) fl |= F_NCCL;
    return fl;
}

/* Nests the CPU events cpu[i..j) of one thread (sorted by start, enclosing first): each one's
 * parent and flags. stack has room for j - i entries. */
static void nest_thread(imp *m, size_t i, size_t j, int32_t *stack)
{
    size_t sp = 0;
    for (size_t k = i; k < j; k++) {
        ev_cpu *c = &m->cpu.v[k];
        while (sp > 0) {
            const ev_cpu *p = &m->cpu.v[stack[sp - 1]];
            if (c->ts >= p->ts && c->ts + c->dur <= p->ts + p->dur &&
                (c->ts < p->ts + p->dur || p->dur == 0))
                break;
            sp--;
        }
        c->parent = sp ? stack[sp - 1] : -1;
        stack[sp++] = (int32_t)k;
        m->cpu_flags[k] = cpu_flags_of(m, k);
        trc_spill_tick(m->sp);
    }
}

/* Sorts the CPU events by thread and start, gives each thread the range of its own and nests
 * each range. */
static int nest_cpu(imp *m, sim_err *err, const char *path)
{
    int rc = sort_n(m, &m->cpu.sb, m->cpu.n, sizeof *m->cpu.v, cmp_cpu);
    m->cpu.v = m->cpu.sb.base;
    if (rc) return sim_err_set(err, SIM_ENOMEM, path, 0, 0, NO_ROOM);
    m->cap_thr = 16;
    m->thr = malloc(m->cap_thr * sizeof *m->thr);
    m->cpu_flags = table(m, &m->cpu_flags_sb, m->cpu.n, 1);
    if (!m->thr || !m->cpu_flags) return sim_err_set(err, SIM_ENOMEM, path, 0, 0, NO_ROOM);
    /* room for every event, but only as deep as the nesting goes is ever touched (and resident) */
    int32_t *stack = malloc((m->cpu.n ? m->cpu.n : 1) * sizeof *stack);
    if (!stack) return sim_err_set(err, SIM_ENOMEM, path, 0, 0, NO_ROOM);
    for (size_t i = 0; i < m->cpu.n;) {
        size_t j = i;
        while (j < m->cpu.n && m->cpu.v[j].pid == m->cpu.v[i].pid &&
               m->cpu.v[j].tid == m->cpu.v[i].tid)
            j++, trc_spill_tick(m->sp);
        if (add_thread(m, (thread_range){m->cpu.v[i].pid, m->cpu.v[i].tid, i, j, -1})) {
            free(stack);
            return sim_err_set(err, SIM_ENOMEM, path, 0, 0, NO_ROOM);
        }
        nest_thread(m, i, j, stack);
        i = j;
    }
    free(stack);
    return SIM_OK;
}

/* Sorts the steps; the thread with the steps is the main thread, and its CPU events get the step
 * they start in. */
static int assign_steps(imp *m)
{
    int rc = sort_n(m, &m->steps.sb, m->steps.n, sizeof *m->steps.v, cmp_step);
    m->steps.v = m->steps.sb.base;
    if (rc) return rc;
    m->main_pid = m->steps.v[0].pid;
    m->main_tid = m->steps.v[0].tid;
    for (size_t i = 0; i < m->cpu.n; i++, trc_spill_tick(m->sp))
        m->cpu.v[i].step = m->cpu.v[i].pid == m->main_pid ? step_of(m, m->cpu.v[i].ts) : -1;
    return SIM_OK;
}

/* Threads that only make runtime calls (and the main thread, if it has no CPU events) get an
 * empty range. */
static int add_runtime_threads(imp *m, sim_err *err, const char *path)
{
    for (size_t i = 0; i <= m->rt.n; i++, trc_spill_tick(m->sp)) {
        int64_t pid = i < m->rt.n ? m->rt.v[i].pid : m->main_pid;
        int64_t tid = i < m->rt.n ? m->rt.v[i].tid : m->main_tid;
        if (find_thread(m, pid, tid)) continue;
        if (add_thread(m, (thread_range){pid, tid, 0, 0, -1}))
            return sim_err_set(err, SIM_ENOMEM, path, 0, 0, NO_ROOM);
    }
    return SIM_OK;
}

/* Sorts the runtime calls by time, gives each its step and enclosing CPU event, and links each
 * GPU activity to the call with its correlation id. */
static int link_runtime(imp *m, sim_err *err, const char *path)
{
    trc_spill_buf cx_sb = {0};
    corr_ix *cx = NULL;
    int rc = sort_n(m, &m->rt.sb, m->rt.n, sizeof *m->rt.v, cmp_rt_ts);
    m->rt.v = m->rt.sb.base;
    if (rc || !(cx = table(m, &cx_sb, m->rt.n, sizeof *cx)) ||
        !(m->gpu_by_rt = table(m, &m->gpu_by_rt_sb, m->gpu.n, sizeof *m->gpu_by_rt))) {
        trc_spill_release(m->sp, &cx_sb);
        return sim_err_set(err, SIM_ENOMEM, path, 0, 0, NO_ROOM);
    }
    size_t ncx = 0;
    for (size_t i = 0; i < m->rt.n; i++, trc_spill_tick(m->sp)) {
        ev_rt *r = &m->rt.v[i];
        r->step = r->pid == m->main_pid ? step_of(m, r->ts) : -1;
        thread_range *th = find_thread(m, r->pid, r->tid);
        r->cpu = th ? enclosing(m, th, r->ts) : -1;
        if (r->corr >= 0) cx[ncx++] = (corr_ix){r->corr, (int32_t)i};
    }
    rc = sort_n(m, &cx_sb, ncx, sizeof *cx, cmp_corr);
    cx = cx_sb.base;
    for (size_t i = 0; !rc && i < m->gpu.n; i++, trc_spill_tick(m->sp))
        m->gpu.v[i].rt = rt_of_corr(cx, ncx, m->gpu.v[i].corr);
    trc_spill_release(m->sp, &cx_sb);
    return rc ? sim_err_set(err, SIM_ENOMEM, path, 0, 0, NO_ROOM) : SIM_OK;
}

/* Orders the GPU activities by their runtime call (m->gpu_by_rt) and gives each call the range
 * of its own. */
static int index_gpu_by_rt(imp *m, sim_err *err, const char *path)
{
    if (order_gpu(m, 1, m->gpu_by_rt)) return sim_err_set(err, SIM_ENOMEM, path, 0, 0, NO_ROOM);
    for (size_t i = 0; i < m->rt.n; i++, trc_spill_tick(m->sp))
        m->rt.v[i].first_gpu = -1;
    for (size_t i = 0; i < m->gpu.n; i++, trc_spill_tick(m->sp)) {
        const ev_gpu *g = &m->gpu.v[m->gpu_by_rt[i]];
        if (g->rt < 0) continue;
        ev_rt *r = &m->rt.v[g->rt];
        if (r->first_gpu < 0) r->first_gpu = (int32_t)i;
        r->n_gpu++;
    }
    return SIM_OK;
}

/* Pass 2's links: CPU events nested per thread, steps, threads, runtime calls and the GPU
 * activities they caused. */
static int link_events(imp *m, sim_err *err, const char *path)
{
    int rc = nest_cpu(m, err, path);
    if (rc) return rc;
    if (assign_steps(m)) return sim_err_set(err, SIM_ENOMEM, path, 0, 0, NO_ROOM);
    if ((rc = add_runtime_threads(m, err, path)) || (rc = link_runtime(m, err, path))) return rc;
    return index_gpu_by_rt(m, err, path);
}

/* Rules W1 and W2 of FORMAT.md; counts launches without GPU work. */
static int flag_warmup(imp *m, trc_kineto_summary *sum, sim_err *err, const char *path)
{
    trc_spill_buf sb = {0};
    int32_t *by_ts = table(m, &sb, m->gpu.n, sizeof *by_ts);
    if (!by_ts || order_gpu(m, 0, by_ts)) {
        trc_spill_release(m->sp, &sb);
        return sim_err_set(err, SIM_ENOMEM, path, 0, 0, NO_ROOM);
    }
    int64_t busy_until = INT64_MIN;
    for (size_t i = 0; i < m->gpu.n; i++, trc_spill_tick(m->sp)) {
        const ev_gpu *g = &m->gpu.v[by_ts[i]];
        if (g->rt >= 0) {
            const ev_rt *r = &m->rt.v[g->rt];
            int64_t ready = r->ts > busy_until ? r->ts : busy_until;
            if (r->step >= 0 && g->ts - ready > HELD_NS && m->steps.v[r->step].flag < 0)
                m->steps.v[r->step].flag = TRC_DROP_GPU_HELD;
        }
        if (g->ts + g->dur > busy_until) busy_until = g->ts + g->dur;
    }
    trc_spill_release(m->sp, &sb);
    for (size_t i = 0; i < m->rt.n; i++, trc_spill_tick(m->sp)) {
        const ev_rt *r = &m->rt.v[i];
        /* CUPTI does not report every memset (trace 3 has 47 per step without one), so only
         * launches and copies count */
        if (r->step >= 0 && r->n_gpu == 0 && (r->kind == RT_LAUNCH || r->kind == RT_MEMCPY)) {
            if (sum) sum->launches_without_gpu++;
            if (m->steps.v[r->step].flag < 0) m->steps.v[r->step].flag = TRC_DROP_GPU_MISSING;
        }
    }
    return SIM_OK;
}

/* Forward convs learn their output size from the first later op on the same thread whose first
 * input is [N, K, P, Q] (the batch norm or activation after it); otherwise their FLOPs stay
 * unknown. */
static void finish_convs(imp *m)
{
    for (size_t t = 0; t < m->n_thr; t++) {
        const thread_range *th = &m->thr[t];
        for (size_t i = th->begin; i < th->end; i++, trc_spill_tick(m->sp)) {
            ev_cpu *c = &m->cpu.v[i];
            if (c->cost.kind != TRC_COST_CONV_OUT) continue;
            int found = 0;
            for (size_t j = i + 1; j < th->end && j <= i + CONV_LOOKAHEAD; j++) {
                const ev_cpu *d = &m->cpu.v[j];
                if (d->ts < c->ts + c->dur) continue; /* inside the conv */
                if (d->in0_ndim == 4 && d->in0[0] == c->cost.n && d->in0[1] == c->cost.k) {
                    c->cost = trc_conv_finish(c->cost, d->in0[2], d->in0[3]);
                    found = 1;
                    break;
                }
            }
            if (!found) c->cost.kind = TRC_COST_NONE;
        }
    }
}

static int unit_of(imp *m, int32_t name)
{
    if (m->unit_of_name[name] < 0) m->unit_of_name[name] = (int8_t)trc_kernel_unit(m->names[name]);
    return m->unit_of_name[name];
}

/* The precisions kernel names tell (trc_kernel_precision); PREC_NONE for another or none. */
enum { PREC_TF32, PREC_FP16, PREC_BF16, PREC_FP32, PREC_NONE };

/* The precision of kernel name `name`, looked up once per name: a large trace repeats a few
 * hundred kernel names millions of times, and the lookup is a few dozen strstr. */
static int prec_of(imp *m, int32_t name)
{
    static const char *const precs[PREC_NONE] = {"tf32", "fp16", "bf16", "fp32"};
    if (m->prec_of_name[name] >= 0) return m->prec_of_name[name];
    const char *p = trc_kernel_precision(m->names[name]);
    int8_t c = PREC_NONE;
    for (int8_t i = 0; p && i < PREC_NONE; i++)
        if (!strcmp(p, precs[i])) c = i;
    return m->prec_of_name[name] = c;
}

/* Precision: the dtype of conv/matmul inputs when shapes were recorded, else the kernel names
 * (FORMAT.md, "Header"). */
static void infer_precision(imp *m, char *out, size_t cap)
{
    int64_t n_float = 0, n_half = 0, n_bf16 = 0;
    for (size_t i = 0; i < m->cpu.n; i++, trc_spill_tick(m->sp)) {
        const ev_cpu *c = &m->cpu.v[i];
        if (c->cost.kind != TRC_COST_COMPUTE && c->cost.kind != TRC_COST_CONV_OUT) continue;
        n_float += c->dtype0 == DT_FLOAT;
        n_half += c->dtype0 == DT_HALF;
        n_bf16 += c->dtype0 == DT_BF16;
    }
    double t[PREC_NONE + 1] = {0}; /* ns of kernels by precision */
    for (size_t i = 0; i < m->gpu.n; i++, trc_spill_tick(m->sp)) {
        const ev_gpu *g = &m->gpu.v[i];
        if (g->kind == G_KERNEL) t[prec_of(m, g->name)] += (double)g->dur;
    }
    double t_tf32 = t[PREC_TF32], t_fp16 = t[PREC_FP16], t_bf16 = t[PREC_BF16],
           t_fp32 = t[PREC_FP32];
    const char *r = "unknown";
    if (n_half > n_float && n_half >= n_bf16)
        r = n_float > 0 ? "amp_fp16" : "fp16";
    else if (n_bf16 > n_float)
        r = n_float > 0 ? "amp_bf16" : "bf16";
    else if (n_float > 0)
        r = t_tf32 > t_fp32 ? "tf32" : "fp32";
    else if (t_tf32 + t_fp16 + t_bf16 + t_fp32 > 0) {
        double best = t_fp32;
        r = "fp32";
        if (t_tf32 > best) best = t_tf32, r = "tf32";
        if (t_fp16 > best) best = t_fp16, r = "fp16";
        if (t_bf16 > best) r = "bf16";
    }
    snprintf(out, cap, "%s", r);
}

/* Batch size: the first dimension of the input of the first conv or matmul-family op on the
 * main thread in the first kept step. */
static void infer_batch(imp *m, int first_step, int *batch, char *src, size_t cap)
{
    static const char *const ops[] = {"aten::conv2d", "aten::convolution", "aten::linear",
                                      "aten::addmm",  "aten::matmul",      "aten::mm",
                                      "aten::bmm"};
    *batch = 0;
    src[0] = 0;
    thread_range *th = find_thread(m, m->main_pid, m->main_tid);
    if (!th || first_step < 0) return;
    for (size_t i = th->begin; i < th->end; i++, trc_spill_tick(m->sp)) {
        const ev_cpu *c = &m->cpu.v[i];
        if (c->step != first_step || c->in0_ndim < 2) continue;
        const char *name = m->names[c->name];
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            if (strcmp(name, ops[k]) != 0) continue;
            if (!strcmp(name, "aten::addmm")) break; /* its first input is the bias */
            *batch = (int)c->in0[0];
            snprintf(src, cap,
                     "inferred: first dimension of the input of the first %s in step %lld "
                     "(shape [%lld, %lld, ...])",
                     name, (long long)m->steps.v[first_step].index, (long long)c->in0[0],
                     (long long)c->in0[1]);
            return;
        }
    }
}

/* ---- pass 2: steps --------------------------------------------------------------------------- */

typedef struct builder {
    imp *m;
    trc_step *s;
    const ev_step *st;
    int32_t *touched;
    size_t n_touched, cap_touched;
    int32_t *rec_of_cpu; /* CPU event -> its OP or COLLECTIVE record in this step; -1 */
    trc_spill_buf rec_of_cpu_sb;
    int32_t *touched_cpu;
    size_t n_touched_cpu, cap_touched_cpu;
    /* kernel cost shares */
    struct share {
        int32_t rec, op, cpu; /* kernel record, op whose cost it shares, launching CPU event */
        uint8_t cls;          /* 0 compute, 1 memory */
    } * shares;
    size_t n_shares, cap_shares;
    double *grp; /* per CPU event: [compute dur, memory dur] */
    trc_spill_buf grp_sb;
} builder;

static int local_name(builder *b, int32_t gid)
{
    if (gid < 0) return -1;
    if (b->m->local_name[gid] >= 0) return b->m->local_name[gid];
    int li = trc_step_add_name(b->s, b->m->names[gid]);
    if (li < 0) return SIM_ENOMEM;
    if (b->n_touched == b->cap_touched) {
        size_t cap = b->cap_touched ? 2 * b->cap_touched : 256;
        int32_t *p = realloc(b->touched, cap * sizeof *p);
        if (!p) return SIM_ENOMEM;
        b->touched = p;
        b->cap_touched = cap;
    }
    b->touched[b->n_touched++] = gid;
    b->m->local_name[gid] = li;
    return li;
}

static int add_rec(builder *b, trc_record *r, int32_t gid)
{
    if (gid >= 0) {
        int li = local_name(b, gid);
        if (li < 0) return SIM_ENOMEM;
        r->name = li;
    }
    return trc_step_add(b->s, r);
}

static void rec_init(trc_record *r, int kind)
{
    memset(r, 0, sizeof *r);
    r->kind = (uint8_t)kind;
    r->name = -1;
    r->stream = -1;
    r->worker = -1;
    r->pinned = -1;
    r->gpu_dur_ns = -1;
}

static int touch_cpu(builder *b, int32_t c)
{
    if (b->n_touched_cpu == b->cap_touched_cpu) {
        size_t cap = b->cap_touched_cpu ? 2 * b->cap_touched_cpu : 256;
        int32_t *p = realloc(b->touched_cpu, cap * sizeof *p);
        if (!p) return SIM_ENOMEM;
        b->touched_cpu = p;
        b->cap_touched_cpu = cap;
    }
    b->touched_cpu[b->n_touched_cpu++] = c;
    return SIM_OK;
}

static int add_share(builder *b, int32_t rec, int32_t op, int32_t cpu, int cls, int64_t dur)
{
    if (b->n_shares == b->cap_shares) {
        size_t cap = b->cap_shares ? 2 * b->cap_shares : 1024;
        struct share *p = realloc(b->shares, cap * sizeof *p);
        if (!p) return SIM_ENOMEM;
        b->shares = p;
        b->cap_shares = cap;
    }
    b->shares[b->n_shares++] = (struct share){rec, op, cpu, (uint8_t)cls};
    if (b->grp[2 * op] == 0 && b->grp[2 * op + 1] == 0 && touch_cpu(b, op)) return SIM_ENOMEM;
    b->grp[2 * op + cls] += dur > 0 ? (double)dur : 1.0;
    return SIM_OK;
}

/* Which op's cost a kernel of `unit` launched inside CPU event `cpu` shares (FORMAT.md,
 * "FLOPs and bytes"): compute kernels the innermost enclosing conv/matmul; memory kernels the
 * outermost enclosing aten:: op with tensor inputs (inner out= variants list their output as an
 * input), unless a conv/matmul encloses them: then they are its helpers and get nothing. */
static int32_t cost_owner(const imp *m, int32_t cpu, int unit, int *cls)
{
    int32_t inner = -1, outer_aten = -1;
    for (int32_t i = cpu; i >= 0; i = m->cpu.v[i].parent) {
        int k = m->cpu.v[i].cost.kind;
        if (k == TRC_COST_COMPUTE) {
            if (unit == SIM_UNIT_TENSOR || unit == SIM_UNIT_CUDA) {
                *cls = 0;
                return i;
            }
            return -1;
        }
        if (k == TRC_COST_MEMORY) {
            if (inner < 0) inner = i;
            if (!strncmp(m->names[m->cpu.v[i].name], "aten::", 6)) outer_aten = i;
        }
    }
    if (unit == SIM_UNIT_MEMORY && (outer_aten >= 0 || inner >= 0)) {
        *cls = 1;
        return outer_aten >= 0 ? outer_aten : inner;
    }
    return -1;
}

/* The record_param_comms event enclosing a collective annotation, if any. */
static const ev_cpu *comms_params(const imp *m, int32_t i)
{
    for (int32_t p = m->cpu.v[i].parent; p >= 0; p = m->cpu.v[p].parent)
        if (!strcmp(m->names[m->cpu.v[p].name], "record_param_comms")) return &m->cpu.v[p];
    return NULL;
}

static int32_t nccl_ancestor(const imp *m, int32_t i)
{
    for (; i >= 0; i = m->cpu.v[i].parent)
        if (m->cpu_flags[i] & F_NCCL) return i;
    return -1;
}

typedef struct sortrec {
    trc_record r;
    uint32_t seq;
} sortrec;

static int kind_rank(int k)
{
    switch (k) {
    case TRC_REC_WAIT:
        return 0;
    case TRC_REC_LOADER:
        return 1;
    case TRC_REC_OP:
        return 2;
    case TRC_REC_COLLECTIVE:
        return 3;
    case TRC_REC_SYNC:
        return 5;
    default:
        return 4;
    }
}

static int cmp_rec(const void *x, const void *y)
{
    const sortrec *a = x, *b = y;
    if (a->r.cpu_start_ns != b->r.cpu_start_ns)
        return a->r.cpu_start_ns < b->r.cpu_start_ns ? -1 : 1;
    if (a->r.cpu_dur_ns != b->r.cpu_dur_ns) return a->r.cpu_dur_ns > b->r.cpu_dur_ns ? -1 : 1;
    int ka = kind_rank(a->r.kind), kb = kind_rank(b->r.kind);
    if (ka != kb) return ka - kb;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* t - t0 held within the trace's +-TRC_INT_MAX: both lie within +-TIME_LIMIT_NS, so the
 * difference does not overflow; a GPU activity decades away from its step is corrupt data, kept
 * readable rather than refused. */
static int64_t rel_ns(int64_t t, int64_t t0)
{
    int64_t d = t - t0;
    return d > TRC_INT_MAX ? TRC_INT_MAX : d < -TRC_INT_MAX ? -TRC_INT_MAX : d;
}

/* The record kind CPU event c with flags fl makes, or -1 for none: the outermost wait, loader
 * span or NCCL annotation, or a top-level op. */
static int cpu_rec_kind(const ev_cpu *c, uint8_t fl)
{
    if ((fl & F_WAIT) && !(fl & F_IN_WAIT)) return TRC_REC_WAIT;
    if ((fl & F_LOADER) && !(fl & F_IN_LOADER)) return TRC_REC_LOADER;
    if ((fl & F_NCCL) && !(fl & F_IN_NCCL)) return TRC_REC_COLLECTIVE;
    if (!c->annot && !(fl & (F_OP_ANCESTOR | F_IN_WAIT))) return TRC_REC_OP;
    return -1;
}

/* Adds CPU event i's record, of the given kind, on record thread `thread`. */
static int add_cpu_rec(builder *b, size_t i, int kind, int thread, int64_t t0)
{
    imp *m = b->m;
    const ev_cpu *c = &m->cpu.v[i];
    trc_record r;
    rec_init(&r, kind);
    r.thread = (uint8_t)thread;
    r.cpu_start_ns = c->ts - t0;
    r.cpu_dur_ns = c->dur;
    int32_t gid = c->name;
    if (kind == TRC_REC_OP) {
        /* its FLOPs and bytes are those of its kernels, added by share_costs */
        b->rec_of_cpu[i] = (int32_t)b->s->n_recs;
        if (touch_cpu(b, (int32_t)i)) return SIM_ENOMEM;
    } else if (kind == TRC_REC_COLLECTIVE) {
        const char *name = m->names[c->name];
        r.sub = (uint8_t)trc_coll_kind_from_name(name);
        const ev_cpu *p = comms_params(m, (int32_t)i);
        r.bytes = p && p->coll_bytes > 0 ? p->coll_bytes : c->in0_bytes;
        r.group_size = p && p->group_size > 0 ? p->group_size : m->world_size;
        gid = -1;
        b->rec_of_cpu[i] = (int32_t)b->s->n_recs;
        if (touch_cpu(b, (int32_t)i)) return SIM_ENOMEM;
    }
    return add_rec(b, &r, gid);
}

/* The first of the events base[lo..hi) (ev_cpu or ev_rt: `size` bytes each, the start time their
 * first member, sorted by it) that starts at or after ts. */
static size_t first_from(const void *base, size_t size, size_t lo, size_t hi, int64_t ts)
{
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int64_t t;
        memcpy(&t, (const char *)base + mid * size, sizeof t);
        if (t < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The records of step si's CPU events on the kept threads: waits, loader spans, top-level ops,
 * collectives. Only the step's window of each thread is read (an event is in step si only if it
 * starts inside it, see step_of). */
static int add_cpu_recs(builder *b, int32_t si)
{
    const imp *m = b->m;
    const ev_step *st = &m->steps.v[si];
    int64_t t0 = st->ts;
    for (size_t t = 0; t < m->n_thr; t++) {
        const thread_range *th = &m->thr[t];
        if (th->ordinal < 0) continue;
        for (size_t i = first_from(m->cpu.v, sizeof *m->cpu.v, th->begin, th->end, t0);
             i < th->end && (m->cpu.v[i].ts < t0 + st->dur || m->cpu.v[i].ts == t0);
             i++, trc_spill_tick(m->sp)) {
            const ev_cpu *c = &m->cpu.v[i];
            if (c->step != si) continue;
            int kind = cpu_rec_kind(c, m->cpu_flags[i]);
            if (kind < 0) continue;
            int rc = add_cpu_rec(b, i, kind, th->ordinal, t0);
            if (rc) return rc;
        }
    }
    return SIM_OK;
}

/* Adds the record of a synchronizing runtime call. */
static int add_sync_rec(builder *b, const ev_rt *rt, int thread, int64_t t0)
{
    trc_record r;
    rec_init(&r, TRC_REC_SYNC);
    r.thread = (uint8_t)thread;
    r.sub = rt->sync;
    r.cpu_start_ns = rt->ts - t0;
    r.cpu_dur_ns = rt->dur;
    return add_rec(b, &r, -1);
}

/* Widens the GPU span of collective record ci over the NCCL kernels of runtime call rt; 1 if it
 * had any. */
static int merge_nccl(builder *b, const ev_rt *rt, int32_t ci, int64_t t0)
{
    const imp *m = b->m;
    int merged = 0;
    for (int32_t k = 0; k < rt->n_gpu; k++) {
        const ev_gpu *g = &m->gpu.v[m->gpu_by_rt[rt->first_gpu + k]];
        if (g->kind != G_KERNEL || !trc_kernel_is_nccl(m->names[g->name])) continue;
        trc_record *cr = &b->s->recs[ci];
        int64_t a = rel_ns(g->ts, t0), e = rel_ns(a + g->dur, 0);
        if (cr->gpu_dur_ns < 0) {
            cr->gpu_start_ns = a;
            cr->gpu_dur_ns = e - a;
            cr->stream = g->stream;
        } else {
            int64_t a0 = cr->gpu_start_ns < a ? cr->gpu_start_ns : a;
            int64_t e0 = cr->gpu_start_ns + cr->gpu_dur_ns;
            if (e > e0) e0 = e;
            cr->gpu_start_ns = a0;
            cr->gpu_dur_ns = rel_ns(e0, a0);
        }
        merged = 1;
    }
    return merged;
}

/* The record kind of GPU activity g of runtime call rt (g NULL: the call's activity was not
 * recorded). */
static int gpu_rec_kind(const imp *m, const ev_rt *rt, const ev_gpu *g)
{
    int kind = g ? (g->kind == G_KERNEL   ? TRC_REC_KERNEL
                    : g->kind == G_MEMCPY ? TRC_REC_MEMCPY
                                          : TRC_REC_MEMSET)
                 : (rt->kind == RT_LAUNCH   ? TRC_REC_KERNEL
                    : rt->kind == RT_MEMCPY ? TRC_REC_MEMCPY
                                            : TRC_REC_MEMSET);
    if (g && kind == TRC_REC_KERNEL && trc_kernel_is_nccl(m->names[g->name]))
        kind = TRC_REC_COLLECTIVE;
    return kind;
}

/* Fills the fields of record r (of its kind) that come from GPU activity g (or NULL); returns
 * the global name id the record takes, -1 none. */
static int32_t gpu_rec_fields(imp *m, trc_record *r, const ev_gpu *g)
{
    int32_t gid = -1;
    if (r->kind == TRC_REC_KERNEL) {
        if (g) {
            gid = g->name;
            r->unit = (uint8_t)unit_of(m, g->name);
            r->blocks = g->blocks;
        } else {
            r->unit = SIM_UNIT_NONE;
        }
    } else if (r->kind == TRC_REC_MEMCPY) {
        r->sub = g ? g->dir : TRC_MEMCPY_OTHER;
        r->pinned = g ? g->pinned : -1;
        r->bytes = g ? (double)g->bytes : 0;
    } else if (r->kind == TRC_REC_MEMSET) {
        r->bytes = g ? (double)g->bytes : 0;
    } else if (r->kind == TRC_REC_COLLECTIVE) {
        const char *kn = m->names[g->name];
        const char *u = strchr(kn, '_');
        r->sub = (uint8_t)trc_coll_kind_from_name(u ? u + 1 : kn);
        r->group_size = m->world_size;
    }
    return gid;
}

/* Adds the record of the k-th GPU activity g (or NULL) of runtime call rt and, for a kernel, its
 * share of the cost of the op it serves. */
static int add_gpu_rec(builder *b, const ev_rt *rt, const ev_gpu *g, int32_t k, int thread,
                       int64_t t0)
{
    imp *m = b->m;
    trc_record r;
    rec_init(&r, gpu_rec_kind(m, rt, g));
    r.thread = (uint8_t)thread;
    r.cpu_start_ns = rt->ts - t0;
    r.cpu_dur_ns = k == 0 ? rt->dur : 0;
    if (g) {
        r.stream = g->stream;
        r.gpu_start_ns = rel_ns(g->ts, t0);
        r.gpu_dur_ns = g->dur;
    }
    int32_t gid = gpu_rec_fields(m, &r, g);
    int32_t rec_ix = (int32_t)b->s->n_recs;
    int rc = add_rec(b, &r, gid);
    if (rc) return rc;
    if (r.kind == TRC_REC_KERNEL && g && rt->cpu >= 0) {
        int cls = 0;
        int32_t op = cost_owner(m, rt->cpu, r.unit, &cls);
        if (op >= 0 && (rc = add_share(b, rec_ix, op, rt->cpu, cls, g->dur))) return rc;
    }
    return SIM_OK;
}

/* Adds the records of runtime call rt: a sync, or the GPU activities it caused (one record
 * without GPU side when none was recorded). */
static int add_call_recs(builder *b, const ev_rt *rt, int thread, int64_t t0)
{
    const imp *m = b->m;
    if (rt->kind == RT_SYNC) return add_sync_rec(b, rt, thread, t0);
    /* NCCL kernels launched inside an nccl:* annotation become that collective's GPU side */
    int32_t na = rt->cpu >= 0 ? nccl_ancestor(m, rt->cpu) : -1;
    int32_t ci = na >= 0 ? b->rec_of_cpu[na] : -1;
    if (ci >= 0 && b->s->recs[ci].kind != TRC_REC_COLLECTIVE) ci = -1;
    if (ci >= 0 && merge_nccl(b, rt, ci, t0) && rt->n_gpu == 1)
        return SIM_OK; /* nothing else to record for this call */
    int n = rt->n_gpu > 0 ? rt->n_gpu : 1;
    for (int32_t k = 0; k < n; k++) {
        const ev_gpu *g = rt->n_gpu > 0 ? &m->gpu.v[m->gpu_by_rt[rt->first_gpu + k]] : NULL;
        if (g && ci >= 0 && g->kind == G_KERNEL && trc_kernel_is_nccl(m->names[g->name]))
            continue; /* merged above */
        int rc = add_gpu_rec(b, rt, g, k, thread, t0);
        if (rc) return rc;
    }
    return SIM_OK;
}

/* The records of step si's runtime calls on the kept threads, in time order. */
static int add_rt_recs(builder *b, int32_t si)
{
    const imp *m = b->m;
    const ev_step *st = &m->steps.v[si];
    for (size_t i = first_from(m->rt.v, sizeof *m->rt.v, 0, m->rt.n, st->ts);
         i < m->rt.n && m->rt.v[i].ts < st->ts + st->dur + 1; i++, trc_spill_tick(m->sp)) {
        const ev_rt *rt = &m->rt.v[i];
        if (rt->step != si) continue;
        const thread_range *th = find_thread(b->m, rt->pid, rt->tid);
        if (!th || th->ordinal < 0) continue;
        int rc = add_call_recs(b, rt, th->ordinal, st->ts);
        if (rc) return rc;
    }
    return SIM_OK;
}

/* Kernel FLOPs and bytes: each op's cost split over its kernels by GPU time, and added up in the
 * top-level op that launched them. */
static void share_costs(builder *b)
{
    const imp *m = b->m;
    trc_step *s = b->s;
    for (size_t i = 0; i < b->n_shares; i++) {
        const struct share *sh = &b->shares[i];
        const ev_cpu *op = &m->cpu.v[sh->op];
        trc_record *kr = &s->recs[sh->rec];
        double total = b->grp[2 * sh->op + sh->cls];
        double w = kr->gpu_dur_ns > 0 ? (double)kr->gpu_dur_ns : 1.0;
        double f = total > 0 ? w / total : 0;
        kr->flops = sh->cls == 0 ? op->cost.flops * f : 0;
        kr->bytes = op->cost.bytes * f;
        for (int32_t c = sh->cpu; c >= 0; c = m->cpu.v[c].parent) {
            int32_t ri = b->rec_of_cpu[c];
            if (ri >= 0 && s->recs[ri].kind == TRC_REC_OP) {
                s->recs[ri].flops += kr->flops;
                s->recs[ri].bytes += kr->bytes;
                break;
            }
        }
    }
}

/* Orders the step's records by CPU start (cmp_rec; stable). */
static int sort_recs(trc_step *s)
{
    if (s->n_recs < 2) return SIM_OK;
    sortrec *tmp = malloc(s->n_recs * sizeof *tmp);
    if (!tmp) return SIM_ENOMEM;
    for (size_t i = 0; i < s->n_recs; i++)
        tmp[i] = (sortrec){s->recs[i], (uint32_t)i};
    qsort(tmp, s->n_recs, sizeof *tmp, cmp_rec);
    for (size_t i = 0; i < s->n_recs; i++)
        s->recs[i] = tmp[i].r;
    free(tmp);
    return SIM_OK;
}

/* Builds native step si into b->s. */
static int build_step(builder *b, int32_t si)
{
    const imp *m = b->m;
    trc_step *s = b->s;
    const ev_step *st = &m->steps.v[si];
    trc_step_reset(s);
    s->index = st->index;
    s->start_ns = st->ts - (m->has_trace_span ? m->trace_ts : m->min_ts);
    s->dur_ns = st->dur;
    int rc;
    if ((rc = add_cpu_recs(b, si)) || (rc = add_rt_recs(b, si))) return rc;
    share_costs(b);
    return sort_recs(s);
}

static void builder_reset(builder *b)
{
    for (size_t i = 0; i < b->n_touched; i++)
        b->m->local_name[b->touched[i]] = -1;
    b->n_touched = 0;
    for (size_t i = 0; i < b->n_touched_cpu; i++) {
        int32_t c = b->touched_cpu[i];
        b->rec_of_cpu[c] = -1;
        b->grp[2 * c] = b->grp[2 * c + 1] = 0;
    }
    b->n_touched_cpu = 0;
    b->n_shares = 0;
}

static void imp_free(imp *m)
{
    for (size_t i = 0; i < m->n_names; i++)
        free(m->names[i]);
    free(m->names);
    free(m->hash);
    free(m->ev.name);
    free(m->thr);
    free(m->unit_of_name);
    free(m->prec_of_name);
    free(m->local_name);
    trc_spill_fini(m->sp); /* the event tables and the other tables still allocated */
}

/* Counts the events dropped for their times into sum and applies the rule of trc_bad_time
 * (kineto.h): an error when one lies in a kept step or more than 1 % of GPU activities are. */
static int check_dropped(const imp *m, trc_kineto_summary *sum, sim_err *err, const char *path)
{
    int64_t gpu = 0;
    const ev_bad *in_step = NULL;
    for (size_t i = 0; i < m->bad.n; i++, trc_spill_tick(m->sp)) {
        const ev_bad *d = &m->bad.v[i];
        gpu += d->gpu;
        if (sum) sum->bad_time[d->reason]++;
        int32_t st = d->ts == INT64_MIN ? -1 : step_of(m, d->ts);
        if (!in_step && st >= 0 && m->steps.v[st].flag < 0) in_step = d;
    }
    if (sum) {
        sum->bad_gpu = gpu;
        sum->first_bad = m->bad.n ? m->bad.v[0].index : -1;
    }
    if (in_step)
        return sim_err_set(err, SIM_EINVAL, path, 0, 0,
                           "traceEvents[%lld] (%s) lies in a kept step: %zu events dropped for "
                           "unusable times; the steps would replay without them",
                           (long long)in_step->index, trc_kineto_bad_time_name(in_step->reason),
                           m->bad.n);
    /* more than 1 % of all GPU activities (dropped and kept) */
    if (gpu > 0 && (uint64_t)gpu * 100 > (uint64_t)gpu + m->gpu.n)
        return sim_err_set(err, SIM_EINVAL, path, 0, 0,
                           "%lld of %lld GPU activities dropped for unusable times (more than "
                           "1 %%), the first at traceEvents[%lld] (%s)",
                           (long long)gpu, (long long)(gpu + (int64_t)m->gpu.n),
                           (long long)m->bad.v[0].index,
                           trc_kineto_bad_time_name(m->bad.v[0].reason));
    return SIM_OK;
}

/* Marks the threads whose records are kept: the main thread, and every thread of the main
 * process that issues GPU work inside a step (PyTorch's autograd thread runs the backward). */
static int choose_threads(imp *m)
{
    int n = 0;
    thread_range *main = find_thread(m, m->main_pid, m->main_tid);
    if (main) main->ordinal = n++;
    for (size_t i = 0; i < m->rt.n; i++, trc_spill_tick(m->sp)) {
        const ev_rt *r = &m->rt.v[i];
        if (r->step < 0 || r->kind == RT_OTHER) continue;
        thread_range *th = find_thread(m, r->pid, r->tid);
        if (th && th->ordinal < 0 && n < 255) th->ordinal = n++;
    }
    return n;
}

/* ---- steps without ProfilerStep#N ---------------------------------------------------------- */

/* Smallest period p of names[0..n) whose longest run of names[i] == names[i + p] makes at least
 * two repetitions and covers more than half of the sequence (a warm-up iteration or a ragged
 * end may differ); *start and *len get the periodic stretch. 0 when there is none. */
static size_t find_period(const int32_t *names, size_t n, size_t *start, size_t *len)
{
    for (size_t p = 1; 2 * p <= n; p++) {
        size_t need = n / 2 + 1 > 2 * p ? n / 2 + 1 : 2 * p; /* kernels the stretch must cover */
        size_t run_min = need - p;
        /* every run that long contains [n - p - run_min, run_min): a cheap first test */
        int ok = 1;
        for (size_t i = n - p - run_min; ok && i < run_min; i++)
            ok = names[i] == names[i + p];
        if (!ok) continue;
        size_t best = 0, best_at = 0, cur = 0;
        for (size_t i = 0; i + p < n; i++) {
            cur = names[i] == names[i + p] ? cur + 1 : 0;
            if (cur > best) best = cur, best_at = i + 1 - cur;
        }
        if (best >= run_min) {
            *start = best_at;
            *len = best + p;
            return p;
        }
    }
    return 0;
}

/* End of the last recorded event, plus 1 ns so that an event ending there still lies inside. */
static int64_t trace_end(const imp *m)
{
    int64_t end = m->min_ts;
    for (size_t i = 0; i < m->cpu.n; i++, trc_spill_tick(m->sp))
        end = m->cpu.v[i].ts + m->cpu.v[i].dur > end ? m->cpu.v[i].ts + m->cpu.v[i].dur : end;
    for (size_t i = 0; i < m->rt.n; i++, trc_spill_tick(m->sp))
        end = m->rt.v[i].ts + m->rt.v[i].dur > end ? m->rt.v[i].ts + m->rt.v[i].dur : end;
    for (size_t i = 0; i < m->gpu.n; i++, trc_spill_tick(m->sp))
        end = m->gpu.v[i].ts + m->gpu.v[i].dur > end ? m->gpu.v[i].ts + m->gpu.v[i].dur : end;
    return end + 1;
}

/* The kernels in start order: their names, the start of the CPU call that launched each (the
 * kernel's own start when unlinked) and that call (-1). Returns the count, or -1 out of memory. */
static ptrdiff_t kernel_sequence(const imp *m, int32_t *names, int64_t *at, int32_t *rt)
{
    trc_spill_buf ord_sb = {0}, cx_sb = {0};
    int32_t *ord = table(m, &ord_sb, m->gpu.n, sizeof *ord);
    corr_ix *cx = table(m, &cx_sb, m->rt.n, sizeof *cx);
    size_t ncx = 0, n = 0;
    int ok = ord && cx && !order_gpu(m, 0, ord);
    for (size_t i = 0; ok && i < m->rt.n; i++, trc_spill_tick(m->sp))
        if (m->rt.v[i].kind == RT_LAUNCH && m->rt.v[i].corr >= 0)
            cx[ncx++] = (corr_ix){m->rt.v[i].corr, (int32_t)i};
    ok = ok && !sort_n(m, &cx_sb, ncx, sizeof *cx, cmp_corr);
    cx = cx_sb.base;
    for (size_t i = 0; ok && i < m->gpu.n; i++, trc_spill_tick(m->sp)) {
        const ev_gpu *g = &m->gpu.v[ord[i]];
        if (g->kind != G_KERNEL) continue;
        rt[n] = rt_of_corr(cx, ncx, g->corr);
        at[n] = rt[n] >= 0 ? m->rt.v[rt[n]].ts : g->ts;
        names[n++] = g->name;
    }
    trc_spill_release(m->sp, &ord_sb);
    trc_spill_release(m->sp, &cx_sb);
    return ok ? (ptrdiff_t)n : -1;
}

/* Of the p rotations of a repetition starting at start, the one after the longest CPU gap
 * between two launches (where a loop iteration ends: the data, the optimizer's sync), so that a
 * step begins where the training loop does; the start of the sequence wins outright. */
static size_t best_rotation(const int64_t *at, size_t start, size_t p)
{
    size_t best = 0;
    int64_t best_gap = -1;
    for (size_t r = 0; r < p; r++) {
        size_t i = start + r;
        int64_t gap = i == 0 ? INT64_MAX : at[i] - at[i - 1];
        if (gap > best_gap) best_gap = gap, best = r;
    }
    return best;
}

static int push_step(imp *m, int64_t ts, int64_t end, int64_t index, const ev_rt *launcher)
{
    ev_step s = {.ts = ts, .dur = end > ts ? end - ts : 1, .index = index, .flag = -1};
    if (launcher)
        s.pid = launcher->pid, s.tid = launcher->tid;
    else if (m->cpu.n)
        s.pid = m->cpu.v[0].pid, s.tid = m->cpu.v[0].tid;
    int ok;
    VEC_PUSH(m, m->steps, s, ok);
    return ok ? SIM_OK : SIM_ENOMEM;
}

/* Steps for a trace without ProfilerStep#N (torch.autograd.profiler, a loop without
 * prof.step()): one per repetition of the GPU kernel sequence when it repeats (find_period),
 * else the whole trace as one step. Each step runs from the launch of its first kernel to that
 * of the next step's. Sets m->step_source and m->period. */
static int make_steps(imp *m)
{
    trc_spill_buf names_sb = {0}, rt_sb = {0}, at_sb = {0};
    int32_t *names = table(m, &names_sb, m->gpu.n, sizeof *names);
    int32_t *rt = table(m, &rt_sb, m->gpu.n, sizeof *rt);
    int64_t *at = table(m, &at_sb, m->gpu.n, sizeof *at);
    ptrdiff_t nk = names && rt && at ? kernel_sequence(m, names, at, rt) : -1;
    int rc = nk < 0 ? SIM_ENOMEM : SIM_OK;
    size_t start = 0, len = 0, p = nk > 0 ? find_period(names, (size_t)nk, &start, &len) : 0;
    size_t r = p ? best_rotation(at, start, p) : 0, reps = p ? (len - r) / p : 0;
    int64_t end = trace_end(m);
    if (!rc && reps >= 2) {
        for (size_t j = 0; !rc && j < reps; j++) {
            size_t first = start + r + j * p, next = first + p;
            int32_t l = rt[first];
            rc = push_step(m, at[first], next < (size_t)nk ? at[next] : end, (int64_t)j,
                           l >= 0 ? &m->rt.v[l] : NULL);
        }
        m->step_source = TRC_STEPS_PERIOD;
        m->period = (int)p;
    } else if (!rc) {
        int32_t l = -1;
        for (ptrdiff_t i = 0; l < 0 && i < nk; i++)
            l = rt[i];
        rc = push_step(m, m->min_ts, end, 0, l >= 0 ? &m->rt.v[l] : NULL);
        m->step_source = TRC_STEPS_WHOLE;
    }
    trc_spill_release(m->sp, &names_sb);
    trc_spill_release(m->sp, &rt_sb);
    trc_spill_release(m->sp, &at_sb);
    return rc ? rc : trc_spill_flush(m->sp); /* the steps pushed */
}

/* An AMD GPU: a device named so, or HIP runtime calls (ROCm builds of PyTorch). */
static int is_amd(const imp *m)
{
    for (size_t i = 0; i < m->devs.n; i++) {
        const char *n = m->devs.v[i].name;
        if (strstr(n, "AMD") || strstr(n, "Radeon") || strstr(n, "Instinct") ||
            !strncmp(n, "gfx", 3))
            return 1;
    }
    return m->saw_hip;
}

/* What pass 1 found, into the summary. */
static void sum_parsed(trc_kineto_summary *sum, const imp *m)
{
    sum->events = m->events;
    sum->kept_events = (int64_t)(m->cpu.n + m->rt.n + m->gpu.n + m->steps.n);
    sum->gpu_events = (int64_t)m->gpu.n;
    sum->steps_found = (int)m->steps.n;
    sum->world_size = m->world_size;
    sum->rank = m->rank;
    snprintf(sum->source_schema, sizeof sum->source_schema, "%s",
             m->schema_old ? "kineto-old" : "kineto-new");
}

/* Refuses a document that is not a PyTorch profiler trace, a trace of an AMD GPU, and one
 * without GPU kernels. */
static int check_importable(const imp *m, const char *path, sim_err *err)
{
    if (!m->saw_trace_events)
        return sim_err_set(err, SIM_EINVAL, path, 0, 0,
                           "not a PyTorch profiler trace: the JSON has no 'traceEvents' list");
    if (is_amd(m))
        return sim_err_set(err, SIM_EINVAL, path, 0, 0,
                           "AMD GPUs are not modelled yet: the trace was recorded on '%s' (ROCm); "
                           "epochsim replays NVIDIA (CUDA) traces only",
                           m->devs.n ? m->devs.v[0].name : "a HIP device");
    if (m->gpu.n == 0)
        return sim_err_set(err, SIM_EINVAL, path, 0, 0,
                           "no GPU kernels in the trace: record with "
                           "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]");
    return SIM_OK;
}

/* Sets up builder b to build into step from m, and m's per-name tables for it. */
static int builder_init(builder *b, imp *m, trc_step *step)
{
    m->unit_of_name = malloc(m->n_names ? m->n_names : 1);
    m->prec_of_name = malloc(m->n_names ? m->n_names : 1);
    m->local_name = malloc((m->n_names ? m->n_names : 1) * sizeof *m->local_name);
    b->m = m;
    b->rec_of_cpu = table(m, &b->rec_of_cpu_sb, m->cpu.n, sizeof *b->rec_of_cpu);
    b->grp = table(m, &b->grp_sb, 2 * m->cpu.n, sizeof *b->grp);
    if (!m->unit_of_name || !m->prec_of_name || !m->local_name || !b->rec_of_cpu || !b->grp)
        return SIM_ENOMEM;
    memset(m->unit_of_name, -1, m->n_names ? m->n_names : 1);
    memset(m->prec_of_name, -1, m->n_names ? m->n_names : 1);
    for (size_t i = 0; i < m->n_names; i++)
        m->local_name[i] = -1;
    for (size_t i = 0; i < m->cpu.n; i++, trc_spill_tick(m->sp))
        b->rec_of_cpu[i] = -1;
    b->s = step;
    return SIM_OK;
}

/* Frees what builder_init and the steps built allocated in b. */
static void builder_free(builder *b)
{
    free(b->touched);
    free(b->touched_cpu);
    free(b->shares);
    if (!b->m) return;
    trc_spill_release(b->m->sp, &b->rec_of_cpu_sb);
    trc_spill_release(b->m->sp, &b->grp_sb);
}

/* Decides which steps are kept (all with opt->keep_warmup), lists the others in h->dropped and
 * returns the number kept; *first_kept gets the index of the first, -1 none. */
static int keep_steps(imp *m, const trc_kineto_options *opt, trc_header *h, int *first_kept)
{
    int kept = 0;
    *first_kept = -1;
    for (size_t i = 0; i < m->steps.n; i++) {
        if (opt->keep_warmup) m->steps.v[i].flag = -1;
        if (m->steps.v[i].flag < 0) {
            kept++;
            if (*first_kept < 0) *first_kept = (int)i;
        } else if (h->n_dropped < TRC_DROPPED_MAX) {
            h->dropped[h->n_dropped].index = m->steps.v[i].index;
            h->dropped[h->n_dropped].reason = m->steps.v[i].flag;
            h->n_dropped++;
        }
    }
    return kept;
}

/* The GPU most kernels ran on (of the first 64 device ids seen). */
static int64_t main_device(const imp *m)
{
    int64_t dev = m->gpu.v[0].device;
    int64_t ids[64], counts[64];
    int nd = 0;
    for (size_t i = 0; i < m->gpu.n; i++, trc_spill_tick(m->sp)) {
        int k = 0;
        while (k < nd && ids[k] != m->gpu.v[i].device)
            k++;
        if (k == nd) {
            if (nd == 64) continue;
            ids[nd] = m->gpu.v[i].device;
            counts[nd++] = 0;
        }
        counts[k]++;
    }
    for (int k = 0, best = -1; k < nd; k++)
        if (best < 0 || counts[k] > counts[best]) best = k, dev = ids[k];
    return dev;
}

/* The header's description of GPU dev from its device properties (or from the only device
 * listed, whatever its id). */
static void header_gpu(const imp *m, int64_t dev, trc_header *h)
{
    for (size_t i = 0; i < m->devs.n; i++) {
        if (m->devs.v[i].id != dev && m->devs.n > 1) continue;
        snprintf(h->gpu_name, sizeof h->gpu_name, "%s", m->devs.v[i].name);
        h->gpu_sms = (int)m->devs.v[i].sms;
        h->gpu_cc = (double)m->devs.v[i].cc_major + 0.1 * (double)m->devs.v[i].cc_minor;
        h->gpu_mem_bytes = m->devs.v[i].mem;
        break;
    }
}

/* What the trace recorded (TRC_HAS_*). */
static uint32_t recorded_mask(const imp *m)
{
    uint32_t has = TRC_HAS_KERNELS;
    for (size_t i = 0; i < m->cpu.n; i++, trc_spill_tick(m->sp)) {
        has |= m->cpu.v[i].annot ? 0 : TRC_HAS_CPU_OPS;
        has |= m->cpu.v[i].has_dims ? TRC_HAS_SHAPES : 0;
        uint8_t fl = m->cpu_flags[i];
        has |= fl & F_WAIT ? TRC_HAS_DATA_WAITS : 0;
        has |= fl & F_LOADER ? TRC_HAS_LOADER : 0;
        has |= fl & F_NCCL ? TRC_HAS_COLLECTIVES : 0;
    }
    for (size_t i = 0; i < m->gpu.n; i++, trc_spill_tick(m->sp)) {
        has |= m->gpu.v[i].kind != G_KERNEL ? TRC_HAS_MEMCPY : 0;
        has |= m->gpu.v[i].blocks ? TRC_HAS_BLOCKS : 0;
        if (m->gpu.v[i].kind == G_KERNEL && trc_kernel_is_nccl(m->names[m->gpu.v[i].name]))
            has |= TRC_HAS_COLLECTIVES;
    }
    for (size_t i = 0; i < m->rt.n; i++, trc_spill_tick(m->sp))
        has |= m->rt.v[i].kind == RT_SYNC ? TRC_HAS_SYNCS : 0;
    return has;
}

/* The rest of the header after the dropped steps: GPU, precision, batch size, ranks, the steps
 * kept, the importer and source, and what was recorded. */
static void fill_header(imp *m, const trc_kineto_options *opt, const char *in_path, int first_kept,
                        int kept, trc_header *h)
{
    header_gpu(m, main_device(m), h);
    infer_precision(m, h->precision, sizeof h->precision);
    if (opt->batch_size > 0) {
        h->batch_size = opt->batch_size;
        snprintf(h->batch_size_source, sizeof h->batch_size_source, "given to the importer");
    } else {
        infer_batch(m, first_kept, &h->batch_size, h->batch_size_source,
                    sizeof h->batch_size_source);
    }
    h->world_size = m->world_size;
    h->rank = m->rank;
    h->steps_recorded = kept;
    if (m->step_source == TRC_STEPS_PERIOD)
        snprintf(h->importer, sizeof h->importer, "epochsim %s kineto, steps: %d-kernel period",
                 EPOCHSIM_VERSION, m->period);
    else
        snprintf(h->importer, sizeof h->importer, "epochsim %s kineto%s", EPOCHSIM_VERSION,
                 m->step_source == TRC_STEPS_WHOLE ? ", steps: whole trace as one" : "");
    snprintf(h->source, sizeof h->source, "%s", opt->source_label ? opt->source_label : in_path);
    snprintf(h->source_schema, sizeof h->source_schema, "%s",
             m->schema_old ? "kineto-old" : "kineto-new");
    h->recorded = recorded_mask(m);
}

/* What the header says, into the summary. */
static void sum_header(trc_kineto_summary *sum, const trc_header *h, int threads)
{
    snprintf(sum->gpu_name, sizeof sum->gpu_name, "%s", h->gpu_name);
    sum->gpu_sms = h->gpu_sms;
    snprintf(sum->precision, sizeof sum->precision, "%s", h->precision);
    sum->batch_size = h->batch_size;
    snprintf(sum->batch_size_source, sizeof sum->batch_size_source, "%s", h->batch_size_source);
    sum->n_dropped = h->n_dropped;
    memcpy(sum->dropped, h->dropped, sizeof h->dropped);
    sum->threads = threads;
}

/* Builds each kept step and writes it to the native trace out_path under header h; with sum,
 * each step's figures go to sum->steps and the launch and op CPU times to their distributions. */
static int write_steps(builder *b, const trc_header *h, const char *out_path, const char *in_path,
                       trc_kineto_summary *sum, sim_err *err)
{
    const imp *m = b->m;
    trc_writer *w = NULL;
    trc_sample launch = {0}, ops = {0};
    int rc = trc_writer_open(out_path, h, &w, err);
    for (size_t i = 0; !rc && i < m->steps.n; i++) {
        if (m->steps.v[i].flag >= 0) continue;
        rc = build_step(b, (int32_t)i);
        builder_reset(b);
        if (rc) {
            rc = sim_err_set(err, rc, in_path, 0, 0, NO_ROOM " building step %lld",
                             (long long)m->steps.v[i].index);
            break;
        }
        if ((rc = trc_writer_step(w, b->s, err))) break;
        if (!sum) continue;
        if ((rc = trc_step_stats(b->s, &sum->steps[sum->n_steps])) ||
            (rc = trc_step_sample_cpu(b->s, &launch, &ops))) {
            rc = sim_err_set(err, rc, in_path, 0, 0, NO_ROOM);
            break;
        }
        sum->n_steps++;
    }
    if (!rc) {
        rc = trc_writer_close(w, err);
        w = NULL;
    }
    if (!rc && sum) {
        trc_sample_dist(&launch, &sum->launch_ns);
        trc_sample_dist(&ops, &sum->op_ns);
        sum->launch_median_ns = (int64_t)sum->launch_ns.p50;
    }
    trc_writer_abort(w);
    trc_sample_free(&launch);
    trc_sample_free(&ops);
    return rc;
}

/* Checks that the trace file is there; its size into the summary. */
static int stat_input(const char *path, trc_kineto_summary *sum, sim_err *err)
{
    struct stat stt;
    if (stat(path, &stt) != 0) {
        int e = errno;
        return sim_err_set(err, e == ENOENT ? SIM_ENOENT : SIM_EIO, path, 0, 0,
                           "cannot open the trace: %s", strerror(e));
    }
    if (sum) sum->file_bytes = (int64_t)stt.st_size;
    return SIM_OK;
}

/* GPU activities not linked to a runtime call. */
static int64_t unlinked_gpu(const imp *m)
{
    int64_t n = 0;
    for (size_t i = 0; i < m->gpu.n; i++, trc_spill_tick(m->sp))
        n += m->gpu.v[i].rt < 0;
    return n;
}

/* Pass 2 up to the steps' contents: steps made when the trace has none, links, conv output
 * sizes, the warm-up rules, the threads kept (their number into *threads). */
static int prepare_steps(imp *m, trc_kineto_summary *sum, int *threads, const char *in_path,
                         sim_err *err)
{
    int rc;
    if (m->steps.n == 0 && (rc = make_steps(m)))
        return sim_err_set(err, rc, in_path, 0, 0, NO_ROOM);
    if (sum) {
        sum->steps_found = (int)m->steps.n;
        sum->step_source = m->step_source;
        sum->period_kernels = m->period;
    }
    if ((rc = link_events(m, err, in_path))) return rc;
    finish_convs(m);
    if ((rc = flag_warmup(m, sum, err, in_path))) return rc;
    *threads = choose_threads(m);
    return SIM_OK;
}

int trc_kineto_import(const char *in_path, const char *out_path, const trc_kineto_options *opt,
                      trc_kineto_summary *sum, sim_err *err)
{
    trc_kineto_options defaults;
    trc_kineto_options_init(&defaults);
    if (!opt) opt = &defaults;
    if (sum) {
        memset(sum, 0, sizeof *sum);
        sum->first_bad = -1;
    }
    double t_start = now_s();
    imp m;
    memset(&m, 0, sizeof m);
    m.min_ts = INT64_MAX;
    m.world_size = 1;
    index_keys(&m);
    builder b;
    memset(&b, 0, sizeof b);
    trc_step step;
    memset(&step, 0, sizeof step);
    int rc = stat_input(in_path, sum, err);
    if (rc) return rc;
    m.sp = &m.spill;
    trc_spill_init(m.sp, SPILL_FILE_FROM, SPILL_BUDGET);
    rc = parse_json(&m, in_path, sum, err);
    if (sum) sum->parse_s = now_s() - t_start;
    if (rc) goto out;
    if (sum) sum_parsed(sum, &m);
    int threads = 0;
    if ((rc = check_importable(&m, in_path, err)) ||
        (rc = prepare_steps(&m, sum, &threads, in_path, err)))
        goto out;
    if (builder_init(&b, &m, &step)) {
        rc = sim_err_set(err, SIM_ENOMEM, in_path, 0, 0, NO_ROOM);
        goto out;
    }
    trc_header h;
    trc_header_init(&h);
    int first_kept;
    int kept = keep_steps(&m, opt, &h, &first_kept);
    if ((rc = check_dropped(&m, sum, err, in_path))) goto out;
    fill_header(&m, opt, in_path, first_kept, kept, &h);
    if (sum) sum_header(sum, &h, threads);
    if (kept == 0) {
        rc = sim_err_set(err, SIM_EINVAL, in_path, 0, 0,
                         "all %zu recorded steps look like profiler warm-up (GPU work held up "
                         "by unrecorded work, or missing); import with --keep-warmup to keep "
                         "them",
                         m.steps.n);
        goto out;
    }
    if (sum && !(sum->steps = calloc((size_t)kept, sizeof *sum->steps))) {
        rc = sim_err_set(err, SIM_ENOMEM, in_path, 0, 0, NO_ROOM);
        goto out;
    }
    if ((rc = write_steps(&b, &h, out_path, in_path, sum, err))) goto out;
    if (sum) {
        sum->steps_kept = kept;
        sum->unlinked_gpu = unlinked_gpu(&m);
    }
out:
    trc_step_free(&step);
    builder_free(&b);
    imp_free(&m);
    if (sum) sum->total_s = now_s() - t_start;
    return rc;
}

/* ---- a native trace for any trace path --------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

void trc_import_temp_drop(char *tmp)
{
    if (!tmp[0]) return;
    unlink(tmp);
    sim_outfile_untrack(tmp);
    tmp[0] = 0;
}

int trc_import_temp(const char *path, const char *tag, char *tmp, size_t tmp_size, sim_err *err)
{
    tmp[0] = 0;
    if (access(path, R_OK) != 0)
        return sim_err_set(err, SIM_ENOENT, path, 0, 0, "cannot read '%s'", path);
    if (!ends_with(path, ".json") && !ends_with(path, ".json.gz")) return SIM_OK;
    const char *dir = getenv("TMPDIR");
    snprintf(tmp, tmp_size, "%s/epochsim-%s-XXXXXX", dir && dir[0] ? dir : "/tmp", tag);
    int fd = sim_outfile_mkstemp(tmp);
    if (fd < 0) {
        tmp[0] = 0;
        return sim_err_set(err, SIM_EIO, NULL, 0, 0, "cannot make a temporary file to import '%s'",
                           path);
    }
    close(fd);
    int rc = trc_kineto_import(path, tmp, NULL, NULL, err);
    if (rc) trc_import_temp_drop(tmp);
    return rc;
}
