/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Time slices, the heartbeat thread and the rank record writer.
 *
 * The slice protocol (see lwm2_core.h for the writer's side)
 * ------------------------------------------------------------
 * Slice k of length L covers [kL, (k+1)L) of CLOCK_REALTIME, so the slices
 * of every process on every node line up.  The heartbeat sleeps until the
 * end of the slice it went to sleep in, then, under the core lock:
 *
 *   1. calls each module's slice_end hook;
 *   2. for every live thread flips `active` and folds the buffer that was
 *      active: per counter it loads the value v and adds v - folded[b][c]
 *      to the pending sums, then sets folded[b][c] = v.  Only the lock
 *      holder touches `folded`, and the owner only ever raises buf, so each
 *      add is taken exactly once: by the first fold of its buffer that
 *      reads a value including it.  An add that lands in the old buffer
 *      after the flip is found by a later fold of that buffer; nothing is
 *      lost or counted twice, whatever the interleaving (test/slices.c
 *      proves it under ThreadSanitizer);
 *   3. converts the pending clock ticks of time counters to ns, adds the
 *      pending sums to slice k and to the whole-run counters;
 *   4. rewrites the older slot of the record file (the one with the lower
 *      generation), sealing it with a higher generation and a checksum.
 *
 * Once, LWM2_SETUP_DELAY_MS after it started, the heartbeat calls the
 * modules' setup hooks without holding the lock (see lwm2_core.h).
 *
 * A thread that ends, and the final write, fold both buffers (a fold needs
 * no flip: the flip only keeps the heartbeat off the cache lines the owner
 * is writing).  Because each write goes to the slot not holding the newest
 * record, a SIGKILL at any point leaves a valid record at most one slice
 * old, flagged INCOMPLETE until the final write clears the flag.
 *
 * When the series would exceed LWM2_MAX_SLICES it is coarsened: pairs of
 * slices aligned to 2L are merged and L doubles, so slices stay aligned to
 * the clock across processes that coarsened equally often.
 */
#include "core_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static struct lwm2_slice *slices(void)
{
	return (struct lwm2_slice *)(void *)(lwm2_p.img + 1);
}

int lwm2_storage_init(void)
{
	void *p;

	lwm2_p.img_capacity = lwm2_slot_capacity(lwm2_p.max_slices);
	p = mmap(NULL, lwm2_p.img_capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
	         0);
	if (p == MAP_FAILED)
		return -1;
	lwm2_p.img = p;
	lwm2_p.first_slice = lwm2_slice_now();
	return 0;
}

uint64_t lwm2_slice_now(void)
{
	return lwm2_now_ns() / 1000000u / lwm2_p.slice_ms;
}

void lwm2_fold_thread(struct lwm2_thread *t, int which)
{
	for (int b = 0; b < 2; b++) {
		if (which != 2 && which != b)
			continue;
		for (int c = 0; c < LWM2_NCOUNTERS; c++) {
			uint64_t v = atomic_load_explicit(&t->buf[b][c], memory_order_relaxed);

			lwm2_p.pending[c] += v - t->folded[b][c];
			t->folded[b][c] = v;
		}
	}
}

static const bool is_time[LWM2_NCOUNTERS] = {
#define X_TIME(name, unit, desc)                                                                   \
	[LWM2_C_##name] = (sizeof(unit) == 3 && unit[0] == 'n' && unit[1 % sizeof(unit)] == 's'),
    LWM2_COUNTERS(X_TIME)
#undef X_TIME
};

/* Merge pairs of slices aligned to 2L; L doubles. */
static void coarsen(void)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	struct lwm2_slice *s = slices();
	uint64_t first = lwm2_p.first_slice, nfirst = first / 2;
	uint32_t n = r->nslices, nn = 0;

	if (n)
		nn = (uint32_t)((first + n - 1) / 2 - nfirst + 1);
	/* New slice j takes old absolute slices 2(nfirst+j) and +1; both sit
	 * at old positions >= j, so ascending in place is safe. */
	for (uint32_t j = 0; j < nn; j++) {
		uint64_t lo = 2 * (nfirst + j);
		struct lwm2_slice sum;

		memset(&sum, 0, sizeof(sum));
		for (uint64_t k = lo; k < lo + 2; k++)
			if (k >= first && k < first + n)
				for (int c = 0; c < LWM2_NCOUNTERS; c++)
					sum.counters[c] += s[k - first].counters[c];
		s[j] = sum;
	}
	memset(&s[nn], 0, (size_t)(n - nn) * sizeof(*s));
	r->nslices = nn;
	lwm2_p.first_slice = nfirst;
	lwm2_p.slice_ms *= 2;
	r->flags |= LWM2_F_COARSENED;
}

/* Move the pending sums into slice k (in units of the current L). */
void lwm2_slice_add(uint64_t k)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	struct lwm2_slice *s;
	uint64_t idx;
	uint64_t L = lwm2_p.slice_ms;

	lwm2_clock_recalibrate();
	if (k < lwm2_p.first_slice) /* the clock went back: keep it in the first slice */
		k = lwm2_p.first_slice;
	while (k - lwm2_p.first_slice >= lwm2_p.max_slices) {
		coarsen();
		/* k in units of the new L */
		k = k * L / lwm2_p.slice_ms;
		L = lwm2_p.slice_ms;
		if (k < lwm2_p.first_slice)
			k = lwm2_p.first_slice;
	}
	idx = k - lwm2_p.first_slice;
	s = slices();
	if (idx >= r->nslices) {
		memset(&s[r->nslices], 0, (size_t)(idx + 1 - r->nslices) * sizeof(*s));
		r->nslices = (uint32_t)idx + 1;
	}
	for (int c = 0; c < LWM2_NCOUNTERS; c++) {
		uint64_t v = lwm2_p.pending[c];

		if (!v)
			continue;
		if (is_time[c])
			v = lwm2_ticks_to_ns(v);
		s[idx].counters[c] += v;
		r->counters[c] += v;
		lwm2_p.pending[c] = 0;
	}
}

