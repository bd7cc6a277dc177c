/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The export settings of lwm2.conf, and the export queue without an
 * engine: jobs wait on disk (at most ExportMaxQueued, then a log line),
 * the thread logs the failure and backs off, stop cuts it short, nothing
 * queued is lost; a credentials file others can read stops the export
 * from starting but not the queueing.  Sending to a real InfluxDB is
 * tests/integration/t-jobcomp-export.sh.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "lineproto.h"
#include "log.h"
#include "lwm2_jobcomp.h"
#include "tap.h"

static char tmp[] = "/tmp/lwm2-jc-export.XXXXXX";
static char logs[8192];
static pthread_mutex_t logs_lock = PTHREAD_MUTEX_INITIALIZER;

/* The export thread logs too: the buffer is shared. */
static void tlog(enum lwm2_log_level level, const char *msg)
{
	(void)level;
	pthread_mutex_lock(&logs_lock);
	if (strlen(logs) + strlen(msg) + 2 < sizeof(logs)) {
		strcat(logs, msg);
		strcat(logs, "\n");
	}
	pthread_mutex_unlock(&logs_lock);
}

static bool logged(const char *what)
{
	bool r;

	pthread_mutex_lock(&logs_lock);
	r = strstr(logs, what) != NULL;
	pthread_mutex_unlock(&logs_lock);
	return r;
}

static void logs_clear(void)
{
	pthread_mutex_lock(&logs_lock);
	logs[0] = '\0';
	pthread_mutex_unlock(&logs_lock);
}

static int write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	fclose(f);
	return chmod(path, mode);
}

static int count_jobs(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strstr(e->d_name, ".job"))
			n++;
	closedir(d);
	return n;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A loopback port nobody listens on (bound, then closed). */
static int closed_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = 9;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static void test_conf(void)
{
	struct lwm2_jc_conf c;
	char path[700], err[512] = "";
	static const char *const bad[] = {"ExportURL=ftp://x/write", "ExportBatchSize=0",
	                                  "ExportTimeout=601",       "ExportGzip=maybe",
	                                  "ExportCredentials=rel",   "ExportMaxQueued=-1"};

	snprintf(path, sizeof(path), "%s/lwm2.conf", tmp);
	write_file(path, "", 0644);
	ok(lwm2_jc_conf_load(&c, path, "/tmp", err, sizeof(err)) == 0 && c.export_url[0] == 0 &&
	       c.export_batch == 5000 && c.export_timeout == 10 && c.export_gzip &&
	       c.export_max_queued == 10000,
	   "defaults: no export, batches of 5000, 10 s, gzip, 10000 jobs");
	lwm2_jc_conf_free(&c);
	write_file(path,
	           "ExportURL=https://tsdb:8086/api/v2/write\nexportdatabase = lwm2\n"
	           "ExportOrg=site\nExportCredentials=/etc/slurm/x.cred\nExportBatchSize=100\n"
	           "ExportTimeout=3\nExportGzip=no\nExportMaxQueued=7\n",
	           0644);
	ok(lwm2_jc_conf_load(&c, path, "/tmp", err, sizeof(err)) == 0 &&
	       !strcmp(c.export_url, "https://tsdb:8086/api/v2/write") &&
	       !strcmp(c.export_db, "lwm2") && !strcmp(c.export_org, "site") &&
	       !strcmp(c.export_cred, "/etc/slurm/x.cred") && c.export_batch == 100 &&
	       c.export_timeout == 3 && !c.export_gzip && c.export_max_queued == 7,
	   "every Export setting read (%s)", err);
	lwm2_jc_conf_free(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[128];

		snprintf(text, sizeof(text), "%s\n", bad[i]);
		write_file(path, text, 0644);
		err[0] = '\0';
		ok(lwm2_jc_conf_load(&c, path, "/tmp", err, sizeof(err)) == -1 &&
		       strstr(err, "bad value"),
		   "refused: %s (%s)", bad[i], err);
	}
}

static struct lwm2_jc_job *mkjob(uint32_t id)
{
	struct lwm2_jc_job *j = calloc(1, sizeof(*j));

	j->job_id = id;
	j->start = 1000;
	j->end = 1030;
	j->array_task_id = LWM2_JC_NONE;
	j->het_job_offset = LWM2_JC_NONE;
	return j;
}

