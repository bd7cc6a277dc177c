/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A job against its application's history: the regression rule and the
 * index jobcomp's worker keeps by application.
 *
 * The rule, for each row of lwm2_history_rules[] and its metric x:
 *   - the earlier runs compared are the last LWM2_HIST_LAST (20) runs of
 *     the same application (executable name; any build) whose rank count
 *     is within LWM2_HIST_RANK_FACTOR (1.5) of this run's, that ended
 *     before it and have the metric; at least LWM2_HIST_MIN_RUNS (5);
 *   - med = their median, MAD = median of |x_i - med|,
 *     scale = max(1.4826 MAD, 2 % of |med|, the rule's floor);
 *   - it fires when the change d = x - med (-d where lower is worse) is
 *     at least min_z scales, at least min_abs, and at least min_rel of
 *     med (where min_rel is set).
 * Median and MAD ignore a few outliers among the earlier runs; the floors
 * keep a very steady history from making noise of a tiny change; the
 * minimum number of runs keeps a new application silent.
 *
 * The index: one file per application under StateDir/history, named by
 * the hash of the executable's name, of fixed-size entries appended in the
 * order jobs end.  Judging a job reads the last LWM2_HIST_INDEX_TAIL
 * entries of one file and appends one: the cost does not grow with the
 * log.  A file is cut to its newest LWM2_HIST_INDEX_KEEP entries when it
 * reaches LWM2_HIST_INDEX_MAX.
 */
#include "lwm2_history.h"
#include "lwm2_keys.h"
#include "lwm2_version.h"

#include "errmsg.h"
#include "fileio.h"
#include "jsonutil.h"
#include "strhash.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const struct lwm2_history_rule lwm2_history_rules[] = {
    {"history-slower", LWM2_HM_DURATION, +1, 4.0, 0.20, 1.0, 0.1,
     "The application's processes ran longer than in its earlier comparable runs: a slower "
     "build, other input, or a slower machine or file system."},
    {"history-mpi-share", LWM2_HM_MPI, +1, 4.0, 0, 5.0, 0.5,
     "More of the run time went to MPI than in the earlier comparable runs: more "
     "communication, more waiting (imbalance), or a slower network."},
    {"history-io-share", LWM2_HM_IO, +1, 4.0, 0, 5.0, 0.5,
     "More of the run time went to file I/O than in the earlier comparable runs: more I/O, "
     "or a loaded file system."},
    {"history-cpi", LWM2_HM_CPI, +1, 4.0, 0.20, 0.05, 0.02,
     "More cycles per instruction than in the earlier comparable runs: other code "
     "generation (compiler, flags), memory placement, or contention on the nodes."},
    {"history-threads", LWM2_HM_THREADS, -1, 4.0, 0.30, 0.5, 0.1,
     "Fewer threads were busy than in the earlier comparable runs: a lost OpenMP setting, "
     "another thread count, or threads waiting."},
};
const size_t lwm2_nhistory_rules = sizeof(lwm2_history_rules) / sizeof(lwm2_history_rules[0]);

static const char *const hm_names[LWM2_NHM] = {"Run time", "MPI share", "I/O share", "CPI",
                                               "Busy threads"};
static const char *const hm_units[LWM2_NHM] = {" s", " %", " %", "", ""};

static double metric_of(const struct lwm2_hist_entry *e, enum lwm2_hist_metric m)
{
	switch (m) {
	case LWM2_HM_DURATION:
		return e->duration;
	case LWM2_HM_MPI:
		return e->mpi_share;
	case LWM2_HM_IO:
		return e->io_share;
	case LWM2_HM_CPI:
		return e->cpi;
	case LWM2_HM_THREADS:
		return e->threads;
	default:
		return NAN;
	}
}

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static double num_or_nan(json_object *o, const char *key)
{
	double v;

	return o && ju_num(o, key, &v) && isfinite(v) ? v : NAN;
}

