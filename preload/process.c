/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Process events: the final write, fork, the exec family, posix_spawn,
 * _exit and _Exit.
 *
 * vfork needs no wrapper: its child shares our memory and runs on the
 * parent's thread storage until it execs or calls _exit.  Every path here
 * first checks that the caller is the measured process (a raw getpid()
 * against the pid we started with), so the child of vfork neither writes
 * the parent's record nor stops its timers; at most the child's few calls
 * before exec count as the parent's.
 */
#include "core_int.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lwm2_render.h"

/* The renderer may not be linked in every build; then nothing is printed. */
#pragma weak lwm2_render_rank

static void resolve_reals(void);
static void (*real__exit)(int);
static void (*real__Exit)(int);
static _Atomic int modules_done;

void lwm2_modules_fini_once(void)
{
	if (atomic_exchange(&modules_done, 1))
		return;
	lwm2_for_each_module(m) if (m->fini) m->fini();
}

static int runtime_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	static const struct {
		const char *prefix;
		uint32_t flag;
	} libs[] = {
	    {"libgomp.", LWM2_RT_OPENMP},
	    {"libomp.", LWM2_RT_OPENMP},
	    {"libiomp5.", LWM2_RT_OPENMP},
	    {"libgfortran.", LWM2_RT_FORTRAN},
	    {"libifcore", LWM2_RT_FORTRAN},
	    {"libflang", LWM2_RT_FORTRAN},
	    {"libstdc++.", LWM2_RT_CXX},
	    {"libc++.", LWM2_RT_CXX},
	    {"libcudart.", LWM2_RT_CUDA},
	    {"libcuda.", LWM2_RT_CUDA},
	    {"libpapi.", 0},
	};
	uint32_t *rt = arg;
	const char *base;

	(void)size;
	if (!info->dlpi_name || !*info->dlpi_name)
		return 0;
	base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (strncmp(base, libs[i].prefix, strlen(libs[i].prefix)) == 0)
			*rt |= libs[i].flag;
	return 0;
}

/*
 * The main program's language, from the executable alone (the first object
 * dl_iterate_phdr reports): a Fortran main program imports gfortran's
 * start-up calls (or ifort's, flang's), a C++ one needs libstdc++ or libc++
 * itself or imports the C++ personality routine.  A library loaded by
 * something else (libgfortran under a C++ solver's BLAS) does not count.
 */
static bool lang_sym(const char *n)
{
	return !strcmp(n, "_gfortran_set_args") || !strcmp(n, "_gfortran_set_options") ||
	       !strcmp(n, "for_rtl_init_") || !strncmp(n, "_FortranA", 9);
}

static int language_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint32_t *lang = arg;
	const ElfW(Dyn) *dyn = NULL;
	const char *str = NULL;
	const ElfW(Sym) *sym = NULL;
	uint32_t nsyms = 0, imports = 0;
	bool cxx = false;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	*lang = LWM2_LANG_C;
	if (!dyn)
		return 1;
/* The loader relocates these entries in place on most targets, not all. */
#define DPTR(d)                                                                                    \
	((d)->d_un.d_ptr < info->dlpi_addr ? (d)->d_un.d_ptr + info->dlpi_addr : (d)->d_un.d_ptr)
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			str = (const char *)DPTR(d);
		else if (d->d_tag == DT_SYMTAB)
			sym = (const ElfW(Sym) *)DPTR(d);
		else if (d->d_tag == DT_HASH)
			nsyms = ((const uint32_t *)DPTR(d))[1];
		else if (d->d_tag == DT_GNU_HASH)
			imports = ((const uint32_t *)DPTR(d))[1];
	}
	/* The names sought are imports, which a GNU hash table leaves out and
	 * the linker puts first, before its symoffset: only those are read
	 * (bash exports 1,700 more, whose scan cost its exit 400,000
	 * instructions and the pages of its symbol table). */
	if (imports)
		nsyms = imports;
	if (!str)
		return 1;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_NEEDED && (!strncmp(str + d->d_un.d_val, "libstdc++.", 10) ||
		                              !strncmp(str + d->d_un.d_val, "libc++.", 7)))
			cxx = true;
