/* sweep_merge.c — joining shard files (see sweep_merge.h).
 * Every file is read whole and checked before the first byte is written: rows are indexed by
 * their point, which finds duplicates and gaps at once, and then written in point order. */
#include "sim/app/sweep_merge.h"

#include "sim/app/sweep_run.h"
#include "sim/app/sweep_shard.h"
#include "sim/base/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct shard_file {
    const char *path;
    char *data;
    size_t len;
    size_t header_len; /* the CSV header after the shard line */
    size_t body;       /* where the rows start */
    sim_sweep_shard_head head;
} shard_file;

/* One row of the merged file: where it lies and which file it came from. */
typedef struct row_ref {
    const char *text;
    size_t len;
    size_t file; /* index + 1; 0 = no row yet */
} row_ref;

/* Reads path and its first line (and the CSV header after it). */
static int load(shard_file *f, sim_err *err)
{
    int fd = open(f->path, O_RDONLY);
    if (fd < 0) return sim_err_set(err, SIM_EIO, f->path, 0, 0, "cannot open: %s", strerror(errno));
    int bad = sim_sweep_read_fd(fd, &f->data, &f->len);
    int saved = errno;
    close(fd);
    if (bad) return sim_err_set(err, SIM_EIO, f->path, 0, 0, "cannot read: %s", strerror(saved));
    const char *eol = memchr(f->data, '\n', f->len);
    if (!eol || sim_sweep_shard_line_parse(f->data, (size_t)(eol - f->data), &f->head))
        return sim_err_set(err, SIM_EFORMAT, f->path, 1, 1,
                           "not a sweep shard (its first line is not `# epochsim sweep shard "
                           "I/N: ...`; was it written with --shard?)");
    f->body = (size_t)(eol - f->data) + 1;
    if (f->head.format == SIM_SWEEP_CSV) {
        const char *hend = memchr(f->data + f->body, '\n', f->len - f->body);
        if (!hend) return sim_err_set(err, SIM_EFORMAT, f->path, 2, 1, "no CSV header line");
        f->header_len = (size_t)(hend - (f->data + f->body)) + 1;
        f->body += f->header_len;
    }
    return SIM_OK;
}

/* Same sweep as the first file, and a shard not seen before (by_shard: count entries). */
static int check_shard(const shard_file *files, size_t i, const shard_file **by_shard, sim_err *err)
{
    const sim_sweep_shard_head *h = &files[i].head, *h0 = &files[0].head;
    if (h->shard.count != h0->shard.count || h->points != h0->points || h->format != h0->format ||
        h->fingerprint != h0->fingerprint)
        return sim_err_set(err, SIM_EINVAL, files[i].path, 1, 1,
                           "a shard of another sweep than %s (shard %" PRIu64 "/%" PRIu64
                           " of %" PRIu64 " points, grid %016" PRIx64 "; %s has %" PRIu64
                           "/%" PRIu64 " of %" PRIu64 " points, grid %016" PRIx64 ")",
                           files[0].path, h->shard.index, h->shard.count, h->points, h->fingerprint,
                           files[0].path, h0->shard.index, h0->shard.count, h0->points,
                           h0->fingerprint);
    if (h->format == SIM_SWEEP_CSV &&
        (files[i].header_len != files[0].header_len ||
         memcmp(files[i].data + files[i].body - files[i].header_len,
                files[0].data + files[0].body - files[0].header_len, files[0].header_len)))
        return sim_err_set(err, SIM_EINVAL, files[i].path, 2, 1,
                           "the CSV header differs from that of %s", files[0].path);
    const shard_file *seen = by_shard[h->shard.index];
    if (seen)
        return sim_err_set(err, SIM_EINVAL, files[i].path, 1, 1,
                           "shard %" PRIu64 "/%" PRIu64 " is given twice (also %s)", h->shard.index,
                           h->shard.count, seen->path);
    by_shard[h->shard.index] = &files[i];
    return SIM_OK;
}

