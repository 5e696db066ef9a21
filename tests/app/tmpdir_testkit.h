/* tmpdir_testkit.h — a scratch folder for the tests of one file: `dir` is made by the group setup
 * from a mkdtemp template and removed, with what the tests left in it, by the teardown;
 * tmpdir_put writes a file into it. */
#ifndef TMPDIR_TESTKIT_H
#define TMPDIR_TESTKIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[64];

/* Makes dir from tmpl (ending in XXXXXX); 0 or -1, as a cmocka group setup returns. */
static int tmpdir_make(const char *tmpl)
{
    snprintf(dir, sizeof dir, "%s", tmpl);
    return mkdtemp(dir) ? 0 : -1;
}

/* Writes text to dir/name and returns its path (a static buffer: the next call reuses it). For
 * files that include cmocka.h first. */
static inline const char *tmpdir_put(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