#undef DPTR
	for (uint32_t i = 0; sym && i < nsyms && i < (1u << 20); i++) {
		const char *n = str + sym[i].st_name;

		if (sym[i].st_shndx != SHN_UNDEF || (n[0] != '_' && n[0] != 'f'))
			continue;
		if (lang_sym(n)) {
			*lang = LWM2_LANG_FORTRAN;
			return 1;
		}
		if (!strcmp(n, "__gxx_personality_v0"))
			cxx = true;
	}
	if (cxx)
		*lang = LWM2_LANG_CXX;
	return 1; /* the executable only */
}

/* Not in a signal handler: dl_iterate_phdr takes the loader's lock. */
void lwm2_detect_runtimes(void)
{
	uint32_t rt = 0, lang = LWM2_LANG_UNKNOWN;

	dl_iterate_phdr(language_cb, &lang);
	lwm2_p.img->language = lang;
	dl_iterate_phdr(runtime_cb, &rt);
	if (lwm2_p.threads_total > 1)
		rt |= LWM2_RT_PTHREADS;
	lwm2_p.img->runtimes |= rt;
	lwm2_identity_collect();
	lwm2_identity_apply(lwm2_p.img);
	lwm2_p.runtimes_pending = false;
}

/*
 * Before an image's final write, under the lock, not in a signal handler.
 * A short image goes to the step's summary, which keeps neither its
 * language, its runtimes nor its identity; finding them reads the
 * program's symbol table and every loaded object's headers (16,000
 * instructions for a trivial program, more and some page faults for a
 * real one, in every command of a script).  They are left to the record
 * file's writer, which finds them should the summary refuse the image.
 */
static void before_final_write(void)
{
	if (lwm2_goes_to_summary())
		lwm2_p.runtimes_pending = true;
	else
		lwm2_detect_runtimes();
}

static void print_digest(void)
{
	if (lwm2_p.print && lwm2_render_rank)
		lwm2_render_rank(lwm2_p.img, 2);
}

/*
 * A termination signal that comes while the final write is under way (a
 * pool's worker on its way out, which its parent ends with SIGTERM) would
 * end the process with its record half written, and the final write is
 * the one its counts are in.  Its handler leaves the signal here instead,
 * and the writer, once done, ends the process by it.  Lock-free: the
 * handler may run on top of the writer.
 */
bool lwm2_finish_defer(int sig)
{
	int cur = atomic_load(&lwm2_p.finished);

	while (cur & LWM2_FIN_WRITING) {
		if (cur >> LWM2_FIN_SIG_SHIFT) /* one is held already */
			return true;
		if (atomic_compare_exchange_weak(&lwm2_p.finished, &cur,
		                                 cur | sig << LWM2_FIN_SIG_SHIFT))
			return true;
	}
	return false;
}

/* The final write is done: from here no signal is held; the one held
 * meanwhile, if any (0: none). */
static int finish_claim(void)
{
	return atomic_exchange(&lwm2_p.finished, LWM2_FIN_DONE) >> LWM2_FIN_SIG_SHIFT;
}

/* A signal held during the final write of how ends the process, as it
 * would have without the write (at SIG_DFL, where its handler put it):
 * the record says so, as the signal's own final write would have.
 * Under the lock, in normal context. */
static int finish_claim_rewrite(enum lwm2_end how)
{
	int held = finish_claim();

	if (held)
		lwm2_rank_file_signaled(how, held);
	return held;
}

/* Not from a handler's own final write, which ends by its own signal
 * next. */
static void finish_raise(int held)
{
	if (held)
		syscall(SYS_kill, lwm2_raw_getpid(), held);
}

