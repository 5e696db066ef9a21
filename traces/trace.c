/* trace.c — the native trace file: msgpack writer and streaming reader (see trace.h, FORMAT.md).
 * Every header/step/end payload travels in a CRC-32-checked `bin` frame, and every untrusted byte
 * range is walked by a bounded structure check before msgpack-c unpacks it, because msgpack-c
 * allocates a container's element array from its declared count before reading the elements. */
#include "traces/trace.h"

#include "sim/base/outfile.h"

#include "sim/core/workload.h"

#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* A frame larger than this is taken for a corrupt length (a step of a very large model has a
 * few hundred thousand records of ~40 bytes: ~10 MB). */
#define MAX_FRAME_BYTES ((size_t)1 << 30)
#define READ_CHUNK (64 * 1024)

static const char *const kind_names[TRC_REC_KIND_COUNT] = {
    "op", "kernel", "memcpy", "memset", "sync", "wait", "collective", "loader"};
static const char *const dir_names[] = {"h2d", "d2h", "d2d", "other"};
static const char *const sync_names[] = {"stream", "device", "event"};
static const char *const coll_names[TRC_COLL_KIND_COUNT] = {
    "all_reduce", "broadcast", "all_to_all", "all_gather", "reduce_scatter",
    "reduce",     "send_recv", "barrier",    "other"};
static const char *const drop_names[TRC_DROP_REASON_COUNT] = {"gpu_held_by_unrecorded_work",
                                                              "gpu_work_missing"};
static const struct {
    uint32_t bit;
    const char *name;
} has_names[] = {
    {TRC_HAS_CPU_OPS, "cpu_ops"},       {TRC_HAS_KERNELS, "kernels"},
    {TRC_HAS_MEMCPY, "memcpy"},         {TRC_HAS_SHAPES, "shapes"},
    {TRC_HAS_BLOCKS, "blocks"},         {TRC_HAS_SYNCS, "syncs"},
    {TRC_HAS_DATA_WAITS, "data_waits"}, {TRC_HAS_COLLECTIVES, "collectives"},
    {TRC_HAS_LOADER, "loader"},
};

/* The record schema (FORMAT.md, "Records"): after [kind, thread], the fields of each kind in
 * their order on disk. The writer and the reader both walk this one table. */
enum rec_field {
    RF_END,
    RF_NAME,
    RF_CPU_START,
    RF_CPU_DUR,
    RF_STREAM,
    RF_GPU_START,
    RF_GPU_DUR,
    RF_UNIT,
    RF_FLOPS,
    RF_BYTES,
    RF_BLOCKS,
    RF_DIR,
    RF_PINNED,
    RF_SYNC,
    RF_COLL,
    RF_GROUP_SIZE,
    RF_WORKER
};
#define REC_FIELDS_MAX 10
#define CPU_SPAN RF_CPU_START, RF_CPU_DUR
#define GPU_SPAN RF_STREAM, RF_GPU_START, RF_GPU_DUR
static const uint8_t rec_schema[TRC_REC_KIND_COUNT][REC_FIELDS_MAX + 1] = {
    [TRC_REC_OP] = {RF_NAME, CPU_SPAN, RF_FLOPS, RF_BYTES},
    [TRC_REC_KERNEL] = {RF_NAME, CPU_SPAN, GPU_SPAN, RF_UNIT, RF_FLOPS, RF_BYTES, RF_BLOCKS},
    [TRC_REC_MEMCPY] = {RF_DIR, RF_BYTES, RF_PINNED, CPU_SPAN, GPU_SPAN},
    [TRC_REC_MEMSET] = {RF_BYTES, CPU_SPAN, GPU_SPAN},
    [TRC_REC_SYNC] = {RF_SYNC, CPU_SPAN},
    [TRC_REC_WAIT] = {RF_NAME, CPU_SPAN},
    [TRC_REC_COLLECTIVE] = {RF_COLL, RF_BYTES, RF_GROUP_SIZE, CPU_SPAN, GPU_SPAN},
    [TRC_REC_LOADER] = {RF_NAME, CPU_SPAN, RF_WORKER},
};
#undef CPU_SPAN
#undef GPU_SPAN
/* How each field is held in trc_record and packed, and the bounds the reader checks (numbers:
 * within [0, TRC_NUM_MAX]; RF_NAME: up to the step's last name). */
enum { FT_U8, FT_I8, FT_I32, FT_I64, FT_NUM };
static const struct {
    size_t off; /* the member of trc_record */
    uint8_t type;
    int64_t lo, hi;
    const char *bad; /* what the reader says of a value out of bounds */
} rec_fields[] = {
    [RF_NAME] = {offsetof(trc_record, name), FT_I32, -1, 0, "bad name index"},
    [RF_CPU_START] = {offsetof(trc_record, cpu_start_ns), FT_I64, -TRC_INT_MAX, TRC_INT_MAX,
                      "bad cpu_start_ns"},
    [RF_CPU_DUR] = {offsetof(trc_record, cpu_dur_ns), FT_I64, 0, TRC_INT_MAX, "bad cpu_dur_ns"},
    [RF_STREAM] = {offsetof(trc_record, stream), FT_I32, -1, INT32_MAX, "bad stream"},
    [RF_GPU_START] = {offsetof(trc_record, gpu_start_ns), FT_I64, -TRC_INT_MAX, TRC_INT_MAX,
                      "bad gpu_start_ns"},
    [RF_GPU_DUR] = {offsetof(trc_record, gpu_dur_ns), FT_I64, -1, TRC_INT_MAX, "bad gpu_dur_ns"},
    [RF_UNIT] = {offsetof(trc_record, unit), FT_U8, 0, SIM_UNIT_MEMORY, "bad unit"},
    [RF_FLOPS] = {offsetof(trc_record, flops), FT_NUM, 0, 0, "bad flops"},
    [RF_BYTES] = {offsetof(trc_record, bytes), FT_NUM, 0, 0, "bad bytes"},
    [RF_BLOCKS] = {offsetof(trc_record, blocks), FT_I64, 0, TRC_INT_MAX, "bad blocks"},
    [RF_DIR] = {offsetof(trc_record, sub), FT_U8, 0, TRC_MEMCPY_OTHER, "bad copy direction"},
    [RF_PINNED] = {offsetof(trc_record, pinned), FT_I8, -1, 1, "bad pinned flag"},
    [RF_SYNC] = {offsetof(trc_record, sub), FT_U8, 0, TRC_SYNC_EVENT, "bad sync kind"},
    [RF_COLL] = {offsetof(trc_record, sub), FT_U8, 0, TRC_COLL_KIND_COUNT - 1,
                 "bad collective kind"},
    [RF_GROUP_SIZE] = {offsetof(trc_record, group_size), FT_I32, 0, INT32_MAX, "bad group size"},
    [RF_WORKER] = {offsetof(trc_record, worker), FT_I32, -1, INT32_MAX, "bad worker"},
};

