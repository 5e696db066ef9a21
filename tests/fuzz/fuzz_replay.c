/* fuzz_replay.c — runs a harness over files instead of under libFuzzer: every regular file of
 * each folder (or each file) named on the command line goes through LLVMFuzzerTestOneInput once.
 * This is how the seed corpora and every input that ever crashed (tests/fuzz/regressions/) run
 * as ordinary tests, in the normal and the sanitizer builds. */
#include "fuzz_input.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            uint8_t *bigger = realloc(buf, cap *= 2);
            if (!bigger) free(buf);
            buf = bigger;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "%s: out of memory\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of dir, in name order; the count into *n. */
static int run_dir(const char *dir, int *n)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return 1;
    }
    char *names[4096];
    int k = 0, bad = 0;
    for (struct dirent *e; (e = readdir(d)) && k < 4096;)
        if (e->d_name[0] != '.' && strcmp(e->d_name, "README.md") != 0)
            names[k++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)k, sizeof *names, cmp_names);
    for (int i = 0; i < k; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            bad |= run_file(path);
            (*n)++;
        }
        free(names[i]);
    }
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0, n = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            bad = 1;
        } else if (S_ISDIR(st.st_mode)) {
            bad |= run_dir(argv[i], &n);
        } else {
            bad |= run_file(argv[i]);
            n++;
        }
    }
    printf("%d inputs run\n", n);
    return bad;
}
