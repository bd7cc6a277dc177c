/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hardware-counter module: cycles, instructions, FP instructions, L1D
 * accesses and misses, last-level misses, per thread, summed per process
 * and per time slice.
 *
 * How, and why this way
 * ---------------------
 * - libpapi is loaded with dlopen, never linked: every process of every
 *   job loads liblwm2, and PAPI_library_init costs milliseconds (4 ms on a
 *   2.6 GHz EPYC: it reads the CPU tables of every PMU).  Nothing of it
 *   runs at process start: the first heartbeat does it, so a process that
 *   ends before its first slice boundary never pays, and the counters
 *   cover the run from that boundary on (the ratios the digest derives do
 *   not depend on the start).
 * - PAPI is used for what it is good at: the portable names (presets),
 *   which of them exist here, and which fit on the PMU together (an event
 *   set is filled one candidate at a time; PAPI_add_event tries the real
 *   schedule).  Then the chosen events are encoded for perf_event by libpfm
 *   (PAPI's own back end), PAPI is shut down again and the counting itself
 *   uses one perf_event group per thread.  A group opened for a thread id
 *   counts that thread only and can be read from any thread: so the
 *   heartbeat reads every thread's counters at each slice end, the threads
 *   that existed before the first heartbeat (the main thread above all)
 *   are counted too, and nothing runs in the application's threads but a
 *   read at thread end.  PAPI's own per-thread event sets allow neither
 *   (a set is read by its own thread only, and PAPI_attach ptrace-stops
 *   the target).
 * - The application comes first.  If it initialises PAPI (we interpose
 *   PAPI_library_init; the high-level API goes through it too) we close
 *   our counters before its call goes on, and the record says so.  If our
 *   groups stop getting the PMU (the kernel multiplexes when someone else,
 *   e.g. the application through perf_event_open, wants the counters) we
 *   also close them.  PAPI is shut down after our selection, so an
 *   application that starts PAPI later finds it pristine.
 * - The counters are values in the thread's counter buffers (hwc_*),
 *   written only under this module's lock: by the heartbeat (slice ends),
 *   by the thread itself at its end, by the exit path.  No other code
 *   writes those slots, so the single-writer rule of lwm2_core.h holds per
 *   slot.  Never a counter read per intercepted call.
 */
#define _GNU_SOURCE
#include "lwm2_core.h"
#include "papi_events.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Threads counted at once; more are left uncounted (each costs fds). */
#define HWC_MAX_THREADS 512
/* Native events per role (a preset may be the sum of several). */
#define HWC_MAX_NATIVE 4
#define HWC_MAX_FDS 16

/* libpfm's encoding call, as libpfm4 declares it (stable ABI); we do not
 * need its headers, only the function libpapi already loaded. */
#define LWM2_PFM_PLM3 0x08
#define LWM2_PFM_OS_PERF_EVENT 1
typedef struct {
	struct perf_event_attr *attr;
	char **fstr;
	size_t size;
	int idx;
	int cpu;
	int flags;
	int pad0;
} lwm2_pfm_perf_encode_arg_t;

enum hwc_state {
	HWC_IDLE = 0, /* not set up yet (waiting for the first heartbeat) */
	HWC_ON,       /* counting */
	HWC_NONE,     /* nothing to count: reason given */
	HWC_YIELDED,  /* the application took the counters */
	HWC_DONE,     /* final read made */
};

struct hwc_thread {
	struct lwm2_thread *t;
	int tid;
	int nfd;
	int fd[HWC_MAX_FDS];
	uint64_t last[LWM2_HWC_NROLES];
	bool used;
};

static struct {
	pthread_mutex_t lock;
	_Atomic int state;
	struct lwm2_hwc_plan plan;
	struct lwm2_hwc_choice choice;
	bool plan_bad;
	char reason[LWM2_REASON_LEN];

	/* encoded events: attr[i] counts for role attr_role[i] */
	int nattr;
	struct perf_event_attr attr[HWC_MAX_FDS];
	int attr_role[HWC_MAX_FDS];

	int fds_open, fds_max;
	struct hwc_thread slot[HWC_MAX_THREADS];

	/* a missing reason / runtime flag to hand to the core outside any lock */
	char pending_reason[LWM2_REASON_LEN];
	uint32_t pending_runtime;
} hwc = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* PAPI as loaded. */
static struct {
	void *handle;
	int (*library_init)(int);
	int (*create_eventset)(int *);
	int (*add_named_event)(int, const char *);
	int (*cleanup_eventset)(int);
	int (*destroy_eventset)(int *);
	int (*event_name_to_code)(const char *, int *);
	int (*get_event_info)(int, PAPI_event_info_t *);
	void (*shutdown)(void);
	int (*pfm_encode)(const char *, int, int, void *);
} papi;

/* Set while this thread runs our own PAPI calls: an interposed PAPI entry
 * point reached from inside them is ours, not the application's. */
static __thread int in_own_papi __attribute__((tls_model("initial-exec")));

static int perf_open(struct perf_event_attr *a, int tid, int group)
{
	return (int)syscall(SYS_perf_event_open, a, tid, -1, group, PERF_FLAG_FD_CLOEXEC);
}

/* Give the core a reason/runtime flag; never called with hwc.lock held
 * (the core takes its own lock, and the heartbeat holds the core's lock
 * when it calls us). */
static void deliver_pending(void)
{
	char reason[LWM2_REASON_LEN];
	uint32_t rt;

	if (!hwc.pending_reason[0] && !hwc.pending_runtime)
		return;
	pthread_mutex_lock(&hwc.lock);
	memcpy(reason, hwc.pending_reason, sizeof(reason));
	rt = hwc.pending_runtime;
	hwc.pending_reason[0] = '\0';
	hwc.pending_runtime = 0;
	pthread_mutex_unlock(&hwc.lock);
	if (reason[0])
		lwm2_group_missing(LWM2_G_HWC, reason);
	if (rt)
		lwm2_set_runtime(rt);
}

/* Under hwc.lock. */
static void set_reason(const char *why)
{
	snprintf(hwc.reason, sizeof(hwc.reason), "%s", why);
	snprintf(hwc.pending_reason, sizeof(hwc.pending_reason), "%s", why);
}

/* ---- counting ----------------------------------------------------------- */

static void close_slot(struct hwc_thread *s)
{
	/* Members first: closing the leader alone would leave them orphaned
	 * in the kernel until they are closed too. */
	for (int i = s->nfd - 1; i >= 0; i--)
		close(s->fd[i]);
	hwc.fds_open -= s->nfd;
	s->nfd = 0;
}

/* Open the group for thread s->tid; under hwc.lock. */
static void open_slot(struct hwc_thread *s)
{
	if (s->nfd || hwc.nattr == 0 || hwc.fds_open + hwc.nattr > hwc.fds_max)
		return;
	for (int i = 0; i < hwc.nattr; i++) {
		struct perf_event_attr a = hwc.attr[i];
		int fd;

		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				PERF_FORMAT_TOTAL_TIME_RUNNING;
		a.disabled = 0;
		a.inherit = 0;
		fd = perf_open(&a, s->tid, i ? s->fd[0] : -1);
		if (fd < 0) {
			close_slot(s);
			return;
		}
		s->fd[s->nfd++] = fd;
		hwc.fds_open++;
	}
	memset(s->last, 0, sizeof(s->last));
}

/*
 * Read s's group and add what is new since the last read into the thread's
 * buffer.  Returns false when the group lost the PMU to someone else.
 * Under hwc.lock.
 */
static bool read_slot(struct hwc_thread *s)
{
	uint64_t buf[3 + HWC_MAX_FDS], sum[LWM2_HWC_NROLES] = {0};
	ssize_t n;

	if (!s->nfd)
		return true;
	n = read(s->fd[0], buf, sizeof(buf));
	if (n < (ssize_t)(3 * sizeof(uint64_t)) || buf[0] != (uint64_t)s->nfd)
		return true; /* nothing to learn: keep what we had */
	uint64_t enabled = buf[1], running = buf[2];

	if (running == 0)
		return enabled == 0;
	for (int i = 0; i < s->nfd; i++) {
		uint64_t v = buf[3 + i];

		/* Scale if multiplexed, as perf does; a large gap makes the
		 * caller yield anyway. */
		if (running < enabled)
			v = (uint64_t)((double)v * ((double)enabled / (double)running));
		sum[hwc.attr_role[i]] += v;
	}
	for (int r = 0; r < LWM2_HWC_NROLES; r++) {
		if (sum[r] > s->last[r]) {
			lwm2_count(s->t, lwm2_hwc_role_counter((enum lwm2_hwc_role)r),
				   sum[r] - s->last[r]);
			s->last[r] = sum[r];
		}
	}
	return running >= enabled - enabled / 10;
}

/* Read and close every group; under hwc.lock. */
static void stop_all(bool read_first)
{
	for (int i = 0; i < HWC_MAX_THREADS; i++) {
		struct hwc_thread *s = &hwc.slot[i];

		if (!s->used || !s->nfd)
			continue;
		if (read_first)
			read_slot(s);
		close_slot(s);
	}
}

/* ---- setup (first heartbeat) --------------------------------------------- */

static enum lwm2_hwc_verdict try_event(void *ctx, enum lwm2_hwc_role role, const char *name)
{
	int es = *(int *)ctx, rc;

	(void)role;
	rc = papi.add_named_event(es, name);
	if (rc == PAPI_OK)
		return LWM2_HWC_ACCEPTED;
	if (rc == PAPI_ECNFLCT || rc == PAPI_ECOUNT || rc == PAPI_EMULPASS)
		return LWM2_HWC_CONFLICT;
	return LWM2_HWC_ABSENT;
}

static int encode_native(const char *name, int role)
{
	lwm2_pfm_perf_encode_arg_t arg;
	struct perf_event_attr a;

	if (hwc.nattr >= HWC_MAX_FDS)
		return -1;
	memset(&a, 0, sizeof(a));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &a;
	arg.size = sizeof(arg);
	if (papi.pfm_encode(name, LWM2_PFM_PLM3, LWM2_PFM_OS_PERF_EVENT, &arg) != 0)
		return -1;
	a.size = sizeof(a);
	hwc.attr[hwc.nattr] = a;
	hwc.attr_role[hwc.nattr] = role;
	hwc.nattr++;
	return 0;
}

/* A chosen event as perf_event attributes: a preset is its native events
 * (summed when PAPI derives it by adding), a native event is itself. */
static int encode_event(const char *name, int role)
{
	PAPI_event_info_t info;
	int code, start = hwc.nattr;

	if (papi.event_name_to_code(name, &code) != PAPI_OK)
		return -1;
	if (!(code & PAPI_PRESET_MASK))
		return encode_native(name, role);
	if (papi.get_event_info(code, &info) != PAPI_OK || info.count == 0 ||
	    info.count > HWC_MAX_NATIVE)
		return -1;
	if (info.count > 1 && strcmp(info.derived, "DERIVED_ADD") != 0)
		return -1;
	for (unsigned i = 0; i < info.count; i++)
		if (encode_native(info.name[i], role) < 0) {
			hwc.nattr = start;
			return -1;
		}
	return 0;
}

static bool load_papi(void)
{
	static const char *const names[] = {"libpapi.so.7.0", "libpapi.so.7", "libpapi.so"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !papi.handle; i++)
		papi.handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!papi.handle)
		return false;
#define SYM(field, name) (*(void **)&papi.field = dlsym(papi.handle, name))
	SYM(library_init, "PAPI_library_init");
	SYM(create_eventset, "PAPI_create_eventset");
	SYM(add_named_event, "PAPI_add_named_event");
	SYM(cleanup_eventset, "PAPI_cleanup_eventset");
	SYM(destroy_eventset, "PAPI_destroy_eventset");
	SYM(event_name_to_code, "PAPI_event_name_to_code");
	SYM(get_event_info, "PAPI_get_event_info");
	SYM(shutdown, "PAPI_shutdown");
	SYM(pfm_encode, "pfm_get_os_event_encoding");
#undef SYM
	return papi.library_init && papi.create_eventset && papi.add_named_event &&
	       papi.cleanup_eventset && papi.destroy_eventset && papi.event_name_to_code &&
	       papi.get_event_info && papi.shutdown && papi.pfm_encode;
}

