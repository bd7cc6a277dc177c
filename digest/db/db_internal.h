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

/* How a column's value travels to and from SQL: as an integer, a double
 * or text. */
enum lwm2_db_class {
	LWM2_DBC_INT,
	LWM2_DBC_REAL,
	LWM2_DBC_TEXT,
};

static inline enum lwm2_db_class lwm2_db_class_of(enum lwm2_db_kind k)
{
	switch (k) {
	case LWM2_DBK_REAL:
	case LWM2_DBK_OPT:
		return LWM2_DBC_REAL;
	case LWM2_DBK_STR:
	case LWM2_DBK_BUF:
	case LWM2_DBK_RULES:
		return LWM2_DBC_TEXT;
	default:
		return LWM2_DBC_INT;
	}
}

/* One column's value as SQL sees it, whatever the backend: NULL, or the
 * member of its class (text: s, len bytes). */
struct lwm2_db_value {
	bool null;
	int64_t i;
	double d;
	const char *s;
	size_t len;
};

/* Column c of j into v; LWM2_DBK_RULES's text is made in rules[rlen]
 * (v->s points there, or into j). */
void lwm2_db_value_of(const struct lwm2_jobrow *j, const struct lwm2_db_column *c,
                      struct lwm2_db_value *v, char *rules, size_t rlen);
/* And back: v into column c of j (a STR column keeps v->s). */
void lwm2_db_value_set(struct lwm2_jobrow *j, const struct lwm2_db_column *c,
                       const struct lwm2_db_value *v);

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
 * selection takes those), sel's accounts.  schema: the database's
 * (a column it lacks is read as NULL). */
char *lwm2_db_jobs_sql(const struct lwm2_db_select *sel, int64_t metric_id, int schema,
                       size_t *nusers);

/* The job table's columns as a SELECT lists them, into sql[cap]: a
 * column the schema lacks as NULL.  The length written. */
size_t lwm2_db_columns_sql(char *sql, size_t cap, int schema);

/* The name of column name in SQL, or NULL where schema lacks it. */
const char *lwm2_db_column_in(const char *name, int schema);

/* A parameter of a query (db_query.c): of class cls, i, d or s. */
struct lwm2_db_param {
	enum lwm2_db_class cls;
	int64_t i;
	double d;
	const char *s;
};

/* A backend's read of lwm2_db_jobs: the selection, the row's storage
 * and where each row goes. */
struct lwm2_db_jobs_read {
	const struct lwm2_db_select *sel;
	struct lwm2_jobrow *j;
	int (*fn)(void *arg, const struct lwm2_jobrow *j);
	void *arg;
	char *err;
	size_t errlen;
};

/* The job table's columns in schema 2; schema 3 adds the rest of
 * lwm2_db_columns (ALTER TABLE ... ADD COLUMN, NULL in the older rows). */
#define LWM2_DB_COLUMNS_V2 32
/* ... and of schema 3 to 5, after which schema 6 added the rest */
#define LWM2_DB_COLUMNS_V3 36
/* The schema that added column i of lwm2_db_columns. */
int lwm2_db_column_since(size_t i);

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
	int64_t dict; /* text_dict's row both were compressed with; 0: none */
};

/*
 * Since schema 4 the lines are compressed against a dictionary kept in
 * the database (text_dict): the text of a line the database was given
 * first, its grid apart.  The digests of a site repeat their keys and
 * most of their structure from job to job, which one line alone cannot
 * show its compressor; against a line of their kind they shrink several
 * times further, and compress faster.  A row's grid is compressed with
 * the dictionary's grid where the dictionary has one.
 */
struct lwm2_db_dict {
	int64_t id;
	void *line, *grid; /* malloc'd; grid NULL: none */
	size_t line_len, grid_len;
};
void lwm2_db_dict_free(struct lwm2_db_dict *d);

/* A packer's buffers, compressor and dictionary, reused from job to job
 * (a fresh compressor per line would cost more than the compression). */
struct lwm2_db_packer {
	struct lwm2_db_text text;
	void *line, *grid;
	size_t line_cap, grid_cap;
	/* ZSTD_CCtx of the lines and of the grids: each kept to its own
	 * dictionary, as a context given another one is reset, its tables
	 * cleared, for every piece */
	void *cctx_line, *cctx_grid;
	bool dict_ready; /* the dictionary looked for (dict_id 0: none) */
	int64_t dict_id;
	void *cdict_line, *cdict_grid; /* ZSTD_CDict, NULL: none */
	bool borrowed;                 /* the dictionary is another packer's */
};

/* l's line into p->text, compressed against db's dictionary (made from
 * this line where db has none).  0, -1 with err when the line cannot be
 * kept, -2 with err when the database cannot be read or written. */
int lwm2_db_text_pack(struct lwm2_db_packer *p, struct lwm2_db *db, const struct lwm2_logline *l,
                      char *err, size_t errlen);
void lwm2_db_packer_free(struct lwm2_db_packer *p);
/* p to compress with from's dictionary (from has packed a line, or found
 * db's dictionary: from->dict_ready) without reading the database, as a
 * packer on another thread does: from keeps the dictionary, and must
 * outlive p's use of it.  A ZSTD_CDict is only read by compressors. */
