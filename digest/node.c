/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Node records: the merge of one node's rank records for one step.
 *
 * Per process the node record keeps every counter (one array in the order
 * of "counters", so a reader built with a different counter list can map
 * them by name) and what the metrics need besides; per node the totals and
 * one slice series, put on one slice length: a process whose series was
 * coarsened has a longer slice, and every shorter slice of another process
 * lies inside exactly one longer slice because slices are aligned to
 * multiples of their length on the system clock.
 */
#include "digest_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Node series never get more slots than this; a wider span (clock jumps,
 * a hostile record) is coarsened further instead of allocated. */
#define NODE_MAX_SLOTS 4096u

static void logf_(lwm2_log_fn log, void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void logf_(lwm2_log_fn log, void *arg, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log(arg, msg);
}

static const char *basename_(const char *p)
{
	const char *s = strrchr(p, '/');

	return s && s[1] ? s + 1 : p;
}

static json_object *proc_json(const struct lwm2_rank_record *r)
{
	json_object *p = json_object_new_object(), *a, *reasons = NULL;

	ju_add(p, "rank", json_object_new_int(r->mpi_rank));
	ju_add(p, "task", json_object_new_int(r->task_id));
	ju_add(p, "pid", json_object_new_int(r->pid));
	ju_add(p, "ppid", json_object_new_int(r->ppid));
	ju_add(p, "flags", json_object_new_int64(r->flags));
	ju_add(p, "exe", json_object_new_string(basename_(r->executable)));
	ju_add(p, "start_ns", json_object_new_int64(r->start_ns));
	ju_add(p, "end_ns", json_object_new_int64(r->end_ns));
	ju_add(p, "exit", json_object_new_int(r->exit_status));
	ju_add(p, "signal", json_object_new_int(r->term_signal));
	ju_add(p, "threads_total", json_object_new_int64(r->threads_total));
	ju_add(p, "threads_max", json_object_new_int64(r->threads_max));
	ju_add(p, "period_us", json_object_new_int64(r->sample_period_us));
	a = json_object_new_array_ext(LWM2_NEARMARKS);
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		json_object_array_add(a, ju_u64(r->samples[e]));
	ju_add(p, "samples", a);
	ju_add(p, "missing", json_object_new_int64(r->missing));
	for (int g = 0; g < LWM2_NGROUPS; g++) {
		if (!(r->missing & (1u << g)))
			continue;
		if (!reasons)
			reasons = json_object_new_object();
		ju_add(reasons, lwm2_group_names[g], json_object_new_string(r->missing_reason[g]));
	}
	if (reasons)
		ju_add(p, "reasons", reasons);
	ju_add(p, "utime_us", ju_u64(r->utime_us));
	ju_add(p, "stime_us", ju_u64(r->stime_us));
	ju_add(p, "maxrss_kb", ju_u64(r->maxrss_kb));
	a = json_object_new_array_ext(LWM2_NCOUNTERS);
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		json_object_array_add(a, ju_u64(r->counters[c]));
	ju_add(p, "c", a);
	return p;
}

static json_object *counter_names(void)
{
	json_object *a = json_object_new_array_ext(LWM2_NCOUNTERS);

	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		json_object_array_add(a, json_object_new_string(lwm2_counter_names[c]));
	return a;
}

/* Whether a record's series fits the clock range the merge accepts. */
static bool series_sane(const struct lwm2_rank_record *r)
{
	if (!r->nslices || !r->slice_length_s)
		return false;
	/* 2^40 s is far beyond any real clock; this bounds the arithmetic. */
	return r->first_slice < (1ull << 40) / r->slice_length_s &&
	       r->first_slice + r->nslices <= (1ull << 40) / r->slice_length_s;
}

/*
 * The node series: the longest slice length of any process (grown further
 * if the span would need more than NODE_MAX_SLOTS), each process slice added
 * to the node slice its start falls in.
 */
static json_object *node_series(struct lwm2_rank_record *const *recs, const bool *use, size_t n,
                                bool *approx)
{
	uint64_t L = 0, lo = UINT64_MAX, hi = 0, first, nslots;
	uint64_t *grid;
	json_object *s, *cols;

	for (size_t i = 0; i < n; i++) {
		const struct lwm2_rank_record *r = recs[i];
		if (!use[i] || !series_sane(r))
			continue;
		if (r->slice_length_s > L)
			L = r->slice_length_s;
		if (r->first_slice * r->slice_length_s < lo)
			lo = r->first_slice * r->slice_length_s;
		if ((r->first_slice + r->nslices) * r->slice_length_s > hi)
			hi = (r->first_slice + r->nslices) * r->slice_length_s;
	}
	if (!L)
		return NULL;
	while ((hi + L - 1) / L - lo / L > NODE_MAX_SLOTS) {
		L *= 2;
		*approx = true;
	}
	first = lo / L;
	nslots = (hi + L - 1) / L - first;
	grid = calloc(nslots * LWM2_NCOUNTERS, sizeof(*grid));
	if (!grid)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct lwm2_rank_record *r = recs[i];
		const struct lwm2_slice *sl = lwm2_record_slices(r);
		if (!use[i] || !series_sane(r))
			continue;
		if (L % r->slice_length_s)
			*approx = true; /* lengths of different bases: slices straddle */
		for (uint32_t k = 0; k < r->nslices; k++) {
			uint64_t slot = (r->first_slice + k) * r->slice_length_s / L - first;
			uint64_t *row = grid + slot * LWM2_NCOUNTERS;
			for (int c = 0; c < LWM2_NCOUNTERS; c++)
				row[c] += sl[k].counters[c];
		}
	}
	s = json_object_new_object();
	ju_add(s, "first_slice", ju_u64(first));
	ju_add(s, "slice_length_s", ju_u64(L));
	ju_add(s, "n", ju_u64(nslots));
	cols = json_object_new_object();
	/* Only the counters that moved: most jobs touch a few of them. */
	for (int c = 0; c < LWM2_NCOUNTERS; c++) {
		json_object *col;
		bool any = false;
		for (uint64_t k = 0; k < nslots && !any; k++)
			any = grid[k * LWM2_NCOUNTERS + c] != 0;
		if (!any)
			continue;
		col = json_object_new_array_ext((int)nslots);
		for (uint64_t k = 0; k < nslots; k++)
			json_object_array_add(col, ju_u64(grid[k * LWM2_NCOUNTERS + c]));
		ju_add(cols, lwm2_counter_names[c], col);
	}
	ju_add(s, "c", cols);
	free(grid);
	return s;
}

