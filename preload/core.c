/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Start and end of the preload core: the environment contract with the
 * SPANK plugin, the identity of the process, and the order of things at
 * exit.
 *
 * Order at exit(): the application's atexit handlers run first, then the
 * dynamic linker's _dl_fini runs library destructors (ours stops the
 * modules while the libraries they use still stand), and last the on_exit
 * hook registered in our constructor (registered before __libc_start_main
 * registers _dl_fini, so it runs after it) writes the final record with the
 * exit status.  stdio buffers are flushed after that by glibc's own
 * internal write calls, which no wrapper sees in any case.
 *
 * The environment (set by the SPANK plugin, or by hand):
 *   LWM2_MODE        on (default), off (fully inert), print (on, and print)
 *   LWM2_DIR         node-local step directory for rank records; without
 *                    it ${TMPDIR:-/tmp}/lwm2-<uid> (mode 0700), or no file
 *                    at all when the digest is printed
 *   LWM2_PRINT=1     print a one-process digest to stderr at the end
 *   LWM2_SLICE       slice length in s, 1..3600, default 60
 *   LWM2_SLICE_MS    for tests only: slice length in ms (the record then
 *                    shows 1 s slices without a meaningful position)
 *   LWM2_MAX_SLICES  slices kept before coarsening, 2..4096, default 256
 *   LWM2_PARENT      set by the library to "PID.M" in each measured
 *                    process (M: it had a measured parent); its children
 *                    and later images read it: a measured parent means
 *                    the heartbeat may start lazily and a short process
 *                    may go to the step summary (see parent_measured)
 *   LWM2_ROOT_PPID   the pid of the tasks' parent (set by the SPANK plugin
 *                    and `lwm2 run`): a process whose parent it is is a
 *                    task and always keeps a record of its own
 *   LWM2_SHORT_MS    images that end sooner go to the step's summary of
 *                    short processes instead of a record file each,
 *                    0..3600000, default 1000; 0: a record for every image
 *                    (the summary keeps their slices: see summary.c)
 *   LWM2_SAMPLE_HZ   CPU-time sampling rate per thread, 1..10000, default 100
 *   LWM2_SIGNAL      sampling signal, SIGRTMIN..SIGRTMAX, default SIGRTMIN+7
 *   LWM2_DEBUG=1     diagnostics on stderr (otherwise silent)
 *   LWM2_JOB_ID, LWM2_STEP_ID (else SLURM_JOB_ID, SLURM_STEP_ID),
 *   SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURMD_NODENAME
 * Invalid values fall back to the default (said so under LWM2_DEBUG).
 */
#include "core_int.h"
#include "lwm2_env.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

struct lwm2_proc lwm2_p = {.lock = PTHREAD_MUTEX_INITIALIZER, .last_slot = -1};
_Atomic int lwm2_on;
__thread int lwm2_in_core __attribute__((tls_model("initial-exec")));
__thread int lwm2_no_attach __attribute__((tls_model("initial-exec")));
static __thread int resolving __attribute__((tls_model("initial-exec")));

void lwm2_lock(void)
{
	pthread_mutex_lock(&lwm2_p.lock);
}

void lwm2_unlock(void)
{
	pthread_mutex_unlock(&lwm2_p.lock);
}

bool lwm2_lock_sig(void)
{
	/* The holder is another thread (the heartbeat blocks all signals, so
	 * it is never interrupted holding it): wait a little, never forever. */
	if (lwm2_in_core)
		return false;
	for (int i = 0; i < 2000; i++) {
		struct timespec ts = {0, 100000};

		if (pthread_mutex_trylock(&lwm2_p.lock) == 0)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

void lwm2_debug(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (!lwm2_p.debug)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	syscall(SYS_write, 2, buf, (size_t)n);
}

uint64_t lwm2_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

pid_t lwm2_raw_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

void *lwm2_raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);

	/* The kernel's error range, as glibc's mmap reads it. */
	return (unsigned long)r > -4096ul ? MAP_FAILED : (void *)r;
}

pid_t lwm2_raw_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

bool lwm2_here(void)
{
	return lwm2_raw_getpid() == lwm2_p.pid;
}