void lwm2_db_packer_share(struct lwm2_db_packer *p, const struct lwm2_db_packer *from);
/* p's dictionary, where db has one, made ready: 0 (p->dict_ready tells
 * whether it was there), or -1 with err. */
int lwm2_db_packer_load(struct lwm2_db_packer *p, struct lwm2_db *db, char *err, size_t errlen);

/* lwm2_db_lines's query, malloc'd: each selected job's id, cut, line,
 * (want_grid) grid and dictionary, NULL where the job has no text (every
 * job of a schema before 2; no dictionary before 3), in the log's order.
 * Its parameters as lwm2_db_jobs_sql's, then sel's job ids. */
char *lwm2_db_lines_sql(const struct lwm2_db_select *sel, bool want_grid, int schema,
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
 *   dict_load, dict_store  the dictionaries of the lines (schema 4);
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
	/* monthly: the months' summaries (schema 7), d0 and d1 months */
	int (*summary_read)(struct lwm2_db *db, bool monthly, const char *dim, int64_t d0,
	                    int64_t d1,
	                    int (*fn)(void *arg, int64_t day, const char *name, const void *data,
	                              size_t len),
	                    void *arg, char *err, size_t errlen);
	/* month NULL: the day's; else the month's (day its first day) */
	int (*summary_store)(struct lwm2_db *db, int64_t day, const struct lwm2_db_month *month,
	                     const struct lwm2_db_summary *v, size_t n, char *err, size_t errlen);
	int (*months)(struct lwm2_db *db, int64_t m0, int64_t m1, struct lwm2_db_month **out,
	              size_t *n, char *err, size_t errlen);
	void (*patience)(struct lwm2_db *db, int ms);
	bool (*busy)(struct lwm2_db *db);
	/* text_dict: the dictionary of the least id above d->id (0: the
	 * first) into d, 0; 1 where there is none; -1 with err.  dict_store
	 * adds d (in the open transaction) and sets d->id. */
	int (*dict_load)(struct lwm2_db *db, struct lwm2_db_dict *d, char *err, size_t errlen);
	int (*dict_store)(struct lwm2_db *db, struct lwm2_db_dict *d, char *err, size_t errlen);
	/* sql with its parameters p, in order; each row's ncol columns, of
	 * the classes cls, to fn (0: go on; else it is returned) */
	int (*select)(struct lwm2_db *db, const char *sql, const struct lwm2_db_param *p, size_t np,
	              const enum lwm2_db_class *cls, size_t ncol,
	              int (*fn)(void *arg, const struct lwm2_db_value *v), void *arg, char *err,
	              size_t errlen);
};

struct lwm2_db {
	const struct lwm2_db_backend *be;
	char shown[512];   /* the address as messages show it (lwm2_db_url_shown) */
	const char *where; /* as the backend's own messages name it */
	bool writable;     /* opened to write: begin and vacuum refuse otherwise */
	int schema;        /* the database's schema version, once open */
	/* lwm2_db_follow's, kept from follow to follow (db_import.c): its
	 * dictionary read and made ready once, not for each job, and the
	 * log open */
	struct lwm2_db_follow *follow;
};

extern const struct lwm2_db_backend lwm2_db_sqlite;
/* The name of the SQLite VFS that writes a commit's frames of the
 * write-ahead log in one call (db_walbuf.c), registered on the first
 * call; NULL where it could not be (the default VFS then). */
const char *lwm2_db_walbuf_vfs(void);
/* mariadb://... and mysql://..., the same backend (db_mariadb.c) */
extern const struct lwm2_db_backend lwm2_db_mariadb, lwm2_db_mysql;

/* Who sees what: said after a refusal to read the database (its file, or
 * a MariaDB address's password file), which holds every user's jobs. */
#define LWM2_DB_NOT_YOURS                                                                          \
	" (it holds every user's jobs and is the site administrators'; your own jobs: lwm2 "       \
	"digest, from Slurm accounting)"

/* What both backends say and keep alike (db_common.c). */
/* The schema version in lwm2_meta's text v: 0 where it is none (empty,
 * not a number, 0 or beyond an int). */
int lwm2_db_schema_of(const char *v);
/* The refusal to write to a schema newer than this build's into err; -1. */
int lwm2_db_schema_newer(const char *where, int schema, char *err, size_t errlen);
/* A day (a month) appended to *out (*n of *cap, grown by doubling).  0,
 * or -1 out of memory (*out as it was). */
int lwm2_db_day_add(struct lwm2_db_day **out, size_t *n, size_t *cap,
                    const struct lwm2_db_day *day);
int lwm2_db_month_add(struct lwm2_db_month **out, size_t *n, size_t *cap,
                      const struct lwm2_db_month *month);
/* lwm2_db_check's report: the integrity's verdict (its findings printed
 * before) and the schema's version, then the job table's figures. */
void lwm2_db_check_head(FILE *out, bool bad, int schema);
void lwm2_db_check_jobs(FILE *out, int64_t jobs, int64_t digests, int64_t first, int64_t last);

/* The backend's steps through db->be (db.c); begin refuses a database
 * open for reading only. */
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