/* Fields a record of this kind has on disk, [kind, thread] included. */
static unsigned rec_size(unsigned kind)
{
    unsigned n = 2;
    while (rec_schema[kind][n - 2] != RF_END)
        n++;
    return n;
}

const char *trc_rec_kind_name(int kind)
{
    return kind >= 0 && kind < TRC_REC_KIND_COUNT ? kind_names[kind] : "?";
}
const char *trc_memcpy_dir_name(int dir)
{
    return dir >= 0 && dir <= TRC_MEMCPY_OTHER ? dir_names[dir] : "?";
}
const char *trc_sync_kind_name(int kind)
{
    return kind >= 0 && kind <= TRC_SYNC_EVENT ? sync_names[kind] : "?";
}
const char *trc_coll_kind_name(int kind)
{
    return kind >= 0 && kind < TRC_COLL_KIND_COUNT ? coll_names[kind] : "?";
}
const char *trc_drop_reason_name(int reason)
{
    return reason >= 0 && reason < TRC_DROP_REASON_COUNT ? drop_names[reason] : "?";
}

void trc_header_init(trc_header *h)
{
    memset(h, 0, sizeof *h);
    h->version = TRC_FORMAT_VERSION;
    snprintf(h->precision, sizeof h->precision, "unknown");
    h->world_size = 1;
    h->steps_recorded = -1;
}

/* ---- steps --------------------------------------------------------------------------------- */

int trc_step_add(trc_step *s, const trc_record *r)
{
    if (s->n_recs == s->cap_recs) {
        size_t cap = s->cap_recs ? 2 * s->cap_recs : 256;
        trc_record *recs = realloc(s->recs, cap * sizeof *recs);
        if (!recs) return SIM_ENOMEM;
        s->recs = recs;
        s->cap_recs = cap;
    }
    s->recs[s->n_recs++] = *r;
    return SIM_OK;
}

int trc_step_add_name(trc_step *s, const char *name)
{
    if (s->n_names == s->cap_names) {
        size_t cap = s->cap_names ? 2 * s->cap_names : 64;
        char **names = realloc(s->names, cap * sizeof *names);
        if (!names) return SIM_ENOMEM;
        s->names = names;
        s->cap_names = cap;
    }
    char *copy = strdup(name);
    if (!copy) return SIM_ENOMEM;
    s->names[s->n_names] = copy;
    return (int)s->n_names++;
}

int trc_step_intern_name(trc_step *s, const char *name)
{
    for (size_t i = 0; i < s->n_names; i++)
        if (!strcmp(s->names[i], name)) return (int)i;
    return trc_step_add_name(s, name);
}

void trc_step_reset(trc_step *s)
{
    for (size_t i = 0; i < s->n_names; i++)
        free(s->names[i]);
    s->n_names = 0;
    s->n_recs = 0;
    s->index = s->start_ns = s->dur_ns = 0;
}

void trc_step_free(trc_step *s)
{
    trc_step_reset(s);
    free(s->names);
    free(s->recs);
    memset(s, 0, sizeof *s);
}

const char *trc_step_rec_name(const trc_step *s, const trc_record *r)
{
    if (r->name < 0 || (size_t)r->name >= s->n_names) return "";
    return s->names[r->name];
}

/* ---- writer -------------------------------------------------------------------------------- */

struct trc_writer {
    sim_outfile out;  /* whole or nothing (sim/base/outfile.h) */
    long long offset; /* bytes written so far */
    int failed;       /* a write failed; close reports it */
    msgpack_sbuffer payload;
    long long steps;
    long long records;
};

static int file_write(void *data, const char *buf, size_t len)
{
    trc_writer *w = data;
    if (w->failed) return -1;
    if (len && fwrite(buf, 1, len, w->out.fp) != len) {
        w->failed = errno ? errno : EIO;
        return -1;
    }
    w->offset += (long long)len;
    return 0;
}

static void pack_cstr(msgpack_packer *pk, const char *s)
{
    size_t n = strlen(s);
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}

static void pack_kv_str(msgpack_packer *pk, const char *k, const char *v)
{
    pack_cstr(pk, k);
    pack_cstr(pk, v);
}

static void pack_kv_int(msgpack_packer *pk, const char *k, int64_t v)
{
    pack_cstr(pk, k);
    msgpack_pack_int64(pk, v);
}