/* Every shard 0..count-1 is there; names the first that is not. */
static int check_all_there(const shard_file **by_shard, uint64_t count, sim_err *err)
{
    uint64_t missing = 0, first = 0;
    for (uint64_t s = count; s-- > 0;)
        if (!by_shard[s]) {
            missing++;
            first = s;
        }
    if (missing)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "shard %" PRIu64 "/%" PRIu64 " is missing (%" PRIu64 " of %" PRIu64
                           " missing; give the files of all shards, 0/%" PRIu64 " to %" PRIu64
                           "/%" PRIu64 ")",
                           first, count, missing, count, count, count - 1, count);
    return SIM_OK;
}

/* Indexes the rows of file i by point: each once, and as many as its first line says. */
static int index_rows(const shard_file *files, size_t i, row_ref *rows, sim_err *err)
{
    const shard_file *f = &files[i];
    uint64_t got = 0;
    int line = f->head.format == SIM_SWEEP_CSV ? 3 : 2;
    for (size_t pos = f->body; pos < f->len; line++) {
        const char *eol = memchr(f->data + pos, '\n', f->len - pos);
        if (!eol) break; /* a cut last line: counted as missing below */
        size_t len = (size_t)(eol - (f->data + pos)) + 1;
        uint64_t p;
        if (sim_sweep_row_point(f->head.format, f->data + pos, len, &p) || p >= f->head.points)
            return sim_err_set(err, SIM_EFORMAT, f->path, line, 1,
                               "not a row of this sweep (no point index below %" PRIu64 ")",
                               f->head.points);
        if (rows[p].file)
            return sim_err_set(err, SIM_EINVAL, f->path, line, 1, "point %" PRIu64 " is also in %s",
                               p, files[rows[p].file - 1].path);
        rows[p] = (row_ref){.text = f->data + pos, .len = len, .file = i + 1};
        got++;
        pos += len;
    }
    if (got != f->head.rows)
        return sim_err_set(err, SIM_EINVAL, f->path, 0, 0,
                           "shard %" PRIu64 "/%" PRIu64 " is incomplete: %" PRIu64
                           " of its %" PRIu64 " rows (finish it: rerun its sweep with --resume)",
                           f->head.shard.index, f->head.shard.count, got, f->head.rows);
    return SIM_OK;
}

/* The merged file: the header of the first shard, then every row in point order. */
static int write_merged(const char *out, const shard_file *f0, const row_ref *rows, sim_err *err)
{
    for (uint64_t p = 0; p < f0->head.points; p++)
        if (!rows[p].file)
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                               "point %" PRIu64 " is in none of the shard files", p);
    sim_outfile o;
    int rc = sim_outfile_open(&o, out, err);
    if (rc) return rc;
    size_t put = fwrite(f0->data + f0->body - f0->header_len, 1, f0->header_len, o.fp);
    int bad = put != f0->header_len;
    for (uint64_t p = 0; !bad && p < f0->head.points; p++)
        bad = fwrite(rows[p].text, 1, rows[p].len, o.fp) != rows[p].len;
    if (bad) {
        rc = sim_err_set(err, SIM_EIO, out, 0, 0, "cannot write: %s", strerror(errno));
        sim_outfile_abort(&o);
        return rc;
    }
    return sim_outfile_commit(&o, err);
}

int sim_sweep_merge(const char *out, const char *const *paths, size_t n, sim_err *err)
{
    if (n == 0) return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "no shard files to merge");
    shard_file *files = calloc(n, sizeof *files);
    const shard_file **by_shard = NULL;
    row_ref *rows = NULL;
    int rc = files ? SIM_OK : sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        files[i].path = paths[i];
        rc = load(&files[i], err);
    }
    if (!rc) {
        by_shard = calloc(files[0].head.shard.count, sizeof *by_shard);
        rows = calloc(files[0].head.points ? files[0].head.points : 1, sizeof *rows);
        if (!by_shard || !rows) rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    for (size_t i = 0; !rc && i < n; i++)
        rc = check_shard(files, i, by_shard, err);
    if (!rc) rc = check_all_there(by_shard, files[0].head.shard.count, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = index_rows(files, i, rows, err);
    if (!rc) rc = write_merged(out, &files[0], rows, err);
    for (size_t i = 0; files && i < n; i++)
        free(files[i].data);
    free(files);
    free(by_shard);
    free(rows);
    return rc;
}