static void fd_budget(void)
{
	struct rlimit rl;

	/* A quarter of the descriptors the process may open: an application
	 * must never get EMFILE because of us. */
	hwc.fds_max = 256;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		hwc.fds_max = (int)(rl.rlim_cur / 4);
	if (hwc.fds_max > 4096)
		hwc.fds_max = 4096;
}

/* Under hwc.lock, in the heartbeat.  Leaves state ON or NONE. */
static void setup(void)
{
	int es = PAPI_NULL;
	char why[LWM2_REASON_LEN];

	in_own_papi++;
	if (!load_papi()) {
		set_reason("PAPI is not installed on this node");
		goto none;
	}
	if (papi.library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
		set_reason("PAPI does not start on this node");
		goto none;
	}
	if (papi.create_eventset(&es) != PAPI_OK) {
		papi.shutdown();
		set_reason("PAPI does not start on this node");
		goto none;
	}
	lwm2_hwc_select(&hwc.plan, try_event, &es, &hwc.choice);
	for (int r = 0; r < LWM2_HWC_NROLES; r++) {
		int c = hwc.choice.cand[r];

		if (c >= 0 && encode_event(hwc.plan.cand[r][c], r) < 0) {
			/* Known to PAPI but not expressible for perf_event
			 * (a derived preset that subtracts): not measured. */
			hwc.choice.cand[r] = -1;
			hwc.choice.why[r] = LWM2_HWC_WHY_ABSENT;
			hwc.choice.nchosen--;
		}
	}
	papi.cleanup_eventset(es);
	papi.destroy_eventset(&es);
	/* Leave PAPI as we found it: the application may start it later. */
	papi.shutdown();
	in_own_papi--;

	if (lwm2_hwc_none_reason(&hwc.plan, &hwc.choice, why, sizeof(why)) || hwc.nattr == 0) {
		set_reason(hwc.nattr ? why : why[0] ? why : "no hardware counters on this platform");
		atomic_store(&hwc.state, HWC_NONE);
		return;
	}
	fd_budget();
	atomic_store(&hwc.state, HWC_ON);
	return;
none:
	in_own_papi--;
	atomic_store(&hwc.state, HWC_NONE);
}

