/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sampling and the signals the core handles.
 *
 * Every measured thread has its own timer on its CPU-time clock
 * (CLOCK_THREAD_CPUTIME_ID, SIGEV_THREAD_ID): it only advances while the
 * thread runs, so a thread blocked in a system call gets no signal and no
 * EINTR, and each sample stands for one period of CPU time of that thread.
 * The handler reads the thread's earmark and bumps one of its counters: no
 * lock, no allocation, errno kept, and a thread without storage is skipped.
 *
 * The application owns its signals.  sigaction() and signal() are
 * intercepted only for the sampling signal and for the signals that end a
 * process, and the application always sees its own dispositions:
 *  - the sampling signal: when the application installs a handler for it,
 *    sampling backs off for good (timers stopped, a pending sample
 *    discarded, LWM2_F_SAMPLING_OFF with the reason) and the call goes
 *    through; SIG_DFL and SIG_IGN (programs that reset every signal) are
 *    only remembered;
 *  - faults (SEGV, BUS, FPE, ILL): while the application leaves them at
 *    SIG_DFL the core's handler saves the record and re-raises the signal
 *    at SIG_DFL; an application handler is installed as is (runtimes that
 *    use faults on purpose, JVMs for one, are not slowed down);
 *  - ABRT and the termination signals (TERM, INT, HUP, QUIT, XCPU): the
 *    core's handler saves the record, then runs the application's handler
 *    with its own mask and flags, or, at SIG_DFL, dies by the signal.
 * SIGPROF and SIGALRM are never touched.
 *
 * A sample is never something the application can see.  A thread that
 * blocks the sampling signal (to read signals with sigwait, sigtimedwait or
 * signalfd) would find the pending samples there, so its timer is stopped
 * before the mask blocks the signal (sigprocmask and pthread_sigmask are
 * intercepted) and started again when it unblocks it; a thread created with
 * the signal blocked starts with its timer stopped.  The signal sent by
 * anyone else (kill, sigqueue) is told from a sample by the timer's mark
 * and gets the application's disposition: at SIG_DFL it ends the process.
 */
#include "core_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NSIGS 65

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

struct vsig {
	bool managed; /* intercepted at all */
	bool ours;    /* the core's handler is installed; `app` is what the application set */
	bool fault;
	struct sigaction app;
};

static struct vsig vs[NSIGS];
__attribute__((unused)) static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

static const int fault_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
static const int term_sigs[] = {SIGABRT, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU};

int lwm2_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
#ifdef LWM2_NO_INTERPOSE
	real_sigaction = sigaction;
#else
	if (!real_sigaction)
		real_sigaction = lwm2_real("sigaction");
#endif
	if (!real_sigaction) {
		errno = ENOSYS;
		return -1;
	}
	return real_sigaction(sig, act, old);
}

/* ---- sampling ---- */

/* The si_value of our timers' signals. */
static char timer_mark;

static void foreign_sample_signal(int sig);

static int64_t period_ns(void)
{
	return 1000000000L / (long)lwm2_p.sample_hz;
}

/* The calling thread's CPU time in ns, -1 if unreadable. */
static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The whole periods the calling thread's clock NOW has passed on its grid;
 * 0 while the grid is off (its timer stopped, or the clock unreadable). */
static uint64_t grid_periods(const struct lwm2_thread *t, int64_t now)
{
	int64_t base = t->sample_base_ns;

	return base >= 0 && now > base ? (uint64_t)((now - base) / period_ns()) : 0;
}

/* The periods one signal of the thread's timer stands for: those its clock
 * has passed on the grid since the last count, never fewer than the kernel
 * says (1 + si_overrun).  In the handler, which no sample interrupts. */
static uint64_t periods_of_signal(struct lwm2_thread *t, const siginfo_t *si)
{
	uint64_t seen = atomic_load_explicit(&t->samples_seen, memory_order_relaxed);
	uint64_t n = 1 + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0);
	int64_t now = thread_cpu_ns();
	uint64_t due;

	if (now >= 0 && atomic_exchange_explicit(&t->sample_rebase, 0, memory_order_relaxed))
		t->sample_base_ns = now - (int64_t)(seen + n) * period_ns();
	else if ((due = grid_periods(t, now)) > seen + n)
		n = due - seen;
	atomic_store_explicit(&t->samples_seen, seen + n, memory_order_relaxed);
	return n;
}

