/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logs into the database (db.h): whole logs (lwm2 db import), and the
 * lines jobcomp/lwm2 has appended since it last looked (follow).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_internal.h"
#include "errmsg.h"

/* Jobs per transaction of an import: large enough that the commit's cost
 * vanishes, small enough that a reader never waits long. */
#define BATCH 5000

struct import {
	struct lwm2_db *db;
	struct lwm2_db_count *count;
	struct lwm2_db_packer pk;
	unsigned long in_batch;
	bool failed;
	void (*progress)(void *arg, const struct lwm2_db_count *c);
	void *arg;
	char err[512];
	/* threads: pk's dictionary, once ready, shared with the workers'
	 * packers (set by the thread that inserts, read by the workers) */
	_Atomic bool dict_shared;
};

/* A job as the workers leave it for the insert: its row, its line packed
 * where the dictionary was ready. */
struct row {
	struct lwm2_jobrow j;
	struct lwm2_db_packer pk;
	bool packed;
};

static void count_added(struct lwm2_db_count *c, bool added)
{
	if (added)
		c->added++;
	else
		c->known++;
}

static int add_line(struct lwm2_db *db, struct lwm2_db_packer *pk, const struct lwm2_logline *l,
                    struct lwm2_db_count *c, char *err, size_t errlen)
{
	struct lwm2_jobrow j;
	bool added;

	int r;

	lwm2_jobrow_fields(l, &j);
	if (lwm2_jobrow_digest(l, &j, LWM2_JR_WANT_ALL, err, errlen) < 0)
		return -1;
	if ((r = lwm2_db_text_pack(pk, db, l, err, errlen)) < 0)
		return r;
	if (lwm2_db_insert(db, &j, &pk->text, &added, err, errlen) < 0)
		return -2;
	count_added(c, added);
	return 0;
}

/* A line's outcome r (add_line's): the import stopped for the database,
 * the line skipped, or counted into its transaction, committed after
 * BATCH of them.  As lwm2_logline_fn. */
static int line_done(struct import *im, int r, const char *err)
{
	if (r == -2) {
		/* the database, not the line: stop */
		snprintf(im->err, sizeof(im->err), "%s", err);
		im->failed = true;
		return 1;
	}
	if (r < 0)
		return -1;
	if (++im->in_batch >= BATCH) {
		if (lwm2_db_commit(im->db, im->err, sizeof(im->err)) < 0 ||
		    lwm2_db_begin(im->db, im->err, sizeof(im->err)) < 0) {
			im->failed = true;
			return 1;
		}
		im->in_batch = 0;
		if (im->progress)
			im->progress(im->arg, im->count);
	}
	return 0;
}

static int on_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct import *im = arg;

	return line_done(im, add_line(im->db, &im->pk, l, im->count, err, errlen), err);
}

/* A worker's part of a line: its row, and its line packed where the
 * dictionary is ready (the first line of a database without one makes
 * it, in the thread that writes). */
static int work_line(void *arg, unsigned worker, const struct lwm2_logline *l, void *slot,
                     char *err, size_t errlen)
{
	struct import *im = arg;
	struct row *r = slot;

	(void)worker;
	r->packed = false;
	lwm2_jobrow_fields(l, &r->j);
	if (lwm2_jobrow_digest(l, &r->j, LWM2_JR_WANT_ALL, err, errlen) < 0)
		return -1;
	if (!r->pk.dict_ready && im->dict_shared)
		lwm2_db_packer_share(&r->pk, &im->pk);
	if (!r->pk.dict_ready)
		return 0;
	if (lwm2_db_text_pack(&r->pk, im->db, l, err, errlen) < 0)
		return -1;
	r->packed = true;
	return 0;
}

static int take_line(void *arg, const struct lwm2_logline *l, void *slot, char *err, size_t errlen)
{
	struct import *im = arg;
	struct row *r = slot;
	const struct lwm2_db_text *text = &r->pk.text;
	bool added;
	int rc = 0;

	if (!r->packed) {
		rc = lwm2_db_text_pack(&im->pk, im->db, l, err, errlen);
		text = &im->pk.text;
		if (im->pk.dict_ready && !im->dict_shared)
			im->dict_shared = true;
	}
	if (rc == 0 && lwm2_db_insert(im->db, &r->j, text, &added, err, errlen) < 0)
		rc = -2;
	if (rc == 0)
		count_added(im->count, added);
	return line_done(im, rc, err);
}

