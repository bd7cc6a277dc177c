/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Who sees what in the portal: Slurm's own rules, as sacct applies them.
 * slurmctld's PrivateData (slurm_load_ctl_conf) says whether jobs are
 * private at all; slurmdbd says who the user is (an operator or an
 * administrator sees every job) and which accounts they coordinate.
 * The service runs as SlurmUser or root, which slurmdbd answers in full.
 *
 * Each answer is kept a minute, so a page costs no round trip to
 * slurmdbd, and a change in accounting reaches the portal within a minute.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

#include "errmsg.h"
#include "serve.h"
#include "slurm_compat.h"

#define KEEP_S    60
#define CACHE_MAX 256

struct cached {
	struct serve_viewer v;
	time_t at;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct cached cache[CACHE_MAX];
static size_t ncache;
static int private_jobs = -1; /* unknown yet */
static time_t private_at;

/* Whether slurmctld keeps jobs private (PrivateData=jobs).  Under lock.
 * -1 when slurmctld cannot be asked. */
static int jobs_private(time_t now)
{
	slurm_conf_t *conf = NULL;

	if (private_jobs >= 0 && now - private_at < KEEP_S)
		return private_jobs;
	if (slurm_load_ctl_conf((time_t)0, &conf) != SLURM_SUCCESS || !conf)
		return private_jobs; /* the last answer, or -1 */
	private_jobs = (conf->private_data & PRIVATE_DATA_JOBS) != 0;
	private_at = now;
	slurm_free_ctl_conf(conf);
	return private_jobs;
}

void serve_access_init(void)
{
	slurm_init(NULL);
}

static int copy_accounts(slurmdb_user_rec_t *u, struct serve_viewer *v)
{
	list_itr_t *it;
	slurmdb_coord_rec_t *c;
	size_t n = u->coord_accts ? (size_t)slurm_list_count(u->coord_accts) : 0;

	if (!n)
		return 0;
	if (!(v->accounts = calloc(n, sizeof(*v->accounts))))
		return -1;
	it = slurm_list_iterator_create(u->coord_accts);
	while ((c = slurm_list_next(it)) && v->naccounts < n)
		if (c->name && strlen(c->name) < SERVE_NAME_LEN)
			snprintf(v->accounts[v->naccounts++], SERVE_NAME_LEN, "%s", c->name);
	slurm_list_iterator_destroy(it);
	return 0;
}

/* The user as slurmdbd has them, into v.  0, or -1 with err. */
static int ask_slurmdbd(const char *user, struct serve_viewer *v, char *err, size_t errlen)
{
	slurmdb_assoc_cond_t ac = {0};
	slurmdb_user_cond_t uc = {0};
	list_t *users = NULL;
	slurmdb_user_rec_t *u;
	void *conn;
	int rc = 0;

	if (!(conn = slurmdb_connection_get(NULL)))
		return lwm2_errprintf(0, err, errlen, "couldn't reach slurmdbd: %s",
		                      slurm_strerror(errno));
	ac.user_list = slurm_list_create(NULL);
	slurm_list_append(ac.user_list, (void *)user);
	uc.assoc_cond = &ac;
	uc.with_coords = 1;
	users = slurmdb_users_get(conn, &uc);
	if (!users) {
		rc = lwm2_errprintf(0, err, errlen, "slurmdbd did not answer for user %s: %s", user,
		                    slurm_strerror(errno));
	} else {
		list_itr_t *it = slurm_list_iterator_create(users);

		if ((u = slurm_list_next(it))) {
			v->all = u->admin_level >= SLURMDB_ADMIN_OPERATOR;
			if (copy_accounts(u, v) < 0)
				rc = lwm2_errprintf(0, err, errlen, "out of memory");
		}
		slurm_list_iterator_destroy(it);
	}
	/* a user slurmdbd does not know sees their own jobs only */
	if (users)
		slurm_list_destroy(users);
	slurm_list_destroy(ac.user_list);
	slurmdb_connection_close(&conn);
	return rc;
}

static void copy_viewer(struct serve_viewer *to, const struct serve_viewer *from)
{
	*to = *from;
	to->accounts = NULL;
	to->naccounts = 0;
	if (from->naccounts && (to->accounts = calloc(from->naccounts, sizeof(*to->accounts)))) {
		memcpy(to->accounts, from->accounts, from->naccounts * sizeof(*to->accounts));
		to->naccounts = from->naccounts;
	}
}

/* Under lock: user's entry, fresh or not, or NULL. */
static struct cached *cached_of(const char *user)
{
	for (size_t i = 0; i < ncache; i++)
		if (strcmp(cache[i].v.user, user) == 0)
			return &cache[i];
	return NULL;
}

/* Under lock, the cache full: the entry asked for longest ago. */
static struct cached *oldest_cached(void)
{
	struct cached *old = &cache[0];

	for (size_t i = 1; i < ncache; i++)
		if (cache[i].at < old->at)
			old = &cache[i];
	return old;
}

int serve_viewer_get(const char *user, struct serve_viewer *v, char *err, size_t errlen)
{
	time_t now = time(NULL);
	struct serve_viewer got = {0};
	struct cached *c;
	int priv;

	memset(v, 0, sizeof(*v));
	if (!user || !*user || strlen(user) >= SERVE_NAME_LEN)
		return lwm2_errprintf(0, err, errlen, "no user name, or one too long");
	pthread_mutex_lock(&lock);
	c = cached_of(user);
	if (c && now - c->at < KEEP_S) {
		copy_viewer(v, &c->v);
		pthread_mutex_unlock(&lock);
		return 0;
	}
	priv = jobs_private(now);
	snprintf(got.user, sizeof(got.user), "%s", user);
	if (priv < 0) {
		pthread_mutex_unlock(&lock);
		return lwm2_errprintf(0, err, errlen, "couldn't ask slurmctld for PrivateData: %s",
		                      slurm_strerror(errno));
	}
	if (ask_slurmdbd(user, &got, err, errlen) < 0) {
		pthread_mutex_unlock(&lock);
		serve_viewer_free(&got);
		return -1;
	}
	if (!priv)
		got.all = true;
	/* the user's own entry again, else a free one, else the oldest */
	if (!c)
		c = ncache < CACHE_MAX ? &cache[ncache++] : oldest_cached();
	serve_viewer_free(&c->v);
	c->v = got;
	c->at = now;
	copy_viewer(v, &got);
	pthread_mutex_unlock(&lock);
	return 0;
}
