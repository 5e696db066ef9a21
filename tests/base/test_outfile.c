/* test_outfile.c — the output-file rules of sim/base/outfile.h: a regular file is replaced whole or
 * left as it was, a device or FIFO is written in place and stays what it is, a symbolic link stays
 * a link and its target gets the data, a full device is an error with no partial file, temporary
 * files are removed by the cleanup an interrupt runs; and through the CLI, `run > /dev/full`
 * and `--json /dev/full` exit 1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include "sim/base/outfile.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/epochsim-outfile-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

static void in_dir(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void expect_content(const char *path, const char *text)
{
    char buf[256] = {0};
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    assert_string_equal(buf, text);
}

/* Entries of dir: a temporary file left behind shows up here. */
static int entries(void)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void write_all(const char *path, const char *text, int expect_rc)
{
    sim_outfile o;
    sim_err err;
    assert_int_equal(sim_outfile_open(&o, path, &err), 0);
    fputs(text, o.fp);
    assert_int_equal(sim_outfile_commit(&o, &err), expect_rc);
}

static void regular_file_replaced_whole(void **state)
{
    (void)state;
    char p[300];
    in_dir(p, sizeof p, "out.json");
    put(p, "old");
    write_all(p, "new", 0);
    expect_content(p, "new");
    assert_int_equal(entries(), 1);
    /* given up midway: the old content stays and no temporary file is left */
    sim_outfile o;
    assert_int_equal(sim_outfile_open(&o, p, NULL), 0);
    fputs("half", o.fp);
    assert_int_equal(entries(), 2); /* the temporary file beside it */
    sim_outfile_abort(&o);
    expect_content(p, "new");
    assert_int_equal(entries(), 1);
}

static void device_written_in_place(void **state)
{
    (void)state;
    write_all("/dev/null", "discarded", 0);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

static void full_device_is_an_error(void **state)
{
    (void)state;
    sim_outfile o;
    sim_err err;
    assert_int_equal(sim_outfile_open(&o, "/dev/full", &err), 0);
    fputs("x", o.fp);
    assert_int_equal(sim_outfile_commit(&o, &err), SIM_EIO);
    assert_non_null(strstr(err.msg, "No space left on device"));
}

static void symlink_stays_a_link(void **state)
{
    (void)state;
    char target[300], link[300];
    in_dir(target, sizeof target, "target.csv");
    in_dir(link, sizeof link, "link.csv");
    put(target, "old");
    assert_int_equal(symlink("target.csv", link), 0);
    write_all(link, "through the link", 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    expect_content(target, "through the link");
    assert_int_equal(entries(), 2);
    /* a link to nothing is refused, and nothing is created */
    char dangling[300];
    in_dir(dangling, sizeof dangling, "dangling.csv");
    assert_int_equal(symlink("missing.csv", dangling), 0);
    sim_outfile o;
    sim_err err;
    assert_int_equal(sim_outfile_open(&o, dangling, &err), SIM_EIO);
    assert_non_null(strstr(err.msg, "symbolic link"));
    assert_int_equal(entries(), 3);
}

static void fifo_written_in_place(void **state)
{
    (void)state;
    char fifo[300], got[300];
    in_dir(fifo, sizeof fifo, "pipe");
    in_dir(got, sizeof got, "got");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t reader = fork();
    assert_true(reader >= 0);
    if (reader == 0) { /* the reader copies what arrives into `got` */
        char cmd[700];
        snprintf(cmd, sizeof cmd, "cat '%s' > '%s'", fifo, got);
        _exit(system(cmd) == 0 ? 0 : 1);
    }
    write_all(fifo, "streamed", 0);
    int status;
    assert_int_equal(waitpid(reader, &status, 0), reader);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    expect_content(got, "streamed");
}

static void directory_is_refused(void **state)
{
    (void)state;
    sim_outfile o;
    sim_err err;
    assert_int_equal(sim_outfile_open(&o, dir, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "directory"));
}

static void cleanup_removes_tracked_temporaries(void **state)
{
    (void)state;
    char p[300];
    in_dir(p, sizeof p, "plot.png");
    sim_outfile o;
    assert_int_equal(sim_outfile_prepare(&o, p, NULL), 0);
    assert_true(o.tmp[0]);
    assert_int_equal(access(o.tmp, F_OK), 0);
    sim_outfile_cleanup(); /* what the SIGINT handler runs */
    assert_int_not_equal(access(o.tmp, F_OK), 0);
    assert_int_equal(entries(), 0);
    sim_outfile_finish(&o, 0, NULL);
}

/* Runs `epochsim ARGS` through sh with stdout and stderr as the shell line says; exit code. */
static int sh(const char *line)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s", EPOCHSIM_BINARY, line);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static void cli_reports_a_full_disk(void **state)
{
    (void)state;
    assert_int_equal(sh("run --set training.max_steps=5 >/dev/full 2>/dev/null"), 1);
    assert_int_equal(sh("run --set training.max_steps=5 --json /dev/full >/dev/null 2>&1"), 1);
    assert_int_equal(sh("run --set training.max_steps=5 --json - >/dev/full 2>/dev/null"), 1);
    assert_int_equal(sh("run --set training.max_steps=5 --json /dev/null >/dev/null 2>&1"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(regular_file_replaced_whole, setup, teardown),
        cmocka_unit_test(device_written_in_place),
        cmocka_unit_test(full_device_is_an_error),
        cmocka_unit_test_setup_teardown(symlink_stays_a_link, setup, teardown),
        cmocka_unit_test_setup_teardown(fifo_written_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(directory_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(cleanup_removes_tracked_temporaries, setup, teardown),
        cmocka_unit_test(cli_reports_a_full_disk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