int lwm2_hist_from_digest(json_object *digest, struct lwm2_hist_entry *e)
{
	json_object *job = ju_get(digest, LWM2_KEY_JOB, json_type_object);
	json_object *app = ju_get(digest, LWM2_KEY_APPLICATION, json_type_object);
	json_object *ms = app ? ju_get(app, LWM2_KEY_METRICS, json_type_object) : NULL;
	double cpu;

	memset(e, 0, sizeof(*e));
	if (!job || !app || !ju_str(app, LWM2_KEY_EXE))
		return -1;
	e->job_id = (uint32_t)ju_int_or(job, LWM2_KEY_JOB_ID, 0);
	e->start = ju_int_or(job, LWM2_KEY_START, 0);
	e->end = ju_int_or(job, LWM2_KEY_END, 0);
	e->ranks = (uint32_t)ju_int_or(app, LWM2_KEY_RANKS, 0);
	e->nodes = (uint32_t)ju_int_or(app, LWM2_KEY_NODES, 0);
	cpu = num_or_nan(app, LWM2_KEY_CPU_S);
	e->core_hours = isfinite(cpu) ? cpu / 3600.0 : 0;
	e->duration = num_or_nan(ms, "duration");
	e->mpi_share = num_or_nan(ms, "mpi_time");
	e->io_share = num_or_nan(ms, "posix_io_time");
	e->cpi = num_or_nan(ms, "cpi");
	e->threads = num_or_nan(ms, "avg_threads");
	copy(e->exe, sizeof(e->exe), ju_str(app, LWM2_KEY_EXE));
	copy(e->build_id, sizeof(e->build_id), ju_str(app, LWM2_KEY_BUILD_ID));
	copy(e->user, sizeof(e->user), ju_str(job, LWM2_KEY_USER));
	return 0;
}

