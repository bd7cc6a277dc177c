/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Local context: srun, as the user.  With --lwm2=print (or the site's
 * default=print) srun prints the digest of its step on stderr when it
 * exits.  The node records in the spool are root's alone; each slurmstepd
 * of a printing step also leaves a copy in
 * <spool>/print/<job>/<step>.<node>.json, root's and readable by the job's
 * user alone (an ACL), before the step's last task exit is acknowledged, so
 * they are all there by the time srun's atexit handler runs
 * slurm_spank_exit.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "contexts.h"
#include "lwm2_digest.h"
#include "lwm2_spank.h"
#include "stepname.h"

/* How long srun waits for node records that have not arrived: a shared
 * spool may show a file late, and a node that failed sends none. */
#define LWM2_PRINT_WAIT_MS   3000
#define LWM2_PRINT_MAX_NODES 4096

static struct {
	bool print;
	uint32_t job_id, step_id, nnodes;
} sr;

static int own_getenv(void *ctx, const char *var, char *buf, size_t len)
{
	const char *v = getenv(var);

	(void)ctx;
	snprintf(buf, len, "%s", v ? v : "");
	return 0;
}

int lwm2_srun_user_init(spank_t sp)
{
	struct lwm2_job_names_buf names;

	/* The site's rules as slurmstepd applies them, from what srun knows
	 * (its own environment): srun prints only a step that is measured
	 * with print. */
	lwm2_job_names_of(getuid(), own_getenv, NULL, &names);
	/* S_JOB_ID is gone by slurm_spank_exit: keep what is needed now. */
	if (lwm2_effective_mode(&names.names, NULL, 0) != LWM2_MODE_PRINT ||
	    !(lwm2_conf.print & LWM2_PRINT_SRUN))
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &sr.job_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &sr.step_id) != ESPANK_SUCCESS)
		return 0;
	if (spank_get_item(sp, S_JOB_NNODES, &sr.nnodes) != ESPANK_SUCCESS || !sr.nnodes)
		sr.nnodes = 1;
	sr.print = true;
	return 0;
}

/* Read one node record copy: the user's own file, still checked fully. */
static json_object *read_copy(int dirfd, const char *name)
{
	char err[256];
	json_object *obj = NULL;
	struct stat sb;
	char *buf = NULL;
	ssize_t n = 0, r;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
	    (size_t)sb.st_size > LWM2_NODE_FILE_MAX || !(buf = malloc((size_t)sb.st_size + 1)))
		goto out;
	while (n < sb.st_size && (r = read(fd, buf + n, (size_t)(sb.st_size - n))) > 0)
		n += r;
	if (n != sb.st_size)
		goto out;
	buf[n] = '\0';
	obj = json_tokener_parse(buf);
	if (obj && lwm2_node_validate(obj, err, sizeof(err)) < 0) {
		slurm_error("lwm2: print: couldn't use node record %s: %s", name, err);
		json_object_put(obj);
		obj = NULL;
	}
out:
	free(buf);
	close(fd);
	return obj;
}

int lwm2_srun_exit(spank_t sp)
{
	char dir[PATH_MAX + 32], prefix[32], sname[16];
	json_object *nodes[LWM2_PRINT_MAX_NODES] = {0}, *digest;
	struct lwm2_job_meta meta = {0};
	struct lwm2_render_opts ro = {0};
	struct timespec t0, t;
	size_t n = 0, i, plen;
	int dfd = -1, waited;

	if (!sr.print)
		return 0;
	snprintf(dir, sizeof(dir), "%s/print/%u", lwm2_conf.spool, sr.job_id);
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s.",
	                        lwm2_step_name(sr.step_id, sname, sizeof(sname)));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		DIR *d;
		struct dirent *de;

		if (dfd < 0)
			dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* The copies are root's and stay (the site cleans the print
		 * directory): every pass reads them all afresh. */
		if (dfd >= 0 &&
		    (d = fdopendir(openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)))) {
			for (i = 0; i < n; i++)
				json_object_put(nodes[i]);
			n = 0;
			while ((de = readdir(d)) && n < LWM2_PRINT_MAX_NODES) {
				size_t l = strlen(de->d_name);

				if (strncmp(de->d_name, prefix, plen) || l < plen + 6 ||
				    strcmp(de->d_name + l - 5, ".json"))
					continue;
				if ((nodes[n] = read_copy(dfd, de->d_name)))
					n++;
			}
			closedir(d);
		}
		if (n >= sr.nnodes)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		waited = (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (waited >= LWM2_PRINT_WAIT_MS)
			break;
		usleep(50000);
	}
	if (dfd >= 0)
		close(dfd);
	if (n == 0) {
		slurm_error("lwm2: print: couldn't find the node records of step %u.%s in %s",
		            sr.job_id, sname, dir);
		return 0;
	}
	if (n < sr.nnodes)
		slurm_error(
		    "lwm2: print: only %zu of %u nodes sent a record; the digest is partial", n,
		    sr.nnodes);
	meta.cluster = lwm2_cluster_name(getenv("SLURM_CLUSTER_NAME"));
	meta.job_id = sr.job_id;
	meta.node_count = sr.nnodes;
	digest = lwm2_job_digest_build(&meta, nodes, n);
	if (digest) {
		fflush(stderr);
		lwm2_digest_render(digest, stderr, &ro);
		fflush(stderr);
		json_object_put(digest);
	} else
		slurm_error("lwm2: print: couldn't build the digest: %s", strerror(errno));
	for (i = 0; i < n; i++)
		json_object_put(nodes[i]);
	return 0;
}