static void release_row(void *arg, void *slot)
{
	(void)arg;
	lwm2_db_packer_free(&((struct row *)slot)->pk);
}

int lwm2_db_import(struct lwm2_db *db, const char *cmd, char *const *paths, size_t n,
                   unsigned threads, struct lwm2_db_count *count,
                   void (*progress)(void *arg, const struct lwm2_db_count *c), void *arg)
{
	struct import im = {.db = db, .count = count, .progress = progress, .arg = arg};
	struct lwm2_logscan_count lc = {0};
	struct lwm2_logscan_pipe pipe = {.threads = threads,
	                                 .slot_size = sizeof(struct row),
	                                 .work = work_line,
	                                 .take = take_line,
	                                 .release = release_row,
	                                 .arg = &im};
	int rc;

	if (lwm2_db_begin(db, im.err, sizeof(im.err)) < 0) {
		fprintf(stderr, "lwm2: %s: %s\n", cmd, im.err);
		return -1;
	}
	if (threads && lwm2_db_packer_load(&im.pk, db, im.err, sizeof(im.err)) < 0) {
		lwm2_db_rollback(db);
		fprintf(stderr, "lwm2: %s: %s\n", cmd, im.err);
		return -1;
	}
	im.dict_shared = im.pk.dict_ready;
	rc = threads ? lwm2_logscan_pipe(cmd, paths, n, &pipe, &lc)
	             : lwm2_logscan_files(cmd, paths, n, on_line, &im, &lc);
	lwm2_db_packer_free(&im.pk);
	count->lines += lc.lines;
	count->bad += lc.bad;
	if (im.failed) {
		lwm2_db_rollback(db);
		fprintf(stderr, "lwm2: %s: %s\n", cmd, im.err);
		return -1;
	}
	if (lwm2_db_commit(db, im.err, sizeof(im.err)) < 0) {
		lwm2_db_rollback(db);
		fprintf(stderr, "lwm2: %s: %s\n", cmd, im.err);
		return -1;
	}
	if (progress)
		progress(arg, count);
	return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ follow */

/* The log is kept open from follow to follow and what it gained read
 * with pread: opening it, stdio's buffer and its seek, which reads a
 * block of its own, cost a quiet site's follow of one job more than
 * reading the job's line.  Kept open, a log rotated away is still there
 * to read to its end before the new one. */
struct follow_file {
	int fd; /* -1: none */
	dev_t dev;
	ino_t ino;
};

struct lwm2_db_follow {
	struct lwm2_db_packer pk;
	struct follow_file log;
	/* the log before a rotation, until its rest has gone in */
	struct follow_file rotated;
	char *buf; /* what was read of the log, lines cut in place */
	size_t cap;
	/* the offset this follow committed last under key (NULL: none), read
	 * back without asking the database: only a follow writes the key,
	 * and one that lags (another follower moved it on) reads lines again
	 * that are known, which adds nothing; forgotten with the database it
	 * was committed to (take, a failure) */
	char *key, offset[128];
};

/* The most of a log read in one call, and grown only for a longer line;
 * a buffer larger than KEEP_BUF is given back after the follow (a
 * catch-up's, not a quiet site's). */
#define READ_CHUNK (4u << 20)
#define KEEP_BUF   (256u << 10)

static void file_close(struct follow_file *ff)
{
	if (ff->fd >= 0)
		close(ff->fd);
	ff->fd = -1;
}

void lwm2_db_follow_free(struct lwm2_db_follow *f)
{
	if (!f)
		return;
	lwm2_db_packer_free(&f->pk);
	file_close(&f->log);
	file_close(&f->rotated);
	free(f->buf);
	free(f->key);
	free(f);
}

/* The offset kept forgotten: the database is read for it next time. */
static void forget_offset(struct lwm2_db_follow *f)
{
	free(f->key);
	f->key = NULL;
}

struct lwm2_db_follow *lwm2_db_follow_take(struct lwm2_db *db)
{
	struct lwm2_db_follow *f = db->follow;

	/* the dictionary and the offset are the database's */
	if (f) {
		lwm2_db_packer_free(&f->pk);
		forget_offset(f);
	}
	db->follow = NULL;
	return f;
}

void lwm2_db_follow_give(struct lwm2_db *db, struct lwm2_db_follow *f)
{
	lwm2_db_follow_free(db->follow);
	db->follow = f;
}

/* The log at path open in f, its size into size.  Where the path is
 * another file now (rotated), the one open is kept as f->rotated (one
 * rotated earlier whose rest never went in is let go: lwm2 db import
 * takes it); where there is none, the one open is read on.  0; 1 where
 * there is no log yet; -1 with err. */
static int follow_open(struct lwm2_db_follow *f, const char *log, off_t *size, char *err,
                       size_t errlen)
{
	struct stat sb;
	int fd;

	if (stat(log, &sb) < 0) {
		if (errno != ENOENT)
			return lwm2_errprintf(0, err, errlen, "couldn't read %s: %s", log,
			                      strerror(errno));
		/* rotated, and no new log yet: the rest of the one open */
		if (f->log.fd < 0 || fstat(f->log.fd, &sb) < 0)
			return 1; /* nothing logged yet */
		*size = sb.st_size;
		return 0;
	}
	if (f->log.fd < 0 || sb.st_dev != f->log.dev || sb.st_ino != f->log.ino) {
		fd = open(log, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT)
				return 1;
			return lwm2_errprintf(0, err, errlen, "couldn't open %s: %s", log,
			                      strerror(errno));
		}
		/* the file opened, whatever the name meant a moment ago */
		if (fstat(fd, &sb) < 0) {
			lwm2_errprintf(0, err, errlen, "couldn't read %s: %s", log,
			               strerror(errno));
			close(fd);
			return -1;
		}
		if (f->log.fd >= 0) {
			file_close(&f->rotated);
			f->rotated = f->log;
		}
		f->log = (struct follow_file){.fd = fd, .dev = sb.st_dev, .ino = sb.st_ino};
	}
	*size = sb.st_size;
	return 0;
}

