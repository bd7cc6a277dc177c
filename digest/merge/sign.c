/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Signed node records in the spool.  Trust comes from munge: only root can
 * obtain a credential with uid 0, so a record signed by slurmstepd can be
 * told from one a user planted; the payload binds the credential to one
 * cluster, job, step and node and to the hash of the exact record bytes,
 * so a record can neither be edited nor moved to another job.
 */
#include "digest_internal.h"
#include "errmsg.h"
#include "fileio.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <munge.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAYLOAD_TAG "lwm2-node v1"
#define HEADER_TAG  "lwm2-node 1 "

/* Node and cluster names become file names and payload lines. */
static bool name_ok(const char *s, bool allow_empty)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	if (!n)
		return allow_empty;
	if (n > 200 || s[0] == '.' || s[0] == '-')
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'))
			return false;
	return true;
}

int lwm2_node_file_name(const struct lwm2_node_ident *id, char *buf, size_t len)
{
	int n;

	if (!id || !name_ok(id->node, false)) {
		errno = EINVAL;
		return -1;
	}
	n = snprintf(buf, len, "%" PRIu32 ".%s.lwm2node", id->step_id, id->node);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static int payload(char *buf, size_t len, const char *cluster, uint64_t job, uint32_t step,
                   const char *node, const char *hash)
{
	int n = snprintf(buf, len,
	                 PAYLOAD_TAG "\ncluster=%s\njob=%" PRIu64 "\nstep=%" PRIu32
	                             "\nnode=%s\nsha256=%s\n",
	                 cluster, job, step, node, hash);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

/* Open (creating) <spool>/<job> as a private directory of the caller. */
static int job_dir(const char *spool, uint64_t job, char *err, size_t errlen)
{
	char name[32];
	struct stat st;
	int sfd, fd;

	sfd = open(spool, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0)
		return lwm2_errprintf(errno, err, errlen, "lwm2: spool: couldn't open %s: %s",
		                      spool, strerror(errno));
	snprintf(name, sizeof(name), "%" PRIu64, job);
	if (mkdirat(sfd, name, 0700) != 0 && errno != EEXIST) {
		int e = errno;
		close(sfd);
		return lwm2_errprintf(e, err, errlen, "lwm2: spool: couldn't create %s/%s: %s",
		                      spool, name, strerror(e));
	}
	fd = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		close(sfd);
		return lwm2_errprintf(e, err, errlen, "lwm2: spool: couldn't open %s/%s: %s", spool,
		                      name, strerror(e));
	}
	close(sfd);
	/* A directory someone else made or can write could hold their files
	 * under our names. */
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return lwm2_errprintf(
		    EPERM, err, errlen,
		    "lwm2: spool: couldn't use %s/%s: not a private directory of uid %u", spool,
		    name, (unsigned)geteuid());
	}
	return fd;
}

int lwm2_node_write_signed_socket(const char *spool_dir, const struct lwm2_node_ident *id,
                                  json_object *node, const char *munge_socket, char *err,
                                  size_t errlen)
{
	char fname[256], tmp[300], hash[2 * LWM2_SHA256_LEN + 1], pl[600], head[64], werr[400];
	struct iovec iov[5];
	const char *rec;
	size_t rlen;
	char *cred = NULL;
	munge_ctx_t ctx = NULL;
	munge_err_t me;
	int dfd = -1, e, plen;

	if (!spool_dir || !id || !node)
		return lwm2_errprintf(EINVAL, err, errlen,
		                      "lwm2: spool: couldn't sign: missing argument");
	if (lwm2_node_file_name(id, fname, sizeof(fname)) != 0 ||
	    !name_ok(id->cluster ? id->cluster : "", true))
		return lwm2_errprintf(
		    EINVAL, err, errlen,
		    "lwm2: spool: couldn't sign: node or cluster name not usable in a file "
		    "name");
	rec = json_object_to_json_string_ext(node, JSON_C_TO_STRING_PLAIN);
	if (!rec)
		return lwm2_errprintf(ENOMEM, err, errlen,
		                      "lwm2: spool: couldn't serialise the record");
	rlen = strlen(rec);
	lwm2_sha256_hex(rec, rlen, hash);
	plen = payload(pl, sizeof(pl), id->cluster ? id->cluster : "", id->job_id, id->step_id,
	               id->node, hash);
	if (plen < 0)
		return lwm2_errprintf(EINVAL, err, errlen,
		                      "lwm2: spool: couldn't sign: names too long");
	if (munge_socket) {
		ctx = munge_ctx_create();
		if (!ctx || munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge_socket) != EMUNGE_SUCCESS) {
			if (ctx)
				munge_ctx_destroy(ctx);
			return lwm2_errprintf(ENOMEM, err, errlen,
			                      "lwm2: spool: couldn't set up munge");
		}
	}
	me = munge_encode(&cred, ctx, pl, plen);
	if (ctx)
		munge_ctx_destroy(ctx);
	if (me != EMUNGE_SUCCESS) {
		free(cred);
		return lwm2_errprintf(EIO, err, errlen,
		                      "lwm2: spool: couldn't sign the node record: %s",
		                      munge_strerror(me));
	}
	dfd = job_dir(spool_dir, id->job_id, err, errlen);
	if (dfd < 0) {
		e = errno;
		free(cred);
		errno = e;
		return -1;
	}
	snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", fname, (long)getpid());
	snprintf(head, sizeof(head), HEADER_TAG "%zu %zu\n", strlen(cred), rlen);
	iov[0] = (struct iovec){head, strlen(head)};
	iov[1] = (struct iovec){cred, strlen(cred)};
	iov[2] = (struct iovec){(void *)"\n", 1};
	iov[3] = (struct iovec){(void *)rec, rlen};
	iov[4] = iov[2];
	e = 0;
	if (lwm2_atomic_write_at(dfd, fname, tmp, iov, 5, 0600, werr, sizeof(werr)) != 0) {
		e = errno;
		lwm2_errprintf(e, err, errlen, "lwm2: spool: %s/%" PRIu64 ": %s", spool_dir,
		               id->job_id, werr);
	}
	close(dfd);
	free(cred);
	errno = e;
	return e ? -1 : 0;
}

