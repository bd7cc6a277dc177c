/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Signed node records with the real munged: round trip, replay, another
 * job, tampering, a forged credential from an unprivileged uid, a full
 * disk, a missing spool.  Runs against a private munged on its own socket
 * (tests/munged.h), as whoever runs it: signer and verifier are the same
 * uid, which the verification is told to expect.
 */
#include "digest_internal.h"
#include "mkrecord.h"
#include "munged.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <munge.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define NOBODY 65534

static char scratch[] = "/tmp/lwm2-sign-XXXXXX";
/* What the cases share: the munged, the spool, the first record and its
 * job directory. */
static const char *munge_sock;
static struct lwm2_node_ident rec_id = {
    .cluster = "c1", .job_id = 1001, .step_id = 0, .node = "n1"};
static struct lwm2_verify_opts opts;
static char spool_dir[400], rec_name[256];
static json_object *rec_node;
static int job_dfd;

static json_object *mk_node(uint64_t job, uint32_t step, const char *host)
{
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = job, .step_id = step, .node = host};
	struct lwm2_rank_record *r = mk_rec(0, 0, host);
	json_object *n;

	r->job_id = job;
	r->step_id = step;
	r->counters[LWM2_C_posix_read_bytes] = 12345;
	n = lwm2_node_merge_records(&id, &r, NULL, 1, NULL, NULL);
	free(r);
	return n;
}

static int jobdir(const char *spool, uint64_t job)
{
	char p[450];

	snprintf(p, sizeof(p), "%s/%llu", spool, (unsigned long long)job);
	return open(p, O_RDONLY | O_DIRECTORY);
}

static char *slurp_at(int dfd, const char *name, size_t *len)
{
	int fd = openat(dfd, name, O_RDONLY);
	struct stat st;
	char *b = NULL;
	ssize_t n;

	*len = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && (b = malloc((size_t)st.st_size + 1)) &&
	    (n = read(fd, b, (size_t)st.st_size)) > 0)
		*len = (size_t)n;
	close(fd);
	return b;
}

static void put_at(int dfd, const char *name, const char *b, size_t len)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd >= 0) {
		if (write(fd, b, len) != (ssize_t)len)
			diag("short write of %s", name);
		close(fd);
	}
}

static void signed_written(void)
{
	char err[512] = "";

	rec_node = mk_node(1001, 0, "n1");
	ok(lwm2_node_write_signed_socket(spool_dir, &rec_id, rec_node, munge_sock, err,
	                                 sizeof(err)) == 0,
	   "signed and written: %s", err);
	lwm2_node_file_name(&rec_id, rec_name, sizeof(rec_name));
	is_str(rec_name, "0.n1.lwm2node", "file name");
	job_dfd = jobdir(spool_dir, 1001);
	{
		struct stat st;
		ok(job_dfd >= 0 && fstat(job_dfd, &st) == 0 && (st.st_mode & 0777) == 0700 &&
		       st.st_uid == geteuid(),
		   "job directory private to the writer");
	}
}

static void step_markers(void)
{
	char err[512] = "";

	{
		struct lwm2_node_ident mid = {
		    .cluster = "c1", .job_id = 1002, .step_id = 3, .node = "n2"};
		struct stat st;
		int mfd;

		ok(lwm2_node_mark(spool_dir, &mid, 0, err, sizeof(err)) == 0 &&
		       lwm2_node_mark(spool_dir, &mid, ENOSPC, err, sizeof(err)) == 0,
		   "step markers written: %s", err);
		mfd = jobdir(spool_dir, 1002);
		ok(mfd >= 0 && fstatat(mfd, "3.n2.lwm2start", &st, 0) == 0 && st.st_size == 0 &&
		       fstatat(mfd, "3.n2.28.lwm2fail", &st, 0) == 0 && st.st_size == 0,
		   "start and fail markers: empty, the errno in the name");
		mid.node = "../x";
		ok(lwm2_node_mark(spool_dir, &mid, 0, err, sizeof(err)) < 0 && errno == EINVAL,
		   "a node name that is no file name is refused");
		if (mfd >= 0)
			close(mfd);
	}
}

static void read_verified(void)
{
	char err[512] = "";
	json_object *back;

	back = lwm2_node_read_verified(job_dfd, rec_name, 1001, &opts, err, sizeof(err));
	ok(back != NULL, "verified: %s", back ? "" : err);
	ok(back && json_object_equal(back, rec_node), "the record read is the record written");
	json_object_put(back);
	back = lwm2_node_read_verified(job_dfd, rec_name, 1001, &opts, err, sizeof(err));
	ok(back != NULL, "read again (replayed credential) still accepted: %s", back ? "" : err);
	json_object_put(back);
	errno = 0;
	back = lwm2_node_read_verified(job_dfd, rec_name, 1002, &opts, err, sizeof(err));
	ok(!back && errno == EPERM && strstr(err, "another job"),
	   "expected another job: rejected: %s", err);
}

