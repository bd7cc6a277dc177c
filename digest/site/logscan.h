/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Streaming reader of jobcomp/lwm2's JSON-lines log for `lwm2 stats` and
 * `lwm2 diff`: one line at a time, the job fields parsed, the digest left
 * as text so a caller parses only the members it needs (a full parse of
 * 100,000 digests costs seconds).  Unreadable lines are reported with
 * their line number and skipped; the others are kept.
 *
 * Not part of the library: linked into the lwm2 command only.
 * lwm2_parse_time also serves `lwm2 digest --file`, which reads the same
 * log, and so do the text walkers of jsontext.h this reader is built on.
 */
#ifndef LWM2_LOGSCAN_H
#define LWM2_LOGSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "jsontext.h"
#include "lwm2_render.h"

struct lwm2_logline {
	const char *path;     /* as given; "-" is stdin */
	const char *text;     /* the line's text (lwm2_logline_parse's line) */
	unsigned long lineno; /* 1-based */
	json_object *fields;  /* the job fields: the line without its digest */
	const char *digest;   /* the digest's text inside the line, or NULL */
	const char *end;      /* end of the line's text */
	/* the digest's members, indexed at the first lwm2_logline_member
	 * (NULL: each lookup walks the digest) */
	struct lwm2_json_members *members;
};

/* The value of key directly inside the line's digest, or NULL: as
 * lwm2_json_member(l->digest, l->end, key), the digest walked once for
 * all the lookups a line gets. */
const char *lwm2_logline_member(const struct lwm2_logline *l, const char *key);

/* One line of text (len bytes, no newline, no NUL inside) into l: its
 * fields parsed (l->fields, the caller's to put), its digest found.  l's
 * path, lineno and members are the caller's.  0, or -1 with err. */
int lwm2_logline_parse(char *line, size_t len, struct lwm2_logline *l, char *err, size_t errlen);

/*
 * Called for every line that holds a log entry.  Returns 0 to go on, 1 to
 * stop reading, -1 with a reason in err: the line is then reported as
 * unreadable and skipped.
 */
typedef int (*lwm2_logline_fn)(void *arg, const struct lwm2_logline *l, char *err, size_t errlen);

struct lwm2_logscan_count {
	unsigned long lines; /* lines read */
	unsigned long bad;   /* lines reported and skipped */
	/* in: report no line, only count it: a pass that looks whether a
	 * line has come yet (lwm2 digest --wait) meets the one being written,
	 * cut short for now; the pass that prints reports what is left */
	bool quiet;
};

/*
 * Read path ("-": stdin) line by line and call fn for each entry.  At most
 * the first 10 unreadable lines of a file are reported one by one, then
 * their number; messages start with "lwm2: <cmd>: ".  Returns 0 (also
 * when lines were skipped), 1 when fn asked to stop, -1 when a file
 * could not be opened or read to its end (reported).
 *
 * path may be a shell pattern (lwm2.jsonl*) and every file may be gzip-
 * or zstd-compressed: see lwm2_logscan_files.
 */
int lwm2_logscan(const char *cmd, const char *path, lwm2_logline_fn fn, void *arg,
                 struct lwm2_logscan_count *count);

/*
 * The n paths, each a file or a shell pattern (glob(3); one that matches
 * nothing is an error), read as one log: a rotated set such as
 * lwm2.jsonl.3.gz lwm2.jsonl.2.gz lwm2.jsonl.1 lwm2.jsonl.  Files are
 * told apart by their first bytes, not their names: gzip, zstd, else
 * plain text.  They are read oldest first, ordered by the end time of
 * their first entry ("end"); files without one (empty, or no entry
 * among their first lines) come after.  Ties (rotations within one
 * second) go by logrotate's number, x.2.gz before x.1 before x, then
 * by the order given (a pattern's matches in name order).  Standard input ("-") is read
 * last.  A file named twice (the same inode) is read once.
 *
 * A file that cannot be read (missing, a directory, permission denied,
 * corrupt or cut-short compressed data) is reported with its reason and
 * the others are still read; the return is then -1, even when fn asked to
 * stop.  Otherwise as lwm2_logscan.
 */
int lwm2_logscan_files(const char *cmd, char *const *paths, size_t n, lwm2_logline_fn fn, void *arg,
                       struct lwm2_logscan_count *count);

