/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The POSIX module through the real liblwm2.so: runs posix_app (and its
 * fortified twin) under LD_PRELOAD=$LWM2_LIB with LWM2_DIR set to a scratch
 * directory, reads back the rank record with the record reader and checks
 * the exact counts; runs it again without the library and checks that
 * output and exit status are the same.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lwm2_record.h"
#include "tap.h"

extern char **environ;

struct want {
	const char *scenario;
	uint64_t rc, rb, wc, wb, mc;
};

/* What posix_app's scenarios do, counted by hand (see posix_app.c). */
static const struct want wants[] = {
    {"write", 0, 0, 10, 70, 2},       {"read", 11, 70, 1, 70, 3},
    {"vector", 4, 24, 4, 24, 4},      {"stdio", 6, 74, 14, 74, 4},
    {"notfile", 0, 0, 0, 0, 0},       {"reuse", 0, 0, 1, 1, 2},
    {"errno", 0, 0, 0, 0, 3},         {"threads", 0, 0, 400, 4000, 8},
    {"churn", 0, 0, 800, 2400, 1600}, {"copy", 1, 1000, 2, 2000, 5},
    {"handler", 0, 0, 5, 15, 2},      {"stdout", 0, 0, 0, 0, 0},
};

static char scratch[] = "/tmp/lwm2-posix-preload.XXXXXX";
static const char *lib, *builddir;

struct run {
	int status;
	char out[4096];
	size_t outlen;
	struct lwm2_rank_record *rec; /* NULL without the library */
	int nrecords;
};

static void rm_dir(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;

	if (!dp)
		return;
	while ((e = readdir(dp)))
		if (e->d_name[0] != '.')
			unlinkat(dirfd(dp), e->d_name, 0);
	closedir(dp);
	rmdir(d);
}