static void count_samples(struct lwm2_thread *t, uint64_t n)
{
	uint32_t m = atomic_load_explicit(&t->earmark, memory_order_relaxed);

	if (m >= LWM2_NEARMARKS)
		m = LWM2_EARMARK_compute;
	/* fetch_add: the thread counting its own rest can be interrupted by
	 * a sample in the middle, and neither count may be lost. */
	atomic_fetch_add_explicit(&t->samples[m], n, memory_order_relaxed);
	if (LWM2_UNLIKELY(n > 1))
		atomic_fetch_add_explicit(&t->samples_merged, n - 1, memory_order_relaxed);
}

static void sample_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct lwm2_thread *t = lwm2_self;

	(void)uc;
	if (!si || si->si_code != SI_TIMER || si->si_value.sival_ptr != &timer_mark) {
		foreign_sample_signal(sig);
		errno = saved;
		return;
	}
	if (t) {
		count_samples(t, periods_of_signal(t, si));
		/* A process without a heartbeat that keeps running: its record
		 * is written from here at slice boundaries. */
		if (LWM2_UNLIKELY(!__atomic_load_n(&lwm2_p.hb_running, __ATOMIC_RELAXED)))
			lwm2_checkpoint_from_handler();
	}
	errno = saved;
}

/* Counts, in the thread itself and at its earmark, the periods its clock
 * has passed that no signal has counted yet, before its timer stops or its
 * counts are final.  A sample may come in the middle: whoever moves
 * samples_seen first counts those periods. */
static void catch_up(struct lwm2_thread *t)
{
	if (!lwm2_p.sampling_on || !t->timer_armed)
		return;
	for (;;) {
		uint64_t seen = atomic_load_explicit(&t->samples_seen, memory_order_relaxed);
		uint64_t due = grid_periods(t, thread_cpu_ns());

		if (due <= seen || atomic_load_explicit(&t->sample_rebase, memory_order_relaxed))
			return;
		if (atomic_compare_exchange_weak_explicit(
		        &t->samples_seen, &seen, due, memory_order_relaxed, memory_order_relaxed)) {
			count_samples(t, due - seen);
			return;
		}
	}
}

void lwm2_sampling_catch_up(void)
{
	if (lwm2_self)
		catch_up(lwm2_self);
}

/* The grid starts at the thread's clock read before its timer is set, so
 * no expiry of the kernel comes before the grid's. */
static void grid_start(struct lwm2_thread *t)
{
	int64_t now = thread_cpu_ns();
	uint64_t seen = atomic_load_explicit(&t->samples_seen, memory_order_relaxed);

	t->sample_base_ns = now < 0 ? -1 : now - (int64_t)seen * period_ns();
}

static struct itimerspec period(void)
{
	struct itimerspec its;
	long ns = period_ns();

	its.it_interval.tv_sec = ns / 1000000000L;
	its.it_interval.tv_nsec = ns % 1000000000L;
	its.it_value = its.it_interval;
	return its;
}

static int install_sample_handler(struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sample_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask); /* a sample never interrupts another handler of ours */
	return lwm2_real_sigaction(lwm2_p.sample_sig, &sa, old);
}

/* Whether the calling thread blocks the sampling signal (the raw system
 * call: the intercepted functions below call this). */
static bool sample_blocked(void)
{
	uint64_t cur = 0;

	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, sizeof(cur)) != 0)
		return false;
	return (cur >> (lwm2_p.sample_sig - 1)) & 1;
}

/* Under the lock, in the thread itself. */
void lwm2_sampling_thread_start(struct lwm2_thread *t)
{
	struct sigevent sev;
	struct itimerspec its;

	if (!lwm2_p.sampling_on || t->timer_armed)
		return;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = lwm2_p.sample_sig;
	sev.sigev_notify_thread_id = t->tid;
	sev.sigev_value.sival_ptr = &timer_mark;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t->timer) != 0) {
		lwm2_debug("lwm2: sampling: couldn't create a timer for thread %d: %s", t->tid,
		           strerror(errno));
		return;
	}
	t->timer_armed = true;
	atomic_store_explicit(&t->samples_seen, 0, memory_order_relaxed);
	atomic_store_explicit(&t->sample_rebase, 0, memory_order_relaxed);
	t->sample_base_ns = -1;
	/* Created with the signal blocked: samples would stay pending where
	 * the application reads its signals. */
	t->timer_paused = sample_blocked();
	if (!t->timer_paused) {
		its = period();
		grid_start(t);
		timer_settime(t->timer, 0, &its, NULL);
	}
}