int lwm2_node_mark(const char *spool_dir, const struct lwm2_node_ident *id, int error, char *err,
                   size_t errlen)
{
	char name[300];
	int dfd, fd, n, e;

	if (!spool_dir || !id || !name_ok(id->node, false))
		return lwm2_errprintf(EINVAL, err, errlen,
		                      "lwm2: spool: couldn't mark: bad node name");
	if (error)
		n = snprintf(name, sizeof(name), "%" PRIu32 ".%s.%d.lwm2fail", id->step_id,
		             id->node, error);
	else
		n = snprintf(name, sizeof(name), "%" PRIu32 ".%s.lwm2start", id->step_id, id->node);
	if (n < 0 || (size_t)n >= sizeof(name))
		return lwm2_errprintf(ENAMETOOLONG, err, errlen,
		                      "lwm2: spool: couldn't mark: name too long");
	if ((dfd = job_dir(spool_dir, id->job_id, err, errlen)) < 0)
		return -1;
	/* empty: a full file system still takes it while it has inodes */
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	e = errno;
	close(dfd);
	if (fd < 0)
		return lwm2_errprintf(e, err, errlen, "lwm2: spool: couldn't create %s: %s", name,
		                      strerror(e));
	close(fd);
	return 0;
}

int lwm2_node_write_signed(const char *spool_dir, const struct lwm2_node_ident *id,
                           json_object *node, char *err, size_t errlen)
{
	return lwm2_node_write_signed_socket(spool_dir, id, node, NULL, err, errlen);
}

static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (!n || n > 20)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

/* "<step>.<node>.lwm2node" */
static bool parse_name(const char *name, uint64_t *step, char *node, size_t nlen)
{
	const char *dot = strchr(name, '.');
	size_t n = strlen(name), sl = strlen(".lwm2node");

	if (!dot || n <= sl || strcmp(name + n - sl, ".lwm2node") != 0)
		return false;
	if (!parse_u64(name, (size_t)(dot - name), step) || *step > UINT32_MAX)
		return false;
	n = (size_t)(name + n - sl - (dot + 1));
	if (!n || n >= nlen)
		return false;
	memcpy(node, dot + 1, n);
	node[n] = '\0';
	return true;
}

struct payload_fields {
	char cluster[256], node[256], hash[2 * LWM2_SHA256_LEN + 1];
	uint64_t job, step;
};

static bool field(const char **p, const char *end, const char *key, char *out, size_t olen)
{
	size_t kl = strlen(key);
	const char *nl;

	if ((size_t)(end - *p) < kl || memcmp(*p, key, kl) != 0)
		return false;
	*p += kl;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	if (!nl || (size_t)(nl - *p) >= olen)
		return false;
	memcpy(out, *p, (size_t)(nl - *p));
	out[nl - *p] = '\0';
	*p = nl + 1;
	return true;
}