static long sys_ret(long r)
{
	return r < 0 ? -1 : r;
}

/* A store into a hole of a full file system would raise SIGBUS in the
 * application: blocks are allocated before a slot grows into them. */
static int reserve_fd(int fd, size_t need)
{
	size_t hdr = sizeof(struct lwm2_file_header), cap = lwm2_p.img_capacity;
	size_t r = (need + 16383) & ~(size_t)16383;

	if (r > cap)
		r = cap;
	if (sys_ret(syscall(SYS_fallocate, fd, 0, (off_t)0, (off_t)(hdr + r))) != 0 ||
	    sys_ret(syscall(SYS_fallocate, fd, 0, (off_t)(hdr + cap), (off_t)r)) != 0)
		return -1;
	lwm2_p.reserved = r;
	return 0;
}

/* Grow the reservation; the file is found again by name (no descriptor is
 * kept) and must still be the one mapped. */
static int reserve(size_t need)
{
	char path[sizeof(lwm2_p.dir) + sizeof(lwm2_p.path) + 2];
	struct stat st;
	int fd, rc = -1;

	if (need <= lwm2_p.reserved)
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", lwm2_p.dir, lwm2_p.path) >= sizeof(path))
		return -1;
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && (uint64_t)st.st_ino == lwm2_p.ino)
		rc = reserve_fd(fd, need);
	syscall(SYS_close, fd);
	return rc;
}

/* The library's own file I/O goes straight to the kernel: never counted by
 * the POSIX module, never through a stdio buffer. */
/* Open the record file: created on first use (the name must be new), or
 * the one a single final write left (after an exec that failed). */
static int open_file(void)
{
	struct stat st;
	int dfd, fd, n;

	if (!lwm2_p.have_dir)
		syscall(SYS_mkdirat, AT_FDCWD, lwm2_p.dir, 0700);
	dfd = (int)syscall(SYS_openat, AT_FDCWD, lwm2_p.dir,
	                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		lwm2_debug("lwm2: record: couldn't open directory %s: %s", lwm2_p.dir,
		           strerror(errno));
		return -1;
	}
	/* The default directory lives in a shared /tmp: it must be ours. */
	if (!lwm2_p.have_dir &&
	    (fstat(dfd, &st) != 0 || st.st_uid != getuid() || (st.st_mode & 077))) {
		lwm2_debug("lwm2: record: couldn't use %s: not a private directory of this user",
		           lwm2_p.dir);
		syscall(SYS_close, dfd);
		return -1;
	}
	n = snprintf(lwm2_p.path, sizeof(lwm2_p.path), "%d.%llu.lwm2", (int)lwm2_p.pid,
	             (unsigned long long)lwm2_p.start_ns);
	if (n < 0 || (size_t)n >= sizeof(lwm2_p.path)) {
		syscall(SYS_close, dfd);
		return -1;
	}
	fd = (int)syscall(SYS_openat, dfd, lwm2_p.path,
	                  lwm2_p.written_once ? O_RDWR | O_NOFOLLOW | O_CLOEXEC
	                                      : O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	                  0600);
	if (fd < 0)
		lwm2_debug("lwm2: record: couldn't create %s/%s: %s", lwm2_p.dir, lwm2_p.path,
		           strerror(errno));
	syscall(SYS_close, dfd);
	return fd;
}

