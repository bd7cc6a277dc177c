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
#include <sys/stat.h>

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

/* The follow's read buffer: most jobs' line in one read, and below
 * malloc's threshold for a mapping of its own. */
#define FOLLOW_BUF (64 * 1024)

/* The offset reached in a log, under the log's path: "DEV:INODE:OFFSET". */
static void follow_key(const char *log, char *key, size_t len)
{
	snprintf(key, len, "follow:%s", log);
}

int lwm2_db_follow(struct lwm2_db *db, const char *log, struct lwm2_db_count *count, char *err,
                   size_t errlen)
{
	char key[4200], val[128], why[256];
	unsigned long long dev = 0, ino = 0;
	long long off = 0;
	struct stat sb;
	FILE *f;
	char *line = NULL, *buf;
	size_t cap = 0;
	ssize_t n;
	int r;

	f = fopen(log, "re");
	if (!f) {
		if (errno == ENOENT)
			return 0; /* nothing logged yet */
		return lwm2_errprintf(0, err, errlen, "couldn't open %s: %s", log, strerror(errno));
	}
	if (fstat(fileno(f), &sb) < 0) {
		lwm2_errprintf(0, err, errlen, "couldn't read %s: %s", log, strerror(errno));
		fclose(f);
		return -1;
	}
	/* a job's line is tens of kilobytes: read in one call, not in the
	 * file's blocks (without the buffer, stdio's own) */
	if ((buf = malloc(FOLLOW_BUF)))
		setvbuf(f, buf, _IOFBF, FOLLOW_BUF);
	if (!db->follow && !(db->follow = calloc(1, sizeof(*db->follow)))) {
		lwm2_errprintf(0, err, errlen, "couldn't read %s: %s", log, strerror(ENOMEM));
		fclose(f);
		free(buf);
		return -1;
	}
	if (lwm2_db_begin(db, err, errlen) < 0) {
		fclose(f);
		free(buf);
		return -1;
	}
	follow_key(log, key, sizeof(key));
	if (lwm2_db_meta_get(db, key, val, sizeof(val), err, errlen) < 0)
		goto fail;
	/* another file under the name (rotated), or cut shorter: from its start */
	if (sscanf(val, "%llu:%llu:%lld", &dev, &ino, &off) != 3 ||
	    dev != (unsigned long long)sb.st_dev || ino != (unsigned long long)sb.st_ino ||
	    off > (long long)sb.st_size || off < 0)
		off = 0;
	if (off && fseeko(f, (off_t)off, SEEK_SET) < 0) {
		lwm2_errprintf(0, err, errlen, "couldn't read %s: %s", log, strerror(errno));
		goto fail;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		struct lwm2_json_members members;
		struct lwm2_logline l = {.path = log, .members = &members};
		size_t len = (size_t)n;

		if (line[len - 1] != '\n')
			break; /* being written: next time */
		off += n;
		count->lines++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len)
			continue;
		if (strlen(line) != len ||
		    lwm2_logline_parse(line, len, &l, why, sizeof(why)) < 0) {
			count->bad++;
			continue;
		}
		r = add_line(db, db->follow, &l, count, why, sizeof(why));
		json_object_put(l.fields);
		if (r == -2) {
			lwm2_errprintf(0, err, errlen, "%s", why);
			goto fail;
		}
		if (r < 0)
			count->bad++;
	}
	if (ferror(f)) {
		lwm2_errprintf(0, err, errlen, "couldn't read %s: %s", log, strerror(errno));
		goto fail;
	}
	snprintf(val, sizeof(val), "%llu:%llu:%lld", (unsigned long long)sb.st_dev,
	         (unsigned long long)sb.st_ino, off);
	if (lwm2_db_meta_set(db, key, val, err, errlen) < 0 || lwm2_db_commit(db, err, errlen) < 0)
		goto fail;
	free(line);
	fclose(f);
	free(buf);
	return 0;
fail:
	lwm2_db_rollback(db);
	/* a dictionary it made is gone with the transaction */
	lwm2_db_packer_free(db->follow);
	free(line);
	fclose(f);
	free(buf);
	return -1;
}