/* One line of the log (its newline cut) into the database's transaction:
 * -1 with err where the database failed; a line that cannot be read is
 * counted bad. */
static int follow_line(struct lwm2_db *db, const char *log, char *line, size_t len,
                       struct lwm2_db_count *count, char *err, size_t errlen)
{
	struct lwm2_json_members members;
	struct lwm2_logline l = {.path = log, .members = &members};
	char why[256];
	int r;

	count->lines++;
	while (len && line[len - 1] == '\r')
		line[--len] = '\0';
	if (!len)
		return 0;
	if (memchr(line, '\0', len) || lwm2_logline_parse(line, len, &l, why, sizeof(why)) < 0) {
		count->bad++;
		return 0;
	}
	r = add_line(db, &db->follow->pk, &l, count, why, sizeof(why));
	json_object_put(l.fields);
	if (r == -2)
		return lwm2_errprintf(0, err, errlen, "%s", why);
	if (r < 0)
		count->bad++;
	return 0;
}

/* The whole lines of the log from *off to size into the transaction, *off
 * moved past them; a line being written (no newline yet) is left for the
 * next follow.  0, or -1 with err. */
static int follow_lines(struct lwm2_db *db, const char *log, int fd, long long *off, off_t size,
                        struct lwm2_db_count *count, char *err, size_t errlen)
{
	struct lwm2_db_follow *f = db->follow;
	size_t chunk = READ_CHUNK;