/* Writes the frame [kind, crc32(payload), bin payload] for the payload in w->payload. */
static int write_frame(trc_writer *w, const char *kind, sim_err *err)
{
    msgpack_packer pk;
    msgpack_packer_init(&pk, w, file_write);
    uLong crc = crc32(0L, (const Bytef *)w->payload.data, (uInt)w->payload.size);
    msgpack_pack_array(&pk, 3);
    pack_cstr(&pk, kind);
    msgpack_pack_uint32(&pk, (uint32_t)crc);
    msgpack_pack_bin(&pk, w->payload.size);
    msgpack_pack_bin_body(&pk, w->payload.data, w->payload.size);
    if (w->failed)
        return sim_err_set(err, SIM_EIO, w->out.path, 0, 0, "cannot write trace: %s",
                           strerror(w->failed));
    return SIM_OK;
}

static void pack_header(msgpack_packer *pk, const trc_header *h)
{
    int n_has = 0;
    for (size_t i = 0; i < sizeof has_names / sizeof has_names[0]; i++)
        n_has += (h->recorded & has_names[i].bit) != 0;
    msgpack_pack_map(pk, 17);
    pack_kv_str(pk, "format", TRC_FORMAT_NAME);
    pack_kv_str(pk, "gpu_name", h->gpu_name);
    pack_kv_int(pk, "gpu_sms", h->gpu_sms);
    pack_cstr(pk, "gpu_cc");
    msgpack_pack_double(pk, h->gpu_cc);
    pack_kv_int(pk, "gpu_mem_bytes", h->gpu_mem_bytes);
    pack_kv_str(pk, "cpu_model", h->cpu_model);
    pack_kv_str(pk, "precision", h->precision);
    pack_kv_int(pk, "batch_size", h->batch_size);
    pack_kv_str(pk, "batch_size_source", h->batch_size_source);
    pack_kv_int(pk, "world_size", h->world_size);
    pack_kv_int(pk, "rank", h->rank);
    pack_kv_int(pk, "steps_recorded", h->steps_recorded);
    pack_cstr(pk, "recorded");
    msgpack_pack_array(pk, (size_t)n_has);
    for (size_t i = 0; i < sizeof has_names / sizeof has_names[0]; i++)
        if (h->recorded & has_names[i].bit) pack_cstr(pk, has_names[i].name);
    pack_kv_str(pk, "importer", h->importer);
    pack_kv_str(pk, "source", h->source);
    pack_kv_str(pk, "source_schema", h->source_schema);
    pack_cstr(pk, "dropped_steps");
    int nd = h->n_dropped < 0 ? 0 : h->n_dropped > TRC_DROPPED_MAX ? TRC_DROPPED_MAX : h->n_dropped;
    msgpack_pack_array(pk, (size_t)nd);
    for (int i = 0; i < nd; i++) {
        msgpack_pack_array(pk, 2);
        msgpack_pack_int64(pk, h->dropped[i].index);
        pack_cstr(pk, trc_drop_reason_name(h->dropped[i].reason));
    }
}

int trc_writer_open(const char *path, const trc_header *h, trc_writer **out, sim_err *err)
{
    *out = NULL;
    trc_writer *w = calloc(1, sizeof *w);
    if (!w) return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    msgpack_sbuffer_init(&w->payload);
    int rc = sim_outfile_open(&w->out, path, err);
    if (rc) {
        msgpack_sbuffer_destroy(&w->payload);
        free(w);
        return rc;
    }
    msgpack_packer pk;
    msgpack_packer_init(&pk, w, file_write);
    pack_cstr(&pk, TRC_FORMAT_NAME);
    msgpack_pack_uint32(&pk, TRC_FORMAT_VERSION);
    msgpack_packer pp;
    msgpack_packer_init(&pp, &w->payload, msgpack_sbuffer_write);
    pack_header(&pp, h);
    if ((rc = write_frame(w, "header", err))) {
        trc_writer_abort(w);
        return rc;
    }
    *out = w;
    return SIM_OK;
}

/* Packs field f of r with the packer of its type. */
static void pack_field(msgpack_packer *pk, const trc_record *r, unsigned f)
{
    const char *p = (const char *)r + rec_fields[f].off;
    switch (rec_fields[f].type) {
    case FT_U8:
        msgpack_pack_uint8(pk, *(const uint8_t *)p);
        break;
    case FT_I8:
        msgpack_pack_int8(pk, *(const int8_t *)p);
        break;
    case FT_I32:
        msgpack_pack_int32(pk, *(const int32_t *)p);
        break;
    case FT_I64:
        msgpack_pack_int64(pk, *(const int64_t *)p);
        break;
    default:
        msgpack_pack_double(pk, *(const double *)p);
        break;
    }
}

static void pack_rec(msgpack_packer *pk, const trc_record *r)
{
    msgpack_pack_array(pk, rec_size(r->kind));
    msgpack_pack_uint8(pk, r->kind);
    msgpack_pack_uint8(pk, r->thread);
    for (const uint8_t *f = rec_schema[r->kind]; *f != RF_END; f++)
        pack_field(pk, r, *f);
}