/* Run app SCENARIO with stdout to a pipe, or to the file outfile. */
static int run(const char *app, const char *scenario, bool preload, const char *outfile,
               const char *extra_env, struct run *r)
{
	char appdir[4200], recdir[4200], exe[4200], ld[4200], lwdir[4300];
	int p[2];
	pid_t pid;
	DIR *dp;
	struct dirent *e;

	memset(r, 0, sizeof *r);
	snprintf(appdir, sizeof appdir, "%s/app", scratch);
	snprintf(recdir, sizeof recdir, "%s/rec", scratch);
	rm_dir(appdir);
	rm_dir(recdir);
	if (mkdir(appdir, 0700) || mkdir(recdir, 0700) || pipe(p))
		return -1;
	snprintf(exe, sizeof exe, "%s/preload/%s", builddir, app);
	snprintf(ld, sizeof ld, "LD_PRELOAD=%s", lib);
	snprintf(lwdir, sizeof lwdir, "LWM2_DIR=%s", recdir);
	pid = fork();
	if (pid == 0) {
		int fd = outfile ? open(outfile, O_WRONLY | O_CREAT | O_TRUNC, 0600) : p[1];

		dup2(fd, 1);
		close(p[0]);
		if (preload) {
			putenv(ld);
			putenv(lwdir);
			putenv("LWM2_SAMPLE_HZ=1000");
			/* liblwm2 ahead of a sanitizer runtime the app links */
			putenv("ASAN_OPTIONS=verify_asan_link_order=0");
			if (extra_env)
				putenv((char *)extra_env);
		} else {
			unsetenv("LD_PRELOAD");
		}
		execl(exe, app, scenario, appdir, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	for (ssize_t n; (n = read(p[0], r->out + r->outlen, sizeof r->out - 1 - r->outlen)) > 0;)
		r->outlen += (size_t)n;
	close(p[0]);
	if (pid < 0 || waitpid(pid, &r->status, 0) != pid)
		return -1;
	if (outfile) {
		int fd = open(outfile, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, r->out, sizeof r->out - 1);

		r->outlen = n > 0 ? (size_t)n : 0;
		if (fd >= 0)
			close(fd);
	}
	dp = opendir(recdir);
	while (dp && (e = readdir(dp))) {
		char err[128];
		struct lwm2_rank_record *rec;

		if (e->d_name[0] == '.')
			continue;
		r->nrecords++;
		if (lwm2_record_read_file(dirfd(dp), e->d_name, &rec, err, sizeof err) != 0) {
			diag("record %s: %s", e->d_name, err);
			continue;
		}
		free(r->rec);
		r->rec = rec;
	}
	if (dp)
		closedir(dp);
	return 0;
}

static uint64_t ctr(const struct run *r, enum lwm2_counter c)
{
	return r->rec ? r->rec->counters[c] : 0;
}

static bool check_counts(const char *app, const struct want *w, const struct run *r,
                         bool stdout_file)
{
	uint64_t wc = w->wc, wb = w->wb, mc = w->mc;
	bool good;

	if (stdout_file) /* printf 6, puts 4, putchar 1, fputs 2, write 4; fflush */
		wc += 5, wb += 17, mc += 1;
	good = r->nrecords == 1 && r->rec && ctr(r, LWM2_C_posix_read_calls) == w->rc &&
	       ctr(r, LWM2_C_posix_read_bytes) == w->rb && ctr(r, LWM2_C_posix_write_calls) == wc &&
	       ctr(r, LWM2_C_posix_write_bytes) == wb && ctr(r, LWM2_C_posix_meta_calls) == mc &&
	       (w->rc ? ctr(r, LWM2_C_posix_read_ns) > 0 : ctr(r, LWM2_C_posix_read_ns) == 0) &&
	       (wc ? ctr(r, LWM2_C_posix_write_ns) > 0 : ctr(r, LWM2_C_posix_write_ns) == 0) &&
	       (mc ? ctr(r, LWM2_C_posix_meta_ns) > 0 : ctr(r, LWM2_C_posix_meta_ns) == 0);
	if (!ok(good, "%s %s%s: read %llu/%lluB write %llu/%lluB meta %llu", app, w->scenario,
	        stdout_file ? " (stdout a file)" : "", (unsigned long long)w->rc,
	        (unsigned long long)w->rb, (unsigned long long)wc, (unsigned long long)wb,
	        (unsigned long long)mc))
		diag("  got %d record(s): read %llu/%lluB/%lluns write %llu/%lluB/%lluns meta "
		     "%llu/%lluns",
		     r->nrecords, (unsigned long long)ctr(r, LWM2_C_posix_read_calls),
		     (unsigned long long)ctr(r, LWM2_C_posix_read_bytes),
		     (unsigned long long)ctr(r, LWM2_C_posix_read_ns),
		     (unsigned long long)ctr(r, LWM2_C_posix_write_calls),
		     (unsigned long long)ctr(r, LWM2_C_posix_write_bytes),
		     (unsigned long long)ctr(r, LWM2_C_posix_write_ns),
		     (unsigned long long)ctr(r, LWM2_C_posix_meta_calls),
		     (unsigned long long)ctr(r, LWM2_C_posix_meta_ns));
	return good;
}

static void same_behaviour(const char *app, const char *scenario, const struct run *with,
                           const struct run *without)
{
	bool same = WIFEXITED(with->status) && WEXITSTATUS(with->status) == 0 &&
	            with->status == without->status && with->outlen == without->outlen &&
	            memcmp(with->out, without->out, with->outlen) == 0;

	if (!ok(same, "%s %s: exit 0 and the same output with and without lwm2", app, scenario))
		diag("  with: status %d \"%.*s\"; without: status %d \"%.*s\"", with->status,
		     (int)with->outlen, with->out, without->status, (int)without->outlen,
		     without->out);
}

static void scenarios(const char *app)
{
	struct run with, without;
	char outfile[4200];

	for (size_t i = 0; i < sizeof wants / sizeof wants[0]; i++) {
		const struct want *w = &wants[i];

		if (run(app, w->scenario, true, NULL, NULL, &with) ||
		    run(app, w->scenario, false, NULL, NULL, &without)) {
			ok(0, "%s %s: ran", app, w->scenario);
			continue;
		}
		check_counts(app, w, &with, false);
		same_behaviour(app, w->scenario, &with, &without);
		if (WIFEXITED(with.status) && WEXITSTATUS(with.status) != 0)
			diag("  %s %s exited %d", app, w->scenario, WEXITSTATUS(with.status));
		free(with.rec);
	}

	/* A batch job's stdout is a file: then stdout's I/O is file I/O. */
	snprintf(outfile, sizeof outfile, "%s/stdout", scratch);
	if (run(app, "stdout", true, outfile, NULL, &with) ||
	    run(app, "stdout", false, outfile, NULL, &without)) {
		ok(0, "%s stdout to a file: ran", app);
		return;
	}
	check_counts(app, &wants[sizeof wants / sizeof wants[0] - 1], &with, true);
	same_behaviour(app, "stdout (a file)", &with, &without);
	free(with.rec);
}

/* The I/O time is the time the writes took: the counted write time lies
 * between half the write phase's wall time and all of it, and nothing of
 * the compute phase is counted. */
static void share(void)
{
	struct run r;
	double io_ns = 0, compute_ns = 0, wns;
	long n = 0;

	if (run("posix_app", "share", true, NULL, NULL, &r) || !r.rec) {
		ok(0, "share: ran and left a record");
		return;
	}
	r.out[r.outlen] = '\0';
	if (sscanf(r.out, "writes %ld io_ns %lf compute_ns %lf", &n, &io_ns, &compute_ns) != 3)
		diag("  unexpected output \"%s\"", r.out);
	wns = (double)ctr(&r, LWM2_C_posix_write_ns);
	ok(ctr(&r, LWM2_C_posix_write_calls) == (uint64_t)n && n > 0,
	   "share: %ld writes counted (%llu)", n,
	   (unsigned long long)ctr(&r, LWM2_C_posix_write_calls));
	ok(wns >= 0.5 * io_ns && wns <= io_ns * 1.01,
	   "share: write time %.0f ms within the write phase's %.0f ms (and above half of it)",
	   wns / 1e6, io_ns / 1e6);
	if (r.rec->sample_period_us == 0) {
		skip("share: sampling is off (%s)", r.rec->missing_reason[LWM2_G_SAMPLING]);
	} else {
		uint64_t io = r.rec->samples[LWM2_EARMARK_io];
		uint64_t all = io + r.rec->samples[LWM2_EARMARK_compute];
		double f = all ? (double)io / (double)all : 0;

		ok(all >= 30 && f > 0.15 && f < 0.85,
		   "share: %llu of %llu samples in I/O (%.0f%%) for a half-I/O program",
		   (unsigned long long)io, (unsigned long long)all, f * 100);
	}
	free(r.rec);
}

int main(void)
{
	const char *san = getenv("LWM2_SANITIZER");

	lib = getenv("LWM2_LIB");
	builddir = getenv("LWM2_BUILDDIR");
	if (!lib || !builddir) {
		printf("1..0 # SKIP LWM2_LIB and LWM2_BUILDDIR unset (run through make check)\n");
		return 0;
	}
	if (san && (strstr(san, "address") || strstr(san, "thread"))) {
		printf("1..0 # SKIP the tree is built with -fsanitize=%s\n", san);
		return 0;
	}
	if (!mkdtemp(scratch))
		return 1;
	scenarios("posix_app");
	scenarios("posix_app_fortify");
	share();
	rm_dir(scratch);
	{
		char d[4200];

		snprintf(d, sizeof d, "%s/app", scratch);
		rm_dir(d);
		snprintf(d, sizeof d, "%s/rec", scratch);
		rm_dir(d);
		rm_dir(scratch);
	}
	return done_testing();
}