bool lwm2_hist_comparable(const struct lwm2_hist_entry *cur, const struct lwm2_hist_entry *h)
{
	double a = cur->ranks, b = h->ranks;

	if (strcmp(cur->exe, h->exe) != 0 || !a || !b)
		return false;
	return (a > b ? a / b : b / a) <= LWM2_HIST_RANK_FACTOR + 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double lwm2_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fmt_num(char *buf, size_t len, double v)
{
	double a = fabs(v);

	snprintf(buf, len, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v);
}

static void short_build(char *out, size_t len, const char *b)
{
	snprintf(out, len, "%.12s", b && *b ? b : "unknown");
}

static void finding_text(const struct lwm2_hist_entry *cur, const struct lwm2_hist_result *res,
                         struct lwm2_hist_finding *f)
{
	enum lwm2_hist_metric m = f->rule->metric;
	char v[32], lo[32], hi[32], md[32], b1[16], b2[16], ranks[48];
	int pct = (int)lround(fabs(f->change_rel) * 100);

	fmt_num(v, sizeof(v), f->value);
	fmt_num(lo, sizeof(lo), f->lo);
	fmt_num(hi, sizeof(hi), f->hi);
	fmt_num(md, sizeof(md), f->median);
	if (res->rank_lo == res->rank_hi)
		snprintf(ranks, sizeof(ranks), "%u", res->rank_lo);
	else
		snprintf(ranks, sizeof(ranks), "%u-%u", res->rank_lo, res->rank_hi);
	if (m == LWM2_HM_DURATION && res->prev_build[0] && cur->build_id[0] &&
	    strcmp(res->prev_build, cur->build_id) != 0) {
		short_build(b1, sizeof(b1), cur->build_id);
		short_build(b2, sizeof(b2), res->prev_build);
		snprintf(f->text, sizeof(f->text),
		         "This build (%s) is %d %% slower than the previous build (%s): run time "
		         "%s s; the last %zu runs of %s at %s ranks had %s-%s s (median %s s).",
		         b1, pct, b2, v, res->compared, cur->exe, ranks, lo, hi, md);
		return;
	}
	if (m == LWM2_HM_DURATION || m == LWM2_HM_CPI || m == LWM2_HM_THREADS)
		snprintf(f->text, sizeof(f->text),
		         "%s %s%s is %d %% %s than in the last %zu runs of %s at %s ranks: %s-%s%s "
		         "(median %s%s).",
		         hm_names[m], v, hm_units[m], pct,
		         f->rule->direction > 0 ? "higher" : "lower", res->compared, cur->exe,
		         ranks, lo, hi, hm_units[m], md, hm_units[m]);
	else
		snprintf(
		    f->text, sizeof(f->text),
		    "%s %s %%: the last %zu runs of %s at %s ranks had %s-%s %% (median %s %%).",
		    hm_names[m], v, res->compared, cur->exe, ranks, lo, hi, md);
}

void lwm2_history_judge(const struct lwm2_hist_entry *cur, const struct lwm2_hist_entry *hist,
                        size_t n, struct lwm2_hist_result *res)
{
	const struct lwm2_hist_entry *sel[LWM2_HIST_LAST];
	double v[LWM2_HIST_LAST], dev[LWM2_HIST_LAST];
	size_t k = 0;

	memset(res, 0, sizeof(*res));
	/* Newest first, back to LWM2_HIST_LAST comparable runs. */
	for (size_t i = n; i-- > 0 && k < LWM2_HIST_LAST;) {
		const struct lwm2_hist_entry *h = &hist[i];

		if (h->job_id == cur->job_id || strcmp(h->exe, cur->exe) != 0)
			continue;
		if (cur->end && h->end > cur->end)
			continue;
		res->same_app++;
		if (!lwm2_hist_comparable(cur, h))
			continue;
		if (!k)
			copy(res->prev_build, sizeof(res->prev_build), h->build_id);
		if (!k || h->ranks < res->rank_lo)
			res->rank_lo = h->ranks;
		if (h->ranks > res->rank_hi)
			res->rank_hi = h->ranks;
		sel[k++] = h;
	}
	res->compared = k;
	for (size_t r = 0; r < lwm2_nhistory_rules && res->nfind < 8; r++) {
		const struct lwm2_history_rule *rule = &lwm2_history_rules[r];
		double x = metric_of(cur, rule->metric), med, mad, scale, d, lo = INFINITY,
		       hi = -INFINITY;
		size_t m = 0;

		if (!isfinite(x))
			continue;
		for (size_t i = 0; i < k; i++) {
			double y = metric_of(sel[i], rule->metric);
			if (!isfinite(y))
				continue;
			v[m++] = y;
			lo = y < lo ? y : lo;
			hi = y > hi ? y : hi;
		}
		if (m < LWM2_HIST_MIN_RUNS)
			continue;
		med = lwm2_median(v, m);
		for (size_t i = 0; i < m; i++)
			dev[i] = fabs(v[i] - med);
		mad = lwm2_median(dev, m);
		scale = 1.4826 * mad;
		if (scale < 0.02 * fabs(med))
			scale = 0.02 * fabs(med);
		if (scale < rule->scale_floor)
			scale = rule->scale_floor;
		d = rule->direction * (x - med);
		if (d < rule->min_abs || d < rule->min_z * scale)
			continue;
		if (rule->min_rel > 0 && (med <= 0 || d < rule->min_rel * med))
			continue;
		{
			struct lwm2_hist_finding *f = &res->find[res->nfind++];
			f->rule = rule;
			f->value = x;
			f->median = med;
			f->lo = lo;
			f->hi = hi;
			f->change_rel = med != 0 ? (x - med) / fabs(med) : 0;
			finding_text(cur, res, f);
		}
	}
}

json_object *lwm2_hist_result_json(const struct lwm2_hist_entry *cur,
                                   const struct lwm2_hist_result *res)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();

	ju_add(o, LWM2_KEY_APP, json_object_new_string(cur->exe));
	if (cur->build_id[0])
		ju_add(o, LWM2_KEY_BUILD_ID, json_object_new_string(cur->build_id));
	ju_add(o, LWM2_KEY_RANKS, ju_u64(cur->ranks));
	ju_add(o, LWM2_KEY_EARLIER_RUNS, ju_u64(res->same_app));
	ju_add(o, LWM2_KEY_COMPARED, ju_u64(res->compared));
	ju_add(o, LWM2_KEY_MIN_RUNS, ju_u64(LWM2_HIST_MIN_RUNS));
	if (res->compared) {
		json_object *r = json_object_new_array_ext(2);
		json_object_array_add(r, ju_u64(res->rank_lo));
		json_object_array_add(r, ju_u64(res->rank_hi));
		ju_add(o, LWM2_KEY_COMPARED_RANKS, r);
	}
	if (res->prev_build[0])
		ju_add(o, LWM2_KEY_PREVIOUS_BUILD, json_object_new_string(res->prev_build));
	for (size_t i = 0; i < res->nfind; i++) {
		const struct lwm2_hist_finding *f = &res->find[i];
		json_object *e = json_object_new_object();
		ju_add(e, LWM2_KEY_RULE, json_object_new_string(f->rule->id));
		ju_add(e, LWM2_KEY_TEXT, json_object_new_string(f->text));
		ju_add(e, LWM2_KEY_VALUE, ju_double(f->value));
		ju_add(e, LWM2_KEY_MEDIAN, ju_double(f->median));
		ju_add(e, LWM2_KEY_LOW, ju_double(f->lo));
		ju_add(e, LWM2_KEY_HIGH, ju_double(f->hi));
		json_object_array_add(a, e);
	}
	ju_add(o, LWM2_KEY_FINDINGS, a);
	return o;
}