int trc_writer_step(trc_writer *w, const trc_step *s, sim_err *err)
{
    for (size_t i = 0; i < s->n_recs; i++) {
        const trc_record *r = &s->recs[i];
        if (r->kind >= TRC_REC_KIND_COUNT)
            return sim_err_set(err, SIM_EINVAL, w->out.path, 0, 0,
                               "step %lld: record %zu has unknown kind %d", (long long)s->index, i,
                               r->kind);
        if (r->name >= 0 && (size_t)r->name >= s->n_names)
            return sim_err_set(err, SIM_EINVAL, w->out.path, 0, 0,
                               "step %lld: record %zu names entry %d of %zu", (long long)s->index,
                               i, r->name, s->n_names);
    }
    msgpack_sbuffer_clear(&w->payload);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &w->payload, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 5);
    pack_kv_int(&pk, "index", s->index);
    pack_kv_int(&pk, "start_ns", s->start_ns);
    pack_kv_int(&pk, "dur_ns", s->dur_ns);
    pack_cstr(&pk, "names");
    msgpack_pack_array(&pk, s->n_names);
    for (size_t i = 0; i < s->n_names; i++)
        pack_cstr(&pk, s->names[i]);
    pack_cstr(&pk, "records");
    msgpack_pack_array(&pk, s->n_recs);
    for (size_t i = 0; i < s->n_recs; i++)
        pack_rec(&pk, &s->recs[i]);
    if (w->payload.size > MAX_FRAME_BYTES)
        return sim_err_set(err, SIM_EINVAL, w->out.path, 0, 0,
                           "step %lld encodes to %zu bytes, more than a frame may hold",
                           (long long)s->index, w->payload.size);
    int rc = write_frame(w, "step", err);
    if (rc) return rc;
    w->steps++;
    w->records += (long long)s->n_recs;
    return SIM_OK;
}

int trc_writer_close(trc_writer *w, sim_err *err)
{
    msgpack_sbuffer_clear(&w->payload);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &w->payload, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 2);
    pack_kv_int(&pk, "steps", w->steps);
    pack_kv_int(&pk, "records", w->records);
    int rc = write_frame(w, "end", err);
    if (rc) {
        trc_writer_abort(w);
        return rc;
    }
    rc = sim_outfile_commit(&w->out, err);
    trc_writer_abort(w); /* frees what is left */
    return rc;
}

void trc_writer_abort(trc_writer *w)
{
    if (!w) return;
    sim_outfile_abort(&w->out);
    msgpack_sbuffer_destroy(&w->payload);
    free(w);
}

/* ---- bounded structure check ---------------------------------------------------------------- */

/* Big-endian unsigned integer of n bytes. */
static uint64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

enum { SCAN_INVALID = -1, SCAN_MORE = 0 };

/* The header of a msgpack object by its type byte: bytes of a length field after the type byte,
 * raw body bytes, child objects (with a length field: as many as it says) and objects per child
 * entry (maps hold two). */
typedef struct mp_shape {
    uint8_t valid, lenbytes, body, kids, kidsmul;
} mp_shape;

/* Type bytes 0xc0 .. 0xdf; 0xc1 is never used. */
static const mp_shape shapes_c0[32] = {
    [0x00] = {1, 0, 0, 0, 1},  /* nil */
    [0x02] = {1, 0, 0, 0, 1},  /* false */
    [0x03] = {1, 0, 0, 0, 1},  /* true */
    [0x04] = {1, 1, 0, 0, 1},  /* bin8 */
    [0x05] = {1, 2, 0, 0, 1},  /* bin16 */
    [0x06] = {1, 4, 0, 0, 1},  /* bin32 */
    [0x07] = {1, 1, 1, 0, 1},  /* ext8: + type byte */
    [0x08] = {1, 2, 1, 0, 1},  /* ext16 */
    [0x09] = {1, 4, 1, 0, 1},  /* ext32 */
    [0x0a] = {1, 0, 4, 0, 1},  /* float32 */
    [0x0b] = {1, 0, 8, 0, 1},  /* float64 */
    [0x0c] = {1, 0, 1, 0, 1},  /* uint8 */
    [0x0d] = {1, 0, 2, 0, 1},  /* uint16 */
    [0x0e] = {1, 0, 4, 0, 1},  /* uint32 */
    [0x0f] = {1, 0, 8, 0, 1},  /* uint64 */
    [0x10] = {1, 0, 1, 0, 1},  /* int8 */
    [0x11] = {1, 0, 2, 0, 1},  /* int16 */
    [0x12] = {1, 0, 4, 0, 1},  /* int32 */
    [0x13] = {1, 0, 8, 0, 1},  /* int64 */
    [0x14] = {1, 0, 2, 0, 1},  /* fixext1 */
    [0x15] = {1, 0, 3, 0, 1},  /* fixext2 */
    [0x16] = {1, 0, 5, 0, 1},  /* fixext4 */
    [0x17] = {1, 0, 9, 0, 1},  /* fixext8 */
    [0x18] = {1, 0, 17, 0, 1}, /* fixext16 */
    [0x19] = {1, 1, 0, 0, 1},  /* str8 */
    [0x1a] = {1, 2, 0, 0, 1},  /* str16 */
    [0x1b] = {1, 4, 0, 0, 1},  /* str32 */
    [0x1c] = {1, 2, 0, 1, 1},  /* array16 */
    [0x1d] = {1, 4, 0, 1, 1},  /* array32 */
    [0x1e] = {1, 2, 0, 1, 2},  /* map16 */
    [0x1f] = {1, 4, 0, 1, 2},  /* map32 */
};

/* The shape of type byte c; valid 0 for the unused 0xc1. The fix types carry their count in the
 * type byte: kids (fixmap, fixarray) or body (fixstr) are set here, with lenbytes 0. */
static mp_shape shape_of(unsigned c, uint64_t *fixed)
{
    *fixed = 0;
    if (c <= 0x7f || c >= 0xe0) /* positive and negative fixint */
        return (mp_shape){1, 0, 0, 0, 1};
    if ((c & 0xf0) == 0x80) { /* fixmap */
        *fixed = c & 0x0f;
        return (mp_shape){1, 0, 0, 1, 2};
    }
    if ((c & 0xf0) == 0x90) { /* fixarray */
        *fixed = c & 0x0f;
        return (mp_shape){1, 0, 0, 1, 1};
    }
    if ((c & 0xe0) == 0xa0) { /* fixstr */
        *fixed = c & 0x1f;
        return (mp_shape){1, 0, 0, 0, 1};
    }
    return shapes_c0[c - 0xc0];
}

