/* tmpdir_testkit.h — a scratch folder for the CLI tests of one file: `dir` is made by the group
 * setup from a mkdtemp template and removed, with what the tests left in it, by the teardown. */
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

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