static void test_queue(void)
{
	struct lwm2_jc_conf c;
	struct lwm2_jc_ops ops = {0};
	struct lwm2_jc_job *j1 = mkjob(11), *j2 = mkjob(12), *j3 = mkjob(13);
	char path[700], err[512], dir[700], text[256];
	double t0;
	int i;

	snprintf(path, sizeof(path), "%s/lwm2.conf", tmp);
	snprintf(text, sizeof(text),
	         "StateDir=%s/state\nExportURL=http://127.0.0.1:%d/write\nExportDatabase=lwm2\n"
	         "ExportMaxQueued=2\nExportTimeout=2\n",
	         tmp, closed_port());
	write_file(path, text, 0644);
	if (lwm2_jc_conf_load(&c, path, NULL, err, sizeof(err)) < 0) {
		ok(0, "settings: %s", err);
		lwm2_jc_job_free(j1);
		lwm2_jc_job_free(j2);
		lwm2_jc_job_free(j3);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/state/export", tmp);
	logs_clear();
	ok(lwm2_jc_export_start(&c, &ops) == 0 && logged("lwm2: export: to http://127.0.0.1:"),
	   "the export thread starts with nothing listening");
	lwm2_jc_export_queue(j1, "{\"job_id\":11,\"end\":1030,\"state\":\"COMPLETED\"}");
	lwm2_jc_export_queue(j2, "{\"job_id\":12,\"end\":1030}");
	lwm2_jc_export_queue(j2, "{\"job_id\":12,\"end\":1030}");
	ok(count_jobs(dir) == 2, "two jobs wait in StateDir/export (one queued twice: one file)");
	lwm2_jc_export_queue(j3, "{\"job_id\":13,\"end\":1030}");
	ok(count_jobs(dir) == 2 &&
	       logged("2 jobs wait for export (ExportMaxQueued); job 13 is not queued: the "
	              "log keeps its digest"),
	   "the third is refused with a log line (ExportMaxQueued=2)");
	for (i = 0; i < 100 && !logged("couldn't send to"); i++)
		usleep(50000);
	/* the thread may have tried with the first job alone */
	ok(logged("lwm2: export: couldn't send to http://127.0.0.1:") &&
	       logged(" jobs wait, trying again in 1 s"),
	   "the failure is logged, with the jobs waiting and the backoff");
	if (!logged("trying again")) {
		pthread_mutex_lock(&logs_lock);
		diag("%s", logs);
		pthread_mutex_unlock(&logs_lock);
	}
	t0 = now_s();
	lwm2_jc_export_stop();
	ok(now_s() - t0 < 5, "stop returns at once (%.2f s)", now_s() - t0);
	ok(count_jobs(dir) == 2, "nothing queued was lost");
	lwm2_jc_conf_free(&c);

	/* credentials others can read: no export, but the jobs still wait */
	snprintf(path, sizeof(path), "%s/cred", tmp);
	write_file(path, "user=u\npassword=p\n", 0644);
	snprintf(path, sizeof(path), "%s/lwm2.conf", tmp);
	snprintf(
	    text, sizeof(text),
	    "StateDir=%s/state\nExportURL=http://127.0.0.1:9/write\nExportCredentials=%s/cred\n",
	    tmp, tmp);
	write_file(path, text, 0644);
	lwm2_jc_conf_load(&c, path, NULL, err, sizeof(err));
	logs_clear();
	ok(lwm2_jc_export_start(&c, &ops) == -1 && logged("ExportCredentials") &&
	       logged("chmod 600"),
	   "credentials others can read: export does not start, and says why");
	lwm2_jc_export_queue(j3, "{\"job_id\":13,\"end\":1030}");
	ok(count_jobs(dir) == 3, "jobs are still queued for the next start");
	lwm2_jc_export_stop();
	lwm2_jc_conf_free(&c);
	lwm2_jc_job_free(j1);
	lwm2_jc_job_free(j2);
	lwm2_jc_job_free(j3);
}

int main(void)
{
	char cmd[700];

	tap_plan(16);
	lwm2_log_open("lwm2");
	lwm2_log_set_sink(tlog);
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	test_conf();
	if (!lwm2_lp_can_send()) {
		for (int i = 0; i < 8; i++)
			skip("built without libcurl");
	} else {
		test_queue();
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		diag("couldn't remove %s", tmp);
	return tap_failed ? 1 : 0;
}