/* ---- the index ---- */

#define IDX_MAGIC   "LWM2HIDX"
#define IDX_VERSION 1

struct idx_header {
	char magic[8];
	uint32_t version;
	uint32_t entry_size;
};

/* At an offset: the index is appended to where its header says it ends. */
static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Keep the newest LWM2_HIST_INDEX_KEEP entries: a new file renamed over
 * the old one, so a crash leaves one or the other. */
static int index_cut(int dfd, const char *name, int fd, size_t nent)
{
	size_t keep = LWM2_HIST_INDEX_KEEP, sz = keep * sizeof(struct lwm2_hist_entry);
	struct idx_header h = {IDX_MAGIC, IDX_VERSION, sizeof(struct lwm2_hist_entry)};
	char tmp[96];
	void *buf = malloc(sz);
	struct iovec iov[2] = {{&h, sizeof(h)}, {buf, sz}};
	int rc = -1;

	if (!buf)
		return -1;
	if (pread(fd, buf, sz,
	          (off_t)(sizeof(h) + (nent - keep) * sizeof(struct lwm2_hist_entry))) !=
	    (ssize_t)sz)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	rc = lwm2_atomic_write_at(dfd, name, tmp, iov, 2, 0600, NULL, 0);
out:
	free(buf);
	return rc;
}