/* Walks the first msgpack object in buf[0..len) without allocating. Returns its size in bytes,
 * SCAN_MORE when buf ends inside it, or SCAN_INVALID (with *bad = offset of the bad byte) for a
 * reserved type byte or a container declaring more elements than `limit` bytes could hold (each
 * element takes at least one byte; `limit` is what is left of the file or the payload). */
static long long scan_object(const unsigned char *buf, size_t len, size_t limit, size_t *bad)
{
    size_t pos = 0;
    uint64_t pending = 1; /* objects still to walk */
    while (pending > 0) {
        if (pos >= len) return SCAN_MORE;
        uint64_t fixed;
        mp_shape sh = shape_of(buf[pos], &fixed);
        if (!sh.valid) {
            *bad = pos;
            return SCAN_INVALID;
        }
        size_t head = 1 + sh.lenbytes;
        uint64_t body = sh.body, kids = 0;
        uint64_t n = fixed;
        if (sh.lenbytes) {
            if (pos + head > len) return SCAN_MORE;
            n = be(buf + pos + 1, sh.lenbytes);
        }
        if (sh.kids)
            kids = n * sh.kidsmul;
        else
            body += n;
        if (body > limit || pos + head + body > limit || kids > limit - pos - head) {
            *bad = pos;
            return SCAN_INVALID;
        }
        pos += head;
        if (body) {
            if (pos + body > len) return SCAN_MORE;
            pos += (size_t)body;
        }
        pending = pending - 1 + kids;
        if (pending > limit) {
            *bad = pos;
            return SCAN_INVALID;
        }
    }
    return (long long)pos;
}

/* ---- reader -------------------------------------------------------------------------------- */

struct trc_reader {
    FILE *f;
    char *path;
    long long file_size;
    long long fed;       /* bytes handed to the unpacker */
    long long obj_start; /* file offset of the object last returned by next_object */
    int eof;
    msgpack_unpacker up;
    msgpack_unpacked top;     /* the last top-level object */
    msgpack_unpacked payload; /* the decoded payload of the last frame */
    trc_header header;
    trc_step step;
    long long steps_read;
    long long records_read;
    int done; /* the end frame was read */
    char *name_buf;
    size_t name_cap;
};

/* Reads the next top-level object into r->top. Returns 1, 0 at a clean end of file, or an error. */
static int next_object(trc_reader *r, sim_err *err)
{
    for (;;) {
        size_t unparsed = r->up.used - r->up.off;
        long long start = r->fed - (long long)unparsed;
        if (unparsed > 0) {
            size_t bad = 0;
            size_t limit = (size_t)(r->file_size - start);
            if (limit > MAX_FRAME_BYTES) limit = MAX_FRAME_BYTES;
            long long n =
                scan_object((const unsigned char *)r->up.buffer + r->up.off, unparsed, limit, &bad);
            if (n == SCAN_INVALID)
                return sim_err_set_offset(err, SIM_EFORMAT, r->path, start + (long long)bad,
                                          "corrupt trace: bad msgpack data");
            if (n > 0) {
                msgpack_unpack_return ur = msgpack_unpacker_next(&r->up, &r->top);
                if (ur == MSGPACK_UNPACK_SUCCESS) {
                    r->obj_start = start;
                    return 1;
                }
                if (ur == MSGPACK_UNPACK_NOMEM_ERROR)
                    return sim_err_set_offset(err, SIM_ENOMEM, r->path, start,
                                              "out of memory reading the trace");
                return sim_err_set_offset(err, SIM_EFORMAT, r->path, start,
                                          "corrupt trace: bad msgpack data");
            }
        }
        if (r->eof) {
            if (unparsed == 0) return 0;
            return sim_err_set_offset(err, SIM_EFORMAT, r->path, start,
                                      "truncated trace: the object starting here ends at the "
                                      "end of the file (%lld bytes)",
                                      r->file_size);
        }
        if (!msgpack_unpacker_reserve_buffer(&r->up, READ_CHUNK))
            return sim_err_set_offset(err, SIM_ENOMEM, r->path, r->fed,
                                      "out of memory reading the trace");
        size_t got = fread(msgpack_unpacker_buffer(&r->up), 1, READ_CHUNK, r->f);
        if (got < READ_CHUNK) {
            if (ferror(r->f))
                return sim_err_set_offset(err, SIM_EIO, r->path, r->fed + (long long)got,
                                          "cannot read the trace: %s", strerror(errno));
            r->eof = 1;
        }
        msgpack_unpacker_buffer_consumed(&r->up, got);
        r->fed += (long long)got;
        if (r->fed > r->file_size) r->file_size = r->fed; /* the file grew while we read it */
    }
}

static int obj_is_str(const msgpack_object *o, const char *s)
{
    size_t n = strlen(s);
    return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n && !memcmp(o->via.str.ptr, s, n);
}

/* Reads a frame [kind, crc, bin] of the expected kind (or, with kind2, either) and decodes its
 * payload into r->payload. *which is 0 for kind, 1 for kind2. */
