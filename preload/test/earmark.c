/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Region shares from samples: the main thread burns 2 s of CPU time alternately
 * inside the I/O earmark (30 %) and outside any (70 %), in short rounds so
 * that the sampling period cannot line up with the pattern; a second thread
 * burns the same total in the MPI earmark.  The samples per earmark must
 * match those shares, and every sample must belong to a thread.
 */
#include "core_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "tap.h"

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void burn(double s)
{
	double end = cpu_s() + s;
	volatile double x = 1.0;

	while (cpu_s() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 1e-9;
}

#define TOTAL_S 2.0
#define HZ      100 /* the default rate */

/* Round lengths of 3 to 23 ms from a fixed pseudo-random sequence: CPU
 * timers fire at the kernel's tick, and rounds of one fixed length can beat
 * against it and favour one phase of the round; varied lengths cannot. */
static double next_round_s(void)
{
	static uint32_t state = 12345;

	state = state * 1103515245u + 12345u;
	return 0.003 + 0.020 * (double)((state >> 8) & 0xffff) / 65536.0;
}

static void *in_mpi(void *arg)
{
	struct lwm2_thread *t = lwm2_enter();
	uint32_t prev;

	(void)arg;
	if (!t)
		return NULL;
	prev = lwm2_earmark_enter(t, LWM2_EARMARK_mpi);
	burn(TOTAL_S);
	lwm2_earmark_leave(t, prev);
	return NULL;
}

int main(int argc, char **argv)
{
	struct lwm2_thread *t;
	uint64_t s[LWM2_NEARMARKS] = {0}, total = 0, smain = 0, merged_main = 0;
	uint64_t main_io = 0, main_compute = 0;
	pthread_t th;

	/* Settings are read in the constructor: come back with them.  The
	 * digest goes to the test's log and no record stays on disk. */
	(void)argc;
	if (!getenv("LWM2_PRINT")) {
		setenv("LWM2_PRINT", "1", 1);
		unsetenv("LWM2_DIR");
		unsetenv("LWM2_MODE");
		unsetenv("LWM2_SAMPLE_HZ");
		atomic_store(&lwm2_on, 0); /* this image leaves no record */
		execv("/proc/self/exe", argv);
		return 99;
	}
	t = lwm2_enter();

	ok(t != NULL && lwm2_p.sampling_on, "the main thread is measured and sampled");
	if (!t)
		return done_testing();
	pthread_create(&th, NULL, in_mpi, NULL);
	for (double done = 0, round; done < TOTAL_S; done += round) {
		uint32_t prev = lwm2_earmark_enter(t, LWM2_EARMARK_io);

		round = next_round_s();
		burn(round * 0.3);
		lwm2_earmark_leave(t, prev);
		burn(round * 0.7);
	}
	pthread_join(th, NULL);

	/* The main thread's last periods, as before its final record. */
	lwm2_sampling_catch_up();
	lwm2_lock();
	for (struct lwm2_thread *x = lwm2_p.threads; x; x = x->next) {
		for (int e = 0; e < LWM2_NEARMARKS; e++) {
			uint64_t v = atomic_load(&x->samples[e]);

			s[e] += v;
			if (x->is_main)
				smain += v;
		}
		/* The MPI thread's last periods count where its end finds it
		 * (outside MPI): the main thread's shares are its own. */
		if (x->is_main) {
			merged_main = atomic_load(&x->samples_merged);
			main_io = atomic_load(&x->samples[LWM2_EARMARK_io]);
			main_compute = atomic_load(&x->samples[LWM2_EARMARK_compute]);
		}
	}
	for (int e = 0; e < LWM2_NEARMARKS; e++) {
		s[e] += lwm2_p.dead_samples[e];
		total += s[e];
	}
	smain += lwm2_p.dead_samples_main;
	lwm2_unlock();

	diag("samples: compute %llu, io %llu, mpi %llu, main %llu (%llu counted late, with others)",
	     (unsigned long long)s[LWM2_EARMARK_compute], (unsigned long long)s[LWM2_EARMARK_io],
	     (unsigned long long)s[LWM2_EARMARK_mpi], (unsigned long long)smain,
	     (unsigned long long)merged_main);
	/* 2 x TOTAL_S s of CPU at HZ: TOTAL_S * HZ samples on each thread.  The
	 * kernel checks CPU timers at its tick, so single samples move by a
	 * tick; the counts and shares are checked with room for that.  The
	 * total is lwm2's own count of periods on each thread's clock, also
	 * where the kernel is late.  Under a sanitizer's runtime beside the
	 * other tests on two cores a thread's timer was seen to send no
	 * signal for a quarter of its time (the MPI thread: 144 of 200
	 * periods): those periods count where the thread's end finds it,
	 * outside MPI, so the MPI thread's own share is not checked there. */
	const char *san = getenv("LWM2_SANITIZER");

	ok(total >= 1.7 * TOTAL_S * HZ && total <= 2.3 * TOTAL_S * HZ,
	   "about %d samples in all (%llu)", (int)(2 * TOTAL_S * HZ), (unsigned long long)total);
	if (san && *san && strcmp(san, "no") != 0)
		skip("the thread inside MPI: about %d samples (%llu): not under -fsanitize=%s",
		     (int)(TOTAL_S * HZ), (unsigned long long)s[LWM2_EARMARK_mpi], san);
	else
		ok(s[LWM2_EARMARK_mpi] >= 0.85 * TOTAL_S * HZ &&
		       s[LWM2_EARMARK_mpi] <= 1.15 * TOTAL_S * HZ,
		   "the thread inside MPI: about %d samples (%llu)", (int)(TOTAL_S * HZ),
		   (unsigned long long)s[LWM2_EARMARK_mpi]);
	/* Each sample lands inside I/O with probability 0.3: the share of n
	 * samples is a binomial draw with a standard deviation of
	 * sqrt(0.3 * 0.7 / n), 3.2 points for the main thread's 200.  Four of
	 * them is the bound; attribution that is wrong gives 0, 50 or 100 %.
	 * On a loaded host the kernel checks the timer late and delivers many
	 * periods as one signal's overrun (seen: 20 periods in 2 signals,
	 * with or without lwm2); they all land where that signal finds the
	 * thread, and the share is then the kernel's draw, not lwm2's.  The
	 * shares are checked where at most a tenth of the samples came so. */
	double io = smain ? (double)main_io / (double)smain : 0.0;
	double room = smain ? 4.0 * sqrt(0.3 * 0.7 / (double)smain) : 0.0;

	if (merged_main * 10 > smain) {
		skip("30 %% of the main thread inside I/O (%.1f %%): %llu of %llu "
		     "timer periods counted late, with others (a loaded host)",
		     100.0 * io, (unsigned long long)merged_main, (unsigned long long)smain);
		skip("70 %% of the main thread outside: %llu of %llu periods counted late",
		     (unsigned long long)merged_main, (unsigned long long)smain);
	} else {
		ok(smain >= TOTAL_S * HZ / 2 && fabs(io - 0.3) <= room,
		   "30 %% of the main thread inside I/O: share %.1f %% (%.1f %% allowed either "
		   "way)",
		   100.0 * io, 100.0 * room);
		ok(smain && fabs((double)main_compute / (double)smain - 0.7) <= room,
		   "70 %% of the main thread outside: share %.1f %%",
		   smain ? 100.0 * (double)main_compute / (double)smain : 0.0);
	}
	ok(smain == main_io + main_compute, "the main thread's samples are its earmarks' samples");
	ok(s[LWM2_EARMARK_cuda] == 0, "no samples in an earmark never entered");
	return done_testing();
}