void lwm2_finish(enum lwm2_end how, int status, int sig, bool sigctx)
{
	int held = 0;

	if (!lwm2_p.img || !atomic_load(&lwm2_on) || !lwm2_here() ||
	    atomic_load(&lwm2_p.finished) != 0)
		return;
	if (!sigctx) {
		lwm2_for_each_module(m) if (m->slice_end) m->slice_end();
		if (how == LWM2_END_EXIT)
			lwm2_modules_fini_once();
	}
	/* Claimed after the modules' ends (a CUDA flush may wait): a signal
	 * meanwhile writes the record itself; from here it waits for it. */
	if (how != LWM2_END_CHECKPOINT && atomic_exchange(&lwm2_p.finished, LWM2_FIN_WRITING) != 0)
		return;
	if (sigctx) {
		if (!lwm2_lock_sig()) {
			if (how != LWM2_END_CHECKPOINT)
				finish_claim();
			return;
		}
	} else {
		lwm2_in_core++;
		lwm2_lock();
	}
	if (!sigctx && how != LWM2_END_CHECKPOINT)
		before_final_write();
	if (how != LWM2_END_CHECKPOINT)
		lwm2_sampling_catch_up();
	/* At exit a late sample only counts into storage nobody reads: the
	 * timers die with the process, one system call less each. */
	if (how != LWM2_END_CHECKPOINT && how != LWM2_END_EXIT)
		lwm2_sampling_stop_all();
	lwm2_record_write(how, status, sig, sigctx);
	lwm2_p.runtimes_pending = false;
	if (how != LWM2_END_CHECKPOINT)
		held = sigctx ? (finish_claim(), 0) : finish_claim_rewrite(how);
	lwm2_unlock();
	if (!sigctx)
		lwm2_in_core--;
	if (how != LWM2_END_CHECKPOINT) {
		/* The renderer is signal-safe (no stdio, no malloc). */
		print_digest();
		atomic_store(&lwm2_on, 0);
		finish_raise(held);
	}
}

/* ---- fork ---- */

static void atfork_prepare(void)
{
	lwm2_heartbeat_fork_prepare();
	lwm2_in_core++;
	lwm2_lock_reclaim(&lwm2_p.lock);
	lwm2_lock();
}

static void atfork_parent(void)
{
	/* a copy made without fork's handlers that forked: known from now */
	lwm2_lock_known_pid(lwm2_raw_getpid());
	lwm2_unlock();
	lwm2_heartbeat_fork_parent();
	lwm2_in_core--;
	/* A process that forks (a shell, a driver) outlives its children
	 * and may wait for them without using CPU time: it gets its
	 * heartbeat now, once, so a SIGKILL while it waits still leaves its
	 * record. */
	lwm2_heartbeat_want();
}

static void atfork_child(void)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	pid_t self = lwm2_raw_getpid();

	lwm2_lock_known_pid(self);
	/* The parent's holder of the lock is gone with its thread. */
	lwm2_p.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	lwm2_heartbeat_fork_child_locks();
	if (!atomic_load(&lwm2_on) || atomic_load(&lwm2_p.finished)) {
		lwm2_in_core--;
		return;
	}
	/* The parent is the process measured until now: its pid is known. */
	r->ppid = (int32_t)lwm2_p.pid;
	lwm2_p.pid = self;
	lwm2_p.start_ns = lwm2_now_ns();
	lwm2_p.root = false; /* a task's children are not tasks */
	r->pid = (int32_t)lwm2_p.pid;
	r->start_ns = (int64_t)lwm2_p.start_ns;
	lwm2_threads_fork_child();
	lwm2_view_fork_child();
	lwm2_regions_fork_child();
	lwm2_storage_fork_child();
	if (lwm2_self)
		lwm2_sampling_thread_start(lwm2_self);
	atomic_fetch_add(&lwm2_p.hb_generation, 1);
	lwm2_heartbeat_fork_child();
	/* No heartbeat: a child that execs at once must cost nothing more. */
	atomic_store(&lwm2_p.next_ckpt_ns, lwm2_next_slice_end_ns());
	lwm2_in_core--;
	lwm2_for_each_module(m) if (m->fork_child) m->fork_child();
}