static int read_frame(trc_reader *r, const char *kind, const char *kind2, int *which, sim_err *err)
{
    int rc = next_object(r, err);
    if (rc < 0) return rc;
    if (rc == 0)
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, r->fed,
                                  "truncated trace: the file ends before its '%s' frame",
                                  kind2 ? kind2 : kind);
    const msgpack_object *o = &r->top.data;
    long long at = r->obj_start;
    if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 3 ||
        o->via.array.ptr[0].type != MSGPACK_OBJECT_STR ||
        o->via.array.ptr[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
        o->via.array.ptr[2].type != MSGPACK_OBJECT_BIN)
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                  "corrupt trace: expected a frame [kind, crc32, payload]");
    const msgpack_object *k = &o->via.array.ptr[0];
    if (obj_is_str(k, kind))
        *which = 0;
    else if (kind2 && obj_is_str(k, kind2))
        *which = 1;
    else
        return sim_err_set_offset(
            err, SIM_EFORMAT, r->path, at, "corrupt trace: expected a '%s' frame, found '%.*s'",
            kind, (int)(k->via.str.size > 32 ? 32 : k->via.str.size), k->via.str.ptr);
    const char *data = o->via.array.ptr[2].via.bin.ptr;
    uint32_t size = o->via.array.ptr[2].via.bin.size;
    uint64_t want = o->via.array.ptr[1].via.u64;
    uLong crc = crc32(0L, (const Bytef *)data, size);
    if (crc != want)
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                  "corrupt trace: checksum mismatch in the '%s' frame of %u "
                                  "payload bytes starting here (stored %08llx, computed %08lx)",
                                  *which ? kind2 : kind, size, (unsigned long long)want,
                                  (unsigned long)crc);
    size_t bad = 0;
    long long n = scan_object((const unsigned char *)data, size, size, &bad);
    if (n != (long long)size)
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                  "corrupt trace: the payload of this frame is not one msgpack "
                                  "object");
    size_t off = 0;
    msgpack_unpack_return ur = msgpack_unpack_next(&r->payload, data, size, &off);
    if (ur != MSGPACK_UNPACK_SUCCESS || off != size)
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                  "corrupt trace: cannot decode the payload of this frame");
    if (r->payload.data.type != MSGPACK_OBJECT_MAP)
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                  "corrupt trace: a frame payload must be a map");
    return SIM_OK;
}

static const msgpack_object *map_get(const msgpack_object *map, const char *key)
{
    for (uint32_t i = 0; i < map->via.map.size; i++)
        if (obj_is_str(&map->via.map.ptr[i].key, key)) return &map->via.map.ptr[i].val;
    return NULL;
}

static int obj_int(const msgpack_object *o, int64_t *v)
{
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        if (o->via.u64 > INT64_MAX) return 0;
        *v = (int64_t)o->via.u64;
        return 1;
    }
    if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
        *v = o->via.i64;
        return 1;
    }
    return 0;
}

static int obj_num(const msgpack_object *o, double *v)
{
    int64_t i;
    if (obj_int(o, &i)) {
        *v = (double)i;
        return 1;
    }
    if (o->type == MSGPACK_OBJECT_FLOAT32 || o->type == MSGPACK_OBJECT_FLOAT64) {
        *v = o->via.f64;
        return 1;
    }
    return 0;
}

/* Copies a string value into buf (truncating); 0 if o is not a string. */
static int obj_str(const msgpack_object *o, char *buf, size_t cap)
{
    if (o->type != MSGPACK_OBJECT_STR) return 0;
    size_t n = o->via.str.size < cap - 1 ? o->via.str.size : cap - 1;
    memcpy(buf, o->via.str.ptr, n);
    buf[n] = 0;
    return 1;
}

static int parse_header(trc_reader *r, const msgpack_object *m, long long at, sim_err *err)
{
    trc_header *h = &r->header;
    int version = h->version;
    trc_header_init(h);
    h->version = version;
    const msgpack_object *v;
    char fmt[64];
    if (!(v = map_get(m, "format")) || !obj_str(v, fmt, sizeof fmt) ||
        strcmp(fmt, TRC_FORMAT_NAME) != 0)
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                  "corrupt trace: the header does not name the format");
#define GET_STR(key, field)                                                                        \
    if ((v = map_get(m, key)) && !obj_str(v, h->field, sizeof h->field))                           \
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,                                   \
                                  "bad trace header: '%s' must be a string", key);
#define GET_INT(key, field)                                                                        \
    if ((v = map_get(m, key))) {                                                                   \
        int64_t x;                                                                                 \
        if (!obj_int(v, &x) || x < INT32_MIN || x > INT32_MAX)                                     \
            return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,                               \
                                      "bad trace header: '%s' must be an integer", key);           \
        h->field = (int)x;                                                                         \
    }
    GET_STR("gpu_name", gpu_name);
    GET_INT("gpu_sms", gpu_sms);
    if ((v = map_get(m, "gpu_cc")) && !obj_num(v, &h->gpu_cc))
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                  "bad trace header: 'gpu_cc' must be a number");
    if ((v = map_get(m, "gpu_mem_bytes")) && !obj_int(v, &h->gpu_mem_bytes))
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                  "bad trace header: 'gpu_mem_bytes' must be an integer");
    GET_STR("cpu_model", cpu_model);
    GET_STR("precision", precision);
    GET_INT("batch_size", batch_size);
    GET_STR("batch_size_source", batch_size_source);
    GET_INT("world_size", world_size);
    GET_INT("rank", rank);
    GET_INT("steps_recorded", steps_recorded);
    GET_STR("importer", importer);
    GET_STR("source", source);
    GET_STR("source_schema", source_schema);