static bool belongs(const struct lwm2_node_ident *id, const struct lwm2_rank_record *r,
                    const char *file, lwm2_log_fn log, void *arg)
{
	if (!id || !id->job_id)
		return true;
	if (r->job_id != id->job_id || r->step_id != id->step_id) {
		logf_(log, arg,
		      "lwm2: merge: couldn't use %s: it belongs to job %llu step %u, not job %llu "
		      "step %u",
		      file, (unsigned long long)r->job_id, r->step_id,
		      (unsigned long long)id->job_id, id->step_id);
		return false;
	}
	return true;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

/* Tasks of the step seen on this node: forked children and exec'd images
 * share their task's id, so they must not make up for a missing task. */
static uint64_t distinct_tasks(struct lwm2_rank_record *const *recs, const bool *use, size_t n)
{
	int32_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	size_t k = 0;
	uint64_t d = 0;

	if (!ids)
		return UINT64_MAX; /* unknown: do not claim tasks are missing */
	for (size_t i = 0; i < n; i++)
		if (use[i] && recs[i]->task_id >= 0)
			ids[k++] = recs[i]->task_id;
	if (k)
		qsort(ids, k, sizeof(*ids), cmp_i32);
	for (size_t i = 0; i < k; i++)
		d += i == 0 || ids[i] != ids[i - 1];
	free(ids);
	return d;
}

json_object *lwm2_node_merge_records(const struct lwm2_node_ident *id,
                                     struct lwm2_rank_record *const *recs, const char *const *files,
                                     size_t n, lwm2_log_fn log, void *log_arg)
{
	json_object *node, *procs, *incomplete, *totals, *tc, *ts, *missing, *flags, *series;
	uint64_t tot[LWM2_NCOUNTERS] = {0}, samples[LWM2_NEARMARKS] = {0};
	uint64_t nproc = 0, nmpi = 0, nimages = 0;
	uint32_t fl_any = 0;
	bool approx = false, *use;
	const char *reason[LWM2_NGROUPS] = {0};

	use = calloc(n ? n : 1, sizeof(*use));
	node = json_object_new_object();
	if (!use || !node) {
		free(use);
		json_object_put(node);
		errno = ENOMEM;
		return NULL;
	}
	ju_add(node, "lwm2_node_version", json_object_new_int(LWM2_NODE_VERSION));
	ju_add(node, "cluster", json_object_new_string(id && id->cluster ? id->cluster : ""));
	ju_add(node, "job_id", ju_u64(id ? id->job_id : 0));
	ju_add(node, "step_id", ju_u64(id ? id->step_id : 0));
	ju_add(node, "node", json_object_new_string(id && id->node ? id->node : ""));
	ju_add(node, "expected_tasks", ju_u64(id ? id->expected_tasks : 0));
	ju_add(node, "counters", counter_names());
	procs = json_object_new_array_ext((int)(n ? n : 1));
	incomplete = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		const struct lwm2_rank_record *r = recs[i];
		if (!r || !belongs(id, r, files ? files[i] : "a record", log, log_arg))
			continue;
		use[i] = true;
		json_object_array_add(procs, proc_json(r));
		nimages++;
		/* An image replaced by exec continues as the next record of the
		 * same process: count the process once. */
		if (!(r->flags & LWM2_F_EXEC)) {
			nproc++;
			if (r->flags & LWM2_F_MPI)
				nmpi++;
		}
		if (r->flags & LWM2_F_INCOMPLETE)
			json_object_array_add(incomplete, json_object_new_int(r->pid));
		fl_any |= r->flags;
		for (int c = 0; c < LWM2_NCOUNTERS; c++)
			tot[c] += r->counters[c];
		for (int e = 0; e < LWM2_NEARMARKS; e++)
			samples[e] += r->samples[e];
		for (int g = 0; g < LWM2_NGROUPS; g++)
			if ((r->missing & (1u << g)) && !reason[g])
				reason[g] = r->missing_reason[g];
	}
	ju_add(node, "procs", procs);
	ju_add(node, "incomplete", incomplete);

	totals = json_object_new_object();
	ju_add(totals, "processes", ju_u64(nproc));
	ju_add(totals, "mpi_processes", ju_u64(nmpi));
	ju_add(totals, "images", ju_u64(nimages));
	tc = json_object_new_array_ext(LWM2_NCOUNTERS);
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		json_object_array_add(tc, ju_u64(tot[c]));
	ju_add(totals, "c", tc);
	ts = json_object_new_array_ext(LWM2_NEARMARKS);
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		json_object_array_add(ts, ju_u64(samples[e]));
	ju_add(totals, "samples", ts);
	ju_add(node, "totals", totals);

	missing = json_object_new_object();
	for (int g = 0; g < LWM2_NGROUPS; g++)
		if (reason[g])
			ju_add(missing, lwm2_group_names[g],
			       json_object_new_string(*reason[g] ? reason[g] : "not measured"));
	ju_add(node, "missing", missing);

	series = node_series(recs, use, n, &approx);
	flags = json_object_new_array();
	if (json_object_array_length(incomplete))
		json_object_array_add(flags, json_object_new_string("incomplete"));
	if (fl_any & LWM2_F_PARTIAL)
		json_object_array_add(flags, json_object_new_string("partial"));
	if (fl_any & LWM2_F_COARSENED)
		json_object_array_add(flags, json_object_new_string("coarsened"));
	if (approx)
		json_object_array_add(flags, json_object_new_string("series_approximate"));
	if (id && id->expected_tasks && distinct_tasks(recs, use, n) < id->expected_tasks)
		json_object_array_add(flags, json_object_new_string("missing_tasks"));
	ju_add(node, "flags", flags);
	if (series)
		ju_add(node, "series", series);
	free(use);
	return node;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_record_name(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && name[0] != '.' && strcmp(name + n - 5, ".lwm2") == 0;
}

json_object *lwm2_node_merge(int dirfd, const struct lwm2_node_ident *id, lwm2_log_fn log,
                             void *log_arg)
{
	struct lwm2_rank_record **recs = NULL;
	char **names = NULL;
	size_t n = 0, cap = 0, kept = 0, skipped = 0;
	json_object *node = NULL;
	struct dirent *de;
	DIR *d;
	int fd, saved = 0;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		saved = errno;
		close(fd);
		errno = saved;
		return NULL;
	}
	while ((errno = 0, de = readdir(d))) {
		if (!is_record_name(de->d_name))
			continue;
		/* The directory is the user's: a flood of files must not make
		 * slurmstepd read forever. */
		if (n == LWM2_NODE_MAX_RECORDS) {
			logf_(log, log_arg,
			      "lwm2: merge: couldn't read every record: more than %u in the "
			      "directory, the rest skipped",
			      LWM2_NODE_MAX_RECORDS);
			skipped++;
			break;
		}
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			char **nn = realloc(names, nc * sizeof(*nn));
			if (!nn) {
				saved = ENOMEM;
				goto out;
			}
			names = nn;
			cap = nc;
		}
		if (!(names[n] = strdup(de->d_name))) {
			saved = ENOMEM;
			goto out;
		}
		n++;
	}
	if (errno) {
		saved = errno;
		goto out;
	}
	/* Sorted, so the same directory always gives the same record. */
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	recs = calloc(n ? n : 1, sizeof(*recs));
	if (!recs) {
		saved = ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char err[256];
		struct lwm2_rank_record *r;
		if (lwm2_record_read_file(dirfd, names[i], &r, err, sizeof(err)) != 0) {
			logf_(log, log_arg, "lwm2: merge: couldn't read %s: %s", names[i], err);
			skipped++;
			free(names[i]);
			names[i] = NULL;
			continue;
		}
		if (kept != i) {
			names[kept] = names[i];
			names[i] = NULL;
		}
		recs[kept++] = r;
	}
	node = lwm2_node_merge_records(id, recs, (const char *const *)names, kept, log, log_arg);
	if (!node) {
		saved = errno;
		goto out;
	}
	ju_add(node, "skipped", ju_u64(skipped));
	if (skipped) {
		json_object *fl = ju_get(node, "flags", json_type_array);
		json_object_array_add(fl, json_object_new_string("skipped_records"));
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	for (size_t i = 0; i < kept; i++)
		free(recs[i]);
	free(recs);
	closedir(d);
	if (!node)
		errno = saved ? saved : EIO;
	return node;
}