void lwm2_process_init(void)
{
	real__exit = lwm2_real("_exit");
	real__Exit = lwm2_real("_Exit");
	resolve_reals();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* The real functions, resolved in the constructor: the first exec may come
 * from the child of vfork, where dlsym (locks, malloc) would act on the
 * parent's memory. */
static void *real_fn[8];
enum { R_EXECVE, R_EXECV, R_EXECVP, R_EXECVPE, R_EXECVEAT, R_FEXECVE, R_UNSHARE, R_SETNS };
static const char *const real_names[8] = {"execve",   "execv",   "execvp",  "execvpe",
                                          "execveat", "fexecve", "unshare", "setns"};

static void resolve_reals(void)
{
#ifdef LWM2_NO_INTERPOSE
	return;
#endif
	for (int i = 0; i < 8; i++)
		if (!real_fn[i])
			real_fn[i] = lwm2_real(real_names[i]);
}

/* ---- exec ---- */

/* Saves the record as the end of this image and keeps the lock until exec
 * returns (it only returns on failure): the heartbeat cannot write after
 * the final record. */
__attribute__((unused)) static bool exec_prepare(int unmeasured)
{
	int held;

	if (!atomic_load(&lwm2_on) || !lwm2_here() || atomic_load(&lwm2_p.finished))
		return false;
	lwm2_for_each_module(m) if (m->slice_end) m->slice_end();
	lwm2_in_core++;
	lwm2_lock();
	atomic_store(&lwm2_p.finished, LWM2_FIN_WRITING);
	lwm2_sampling_catch_up();
	lwm2_sampling_stop_all();
	lwm2_sampling_drain();
	/* The child of a shell that execs at once writes nothing (the next
	 * image is the process): its record is not made, and the language
	 * check alone reads pages of the shell's symbol table. */
	if (!lwm2_rank_idle_fork_child()) {
		before_final_write();
		lwm2_record_write(LWM2_END_EXEC, 0, 0, false);
		lwm2_p.runtimes_pending = false;
		print_digest();
	}
	/* A signal that came meanwhile ends this image, never the next: the
	 * process it would have started never starts. */
	held = finish_claim();
	if (held) {
		if (unmeasured >= 0)
			lwm2_record_uncount((enum lwm2_counter)unmeasured);
		lwm2_rank_file_signaled(LWM2_END_EXEC, held);
	}
	finish_raise(held);
	return true;
}

__attribute__((unused)) static void exec_failed(bool prepared, int unmeasured)
{
	int saved = errno;

	/* In the child of vfork (not prepared) a count stays with the
	 * parent's thread: the target was found runnable first
	 * (lwm2_unmeasured_reason), so only a rarer failure (E2BIG, ENOMEM)
	 * leaves one there. */
	if (!prepared)
		return;
	/* Nothing started: the count of what would have is taken back. */
	if (unmeasured >= 0)
		lwm2_record_uncount((enum lwm2_counter)unmeasured);
	lwm2_p.img->flags &= ~(uint32_t)LWM2_F_EXEC;
	atomic_store(&lwm2_p.finished, 0);
	lwm2_sampling_resume_all();
	lwm2_record_write(LWM2_END_CHECKPOINT, 0, 0, false);
	lwm2_unlock();
	lwm2_in_core--;
	errno = saved;
}

#ifndef LWM2_NO_INTERPOSE
#define REAL(type, name, idx)                                                                      \
	type real_##name;                                                                          \
	if (!real_fn[idx])                                                                         \
		real_fn[idx] = lwm2_real(#name);                                                   \
	real_##name = (type)real_fn[idx];                                                          \
	if (!real_##name) {                                                                        \
		errno = ENOSYS;                                                                    \
		return -1;                                                                         \
	}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

extern char **environ;

/* One exec call, carried through lwm2_exec_with_env (container.c), which
 * hands it the environment the new image must get. */
struct exec_call {
	int kind; /* R_EXECVE ... R_FEXECVE */
	const char *path;
	char *const *argv;
	int fd, flags;
	char *const *caller_env; /* the call's own envp; environ for execv and execvp */
	bool prepared;           /* exec_prepare wrote the record */
	int unmeasured;          /* the counter of what it starts unmeasured, or -1 */
};

/* What an exec or posix_spawn starts unmeasured, counted into the calling
 * thread's buffer: the measured process's, or in the child of vfork its
 * parent's thread (never attached there).  The counter, or -1. */
static int count_unmeasured(const struct lwm2_exec_target *t, char *const caller_env[],
                            char *const envp[])
{
	struct lwm2_thread *th;
	int reason;

	if (!atomic_load(&lwm2_on) || atomic_load(&lwm2_p.finished))
		return -1;
	reason = lwm2_unmeasured_reason(t, caller_env, envp);
	if (reason < 0)
		return -1;
	th = lwm2_here() ? lwm2_thread_get() : lwm2_self;
	if (!th)
		return -1;
	lwm2_count(th, (enum lwm2_counter)reason, 1);
	return reason;
}

static int exec_call_real(struct exec_call *c, char *const envp[]);

/* The image is ended with the environment the new one gets: whether that
 * one is measured is known only now (a container's rewrite). */
static int exec_call_run(void *arg, char *const envp[])
{
	struct exec_call *c = arg;
	struct lwm2_exec_target t = {
	    .path = c->path,
	    .fd = c->kind == R_EXECVEAT || c->kind == R_FEXECVE ? c->fd : -1,
	    .search = c->kind == R_EXECVP || c->kind == R_EXECVPE,
	};

	if (c->kind == R_EXECVEAT && (c->flags & AT_EMPTY_PATH) && c->path && !*c->path)
		t.path = NULL;
	c->unmeasured = count_unmeasured(&t, c->caller_env, envp);
	c->prepared = exec_prepare(c->unmeasured);
	return exec_call_real(c, envp);
}

/* AddressSanitizer's runtime, where the process has one (a sanitized
 * program, or this library built with it). */
extern void __asan_handle_no_return(void) __attribute__((weak));

/* execv and execvp pass environ on themselves; with another environment
 * they become execve and execvpe. */
static int exec_call_real(struct exec_call *c, char *const envp[])
{
	bool own = envp == c->caller_env;

	/* What the sanitizer's own exec interceptors do, which the call
	 * below passes by (the next definition is libc's): the stack's
	 * poisoned red zones made clean, since the frames under this call
	 * never return.  In the child of vfork they are the parent's stack,
	 * and the parent would meet their stale poison in frames of its own
	 * (seen: a false stack-buffer-overflow in the shell after it ran a
	 * command). */
	if (__asan_handle_no_return)
		__asan_handle_no_return();

	switch (c->kind) {
	case R_EXECV:
		if (own)
			return ((execv_fn)real_fn[R_EXECV])(c->path, c->argv);
		return ((execve_fn)real_fn[R_EXECVE])(c->path, c->argv, envp);
	case R_EXECVP:
		if (own || !real_fn[R_EXECVPE])
			return ((execv_fn)real_fn[R_EXECVP])(c->path, c->argv);
		return ((execve_fn)real_fn[R_EXECVPE])(c->path, c->argv, envp);
	case R_EXECVPE:
		return ((execve_fn)real_fn[R_EXECVPE])(c->path, c->argv, envp);
	case R_EXECVEAT:
		return ((execveat_fn)real_fn[R_EXECVEAT])(c->fd, c->path, c->argv, envp, c->flags);
	case R_FEXECVE:
		return ((fexecve_fn)real_fn[R_FEXECVE])(c->fd, c->argv, envp);
	default:
		return ((execve_fn)real_fn[R_EXECVE])(c->path, c->argv, envp);
	}
}

static int exec_wrapped(struct exec_call *c)
{
	int rc;

	if (!real_fn[c->kind])
		real_fn[c->kind] = lwm2_real(real_names[c->kind]);
	if (!real_fn[c->kind] || (c->kind == R_EXECV && !real_fn[R_EXECVE])) {
		errno = ENOSYS;
		return -1;
	}
	c->prepared = false;
	c->unmeasured = -1;
	rc = lwm2_exec_with_env(c->caller_env, exec_call_run, c);
	exec_failed(c->prepared, c->unmeasured);
	return rc;
}

LWM2_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_wrapped(
	    &(struct exec_call){.kind = R_EXECVE, .path = path, .argv = argv, .caller_env = envp});
}

LWM2_EXPORT int execv(const char *path, char *const argv[])
{
	return exec_wrapped(&(struct exec_call){
	    .kind = R_EXECV, .path = path, .argv = argv, .caller_env = environ});
}

LWM2_EXPORT int execvp(const char *file, char *const argv[])
{
	return exec_wrapped(&(struct exec_call){
	    .kind = R_EXECVP, .path = file, .argv = argv, .caller_env = environ});
}

LWM2_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_wrapped(
	    &(struct exec_call){.kind = R_EXECVPE, .path = file, .argv = argv, .caller_env = envp});
}