/* Copied into another job's directory: the payload still names 1001. */
static void copied_renamed_edited(void)
{
	char err[512] = "";
	json_object *back;

	{
		size_t len;
		char *b = slurp_at(job_dfd, rec_name, &len);
		struct lwm2_node_ident id2 = rec_id;
		json_object *n2 = mk_node(1002, 0, "n1");
		int d2;
		id2.job_id = 1002;
		ok(lwm2_node_write_signed_socket(spool_dir, &id2, n2, munge_sock, err,
		                                 sizeof(err)) == 0,
		   "job 1002 written");
		d2 = jobdir(spool_dir, 1002);
		put_at(d2, rec_name, b, len);
		errno = 0;
		back = lwm2_node_read_verified(d2, rec_name, 1002, &opts, err, sizeof(err));
		ok(!back && errno == EPERM && strstr(err, "signed for job 1001"),
		   "record copied from job 1001 rejected: %s", err);
		/* Renamed to another node. */
		put_at(job_dfd, "0.n7.lwm2node", b, len);
		back = lwm2_node_read_verified(job_dfd, "0.n7.lwm2node", 1001, &opts, err,
		                               sizeof(err));
		ok(!back && strstr(err, "renamed"), "renamed file rejected: %s", err);
		unlinkat(job_dfd, "0.n7.lwm2node", 0);
		/* One byte of the record changed. */
		{
			char *p = strstr(b, "12345");
			p[0] = '9';
			put_at(job_dfd, "0.n1.lwm2node", b, len);
			back = lwm2_node_read_verified(job_dfd, rec_name, 1001, &opts, err,
			                               sizeof(err));
			ok(!back && strstr(err, "hash mismatch"), "edited record rejected: %s",
			   err);
		}
		/* Cut short. */
		put_at(job_dfd, "0.n1.lwm2node", b, len / 2);
		back = lwm2_node_read_verified(job_dfd, rec_name, 1001, &opts, err, sizeof(err));
		ok(!back && strstr(err, "truncated"), "truncated file rejected: %s", err);
		put_at(job_dfd, "0.n1.lwm2node", "lwm2-node 1 99999999999999999999999 1\n", 38);
		back = lwm2_node_read_verified(job_dfd, rec_name, 1001, &opts, err, sizeof(err));
		ok(!back, "absurd header rejected: %s", err);
		close(d2);
		json_object_put(n2);
		free(b);
	}
	/* A symlink planted in the spool is not followed. */
	ok(symlinkat("/etc/passwd", job_dfd, "0.n9.lwm2node") == 0, "symlink planted");
	back = lwm2_node_read_verified(job_dfd, "0.n9.lwm2node", 1001, &opts, err, sizeof(err));
	ok(!back && strstr(err, "open"), "symlink refused: %s", err);
	unlinkat(job_dfd, "0.n9.lwm2node", 0);
}

/* A record signed by a uid other than the expected one, as any user
 * can test it: a fresh record, verified expecting another uid. */
static void other_uid(void)
{
	char err[512] = "";
	json_object *back;

	{
		struct lwm2_node_ident oid = {
		    .cluster = "c1", .job_id = 1003, .step_id = 0, .node = "n1"};
		struct lwm2_verify_opts other = opts;
		json_object *n3 = mk_node(1003, 0, "n1");
		int ofd = -1;

		other.uid = opts.uid + 1;
		errno = 0;
		back = NULL;
		if (lwm2_node_write_signed_socket(spool_dir, &oid, n3, munge_sock, err,
		                                  sizeof(err)) == 0 &&
		    (ofd = jobdir(spool_dir, 1003)) >= 0)
			back =
			    lwm2_node_read_verified(ofd, rec_name, 1003, &other, err, sizeof(err));
		ok(ofd >= 0 && !back && errno == EPERM && strstr(err, "forged"),
		   "a record signed by another uid than expected is rejected: %s", err);
		json_object_put(back);
		back = ofd < 0
		           ? NULL
		           : lwm2_node_read_verified(ofd, rec_name, 1003, &opts, err, sizeof(err));
		ok(back != NULL, "the same record is accepted expecting its signer's uid: %s",
		   back ? "" : err);
		json_object_put(back);
		json_object_put(n3);
		if (ofd >= 0)
			close(ofd);
	}
}