/* ---- hooks ---------------------------------------------------------------- */

static void papi_init(void)
{
	char err[LWM2_REASON_LEN - 20];

	/* Only the string work here: this runs in every process at start. */
	if (lwm2_hwc_plan_parse(&hwc.plan, getenv("LWM2_EVENTS"), err, sizeof(err)) < 0) {
		char why[LWM2_REASON_LEN];

		snprintf(why, sizeof(why), "bad LWM2_EVENTS: %s", err);
		atomic_store(&hwc.state, HWC_NONE);
		lwm2_group_missing(LWM2_G_HWC, why);
	} else if (hwc.plan.off) {
		atomic_store(&hwc.state, HWC_NONE);
		lwm2_group_missing(LWM2_G_HWC, "switched off (LWM2_EVENTS=none)");
	}
}

static void papi_thread_start(struct lwm2_thread *t)
{
	int st = atomic_load(&hwc.state);
	struct hwc_thread *s = NULL;

	if (st != HWC_IDLE && st != HWC_ON)
		return;
	pthread_mutex_lock(&hwc.lock);
	for (int i = 0; i < HWC_MAX_THREADS; i++)
		if (!hwc.slot[i].used) {
			s = &hwc.slot[i];
			break;
		}
	if (s) {
		memset(s, 0, sizeof(*s));
		s->used = true;
		s->t = t;
		s->tid = t->tid;
		t->module_state[LWM2_MODSTATE_PAPI] = s;
		if (atomic_load(&hwc.state) == HWC_ON)
			open_slot(s);
	}
	pthread_mutex_unlock(&hwc.lock);
	deliver_pending();
}