LWM2_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                         int flags)
{
	return exec_wrapped(&(struct exec_call){.kind = R_EXECVEAT,
	                                        .path = path,
	                                        .argv = argv,
	                                        .fd = dirfd,
	                                        .flags = flags,
	                                        .caller_env = envp});
}

LWM2_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	return exec_wrapped(
	    &(struct exec_call){.kind = R_FEXECVE, .fd = fd, .argv = argv, .caller_env = envp});
}

/* The execl family: the arguments into an array on the stack, then the
 * matching execv call (through the wrappers above): execv, execvp (p) or,
 * with the environment after the list's NULL, execve (e). */
static int exec_list(char kind, const char *path, const char *arg, va_list ap)
{
	va_list aq;
	size_t n = 1;

	va_copy(aq, ap);
	while (va_arg(aq, char *))
		n++;
	va_end(aq);
	{
		char *argv[n + 1];

		argv[0] = (char *)arg;
		for (size_t i = 1; i < n; i++)
			argv[i] = va_arg(ap, char *);
		argv[n] = NULL;
		if (kind == 'e') {
			(void)va_arg(ap, char *); /* the terminating NULL */
			return execve(path, argv, va_arg(ap, char *const *));
		}
		return kind == 'p' ? execvp(path, argv) : execv(path, argv);
	}
}