/*
 * lwm2_logscan_files with each line's parse and its costly part (work)
 * on threads of their own, and the rest (take) on the calling thread in
 * the log's order: what it reports and counts, and the order take sees
 * the lines in, are lwm2_logscan_files's with fn doing work then take.
 * The calling thread works lines too while the oldest is not done.
 * work gets the line and its slot (slot_size bytes, zeroed at first and
 * reused from line to line), and worker (0 to threads - 1 for the
 * threads, threads for the calling one: what a worker keeps for
 * itself); 0, or -1 with err (the line is reported and skipped).
 * take gets the same line and slot after work, as fn.  release frees
 * what work left in a slot, once at the end.  For logs of long lines
 * whose every line costs more to read than to keep (the digests
 * imported into the database).
 */
struct lwm2_logscan_pipe {
	unsigned threads; /* at least 1 */
	size_t slot_size;
	int (*work)(void *arg, unsigned worker, const struct lwm2_logline *l, void *slot, char *err,
	            size_t errlen);
	int (*take)(void *arg, const struct lwm2_logline *l, void *slot, char *err, size_t errlen);
	void (*release)(void *arg, void *slot);
	void *arg;
};
int lwm2_logscan_pipe(const char *cmd, char *const *paths, size_t n,
                      const struct lwm2_logscan_pipe *p, struct lwm2_logscan_count *count);

/* A scope to evaluate guidance on (as lwm2_scope_from_json fills it, see
 * lwm2_digest.h) from the scope object's text at p, without building JSON
 * objects (what `lwm2 stats` does for every line of a log): the counts,
 * and min/avg/max/n of every metric; reasons are not read.  0, or -1 when
 * the text is not an object. */
int lwm2_scope_from_text(struct lwm2_scope *s, const char *p, const char *end,
                         uint32_t cpus_per_task);

/* lwm2_scope_from_text, and where the value of the scope's member key
 * starts (*val; NULL where the scope has none), found on the same walk:
 * a member after the metrics costs another walk over them otherwise. */
int lwm2_scope_from_text_member(struct lwm2_scope *s, const char *p, const char *end,
                                uint32_t cpus_per_task, const char *key, const char **val);

/* Append the comma-separated items of arg (-u, -A and the like), each
 * copied, to *out and *n.  0, or -1 when out of memory: the items appended
 * so far stay in *out. */
int lwm2_split_list(const char *arg, char ***out, size_t *n);

/* The longest line `lwm2 digest --file`, `lwm2 stats` and `lwm2 diff`
 * read from a log: longer ones are skipped with a message, so memory stays
 * bounded whatever the file holds (/dev/zero has no newline at all). */
#define LWM2_LINE_MAX (64u << 20)

/*
 * Buffered line reader with a length cap.  Zero-initialise, set f.  What
 * f holds is decompressed on the way when its first bytes are gzip's or
 * zstd's magic number (rotated logs are compressed by logrotate), and
 * read as it is otherwise.
 */
struct lwm2_lines {
	FILE *f;
	char *buf;
	size_t cap, pos, len, scan; /* scan: searched for a newline up to here */
	int eof;
	/* the decoder, chosen from f's first bytes */
	int kind;          /* 0: not chosen yet; see logscan.c */
	void *z;           /* z_stream or ZSTD_DStream */
	unsigned char *in; /* bytes of f not decoded yet */
	size_t in_pos, in_len;
	int zdone;     /* the last gzip member or zstd frame is complete */
	char why[160]; /* why reading stopped before the end: a read error,
	                  corrupt or cut-short data; "" at a clean end */
};

/*
 * The next line without its newline, NUL-terminated in *line (it may hold
 * NUL bytes itself: the length is what counts).  Returns its length, -1 at
 * the end of the file or when reading stopped (why[0] tells: a read
 * error, corrupt or cut-short compressed data), or -2 for a line longer
 * than LWM2_LINE_MAX, which is read past and dropped.
 */
long lwm2_lines_next(struct lwm2_lines *r, char **line);
/* Frees the buffers and the decoder; f is the caller's to close. */
void lwm2_lines_free(struct lwm2_lines *r);

/* path ("-": stdin) opened for reading, or NULL after a message that
 * starts with "lwm2: <cmd>: " (a directory is refused too). */
FILE *lwm2_open_input(const char *cmd, const char *path);

/* Latest time taken: 9999-12-31T23:59:59 UTC. */
#define LWM2_TIME_MAX 253402300799LL

/* The digest of line l (which has one), parsed and checked; NULL with
 * why ("the digest is not JSON", or what the check found). */
json_object *lwm2_logline_digest(const struct lwm2_logline *l, char *why, size_t len);

/* TIME as `lwm2 digest` takes it: now, now-N[s|m|h|d],
 * YYYY-MM-DD[THH:MM[:SS]] (local time), @EPOCH; EPOCH and N at most
 * LWM2_TIME_MAX.  0, or -1. */
int lwm2_parse_time(const char *s, int64_t *out);

#endif /* LWM2_LOGSCAN_H */