#undef GET_STR
#undef GET_INT
    if ((v = map_get(m, "recorded"))) {
        if (v->type != MSGPACK_OBJECT_ARRAY)
            return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                      "bad trace header: 'recorded' must be a list");
        for (uint32_t i = 0; i < v->via.array.size; i++)
            for (size_t j = 0; j < sizeof has_names / sizeof has_names[0]; j++)
                if (obj_is_str(&v->via.array.ptr[i], has_names[j].name))
                    h->recorded |= has_names[j].bit; /* unknown words: newer writers; ignored */
    }
    if ((v = map_get(m, "dropped_steps"))) {
        if (v->type != MSGPACK_OBJECT_ARRAY)
            return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                      "bad trace header: 'dropped_steps' must be a list");
        for (uint32_t i = 0; i < v->via.array.size && h->n_dropped < TRC_DROPPED_MAX; i++) {
            const msgpack_object *d = &v->via.array.ptr[i];
            int64_t idx;
            if (d->type != MSGPACK_OBJECT_ARRAY || d->via.array.size < 2 ||
                !obj_int(&d->via.array.ptr[0], &idx))
                return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                          "bad trace header: 'dropped_steps' entries are "
                                          "[index, reason]");
            int reason = TRC_DROP_REASON_COUNT;
            for (int k = 0; k < TRC_DROP_REASON_COUNT; k++)
                if (obj_is_str(&d->via.array.ptr[1], drop_names[k])) reason = k;
            h->dropped[h->n_dropped].index = idx;
            h->dropped[h->n_dropped].reason = reason;
            h->n_dropped++;
        }
    }
    return SIM_OK;
}

/* Opens path and sets up a reader with nothing read yet. */
static int reader_new(const char *path, trc_reader **out, sim_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return sim_err_set(err, e == ENOENT ? SIM_ENOENT : SIM_EIO, path, 0, 0,
                           "cannot open the trace: %s", strerror(e));
    }
    trc_reader *r = calloc(1, sizeof *r);
    if (!r) {
        fclose(f);
        return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    r->f = f;
    r->path = strdup(path);
    struct stat st;
    r->file_size = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size
                                                                     : (long long)MAX_FRAME_BYTES;
    msgpack_unpacked_init(&r->top);
    msgpack_unpacked_init(&r->payload);
    if (!r->path || !msgpack_unpacker_init(&r->up, READ_CHUNK)) {
        free(r->path);
        fclose(f);
        free(r);
        return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    *out = r;
    return SIM_OK;
}

/* Reads the magic string the file must start with. */
static int read_magic(trc_reader *r, sim_err *err)
{
    sim_err first;
    sim_err_clear(&first);
    int rc = next_object(r, &first);
    if (rc < 0 && first.code != SIM_EFORMAT) {
        if (err) *err = first;
        return rc;
    }
    if (rc < 0) {
        /* a file cut inside the magic itself is a truncated trace, not a foreign file */
        static const char magic[] = "\xae" TRC_FORMAT_NAME;
        size_t have = r->up.used - r->up.off;
        if (have > 0 && have < sizeof magic - 1 && !memcmp(r->up.buffer + r->up.off, magic, have)) {
            if (err) *err = first;
            return rc;
        }
    }
    if (rc <= 0 || !obj_is_str(&r->top.data, TRC_FORMAT_NAME))
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, 0,
                                  r->fed == 0 ? "not an epochsim trace: the file is empty"
                                              : "not an epochsim trace (it does not start with "
                                                "the msgpack string '" TRC_FORMAT_NAME "')");
    return SIM_OK;
}

/* Reads the format version after the magic into r->header; only this epochsim's is accepted. */
static int read_version(trc_reader *r, sim_err *err)
{
    int rc = next_object(r, err);
    if (rc < 0) return rc;
    int64_t version = 0;
    if (rc == 0 || !obj_int(&r->top.data, &version))
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, rc == 0 ? r->fed : r->obj_start,
                                  rc == 0 ? "truncated trace: the file ends before the version"
                                          : "corrupt trace: the format version is not an "
                                            "integer");
    if (version != TRC_FORMAT_VERSION)
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, r->obj_start,
                                  "unsupported trace format version %lld (this epochsim reads "
                                  "version %d%s)",
                                  (long long)version, TRC_FORMAT_VERSION,
                                  version > TRC_FORMAT_VERSION ? "; the file was written by a "
                                                                 "newer epochsim"
                                                               : "");
    r->header.version = (int)version;
    return SIM_OK;
}

int trc_reader_open(const char *path, trc_reader **out, sim_err *err)
{
    *out = NULL;
    trc_reader *r = NULL;
    int rc = reader_new(path, &r, err);
    if (rc) return rc;
    int which;
    if ((rc = read_magic(r, err)) || (rc = read_version(r, err)) ||
        (rc = read_frame(r, "header", NULL, &which, err)) ||
        (rc = parse_header(r, &r->payload.data, r->obj_start, err))) {
        trc_reader_close(r);
        return rc;
    }
    *out = r;
    return SIM_OK;
}

const trc_header *trc_reader_header(const trc_reader *r)
{
    return &r->header;
}

/* Field i of a record array as an int64 within [lo, hi]. */
static int rec_int(const msgpack_object *a, uint32_t i, int64_t lo, int64_t hi, int64_t *v)
{
    return obj_int(&a->via.array.ptr[i], v) && *v >= lo && *v <= hi;
}

/* Reads field f of a record from o into rec (a name index up to names_hi); 0 when o is not a
 * value of the field's type within its bounds. */
static int parse_field(const msgpack_object *o, unsigned f, int64_t names_hi, trc_record *rec)
{
    char *p = (char *)rec + rec_fields[f].off;
    if (rec_fields[f].type == FT_NUM) {
        double d;
        if (!obj_num(o, &d) || !(d >= 0) || d > TRC_NUM_MAX) return 0;
        *(double *)p = d;
        return 1;
    }
    int64_t v, hi = f == RF_NAME ? names_hi : rec_fields[f].hi;
    if (!obj_int(o, &v) || v < rec_fields[f].lo || v > hi) return 0;
    switch (rec_fields[f].type) {
    case FT_U8:
        *(uint8_t *)p = (uint8_t)v;
        break;
    case FT_I8:
        *(int8_t *)p = (int8_t)v;
        break;
    case FT_I32:
        *(int32_t *)p = (int32_t)v;
        break;
    default:
        *(int64_t *)p = v;
        break;
    }
    return 1;
}