/*
 * The real functions, found fast.  dlsym(RTLD_NEXT) costs about 900
 * instructions a name (the caller's object looked up, an error catcher set
 * up, every object's hash table searched), and the modules resolve some
 * 60 names at every process start.  The objects loaded with the program
 * after this library (libc, libpthread, an MPI library it links) are
 * searched here in their own GNU hash tables instead, in load order, which
 * is the order dlsym(RTLD_NEXT) searches them in: a bloom filter rejects
 * most objects in a few instructions.  Anything unusual (an object without
 * a GNU hash table, an indirect function, a thread-local or unique symbol,
 * several default versions of one name) goes to dlsym as before, and so
 * does every name not found once an object was loaded since (dlopen'ed
 * ones may be local).  Signal-safe: memory reads only.  Under LWM2_DEBUG every answer
 * is checked against dlsym.
 */
#if __ELF_NATIVE_CLASS == 64
#define ST_TYPE ELF64_ST_TYPE
#define ST_BIND ELF64_ST_BIND
#else
#define ST_TYPE ELF32_ST_TYPE
#define ST_BIND ELF32_ST_BIND
#endif

struct next_obj {
	uintptr_t base;
	const uint32_t *gh;
	const ElfW(Sym) * symtab;
	const char *strtab;
	const ElfW(Half) * versym;
};
#define NEXT_MAX 32
static struct next_obj next_objs[NEXT_MAX];
static int n_next;
static bool next_complete;           /* every object after this library is in next_objs */
static unsigned long long next_adds; /* objects loaded when next_objs was taken */
static _Atomic int next_state;       /* 0: not yet, 1: being built, 2: ready, 3: not usable */

/* An address from the dynamic section: the loader has relocated it in
 * place unless it is still an offset into the object. */
static uintptr_t dyn_addr(uintptr_t base, ElfW(Addr) v)
{
	return v < base ? base + v : v;
}

static bool obj_tables(const struct dl_phdr_info *info, struct next_obj *o)
{
	const ElfW(Dyn) *dyn = NULL;

	memset(o, 0, sizeof(*o));
	o->base = info->dlpi_addr;
	for (int k = 0; k < info->dlpi_phnum; k++)
		if (info->dlpi_phdr[k].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[k].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_GNU_HASH)
			o->gh = (const uint32_t *)dyn_addr(o->base, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_SYMTAB)
			o->symtab = (const ElfW(Sym) *)dyn_addr(o->base, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			o->strtab = (const char *)dyn_addr(o->base, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_VERSYM)
			o->versym = (const ElfW(Half) *)dyn_addr(o->base, dyn->d_un.d_ptr);
	}
	return o->gh && o->symtab && o->strtab;
}

static uint32_t gnu_hash(const char *name)
{
	uint32_t h = 5381;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	return h;
}

/* The symbol of name in o: 1 with *sym set when there is exactly one
 * default definition, 0 when there is none, -1 when dlsym must tell. */
static int obj_lookup(const struct next_obj *o, const char *name, uint32_t h,
                      const ElfW(Sym) * *sym)
{
	const uint32_t *gh = o->gh;
	uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2], bloom_shift = gh[3];
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)(const void *)(gh + 4);
	const uint32_t *buckets, *chain;
	ElfW(Addr) word;
	int found = 0;

	if (!nbuckets || !bloom_size)
		return 0;
	buckets = (const uint32_t *)(const void *)(bloom + bloom_size);
	chain = buckets + nbuckets;
	word = bloom[(h / __ELF_NATIVE_CLASS) % bloom_size];
	if (!((word >> (h % __ELF_NATIVE_CLASS)) &
	      (word >> ((h >> bloom_shift) % __ELF_NATIVE_CLASS)) & 1))
		return 0; /* the bloom filter: almost every miss ends here */
	for (uint32_t i = buckets[h % nbuckets]; i >= symoffset; i++) {
		uint32_t ch = chain[i - symoffset];
		const ElfW(Sym) *s = &o->symtab[i];

		if ((ch | 1) == (h | 1) && strcmp(o->strtab + s->st_name, name) == 0 &&
		    s->st_shndx != SHN_UNDEF && !(o->versym && (o->versym[i] & 0x8000))) {
			int type = ST_TYPE(s->st_info), bind = ST_BIND(s->st_info);

			if ((type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE) ||
			    (bind != STB_GLOBAL && bind != STB_WEAK) || !s->st_value)
				return -1;
			*sym = s;
			found++;
		}
		if (ch & 1)
			break;
	}
	return found > 1 ? -1 : found;
}