LWM2_EXPORT int execl(const char *path, const char *arg, ...)
{
	return LWM2_WITH_VA(ap, arg, exec_list('v', path, arg, ap));
}

LWM2_EXPORT int execlp(const char *file, const char *arg, ...)
{
	return LWM2_WITH_VA(ap, arg, exec_list('p', file, arg, ap));
}

LWM2_EXPORT int execle(const char *path, const char *arg, ...)
{
	return LWM2_WITH_VA(ap, arg, exec_list('e', path, arg, ap));
}

/* posix_spawn replaces no image of ours (glibc's child execs internally
 * and shares nothing with our storage); the record is brought up to date
 * so that it is current while the child runs. */
static void spawn_prepare(void)
{
	/* Like fork: the caller waits for the child, maybe without CPU. */
	lwm2_heartbeat_want();
	if (lwm2_p.map)
		lwm2_finish(LWM2_END_CHECKPOINT, 0, 0, false);
}

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

struct spawn_call {
	spawn_fn real;
	pid_t *pid;
	const char *path;
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *attr;
	char *const *argv;
	char *const *caller_env;
	bool search; /* posix_spawnp */
};

/* A child that did not start is not counted: the target is looked at
 * first, counted once the spawn succeeded. */
static int spawn_call_run(void *arg, char *const envp[])
{
	struct spawn_call *c = arg;
	struct lwm2_exec_target t = {.path = c->path, .fd = -1, .search = c->search};
	struct lwm2_thread *th;
	int reason = -1, rc;

	if (atomic_load(&lwm2_on) && lwm2_here())
		reason = lwm2_unmeasured_reason(&t, c->caller_env, envp);
	rc = c->real(c->pid, c->path, c->fa, c->attr, c->argv, envp);
	if (rc == 0 && reason >= 0 && (th = lwm2_thread_get()))
		lwm2_count(th, (enum lwm2_counter)reason, 1);
	return rc;
}

static int spawn_wrapped(struct spawn_call *c, const char *name, char *const envp[])
{
	static spawn_fn real[2];
	int i = name[11] == 'p'; /* posix_spawnp */

	if (!real[i])
		real[i] = (spawn_fn)lwm2_real(name);
	if (!real[i])
		return ENOSYS;
	c->real = real[i];
	c->caller_env = envp;
	c->search = i == 1;
	spawn_prepare();
	return lwm2_exec_with_env(envp, spawn_call_run, c);
}