	while (*off < (long long)size) {
		size_t want = (size_t)((long long)size - *off), got = 0, at = 0;
		char *nl;

		if (want > chunk)
			want = chunk;
		if (want + 1 > f->cap) {
			char *b = realloc(f->buf, want + 1);

			if (!b)
				return lwm2_errprintf(0, err, errlen, "couldn't read %s: %s", log,
				                      strerror(ENOMEM));
			f->buf = b;
			f->cap = want + 1;
		}
		while (got < want) {
			ssize_t n =
			    pread(fd, f->buf + got, want - got, (off_t)(*off + (long long)got));

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return lwm2_errprintf(0, err, errlen, "couldn't read %s: %s", log,
				                      strerror(errno));
			if (n == 0)
				break; /* cut shorter meanwhile: the next follow sees it */
			got += (size_t)n;
		}
		while (at < got && (nl = memchr(f->buf + at, '\n', got - at))) {
			size_t len = (size_t)(nl - (f->buf + at));

			*nl = '\0';
			if (follow_line(db, log, f->buf + at, len, count, err, errlen) < 0)
				return -1;
			at += len + 1;
		}
		if (at == 0) {
			/* no whole line: one being written, or longer than the chunk */
			if (got < want || *off + (long long)got >= (long long)size)
				break;
			chunk *= 2;
			continue;
		}
		*off += (long long)at;
	}
	return 0;
}

/* The offset reached in a log, under the log's path: "DEV:INODE:OFFSET". */
static void follow_key(const char *log, char *key, size_t len)
{
	snprintf(key, len, "follow:%s", log);
}

/* Whether the offset kept, DEV:INODE:OFFSET in val, is within the file
 * ff of size bytes (else that file is read from its start). */
static bool offset_in(const char *val, const struct follow_file *ff, off_t size, long long *off)
{
	unsigned long long dev = 0, ino = 0;

	return sscanf(val, "%llu:%llu:%lld", &dev, &ino, off) == 3 &&
	       dev == (unsigned long long)ff->dev && ino == (unsigned long long)ff->ino &&
	       *off >= 0 && *off <= (long long)size;
}

int lwm2_db_follow(struct lwm2_db *db, const char *log, struct lwm2_db_count *count, char *err,
                   size_t errlen)
{
	struct lwm2_db_follow *f = db->follow;
	char key[4200], val[128];
	long long off = 0;
	off_t size = 0;
	struct stat sb;
	int r;

	if (!f) {
		if (!(f = db->follow = calloc(1, sizeof(*f))))
			return lwm2_errprintf(0, err, errlen, "couldn't read %s: %s", log,
			                      strerror(ENOMEM));
		f->log.fd = f->rotated.fd = -1;
	}
	if ((r = follow_open(f, log, &size, err, errlen)) != 0)
		return r < 0 ? -1 : 0;
	if (lwm2_db_begin(db, err, errlen) < 0)
		return -1;
	follow_key(log, key, sizeof(key));
	if (f->key && !strcmp(f->key, key))
		snprintf(val, sizeof(val), "%s", f->offset);
	else if (lwm2_db_meta_get(db, key, val, sizeof(val), err, errlen) < 0)
		goto fail;
	/* rotated: the rest of the log before, where the offset kept is its
	 * (lines it had not brought in: the database could not be written) */
	if (f->rotated.fd >= 0 && fstat(f->rotated.fd, &sb) == 0 &&
	    offset_in(val, &f->rotated, sb.st_size, &off) &&
	    follow_lines(db, log, f->rotated.fd, &off, sb.st_size, count, err, errlen) < 0)
		goto fail;
	/* another file under the name (rotated), or cut shorter: from its start */
	if (!offset_in(val, &f->log, size, &off))
		off = 0;
	if (follow_lines(db, log, f->log.fd, &off, size, count, err, errlen) < 0)
		goto fail;
	snprintf(val, sizeof(val), "%llu:%llu:%lld", (unsigned long long)f->log.dev,
	         (unsigned long long)f->log.ino, off);
	if (lwm2_db_meta_set(db, key, val, err, errlen) < 0 || lwm2_db_commit(db, err, errlen) < 0)
		goto fail;
	if (!f->key || strcmp(f->key, key)) {
		forget_offset(f);
		f->key = strdup(key); /* none: read from the database next time */
	}
	snprintf(f->offset, sizeof(f->offset), "%s", val);
	file_close(&f->rotated);
	r = 0;
	goto out;
fail:
	lwm2_db_rollback(db);
	/* a dictionary it made is gone with the transaction, and what the
	 * database holds is read again */
	lwm2_db_packer_free(&f->pk);
	forget_offset(f);
	r = -1;
out:
	if (f->cap > KEEP_BUF) {
		free(f->buf);
		f->buf = NULL;
		f->cap = 0;
	}
	return r;
}