struct next_scan {
	uintptr_t self; /* an address in this library */
	bool past_self;
};

static int next_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct next_scan *sc = arg;
	bool self = false;

	(void)size;
	for (int k = 0; k < info->dlpi_phnum && !self; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];

		self = ph->p_type == PT_LOAD && sc->self >= info->dlpi_addr + ph->p_vaddr &&
		       sc->self < info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (self) {
		sc->past_self = true;
		return 0;
	}
	/* The vDSO is no object dlsym(RTLD_NEXT) searches. */
	if (!sc->past_self || (info->dlpi_name && strstr(info->dlpi_name, "linux-vdso")))
		return 0;
	if (n_next == NEXT_MAX || !obj_tables(info, &next_objs[n_next])) {
		next_complete = false;
		return 1; /* from here on, dlsym alone keeps the order right */
	}
	n_next++;
	return 0;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *adds = arg;

	*adds = size >= offsetof(struct dl_phdr_info, dlpi_subs) ? info->dlpi_adds : 0;
	return 1;
}

/* Objects loaded so far (dlopen adds to it); 0 when not known. */
static unsigned long long loaded_adds(void)
{
	unsigned long long adds = 0;

	dl_iterate_phdr(first_object, &adds);
	return adds;
}

static void next_build(void)
{
	struct next_scan sc = {(uintptr_t)&next_build, false};
	int expect = 0;

	if (!atomic_compare_exchange_strong(&next_state, &expect, 1))
		return;
	next_complete = true;
	dl_iterate_phdr(next_object, &sc);
	next_adds = loaded_adds();
	atomic_store(&next_state, sc.past_self ? 2 : 3);
}

/* The address of name; NULL with *ask set when dlsym must tell. */
static void *next_lookup(const char *name, bool *ask)
{
	uint32_t h = gnu_hash(name);

	*ask = true;
	if (atomic_load_explicit(&next_state, memory_order_acquire) != 2)
		return NULL;
	for (int i = 0; i < n_next; i++) {
		const ElfW(Sym) *s = NULL;
		int r = obj_lookup(&next_objs[i], name, h, &s);

		if (r < 0)
			return NULL;
		if (r > 0) {
			*ask = false;
			return (void *)(next_objs[i].base + s->st_value);
		}
	}
	/* Not defined by any object there is (the libraries of io_uring or
	 * libaio a program does not use): dlsym would search them all again
	 * for nothing, unless something was loaded since. */
	*ask = !next_complete || !next_adds || loaded_adds() != next_adds;
	return NULL;
}

bool lwm2_real_signal_safe(void)
{
	if (atomic_load_explicit(&next_state, memory_order_acquire) == 0 && !resolving) {
		resolving = 1;
		next_build();
		resolving = 0;
	}
	return atomic_load_explicit(&next_state, memory_order_acquire) == 2 && next_complete &&
	       next_adds && !lwm2_p.debug;
}