static void papi_thread_end(struct lwm2_thread *t)
{
	struct hwc_thread *s = t->module_state[LWM2_MODSTATE_PAPI];

	if (!s)
		return;
	pthread_mutex_lock(&hwc.lock);
	if (s->used && s->t == t) {
		if (s->nfd) {
			if (atomic_load(&hwc.state) == HWC_ON)
				read_slot(s);
			close_slot(s);
		}
		s->used = false;
		s->t = NULL;
	}
	t->module_state[LWM2_MODSTATE_PAPI] = NULL;
	pthread_mutex_unlock(&hwc.lock);
	deliver_pending();
}

/*
 * At each slice end: in the heartbeat (with the core's lock held: no core
 * calls from here), and once more on the exit path in a measured thread.
 * Only the heartbeat sets up (it has no lwm2_self): a process that ends
 * before its first slice boundary never loads PAPI.
 */
static void papi_slice_end(void)
{
	int st = atomic_load(&hwc.state);

	if (st == HWC_IDLE && lwm2_self)
		return;
	if (st != HWC_IDLE && st != HWC_ON)
		return;
	pthread_mutex_lock(&hwc.lock);
	if (atomic_load(&hwc.state) == HWC_IDLE)
		setup();
	if (atomic_load(&hwc.state) == HWC_ON) {
		bool lost = false;

		for (int i = 0; i < HWC_MAX_THREADS; i++) {
			struct hwc_thread *s = &hwc.slot[i];

			if (!s->used)
				continue;
			if (!s->nfd)
				open_slot(s);
			else if (!read_slot(s))
				lost = true;
		}
		if (lost) {
			stop_all(false);
			atomic_store(&hwc.state, HWC_YIELDED);
			set_reason("the hardware counters were taken by another user");
		}
	}
	pthread_mutex_unlock(&hwc.lock);
}

