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

/* One transaction's steps, as lwm2_db_import and lwm2_db_follow take them. */
int lwm2_db_begin(struct lwm2_db *db, char *err, size_t errlen);
int lwm2_db_commit(struct lwm2_db *db, char *err, size_t errlen);
void lwm2_db_rollback(struct lwm2_db *db);

/* The job (lwm2_jobrow_digest with LWM2_JR_WANT_ALL) in the open
 * transaction: *added false when the database had it.  0, or -1. */
int lwm2_db_insert(struct lwm2_db *db, const struct lwm2_jobrow *j, bool *added, char *err,
                   size_t errlen);

/* lwm2_meta's value of key into buf ("" when unset); 0, or -1. */
int lwm2_db_meta_get(struct lwm2_db *db, const char *key, char *buf, size_t len, char *err,
                     size_t errlen);
int lwm2_db_meta_set(struct lwm2_db *db, const char *key, const char *value, char *err,
                     size_t errlen);

#endif