void *lwm2_real(const char *name)
{
	bool ask;
	void *p;

	if (resolving)
		return NULL;
	resolving = 1;
	if (atomic_load_explicit(&next_state, memory_order_relaxed) == 0)
		next_build();
	p = next_lookup(name, &ask);
	if (ask || lwm2_p.debug) {
		void *d = dlsym(RTLD_NEXT, name);

		if (!ask && p != d)
			lwm2_debug("lwm2: start: the fast lookup of %s found %p, dlsym %p", name, p,
			           d);
		p = d;
	}
	resolving = 0;
	return p;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

void lwm2_group_missing(enum lwm2_group g, const char *reason)
{
	if ((unsigned)g >= LWM2_NGROUPS || !lwm2_p.img)
		return;
	lwm2_in_core++;
	lwm2_lock();
	lwm2_p.img->missing |= 1u << g;
	copy_str(lwm2_p.img->missing_reason[g], LWM2_REASON_LEN, reason);
	lwm2_unlock();
	lwm2_in_core--;
}

/* Sets bits of a field of the record, under the lock. */
static void record_set_bits(uint32_t *field, uint32_t bits)
{
	lwm2_in_core++;
	lwm2_lock();
	*field |= bits;
	lwm2_unlock();
	lwm2_in_core--;
}

void lwm2_set_runtime(uint32_t runtime_flags)
{
	if (lwm2_p.img)
		record_set_bits(&lwm2_p.img->runtimes, runtime_flags);
}

void lwm2_set_flag(uint32_t flag)
{
	if (lwm2_p.img)
		record_set_bits(&lwm2_p.img->flags, flag);
}

void lwm2_set_mpi_identity(int rank, int size, int thread_provided, const char *library)
{
	if (!lwm2_p.img)
		return;
	lwm2_in_core++;
	lwm2_lock();
	lwm2_p.img->mpi_rank = rank;
	lwm2_p.img->mpi_size = size;
	lwm2_p.img->mpi_thread_provided = thread_provided;
	if (library) {
		/* first line only */
		size_t n = strcspn(library, "\n");

		if (n >= sizeof(lwm2_p.img->mpi_library))
			n = sizeof(lwm2_p.img->mpi_library) - 1;
		memcpy(lwm2_p.img->mpi_library, library, n);
		lwm2_p.img->mpi_library[n] = '\0';
	}
	lwm2_unlock();
	lwm2_in_core--;
	/* An MPI rank is looked at slice by slice, from its start. */
	lwm2_heartbeat_want();
}

/* An integer from the environment within [lo, hi]; def when unset or
 * invalid (said so under LWM2_DEBUG). */
static unsigned long long env_num(const char *name, unsigned long long def, unsigned long long lo,
                                  unsigned long long hi)
{
	const char *s = getenv(name);
	unsigned long long v;
	char *end;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		lwm2_debug(
		    "lwm2: start: couldn't use %s=%s: not a number in %llu..%llu, using %llu", name,
		    s, lo, hi, def);
		return def;
	}
	return v;
}

static const char *env2(const char *a, const char *b)
{
	const char *s = getenv(a);

	return s && *s ? s : getenv(b);
}

/* Slurm's own client commands inherit LD_PRELOAD in batch scripts; they are
 * not the application. */
static bool is_slurm_client(const char *exe)
{
	static const char *const names[] = {
	    "srun",   "sbatch",   "salloc",  "scontrol", "squeue",     "sacct",   "scancel",
	    "sinfo",  "sstat",    "sattach", "sbcast",   "sacctmgr",   "sreport", "sprio",
	    "sshare", "strigger", "sdiag",   "scrontab", "slurmstepd", "lwm2",
	};
	const char *base = strrchr(exe, '/');

	base = base ? base + 1 : exe;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(base, names[i]) == 0)
			return true;
	return false;
}

static uint32_t parse_step(const char *s)
{
	char *end;
	unsigned long v;

	if (!s || !*s)
		return 0xfffffffeu; /* unknown (Slurm's NO_VAL) */
	if (strcmp(s, "batch") == 0)
		return 0xfffffffbu;
	if (strcmp(s, "extern") == 0)
		return 0xfffffffcu;
	if (strcmp(s, "interactive") == 0)
		return 0xfffffffau;
	v = strtoul(s, &end, 10);
	return *end ? 0xfffffffeu : (uint32_t)v;
}

static int32_t env_int(const char *name)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	return *end || v < 0 || v > INT32_MAX ? -1 : (int32_t)v;
}

static void fill_identity(const char *exe)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	const char *s;
	struct utsname u;

	s = env2(LWM2_ENV_JOB_ID, "SLURM_JOB_ID");
	r->job_id = s ? strtoull(s, NULL, 10) : 0;
	r->step_id = parse_step(env2(LWM2_ENV_STEP_ID, "SLURM_STEP_ID"));
	r->task_id = env_int("SLURM_PROCID");
	r->local_task_id = env_int("SLURM_LOCALID");
	r->node_id = env_int("SLURM_NODEID");
	r->mpi_rank = -1;
	r->mpi_size = 0;
	r->mpi_thread_provided = -1;
	r->pid = (int32_t)lwm2_p.pid;
	r->ppid = (int32_t)getppid();
	lwm2_p.root = env_int(LWM2_ENV_ROOT_PPID) == r->ppid;
	s = getenv("SLURMD_NODENAME");
	if ((!s || !*s) && uname(&u) == 0)
		s = u.nodename;
	copy_str(r->hostname, sizeof(r->hostname), s);
	copy_str(r->executable, sizeof(r->executable), exe);
	lwm2_identity_container(r);
	r->start_ns = (int64_t)lwm2_p.start_ns;
	r->term_signal = 0;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LWM2_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define LWM2_SANITIZED 1
