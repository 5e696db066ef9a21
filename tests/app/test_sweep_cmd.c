/* test_sweep_cmd.c — the epochsim binary as scripts see it: a sweep killed with SIGTERM midway and
 * finished with --resume equals a clean run; so do two shards, one killed with SIGKILL and
 * resumed, after `sweep merge`; every subcommand answers --help with examples on
 * stdout and exit 0, a bad option with exit 2 and nothing on stdout; --version. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/tests/data/catalog"

/* Starts EPOCHSIM_BINARY with args; stdout goes to out_path (or /dev/null), stderr to
 * /dev/null. Returns the child's pid. */
static pid_t start(const char *const *args, const char *out_path)
{
    const char *argv[64];
    size_t n = 0;
    argv[n++] = EPOCHSIM_BINARY;
    for (; *args; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int o = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open("/dev/null", O_WRONLY);
        if (o < 0 || e < 0) _exit(127);
        dup2(o, STDOUT_FILENO);
        dup2(e, STDERR_FILENO);
        execv(EPOCHSIM_BINARY, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static int finish(pid_t pid)
{
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status))
        fail_msg("epochsim died with signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    return WEXITSTATUS(status);
}

static int run(const char *const *args, const char *out_path)
{
    return finish(start(args, out_path));
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    buf[n] = 0;
    fclose(fp);
    if (len) *len = (size_t)n;
    return buf;
}

static size_t lines_in(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return 0;
    size_t n = 0;
    int c;
    while ((c = fgetc(fp)) != EOF)
        n += c == '\n';
    fclose(fp);
    return n;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows of a CSV file, sorted (the test compares the set of rows as well as the bytes). */
static size_t sorted_rows(char *data, char **rows, size_t max)
{
    size_t n = 0;
    for (char *line = data, *eol; (eol = strchr(line, '\n')); line = eol + 1) {
        *eol = 0;
        assert_true(n < max);
        rows[n++] = line;
    }
    qsort(rows, n, sizeof *rows, cmp_lines);
    return n;
}

/* The sweep both kill tests run, on the test devices: every decode_cv from 0 to 0.9 on 2
 * threads; the tests add the steps, more axes and the output. */
static const char *const job[] = {
    "--catalog", CATALOG,
    "--set",     "system.gpu=test-gpu",
    "--set",     "system.cpu=test-cpu-8c",
    "--set",     "system.storage=test-nvme",
    "--set",     "dataset.samples=200000",
    "--sweep",   "dataset.decode_cv=0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9",
    "-j",        "2",
    NULL};

/* argv = sweep, job, more (NULL-terminated; argv has room for 64); returns the count. */
static size_t sweep_argv(const char **argv, const char *const *more)
{
    size_t n = 0;
    argv[n++] = "sweep";
    for (const char *const *a = job; *a; a++)
        argv[n++] = *a;
    for (; *more; more++)
        argv[n++] = *more;
    assert_true(n < 62);
    argv[n] = NULL;
    return n;
}

static void test_sweep_cli_sigterm_then_resume(void **state)
{
    (void)state;
    char killed[64], clean[64];
    snprintf(killed, sizeof killed, "/tmp/epochsim-sweep-kill-%d.csv", (int)getpid());
    snprintf(clean, sizeof clean, "/tmp/epochsim-sweep-clean-%d.csv", (int)getpid());
    unlink(killed);
    unlink(clean);
    /* 240 points of 200 steps: long enough (seconds) to be killed midway. */
    const char *args[64];
    size_t n_args = sweep_argv(
        args, (const char *const[]){"--set", "training.max_steps=200", "--sweep",
                                    "loader.batch_size=16,32,64,128", "--sweep",
                                    "loader.num_workers=0,1,2,4,8,16", "-o", killed, NULL});
    args[n_args + 1] = NULL; /* room for --resume */
    pid_t pid = start(args, NULL);
    /* Wait for the header and a few rows, then SIGTERM. */
    size_t seen = 0;
    for (int t = 0; t < 3000 && (seen = lines_in(killed)) < 4; t++)
        sleep_ms(5);
    assert_true(seen >= 4);
    kill(pid, SIGTERM);
    /* Stopped cleanly: exit 1 (interrupted), not killed by the signal. */
    assert_int_equal(finish(pid), 1);
    size_t len;
    char *part = slurp(killed, &len);
    assert_true(len > 0 && part[len - 1] == '\n'); /* whole rows only */
    size_t rows_before = lines_in(killed);
    free(part);
    assert_true(rows_before < 241); /* it really stopped early */

    args[n_args] = "--resume";
    assert_int_equal(run(args, NULL), 0);
    args[n_args] = NULL;
    for (size_t i = 0; i < n_args; i++)
        if (args[i] == killed) args[i] = clean;
    assert_int_equal(run(args, NULL), 0);

    size_t lk, lc;
    char *dk = slurp(killed, &lk), *dc = slurp(clean, &lc);
    assert_int_equal(lines_in(killed), 241);
    static char *rk[300], *rc[300];
    assert_int_equal(lk, lc);
    assert_memory_equal(dk, dc, lk); /* rows go out in point order, so even the bytes agree */
    size_t nk = sorted_rows(dk, rk, 300), nc = sorted_rows(dc, rc, 300);
    assert_int_equal(nk, nc);
    for (size_t i = 0; i < nk; i++)
        assert_string_equal(rk[i], rc[i]);
    free(dk);
    free(dc);
    unlink(killed);
    unlink(clean);
}

/* Starts args with `--shard I/2 -o path` (`-o path` alone for I < 0) and, if resume, `--resume`;
 * returns the pid. */
static pid_t start_shard(const char *const *args, int i, const char *path, bool resume)
{
    const char *argv[64];
    char shard[16];
    size_t n = 0;
    for (; *args; args++)
        argv[n++] = *args;
    snprintf(shard, sizeof shard, "%d/2", i);
    if (i >= 0) {
        argv[n++] = "--shard";
        argv[n++] = shard;
    }
    argv[n++] = "-o";
    argv[n++] = path;
    if (resume) argv[n++] = "--resume";
    argv[n] = NULL;
    return start(argv, NULL);
}

static void test_sweep_cli_shard_kill9_resume_merge(void **state)
{
    (void)state;
    char single[64], s0[64], s1[64], merged[64];
    snprintf(single, sizeof single, "/tmp/epochsim-shard-single-%d.csv", (int)getpid());
    snprintf(s0, sizeof s0, "/tmp/epochsim-shard-0-%d", (int)getpid());
    snprintf(s1, sizeof s1, "/tmp/epochsim-shard-1-%d", (int)getpid());
    snprintf(merged, sizeof merged, "/tmp/epochsim-shard-merged-%d.csv", (int)getpid());
    unlink(s0);
    /* 120 points of 50 steps on 2 threads: long enough (about a second) to be killed midway. */
    const char *args[64];
    size_t n_args =
        sweep_argv(args, (const char *const[]){"--set", "training.max_steps=50", "--sweep",
                                               "loader.batch_size=16,32,64", "--sweep",
                                               "loader.num_workers=0,1,2,4", "--force", NULL});
    assert_int_equal(finish(start_shard(args, -1, single, false)), 0);
    pid_t pid = start_shard(args, 0, s0, false);
    size_t seen = 0;
    for (int t = 0; t < 3000 && (seen = lines_in(s0)) < 5; t++)
        sleep_ms(5);
    kill(pid, SIGKILL); /* no clean stop: the file ends wherever the last write() left it */
    waitpid(pid, NULL, 0);
    char *cut = slurp(s0, NULL);
    unsigned long rows = 0; /* the shard's points, from its first line */
    assert_int_equal(sscanf(cut, "# epochsim sweep shard 0/2: %lu of 120 points", &rows), 1);
    free(cut);
    assert_true(seen >= 5 && lines_in(s0) < rows + 2); /* shard line, header, rows: really cut */
    args[n_args - 1] = NULL;                           /* --resume instead of --force */
    assert_int_equal(finish(start_shard(args, 0, s0, true)), 0);
    assert_int_equal(finish(start_shard(args, 1, s1, true)), 0);
    const char *merge[] = {"sweep", "merge", "-o", merged, s1, s0, NULL};
    assert_int_equal(run(merge, NULL), 0);
    size_t la, lb;
    char *a = slurp(single, &la), *b = slurp(merged, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    free(a);
    free(b);
    /* Without shard 1 the merge names it and writes nothing. */
    unlink(merged);
    const char *partial[] = {"sweep", "merge", "-o", merged, s0, NULL};
    assert_int_equal(run(partial, NULL), 1);
    assert_int_equal(access(merged, F_OK), -1);
    unlink(single);
    unlink(s0);
    unlink(s1);
}

static void test_sweep_cli_stdout_rows_and_exit_codes(void **state)
{
    (void)state;
    char out[64];
    snprintf(out, sizeof out, "/tmp/epochsim-sweep-out-%d.txt", (int)getpid());
    /* Data on stdout; an invalid point makes exit 1 after every row is written. */
    const char *bad[] = {"sweep",
                         "--catalog",
                         CATALOG,
                         "--set",
                         "system.gpu=test-gpu",
                         "--set",
                         "system.cpu=test-cpu-8c",
                         "--set",
                         "system.storage=test-nvme",
                         "--set",
                         "training.max_steps=5",
                         "--sweep",
                         "loader.batch_size=8,x,16",
                         NULL};
    assert_int_equal(run(bad, out), 1);
    assert_int_equal(lines_in(out), 4);
    const char *good[] = {"sweep",
                          "--catalog",
                          CATALOG,
                          "--set",
                          "system.gpu=test-gpu",
                          "--set",
                          "system.cpu=test-cpu-8c",
                          "--set",
                          "system.storage=test-nvme",
                          "--set",
                          "training.max_steps=5",
                          "--sweep",
                          "loader.batch_size=8,16",
                          "--format",
                          "jsonl",
                          NULL};
    assert_int_equal(run(good, out), 0);
    assert_int_equal(lines_in(out), 2);
    /* Options may follow FILE; the example sweep file runs (16 points, 4 of them OOM: exit 0). */
    const char *file[] = {
        "sweep", EPOCHSIM_SOURCE_DIR "/configs/sweeps/batch-size.yaml", "--quiet", "-j", "2", NULL};
    assert_int_equal(run(file, out), 0);
    assert_int_equal(lines_in(out), 17);
    /* Config errors are 1, usage errors 2. */
    const char *unknown_key[] = {"sweep", "--sweep", "loader.batch_sise=1,2", NULL};
    assert_int_equal(run(unknown_key, out), 1);
    const char *resume_stdout[] = {"sweep", "--resume", NULL};
    assert_int_equal(run(resume_stdout, out), 2);
    const char *bad_jobs[] = {"sweep", "-j", "zero", NULL};
    assert_int_equal(run(bad_jobs, out), 2);
    const char *bad_format[] = {"sweep", "--format", "xml", NULL};
    assert_int_equal(run(bad_format, out), 2);
    const char *missing_value[] = {"sweep", "--sweep", NULL};
    assert_int_equal(run(missing_value, out), 2);
    const char *bad_shard[] = {"sweep", "--shard", "2/2", NULL};
    assert_int_equal(run(bad_shard, out), 2);
    const char *merge_nothing[] = {"sweep", "merge", "-o", out, NULL};
    assert_int_equal(run(merge_nothing, out), 2);
    const char *merge_bad_option[] = {"sweep", "merge", "--jobs", "2", NULL};
    assert_int_equal(run(merge_bad_option, out), 2);
    assert_int_equal(lines_in(out), 0); /* nothing on stdout when it fails early */
    unlink(out);
}

static void test_sweep_cli_every_command_has_help_and_exit_codes(void **state)
{
    (void)state;
    static const char *const commands[] = {"run",   "hw",   "model",    "import",   "trace",
                                           "sweep", "plot", "validate", "calibrate"};
    char out[64];
    snprintf(out, sizeof out, "/tmp/epochsim-help-%d.txt", (int)getpid());
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const char *help[] = {commands[i], "--help", NULL};
        if (run(help, out) != 0) fail_msg("epochsim %s --help: exit not 0", commands[i]);
        char *text = slurp(out, NULL);
        if (!strstr(text, "example") || !strstr(text, "usage: epochsim"))
            fail_msg("epochsim %s --help: no usage or examples on stdout", commands[i]);
        free(text);
        const char *bad[] = {commands[i], "--no-such-option", NULL};
        if (run(bad, out) != 2) fail_msg("epochsim %s --no-such-option: exit not 2", commands[i]);
        if (lines_in(out) != 0)
            fail_msg("epochsim %s --no-such-option: wrote to stdout", commands[i]);
    }
    const char *merge_help[] = {"sweep", "merge", "--help", NULL};
    assert_int_equal(run(merge_help, out), 0);
    char *m = slurp(out, NULL);
    assert_non_null(strstr(m, "usage: epochsim sweep merge"));
    assert_non_null(strstr(m, "example"));
    free(m);
    const char *version[] = {"--version", NULL};
    assert_int_equal(run(version, out), 0);
    char *v = slurp(out, NULL);
    assert_true(!strncmp(v, "epochsim ", 9) && strchr(v, '.'));
    free(v);
    const char *top_help[] = {"--help", NULL};
    assert_int_equal(run(top_help, out), 0);
    char *h = slurp(out, NULL);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        assert_non_null(strstr(h, commands[i]));
    assert_non_null(strstr(h, "Exit codes"));
    free(h);
    const char *unknown[] = {"no-such-command", NULL};
    assert_int_equal(run(unknown, out), 2);
    const char *none[] = {NULL};
    assert_int_equal(run(none, out), 2);
    unlink(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_cli_sigterm_then_resume),
        cmocka_unit_test(test_sweep_cli_shard_kill9_resume_merge),
        cmocka_unit_test(test_sweep_cli_stdout_rows_and_exit_codes),
        cmocka_unit_test(test_sweep_cli_every_command_has_help_and_exit_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