int lwm2_history_update(const char *state_dir, json_object *digest, char *err, size_t errlen)
{
	struct lwm2_hist_entry cur, *tail = NULL;
	struct lwm2_hist_result res;
	struct idx_header h;
	struct stat st;
	char dir[4096], name[64];
	size_t nent = 0, ntail = 0;
	bool present = false;
	int dfd = -1, fd = -1, rc = -1;

	if (!digest || lwm2_hist_from_digest(digest, &cur) != 0)
		return 0; /* no application named: nothing to compare */
	if (!state_dir || !*state_dir)
		return lwm2_errprintf(0, err, errlen, "no StateDir");
	snprintf(dir, sizeof(dir), "%s/history", state_dir);
	/* StateDir itself is made by whichever part of the worker writes
	 * first: the queue, or this index when a job is judged before any
	 * was queued. */
	if ((mkdir(state_dir, 0700) < 0 && errno != EEXIST) ||
	    (mkdir(dir, 0700) < 0 && errno != EEXIST))
		return lwm2_errprintf(0, err, errlen, "couldn't create %s: %s", dir,
		                      strerror(errno));
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return lwm2_errprintf(0, err, errlen, "couldn't open %s: %s", dir, strerror(errno));
	snprintf(name, sizeof(name), "%016llx.hist", (unsigned long long)lwm2_strhash(cur.exe));
	fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) < 0) {
		lwm2_errprintf(0, err, errlen, "couldn't open %s/%s: %s", dir, name,
		               strerror(errno));
		goto out;
	}
	if (st.st_size >= (off_t)sizeof(h)) {
		char why[160];
		bool ours = pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		            !memcmp(h.magic, IDX_MAGIC, 8);

		/* A newer lwm2's index (a site that went back a version) is
		 * that lwm2's history: left as it is, not read, not wiped.
		 * Each older version, once there is one, is converted here. */
		if (ours && h.version > IDX_VERSION) {
			lwm2_version_check("history index", h.version, 1, IDX_VERSION, why,
			                   sizeof(why));
			lwm2_errprintf(0, err, errlen, "%s/%s: %s", dir, name, why);
			goto out;
		}
		if (!ours || h.version < 1 || h.entry_size != sizeof(struct lwm2_hist_entry)) {
			/* Garbage: start the application's history anew
			 * rather than read it wrongly. */
			if (ftruncate(fd, 0) < 0) {
				lwm2_errprintf(0, err, errlen, "couldn't reset %s/%s: %s", dir,
				               name, strerror(errno));
				goto out;
			}
			st.st_size = 0;
		} else {
			nent = ((size_t)st.st_size - sizeof(h)) / sizeof(struct lwm2_hist_entry);
		}
	}
	if (st.st_size < (off_t)sizeof(h)) {
		memcpy(h.magic, IDX_MAGIC, 8);
		h.version = IDX_VERSION;
		h.entry_size = sizeof(struct lwm2_hist_entry);
		if (pwrite_all(fd, &h, sizeof(h), 0) < 0) {
			lwm2_errprintf(0, err, errlen, "couldn't write %s/%s: %s", dir, name,
			               strerror(errno));
			goto out;
		}
	}
	ntail = nent < LWM2_HIST_INDEX_TAIL ? nent : LWM2_HIST_INDEX_TAIL;
	if (ntail) {
		size_t sz = ntail * sizeof(*tail);
		if (!(tail = malloc(sz))) {
			lwm2_errprintf(0, err, errlen, "out of memory");
			goto out;
		}
		if (pread(fd, tail, sz, (off_t)(sizeof(h) + (nent - ntail) * sizeof(*tail))) !=
		    (ssize_t)sz) {
			lwm2_errprintf(0, err, errlen, "couldn't read %s/%s", dir, name);
			goto out;
		}
		for (size_t i = 0; i < ntail; i++) {
			tail[i].exe[sizeof(tail[i].exe) - 1] = '\0';
			tail[i].build_id[sizeof(tail[i].build_id) - 1] = '\0';
			tail[i].user[sizeof(tail[i].user) - 1] = '\0';
			present |= tail[i].job_id == cur.job_id && tail[i].end == cur.end &&
			           !strcmp(tail[i].exe, cur.exe);
		}
	}
	lwm2_history_judge(&cur, tail, ntail, &res);
	json_object_object_add(digest, LWM2_KEY_HISTORY, lwm2_hist_result_json(&cur, &res));
	rc = 0;
	if (present)
		goto out;
	/* Appended at the end the header says: a torn earlier append is
	 * overwritten, not followed. */
	if (pwrite_all(fd, &cur, sizeof(cur), (off_t)(sizeof(h) + nent * sizeof(cur))) < 0) {
		rc = lwm2_errprintf(0, err, errlen, "couldn't append to %s/%s: %s", dir, name,
		                    strerror(errno));
		goto out;
	}
	nent++;
	if (nent >= LWM2_HIST_INDEX_MAX && index_cut(dfd, name, fd, nent) < 0)
		rc = lwm2_errprintf(0, err, errlen, "couldn't cut %s/%s: %s", dir, name,
		                    strerror(errno));
out:
	free(tail);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/* ---- text ---- */

static void wrap(FILE *out, const char *text, int indent)
{
	int col = indent;

	while (*text) {
		size_t w = strcspn(text, " ");
		if (col > indent && col + 1 + (int)w > 79) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fwrite(text, 1, w, out);
		col += (int)w;
		text += w;
		while (*text == ' ')
			text++;
	}
}