#endif
#endif

#ifndef LWM2_SANITIZED
static const char *const san_syms[][2] = {
    {"__asan_init", "AddressSanitizer"},
    {"__tsan_init", "ThreadSanitizer"},
    {"__msan_init", "MemorySanitizer"},
    {"__hwasan_init", "HWAddressSanitizer"},
};

/* Whether the object defines name in its dynamic symbol table (GNU hash);
 * -1 when it has no GNU hash table to tell. */
static int defines(const struct dl_phdr_info *info, const char *name)
{
	const ElfW(Dyn) *dyn = NULL;
	const uint32_t *gh = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	uint32_t h = 5381, nbuckets, symoffset, bloom_size, bloom_shift, i;
	const ElfW(Addr) * bloom;
	const uint32_t *buckets, *chain;
	ElfW(Addr) word;

	for (int k = 0; k < info->dlpi_phnum; k++)
		if (info->dlpi_phdr[k].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[k].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_GNU_HASH)
			gh = (const uint32_t *)dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_SYMTAB)
			symtab = (const ElfW(Sym) *)dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			strtab = (const char *)dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr);
	}
	if (!gh || !symtab || !strtab)
		return -1;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	nbuckets = gh[0];
	symoffset = gh[1];
	bloom_size = gh[2];
	bloom_shift = gh[3];
	if (!nbuckets || !bloom_size)
		return 0;
	bloom = (const ElfW(Addr) *)(const void *)(gh + 4);
	buckets = (const uint32_t *)(const void *)(bloom + bloom_size);
	chain = buckets + nbuckets;
	word = bloom[(h / __ELF_NATIVE_CLASS) % bloom_size];
	if (!((word >> (h % __ELF_NATIVE_CLASS)) &
	      (word >> ((h >> bloom_shift) % __ELF_NATIVE_CLASS)) & 1))
		return 0; /* the bloom filter: almost every miss ends here */
	i = buckets[h % nbuckets];
	if (i < symoffset)
		return 0;
	for (;; i++) {
		uint32_t ch = chain[i - symoffset];

		if ((ch | 1) == (h | 1) && strcmp(strtab + symtab[i].st_name, name) == 0 &&
		    symtab[i].st_shndx != SHN_UNDEF)
			return 1;
		if (ch & 1)
			return 0;
	}
}

struct san_probe {
	const char *found;
	bool unsure; /* an object without GNU hash: ask the loader */
};

static int san_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct san_probe *p = arg;
	const char *n = info->dlpi_name ? info->dlpi_name : "", *b = strrchr(n, '/');

	(void)size;
	b = b ? b + 1 : n;
	/* The main program (a runtime linked in statically, clang's way) and
	 * any object named like a sanitizer runtime (libasan.so,
	 * libclang_rt.asan-x86_64.so, ...); the vDSO and the rest are
	 * neither. */
	if (*n && !strstr(b, "san"))
		return 0;
	for (size_t i = 0; i < sizeof(san_syms) / sizeof(san_syms[0]); i++) {
		int d = defines(info, san_syms[i][0]);

		if (d < 0)
			p->unsure = true;
		if (d > 0) {
			p->found = san_syms[i][1];
			return 1;
		}
	}
	return 0;
}
#endif

/*
 * The sanitizer runtime a program was built with, if any.  Such a runtime
 * intercepts the very calls the library wraps and wants to come first:
 * the library steps aside and leaves the user's debugging tool alone (the
 * SPANK plugin turns off ASan's link-order check, which would end the
 * program before this runs).  A library built with a sanitizer itself
 * (the test suite's sanitizer builds) finds its own runtime: it measures.
 *
 * Asked of every process at its start, so it is cheap: only the main
 * program and objects named like a sanitizer runtime are looked at, in
 * their own GNU hash tables (a bloom filter rejects nearly every miss),
 * not with four dlsym calls that search every loaded object.
 */
static const char *sanitizer_runtime(void)
{
#ifndef LWM2_SANITIZED
	struct san_probe p = {NULL, false};

	dl_iterate_phdr(san_object, &p);
	if (p.found || !p.unsure)
		return p.found;
	for (size_t i = 0; i < sizeof(san_syms) / sizeof(san_syms[0]); i++)
		if (dlsym(RTLD_DEFAULT, san_syms[i][0]))
			return san_syms[i][1];
#endif
	return NULL;
}

