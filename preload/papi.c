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
 *   2.6 GHz EPYC: it reads the CPU tables of every PMU) and libpapi some
 *   3.5 MiB of resident memory.  Nothing of it runs at process start: the
 *   heartbeat's setup hook does it LWM2_SETUP_DELAY_MS after the start, so
 *   a process that ends sooner never pays, and a one-second job is counted
 *   from then on (the ratios the digest derives do not depend on the
 *   start).  Before loading anything, two perf_event_open calls ask the
 *   kernel whether it has hardware events at all: where it has none (a VM
 *   without a virtual PMU) or does not permit them, and the events asked
 *   for are hardware events only (the defaults), libpapi is never loaded.
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
 * - The kernel's software events (task clock, page faults, context
 *   switches) need no PMU, but PAPI offers them only through its
 *   perf_event component, which is disabled where libpfm finds no PMU it
 *   knows (a VM, a CPU newer than libpfm).  There, or without libpapi,
 *   they are opened directly (their numbers are the kernel's ABI); an
 *   event asked for that still cannot be counted is named in the reason.
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
 *
 * Locks
 * -----
 * hwc_lock guards the state, the slots and the encoded events.  It is taken
 * after the core's lock (the heartbeat calls slice_end holding that) and
 * nothing under it takes another lock, allocates, or calls a function the
 * POSIX module wraps: our descriptors are read and closed with raw system
 * calls, because a wrapper may attach the calling thread (an unattached
 * thread running the exit path) and attaching calls papi_thread_start,
 * which takes hwc_lock again.  hwc_setup_lock serialises our PAPI session
 * with the application's PAPI_library_init; it is held while libpapi
 * loads, so hwc_lock is never held then.  Fork takes hwc_lock after the
 * core's lock (see papi_atfork), so the child never inherits it held.
 */
#define _GNU_SOURCE
#include "lwm2_core.h"
#include "lwm2_env.h"
#include "papi_events.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#define HWC_MAX_FDS    16

/* libpfm's encoding call, as libpfm4 declares it (stable ABI); we do not
 * need its headers, only the function libpapi already loaded. */
#define LWM2_PFM_PLM3          0x08
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
	HWC_IDLE = 0, /* not set up yet (waiting for the heartbeat's setup hook) */
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

/* The module's locks, written in every fork child, and its state, read
 * at every thread's start (see LWM2_HOT_STATE). */
static pthread_mutex_t hwc_lock LWM2_HOT_STATE = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t hwc_setup_lock LWM2_HOT_STATE = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int hwc_state LWM2_HOT_STATE;
/* Slots 0..hwc_nslots-1 have been used: the walks stop there, so a
 * process with one thread reads one slot's page, not all 512 slots' (each
 * page of them a fault in every fork child). */
static int hwc_nslots LWM2_HOT_STATE;

/* What every process touches at its start (the first slots, the
 * pending reason) comes first, on as few pages as it can; the plan
 * and the encoded events, used once by the heartbeat's setup, after the
 * slots. */
static struct {
	int fds_open, fds_max;

	/* a missing reason / runtime flag to hand to the core outside any lock */
	char pending_reason[LWM2_REASON_LEN];
	uint32_t pending_runtime;
	/* the events counting, for the record (lwm2_set_hwc_events) */
	char pending_events[LWM2_HWC_EVENTS_LEN];

	struct hwc_thread slot[HWC_MAX_THREADS];

	struct lwm2_hwc_plan plan;
	bool plan_made; /* plan holds LWM2_EVENTS' or the default plan */
	struct lwm2_hwc_choice choice;
	bool plan_bad;
	char reason[LWM2_REASON_LEN];

	/* encoded events: attr[i] counts for role attr_role[i] */
	int nattr;
	struct perf_event_attr attr[HWC_MAX_FDS];
	int attr_role[HWC_MAX_FDS];
} hwc;

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
	int (*get_component_index)(const char *);
	const PAPI_component_info_t *(*get_component_info)(int);
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

/* Our own descriptors, past the POSIX module's wrappers (see Locks). */
static ssize_t raw_read(int fd, void *buf, size_t n)
{
	return (ssize_t)syscall(SYS_read, fd, buf, n);
}

static void raw_close(int fd)
{
	syscall(SYS_close, fd);
}

/* Give the core a reason/runtime flag; never called with hwc_lock held
 * (the core takes its own lock, and the heartbeat holds the core's lock
 * when it calls us). */
static void deliver_pending(void)
{
	char reason[LWM2_REASON_LEN], events[LWM2_HWC_EVENTS_LEN];
	uint32_t rt;

	if (!hwc.pending_reason[0] && !hwc.pending_runtime && !hwc.pending_events[0])
		return;
	pthread_mutex_lock(&hwc_lock);
	memcpy(reason, hwc.pending_reason, sizeof(reason));
	memcpy(events, hwc.pending_events, sizeof(events));
	rt = hwc.pending_runtime;
	hwc.pending_reason[0] = '\0';
	hwc.pending_events[0] = '\0';
	hwc.pending_runtime = 0;
	pthread_mutex_unlock(&hwc_lock);
	if (reason[0])
		lwm2_group_missing(LWM2_G_HWC, reason);
	if (events[0])
		lwm2_set_hwc_events(events);
	if (rt)
		lwm2_set_runtime(rt);
}

/* Under hwc_lock. */
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
		raw_close(s->fd[i]);
	hwc.fds_open -= s->nfd;
	s->nfd = 0;
}