static void papi_fini(void)
{
	pthread_mutex_lock(&hwc.lock);
	if (atomic_load(&hwc.state) == HWC_ON) {
		stop_all(true);
		atomic_store(&hwc.state, HWC_DONE);
	}
	pthread_mutex_unlock(&hwc.lock);
	deliver_pending();
}

/*
 * The child of fork has one thread and copies of our descriptors, which
 * count the parent's threads: close the copies (the parent keeps its
 * own) and count the surviving thread afresh.  The lock may have been
 * held by a parent thread that does not exist here.
 */
static void papi_fork_child(void)
{
	struct lwm2_thread *self = lwm2_self;

	pthread_mutex_init(&hwc.lock, NULL);
	for (int i = 0; i < HWC_MAX_THREADS; i++) {
		struct hwc_thread *s = &hwc.slot[i];

		if (s->used && s->nfd)
			close_slot(s);
		if (s->used && s->t)
			s->t->module_state[LWM2_MODSTATE_PAPI] = NULL;
		s->used = false;
	}
	hwc.fds_open = 0;
	if (atomic_load(&hwc.state) == HWC_DONE)
		atomic_store(&hwc.state, HWC_ON);
	if (self)
		papi_thread_start(self);
}

LWM2_HIDDEN const struct lwm2_module lwm2_module_papi = {
	.name = "papi",
	.init = papi_init,
	.thread_start = papi_thread_start,
	.thread_end = papi_thread_end,
	.slice_end = papi_slice_end,
	.fini = papi_fini,
	.fork_child = papi_fork_child,
};

/* ---- the application's own PAPI ------------------------------------------ */

/*
 * Every PAPI program calls PAPI_library_init first (the high-level API
 * does it for the program).  Close our counters so the application has
 * the PMU to itself, then let its call go on.
 */
LWM2_EXPORT int PAPI_library_init(int version)
{
	static int (*real)(int);
	int (*fn)(int);

	if (in_own_papi)
		return papi.library_init ? papi.library_init(version) : PAPI_ESYS;
	pthread_mutex_lock(&hwc.lock);
	{
		int st = atomic_load(&hwc.state);

		if (st == HWC_ON)
			stop_all(true);
		if (st == HWC_IDLE || st == HWC_ON || st == HWC_DONE) {
			atomic_store(&hwc.state, HWC_YIELDED);
			set_reason("the application uses PAPI itself");
		}
		hwc.pending_runtime |= LWM2_RT_PAPI_APP;
	}
	pthread_mutex_unlock(&hwc.lock);
	deliver_pending();

	fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	if (!fn) {
		*(void **)&fn = lwm2_real("PAPI_library_init");
		if (!fn)
			*(void **)&fn = dlsym(RTLD_NEXT, "PAPI_library_init");
		__atomic_store_n(&real, fn, __ATOMIC_RELEASE);
	}
	return fn ? fn(version) : PAPI_ESYS;
}