static void on_exit_hook(int status, void *arg)
{
	(void)arg;
	lwm2_finish(LWM2_END_EXIT, status, 0, false);
	/* Joined, so its stack and thread-local storage are freed: a leak
	 * checker run on a clean program finds nothing of ours. */
	lwm2_heartbeat_stop();
}

/* The end of a program the library stepped aside for: its record with the
 * times, CPU and exit status, and nothing counted.  The record's file is
 * named by the process id, so only the process itself writes it. */
static void aside_exit_hook(int status, void *arg)
{
	(void)arg;
	/* A child of fork inherits the hook, not the record: the program's
	 * own process is the one that says why. */
	if (lwm2_raw_getpid() != lwm2_p.pid)
		return;
	lwm2_lock();
	lwm2_rank_file_write(LWM2_END_EXIT, status, 0);
	lwm2_unlock();
}

/*
 * A program built with a sanitizer runs as without lwm2: no wrapper counts
 * (lwm2_on stays 0, every wrapper goes straight to the real call), no
 * thread, no timer, no signal handler.  It still leaves a record at its
 * normal end, so the digest counts the process, its time and exit status,
 * and says why it has no other figures.
 */
static void step_aside(const char *exe, const char *san)
{
	char why[LWM2_REASON_LEN];

	lwm2_debug("lwm2: start: not measuring %s: it is built with %s", exe, san);
	snprintf(why, sizeof(why), "the program is built with %s: lwm2 stepped aside", san);
	for (int g = 0; g < LWM2_NGROUPS; g++)
		lwm2_group_missing((enum lwm2_group)g, why);
	lwm2_p.img->flags |= LWM2_F_ASIDE;
	on_exit(aside_exit_hook, NULL);
}

/*
 * Whether a measured process started this one.  LWM2_PARENT is "PID.M",
 * set by every measured image: PID its process, M whether that process had
 * a measured parent.  Another process's PID: an ancestor is measured (the
 * parent, or a shell whose subshell forked this one: a shell passes its
 * own copy of the variable on).  This process's own PID: an earlier image
 * of it was measured (a command run through env, nice or a script's
 * exec), and it is what that image was.  Unset: the first of its tree.
 */
static bool parent_measured(void)
{
	const char *s = getenv(LWM2_ENV_PARENT);
	char *end;
	long v;

	if (!s || !*s)
		return false;
	v = strtol(s, &end, 10);
	if (end == s || v <= 0)
		return false;
	if (v != (long)lwm2_p.pid)
		return true;
	return end[0] == '.' && end[1] == '1';
}

/* The parent variable, NAME=PID.M, into buf.  By hand, not snprintf: the
 * constructor uses no other printf, and the formatter's code is pages of
 * libc that a short process would fault in for this one line. */
size_t lwm2_put_decimal(char *out, uint64_t v)
{
	char digits[20];
	size_t n = 0, at = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof(digits));
	while (n)
		out[at++] = digits[--n];
	return at;
}

static void format_parent_env(char *buf, pid_t pid, bool measured_parent)
{
	static const char name[] = LWM2_ENV_PARENT "=";
	size_t at = sizeof(name) - 1;

	memcpy(buf, name, at);
	at += lwm2_put_decimal(buf + at, pid > 0 ? (uint64_t)pid : 0);
	buf[at++] = '.';
	buf[at++] = measured_parent ? '1' : '0';
	buf[at] = '\0';
}