/* The calling thread's timer, before its mask blocks the signal. */
static void pause_self(void)
{
	static const struct itimerspec zero;
	struct lwm2_thread *t = lwm2_self;

	if (!t || !t->timer_armed || t->timer_paused)
		return;
	t->timer_paused = true;
	timer_settime(t->timer, 0, &zero, NULL);
	/* The time it ran unblocked counts; the time it blocks does not. */
	catch_up(t);
	t->sample_base_ns = -1;
}

/* After a change of the calling thread's mask: the timer runs exactly
 * while the signal is unblocked. */
__attribute__((unused)) static void mask_changed(void)
{
	struct lwm2_thread *t = lwm2_self;
	struct itimerspec its;

	if (!t || !t->timer_armed || !lwm2_p.sampling_on)
		return;
	if (sample_blocked())
		pause_self();
	else if (t->timer_paused) {
		t->timer_paused = false;
		its = period();
		grid_start(t);
		timer_settime(t->timer, 0, &its, NULL);
	}
}

__attribute__((unused)) static bool will_block(int how, const sigset_t *set)
{
	return set && lwm2_p.sampling_on && (how == SIG_BLOCK || how == SIG_SETMASK) &&
	       sigismember(set, lwm2_p.sample_sig) == 1;
}

/* Under the lock. */
void lwm2_sampling_thread_end(struct lwm2_thread *t)
{
	if (t->timer_armed) {
		timer_delete(t->timer);
		if (t == lwm2_self && !t->timer_paused)
			catch_up(t);
	}
	t->timer_armed = false;
}

void lwm2_sampling_stop_all(void)
{
	static const struct itimerspec zero;

	for (struct lwm2_thread *t = lwm2_p.threads; t; t = t->next)
		if (t->timer_armed)
			timer_settime(t->timer, 0, &zero, NULL);
}

void lwm2_sampling_resume_all(void)
{
	struct itimerspec its;

	if (!lwm2_p.sampling_on)
		return;
	install_sample_handler(NULL);
	its = period();
	for (struct lwm2_thread *t = lwm2_p.threads; t; t = t->next)
		if (t->timer_armed && !t->timer_paused) {
			/* Another thread's clock is not ours to read here: its
			 * handler begins the grid anew. */
			atomic_store_explicit(&t->sample_rebase, 1, memory_order_relaxed);
			timer_settime(t->timer, 0, &its, NULL);
		}
}

/* Before exec with the timers stopped: a sample still pending would be
 * delivered to the new image at SIG_DFL and kill it.  Setting SIG_IGN
 * discards it; the new image then starts at SIG_DFL as it would have. */
static void drain(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	lwm2_real_sigaction(sig, &sa, NULL);
	sa.sa_handler = SIG_DFL;
	lwm2_real_sigaction(sig, &sa, NULL);
}

void lwm2_sampling_drain(void)
{
	int sig = lwm2_p.sample_sig;

	if (!lwm2_p.sampling_on)
		return;
	drain(sig);
	if (vs[sig].app.sa_handler == SIG_IGN)
		lwm2_real_sigaction(sig, &vs[sig].app, NULL);
}

void lwm2_sampling_init(void)
{
	struct sigaction cur;

	lwm2_p.sampling_on = false;
	/* Installed and queried in one system call. */
	if (install_sample_handler(&cur) != 0) {
		lwm2_group_missing(LWM2_G_SAMPLING, "couldn't install the sampling handler");
		lwm2_set_flag(LWM2_F_SAMPLING_OFF);
		return;
	}
	/* Someone (an earlier constructor, or an inherited SIG_IGN) already
	 * uses the signal: give it back, do not take it. */
	if (cur.sa_handler != SIG_DFL) {
		lwm2_real_sigaction(lwm2_p.sample_sig, &cur, NULL);
		lwm2_group_missing(LWM2_G_SAMPLING, "the sampling signal is already in use");
		lwm2_set_flag(LWM2_F_SAMPLING_OFF);
		return;
	}
	vs[lwm2_p.sample_sig].managed = true;
	vs[lwm2_p.sample_sig].ours = true;
	memset(&vs[lwm2_p.sample_sig].app, 0, sizeof(cur));
	vs[lwm2_p.sample_sig].app.sa_handler = SIG_DFL;
	lwm2_p.sampling_on = true;
	lwm2_p.img->sample_period_us = 1000000u / lwm2_p.sample_hz;
	lwm2_p.img->sample_signal = lwm2_p.sample_sig;
}