static int parse_record(const msgpack_object *a, size_t n_names, trc_record *rec, const char **what)
{
    memset(rec, 0, sizeof *rec);
    rec->name = -1;
    rec->stream = -1;
    rec->worker = -1;
    rec->gpu_dur_ns = -1;
    rec->pinned = -1;
    int64_t v;
    if (a->type != MSGPACK_OBJECT_ARRAY || a->via.array.size < 2) {
        *what = "a record must be a list [kind, thread, ...]";
        return 0;
    }
    if (!rec_int(a, 0, 0, TRC_REC_KIND_COUNT - 1, &v)) {
        *what = "unknown record kind";
        return 0;
    }
    rec->kind = (uint8_t)v;
    if (a->via.array.size < rec_size(rec->kind)) {
        *what = "record has too few fields for its kind";
        return 0;
    }
    if (!rec_int(a, 1, 0, 255, &v)) {
        *what = "bad thread";
        return 0;
    }
    rec->thread = (uint8_t)v;
    const uint8_t *f = rec_schema[rec->kind];
    for (uint32_t i = 0; f[i] != RF_END; i++) {
        if (!parse_field(&a->via.array.ptr[2 + i], f[i], (int64_t)n_names - 1, rec)) {
            *what = rec_fields[f[i]].bad;
            return 0;
        }
    }
    return 1;
}

static int parse_step(trc_reader *r, const msgpack_object *m, long long at, sim_err *err)
{
    trc_step *s = &r->step;
    trc_step_reset(s);
    const msgpack_object *v;
    if (!(v = map_get(m, "index")) || !obj_int(v, &s->index) || !(v = map_get(m, "start_ns")) ||
        !obj_int(v, &s->start_ns) || !(v = map_get(m, "dur_ns")) || !obj_int(v, &s->dur_ns) ||
        s->dur_ns < 0)
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                  "bad step: 'index', 'start_ns' and 'dur_ns' must be integers");
    const msgpack_object *names = map_get(m, "names");
    const msgpack_object *recs = map_get(m, "records");
    if (!names || names->type != MSGPACK_OBJECT_ARRAY || !recs ||
        recs->type != MSGPACK_OBJECT_ARRAY)
        return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                  "bad step %lld: 'names' and 'records' must be lists",
                                  (long long)s->index);
    for (uint32_t i = 0; i < names->via.array.size; i++) {
        const msgpack_object *o = &names->via.array.ptr[i];
        if (o->type != MSGPACK_OBJECT_STR)
            return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                      "bad step %lld: name %u is not a string", (long long)s->index,
                                      i);
        /* names of any length (templated kernel names run to kilobytes) */
        if (o->via.str.size + 1 > r->name_cap) {
            size_t cap = 2 * (o->via.str.size + 1);
            char *p = realloc(r->name_buf, cap);
            if (!p) return sim_err_set_offset(err, SIM_ENOMEM, r->path, at, "out of memory");
            r->name_buf = p;
            r->name_cap = cap;
        }
        memcpy(r->name_buf, o->via.str.ptr, o->via.str.size);
        r->name_buf[o->via.str.size] = 0;
        if (trc_step_add_name(s, r->name_buf) < 0)
            return sim_err_set_offset(err, SIM_ENOMEM, r->path, at, "out of memory");
    }
    for (uint32_t i = 0; i < recs->via.array.size; i++) {
        trc_record rec;
        const char *what = "";
        if (!parse_record(&recs->via.array.ptr[i], s->n_names, &rec, &what))
            return sim_err_set_offset(err, SIM_EFORMAT, r->path, at, "bad step %lld: record %u: %s",
                                      (long long)s->index, i, what);
        if (trc_step_add(s, &rec) < 0)
            return sim_err_set_offset(err, SIM_ENOMEM, r->path, at, "out of memory");
    }
    return SIM_OK;
}

int trc_reader_next_step(trc_reader *r, const trc_step **step, sim_err *err)
{
    *step = NULL;
    if (r->done) return 0;
    int which = 0;
    int rc = read_frame(r, "step", "end", &which, err);
    if (rc) return rc;
    long long at = r->obj_start;
    const msgpack_object *m = &r->payload.data;
    if (which == 1) {
        const msgpack_object *v;
        int64_t steps = -1, records = -1;
        if (!(v = map_get(m, "steps")) || !obj_int(v, &steps) || !(v = map_get(m, "records")) ||
            !obj_int(v, &records))
            return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                      "corrupt trace: bad end frame");
        if (steps != r->steps_read || records != r->records_read)
            return sim_err_set_offset(err, SIM_EFORMAT, r->path, at,
                                      "corrupt trace: the end frame counts %lld steps and %lld "
                                      "records, the file holds %lld and %lld",
                                      (long long)steps, (long long)records, r->steps_read,
                                      r->records_read);
        /* nothing may follow the end frame */
        rc = next_object(r, err);
        if (rc < 0) return rc;
        if (rc > 0)
            return sim_err_set_offset(err, SIM_EFORMAT, r->path, r->obj_start,
                                      "corrupt trace: data after the end frame");
        r->done = 1;
        return 0;
    }
    rc = parse_step(r, m, at, err);
    if (rc) return rc;
    r->steps_read++;
    r->records_read += (long long)r->step.n_recs;
    *step = &r->step;
    return 1;
}

void trc_reader_close(trc_reader *r)
{
    if (!r) return;
    if (r->f) fclose(r->f);
    msgpack_unpacked_destroy(&r->top);
    msgpack_unpacked_destroy(&r->payload);
    msgpack_unpacker_destroy(&r->up);
    trc_step_free(&r->step);
    free(r->name_buf);
    free(r->path);
    free(r);
}