__attribute__((constructor)) static void lwm2_init(void)
{
	const char *mode = getenv(LWM2_ENV_MODE), *san;
	static char parent_env[sizeof(LWM2_ENV_PARENT) + 16];
	char exe[256];
	bool measured_parent;
	ssize_t n;
	unsigned long long slice_ms;

	lwm2_p.debug = (getenv(LWM2_ENV_DEBUG) && strcmp(getenv(LWM2_ENV_DEBUG), "0") != 0);
	if (mode && strcmp(mode, "off") == 0)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (is_slurm_client(exe))
		return;
	san = sanitizer_runtime();
	if (mode && *mode && strcmp(mode, "on") != 0 && strcmp(mode, "print") != 0)
		lwm2_debug("lwm2: start: couldn't use LWM2_MODE=%s: expected on, off or print; "
		           "measuring",
		           mode);

	lwm2_p.pid = lwm2_raw_getpid();
	lwm2_p.start_ns = lwm2_now_ns();
	lwm2_p.print = (mode && strcmp(mode, "print") == 0) ||
	               (getenv(LWM2_ENV_PRINT) && strcmp(getenv(LWM2_ENV_PRINT), "0") != 0);
	if (getenv(LWM2_ENV_DIR) && *getenv(LWM2_ENV_DIR)) {
		copy_str(lwm2_p.dir, sizeof(lwm2_p.dir), getenv(LWM2_ENV_DIR));
		lwm2_p.have_dir = true;
	} else {
		const char *tmp = getenv("TMPDIR");

		snprintf(lwm2_p.dir, sizeof(lwm2_p.dir), "%s/lwm2-%u",
		         tmp && *tmp == '/' ? tmp : "/tmp", (unsigned)getuid());
	}
	slice_ms = env_num(LWM2_ENV_SLICE, 60, 1, 3600) * 1000;
	/* LWM2_SLICE_MS is for tests only (slices shorter than a second); the
	 * record then shows 1 s slices without a meaningful position. */
	slice_ms = env_num(LWM2_ENV_SLICE_MS, slice_ms, 1, 3600000);
	lwm2_p.slice_ms = slice_ms;
	lwm2_p.max_slices = (uint32_t)env_num(LWM2_ENV_MAX_SLICES, LWM2_MAX_SLICES_DEFAULT, 2,
	                                      LWM2_MAX_SLICES_LIMIT);
	lwm2_p.sample_hz = (uint32_t)env_num(LWM2_ENV_SAMPLE_HZ, 100, 1, 10000);
	lwm2_p.short_ns = env_num(LWM2_ENV_SHORT_MS, LWM2_SHORT_MS_DEFAULT, 0, 3600000) * 1000000u;
	lwm2_p.sample_sig =
	    (int)env_num(LWM2_ENV_SIGNAL, (unsigned long long)(SIGRTMIN + 7),
	                 (unsigned long long)SIGRTMIN, (unsigned long long)SIGRTMAX);

	lwm2_clock_init();
	if (lwm2_storage_init() != 0) {
		lwm2_debug("lwm2: start: couldn't allocate the record: %s", strerror(errno));
		return;
	}
	fill_identity(exe);
	if (san) {
		step_aside(exe, san);
		return;
	}
#ifdef LWM2_NO_INTERPOSE
	lwm2_real_pthread_create = pthread_create;
#else
	lwm2_real_pthread_create = lwm2_real("pthread_create");
#endif
	lwm2_process_init();
	lwm2_threads_init();
	lwm2_sampling_init();
	lwm2_signals_init();
	lwm2_thread_attach(true);
	on_exit(on_exit_hook, NULL);
	lwm2_for_each_module(m) if (m->init) m->init();
	atomic_store(&lwm2_p.next_ckpt_ns, lwm2_next_slice_end_ns());
	/* The children of a measured process (the commands of a batch
	 * script) start lazily; the first measured process of a tree (a
	 * task, or whatever an unmeasured parent started) is the
	 * application: it gets its heartbeat, hence its hardware counters'
	 * setup, at once, and keeps a record of its own however short.  See
	 * "Cost per process" in lwm2_core.h. */
	measured_parent = parent_measured();
	if (!measured_parent)
		lwm2_p.root = true;
	/* putenv of a static string: where the variable exists already (every
	 * child of a measured process) it is replaced in place, no malloc. */
	format_parent_env(parent_env, lwm2_p.pid, measured_parent);
	lwm2_container_note_root();
	putenv(parent_env);
	atomic_store(&lwm2_on, 1);
	if (!measured_parent)
		lwm2_heartbeat_start();
}

__attribute__((destructor)) static void lwm2_fini(void)
{
	if (!atomic_load(&lwm2_on) || !lwm2_here())
		return;
	/* Libraries loaded after us (CUDA, a PAPI the application uses) are
	 * finalized before this runs, those we depend on after it: the modules
	 * stop now; the final write follows in on_exit_hook. */
	lwm2_modules_fini_once();
}
