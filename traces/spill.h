/* spill.h — the Kineto importer's large tables, kept at a flat resident size. A table that grows
 * past a threshold moves from malloc'd memory into an unlinked temporary file in $TMPDIR (else
 * /tmp) mapped into memory; whenever the process's resident set passes a budget, the set drops
 * the resident pages of every mapped table (madvise MADV_DONTNEED: the data stays in the page
 * cache, or on disk under memory pressure, and comes back on the next touch). Code indexes a
 * table as a plain array and calls trc_spill_tick in its loops; a table that is filled by
 * appending (trc_spill_push) is written to its file with pwrite, and read after trc_spill_flush.
 * A stable merge sort (chunks sorted in memory, then one k-way merge through a temporary table)
 * orders such a table. */
#ifndef TRC_SPILL_H
#define TRC_SPILL_H

#include <stddef.h>
#include <stdint.h>

#define TRC_SPILL_MAX_BUFS 32

/* One table; zero-initialised it is empty. */
typedef struct trc_spill_buf {
    void *base;   /* the table's bytes; NULL when empty */
    size_t bytes; /* its size */
    int in_file;  /* 1: base maps the temporary file fd; 0: base is malloc'd */
    int fd;
    char *pend;        /* in a file: bytes appended by trc_spill_push, not yet written; or NULL */
    size_t pend_at;    /* their offset in the table */
    size_t pend_bytes; /* their number */
} trc_spill_buf;

/* The tables of one import and the resident budget they share. */
typedef struct trc_spill {
    size_t file_from_bytes; /* a table this large moves into a file */
    size_t budget_bytes;    /* resident set above which mapped pages are dropped */
    unsigned ticks;
    int statm_fd;                            /* /proc/self/statm; -1: drop at every check */
    trc_spill_buf *bufs[TRC_SPILL_MAX_BUFS]; /* the tables allocated and not yet released */
    int n_bufs;
    int64_t drops;     /* times the mapped pages were dropped */
    size_t file_bytes; /* bytes now in temporary files */
} trc_spill;

/* Sets up an empty set: tables of file_from_bytes or more go to files; pages are dropped when
 * the resident set passes budget_bytes. */
void trc_spill_init(trc_spill *s, size_t file_from_bytes, size_t budget_bytes);
/* Releases every table still allocated in s. */
void trc_spill_fini(trc_spill *s);

/* Makes b hold `bytes` bytes (allocating it on first use, else growing or keeping it; contents
 * kept, a grown tail zero-filled) and registers it with s; b->base may move. Returns 0,
 * SIM_ENOMEM (no memory, or more than TRC_SPILL_MAX_BUFS tables) or SIM_EIO (no temporary file
 * or no room for it on disk: the room is reserved here, so a full disk is reported, never met
 * later as a fault). b must stay at its address until released. */
int trc_spill_resize(trc_spill *s, trc_spill_buf *b, size_t bytes);
/* Frees b's memory or file and unregisters it; b is zeroed. An empty b is allowed. */
void trc_spill_release(trc_spill *s, trc_spill_buf *b);

/* Appends the `size` bytes at elem to table b at byte `used`, just past the bytes appended
 * before (b has room for them). A malloc'd table takes them at once; a file-mapped one gathers
 * them in a 64 KiB buffer that is written to the file as whole pages (pwrite), which spares the
 * kernel filling each new page of the file with zeros, and mapping it, before stores through
 * the mapping overwrite it. So appended bytes may be read through b->base only after
 * trc_spill_flush. Returns 0, SIM_ENOMEM (no buffer) or SIM_EIO (the write failed). */
int trc_spill_push(trc_spill_buf *b, size_t used, const void *elem, size_t size);
/* Writes the buffered appends of every table of s to its file and frees the buffers: b->base
 * then shows all that was appended. Returns 0 or SIM_EIO (a write failed). */
int trc_spill_flush(trc_spill *s);

/* Counts one step of a loop over tables; every 1024th call (CHECK_EVERY) compares the resident set
 * with the budget and, above it, drops the pages of every file-mapped table. */
void trc_spill_tick(trc_spill *s);
/* The same check, now. */
void trc_spill_check(trc_spill *s);

/* Sorts the first n elements (of `size` bytes) of table t by cmp, stably (equal elements keep
 * their order, as glibc's merge-sorting qsort keeps them). t->base may change (a large table is
 * merged into new storage, which replaces the old). Returns 0, SIM_ENOMEM or SIM_EIO (no room
 * for the merged copy); on error the table holds its elements in some order. */
int trc_spill_sort(trc_spill *s, trc_spill_buf *t, size_t n, size_t size,
                   int (*cmp)(const void *, const void *));

#endif
