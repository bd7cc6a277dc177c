/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the database's files share (db.h is the interface): the job
 * table's columns, one table that the schema, the insert and the read are
 * all made from, and the steps an import takes.
 */
#ifndef LWM2_DB_INTERNAL_H
#define LWM2_DB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "db.h"

enum lwm2_db_kind {
	LWM2_DBK_I64,   /* int64_t */
	LWM2_DBK_U32,   /* uint32_t */
	LWM2_DBK_BOOL,  /* bool */
	LWM2_DBK_STR,   /* const char *, NULL as NULL */
	LWM2_DBK_BUF,   /* char[], "" kept as "" */
	LWM2_DBK_REAL,  /* double, NaN as NULL */
	LWM2_DBK_OPT,   /* double with a bool beside it: NULL when false */
	LWM2_DBK_RULES, /* uint64_t bits of lwm2_guidance_rules: their ids, comma-separated */
};

struct lwm2_db_column {
	const char *name;
	enum lwm2_db_kind kind;
	size_t off;     /* in struct lwm2_jobrow */
	size_t has_off; /* LWM2_DBK_OPT: the bool that says there is a value */
	size_t len;     /* LWM2_DBK_BUF: its size */
};

/* The job table's columns after its row number, in order. */
extern const struct lwm2_db_column lwm2_db_columns[];
extern const size_t lwm2_db_ncolumns;

/* A member of struct lwm2_jobrow at a column's offset. */
#define LWM2_DB_AT(j, off, type) ((type *)(void *)((char *)(j) + (off)))

/* LWM2_DBK_RULES: the ids of the rules in bits, comma-separated, into buf;
 * their length.  And back: a rule this build does not know is left out. */
size_t lwm2_db_rules_text(uint64_t bits, char *buf, size_t len);
uint64_t lwm2_db_rules_bits(const char *text);

/* The insert of a job row into sql: "VERB job (columns) VALUES (?, ...)"
 * and tail (a dialect's conflict clause, or ""). */
void lwm2_db_insert_sql(char *sql, size_t len, const char *verb, const char *tail);

/* lwm2_db_jobs's query, malloc'd (NULL when out of memory), in the log's
 * order: the columns, with metric_id's n/min/avg/max after them when
 * sel->metric >= 0.  Its parameters, in order: the end time's bounds,
 * *nusers user names (0 when a user is given as a uid: the caller's
 * selection takes those), sel's accounts. */
char *lwm2_db_jobs_sql(const struct lwm2_db_select *sel, int64_t metric_id, size_t *nusers);

/*
 * A job's log line as a row keeps it (db_text.c): the line without the
 * digest's "grid" member (cut: where the member was, in the line's text)
 * and the member itself, each compressed; grid NULL when the line has
 * none.  Packed once per job by the import, unpacked by lwm2_db_lines.
 */
struct lwm2_db_text {
	int64_t job; /* the job's row (job.id) */
	int64_t cut;
	const void *line, *grid; /* NULL line: the row has no text */
	size_t line_len, grid_len;
};

/* A packer's buffers and compressor, reused from job to job (a fresh
 * compressor per line would cost more than the compression). */
struct lwm2_db_packer {
	struct lwm2_db_text text;
	void *line, *grid;
	size_t line_cap, grid_cap;
	void *cctx; /* ZSTD_CCtx */
};

/* l's line into p->text.  0, or -1 with err. */
int lwm2_db_text_pack(struct lwm2_db_packer *p, const struct lwm2_logline *l, char *err,
                      size_t errlen);
void lwm2_db_packer_free(struct lwm2_db_packer *p);

/* lwm2_db_lines's query, malloc'd: each selected job's id, cut, line and
 * (want_grid) grid, NULL where the job has no text (every job where the
 * schema has no texts: has_text false), in the log's order.  Its
 * parameters as lwm2_db_jobs_sql's, then sel's job ids. */
char *lwm2_db_lines_sql(const struct lwm2_db_select *sel, bool want_grid, bool has_text,
                        size_t *nusers);