__attribute__((unused)) static void sampling_backoff(int sig)
{
	char why[LWM2_REASON_LEN];

	lwm2_in_core++;
	lwm2_lock();
	if (lwm2_p.sampling_on) {
		lwm2_sampling_stop_all();
		lwm2_p.sampling_on = false;
		lwm2_p.img->flags |= LWM2_F_SAMPLING_OFF;
		lwm2_p.img->sample_period_us = 0;
	}
	lwm2_unlock();
	lwm2_in_core--;
	snprintf(why, sizeof(why), "the application uses the sampling signal %d", sig);
	lwm2_group_missing(LWM2_G_SAMPLING, why);
	drain(sig);
}

/* The sampling signal sent by someone else while the application leaves it
 * at SIG_DFL (it would have ended the process) or SIG_IGN (nothing). */
static void foreign_sample_signal(int sig)
{
	struct sigaction dfl;

	if (vs[sig].app.sa_handler != SIG_DFL)
		return;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	lwm2_real_sigaction(sig, &dfl, NULL);
	if (lwm2_finish_defer(sig))
		return;
	lwm2_finish(LWM2_END_SIGNAL, 0, sig, true);
	/* Delivered at SIG_DFL once this handler returns. */
	syscall(SYS_tgkill, lwm2_raw_getpid(), lwm2_raw_gettid(), sig);
}

/* ---- termination signals ---- */

static void install_ours(int sig, const struct sigaction *app);

static void term_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction app = vs[sig].app;

	if (app.sa_handler == SIG_DFL) {
		struct sigaction dfl;

		/* Die as the application would have, with the record saved. */
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		lwm2_real_sigaction(sig, &dfl, NULL);
		/* The process is on its way out and writing: it ends by sig
		 * once its record is written. */
		if (lwm2_finish_defer(sig)) {
			errno = saved;
			return;
		}
		lwm2_finish(LWM2_END_SIGNAL, 0, sig, true);
		/* Pending until the handler returns (the signal is blocked in
		 * it), then delivered at SIG_DFL; a fault that repeats on return
		 * ends the same way. */
		syscall(SYS_tgkill, lwm2_raw_getpid(), lwm2_raw_gettid(), sig);
		errno = saved;
		return;
	}
	lwm2_finish(LWM2_END_CHECKPOINT, 0, sig, true);
	if (app.sa_flags & SA_RESETHAND) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		install_ours(sig, &dfl);
	}
	errno = saved;
	if (app.sa_flags & SA_SIGINFO)
		app.sa_sigaction(sig, si, uc);
	else if (app.sa_handler != SIG_IGN)
		app.sa_handler(sig);
}

/* Under sig_lock. */
static void install_ours(int sig, const struct sigaction *app)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = term_handler;
	if (app->sa_handler == SIG_DFL) {
		/* An alternate stack, if the application has one, lets the
		 * record be saved after a stack overflow. */
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	} else {
		sa.sa_mask = app->sa_mask;
		sa.sa_flags = (app->sa_flags | SA_SIGINFO) & ~(int)SA_RESETHAND;
	}
	vs[sig].app = *app;
	if (lwm2_real_sigaction(sig, &sa, NULL) == 0)
		vs[sig].ours = true;
}

/* install_ours(sig, SIG_DFL) that also returns what was there. */
static int install_dfl(int sig, struct sigaction *cur)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = term_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	memset(&vs[sig].app, 0, sizeof(vs[sig].app));
	vs[sig].app.sa_handler = SIG_DFL;
	if (lwm2_real_sigaction(sig, &sa, cur) != 0)
		return -1;
	vs[sig].ours = true;
	return 0;
}