/* A credential made by an ordinary user. */
static void forged_by_user(void)
{
	char err[512] = "";
	json_object *back;

	if (geteuid() == 0) {
		pid_t pid = fork();
		int st = 0;
		if (pid == 0) {
			char e2[256];
			if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
				_exit(3);
			_exit(lwm2_node_write_signed_socket(spool_dir, &rec_id, rec_node,
			                                    munge_sock, e2, sizeof(e2)) == 0
			          ? 0
			          : 4);
		}
		waitpid(pid, &st, 0);
		/* As nobody the job directory (root's, 0700) is closed: write
		 * the forged file where a user could, then plant it. */
		if (WIFEXITED(st) && WEXITSTATUS(st) == 4) {
			char uspool[450];
			snprintf(uspool, sizeof(uspool), "%s/user", scratch);
			mkdir(uspool, 0777);
			chmod(uspool, 0777);
			pid = fork();
			if (pid == 0) {
				char e2[256];
				if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
					_exit(3);
				_exit(lwm2_node_write_signed_socket(uspool, &rec_id, rec_node,
				                                    munge_sock, e2, sizeof(e2)) == 0
				          ? 0
				          : 5);
			}
			waitpid(pid, &st, 0);
			ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "nobody signed a record");
			{
				char p[600];
				int ud;
				size_t len;
				char *b;
				snprintf(p, sizeof(p), "%s/1001", uspool);
				ud = open(p, O_RDONLY | O_DIRECTORY);
				b = slurp_at(ud, rec_name, &len);
				ok(b != NULL, "forged file exists");
				if (b)
					put_at(job_dfd, rec_name, b, len);
				free(b);
				close(ud);
			}
			errno = 0;
			back = lwm2_node_read_verified(job_dfd, rec_name, 1001, &opts, err,
			                               sizeof(err));
			ok(!back && errno == EPERM && strstr(err, "uid 65534") &&
			       strstr(err, "forged"),
			   "forged record rejected: %s", err);
			/* The uid is configurable (tests, or a SlurmUser spool). */
			opts.uid = NOBODY;
			back = lwm2_node_read_verified(job_dfd, rec_name, 1001, &opts, err,
			                               sizeof(err));
			ok(back != NULL, "accepted when uid %d is configured", NOBODY);
			json_object_put(back);
			opts.uid = geteuid();
		} else {
			skip("cannot run as uid %d here", NOBODY);
		}
	} else {
		skip("forging needs root to switch to another uid");
	}
}

/* Full disk: a tiny file size limit makes every write fail. */
static void full_disk(void)
{
	{
		pid_t pid = fork();
		int st = 0;
		if (pid == 0) {
			struct rlimit rl = {200, 200};
			char e2[512];
			int rc;
			signal(SIGXFSZ, SIG_IGN);
			setrlimit(RLIMIT_FSIZE, &rl);
			rec_id.step_id = 5;
			rc = lwm2_node_write_signed_socket(spool_dir, &rec_id, rec_node, munge_sock,
			                                   e2, sizeof(e2));
			printf("# %s\n", e2);
			fflush(stdout);
			_exit(rc == -1 && errno == EFBIG && strstr(e2, "couldn't write") ? 0 : 1);
		}
		waitpid(pid, &st, 0);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "full disk: clear error, no crash");
		errno = 0;
		ok(faccessat(job_dfd, "5.n1.lwm2node", F_OK, 0) != 0, "nothing left behind");
		{
			DIR *d = fdopendir(dup(job_dfd));
			struct dirent *de;
			int tmps = 0;
			while (d && (de = readdir(d)))
				tmps += strncmp(de->d_name, ".5.n1.lwm2node", 14) == 0;
			if (d)
				closedir(d);
			is_int(tmps, 0, "no temporary file left");
		}
	}
}

static void bad_spools(void)
{
	char err[512] = "";

	{
		char missing[450];
		snprintf(missing, sizeof(missing), "%s/no/such/spool", scratch);
		errno = 0;
		ok(lwm2_node_write_signed_socket(missing, &rec_id, rec_node, munge_sock, err,
		                                 sizeof(err)) == -1 &&
		       errno == ENOENT && strstr(err, "lwm2: spool: couldn't open"),
		   "missing spool: %s", err);
	}
	{
		struct lwm2_node_ident bad = rec_id;
		bad.node = "../etc";
		ok(lwm2_node_write_signed_socket(spool_dir, &bad, rec_node, munge_sock, err,
		                                 sizeof(err)) == -1,
		   "node name with a path rejected: %s", err);
	}
}

static int run(const char *socket)
{
	if (!mkdtemp(scratch)) {
		skip("no scratch directory: %s", strerror(errno));
		return done_testing();
	}
	chmod(scratch, 0755);
	diag("a private munged on %s", socket);
	munge_sock = socket;
	opts.munge_socket = socket;
	/* In production the signer is root (slurmstepd); here it is this uid. */
	opts.uid = geteuid();
	snprintf(spool_dir, sizeof(spool_dir), "%s/spool", scratch);
	mkdir(spool_dir, 0755);

	signed_written();
	step_markers();
	read_verified();
	copied_renamed_edited();
	other_uid();
	forged_by_user();
	full_disk();
	bad_spools();
	json_object_put(rec_node);
	close(job_dfd);
	{
		char cmd[400];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", scratch);
		if (system(cmd) != 0)
			diag("couldn't remove %s", scratch);
	}
	return done_testing();
}

int main(void)
{
	return tap_with_private_munged(run);
}
