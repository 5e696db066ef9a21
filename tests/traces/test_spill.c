/* test_spill.c — the importer's tables in temporary files (traces/spill.c): contents survive the
 * move from malloc'd memory into a file, growth and the dropping of resident pages; appends
 * gathered in a buffer read back once flushed; the sort is stable and agrees with a reference; a
 * missing temporary folder is an error, not a crash; and `epochsim import kineto` of a 59 MB
 * generated trace peaks under 32 MiB of resident memory. */
#define _DEFAULT_SOURCE /* wait4 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/base/err.h"
#include "traces/spill.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct item {
    uint32_t key; /* sorted on */
    uint32_t seq; /* the order before sorting */
    uint64_t pad; /* 16 bytes, as a small event */
} item;

static int cmp_key(const void *x, const void *y)
{
    const item *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int cmp_key_seq(const void *x, const void *y)
{
    int c = cmp_key(x, y);
    if (c) return c;
    const item *a = x, *b = y;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Grows a table of n items through doubling, as the importer's tables grow. */
static item *fill(trc_spill *s, trc_spill_buf *b, size_t n, uint32_t keys)
{
    size_t cap = 0;
    uint64_t x = 88172645463325252ULL; /* xorshift: the same keys every run */
    for (size_t i = 0; i < n; i++) {
        if (i == cap) {
            cap = cap ? 2 * cap : 64;
            assert_int_equal(trc_spill_resize(s, b, cap * sizeof(item)), SIM_OK);
        }
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ((item *)b->base)[i] = (item){(uint32_t)(x % keys), (uint32_t)i, x};
    }
    return b->base;
}

static void test_spill_moves_to_file_and_keeps_contents(void **state)
{
    (void)state;
    trc_spill s;
    trc_spill_init(&s, 4096, 1u << 30);
    trc_spill_buf b = {0};
    item *v = fill(&s, &b, 1000, 1u << 30); /* 16,000 bytes: in a file from 4,096 */
    assert_true(b.in_file);
    assert_true(s.file_bytes >= 1000 * sizeof(item));
    for (size_t i = 0; i < 1000; i++)
        assert_int_equal(v[i].seq, i);
    size_t old = b.bytes;
    assert_int_equal(trc_spill_resize(&s, &b, 2 * old), SIM_OK);
    const unsigned char *tail = (const unsigned char *)b.base + old;
    for (size_t i = 0; i < old; i++) /* a grown tail reads as zeros */
        assert_int_equal(tail[i], 0);
    trc_spill_release(&s, &b);
    assert_null(b.base);
    assert_int_equal(s.file_bytes, 0);
    trc_spill_fini(&s);
}

static void test_spill_small_table_stays_in_memory(void **state)
{
    (void)state;
    trc_spill s;
    trc_spill_init(&s, 1u << 20, 1u << 30);
    trc_spill_buf b = {0};
    fill(&s, &b, 100, 10);
    assert_false(b.in_file);
    assert_int_equal(s.file_bytes, 0);
    trc_spill_fini(&s); /* releases what is still allocated */
    assert_int_equal(s.n_bufs, 0);
}

/* With a budget of 0 every check drops the mapped pages; the data comes back from the file. */
static void test_spill_check_drops_pages_not_data(void **state)
{
    (void)state;
    trc_spill s;
    trc_spill_init(&s, 4096, 0);
    trc_spill_buf b = {0};
    item *v = fill(&s, &b, 50000, 1u << 30);
    trc_spill_check(&s);
    assert_true(s.drops >= 1);
    for (size_t i = 0; i < 50000; i++)
        assert_int_equal(v[i].seq, i);
    v[123].seq = 7; /* a write after a drop, dropped again, is kept */
    trc_spill_check(&s);
    assert_int_equal(v[123].seq, 7);
    trc_spill_fini(&s);
}

/* 300,000 items of 16 bytes (4.8 MB: five runs of the 1 MiB chunks, then the k-way merge) with
 * many equal keys: the result equals a sort on (key, original position), i.e. it is stable. */
static void test_spill_sort_is_stable(void **state)
{
    (void)state;
    enum { N = 300000 };
    trc_spill s;
    trc_spill_init(&s, 4096, 1u << 30);
    trc_spill_buf b = {0};
    fill(&s, &b, N, 1000);
    item *ref = malloc(N * sizeof *ref);
    assert_non_null(ref);
    memcpy(ref, b.base, N * sizeof *ref);
    qsort(ref, N, sizeof *ref, cmp_key_seq);
    assert_int_equal(trc_spill_sort(&s, &b, N, sizeof(item), cmp_key), SIM_OK);
    assert_memory_equal(b.base, ref, N * sizeof *ref);
    /* sorted already: nothing moves, the table keeps its storage */
    void *before = b.base;
    assert_int_equal(trc_spill_sort(&s, &b, N, sizeof(item), cmp_key), SIM_OK);
    assert_ptr_equal(b.base, before);
    assert_memory_equal(b.base, ref, N * sizeof *ref);
    free(ref);
    trc_spill_fini(&s);
}

/* Items of 24 bytes (pages end inside items) pushed one at a time as the importer's tables grow:
 * the table moves into a file after 4,096 bytes and grows by doubling while the pushes gather in
 * the buffer; after trc_spill_flush every item reads back through base, and a drop of the
 * mapped pages keeps them. */
static void test_spill_push_reads_back_after_flush(void **state)
{
    (void)state;
    typedef struct {
        uint64_t a, b, c;
    } item24;
    enum { N = 100000 };
    trc_spill s;
    trc_spill_init(&s, 4096, 0);
    trc_spill_buf b = {0};
    size_t cap = 0;
    for (size_t i = 0; i < N; i++) {
        if (i == cap) {
            cap = cap ? 2 * cap : 64;
            assert_int_equal(trc_spill_resize(&s, &b, cap * sizeof(item24)), SIM_OK);
        }
        item24 it = {i, ~(uint64_t)i, i * 7};
        assert_int_equal(trc_spill_push(&b, i * sizeof it, &it, sizeof it), SIM_OK);
    }
    assert_true(b.in_file);
    assert_int_equal(trc_spill_flush(&s), SIM_OK);
    assert_null(b.pend);
    for (int pass = 0; pass < 2; pass++, trc_spill_check(&s)) {
        const item24 *v = b.base;
        for (size_t i = 0; i < N; i++) {
            assert_int_equal(v[i].a, i);
            assert_int_equal(v[i].b, ~(uint64_t)i);
            assert_int_equal(v[i].c, i * 7);
        }
    }
    trc_spill_fini(&s);
}

static void test_spill_no_temporary_folder_is_an_error(void **state)
{
    (void)state;
    const char *old = getenv("TMPDIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("TMPDIR", "/nonexistent/epochsim-test-spill", 1);
    trc_spill s;
    trc_spill_init(&s, 4096, 1u << 30);
    trc_spill_buf b = {0};
    assert_int_equal(trc_spill_resize(&s, &b, 1024), SIM_OK); /* in memory */
    assert_int_equal(trc_spill_resize(&s, &b, 8192), SIM_EIO);
    assert_false(b.in_file);
    assert_int_equal(b.bytes, 1024); /* the table is left as it was */
    trc_spill_fini(&s);
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
}

/* Runs argv, returns its exit status and its peak resident set in KiB (ru_maxrss of that child
 * alone: this test process is small, and the generator ran as another child). */
static int run_measured(char *const argv[], long *maxrss_kib)
{
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    assert_int_equal(wait4(pid, &status, 0, &ru), pid);
    *maxrss_kib = ru.ru_maxrss;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* AddressSanitizer's shadow memory and quarantine add tens of MiB of resident memory (79.6 MiB
 * measured for the import below), so under it the bound is not the importer's. */
#if defined(__SANITIZE_ADDRESS__)
#define SPILL_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPILL_UNDER_ASAN 1
#endif
#endif

/* The generated trace is 59 MB of dense events (tests/traces/make_dense_kineto.py, 320 steps).
 * Measured: 22.1 MiB with the tables in files (the importer's budget is 22 MiB); 45 MiB with them
 * in memory (commit 6d53685), so the test fails if the tables go back into memory. The 10 MiB
 * margin to 32 MiB covers what a budget check lets through until the next (up to 4 MiB) and
 * another libc or build type; resident memory, unlike time, does not move with the load. */
static void test_spill_import_peaks_under_32_mib(void **state)
{
    (void)state;
    char trace[128], out[128], cmd[512];
    snprintf(trace, sizeof trace, "/tmp/epochsim_test_spill_%ld.json", (long)getpid());
    snprintf(out, sizeof out, "/tmp/epochsim_test_spill_%ld.trace", (long)getpid());
    snprintf(cmd, sizeof cmd, "python3 %s/tests/traces/make_dense_kineto.py %s 320",
             EPOCHSIM_SOURCE_DIR, trace);
    assert_int_equal(system(cmd), 0);
    char *argv[] = {EPOCHSIM_BINARY, "import", "kineto", trace, "-o", out, "--quiet", NULL};
    long kib = 0;
    int rc = run_measured(argv, &kib);
    unlink(trace);
    unlink(out);
    print_message("import of the 59 MB dense trace: peak RSS %.1f MiB\n", (double)kib / 1024);
    assert_int_equal(rc, 0);
#ifndef SPILL_UNDER_ASAN
    assert_true(kib < 32 * 1024); /* the plain build checks the bound; ASan checks the import */
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spill_moves_to_file_and_keeps_contents),
        cmocka_unit_test(test_spill_small_table_stays_in_memory),
        cmocka_unit_test(test_spill_check_drops_pages_not_data),
        cmocka_unit_test(test_spill_sort_is_stable),
        cmocka_unit_test(test_spill_push_reads_back_after_flush),
        cmocka_unit_test(test_spill_no_temporary_folder_is_an_error),
        cmocka_unit_test(test_spill_import_peaks_under_32_mib),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