/* Open the group for thread s->tid; under hwc_lock. */
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
 * Under hwc_lock.
 */
static bool read_slot(struct hwc_thread *s)
{
	uint64_t buf[3 + HWC_MAX_FDS], sum[LWM2_HWC_NROLES] = {0};
	ssize_t n;

	if (!s->nfd)
		return true;
	n = raw_read(s->fd[0], buf, sizeof(buf));
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

/* Read and close every group; under hwc_lock. */
static void stop_all(bool read_first)
{
	for (int i = 0; i < hwc_nslots; i++) {
		struct hwc_thread *s = &hwc.slot[i];

		if (!s->used || !s->nfd)
			continue;
		if (read_first)
			read_slot(s);
		close_slot(s);
	}
}

/* ---- setup (the heartbeat's setup hook) ----------------------------------- */

static int perf_event_paranoid(void)
{
	char buf[16];
	ssize_t n;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/sys/kernel/perf_event_paranoid",
	                      O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return INT_MIN;
	n = raw_read(fd, buf, sizeof(buf) - 1);
	raw_close(fd);
	if (n <= 0)
		return INT_MIN;
	buf[n] = '\0';
	return (int)strtol(buf, NULL, 10);
}

/*
 * Whether the kernel counts hardware events for this thread.  False, with
 * the reason, when it says it has none or does not permit them: two system
 * calls instead of loading libpapi to learn the same.  Any other answer
 * (out of descriptors, a busy PMU) is left for PAPI to judge.
 */
static bool hw_events_exist(char *why, size_t len)
{
	static const uint64_t config[] = {PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_CPU_CYCLES};
	bool denied = false;

	for (size_t i = 0; i < sizeof(config) / sizeof(config[0]); i++) {
		struct perf_event_attr a;
		int fd;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_HARDWARE;
		a.config = config[i];
		a.disabled = 1;
		a.exclude_kernel = 1; /* what perf_event_paranoid=2 still permits */
		a.exclude_hv = 1;
		fd = perf_open(&a, 0, -1);
		if (fd >= 0) {
			raw_close(fd);
			return true;
		}
		if (errno == EACCES || errno == EPERM)
			denied = true;
		else if (errno != ENOENT && errno != EOPNOTSUPP && errno != ENODEV &&
		         errno != ENOSYS)
			return true;
	}
	if (denied) {
		int level = perf_event_paranoid();

		if (level != INT_MIN)
			snprintf(why, len,
			         "hardware counters not permitted (perf_event_paranoid=%d)", level);
		else
			snprintf(why, len, "hardware counters not permitted");
	} else {
		snprintf(why, len, "no hardware counters on this platform");
	}
	return false;
}

/* A software event straight from the kernel: its attributes, and whether
 * the kernel opens it for the calling thread. */
static bool software_attr(const char *name, struct perf_event_attr *a)
{
	unsigned long long config;
	int fd;

	if (!lwm2_hwc_software_event(name, &config))
		return false;
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = config;
	/* User level only, as the events PAPI encodes for us (PFM_PLM3). */
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->disabled = 1;
	fd = perf_open(a, 0, -1);
	if (fd < 0)
		return false;
	raw_close(fd);
	a->disabled = 0;
	return true;
}

struct try_ctx {
	int es;    /* PAPI's event set, or PAPI_NULL where PAPI cannot help */
	bool papi; /* PAPI started */
};

static enum lwm2_hwc_verdict try_event(void *ctx, enum lwm2_hwc_role role, const char *name)
{
	struct try_ctx *tc = ctx;
	struct perf_event_attr a;

	(void)role;
	if (tc->papi) {
		int rc = papi.add_named_event(tc->es, name);

		if (rc == PAPI_OK)
			return LWM2_HWC_ACCEPTED;
		if (rc == PAPI_ECNFLCT || rc == PAPI_ECOUNT || rc == PAPI_EMULPASS)
			return LWM2_HWC_CONFLICT;
	}
	/* The kernel's software events need no PMU and no PAPI: where PAPI
	 * cannot give them (its perf_event component is off without a PMU,
	 * or PAPI is missing) they are counted all the same.  They take no
	 * counter, so they never conflict with the others. */
	if (software_attr(name, &a))
		return LWM2_HWC_ACCEPTED;
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
	if (!papi.pfm_encode ||
	    papi.pfm_encode(name, LWM2_PFM_PLM3, LWM2_PFM_OS_PERF_EVENT, &arg) != 0) {
		if (!software_attr(name, &a))
			return -1;
	}
	a.size = sizeof(a);
	hwc.attr[hwc.nattr] = a;
	hwc.attr_role[hwc.nattr] = role;
	hwc.nattr++;
	return 0;
}

/* A chosen event as perf_event attributes: a preset is its native events
 * (summed when PAPI derives it by adding), a native event is itself. */
static int encode_event(const char *name, int role, bool with_papi)
{
	PAPI_event_info_t info;
	int code, start = hwc.nattr;

	if (!with_papi || papi.event_name_to_code(name, &code) != PAPI_OK)
		return encode_native(name, role);
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

	if (!LWM2_HAVE_DL)
		return false;
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
	SYM(get_component_index, "PAPI_get_component_index");
	SYM(get_component_info, "PAPI_get_component_info");
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

/*
 * Why PAPI's perf_event component cannot give events on this node, in
 * few words, or "" when it is active.  "Error libpfm4 no default PMU
 * found" is what PAPI says on a machine whose CPU libpfm does not know or
 * that has no PMU at all (a virtual machine).
 */
static void component_state(char *why, size_t len)
{
	const PAPI_component_info_t *ci;
	int cidx;

	why[0] = '\0';
	if (!papi.get_component_index || !papi.get_component_info)
		return;
	cidx = papi.get_component_index("perf_event");
	if (cidx < 0) {
		snprintf(why, len, "PAPI has no perf_event component");
		return;
	}
	ci = papi.get_component_info(cidx);
	if (!ci || !ci->disabled)
		return;
	if (strstr(ci->disabled_reason, "PMU"))
		snprintf(why, len, "PAPI perf_event component disabled (no PMU)");
	else
		snprintf(why, len, "PAPI perf_event component disabled (%.50s)",
		         strncmp(ci->disabled_reason, "Error ", 6) == 0 ? ci->disabled_reason + 6
		                                                        : ci->disabled_reason);
}

/*
 * Our PAPI session: pick and encode the events into hwc.attr.  Under
 * hwc_setup_lock only; hwc.attr is not read before the state is ON.  Leaves
 * a reason in why when nothing can be counted.  Without PAPI (not
 * installed, not starting, its perf_event component off) the kernel's
 * software events are still counted; the reason then names the first
 * event asked for that cannot be, and why.
 */
static void select_events(char *why, size_t len)
{
	struct try_ctx tc = {.es = PAPI_NULL, .papi = false};
	char none[LWM2_REASON_LEN], papi_why[LWM2_REASON_LEN] = "";

	in_own_papi++;
	if (!load_papi())
		snprintf(papi_why, sizeof(papi_why), "PAPI is not installed on this node");
	else if (papi.library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
		snprintf(papi_why, sizeof(papi_why), "PAPI does not start on this node");
	else if (papi.create_eventset(&tc.es) != PAPI_OK) {
		papi.shutdown();
		snprintf(papi_why, sizeof(papi_why), "PAPI does not start on this node");
	} else {
		tc.papi = true;
		component_state(papi_why, sizeof(papi_why));
	}
	lwm2_hwc_select(&hwc.plan, try_event, &tc, &hwc.choice);
	for (int r = 0; r < LWM2_HWC_NROLES; r++) {
		int c = hwc.choice.cand[r];

		if (c >= 0 && encode_event(hwc.plan.cand[r][c], r, tc.papi) < 0) {
			/* Known to PAPI but not expressible for perf_event
			 * (a derived preset that subtracts): not measured. */
			hwc.choice.cand[r] = -1;
			hwc.choice.why[r] = LWM2_HWC_WHY_ABSENT;
			hwc.choice.nchosen--;
		}
	}
	if (tc.papi) {
		papi.cleanup_eventset(tc.es);
		papi.destroy_eventset(&tc.es);
		/* Leave PAPI as we found it: the application may start it later. */
		papi.shutdown();
	}
	if (hwc.choice.nchosen && hwc.nattr) {
		/* something is counted */
	} else if (lwm2_hwc_unavailable_text(&hwc.plan, &hwc.choice,
	                                     papi_why[0] ? papi_why : "no such event on this node",
	                                     why, len)) {
		/* a named event is missing: the reason names it */
	} else if (lwm2_hwc_none_reason(&hwc.plan, &hwc.choice, none, sizeof(none))) {
		/* A PAPI that cannot give events explains more than the generic
		 * reason; a busy PMU is said as such. */
		if (papi_why[0] && strcmp(none, "the hardware counters are busy") != 0)
			snprintf(why, len, "%s", papi_why);
		else
			snprintf(why, len, "%s", none);
	} else if (hwc.nattr == 0) {
		snprintf(why, len, "%s",
		         papi_why[0] ? papi_why : "no hardware counters on this platform");
	}
	in_own_papi--;
}

/* ---- hooks ---------------------------------------------------------------- */

static void papi_init(void)
{
	const char *spec = getenv(LWM2_ENV_EVENTS);
	char err[LWM2_REASON_LEN - 20];

	/* Only the string work here: this runs in every process at start.
	 * Without LWM2_EVENTS the default plan is made by the setup, which
	 * most short processes never reach: writing it here touched two
	 * pages of this module's storage in each of them. */
	if (!spec)
		return;
	hwc.plan_made = true;
	if (lwm2_hwc_plan_parse(&hwc.plan, spec, err, sizeof(err)) < 0) {
		char why[LWM2_REASON_LEN];

		snprintf(why, sizeof(why), "bad LWM2_EVENTS: %s", err);
		atomic_store(&hwc_state, HWC_NONE);
		lwm2_group_missing(LWM2_G_HWC, why);
	} else if (hwc.plan.off) {
		atomic_store(&hwc_state, HWC_NONE);
		lwm2_group_missing(LWM2_G_HWC, "switched off (LWM2_EVENTS=none)");
	}
}

static void papi_thread_start(struct lwm2_thread *t)
{
	int st = atomic_load(&hwc_state);
	struct hwc_thread *s = NULL;

	if (st != HWC_IDLE && st != HWC_ON)
		return;
	pthread_mutex_lock(&hwc_lock);
	for (int i = 0; i < hwc_nslots; i++)
		if (!hwc.slot[i].used) {
			s = &hwc.slot[i];
			break;
		}
	if (!s && hwc_nslots < HWC_MAX_THREADS)
		s = &hwc.slot[hwc_nslots++];
	if (s) {
		memset(s, 0, sizeof(*s));
		s->used = true;
		s->t = t;
		s->tid = t->tid;
		t->module_state[LWM2_MODSTATE_PAPI] = s;
		if (atomic_load(&hwc_state) == HWC_ON)
			open_slot(s);
	}
	pthread_mutex_unlock(&hwc_lock);
	deliver_pending();
}

static void papi_thread_end(struct lwm2_thread *t)
{
	struct hwc_thread *s = t->module_state[LWM2_MODSTATE_PAPI];

	if (!s)
		return;
	pthread_mutex_lock(&hwc_lock);
	if (s->used && s->t == t) {
		if (s->nfd) {
			if (atomic_load(&hwc_state) == HWC_ON)
				read_slot(s);
			close_slot(s);
		}
		s->used = false;
		s->t = NULL;
	}
	t->module_state[LWM2_MODSTATE_PAPI] = NULL;
	pthread_mutex_unlock(&hwc_lock);
	deliver_pending();
}

static enum lwm2_hwc_verdict absent_everywhere(void *ctx, enum lwm2_hwc_role role, const char *name)
{
	(void)ctx;
	(void)role;
	(void)name;
	return LWM2_HWC_ABSENT;
}

/*
 * In the heartbeat, LWM2_SETUP_DELAY_MS after the start, without the core's
 * lock: a process that ends sooner never loads PAPI.  Leaves the state ON
 * or NONE unless the application took PAPI meanwhile.
 */
static void papi_setup(void)
{
	char why[LWM2_REASON_LEN] = "";

	if (atomic_load(&hwc_state) != HWC_IDLE)
		return;
	pthread_mutex_lock(&hwc_setup_lock);
	if (atomic_load(&hwc_state) != HWC_IDLE) {
		pthread_mutex_unlock(&hwc_setup_lock);
		return;
	}
	hwc.nattr = 0; /* a fork child may hold a parent's half-done selection */
	if (!hwc.plan_made) {
		lwm2_hwc_plan_defaults(&hwc.plan);
		hwc.plan_made = true;
	}
	if (!lwm2_hwc_plan_hardware_only(&hwc.plan) || hw_events_exist(why, sizeof(why))) {
		select_events(why, sizeof(why));
	} else {
		/* Events named in LWM2_EVENTS are named in the reason too. */
		struct lwm2_hwc_choice none;
		char base[LWM2_REASON_LEN];

		memcpy(base, why, sizeof(base));
		lwm2_hwc_select(&hwc.plan, absent_everywhere, NULL, &none);
		lwm2_hwc_unavailable_text(&hwc.plan, &none, base, why, sizeof(why));
	}

	pthread_mutex_lock(&hwc_lock);
	if (atomic_load(&hwc_state) == HWC_IDLE) {
		if (why[0] || hwc.nattr == 0) {
			set_reason(why[0] ? why : "no hardware counters on this platform");
			atomic_store(&hwc_state, HWC_NONE);
		} else {
			/* The threads that started meanwhile have slots already. */
			fd_budget();
			lwm2_hwc_events_text(&hwc.plan, &hwc.choice, hwc.pending_events,
			                     sizeof(hwc.pending_events));
			atomic_store(&hwc_state, HWC_ON);
			for (int i = 0; i < hwc_nslots; i++)
				if (hwc.slot[i].used)
					open_slot(&hwc.slot[i]);
		}
	}
	pthread_mutex_unlock(&hwc_lock);
	pthread_mutex_unlock(&hwc_setup_lock);
	deliver_pending();
}

/*
 * At each slice end: in the heartbeat (with the core's lock held: no core
 * calls from here), and once more on the exit path, possibly in a thread
 * that was never attached (nothing here may attach it: see Locks).
 */
/* Every thread's counters into its buffer; with open_new, the groups of
 * threads that have none yet opened. */
static void read_all(bool open_new)
{
	if (atomic_load(&hwc_state) != HWC_ON)
		return;
	pthread_mutex_lock(&hwc_lock);
	if (atomic_load(&hwc_state) == HWC_ON) {
		bool lost = false;

		for (int i = 0; i < hwc_nslots; i++) {
			struct hwc_thread *s = &hwc.slot[i];

			if (!s->used)
				continue;
			if (!s->nfd) {
				if (open_new)
					open_slot(s);
			} else if (!read_slot(s)) {
				lost = true;
			}
		}
		if (lost) {
			stop_all(false);
			atomic_store(&hwc_state, HWC_YIELDED);
			set_reason("the hardware counters were taken by another user");
		}
	}
	pthread_mutex_unlock(&hwc_lock);
}

static void papi_slice_end(void)
{
	read_all(true);
}

/* A view query's counters read now, not a slice old (lwm2_view(3)). */
static void papi_read_now(void)
{
	read_all(false);
}

static void papi_fini(void)
{
	int st;

	pthread_mutex_lock(&hwc_lock);
	st = atomic_load(&hwc_state);
	if (st == HWC_ON)
		stop_all(true);
	/* Also from IDLE: a setup still to come must not open counters that
	 * nobody would read. */
	if (st == HWC_ON || st == HWC_IDLE)
		atomic_store(&hwc_state, HWC_DONE);
	pthread_mutex_unlock(&hwc_lock);
	deliver_pending();
}

/*
 * The child of fork has one thread and copies of our descriptors, which
 * count the parent's threads: close the copies (the parent keeps its
 * own) and count the surviving thread afresh.  The child's heartbeat is
 * already running (the core starts it first), hence the lock.
 */
static void papi_fork_child(void)
{
	struct lwm2_thread *self = lwm2_self;

	/* Nothing to count in the parent (no counters on this host, or
	 * switched off): nor in the child, whose slots hold no descriptors;
	 * leaving them as they are keeps their page the parent's. */
	if (atomic_load(&hwc_state) == HWC_NONE)
		return;
	pthread_mutex_lock(&hwc_lock);
	for (int i = 0; i < hwc_nslots; i++) {
		struct hwc_thread *s = &hwc.slot[i];

		/* Read-only where unused: a write to every slot cost the
		 * child of every fork a copy of each of their pages. */
		if (!s->used)
			continue;
		if (s->nfd)
			close_slot(s);
		if (s->t)
			s->t->module_state[LWM2_MODSTATE_PAPI] = NULL;
		s->used = false;
	}
	hwc.fds_open = 0;
	/* Finished in the parent: counting again if it had events, else the
	 * child's heartbeat sets up. */
	if (atomic_load(&hwc_state) == HWC_DONE)
		atomic_store(&hwc_state, hwc.nattr ? HWC_ON : HWC_IDLE);
	pthread_mutex_unlock(&hwc_lock);
	if (self)
		papi_thread_start(self);
}

/*
 * Fork takes hwc_lock after the core's lock, the order the heartbeat takes
 * them in, so that no thread of the parent holds it at the fork (a child
 * would inherit it held by a thread it does not have).  pthread_atfork
 * runs prepare handlers in reverse order of registration and child
 * handlers in order: registered before the core's (this constructor has a
 * priority, the core's has none), ours prepare last and release first in
 * the child, before the core's child handler starts the child's heartbeat.
 * setup_lock is not taken (our setup may hold it while it waits for
 * hwc_lock): the child gets a fresh one and sets up again.
 */
static void papi_atfork_prepare(void)
{
	lwm2_lock_reclaim(&hwc_lock);
	pthread_mutex_lock(&hwc_lock);
}

static void papi_atfork_parent(void)
{
	pthread_mutex_unlock(&hwc_lock);
}

static void papi_atfork_child(void)
{
	hwc_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	hwc_setup_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

__attribute__((constructor(101))) static void papi_atfork(void)
{
	pthread_atfork(papi_atfork_prepare, papi_atfork_parent, papi_atfork_child);
}

LWM2_HIDDEN const struct lwm2_module lwm2_module_papi = {
    .name = "papi",
    .init = papi_init,
    .thread_start = papi_thread_start,
    .thread_end = papi_thread_end,
    .slice_end = papi_slice_end,
    .fini = papi_fini,
    .fork_child = papi_fork_child,
    .setup = papi_setup,
    .read_now = papi_read_now,
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
	pthread_mutex_lock(&hwc_lock);
	{
		int st = atomic_load(&hwc_state);

		if (st == HWC_ON)
			stop_all(true);
		if (st == HWC_IDLE || st == HWC_ON || st == HWC_DONE) {
			atomic_store(&hwc_state, HWC_YIELDED);
			set_reason("the application uses PAPI itself");
		}
		hwc.pending_runtime |= LWM2_RT_PAPI_APP;
	}
	pthread_mutex_unlock(&hwc_lock);
	deliver_pending();
	/* PAPI's library state is shared with ours: a session of ours that is
	 * running in the heartbeat ends before the application's starts. */
	pthread_mutex_lock(&hwc_setup_lock);
	pthread_mutex_unlock(&hwc_setup_lock);

	fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	if (!fn) {
		*(void **)&fn = lwm2_real("PAPI_library_init");
		if (!fn && LWM2_HAVE_DL)
			*(void **)&fn = dlsym(RTLD_NEXT, "PAPI_library_init");
		__atomic_store_n(&real, fn, __ATOMIC_RELEASE);
	}
	return fn ? fn(version) : PAPI_ESYS;
}
