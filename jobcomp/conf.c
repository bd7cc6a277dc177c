/* SPDX-License-Identifier: GPL-2.0-or-later */
/* jobcomp/lwm2's settings from lwm2.conf (digest/util/lwm2conf.h reads it). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "lwm2_jobcomp.h"
#include "lwm2conf.h"

void lwm2_jc_conf_free(struct lwm2_jc_conf *conf)
{
	free(conf->log_path);
	free(conf->spool_dir);
	free(conf->state_dir);
	free(conf->munge_socket);
	memset(conf, 0, sizeof(*conf));
}

/* The text of key id, taken out of f (NULL where it has none). */
static char *take(struct lwm2_conf *f, enum lwm2_conf_id id)
{
	char *t = f->v[id].text;

	f->v[id].text = NULL;
	return t;
}

/* StateDir's default: under Slurm's StateSaveLocation, else the spool. */
static char *state_dir_default(const char *state_save)
{
	size_t n;
	char *p;

	if (!state_save || !*state_save)
		return strdup("/var/spool/lwm2/jobcomp");
	n = strlen(state_save) + sizeof("/lwm2");
	if ((p = malloc(n)))
		snprintf(p, n, "%s/lwm2", state_save);
	return p;
}

/* f's values into c (the fixed buffers are as long as the table's limits
 * allow): 0, or -1 with errno ENOMEM. */
static int from_conf(struct lwm2_jc_conf *c, struct lwm2_conf *f, const char *state_save)
{
	const struct lwm2_conf_value *v = f->v;

	c->late_wait = (unsigned)v[LWM2_CONF_LateRecordWait].num;
	c->settle = (unsigned)v[LWM2_CONF_RecordSettle].num;
	c->advice_min_runtime = (unsigned)v[LWM2_CONF_AdviceMinRuntime].num;
	c->cap = (size_t)v[LWM2_CONF_AdminCommentCap].num;
	c->admin_comment = v[LWM2_CONF_AdminComment].yes;
	c->keep_records = v[LWM2_CONF_KeepNodeRecords].yes;
	c->retry_max = (unsigned)v[LWM2_CONF_RetryMax].num;
	c->verify_delay = (unsigned)v[LWM2_CONF_VerifyDelay].num;
	c->verify_window = (unsigned)v[LWM2_CONF_VerifyWindow].num;
	c->max_queued = (size_t)v[LWM2_CONF_MaxQueued].num;
	c->export_batch = (unsigned)v[LWM2_CONF_ExportBatchSize].num;
	c->export_timeout = (unsigned)v[LWM2_CONF_ExportTimeout].num;
	c->export_gzip = v[LWM2_CONF_ExportGzip].yes;
	c->export_max_queued = (size_t)v[LWM2_CONF_ExportMaxQueued].num;
	c->database_set = v[LWM2_CONF_Database].line > 0;
	if (lwm2_conf_copy(f, LWM2_CONF_ExportURL, c->export_url, sizeof(c->export_url)) ||
	    lwm2_conf_copy(f, LWM2_CONF_ExportDatabase, c->export_db, sizeof(c->export_db)) ||
	    lwm2_conf_copy(f, LWM2_CONF_ExportOrg, c->export_org, sizeof(c->export_org)) ||
	    lwm2_conf_copy(f, LWM2_CONF_ExportCredentials, c->export_cred,
	                   sizeof(c->export_cred)) ||
	    lwm2_conf_copy(f, LWM2_CONF_Database, c->database, sizeof(c->database)) ||
	    lwm2_conf_copy(f, LWM2_CONF_JobEndLog, c->jobend_log, sizeof(c->jobend_log))) {
		errno = EINVAL; /* the table's limits keep this from happening */
		return -1;
	}
	c->spool_dir = take(f, LWM2_CONF_SpoolDir);
	c->log_path = take(f, LWM2_CONF_LogFile);
	c->munge_socket = take(f, LWM2_CONF_MungeSocket);
	c->state_dir = v[LWM2_CONF_StateDir].text ? take(f, LWM2_CONF_StateDir)
	                                          : state_dir_default(state_save);
	if (!c->spool_dir || !c->log_path || !c->state_dir) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int lwm2_jc_conf_load(struct lwm2_jc_conf *c, const char *path, const char *state_save, char *err,
                      size_t errlen)
{
	struct lwm2_conf f;
	int rc;

	memset(c, 0, sizeof(*c));
	if (lwm2_conf_load(&f, path, lwm2_conf_part_keys(LWM2_CONF_JOBCOMP), err, errlen) < 0)
		return -1;
	rc = from_conf(c, &f, state_save);
	lwm2_conf_free(&f);
	if (rc < 0) {
		int e = errno;

		lwm2_jc_conf_free(c);
		return lwm2_errprintf(e, err, errlen, "%s",
		                      e == ENOMEM ? "out of memory" : "bad settings");
	}
	return 0;
}