/* A process that ends before its first slice boundary writes its record
 * once: header and slot 0 in one system call, no mapping. */
static void write_once(const struct lwm2_rank_record *r)
{
	struct lwm2_file_header h;
	struct iovec iov[2];
	long n;
	int fd;

	if (lwm2_p.file_failed)
		return;
	fd = open_file();
	if (fd < 0) {
		lwm2_p.file_failed = true;
		return;
	}
	lwm2_file_header_init(&h, (uint32_t)lwm2_p.img_capacity);
	iov[0].iov_base = &h;
	iov[0].iov_len = sizeof(h);
	iov[1].iov_base = (void *)(uintptr_t)r;
	iov[1].iov_len = r->total_size;
	n = syscall(SYS_pwritev, fd, iov, 2, 0L, 0L);
	if (n != (long)(sizeof(h) + r->total_size))
		lwm2_debug("lwm2: record: couldn't write %s: %s", lwm2_p.path,
		           n < 0 ? strerror(errno) : "short write");
	syscall(SYS_close, fd);
	lwm2_p.written_once = true;
	lwm2_p.last_slot = 0;
}

static int create_file(void)
{
	struct lwm2_file_header h;
	size_t cap = lwm2_p.img_capacity;
	size_t size = sizeof(h) + 2 * cap;
	struct stat st;
	void *m;
	int fd;

	if (lwm2_p.file_failed)
		return -1;
	lwm2_p.file_failed = true; /* until it worked */
	fd = open_file();
	if (fd < 0)
		return -1;
	/* The file is sparse; blocks are reserved as the slots fill (see
	 * reserve()), so a small record costs a page per slot, not the whole
	 * budget. */
	if (sys_ret(syscall(SYS_ftruncate, fd, (off_t)size)) != 0 || fstat(fd, &st) != 0) {
		lwm2_debug("lwm2: record: couldn't size %s: %s", lwm2_p.path, strerror(errno));
		goto fail;
	}
	lwm2_p.ino = (uint64_t)st.st_ino;
	lwm2_p.reserved = 0;
	if (reserve_fd(fd, sizeof(struct lwm2_rank_record) + 4 * sizeof(struct lwm2_slice)) != 0) {
		lwm2_debug("lwm2: record: couldn't reserve space for %s: %s", lwm2_p.path,
		           strerror(errno));
		goto fail;
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		lwm2_debug("lwm2: record: couldn't map %s: %s", lwm2_p.path, strerror(errno));
		goto fail;
	}
	/* No descriptor is kept: an application that closes every descriptor
	 * (daemons do) can neither lose the record nor have it written into a
	 * file of its own that reused the number. */
	syscall(SYS_close, fd);
	lwm2_file_header_init(&h, (uint32_t)cap);
	memcpy(m, &h, sizeof(h));
	lwm2_p.map = m;
	lwm2_p.map_size = size;
	lwm2_p.file_failed = false;
	return 0;
fail:
	syscall(SYS_close, fd);
	if (!lwm2_p.written_once) { /* leave no file without a record */
		char path[sizeof(lwm2_p.dir) + sizeof(lwm2_p.path) + 2];

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", lwm2_p.dir, lwm2_p.path) <
		    sizeof(path))
			syscall(SYS_unlinkat, AT_FDCWD, path, 0);
	}
	return -1;
}

/* The child of fork inherits the parent's mapping: never write into it. */
void lwm2_record_discard_mapping(void)
{
	if (lwm2_p.map)
		munmap(lwm2_p.map, lwm2_p.map_size);
	lwm2_p.map = NULL;
	lwm2_p.file_failed = false;
	lwm2_p.reserved = 0;
	lwm2_p.written_once = false;
	lwm2_p.last_slot = -1;
}