static bool parse_payload(const char *pl, size_t len, struct payload_fields *f)
{
	const char *p = pl, *end = pl + len;
	char tag[32], num[32];

	if (!field(&p, end, "", tag, sizeof(tag)) || strcmp(tag, PAYLOAD_TAG) != 0)
		return false;
	if (!field(&p, end, "cluster=", f->cluster, sizeof(f->cluster)))
		return false;
	if (!field(&p, end, "job=", num, sizeof(num)) || !parse_u64(num, strlen(num), &f->job))
		return false;
	if (!field(&p, end, "step=", num, sizeof(num)) || !parse_u64(num, strlen(num), &f->step))
		return false;
	if (!field(&p, end, "node=", f->node, sizeof(f->node)))
		return false;
	if (!field(&p, end, "sha256=", f->hash, sizeof(f->hash)) ||
	    strlen(f->hash) != 2 * LWM2_SHA256_LEN)
		return false;
	return p == end;
}

/* Where the parts of a signed file lie: header line, credential line,
 * record, newline. */
struct frame {
	size_t hlen;         /* the header line, its newline included */
	uint64_t clen, rlen; /* the credential and the record */
};

/* The frame of buf (got bytes): the lengths must add up to the file
 * exactly.  0, or -1 with err. */
static int read_frame(const char *name, const char *buf, size_t got, struct frame *fr, char *err,
                      size_t errlen)
{
	const char *nl = memchr(buf, '\n', got < 64 ? got : 64), *sp;

	if (!nl || strncmp(buf, HEADER_TAG, strlen(HEADER_TAG)) != 0)
		return lwm2_errprintf(EINVAL, err, errlen,
		                      "%s: not a signed lwm2 node record (bad header)", name);
	sp = strchr(buf + strlen(HEADER_TAG), ' ');
	if (!sp || sp > nl ||
	    !parse_u64(buf + strlen(HEADER_TAG), (size_t)(sp - buf) - strlen(HEADER_TAG),
	               &fr->clen) ||
	    !parse_u64(sp + 1, (size_t)(nl - sp - 1), &fr->rlen))
		return lwm2_errprintf(EINVAL, err, errlen, "%s: bad header lengths", name);
	fr->hlen = (size_t)(nl + 1 - buf);
	if (fr->clen > got || fr->rlen > got || fr->rlen > INT32_MAX ||
	    fr->hlen + fr->clen + 1 + fr->rlen + 1 != got || buf[fr->hlen + fr->clen] != '\n' ||
	    buf[got - 1] != '\n')
		return lwm2_errprintf(
		    EINVAL, err, errlen, "%s: truncated or padded (%zu bytes, header says %llu)",
		    name, got, (unsigned long long)(fr->hlen + fr->clen + fr->rlen + 2));
	return 0;
}

/* The credential decoded: signed by o->uid, with an lwm2 node signature
 * as its payload, into f.  0, or -1 with err. */
static int decode_cred(const char *name, const char *cred, const struct lwm2_verify_opts *o,
                       struct payload_fields *f, char *err, size_t errlen)
{
	munge_ctx_t ctx = NULL;
	munge_err_t me;
	void *pl = NULL;
	int plen = 0, rc = -1, saved;
	uid_t uid;
	gid_t gid;

	if (o->munge_socket) {
		ctx = munge_ctx_create();
		if (!ctx ||
		    munge_ctx_set(ctx, MUNGE_OPT_SOCKET, o->munge_socket) != EMUNGE_SUCCESS) {
			lwm2_errprintf(ENOMEM, err, errlen, "%s: couldn't set up munge", name);
			goto out;
		}
	}
	me = munge_decode(cred, ctx, &pl, &plen, &uid, &gid);
	/* Replayed or expired still carry uid and payload: a record read
	 * again after a jobcomp restart, or long after its step, is as
	 * trustworthy as the first time (see lwm2_digest.h). */
	if (me != EMUNGE_SUCCESS && me != EMUNGE_CRED_REPLAYED && me != EMUNGE_CRED_EXPIRED)
		lwm2_errprintf(me == EMUNGE_SOCKET || me == EMUNGE_TIMEOUT ? EAGAIN : EPERM, err,
		               errlen, "%s: credential rejected: %s", name, munge_strerror(me));
	else if (uid != o->uid)
		lwm2_errprintf(
		    EPERM, err, errlen,
		    "%s: signed by uid %u, not %u: not written by slurmstepd (forged record)", name,
		    (unsigned)uid, (unsigned)o->uid);
	else if (!pl || plen <= 0 || !parse_payload(pl, (size_t)plen, f))
		lwm2_errprintf(EPERM, err, errlen,
		               "%s: credential payload is not an lwm2 node signature", name);
	else
		rc = 0;
out:
	saved = errno; /* the error's, whatever munge's cleanup does */
	if (ctx)
		munge_ctx_destroy(ctx);
	free(pl);
	errno = saved;
	return rc;
}

/* The signature is for this job, this file's step and node, this cluster
 * and these record bytes.  0, or -1 with err. */
