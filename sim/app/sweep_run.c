/* sweep_run.c — the sweep runner (see sweep_run.h).
 * Workers take point indices in order from a shared counter and leave finished rows in a ring of
 * slots; the calling thread writes them strictly in index order. A worker never runs more than
 * `window` points ahead of the writer, so a slow point bounds memory instead of letting rows pile
 * up. */
#include "sim/app/sweep_run.h"

#include "sim/setup/scenario.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct slot {
    char *row;
    size_t len;
    bool ready;
    bool failed, oom;
    uint64_t events;
} slot;

typedef struct ctx {
    const sim_sweep_spec *spec;
    const sim_experiment *base;
    const cfg_experiment_set *base_set;
    const sim_sweep_opts *o;
    sim_sweep_layout L;
    uint64_t n;          /* positions: the points this run writes, in point order */
    uint64_t *points;    /* position -> point index when sharded; NULL: the same number */
    unsigned char *done; /* per position: already in the file */
    char *head;          /* what the file starts with: the shard line, the CSV header */
    size_t head_len;
    pthread_mutex_t mu;
    pthread_cond_t cv_done;  /* a row is ready or a worker left */
    pthread_cond_t cv_space; /* the writer moved on */
    uint64_t next;           /* next position to hand out */
    uint64_t wpos;           /* next position to write */
    slot *slots;
    uint64_t window;
    int active; /* workers still running */
    bool abort; /* the writer gave up (write error) */
} ctx;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t point_at(const ctx *c, uint64_t pos)
{
    return c->points ? c->points[pos] : pos;
}

static int by_index(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The position of point `index` in this run; false when the run does not write it. */
static bool position_of(const ctx *c, uint64_t index, uint64_t *pos)
{
    if (!c->points) {
        *pos = index;
        return index < c->n;
    }
    const uint64_t *at = bsearch(&index, c->points, c->n, sizeof *at, by_index);
    if (at) *pos = (uint64_t)(at - c->points);
    return at != NULL;
}

static bool stopping(const ctx *c)
{
    return (c->o->stop && *c->o->stop) || c->abort;
}

static void wait_a_little(pthread_cond_t *cv, pthread_mutex_t *mu)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 100 * 1000 * 1000; /* 0.1 s: how often stop and progress are looked at */
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(cv, mu, &ts);
}

/* `where:line:col: msg`, as sim_err_print prints it, for the error column. */
static void err_text(const sim_err *e, char *buf, size_t size)
{
    if (e->where[0] && e->line)
        snprintf(buf, size, "%s:%d:%d: %s", e->where, e->line, e->col, e->msg);
    else if (e->where[0])
        snprintf(buf, size, "%s: %s", e->where, e->msg);
    else
        snprintf(buf, size, "%s", e->msg);
}