void lwm2_signals_init(void)
{
	for (size_t i = 0; i < sizeof(fault_sigs) / sizeof(fault_sigs[0]); i++)
		vs[fault_sigs[i]].fault = true;
	for (int sig = 1; sig < NSIGS; sig++) {
		struct sigaction cur;

		if (sig == lwm2_p.sample_sig)
			continue;
		if (!vs[sig].fault) {
			bool term = false;

			for (size_t i = 0; i < sizeof(term_sigs) / sizeof(term_sigs[0]); i++)
				term |= term_sigs[i] == sig;
			if (!term)
				continue;
		}
		/* Installed and queried in one call (a system call costs ~1.3 us
		 * on a VM, and every process pays these): a signal nobody took
		 * yet is at SIG_DFL, the rare other case is put right after. */
		if (install_dfl(sig, &cur) != 0)
			continue;
		vs[sig].managed = true;
		if (cur.sa_handler == SIG_DFL)
			continue;
		vs[sig].ours = false;
		if (!vs[sig].fault && cur.sa_handler != SIG_IGN)
			install_ours(sig, &cur);
		else
			lwm2_real_sigaction(sig, &cur, NULL);
	}
}

#ifndef LWM2_NO_INTERPOSE
LWM2_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev;
	int rc = 0;

	if (sig <= 0 || sig >= NSIGS || !vs[sig].managed)
		return lwm2_real_sigaction(sig, act, old);
	pthread_mutex_lock(&sig_lock);
	if (vs[sig].ours)
		prev = vs[sig].app;
	else if (lwm2_real_sigaction(sig, NULL, &prev) != 0)
		rc = -1;
	if (rc == 0 && act) {
		if (sig == lwm2_p.sample_sig &&
		    (act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN)) {
			/* Resetting (or ignoring) the signal changes nothing the
			 * application can see while our handler swallows the
			 * samples: keep sampling, remember the wish (an exec
			 * passes SIG_IGN on). */
			vs[sig].app = *act;
		} else if (sig == lwm2_p.sample_sig) {
			vs[sig].managed = false;
			vs[sig].ours = false;
			sampling_backoff(sig);
			rc = lwm2_real_sigaction(sig, act, NULL);
		} else if (act->sa_handler == SIG_IGN ||
		           (vs[sig].fault && act->sa_handler != SIG_DFL)) {
			rc = lwm2_real_sigaction(sig, act, NULL);
			if (rc == 0)
				vs[sig].ours = false;
		} else {
			install_ours(sig, act);
			rc = vs[sig].ours ? 0 : -1;
		}
	}
	pthread_mutex_unlock(&sig_lock);
	if (rc == 0 && old)
		*old = prev;
	return rc;
}

LWM2_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa, old;

	if (handler == SIG_ERR || sig <= 0 || sig >= NSIGS) {
		errno = EINVAL;
		return SIG_ERR;
	}
	/* BSD semantics, as glibc's signal(). */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	sa.sa_flags = SA_RESTART;
	/* sigaction returns 0 or -1: "!= 0" says so to clang's analyzer, which
	 * saw a positive return leave old unset */
	if (sigaction(sig, &sa, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}
#endif

#ifndef LWM2_NO_INTERPOSE
static int (*real_pthread_sigmask)(int, const sigset_t *, sigset_t *);
static int (*real_sigprocmask)(int, const sigset_t *, sigset_t *);

LWM2_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	int rc;

	if (!real_pthread_sigmask)
		real_pthread_sigmask = lwm2_real("pthread_sigmask");
	if (!real_pthread_sigmask)
		return ENOSYS;
	if (will_block(how, set))
		pause_self();
	rc = real_pthread_sigmask(how, set, old);
	if (set)
		mask_changed();
	return rc;
}

LWM2_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int rc, saved;

	if (!real_sigprocmask)
		real_sigprocmask = lwm2_real("sigprocmask");
	if (!real_sigprocmask) {
		errno = ENOSYS;
		return -1;
	}
	if (will_block(how, set))
		pause_self();
	rc = real_sigprocmask(how, set, old);
	saved = errno;
	if (set)
		mask_changed();
	errno = saved;
	return rc;
}
#endif
