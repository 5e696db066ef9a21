/* spill.c — tables in mapped temporary files, resident pages dropped past a budget (spill.h).
 * The files are unlinked as soon as they are made, so nothing is left behind by a crash or a
 * kill; their room is reserved with posix_fallocate, so a full disk is an error, not a fault on
 * a write through the mapping. */
#define _DEFAULT_SOURCE /* madvise, MADV_DONTNEED (posix_madvise may ignore it), MADV_RANDOM */
#include "traces/spill.h"

#include "sim/base/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Ticks between resident-set checks: a loop that reads a table in random order (GPU events by
 * their runtime call) touches at most one new page per tick (the tables are mapped MADV_RANDOM,
 * so a fault maps only its own page), 4 MiB between two checks. */
#define CHECK_EVERY 1024u
/* Appends to a table in a file gather in a buffer of this many bytes (trc_spill_push) */
#define PEND_BYTES (64u << 10)
/* The buffer goes to the file in whole pages of this many bytes (a multiple of the page size on
 * the machines we know; a page written in part is read, or zero-filled, first) */
#define PAGE_BYTES 4096u
#define SORT_CHUNK_BYTES (1u << 20) /* a large sort's chunks, sorted in malloc'd memory */

void trc_spill_init(trc_spill *s, size_t file_from_bytes, size_t budget_bytes)
{
    memset(s, 0, sizeof *s);
    s->file_from_bytes = file_from_bytes;
    s->budget_bytes = budget_bytes;
    s->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
}

void trc_spill_fini(trc_spill *s)
{
    while (s->n_bufs > 0)
        trc_spill_release(s, s->bufs[s->n_bufs - 1]);
    if (s->statm_fd >= 0) close(s->statm_fd);
    s->statm_fd = -1;
}

static int registered(const trc_spill *s, const trc_spill_buf *b)
{
    for (int i = 0; i < s->n_bufs; i++)
        if (s->bufs[i] == b) return 1;
    return 0;
}