/* Runs point i (all replications) and formats its row into sl. */
static void run_point(ctx *c, uint64_t i, slot *sl)
{
    const sim_sweep_layout *L = &c->L;
    int R = c->o->replications;
    const char **values = calloc(L->n_swept + 1, sizeof *values);
    sim_sweep_fig **figs = calloc((size_t)R, sizeof *figs);
    char msg[SIM_ERR_MSG_MAX + SIM_ERR_WHERE_MAX + 32] = "";
    sim_sweep_outcome out = {.index = i, .values = values, .status = SIM_SWEEP_RAN, .figs = figs};
    sim_err err;
    sim_err_clear(&err);
    memset(sl, 0, sizeof *sl);
    if (!values || !figs) {
        free(values);
        free(figs);
        return; /* row stays NULL: the writer reports out of memory */
    }
    sim_sweep_point p;
    sim_sweep_spec_point(c->spec, i, &p, values);
    sim_experiment x = *c->base;
    cfg_experiment_set set = *c->base_set;
    if (sim_sweep_point_apply(c->spec, &p, &x, &set, &out.seed, &err)) {
        out.status = SIM_SWEEP_FAILED;
        err_text(&err, msg, sizeof msg);
    }
    for (int r = 0; r < R && out.status == SIM_SWEEP_RAN; r++) {
        x.seed = sim_sweep_replication_seed(out.seed, r);
        sim_scenario sc;
        sim_result res;
        memset(&res, 0, sizeof res);
        int rc = sim_scenario_build(&x, &set, c->o->catalog_dir, &sc, &err);
        if (rc == SIM_EOOM) {
            out.status = SIM_SWEEP_OOM;
            out.memory = sc.memory;
        } else if (rc || (rc = sim_run(&sc, &res, &err))) {
            out.status = SIM_SWEEP_FAILED;
            err_text(&err, msg, sizeof msg);
        } else {
            if (r == 0) out.memory = sc.memory;
            size_t nf = 0;
            sl->events += res.events;
            if (sim_sweep_flatten(&res, &figs[r], &nf, &err)) {
                out.status = SIM_SWEEP_FAILED;
                err_text(&err, msg, sizeof msg);
            } else {
                /* Every run reports the same figures as the empty template. */
                SIM_ASSERT(nf == L->n_figs);
                for (size_t k = 0; k < nf; k++)
                    SIM_ASSERT(!strcmp(figs[r][k].name, L->tmpl[k].name));
            }
            sim_result_free(&res);
        }
        sim_scenario_free(&sc);
    }
    out.error = msg;
    sl->failed = out.status == SIM_SWEEP_FAILED;
    sl->oom = out.status == SIM_SWEEP_OOM;
    sl->row = sim_sweep_row(L, &out, &sl->len);
    for (int r = 0; r < R; r++)
        sim_sweep_figs_free(figs[r], L->n_figs);
    free(figs);
    free(values);
}

static void *worker(void *arg)
{
    ctx *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (c->next < c->n && c->done[c->next])
            c->next++;
        if (c->next >= c->n || stopping(c)) break;
        if (c->next >= c->wpos + c->window) {
            wait_a_little(&c->cv_space, &c->mu);
            continue;
        }
        uint64_t i = c->next++;
        pthread_mutex_unlock(&c->mu);
        slot s;
        run_point(c, point_at(c, i), &s);
        pthread_mutex_lock(&c->mu);
        s.ready = true;
        c->slots[i % c->window] = s;
        pthread_cond_signal(&c->cv_done);
    }
    c->active--;
    pthread_cond_signal(&c->cv_done);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ---- output ---- */

static int write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int sim_sweep_read_fd(int fd, char **data, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st)) return -1;
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf) return -1;
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            free(buf);
            return -1;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return 0;
}

/* The seed point i must carry (its assignments applied to a scratch copy of the base). */
static uint64_t expected_seed(const ctx *c, uint64_t i, const char **values)
{
    sim_sweep_point p;
    sim_sweep_spec_point(c->spec, i, &p, values);
    sim_experiment x = *c->base;
    cfg_experiment_set set = *c->base_set;
    uint64_t seed = 0;
    sim_sweep_point_apply(c->spec, &p, &x, &set, &seed, NULL);
    return seed;
}

/* Reads what an interrupted run left: cuts a partial last line, checks the header and marks the
 * points already present. *need_header is set when the file holds no complete header. */