static void fill_process_fields(enum lwm2_end how, int status, int sig)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	struct rusage ru;
	uint64_t samples[LWM2_NEARMARKS];
	uint64_t smain = lwm2_p.dead_samples_main;

	r->end_ns = (int64_t)lwm2_now_ns();
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		r->utime_us =
		    (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec;
		r->stime_us =
		    (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
		r->maxrss_kb = (uint64_t)ru.ru_maxrss;
		r->minflt = (uint64_t)ru.ru_minflt;
		r->majflt = (uint64_t)ru.ru_majflt;
		r->nvcsw = (uint64_t)ru.ru_nvcsw;
		r->nivcsw = (uint64_t)ru.ru_nivcsw;
	}
	memcpy(samples, lwm2_p.dead_samples, sizeof(samples));
	for (struct lwm2_thread *t = lwm2_p.threads; t; t = t->next)
		for (int e = 0; e < LWM2_NEARMARKS; e++) {
			uint64_t s = atomic_load_explicit(&t->samples[e], memory_order_relaxed);

			samples[e] += s;
			if (t->is_main)
				smain += s;
		}
	memcpy(r->samples, samples, sizeof(samples));
	r->samples_main = smain;
	r->threads_total = lwm2_p.threads_total;
	r->threads_max = lwm2_p.threads_max;
	r->slice_length_s = (uint32_t)(lwm2_p.slice_ms >= 1000 ? lwm2_p.slice_ms / 1000 : 1);
	r->first_slice = lwm2_p.slice_ms >= 1000 ? lwm2_p.first_slice : 0;
	lwm2_clock_describe(&r->clock_source, &r->clock_cost_ps);

	switch (how) {
	case LWM2_END_CHECKPOINT:
		r->flags |= LWM2_F_INCOMPLETE;
		break;
	case LWM2_END_EXIT:
		r->flags &= ~(uint32_t)LWM2_F_INCOMPLETE;
		r->exit_status = status & 0xff; /* what wait() reports */
		break;
	case LWM2_END_SIGNAL:
		r->flags &= ~(uint32_t)LWM2_F_INCOMPLETE;
		r->flags |= LWM2_F_SIGNALED;
		r->term_signal = sig;
		r->exit_status = 128 + sig;
		break;
	case LWM2_END_EXEC:
		r->flags &= ~(uint32_t)LWM2_F_INCOMPLETE;
		r->flags |= LWM2_F_EXEC;
		break;
	}
}

/* An image that leaves no record of its own but goes to the step's
 * summary: it ended before LWM2_SHORT_MS, has no record file yet, and is
 * neither a task of the step, an MPI rank nor multithreaded (those are
 * looked at one by one), nor flagged with something the summary cannot
 * carry (io_uring set up, files mapped for writing, partial data). */
static bool is_short(const struct lwm2_rank_record *r)
{
	return lwm2_p.short_ns && !lwm2_p.root && !lwm2_p.written_once &&
	       !(r->flags & (LWM2_F_MPI | LWM2_F_IO_URING | LWM2_F_MMAP_WRITE | LWM2_F_PARTIAL)) &&
	       lwm2_p.threads_total <= 1 && r->end_ns >= r->start_ns &&
	       (uint64_t)(r->end_ns - r->start_ns) < lwm2_p.short_ns;
}

static bool counted_nothing(const struct lwm2_rank_record *r)
{
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		if (r->counters[c])
			return false;
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		if (r->samples[e])
			return false;
	return true;
}

/* Under the lock.  Folds every live thread, then writes the record (and
 * creates its file on first use unless the digest is only printed). */
static void write_record(enum lwm2_end how, int status, int sig)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	unsigned char *slot;
	uint64_t gen;

	fill_process_fields(how, status, sig);
	gen = r->generation + 1;
	r->generation = gen;
	lwm2_record_seal(r); /* the in-memory image is a valid record too (printing) */

	if (!lwm2_p.map && (lwm2_p.have_dir || !lwm2_p.print)) {
		if (how != LWM2_END_CHECKPOINT) {
			/* An image that execs having counted nothing (the child of
			 * a shell that execs at once) leaves nothing: the next
			 * image is the process and has its CPU time. */
			if (how == LWM2_END_EXEC && !lwm2_p.written_once && counted_nothing(r))
				return;
			if (is_short(r) && lwm2_summary_add(r, how) == 0)
				return;
			write_once(r);
			return;
		}
		create_file();
	}
	if (!lwm2_p.map)
		return;
	if (reserve(r->total_size) != 0) {
		/* Out of space (or the file is gone): stop writing, never fault. */
		lwm2_debug("lwm2: record: couldn't grow %s: %s", lwm2_p.path, strerror(errno));
		lwm2_record_discard_mapping();
		lwm2_p.file_failed = true;
		return;
	}
	/* Always the slot not holding the newest record. */
	lwm2_p.last_slot = lwm2_p.last_slot == 1 ? 0 : 1;
	slot = lwm2_p.map + sizeof(struct lwm2_file_header) +
	       (size_t)lwm2_p.last_slot * lwm2_p.img_capacity;
	/* A slot torn by SIGKILL fails its checksum and the reader takes the
	 * other one, which this write never touches. */
	memcpy(slot, r, r->total_size);
}

