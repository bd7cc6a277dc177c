/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The step's summary of short processes (layout in lwm2_record.h).
 *
 * Why: a batch script starts thousands of commands that live a few
 * milliseconds.  A record file each would fill the node's tmpfs with one
 * file per process and make step end read them all; what the digest needs
 * of them is how many ran, of which executable, their CPU time, I/O and
 * how they ended.  So an image that ends short adds itself to one table per
 * step directory, of a fixed size, with atomic adds into the slot of its
 * executable, and its slices' counters into the summary's slices of the
 * same times (the node series, hence the job's space-time grid and the
 * export, keep when its I/O happened): open, fstat, mmap and close, about
 * the cost of writing a record file of its own, and nothing more on the
 * node however many commands the step runs.  A process whose slices find
 * no room (a step longer than the table) writes its own record instead.
 *
 * Everything here is signal-safe (raw system calls, atomics, no malloc):
 * the end of a process killed by SIGTERM comes here from the handler.
 */
#include "core_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void add64(uint64_t *p, uint64_t v)
{
	if (v)
		__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static void max64(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > cur &&
	       !__atomic_compare_exchange_n(p, &cur, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static void min_i64(int64_t *p, int64_t v)
{
	int64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while ((cur == 0 || v < cur) &&
	       !__atomic_compare_exchange_n(p, &cur, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static void max_i64(int64_t *p, int64_t v)
{
	int64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > cur &&
	       !__atomic_compare_exchange_n(p, &cur, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* The summary file, opened for reading and writing; -1 on failure. */
static int open_summary(void)
{
	struct stat st;
	int dfd, fd;

	/* By its path, else (inside a container) through the step's
	 * descriptor. */
	if (lwm2_p.have_dir)
		return lwm2_stepdir_open(LWM2_SUMMARY_FILE,
		                         O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	/* The default directory lives in a shared /tmp: it must be ours. */
	syscall(SYS_mkdirat, AT_FDCWD, lwm2_p.dir, 0700);
	dfd = (int)syscall(SYS_openat, AT_FDCWD, lwm2_p.dir,
	                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	if (fstat(dfd, &st) != 0 || st.st_uid != getuid() || (st.st_mode & 077)) {
		syscall(SYS_close, dfd);
		return -1;
	}
	fd = (int)syscall(SYS_openat, dfd, LWM2_SUMMARY_FILE,
	                  O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	syscall(SYS_close, dfd);
	return fd;
}

static struct lwm2_summary_header *map_summary(void)
{
	const size_t size = LWM2_SUMMARY_SIZE;
	struct stat st;
	void *m;
	int fd = open_summary();

	if (fd < 0)
		return NULL;
	/* Blocks are allocated before any store: a store into a hole of a
	 * full file system would raise SIGBUS in the application.  A size
	 * other than none or this build's is a summary of another build's
	 * counters (a node upgraded while the step runs, lwm2_record.h): not
	 * grown nor shared, the process keeps a record of its own. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_size != 0 && (size_t)st.st_size != size) ||
	    (((size_t)st.st_size < size || (size_t)st.st_blocks * 512 < size) &&
	     syscall(SYS_fallocate, fd, 0, (off_t)0, (off_t)size) != 0)) {
		lwm2_debug("lwm2: summary: couldn't use %s/%s", lwm2_p.dir, LWM2_SUMMARY_FILE);
		syscall(SYS_close, fd);
		return NULL;
	}
	m = lwm2_raw_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	syscall(SYS_close, fd);
	return m == MAP_FAILED ? NULL : m;
}

/*
 * The value at p, read by an atomic add of 0: a write access, so the first
 * touch of a page of the mapping maps it writable at once.  A plain load
 * first maps it read-only and the store after it faults again: two page
 * faults instead of one, each some microseconds on a virtual machine, in
 * every short process (bench/run.sh, section process, counts them).
 */
static uint64_t load_for_store(uint64_t *p)
{
	return __atomic_fetch_add(p, 0, __ATOMIC_ACQUIRE);
}

/* 0 when h is, or now is, a summary of this build's layout; -1 when it is
 * another build's (of another number of counters, of the same size). */
static int init_header(struct lwm2_summary_header *h, const struct lwm2_rank_record *r)
{
	/* The header's first word is its magic, the page's first store. */
	(void)load_for_store((uint64_t *)(void *)h);
	if (memcmp(h->magic, LWM2_SUMMARY_MAGIC, sizeof(h->magic)) == 0) {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		return h->version == LWM2_SUMMARY_VERSION && h->ncounters == LWM2_NCOUNTERS &&
		               h->slot_size == sizeof(struct lwm2_summary_exe) &&
		               h->slice_size == sizeof(struct lwm2_summary_slice)
		           ? 0
		           : -1;
	}
	/* Every process writes the same values: the race is harmless, and the
	 * magic comes last so a reader never takes a half-written header. */
	h->version = LWM2_SUMMARY_VERSION;
	h->header_size = sizeof(*h);
	h->slot_size = sizeof(struct lwm2_summary_exe);
	h->nslots = LWM2_SUMMARY_SLOTS;
	h->ncounters = LWM2_NCOUNTERS;
	h->nearmarks = LWM2_NEARMARKS;
	h->job_id = r->job_id;
	h->step_id = r->step_id;
	h->nslices = LWM2_SUMMARY_SLICES;
	h->slice_size = sizeof(struct lwm2_summary_slice);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, LWM2_SUMMARY_MAGIC, sizeof(h->magic));
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s && s[1] ? s + 1 : p;
}

/* The slot of name: found or claimed; the last slot once the table is full. */
static struct lwm2_summary_exe *slot_of(struct lwm2_summary_exe *slots, const char *name)
{
	uint64_t key = lwm2_summary_key(name);
	const uint32_t n = LWM2_SUMMARY_SLOTS - 1;

	for (uint32_t i = 0, at = (uint32_t)(key % n); i < n; i++, at = (at + 1) % n) {
		struct lwm2_summary_exe *s = &slots[at];
		uint64_t k = load_for_store(&s->key);

		if (k == 0) {
			if (__atomic_compare_exchange_n(&s->key, &k, key, false, __ATOMIC_ACQ_REL,
			                                __ATOMIC_ACQUIRE)) {
				size_t len = strnlen(name, LWM2_SUMMARY_NAME - 1);

				memcpy(s->name, name, len);
				return s;
			}
		}
		if (k == key)
			return s;
	}
	/* Full: the rest shares the last slot. */
	{
		struct lwm2_summary_exe *s = &slots[n];
		uint64_t k = 0;

		if (__atomic_compare_exchange_n(&s->key, &k, lwm2_summary_key("(other)"), false,
		                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			memcpy(s->name, "(other)", 7);
		return s;
	}
}

/* The summary's slice of key: found or claimed; NULL when the table has
 * no room for it. */
static struct lwm2_summary_slice *slice_of(struct lwm2_summary_slice *sl, uint64_t key,
                                           uint64_t index)
{
	const uint32_t n = LWM2_SUMMARY_SLICES;

	/* Slices of a step are consecutive indices: index % n is a perfect
	 * hash until the table wraps, so a lookup is one probe. */
	for (uint32_t i = 0, at = (uint32_t)(index % n); i < n; i++, at = (at + 1) % n) {
		uint64_t k = load_for_store(&sl[at].key);

		if (k == 0 && __atomic_compare_exchange_n(&sl[at].key, &k, key, false,
		                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return &sl[at];
		if (k == key)
			return &sl[at];
	}
	return NULL;
}

/* The end of a process (not of an image replaced by exec) into its slot:
 * how it ended, and its CPU time and faults, which are the process's,
 * exec or not (the image after an exec has them, so only the last image
 * adds them). */
static void add_process_end(struct lwm2_summary_exe *s, const struct lwm2_rank_record *r)
{
	add64(&s->processes, 1);
	if (r->flags & LWM2_F_SIGNALED)
		add64(&s->signaled, 1);
	else if (r->exit_status == 0)
		add64(&s->exit_ok, 1);
	else
		add64(&s->exit_failed, 1);
	add64(&s->utime_us, r->utime_us);
	add64(&s->stime_us, r->stime_us);
	add64(&s->minflt, r->minflt);
	add64(&s->majflt, r->majflt);
	max64(&s->maxrss_kb, r->maxrss_kb);
}

static const char *exe_name(const struct lwm2_rank_record *r)
{
	return r->executable[0] ? base_name(r->executable) : "?";
}

/* Most slices a short process adds: it lives less than LWM2_SHORT_MS. */
#define MAX_OWN_SLICES 16

int lwm2_summary_add(const struct lwm2_rank_record *r, enum lwm2_end how)
{
	struct lwm2_summary_header *h;
	struct lwm2_summary_slice *to[MAX_OWN_SLICES];
	uint32_t from[MAX_OWN_SLICES];
	const struct lwm2_slice *own = lwm2_record_slices(r);
	struct lwm2_summary_exe *s;
	bool ends = how != LWM2_END_EXEC;
	uint32_t nto = 0;

	if (r->slice_length_s >= 1u << LWM2_SUMMARY_LEN_BITS || r->nslices > 4096)
		return -1;
	if (!(h = map_summary()))
		return -1;
	if (init_header(h, r) != 0) {
		munmap(h, LWM2_SUMMARY_SIZE);
		return -1;
	}
	/* Every slice that counted something finds its place first: a process
	 * that cannot add all of them adds nothing and keeps a record. */
	for (uint32_t k = 0; k < r->nslices; k++) {
		bool any = false;

		for (int c = 0; c < LWM2_NCOUNTERS && !any; c++)
			any = own[k].counters[c] != 0;
		if (!any)
			continue;
		if (nto == MAX_OWN_SLICES ||
		    !(to[nto] =
		          slice_of(lwm2_summary_slices(h),
		                   lwm2_summary_slice_key(r->first_slice + k, r->slice_length_s),
		                   r->first_slice + k))) {
			munmap(h, LWM2_SUMMARY_SIZE);
			return -1;
		}
		from[nto++] = k;
	}
	for (uint32_t i = 0; i < nto; i++)
		for (int c = 0; c < LWM2_NCOUNTERS; c++)
			add64(&to[i]->s.counters[c], own[from[i]].counters[c]);
	s = slot_of(lwm2_summary_exes(h), exe_name(r));
	add64(&s->images, 1);
	if (ends)
		add_process_end(s, r);
	if (r->end_ns > r->start_ns)
		add64(&s->wall_ns, (uint64_t)(r->end_ns - r->start_ns));
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		add64(&s->samples[e], r->samples[e]);
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		add64(&s->counters[c], r->counters[c]);
	if (r->task_id >= 0 && r->task_id < LWM2_SUMMARY_TASKS)
		__atomic_fetch_or(&h->task_bits[r->task_id / 64], 1ull << (r->task_id % 64),
		                  __ATOMIC_RELAXED);
	min_i64(&h->first_start_ns, r->start_ns);
	max_i64(&h->last_end_ns, r->end_ns);
	/* At exit the mapping goes with the process; an exec that fails
	 * must not keep it. */
	if (!ends)
		munmap(h, LWM2_SUMMARY_SIZE);
	return 0;
}

int lwm2_summary_signaled(const struct lwm2_rank_record *r, enum lwm2_end how, bool exit_ok)
{
	struct lwm2_summary_header *h = map_summary();
	struct lwm2_summary_exe *s;

	if (!h)
		return -1;
	if (init_header(h, r) != 0) {
		munmap(h, LWM2_SUMMARY_SIZE);
		return -1;
	}
	s = slot_of(lwm2_summary_exes(h), exe_name(r));
	if (how == LWM2_END_EXEC) {
		add_process_end(s, r);
	} else {
		__atomic_fetch_sub(exit_ok ? &s->exit_ok : &s->exit_failed, 1, __ATOMIC_RELAXED);
		add64(&s->signaled, 1);
	}
	/* The process ends now: the mapping goes with it. */
	return 0;
}