LWM2_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                            const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_wrapped(
	    &(struct spawn_call){.pid = pid, .path = path, .fa = fa, .attr = attr, .argv = argv},
	    "posix_spawn", envp);
}

LWM2_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                             const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_wrapped(
	    &(struct spawn_call){.pid = pid, .path = file, .fa = fa, .attr = attr, .argv = argv},
	    "posix_spawnp", envp);
}

/* posix_spawn's file action "close from N" (glibc 2.34): glibc's spawn
 * code closes the range with a raw close_range in the child, where no
 * wrapper of ours runs.  Inside a container, lwm2's descriptors in the
 * range stay open: the numbers below them are closed one by one instead
 * (a close of a number not open is no error there) and the range above
 * them as asked.  Outside a container it is the call as it was. */
typedef int (*addclosefrom_fn)(posix_spawn_file_actions_t *, int);

LWM2_EXPORT int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *fa, int from)
{
	static addclosefrom_fn real;
	int ours[2], n, r;

	if (!real)
		real = (addclosefrom_fn)lwm2_real("posix_spawn_file_actions_addclosefrom_np");
	if (!real)
		return ENOSYS;
	if (LWM2_LIKELY(!lwm2_keep_on) || from < 0 ||
	    (n = lwm2_keep_in_range((unsigned)from, ~0u, ours)) == 0)
		return real(fa, from);
	for (int fd = from, i = 0; fd < ours[n - 1]; fd++) {
		if (i < n && fd == ours[i]) {
			i++;
			continue;
		}
		if ((r = posix_spawn_file_actions_addclose(fa, fd)) != 0)
			return r;
	}
	return real(fa, ours[n - 1] + 1);
}

/* ---- namespaces ---- */

/* unshare(CLONE_NEWUSER) and setns() into a user or mount namespace fail
 * with EINVAL in a multithreaded process: container runtimes (Apptainer's
 * starter, unshare(1), bubblewrap) would break because of the heartbeat.
 * It is stopped for the call and started again after it. */
typedef int (*unshare_fn)(int);
typedef int (*setns_fn)(int, int);

static bool ns_prepare(void)
{
	return atomic_load(&lwm2_on) && lwm2_here() && !atomic_load(&lwm2_p.finished) &&
	       lwm2_heartbeat_stop();
}

static void ns_done(bool stopped)
{
	int saved = errno;

	if (stopped)
		lwm2_heartbeat_start();
	errno = saved;
}

LWM2_EXPORT int unshare(int flags)
{
	bool stopped;
	int rc;

	REAL(unshare_fn, unshare, R_UNSHARE);
	stopped = ns_prepare();
	rc = real_unshare(flags);
	ns_done(stopped);
	return rc;
}

LWM2_EXPORT int setns(int fd, int nstype)
{
	bool stopped;
	int rc;

	REAL(setns_fn, setns, R_SETNS);
	stopped = ns_prepare();
	rc = real_setns(fd, nstype);
	ns_done(stopped);
	return rc;
}

/* ---- _exit ---- */

/* The real call, after the final write; the system call where there is
 * none. */
__attribute__((noreturn)) static void exit_by(void (*real)(int), int status)
{
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

LWM2_EXPORT void _exit(int status)
{
	lwm2_finish(LWM2_END_EXIT, status, 0, false);
	exit_by(real__exit, status);
}

/* quick_exit() runs the at_quick_exit handlers, then ends through glibc's
 * internal _exit, which no wrapper sees. */
LWM2_EXPORT void quick_exit(int status)
{
	static void (*real)(int);

	lwm2_finish(LWM2_END_EXIT, status, 0, false);
	if (!real)
		real = (void (*)(int))lwm2_real("quick_exit");
	exit_by(real, status);
}

LWM2_EXPORT void _Exit(int status)
{
	lwm2_finish(LWM2_END_EXIT, status, 0, false);
	exit_by(real__Exit, status);
}
#endif