void lwm2_app_render(json_object *d, FILE *out)
{
	json_object *app = ju_get(d, LWM2_KEY_APPLICATION, json_type_object), *others;
	const char *s;
	double cpu;

	if (!app || !(s = ju_str(app, LWM2_KEY_EXE)))
		return;
	fprintf(out, "Application %s", s);
	if ((s = ju_str(app, LWM2_KEY_BUILD_ID)))
		fprintf(out, " (build %.12s%s)", s,
		        ju_get(app, LWM2_KEY_SEVERAL_BUILDS, json_type_boolean) ? ", and others"
		                                                                : "");
	fprintf(out, ", %" PRId64 " ranks on %" PRId64 " nodes", ju_int_or(app, LWM2_KEY_RANKS, 0),
	        ju_int_or(app, LWM2_KEY_NODES, 0));
	if (ju_num(app, LWM2_KEY_CPU_S, &cpu))
		fprintf(out, ", %.2f core-h", cpu / 3600.0);
	fputc('\n', out);
	if ((s = ju_str(app, LWM2_KEY_RUNTIME_LIBS)))
		fprintf(out, "  runtimes %s\n", s);
	if ((s = ju_str(app, LWM2_KEY_MPI_LIBRARY)))
		fprintf(out, "  MPI %s\n", s);
	if (ju_get(app, LWM2_KEY_CUDA_RUNTIME, json_type_int)) {
		int64_t v = ju_int_or(app, LWM2_KEY_CUDA_RUNTIME, 0);
		fprintf(out, "  CUDA runtime %" PRId64 ".%" PRId64 "\n", v / 1000, (v % 1000) / 10);
	}
	others = ju_get(app, LWM2_KEY_OTHERS, json_type_array);
	if (others && json_object_array_length(others)) {
		fputs("  also", out);
		for (size_t i = 0; i < json_object_array_length(others); i++) {
			json_object *x = json_object_array_get_idx(others, i);
			fprintf(out, "%s %s (%" PRId64 ")", i ? "," : "",
			        ju_str(x, LWM2_KEY_EXE) ?: "?",
			        ju_int_or(x, LWM2_KEY_PROCESSES, 0));
		}
		if (ju_int_or(app, LWM2_KEY_OTHERS_OMITTED, 0))
			fprintf(out, " and %" PRId64 " more",
			        ju_int_or(app, LWM2_KEY_OTHERS_OMITTED, 0));
		fputc('\n', out);
	}
}

void lwm2_history_render(json_object *d, FILE *out)
{
	json_object *h = ju_get(d, LWM2_KEY_HISTORY, json_type_object), *f;
	int64_t compared, need;
	const char *app;

	if (!h || !(app = ju_str(h, LWM2_KEY_APP)))
		return;
	compared = ju_int_or(h, LWM2_KEY_COMPARED, 0);
	need = ju_int_or(h, LWM2_KEY_MIN_RUNS, LWM2_HIST_MIN_RUNS);
	f = ju_get(h, LWM2_KEY_FINDINGS, json_type_array);
	if (f && json_object_array_length(f)) {
		fputs("History\n", out);
		for (size_t i = 0; i < json_object_array_length(f); i++) {
			json_object *e = json_object_array_get_idx(f, i);
			const char *id = ju_str(e, LWM2_KEY_RULE);
			fputs("  * ", out);
			wrap(out, ju_str(e, LWM2_KEY_TEXT) ?: "", 4);
			fprintf(out, " [%s]\n    ", id ? id : "?");
			for (size_t r = 0; id && r < lwm2_nhistory_rules; r++)
				if (!strcmp(lwm2_history_rules[r].id, id))
					wrap(out, lwm2_history_rules[r].meaning, 4);
			fputs("\n    Next: lwm2 diff JOB --history; lwm2 history --app ", out);
			fprintf(out, "%s\n", app);
		}
	} else if (compared >= need) {
		fprintf(out,
		        "History: no metric outside the last %" PRId64 " runs of %s at comparable "
		        "rank counts.\n",
		        compared, app);
	} else {
		fprintf(out,
		        "History: %" PRId64 " earlier comparable runs of %s at %" PRId64
		        " ranks (%" PRId64 " earlier runs in all); %" PRId64
		        " are needed to judge.\n",
		        compared, app, ju_int_or(h, LWM2_KEY_RANKS, 0),
		        ju_int_or(h, LWM2_KEY_EARLIER_RUNS, 0), need);
	}
}
