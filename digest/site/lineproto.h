/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Export of job digests to a time-series engine (liblwm2export.la): the
 * InfluxDB line protocol text of a job of jobcomp/lwm2's JSON-lines log,
 * and its delivery over HTTP (libcurl).  Shared by jobcomp/lwm2's export
 * thread and `lwm2 export`.
 *
 * Points, one line each, timestamps in seconds (precision=s):
 *
 *   lwm2_slice,<tags>,node=N,step=S <counters>,slice_s=L <slice start>
 *       one per slot of every row of the digest's grid: each counter that
 *       moved on that node in that step (zero in the slots where it did
 *       not), the slice length, and mpi_share (% of the slice's process
 *       time in MPI, the step's processes spread evenly over its nodes);
 *   lwm2_job,<tags> <summary fields> <job end>
 *       one per job: state, status, processes, nodes, duration, the
 *       digest's totals (total_<counter>) and every metric's min/avg/max.
 *
 * <tags>: account, app (the job name), cluster, job, user, partition;
 * tags that are empty are left out.  A point is identified by measurement,
 * tags and timestamp, so sending a job again overwrites its points with
 * the same values: nothing is doubled.
 *
 * Functions return 0 / -1 with errno set unless said otherwise.
 */
#ifndef LWM2_LINEPROTO_H
#define LWM2_LINEPROTO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define LWM2_LP_SLICE_MEASUREMENT "lwm2_slice"
#define LWM2_LP_JOB_MEASUREMENT   "lwm2_job"

/* A growing text buffer; lines counts the complete lines in it. */
struct lwm2_lp_buf {
	char *p;
	size_t len, cap;
	size_t lines;
};

void lwm2_lp_buf_free(struct lwm2_lp_buf *b);
int lwm2_lp_buf_put(struct lwm2_lp_buf *b, const char *s, size_t n);

/* What an escaped text is used as: they differ in what must be escaped. */
enum lwm2_lp_kind {
	LWM2_LP_MEASUREMENT, /* comma and space */
	LWM2_LP_TAG,         /* tag keys, tag values, field keys: comma, '=', space */
	LWM2_LP_STRING,      /* inside a string field value: '"' and backslash */
};

/*
 * Append s escaped for kind.  Control characters (newlines included, which
 * end a line) become spaces.  Outside strings a backslash is kept as it
 * is, except where the engine would take it for an escape (at the end, or
 * before an escaped character): there it becomes '/', since line protocol
 * has no way to write it.
 */
int lwm2_lp_escape(struct lwm2_lp_buf *b, const char *s, enum lwm2_lp_kind kind);

/*
 * Called with a batch of complete lines (text ends with '\n').  Returns 0
 * to go on, -1 to stop formatting (lwm2_lp_format_job then returns -1 with
 * errno as the callback left it).
 */
typedef int (*lwm2_lp_flush_fn)(void *arg, const char *text, size_t len, size_t lines);

struct lwm2_lp_stats {
	size_t slice_points; /* lwm2_slice lines */
	size_t job_points;   /* lwm2_job lines */
};

/*
 * The points of one log line: fields is the line's job object (the
 * digest member, when there, is its digest; a separate digest object may
 * be given instead, or NULL).  Lines go into b; whenever b holds batch
 * lines (0: no limit) flush is called and b emptied.  What is left after
 * the last point stays in b for the caller (batches span jobs).  A line
 * without job_id or end makes no point (0, nothing added); stats may be
 * NULL.
 */
int lwm2_lp_format_job(json_object *fields, json_object *digest, struct lwm2_lp_buf *b,
                       size_t batch, lwm2_lp_flush_fn flush, void *arg,
                       struct lwm2_lp_stats *stats);

/*
 * The same from text, without building an object for every number of the
 * grid (which is most of a large job's line): the digest's text at digest
 * (NULL: none) up to end, the job fields as an object, as `lwm2 export`
 * has them from the log reader.
 */
int lwm2_lp_format_text(json_object *fields, const char *digest, const char *end,
                        struct lwm2_lp_buf *b, size_t batch, lwm2_lp_flush_fn flush, void *arg,
                        struct lwm2_lp_stats *stats);
/* The same from a whole log line (EINVAL: not a JSON object). */
int lwm2_lp_format_line(const char *line, size_t len, struct lwm2_lp_buf *b, size_t batch,
                        lwm2_lp_flush_fn flush, void *arg, struct lwm2_lp_stats *stats);

/* ------------------------------------------------------------ HTTP */

/* Where to send: the engine's write URL and what goes with it. */
struct lwm2_lp_target {
	const char *url;      /* http(s)://host:port/write, /api/v2/write, ... */
	const char *database; /* db= (or bucket= for /api/v2/write); NULL: none */
	const char *org;      /* org= for /api/v2/write; NULL: none */
	const char *user;     /* basic authentication; NULL: none */
	const char *password;
	const char *token;       /* "Authorization: Token ..." (InfluxDB 2.x); NULL: none */
	unsigned timeout_s;      /* whole request; 0: 10 s */
	bool gzip;               /* Content-Encoding: gzip */
	const atomic_bool *stop; /* set: the request in flight is cut short */
};

/* Results of lwm2_lp_send. */
enum {
	LWM2_LP_SENT = 0,     /* the engine took every point (2xx) */
	LWM2_LP_RETRY = 1,    /* not reachable, timeout, 5xx, 429, 401/403/404: later */
	LWM2_LP_REJECTED = 2, /* 400, 413, ...: sending again would not help */
	LWM2_LP_ERROR = -1,   /* nothing sent: out of memory, bad URL, no libcurl */
};

/* Whether this build can send (libcurl was found at configure time). */
bool lwm2_lp_can_send(void);

struct lwm2_lp_sender;

/* NULL with a reason in err. */
struct lwm2_lp_sender *lwm2_lp_sender_new(const struct lwm2_lp_target *t, char *err, size_t errlen);
void lwm2_lp_sender_free(struct lwm2_lp_sender *s);
/* POST text (complete lines); a reason in err when not LWM2_LP_SENT.
 * *wire (may be NULL) gets the number of body bytes sent. */
int lwm2_lp_send(struct lwm2_lp_sender *s, const char *text, size_t len, size_t *wire, char *err,
                 size_t errlen);

/*
 * Credentials file: "user=NAME", "password=SECRET", "token=SECRET" lines
 * ('#' comments).  With private set, the file must belong to root or to
 * the caller and be readable by its owner only.  Strings are malloc'd
 * (NULL where absent); -1 with a reason in err.
 */
int lwm2_lp_read_credentials(const char *path, bool private, char **user, char **password,
                             char **token, char *err, size_t errlen);

#endif /* LWM2_LINEPROTO_H */
