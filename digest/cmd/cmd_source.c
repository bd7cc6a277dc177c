/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a site command reads its jobs (lwm2_cmds.h): the logs it is given
 * (--file), or the central database (--db, or lwm2.conf's Database=),
 * whose rows keep each job's log line.  Either way the command gets the
 * same lines in the same order, so its output is the same; the database
 * reads only the jobs the selection names, through its indexes.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "db.h"
#include "lwm2_cmds.h"

int lwm2_source_resolve(const char *cmd, struct lwm2_source *src, bool conf_default)
{
	src->db[0] = '\0';
	if (src->nfiles && src->db_given) {
		fprintf(stderr, "lwm2: %s: --file and --db exclude each other\n", cmd);
		return -1;
	}
	if (src->nfiles)
		return 0;
	if (src->db_given || conf_default)
		return lwm2_cmd_db_url(cmd, src->db_given, src->db, sizeof(src->db));
	return 0;
}

int lwm2_source_scan(const char *cmd, const struct lwm2_source *src,
                     const struct lwm2_db_select *sel, bool want_grid, lwm2_logline_fn fn,
                     void *arg)
{
	static const struct lwm2_db_select all = {.metric = -1};
	struct lwm2_db_lines_count c = {0};
	struct lwm2_db *db;
	char err[1024];
	int rc;

	if (!src->db[0])
		return lwm2_logscan_files(cmd, src->files, src->nfiles, fn, arg, NULL) < 0 ? -1 : 0;
	if (!(db = lwm2_db_open(src->db, LWM2_DB_READ, err, sizeof(err)))) {
		fprintf(stderr, "lwm2: %s: %s\n", cmd, err);
		return -1;
	}
	rc = lwm2_db_lines(db, cmd, sel ? sel : &all, want_grid, fn, arg, &c, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "lwm2: %s: %s\n", cmd, err);
	if (c.missing)
		fprintf(stderr,
		        "lwm2: %s: %lu of the jobs asked for have no log line in %s (stored by an "
		        "lwm2 before schema 2): `lwm2 db import` their logs again\n",
		        cmd, c.missing, src->db);
	lwm2_db_close(db);
	return rc < 0 || c.missing || c.bad ? -1 : 0;
}