/* Map of the node record's counter order onto this build's. */
int lwm2_counter_map(json_object *node, int map[], size_t maxn, size_t *n)
{
	json_object *names = ju_get(node, "counters", json_type_array);
	size_t len;

	if (!names)
		return -1;
	len = json_object_array_length(names);
	if (len > maxn)
		return -1;
	for (size_t i = 0; i < len; i++) {
		json_object *s = json_object_array_get_idx(names, i);
		map[i] = -1;
		if (!json_object_is_type(s, json_type_string))
			return -1;
		/* Same build, same order: one comparison per name. */
		if (i < LWM2_NCOUNTERS &&
		    strcmp(json_object_get_string(s), lwm2_counter_names[i]) == 0) {
			map[i] = (int)i;
			continue;
		}
		for (int c = 0; c < LWM2_NCOUNTERS; c++)
			if (strcmp(json_object_get_string(s), lwm2_counter_names[c]) == 0)
				map[i] = c;
	}
	*n = len;
	return 0;
}

int lwm2_proc_from_json(json_object *p, const int *map, size_t nmap, struct lwm2_proc_values *pv)
{
	json_object *c = ju_get(p, "c", json_type_array), *s, *reasons;
	int64_t start, end, v;

	memset(pv, 0, sizeof(*pv));
	if (!c || json_object_array_length(c) != nmap)
		return -1;
	for (size_t i = 0; i < nmap; i++) {
		json_object *x = json_object_array_get_idx(c, i);
		if (!json_object_is_type(x, json_type_int))
			return -1;
		if (map[i] >= 0 && (v = json_object_get_int64(x)) > 0)
			pv->counters[map[i]] = (uint64_t)v;
	}
	if (!ju_int(p, "start_ns", &start) || !ju_int(p, "end_ns", &end))
		return -1;
	/* In unsigned arithmetic: two crafted times apart by more than
	 * INT64_MAX would overflow a signed difference. */
	pv->wall_ns = end > start ? (uint64_t)end - (uint64_t)start : 0;
	if ((s = ju_get(p, "samples", json_type_array)))
		for (size_t i = 0; i < json_object_array_length(s); i++)
			if ((v = json_object_get_int64(json_object_array_get_idx(s, i))) > 0)
				pv->samples_total += (uint64_t)v;
	v = ju_int_or(p, "period_us", 0);
	pv->sample_period_us = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
	v = ju_int_or(p, "threads_total", 0);
	pv->threads_total = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
	pv->missing = (uint32_t)ju_int_or(p, "missing", 0) & ((1u << LWM2_NGROUPS) - 1);
	pv->flags = (uint32_t)ju_int_or(p, "flags", 0);
	reasons = ju_get(p, "reasons", json_type_object);
	for (int g = 0; g < LWM2_NGROUPS; g++)
		pv->missing_reason[g] = reasons ? ju_str(reasons, lwm2_group_names[g]) : NULL;
	return 0;
}