static int resume_scan(ctx *c, int fd, const char *path, bool *need_header, sim_err *err)
{
    char *data;
    size_t len;
    if (sim_sweep_read_fd(fd, &data, &len))
        return sim_err_set(err, SIM_EIO, path, 0, 0, "cannot read: %s", strerror(errno));
    size_t keep = len;
    while (keep && data[keep - 1] != '\n')
        keep--;
    int rc = SIM_OK;
    const char **values = calloc(c->L.n_swept + 1, sizeof *values);
    if (!values) {
        free(data);
        return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    if (keep != len && ftruncate(fd, (off_t)keep)) {
        rc = sim_err_set(err, SIM_EIO, path, 0, 0, "cannot cut the partial last line: %s",
                         strerror(errno));
        goto done;
    }
    size_t pos = 0;
    int line = 1;
    *need_header = false;
    if (c->head_len) {
        if (keep == 0) {
            *need_header = true;
            goto done;
        }
        if (keep < c->head_len || memcmp(data, c->head, c->head_len)) {
            rc = sim_err_set(err, SIM_EFORMAT, path, 1, 1,
                             "the file does not start as this sweep's does (another sweep, "
                             "shard, format or --replications?); not resuming");
            goto done;
        }
        pos = c->head_len;
        for (size_t k = 0; k < pos; k++)
            line += data[k] == '\n';
    }
    while (pos < keep) {
        char *eol = memchr(data + pos, '\n', keep - pos);
        size_t llen = (size_t)(eol - (data + pos));
        uint64_t index = 0, seed = 0;
        char **got = NULL;
        int r = sim_sweep_row_identity(&c->L, data + pos, llen, &index, &seed, &got);
        uint64_t at = 0;
        bool ok = r == SIM_OK && position_of(c, index, &at) && !c->done[at];
        if (ok) {
            ok = expected_seed(c, index, values) == seed;
            for (size_t k = 0; ok && k < c->L.n_swept; k++)
                ok = !strcmp(values[k], got[k]);
        }
        sim_sweep_values_free(got, c->L.n_swept);
        if (r == SIM_ENOMEM) {
            rc = sim_err_set(err, SIM_ENOMEM, path, line, 0, "out of memory");
            goto done;
        }
        if (!ok) {
            rc = sim_err_set(err, SIM_EFORMAT, path, line, 1,
                             "this row is not a point of this sweep or shard (or is there "
                             "twice); not resuming");
            goto done;
        }
        c->done[at] = 1;
        pos += llen + 1;
        line++;
    }
done:
    free(values);
    free(data);
    return rc;
}

static int open_output(ctx *c, int *fd_out, bool *to_stdout, sim_err *err)
{
    const sim_sweep_opts *o = c->o;
    const char *path = o->out_path;
    bool need_header = true;
    *to_stdout = !path || !strcmp(path, "-");
    int fd;
    if (*to_stdout) {
        fd = STDOUT_FILENO;
    } else if (o->resume && (fd = open(path, O_RDWR | O_APPEND)) >= 0) {
        int rc = resume_scan(c, fd, path, &need_header, err);
        if (rc) {
            close(fd);
            return rc;
        }
    } else {
        if (o->resume && errno != ENOENT)
            return sim_err_set(err, SIM_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
        int flags = O_WRONLY | O_CREAT | O_APPEND | (o->force ? O_TRUNC : O_EXCL);
        fd = open(path, flags, 0666);
        if (fd < 0 && errno == EEXIST)
            return sim_err_set(err, SIM_EINVAL, path, 0, 0,
                               "exists; pass --resume to finish it or --force to start over");
        if (fd < 0)
            return sim_err_set(err, SIM_EIO, path, 0, 0, "cannot create: %s", strerror(errno));
    }
    if (need_header && write_all(fd, c->head, c->head_len)) {
        int rc = sim_err_set(err, SIM_EIO, *to_stdout ? "stdout" : path, 0, 0, "cannot write: %s",
                             strerror(errno));
        if (!*to_stdout) close(fd);
        return rc;
    }
    *fd_out = fd;
    return SIM_OK;
}

static void progress(const ctx *c, uint64_t done, uint64_t total, double t0, bool final)
{
    double el = now_s() - t0;
    double frac = total ? (double)done / (double)total : 1.0;
    int width = 30, fill = (int)(frac * width);
    char bar[32];
    for (int k = 0; k < width; k++)
        bar[k] = k < fill ? '#' : '.';
    bar[width] = 0;
    double eta = done ? el / (double)done * (double)(total - done) : 0;
    fprintf(stderr, "\rsweep [%s] %llu/%llu %3.0f %%  %s %d:%02d   ", bar, (unsigned long long)done,
            (unsigned long long)total, frac * 100, final ? "took" : "ETA",
            (int)((final ? el : eta) / 60), (int)(final ? el : eta) % 60);
    if (final) fputc('\n', stderr);
    (void)c;
}

/* Starts up to `threads` workers; returns how many started. */
static int start_workers(ctx *c, pthread_t *tids, int threads)
{
    int started = 0;
    pthread_mutex_lock(&c->mu); /* workers wait here until `active` counts them all */
    for (; started < threads; started++) {
        c->active++;
        if (pthread_create(&tids[started], NULL, worker, c)) {
            c->active--;
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return started;
}

/* The writer's side: where rows go, and when it last synced the file and drew the bar. */
typedef struct writer {
    int fd;
    bool to_stdout;
    const char *where;              /* the output, for messages */
    uint64_t todo;                  /* rows this run has to write, for the bar */
    double t0, last_sync, last_bar; /* s */
} writer;

/* Writes the finished row of s (freeing it) and counts it in st. */
static int put_row(const writer *w, slot *s, sim_sweep_stats *st, sim_err *err)
{
    int rc = SIM_OK;
    if (!s->row)
        rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory formatting a row");
    else if (write_all(w->fd, s->row, s->len))
        rc = sim_err_set(err, SIM_EIO, w->where, 0, 0, "cannot write: %s", strerror(errno));
    free(s->row);
    if (!rc) {
        st->written++;
        st->failed += s->failed;
        st->oom += s->oom;
        st->events += s->events;
    }
    return rc;
}

/* After a row: syncs the file at most once a second, redraws the bar at most ten times. */
static void pace(const ctx *c, writer *w, const sim_sweep_stats *st)
{
    double t = now_s();
    if (!w->to_stdout && t - w->last_sync >= 1.0) { /* bound the loss on power failure */
        fsync(w->fd);
        w->last_sync = t;
    }
    if (c->o->progress && t - w->last_bar >= 0.1) {
        progress(c, st->written, w->todo, w->t0, false);
        w->last_bar = t;
    }
}

/* Writes the rows in point order as the workers finish them, until all are written, one fails
 * to be written, or the workers have stopped. Called and returns with c->mu held. */
static int write_rows(ctx *c, writer *w, sim_sweep_stats *st, sim_err *err)
{
    int rc = SIM_OK;
    while (!rc) {
        while (c->wpos < c->n && c->done[c->wpos])
            c->wpos++;
        if (c->wpos >= c->n) break;
        slot *sl = &c->slots[c->wpos % c->window];
        if (sl->ready) {
            slot s = *sl;
            memset(sl, 0, sizeof *sl);
            c->wpos++;
            pthread_cond_broadcast(&c->cv_space);
            pthread_mutex_unlock(&c->mu);
            rc = put_row(w, &s, st, err);
            pace(c, w, st);
            pthread_mutex_lock(&c->mu);
            if (rc) c->abort = true;
            continue;
        }
        if (c->active == 0) break; /* stopped: the next row will not come */
        wait_a_little(&c->cv_done, &c->mu);
    }
    return rc;
}

/* Stops the workers (they see c->abort when rc failed) and frees what they shared. */
static void stop_workers(ctx *c, pthread_t *tids, int started, int rc)
{
    c->abort = c->abort || rc;
    pthread_mutex_unlock(&c->mu);
    for (int t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    for (uint64_t k = 0; k < c->window; k++)
        free(c->slots[k].row);
    pthread_cond_destroy(&c->cv_space);
    pthread_cond_destroy(&c->cv_done);
    pthread_mutex_destroy(&c->mu);
}

/* What the file starts with (c->head): the shard line when sharded, then the CSV header. When
 * sharded, also the shard's points (c->points, c->n). */
static int make_head(ctx *c, sim_err *err)
{
    size_t line_len = 0, hlen = 0;
    char *line = NULL, *header = sim_sweep_header(&c->L, &hlen);
    int rc = header ? SIM_OK : SIM_ENOMEM;
    if (!rc && c->o->shard.count) {
        unsigned char *member = malloc(c->n ? c->n : 1);
        sim_sweep_shard_head sh;
        rc = member ? sim_sweep_shard_plan(c->spec, c->base, c->base_set, &c->L, c->o->shard,
                                           member, &sh, err)
                    : SIM_ENOMEM;
        if (!rc && !(c->points = malloc((sh.rows ? sh.rows : 1) * sizeof *c->points)))
            rc = SIM_ENOMEM;
        uint64_t k = 0;
        for (uint64_t i = 0; !rc && i < c->n; i++)
            if (member[i]) c->points[k++] = i;
        if (!rc) c->n = k;
        if (!rc && !(line = sim_sweep_shard_line(&sh, &line_len))) rc = SIM_ENOMEM;
        free(member);
    }
    if (!rc && (c->head = malloc(line_len + hlen + 1))) {
        memcpy(c->head, line ? line : "", line_len);
        memcpy(c->head + line_len, header, hlen + 1);
        c->head_len = line_len + hlen;
    } else if (!rc) {
        rc = SIM_ENOMEM;
    }
    free(line);
    free(header);
    if (rc == SIM_ENOMEM) return sim_err_set(err, rc, NULL, 0, 0, "out of memory");
    return rc;
}

int sim_sweep_run(const sim_sweep_spec *spec, const sim_experiment *base,
                  const cfg_experiment_set *base_set, const sim_sweep_opts *o, sim_sweep_stats *st,
                  sim_err *err)
{
    memset(st, 0, sizeof *st);
    writer w = {.fd = -1, .t0 = now_s()};
    ctx c = {.spec = spec, .base = base, .base_set = base_set, .o = o};
    int threads = o->threads > 0 ? o->threads : 1;
    pthread_t *tids = NULL;
    int rc = sim_sweep_layout_init(&c.L, spec, o->format, o->replications,
                                   base->run.sampled_pct > 0, err);
    if (rc) return rc;
    c.n = sim_sweep_spec_points(spec);
    c.window = 64 * (uint64_t)threads;
    if ((rc = make_head(&c, err))) goto out;
    st->points = c.n;
    c.done = calloc(c.n ? c.n : 1, 1);
    c.slots = calloc(c.window, sizeof *c.slots);
    tids = calloc((size_t)threads, sizeof *tids);
    if (!c.done || !c.slots || !tids) {
        rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto out;
    }
    if ((rc = open_output(&c, &w.fd, &w.to_stdout, err))) goto out;
    for (uint64_t i = 0; i < c.n; i++)
        st->skipped += c.done[i];
    pthread_mutex_init(&c.mu, NULL);
    pthread_cond_init(&c.cv_done, NULL);
    pthread_cond_init(&c.cv_space, NULL);
    int started = start_workers(&c, tids, threads);
    w.where = w.to_stdout ? "stdout" : o->out_path;
    w.todo = c.n - st->skipped;
    w.last_sync = now_s();
    pthread_mutex_lock(&c.mu);
    if (!started)
        rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "cannot start a thread");
    else
        rc = write_rows(&c, &w, st, err);
    stop_workers(&c, tids, started, rc);
    if (!w.to_stdout && fsync(w.fd) && errno != EINVAL && !rc)
        rc = sim_err_set(err, SIM_EIO, w.where, 0, 0, "cannot sync: %s", strerror(errno));
    st->interrupted = !rc && st->skipped + st->written < c.n;
    if (o->progress) progress(&c, st->written, w.todo, w.t0, true);
out:
    if (w.fd >= 0 && !w.to_stdout) close(w.fd);
    st->wall_s = now_s() - w.t0;
    free(tids);
    free(c.slots);
    free(c.done);
    free(c.points);
    free(c.head);
    sim_sweep_layout_free(&c.L);
    return rc;
}