void lwm2_record_write(enum lwm2_end how, int status, int sig, bool sigctx)
{
	(void)sigctx;
	for (struct lwm2_thread *t = lwm2_p.threads; t; t = t->next)
		lwm2_fold_thread(t, 2);
	lwm2_slice_add(lwm2_slice_now());
	write_record(how, status, sig);
}

void lwm2_storage_fork_child(void)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	uint32_t keep_flags = r->flags & (LWM2_F_SAMPLING_OFF | LWM2_F_MPI | LWM2_F_MPI_FINALIZED);

	lwm2_record_discard_mapping();
	memset(lwm2_p.pending, 0, sizeof(lwm2_p.pending));
	memset(lwm2_p.dead_samples, 0, sizeof(lwm2_p.dead_samples));
	lwm2_p.dead_samples_main = 0;
	memset(r->counters, 0, sizeof(r->counters));
	memset(slices(), 0, (size_t)r->nslices * sizeof(struct lwm2_slice));
	r->nslices = 0;
	r->generation = 0;
	r->flags = keep_flags | LWM2_F_FORK_CHILD;
	memset(r->samples, 0, sizeof(r->samples));
	r->samples_main = 0;
	lwm2_p.first_slice = lwm2_slice_now();
}

static pthread_cond_t hb_cond = PTHREAD_COND_INITIALIZER;
static pthread_t hb_thread;
static _Atomic pid_t hb_tid;
static bool hb_stop;
static bool hb_setup_done; /* modules' setup hooks called (under the lock) */

/* The heartbeat waits on a condition variable rather than sleeping, so
 * that lwm2_heartbeat_stop() can end it at once. */
static void *heartbeat(void *arg)
{
	int gen = (int)(intptr_t)arg;
	/* From the start of the process: a heartbeat started late (it is
	 * started lazily) sets the modules up at once. */
	uint64_t setup_ns = lwm2_p.start_ns + LWM2_SETUP_DELAY_MS * 1000000ull;

	lwm2_no_attach = 1;
	atomic_store(&hb_tid, lwm2_raw_gettid());
	lwm2_lock();
	for (;;) {
		uint64_t L = lwm2_p.slice_ms, k = lwm2_slice_now();
		uint64_t wake_ns = (k + 1) * L * 1000000u;
		/* The modules' setup comes first when it is due before the slice
		 * ends (short jobs are then counted from early on). */
		bool setup_due = !hb_setup_done && setup_ns < wake_ns;

		if (setup_due)
			wake_ns = setup_ns;
		struct timespec ts = {.tv_sec = (time_t)(wake_ns / 1000000000u),
		                      .tv_nsec = (long)(wake_ns % 1000000000u)};

		while (!hb_stop && lwm2_now_ns() < wake_ns)
			pthread_cond_timedwait(&hb_cond, &lwm2_p.lock, &ts);
		if (hb_stop) { /* lwm2_heartbeat_stop() joins it */
			lwm2_unlock();
			return NULL;
		}
		if (atomic_load(&lwm2_p.hb_generation) != gen || atomic_load(&lwm2_p.finished)) {
			/* Ending on its own: nobody will join it. */
			lwm2_p.hb_running = false;
			pthread_detach(pthread_self());
			lwm2_unlock();
			return NULL;
		}
		if (setup_due) {
			/* Without the lock: setup may load libraries (the loader's
			 * lock must never be waited for under ours) and report to
			 * the core. */
			hb_setup_done = true;
			lwm2_unlock();
			lwm2_for_each_module(m) if (m->setup) m->setup();
			/* The identity, once, so that a process killed later
			 * still names its build in the checkpoints. */
			lwm2_identity_collect();
			lwm2_lock();
			lwm2_identity_apply(lwm2_p.img);
			continue;
		}
		lwm2_for_each_module(m) if (m->slice_end) m->slice_end();
		for (struct lwm2_thread *t = lwm2_p.threads; t; t = t->next) {
			uint32_t a = atomic_load_explicit(&t->active, memory_order_relaxed) & 1;

			atomic_store_explicit(&t->active, a ^ 1, memory_order_relaxed);
			lwm2_fold_thread(t, (int)a);
		}
		/* Slice k in units of the L it was measured with. */
		lwm2_slice_add(L == lwm2_p.slice_ms ? k : k * L / lwm2_p.slice_ms);
		write_record(LWM2_END_CHECKPOINT, 0, 0);
	}
}