/*
 * A backend: the SQL engine behind a database.  Each keeps its own struct
 * with struct lwm2_db first, and the SQL of its dialect to itself; the
 * columns, the rows and the import are shared.  The functions are db.h's,
 * and these:
 *   begin, commit, rollback  one transaction of an import or a follow;
 *   insert   the job (lwm2_jobrow_digest with LWM2_JR_WANT_ALL) and its
 *            text (NULL: none) in the open transaction: *added false
 *            when the database had the job (its text is added where the
 *            row had none);
 *   texts    the rows of lwm2_db_lines_sql to fn (0: go on);
 *   meta_get, meta_set  lwm2_meta's value of a key ("" when unset).
 */
struct lwm2_db_backend {
	const char *name;
	struct lwm2_db *(*open)(const char *url, enum lwm2_db_mode mode, char *err, size_t errlen);
	void (*close)(struct lwm2_db *db);
	int (*begin)(struct lwm2_db *db, char *err, size_t errlen);
	int (*commit)(struct lwm2_db *db, char *err, size_t errlen);
	void (*rollback)(struct lwm2_db *db);
	int (*insert)(struct lwm2_db *db, const struct lwm2_jobrow *j,
	              const struct lwm2_db_text *text, bool *added, char *err, size_t errlen);
	int (*texts)(struct lwm2_db *db, const struct lwm2_db_select *sel, bool want_grid,
	             int (*fn)(void *arg, const struct lwm2_db_text *t), void *arg, char *err,
	             size_t errlen);
	int (*meta_get)(struct lwm2_db *db, const char *key, char *buf, size_t len, char *err,
	                size_t errlen);
	int (*meta_set)(struct lwm2_db *db, const char *key, const char *value, char *err,
	                size_t errlen);
	int (*jobs)(struct lwm2_db *db, const struct lwm2_db_select *sel,
	            int (*fn)(void *arg, const struct lwm2_jobrow *j), void *arg, char *err,
	            size_t errlen);
	int (*check)(struct lwm2_db *db, FILE *out, char *err, size_t errlen);
	int (*forget)(struct lwm2_db *db, int64_t before, unsigned long *removed, char *err,
	              size_t errlen);
	int (*vacuum)(struct lwm2_db *db, char *err, size_t errlen);
	/* the daily summaries (db.h); NULL where a backend keeps none: the
	 * rows answer then */
	int (*days)(struct lwm2_db *db, int64_t d0, int64_t d1, struct lwm2_db_day **out, size_t *n,
	            char *err, size_t errlen);
	int (*summary_read)(struct lwm2_db *db, const char *dim, int64_t d0, int64_t d1,
	                    int (*fn)(void *arg, int64_t day, const char *name, const void *data,
	                              size_t len),
	                    void *arg, char *err, size_t errlen);
	int (*summary_store)(struct lwm2_db *db, int64_t day, const struct lwm2_db_summary *v,
	                     size_t n, char *err, size_t errlen);
	bool (*writable)(struct lwm2_db *db);
	void (*patience)(struct lwm2_db *db, int ms);
	bool (*busy)(struct lwm2_db *db);
};

struct lwm2_db {
	const struct lwm2_db_backend *be;
	char shown[512]; /* the address as messages show it (lwm2_db_url_shown) */
};

extern const struct lwm2_db_backend lwm2_db_sqlite;
/* mariadb://... and mysql://..., the same backend (db_mariadb.c) */
extern const struct lwm2_db_backend lwm2_db_mariadb, lwm2_db_mysql;

/* The backend's steps through db->be (db.c). */
int lwm2_db_begin(struct lwm2_db *db, char *err, size_t errlen);
int lwm2_db_commit(struct lwm2_db *db, char *err, size_t errlen);
void lwm2_db_rollback(struct lwm2_db *db);
int lwm2_db_insert(struct lwm2_db *db, const struct lwm2_jobrow *j, const struct lwm2_db_text *text,
                   bool *added, char *err, size_t errlen);
int lwm2_db_meta_get(struct lwm2_db *db, const char *key, char *buf, size_t len, char *err,
                     size_t errlen);
int lwm2_db_meta_set(struct lwm2_db *db, const char *key, const char *value, char *err,
                     size_t errlen);

#endif