/* An unlinked temporary file with room for `bytes`; -1 on failure. */
static int temp_file(size_t bytes)
{
    const char *dir = getenv("TMPDIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/epochsim-spill-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    unlink(path);
    if (posix_fallocate(fd, 0, (off_t)bytes) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Moves b (malloc'd, b->bytes long) into a file of `bytes`, or grows its file to `bytes`. */
static int to_file(trc_spill *s, trc_spill_buf *b, size_t bytes)
{
    int fd = b->in_file ? b->fd : temp_file(bytes);
    if (fd < 0 || (b->in_file && posix_fallocate(fd, 0, (off_t)bytes) != 0)) return SIM_EIO;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        if (!b->in_file) close(fd);
        return SIM_ENOMEM;
    }
    madvise(p, bytes, MADV_RANDOM); /* no fault-around: one page per fault, see CHECK_EVERY */
    if (b->in_file) {
        munmap(b->base, b->bytes);
        s->file_bytes -= b->bytes;
    } else {
        if (b->bytes) memcpy(p, b->base, b->bytes);
        free(b->base);
    }
    b->base = p;
    b->fd = fd;
    b->in_file = 1;
    s->file_bytes += bytes;
    return SIM_OK;
}

int trc_spill_resize(trc_spill *s, trc_spill_buf *b, size_t bytes)
{
    if (bytes == 0) bytes = 1;
    if (!registered(s, b)) {
        if (s->n_bufs == TRC_SPILL_MAX_BUFS) return SIM_ENOMEM;
        s->bufs[s->n_bufs++] = b;
    }
    if (b->base && bytes <= b->bytes) return SIM_OK;
    int rc = SIM_OK;
    if (b->in_file || bytes >= s->file_from_bytes) {
        rc = to_file(s, b, bytes);
    } else {
        void *p = realloc(b->base, bytes);
        if (!p) return SIM_ENOMEM;
        memset((char *)p + b->bytes, 0, bytes - b->bytes);
        b->base = p;
    }
    if (rc == SIM_OK) b->bytes = bytes;
    return rc;
}

void trc_spill_release(trc_spill *s, trc_spill_buf *b)
{
    for (int i = 0; i < s->n_bufs; i++) {
        if (s->bufs[i] != b) continue;
        s->bufs[i] = s->bufs[--s->n_bufs];
        break;
    }
    if (b->in_file) {
        munmap(b->base, b->bytes);
        close(b->fd);
        s->file_bytes -= b->bytes;
    } else {
        free(b->base);
    }
    free(b->pend);
    memset(b, 0, sizeof *b);
}

/* The resident set in bytes; 0 when it cannot be read. */
static size_t resident_bytes(const trc_spill *s)
{
    char buf[128];
    ssize_t n = s->statm_fd >= 0 ? pread(s->statm_fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0) return 0;
    buf[n] = 0;
    unsigned long long size = 0, resident = 0;
    if (sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

void trc_spill_check(trc_spill *s)
{
    if (s->file_bytes == 0) return;
    if (s->statm_fd >= 0 && resident_bytes(s) <= s->budget_bytes) return;
    for (int i = 0; i < s->n_bufs; i++)
        if (s->bufs[i]->in_file) madvise(s->bufs[i]->base, s->bufs[i]->bytes, MADV_DONTNEED);
    s->drops++;
}

/* Writes p[0..n) at byte `at` of b's file; 0 or SIM_EIO. */
static int write_at(const trc_spill_buf *b, const char *p, size_t n, size_t at)
{
    while (n > 0) {
        ssize_t w = pwrite(b->fd, p, n, (off_t)at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return SIM_EIO;
        p += w, n -= (size_t)w, at += (size_t)w;
    }
    return SIM_OK;
}

/* Writes the whole pages of b's buffered appends and keeps the rest, the start of a page the
 * next appends fill, in the buffer. */
static int write_pages(trc_spill_buf *b)
{
    size_t end = b->pend_at + b->pend_bytes, cut = end / PAGE_BYTES * PAGE_BYTES;
    SIM_ASSERT(cut > b->pend_at); /* called with the buffer near full: pages end in it */
    int rc = write_at(b, b->pend, cut - b->pend_at, b->pend_at);
    if (rc) return rc;
    memmove(b->pend, b->pend + (cut - b->pend_at), end - cut);
    b->pend_at = cut;
    b->pend_bytes = end - cut;
    return SIM_OK;
}

int trc_spill_push(trc_spill_buf *b, size_t used, const void *elem, size_t size)
{
    SIM_ASSERT(used + size <= b->bytes && size <= PEND_BYTES - PAGE_BYTES);
    if (!b->in_file) {
        memcpy((char *)b->base + used, elem, size);
        return SIM_OK;
    }
    if (!b->pend) {
        if (!(b->pend = malloc(PEND_BYTES))) return SIM_ENOMEM;
        b->pend_at = used;
        b->pend_bytes = 0;
    }
    SIM_ASSERT(used == b->pend_at + b->pend_bytes); /* appends only */
    int rc = b->pend_bytes + size > PEND_BYTES ? write_pages(b) : SIM_OK;
    if (rc) return rc;
    memcpy(b->pend + b->pend_bytes, elem, size);
    b->pend_bytes += size;
    return SIM_OK;
}

/* Writes all of b's buffered appends and frees the buffer. */
static int flush_buf(trc_spill_buf *b)
{
    int rc = b->pend ? write_at(b, b->pend, b->pend_bytes, b->pend_at) : SIM_OK;
    free(b->pend);
    b->pend = NULL;
    return rc;
}

int trc_spill_flush(trc_spill *s)
{
    int rc = SIM_OK;
    for (int i = 0; i < s->n_bufs; i++) {
        int r = flush_buf(s->bufs[i]);
        if (!rc) rc = r;
    }
    return rc;
}

void trc_spill_tick(trc_spill *s)
{
    if (++s->ticks % CHECK_EVERY == 0) trc_spill_check(s);
}

/* ---- stable sort ---------------------------------------------------------------------------- */

typedef int (*cmp_fn)(const void *, const void *);

/* Stable merge sort of the element pointers p[0..n), with room for n / 2 + 1 pointers in tmp
 * (pointers, not elements, are moved: the importer's events are 64 to 150 bytes). */
static void merge_sort(const char **p, size_t n, cmp_fn cmp, const char **tmp)
{
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(p, h, cmp, tmp);
    merge_sort(p + h, n - h, cmp, tmp);
    if (cmp(p[h - 1], p[h]) <= 0) return; /* already in order */
    memcpy(tmp, p, h * sizeof *p);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        p[k++] = cmp(tmp[i], p[j]) <= 0 ? tmp[i++] : p[j++];
    memcpy(p + k, tmp + i, (h - i) * sizeof *p);
}

/* Sorts a[0..n) (n at most the chunk) stably in place through the pointer and byte scratch in
 * ptr (1.5 n pointers) and bytes (n elements). */
static void sort_chunk(char *a, size_t n, size_t size, cmp_fn cmp, const char **ptr, char *bytes)
{
    for (size_t i = 0; i < n; i++)
        ptr[i] = a + i * size;
    merge_sort(ptr, n, cmp, ptr + n);
    size_t first = 0; /* elements already in place are not moved */
    while (first < n && ptr[first] == a + first * size)
        first++;
    if (first == n) return;
    for (size_t i = first; i < n; i++)
        memcpy(bytes + i * size, ptr[i], size);
    memcpy(a + first * size, bytes + first * size, (n - first) * size);
}

/* 1 when a[0..n) is in order already (the runtime calls and GPU activities of a trace mostly are).
 */
static int in_order(trc_spill *s, const char *a, size_t n, size_t size, cmp_fn cmp)
{
    for (size_t i = 1; i < n; i++, trc_spill_tick(s))
        if (cmp(a + (i - 1) * size, a + i * size) > 0) return 0;
    return 1;
}

/* The k-way merge's heap of runs: run r's next element is run_at[r]; ordered by element, then
 * run (the earlier run first keeps the sort stable). */
typedef struct merge {
    const char *a;
    size_t size;
    cmp_fn cmp;
    size_t *at, *end; /* per run: next element, end */
    size_t *heap;     /* run numbers */
    size_t n;
} merge;

static int run_before(const merge *m, size_t r, size_t q)
{
    int c = m->cmp(m->a + m->at[r] * m->size, m->a + m->at[q] * m->size);
    return c < 0 || (c == 0 && r < q);
}

static void sift_down(merge *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, best = i;
        if (l < m->n && run_before(m, m->heap[l], m->heap[best])) best = l;
        if (l + 1 < m->n && run_before(m, m->heap[l + 1], m->heap[best])) best = l + 1;
        if (best == i) return;
        size_t t = m->heap[i];
        m->heap[i] = m->heap[best];
        m->heap[best] = t;
        i = best;
    }
}

/* Merges the sorted runs of `chunk` elements of a[0..n) into table out. */
static int merge_runs(trc_spill *s, const char *a, size_t n, size_t size, size_t chunk, cmp_fn cmp,
                      trc_spill_buf *out)
{
    size_t runs = (n + chunk - 1) / chunk;
    size_t *mem = malloc(3 * runs * sizeof *mem);
    if (!mem) return SIM_ENOMEM;
    merge m = {a, size, cmp, mem, mem + runs, mem + 2 * runs, runs};
    for (size_t r = 0; r < runs; r++) {
        m.at[r] = r * chunk;
        m.end[r] = r + 1 < runs ? (r + 1) * chunk : n;
        m.heap[r] = r;
    }
    for (size_t i = runs; i-- > 0;)
        sift_down(&m, i);
    int rc = SIM_OK;
    for (size_t k = 0; !rc && k < n; k++, trc_spill_tick(s)) {
        size_t r = m.heap[0];
        rc = trc_spill_push(out, k * size, a + m.at[r] * size, size);
        if (++m.at[r] == m.end[r]) m.heap[0] = m.heap[--m.n];
        sift_down(&m, 0);
    }
    free(mem);
    return rc ? rc : flush_buf(out);
}

int trc_spill_sort(trc_spill *s, trc_spill_buf *t, size_t n, size_t size, cmp_fn cmp)
{
    if (n < 2 || in_order(s, t->base, n, size, cmp)) return SIM_OK;
    size_t chunk = SORT_CHUNK_BYTES / size > 1 ? SORT_CHUNK_BYTES / size : 2;
    size_t run = n < chunk ? n : chunk;
    char *a = t->base, *bytes = malloc(run * size);
    const char **ptr = malloc((run + run / 2 + 1) * sizeof *ptr);
    if (!bytes || !ptr) {
        free(bytes);
        free(ptr);
        return SIM_ENOMEM;
    }
    for (size_t i = 0; i < n; i += chunk) {
        sort_chunk(a + i * size, n - i < chunk ? n - i : chunk, size, cmp, ptr, bytes);
        trc_spill_check(s);
    }
    free(bytes);
    free(ptr);
    if (n <= chunk) return SIM_OK;
    trc_spill_buf out = {0};
    int rc = trc_spill_resize(s, &out, t->bytes);
    if (!rc) rc = merge_runs(s, a, n, size, chunk, cmp, &out);
    if (!rc) { /* the merged copy becomes the table; the old storage goes */
        trc_spill_buf old = *t;
        *t = out;
        out = old;
    }
    trc_spill_release(s, &out);
    return rc;
}
