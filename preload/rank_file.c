/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rank record file: where the process storage (the record image and
 * its slices, heartbeat.c) goes at every heartbeat and at the end.
 *
 * The file is created on the first write that needs it, mapped MAP_SHARED
 * with no descriptor kept, and each write goes to the slot that does not
 * hold the newest record (see lwm2_record.h): a SIGKILL at any point leaves
 * a valid record at most one slice old.  A process that ends before its
 * first checkpoint writes once, header and slot in one pwritev, without a
 * mapping; one that ends short goes to the step summary (summary.c)
 * instead, and an exec'd image that counted nothing leaves nothing.
 *
 * All under the core lock, and signal-safe: raw system calls, no malloc.
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
#include <unistd.h>

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
	struct stat st;
	int fd, rc = -1;

	if (need <= lwm2_p.reserved)
		return 0;
	fd = lwm2_stepdir_open(lwm2_p.path, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
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
	/* Inside a container the step directory's path leads elsewhere. */
	if (dfd < 0 && lwm2_p.have_dir)
		dfd = lwm2_stepdir_inherited();
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
	m = lwm2_raw_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
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
	if (!lwm2_p.written_once) /* leave no file without a record */
		lwm2_stepdir_unlink(lwm2_p.path);
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
	lwm2_view_totals(&r->view_queries, &r->view_ns);
	lwm2_regions_fill(r);
	lwm2_thread_scope_fill(r);

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
 * neither a task of the step (nor the first measured process of a tree),
 * an MPI rank, multithreaded nor one that named regions (those are
 * looked at one by one), nor flagged with something the summary cannot
 * carry (io_uring set up, files mapped for writing, partial data). */
static bool is_short_at(const struct lwm2_rank_record *r, int64_t end_ns)
{
	return lwm2_p.short_ns && !lwm2_p.root && !lwm2_p.written_once &&
	       !(r->flags & (LWM2_F_MPI | LWM2_F_IO_URING | LWM2_F_MMAP_WRITE | LWM2_F_PARTIAL |
	                     LWM2_F_ASIDE)) &&
	       lwm2_p.threads_total <= 1 && !lwm2_regions_used() && end_ns >= r->start_ns &&
	       (uint64_t)(end_ns - r->start_ns) < lwm2_p.short_ns;
}

static bool is_short(const struct lwm2_rank_record *r)
{
	return is_short_at(r, r->end_ns);
}

/* A final write goes to the summary only without a record file, where the
 * step collects records (or nothing is printed). */
static bool summary_wanted(void)
{
	return !lwm2_p.map && (lwm2_p.have_dir || !lwm2_p.print);
}

/* Its digest not printed either: the renderer shows runtimes. */
LWM2_HIDDEN bool lwm2_goes_to_summary(void)
{
	return summary_wanted() && !lwm2_p.print && is_short_at(lwm2_p.img, (int64_t)lwm2_now_ns());
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

bool lwm2_rank_idle_fork_child(void)
{
	const struct lwm2_rank_record *r = lwm2_p.img;
	const struct lwm2_thread *t = lwm2_p.threads;

	/* Where its exec would write at all (summary_wanted) and nothing yet. */
	if (!(r->flags & LWM2_F_FORK_CHILD) || !summary_wanted() || lwm2_p.written_once ||
	    !counted_nothing(r))
		return false;
	/* One thread, nothing in its buffers since the last fold, nothing
	 * folded and waiting for a slice. */
	if (!t || t->next || lwm2_p.dead_samples_main)
		return false;
	for (int b = 0; b < 2; b++)
		for (int c = 0; c < LWM2_NCOUNTERS; c++)
			if (atomic_load_explicit(&t->buf[b][c], memory_order_relaxed) !=
			    t->folded[b][c])
				return false;
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		if (lwm2_p.pending[c])
			return false;
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		if (atomic_load_explicit(&t->samples[e], memory_order_relaxed) !=
		        t->samples_folded[e] ||
		    lwm2_p.dead_samples[e])
			return false;
	return true;
}

/* Where the last final write went: the step summary, a record file, or
 * nowhere (an idle exec). */
static enum { FINAL_NOWHERE, FINAL_SUMMARY, FINAL_FILE } final_to;

/* Under the lock, the threads folded: writes the record (and creates its
 * file on first use unless the digest is only printed). */
void lwm2_rank_file_write(enum lwm2_end how, int status, int sig)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	unsigned char *slot;
	uint64_t gen;

	fill_process_fields(how, status, sig);
	gen = r->generation + 1;
	r->generation = gen;
	lwm2_record_seal(r); /* the in-memory image is a valid record too (printing) */

	if (how != LWM2_END_CHECKPOINT)
		final_to = FINAL_FILE;
	if (summary_wanted()) {
		if (how != LWM2_END_CHECKPOINT) {
			/* An image that execs having counted nothing (the child of
			 * a shell that execs at once) leaves nothing: the next
			 * image is the process and has its CPU time. */
			if (how == LWM2_END_EXEC && !lwm2_p.written_once && counted_nothing(r)) {
				final_to = FINAL_NOWHERE;
				return;
			}
			if (is_short(r) && lwm2_summary_add(r, how) == 0) {
				final_to = FINAL_SUMMARY;
				return;
			}
			/* A record file after all: with everything a record has. */
			if (lwm2_p.runtimes_pending) {
				lwm2_detect_runtimes();
				lwm2_record_seal(r);
			}
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

void lwm2_rank_file_signaled(enum lwm2_end how, int sig)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	bool exit_ok = !(r->flags & LWM2_F_SIGNALED) && r->exit_status == 0;

	if (r->flags & LWM2_F_SIGNALED)
		return;
	r->flags &= ~(uint32_t)LWM2_F_EXEC;
	if (final_to != FINAL_SUMMARY) {
		/* A record file is written again (the other slot, or the one
		 * slot of a single write); an idle exec's image is now a
		 * process that ended, and goes where such a one goes. */
		lwm2_record_write(LWM2_END_SIGNAL, 0, sig, false);
		return;
	}
	fill_process_fields(LWM2_END_SIGNAL, 0, sig);
	lwm2_record_seal(r);
	lwm2_summary_signaled(r, how, exit_ok);
}
