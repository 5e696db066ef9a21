/* test_progress.c — `epochsim run` shows a progress line on stderr when stderr is a terminal and
 * the run lasts, and stays quiet otherwise; the figures are byte-identical either way. The
 * terminal is a pseudo-terminal (posix_openpt) read by the test. */
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A simulation of several seconds at full speed (2.8 s in a RelWithDebInfo build on a 2-core
 * Xeon, longer under the sanitizers): well past the 1 s after which the line appears. The line
 * covers the simulation only, not the advice's runs after it, which are left out. */
#define LONG_EPOCHS "training.epochs=12"

/* Runs epochsim with args; stderr to a pseudo-terminal (tty) or to a pipe. Collects what stderr
 * got into err (NUL-terminated) and returns the exit code. */
static int run_with_stderr(const char *const *args, int tty, char *err, size_t size)
{
    int master = -1, pipefd[2] = {-1, -1};
    const char *slave = NULL;
    if (tty) {
        master = posix_openpt(O_RDWR | O_NOCTTY);
        assert_true(master >= 0);
        assert_int_equal(grantpt(master), 0);
        assert_int_equal(unlockpt(master), 0);
        slave = ptsname(master);
        assert_non_null(slave);
    } else {
        assert_int_equal(pipe(pipefd), 0);
    }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int e = tty ? open(slave, O_RDWR) : pipefd[1];
        int null = open("/dev/null", O_WRONLY);
        if (e < 0 || null < 0) _exit(127);
        dup2(e, STDERR_FILENO);
        dup2(null, STDOUT_FILENO);
        const char *argv[16] = {EPOCHSIM_BINARY};
        int n = 1;
        for (; *args; args++)
            argv[n++] = *args;
        execv(EPOCHSIM_BINARY, (char *const *)argv);
        _exit(127);
    }
    int fd = tty ? master : pipefd[0];
    if (!tty) close(pipefd[1]);
    size_t used = 0;
    for (;;) {
        ssize_t got = read(fd, err + used, size - 1 - used);
        if (got > 0 && used + (size_t)got < size - 1)
            used += (size_t)got;
        else if (got <= 0 && (got == 0 || errno != EINTR))
            break; /* EOF, or EIO on the master once the child closed the terminal */
    }
    err[used] = 0;
    close(fd);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static char *slurp(const char *path)
{
    static char buf[2][65536];
    static int which;
    char *b = buf[which ^= 1];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    b[fread(b, 1, sizeof buf[0] - 1, f)] = 0;
    fclose(f);
    return b;
}

static void terminal_shows_progress_with_same_figures(void **state)
{
    (void)state;
    static char err[1 << 16];
    /* Paths of this process's own: another build's test may run at the same time. */
    char tty_json[64], pipe_json[64];
    snprintf(tty_json, sizeof tty_json, "/tmp/epochsim-progress-tty-%ld.json", (long)getpid());
    snprintf(pipe_json, sizeof pipe_json, "/tmp/epochsim-progress-pipe-%ld.json", (long)getpid());
    const char *tty_args[] = {"run", "--set", LONG_EPOCHS, "--no-advice", "--json", tty_json, NULL};
    assert_int_equal(run_with_stderr(tty_args, 1, err, sizeof err), 0);
    assert_non_null(strstr(err, "simulating"));
    assert_non_null(strstr(err, " %"));
    const char *pipe_args[] = {"run",    "--set",   LONG_EPOCHS, "--no-advice",
                               "--json", pipe_json, NULL};
    assert_int_equal(run_with_stderr(pipe_args, 0, err, sizeof err), 0);
    assert_null(strstr(err, "simulating")); /* a pipe or a log file gets no progress */
    assert_string_equal(slurp(tty_json), slurp(pipe_json));
    unlink(tty_json);
    unlink(pipe_json);
}

static void quiet_and_short_runs_stay_silent(void **state)
{
    (void)state;
    static char err[1 << 16];
    const char *quiet[] = {"run", "--set", LONG_EPOCHS, "--no-advice", "--quiet", NULL};
    assert_int_equal(run_with_stderr(quiet, 1, err, sizeof err), 0);
    assert_null(strstr(err, "simulating"));
    /* 5 steps take milliseconds, far below the second after which the line appears */
    const char *brief[] = {"run", "--set", "training.max_steps=5", "--json", "/dev/null", NULL};
    assert_int_equal(run_with_stderr(brief, 1, err, sizeof err), 0);
    assert_null(strstr(err, "simulating"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(terminal_shows_progress_with_same_figures),
        cmocka_unit_test(quiet_and_short_runs_stay_silent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