static int check_signed_for(const char *name, const struct payload_fields *f, uint64_t expect_job,
                            uint64_t fstep, const char *fnode, const char *cluster,
                            const char *record, size_t rlen, char *err, size_t errlen)
{
	char hash[2 * LWM2_SHA256_LEN + 1];

	if (f->job != expect_job)
		return lwm2_errprintf(
		    EPERM, err, errlen,
		    "%s: signed for job %llu, not job %llu (copied from another job)", name,
		    (unsigned long long)f->job, (unsigned long long)expect_job);
	if (f->step != fstep || strcmp(f->node, fnode) != 0)
		return lwm2_errprintf(EPERM, err, errlen,
		                      "%s: signed for step %llu on node %s (renamed file)", name,
		                      (unsigned long long)f->step, f->node);
	if (cluster && strcmp(cluster, f->cluster) != 0)
		return lwm2_errprintf(EPERM, err, errlen, "%s: signed on cluster %s, not %s", name,
		                      f->cluster, cluster);
	lwm2_sha256_hex(record, rlen, hash);
	if (strcmp(hash, f->hash) != 0)
		return lwm2_errprintf(EPERM, err, errlen,
		                      "%s: record changed after it was signed (hash mismatch)",
		                      name);
	return 0;
}

/* The record's JSON, valid, saying what its signature says; NULL with err. */
static json_object *parse_record(const char *name, const char *record, size_t rlen,
                                 const struct payload_fields *f, char *err, size_t errlen)
{
	json_tokener *tok = json_tokener_new_ex(64);
	json_object *rec;
	char verr[256];
	const char *s;
	int64_t v;

	if (!tok) {
		lwm2_errprintf(ENOMEM, err, errlen, "%s: out of memory", name);
		return NULL;
	}
	rec = json_tokener_parse_ex(tok, record, (int)rlen);
	if (!rec || json_tokener_get_error(tok) != json_tokener_success ||
	    tok->char_offset != (int)rlen) {
		json_object_put(rec);
		lwm2_errprintf(EINVAL, err, errlen, "%s: record is not valid JSON", name);
		json_tokener_free(tok);
		return NULL;
	}
	json_tokener_free(tok);
	if (lwm2_node_validate(rec, verr, sizeof(verr)) != 0) {
		lwm2_errprintf(EINVAL, err, errlen, "%s: %s", name, verr);
		json_object_put(rec);
		return NULL;
	}
	/* The record must say what its signature says. */
	s = ju_str(rec, "node");
	if (!ju_int(rec, "job_id", &v) || (uint64_t)v != f->job || !ju_int(rec, "step_id", &v) ||
	    (uint64_t)v != f->step || !s || strcmp(s, f->node) != 0 ||
	    !(s = ju_str(rec, "cluster")) || strcmp(s, f->cluster) != 0) {
		lwm2_errprintf(EPERM, err, errlen, "%s: record identity differs from its signature",
		               name);
		json_object_put(rec);
		return NULL;
	}
	return rec;
}

json_object *lwm2_node_read_verified(int dirfd, const char *name, uint64_t expect_job,
                                     const struct lwm2_verify_opts *opts, char *err, size_t errlen)
{
	static const struct lwm2_verify_opts dflt = {0};
	struct lwm2_verify_opts o = opts ? *opts : dflt;
	struct payload_fields f;
	struct frame fr = {0};
	char fnode[256], verr[256];
	uint64_t fstep;
	char *buf = NULL, *cred = NULL;
	size_t got = 0;
	json_object *rec = NULL;
	int e;

	if (!o.max_size)
		o.max_size = LWM2_NODE_FILE_MAX;
	if (!name || !parse_name(name, &fstep, fnode, sizeof(fnode))) {
		lwm2_errprintf(EINVAL, err, errlen, "not a node record name: %s",
		               name ? name : "(null)");
		return NULL;
	}
	if (!(buf = lwm2_read_file_at(dirfd, name, o.max_size, &got, verr, sizeof(verr)))) {
		lwm2_errprintf(errno, err, errlen, "%s: %s", name, verr);
		return NULL;
	}
	if (read_frame(name, buf, got, &fr, err, errlen) != 0)
		goto out;
	if (!(cred = strndup(buf + fr.hlen, fr.clen))) {
		lwm2_errprintf(ENOMEM, err, errlen, "%s: out of memory", name);
		goto out;
	}
	if (decode_cred(name, cred, &o, &f, err, errlen) == 0 &&
	    check_signed_for(name, &f, expect_job, fstep, fnode, o.cluster,
	                     buf + fr.hlen + fr.clen + 1, fr.rlen, err, errlen) == 0)
		rec = parse_record(name, buf + fr.hlen + fr.clen + 1, fr.rlen, &f, err, errlen);
out:
	e = rec ? 0 : errno;
	free(cred);
	free(buf);
	if (!rec)
		errno = e ? e : EINVAL;
	return rec;
}
