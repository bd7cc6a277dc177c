/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The slice protocol under load: 16 threads hammer lwm2_count() while the
 * heartbeat closes 2 ms slices (LWM2_SLICE_MS) and coarsens the series
 * (LWM2_MAX_SLICES=64).  Whatever the interleaving, the folded totals must
 * equal the exact number of adds, and the slices must sum to the totals.
 * Built twice: against the core objects as they ship, and with
 * -fsanitize=thread (slices-tsan.t), where any unsynchronised access
 * between the writers and the heartbeat is reported.
 */
#include "core_int.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

#define NTHREADS 16

static _Atomic int go, stop;
static uint64_t done_adds[NTHREADS];
static _Atomic int stop_forever;

static void *hammer(void *arg)
{
	struct lwm2_thread *t;
	uintptr_t id = (uintptr_t)arg;

	while (!atomic_load(&go))
		sched_yield();
	t = lwm2_enter();
	if (!t)
		return (void *)1;
	/* Until told to stop: the adds straddle as many boundaries as the
	 * heartbeat manages to close, whatever the speed of the machine. */
	for (uint64_t i = 0;; i++) {
		lwm2_count(t, LWM2_C_posix_read_calls, 1);
		lwm2_count(t, LWM2_C_mpi_p2p_bytes_sent, id + 1);
		if ((i & 0x3ff) == 0) {
			if (atomic_load_explicit(&stop, memory_order_relaxed)) {
				done_adds[id] = i + 1;
				break;
			}
			if ((i & 0xffff) == 0)
				sched_yield(); /* let the heartbeat in mid-stream */
		}
	}
	return NULL;
}

/* A thread that is still running at the final fold. */
static void *forever(void *arg)
{
	struct lwm2_thread *t = lwm2_enter();

	(void)arg;
	if (t)
		lwm2_count(t, LWM2_C_posix_write_calls, 7);
	while (!atomic_load(&stop_forever))
		usleep(1000);
	return NULL;
}

static uint64_t slice_sum(int c)
{
	const struct lwm2_slice *s = lwm2_record_slices(lwm2_p.img);
	uint64_t sum = 0;

	for (uint32_t i = 0; i < lwm2_p.img->nslices; i++)
		sum += s[i].counters[c];
	return sum;
}

int main(int argc, char **argv)
{
	pthread_t th[NTHREADS], fth;
	uint64_t want_sent = 0, want_calls = 0, gen0, gen1;
	char dir[] = "/tmp/lwm2-slices-XXXXXX";
	int failed_attach = 0;

	(void)argc;
	/* The core reads its settings in the constructor: come back with them. */
	if (!getenv("LWM2_SLICE_MS")) {
		if (!mkdtemp(dir))
			return 99;
		setenv("LWM2_SLICE_MS", "2", 1);
		setenv("LWM2_MAX_SLICES", "64", 1);
		setenv("LWM2_DIR", dir, 1);
		unsetenv("LWM2_MODE");
		unsetenv("LWM2_PRINT");
		atomic_store(&lwm2_on, 0); /* this image leaves no record */
		execv("/proc/self/exe", argv);
		return 99;
	}

	ok(atomic_load(&lwm2_on) == 1, "the core is on");
	ok(lwm2_p.slice_ms == 2, "2 ms slices for the test");
	lwm2_lock();
	gen0 = lwm2_p.img->generation;
	lwm2_unlock();

	pthread_create(&fth, NULL, forever, NULL);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, hammer, (void *)i);
	atomic_store(&go, 1);
	/* At least 100 slices closed while the threads count (or 20 s). */
	for (int waited = 0; waited < 2000; waited++) {
		uint64_t g;

		usleep(10000);
		lwm2_lock();
		g = lwm2_p.img->generation;
		lwm2_unlock();
		if (g - gen0 >= 100)
			break;
	}
	atomic_store(&stop, 1);
	for (uintptr_t i = 0; i < NTHREADS; i++) {
		void *rv;

		pthread_join(th[i], &rv);
		failed_attach += rv != NULL;
		want_calls += done_adds[i];
		want_sent += (i + 1) * done_adds[i];
	}
	ok(failed_attach == 0, "every thread got storage");

	lwm2_lock();
	gen1 = lwm2_p.img->generation;
	ok(gen1 - gen0 >= 100, "the heartbeat closed many slices meanwhile (%llu, %llu adds)",
	   (unsigned long long)(gen1 - gen0), (unsigned long long)want_calls);
	is_int((long long)lwm2_p.img->counters[LWM2_C_posix_read_calls], (long long)want_calls,
	       "folded adds equal the adds, one counter");
	is_int((long long)lwm2_p.img->counters[LWM2_C_mpi_p2p_bytes_sent], (long long)want_sent,
	       "folded adds equal the adds, another counter");
	ok(slice_sum(LWM2_C_posix_read_calls) == lwm2_p.img->counters[LWM2_C_posix_read_calls],
	   "the slices sum to the whole-run counter");
	ok((lwm2_p.img->flags & LWM2_F_COARSENED) && lwm2_p.img->nslices <= 64,
	   "the series was coarsened to fit the budget (%u slices of %llu ms)", lwm2_p.img->nslices,
	   (unsigned long long)lwm2_p.slice_ms);
	/* The final fold takes a thread that never ended. */
	lwm2_record_write(LWM2_END_CHECKPOINT, 0, 0, false);
	is_int((long long)lwm2_p.img->counters[LWM2_C_posix_write_calls], 7,
	       "a live thread is folded by a write");
	lwm2_unlock();
	atomic_store(&stop_forever, 1);
	pthread_join(fth, NULL);
	/* The heartbeat created the record file: unlinked now, the writes
	 * that follow go to the mapping and nothing stays behind. */
	if (lwm2_p.map) {
		char path[1200];

		snprintf(path, sizeof(path), "%s/%s", lwm2_p.dir, lwm2_p.path);
		unlink(path);
	}
	rmdir(lwm2_p.dir);
	return done_testing();
}
