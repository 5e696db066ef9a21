/* test_interrupt.c — an interrupted epochsim leaves nothing behind: SIGINT while a replay imports
 * its Kineto trace (the moment its temporary file exists in $TMPDIR) exits 130 and removes the
 * temporary files; SIGTERM during a run exits 143; neither writes the --json output file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPLAY EPOCHSIM_SOURCE_DIR "/configs/experiments/replay-resnet50-nw0.yaml"

static char tmpdir[256], outdir[256], out_json[300];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/epochsim-int-tmp-XXXXXX");
    snprintf(outdir, sizeof outdir, "/tmp/epochsim-int-out-XXXXXX");
    if (!mkdtemp(tmpdir) || !mkdtemp(outdir)) return -1;
    snprintf(out_json, sizeof out_json, "%s/result.json", outdir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", tmpdir, outdir);
    return system(cmd);
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Starts epochsim with TMPDIR set to tmpdir and its output silenced. */
static pid_t start(const char *const *args)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const char *argv[32] = {EPOCHSIM_BINARY};
        int n = 1;
        for (; *args; args++)
            argv[n++] = *args;
        setenv("TMPDIR", tmpdir, 1);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        execv(EPOCHSIM_BINARY, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static int exit_code(pid_t pid)
{
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* Waits (up to 20 s, polling every 2 ms) until dir holds an entry; true when it did. */
static int wait_for_entry(const char *dir)
{
    struct timespec pause = {0, 2000000};
    for (int i = 0; i < 10000; i++) {
        if (entries(dir) > 0) return 1;
        nanosleep(&pause, NULL);
    }
    return 0;
}

/* Waits (up to 60 s) until process pid has used 0.2 s of CPU: it is past exec and start-up (its
 * signal handlers are the first thing epochsim sets) and simulating. A wall-clock pause instead
 * could fire before exec on a loaded machine. True when it got there. */
static int wait_running(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    long tick = sysconf(_SC_CLK_TCK);
    struct timespec pause = {0, 5000000};
    for (int i = 0; i < 12000; i++) {
        FILE *f = fopen(path, "r");
        unsigned long ut = 0, st = 0;
        /* fields 14 and 15: utime and stime in clock ticks (after "pid (comm) state ...") */
        int got = f ? fscanf(f, "%*d (%*[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                             &ut, &st)
                    : 0;
        if (f) fclose(f);
        if (got == 2 && (double)(ut + st) / (double)tick >= 0.2) return 1;
        nanosleep(&pause, NULL);
    }
    return 0;
}

static void sigint_during_import(void **state)
{
    (void)state;
    const char *args[] = {"run", REPLAY, "--set", "training.epochs=5000", "--json", out_json, NULL};
    pid_t pid = start(args);
    assert_true(wait_for_entry(tmpdir)); /* the import's temporary trace exists now */
    kill(pid, SIGINT);
    assert_int_equal(exit_code(pid), 130);
    assert_int_equal(entries(tmpdir), 0);
    assert_int_equal(entries(outdir), 0);
}

static void sigterm_during_run(void **state)
{
    (void)state;
    const char *args[] = {"run", "--set", "training.epochs=500", "--json", out_json, NULL};
    pid_t pid = start(args);
    assert_true(wait_running(pid)); /* inside a run of minutes */
    kill(pid, SIGTERM);
    assert_int_equal(exit_code(pid), 143);
    assert_int_equal(entries(outdir), 0);
    assert_int_equal(entries(tmpdir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sigint_during_import, setup, teardown),
        cmocka_unit_test_setup_teardown(sigterm_during_run, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