/* The heartbeat blocks every signal (it must never run an application's
 * handler nor take a sample).  exit() ends it with the process; nothing
 * waits for it except lwm2_heartbeat_stop(). */
int lwm2_heartbeat_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	if (!lwm2_real_pthread_create)
		return -1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	hb_stop = false;
	rc = lwm2_real_pthread_create(&hb_thread, &attr, heartbeat,
	                              (void *)(intptr_t)atomic_load(&lwm2_p.hb_generation));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		lwm2_debug("lwm2: start: couldn't start the heartbeat: %s", strerror(rc));
		return -1;
	}
	lwm2_p.hb_running = true;
	return 0;
}

void lwm2_heartbeat_want(void)
{
	if (!atomic_load_explicit(&lwm2_on, memory_order_relaxed) ||
	    __atomic_load_n(&lwm2_p.hb_running, __ATOMIC_RELAXED) || !lwm2_here())
		return;
	lwm2_in_core++;
	lwm2_lock();
	/* Under the lock: two threads wanting it at once start one. */
	if (!lwm2_p.hb_running && !atomic_load(&lwm2_p.finished))
		lwm2_heartbeat_start();
	lwm2_unlock();
	lwm2_in_core--;
}

uint64_t lwm2_next_slice_end_ns(void)
{
	return (lwm2_slice_now() + 1) * lwm2_p.slice_ms * 1000000u;
}

void lwm2_checkpoint_from_handler(void)
{
	if (lwm2_now_ns() < atomic_load_explicit(&lwm2_p.next_ckpt_ns, memory_order_relaxed) ||
	    lwm2_in_core || !lwm2_here())
		return;
	/* Never wait in a handler: the holder may be this very thread. */
	if (pthread_mutex_trylock(&lwm2_p.lock) != 0)
		return;
	lwm2_in_core++;
	if (!lwm2_p.hb_running && !atomic_load(&lwm2_p.finished)) {
		lwm2_record_write(LWM2_END_CHECKPOINT, 0, 0, true);
		atomic_store_explicit(&lwm2_p.next_ckpt_ns, lwm2_next_slice_end_ns(),
		                      memory_order_relaxed);
	}
	lwm2_in_core--;
	lwm2_unlock();
}

/* In the fork child: the parent's heartbeat does not exist there. */
void lwm2_heartbeat_fork_child(void)
{
	pthread_cond_init(&hb_cond, NULL);
	lwm2_p.hb_running = false;
	hb_stop = false;
	hb_setup_done = false; /* the child's modules may still need it */
	atomic_store(&hb_tid, 0);
}

/*
 * End the heartbeat and wait until the kernel has let go of it, so that
 * the process is single-threaded again if the application is (unshare()
 * and setns() of some namespaces refuse multithreaded callers).  Returns
 * true when it was running.  Not under the lock.
 */
bool lwm2_heartbeat_stop(void)
{
	pid_t tid;

	lwm2_lock();
	if (!lwm2_p.hb_running) {
		lwm2_unlock();
		return false;
	}
	hb_stop = true;
	pthread_cond_broadcast(&hb_cond);
	lwm2_unlock();
	pthread_join(hb_thread, NULL);
	/* pthread_join returns when the thread's tid is cleared, a little
	 * before the kernel removes it from the thread group. */
	tid = atomic_load(&hb_tid);
	for (int i = 0; tid > 0 && i < 2000; i++) {
		struct timespec ts = {0, 50000};

		if (syscall(SYS_tgkill, lwm2_raw_getpid(), tid, 0) != 0 && errno == ESRCH)
			break;
		nanosleep(&ts, NULL);
	}
	lwm2_lock();
	lwm2_p.hb_running = false;
	hb_stop = false;
	lwm2_unlock();
	return true;
}
