/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Processes that start unmeasured: what an exec or posix_spawn of a
 * measured process starts that the library will not be loaded into.
 *
 * The new image runs none of lwm2's code, so only its starter can count
 * it: the exec wrappers (process.c) ask here with the environment the
 * image will get and count the reason into the calling image's record
 * (LWM2_UNMEASURED_COUNTERS), which the digest adds to its process total.
 * The reasons, in the order they are looked at:
 *
 *   - no_preload: the program passed on an environment whose LD_PRELOAD
 *     no longer names this library (env -u LD_PRELOAD, env -i, a
 *     launcher's clean environment).  Known only where this process was
 *     itself preloaded through LD_PRELOAD (not /etc/ld.so.preload);
 *   - container: the program's own environment still names the library,
 *     but the container's rewrite (container.c) had to take it out (the
 *     descriptor lost, no glibc loader in the image), or the step
 *     directory's descriptor is lost and its path is not there;
 *   - static: the executable has no PT_INTERP, no loader that would
 *     preload anything.
 *
 * The common exec (the environment still names the library, no
 * container) costs the static check alone: open, one pread of the first
 * KiB (ELF header and program headers, which the kernel reads next
 * anyway) and close.  The first two reasons cost no system call.
 *
 * Runs on the exec path, possibly in the child of vfork: raw system
 * calls, buffers on the stack, no malloc, no lock.
 */
#include "core_int.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lwm2_env.h"

/* This library's file name as the loader has it (its LD_PRELOAD entry's
 * last part); empty where LD_PRELOAD did not name it at the start, and
 * the environment then tells nothing. */
static char self_base[64];

/* An LD_PRELOAD entry of len bytes at e that loads lwm2: this library's
 * file name, another build's (liblwm2*.so: a newer package at another
 * path while a node is upgraded, a site's own name for it; not the CUDA
 * injection library), or the /proc/self/fd/N a container's rewrite makes
 * of it. */
static bool is_lwm2_entry(const char *e, size_t len)
{
	static const char fd_prefix[] = "/proc/self/fd/", lib[] = "liblwm2", cuda[] = "liblwm2cuda";
	size_t sl = strlen(self_base), bl;
	const char *b = lwm2_path_base(e, len, &bl);

	return (bl == sl && !memcmp(b, self_base, sl)) ||
	       (bl >= sizeof(lib) - 1 && !memcmp(b, lib, sizeof(lib) - 1) &&
	        !(bl >= sizeof(cuda) - 1 && !memcmp(b, cuda, sizeof(cuda) - 1))) ||
	       (len > sizeof(fd_prefix) - 1 && !memcmp(e, fd_prefix, sizeof(fd_prefix) - 1));
}

/* Whether the LD_PRELOAD value v loads lwm2 (is_lwm2_entry). */
static bool names_self(const char *v)
{
	while (v && *v) {
		size_t len = strcspn(v, ": ");

		if (len && is_lwm2_entry(v, len))
			return true;
		v += len;
		if (*v)
			v++;
	}
	return false;
}

/* The object that holds this code: its name into self_base.  The
 * preloaded objects follow the program in the loader's list, so the walk
 * stops after a few.  dl_iterate_phdr, not dladdr: an old glibc (before
 * 2.34) has dladdr in libdl, which a program need not load. */
static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t at = (uintptr_t)arg;
	size_t bl;
	const char *b;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || at < lo || at - lo >= ph->p_memsz)
			continue;
		if (!info->dlpi_name)
			return 1;
		b = lwm2_path_base(info->dlpi_name, strlen(info->dlpi_name), &bl);
		if (bl && bl < sizeof(self_base)) {
			memcpy(self_base, b, bl);
			self_base[bl] = '\0';
		}
		return 1;
	}
	return 0;
}

void lwm2_unmeasured_init(void)
{
	const char *pre = lwm2_getenv("LD_PRELOAD");

	self_base[0] = '\0';
	if (!pre || !*pre)
		return;
	dl_iterate_phdr(find_self, (void *)(uintptr_t)lwm2_unmeasured_init);
	if (!names_self(pre))
		self_base[0] = '\0';
}

static const char *preload_of(char *const envp[])
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "LD_PRELOAD=", 11))
			return envp[i] + 11;
	return NULL;
}

/* The first KiB holds the ELF header and, in every executable a linker
 * makes, the program headers; more of them are read on their own. */
#define HEAD_READ 1024
#define PHDRS_MAX 64

/* 1: an ELF executable of this machine's class without PT_INTERP; 0:
 * with one, a script, or not to be told (unreadable, another class). */
static int fd_is_static(int fd)
{
	unsigned char head[HEAD_READ];
	ElfW(Phdr) ph[PHDRS_MAX];
	const ElfW(Ehdr) *eh = (const void *)head;
	const ElfW(Phdr) * p;
	long n = syscall(SYS_pread64, fd, head, sizeof(head), 0L);
	size_t need;

	if (n < (long)sizeof(*eh) || memcmp(head, ELFMAG, SELFMAG) != 0 ||
	    head[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) ||
	    eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phnum == 0 || eh->e_phnum > PHDRS_MAX)
		return 0;
	need = (size_t)eh->e_phnum * sizeof(ElfW(Phdr));
	if (eh->e_phoff <= (size_t)n && need <= (size_t)n - eh->e_phoff) {
		p = (const void *)(head + eh->e_phoff);
	} else {
		if (syscall(SYS_pread64, fd, ph, need, (long)eh->e_phoff) != (long)need)
			return 0;
		p = ph;
	}
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (p[i].p_type == PT_INTERP)
			return 0;
	return 1;
}

static int open_exe(int dirfd, const char *path)
{
	return (int)syscall(SYS_openat, dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
}

/* The file execvp would run: name itself where it has a '/', else the
 * first executable in PATH (glibc's default path without one). */
static int open_searched(const char *name)
{
	const char *path = getenv("PATH"), *p;
	char buf[PATH_MAX];
	size_t nl = strlen(name);

	if (strchr(name, '/'))
		return open_exe(AT_FDCWD, name);
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p++) {
		size_t dl = strcspn(p, ":");
		int fd;

		if (dl + 1 + nl + 1 <= sizeof(buf)) {
			memcpy(buf, p, dl);
			buf[dl] = '/';
			memcpy(buf + (dl ? dl + 1 : 0), name, nl + 1);
			if (syscall(SYS_faccessat, AT_FDCWD, buf, X_OK, 0) == 0 &&
			    (fd = open_exe(AT_FDCWD, buf)) >= 0)
				return fd;
		}
		p += dl;
		if (!*p)
			return -1;
	}
}

/* The dynamic loader run as a program (ld-linux-x86-64.so.2 PROG) has no
 * PT_INTERP either, but it preloads what LD_PRELOAD names. */
static bool is_loader(const char *path)
{
	size_t bl;
	const char *b = lwm2_path_base(path, strlen(path), &bl);

	return !strncmp(b, "ld-linux", 8) || !strncmp(b, "ld.so", 5) || !strncmp(b, "ld64.so", 7);
}

static bool exe_is_static(const struct lwm2_exec_target *t)
{
	int fd, st;

	if (t->fd >= 0 && (!t->path || !*t->path))
		return fd_is_static(t->fd) == 1;
	if (!t->path || is_loader(t->path))
		return false;
	fd = t->search ? open_searched(t->path) : open_exe(t->fd >= 0 ? t->fd : AT_FDCWD, t->path);
	if (fd < 0)
		return false;
	st = fd_is_static(fd);
	syscall(SYS_close, fd);
	return st == 1;
}

/* Whether the target can be run at all: a start that will fail starts
 * nothing to count (only asked where a reason was found). */
static bool exe_runs(const struct lwm2_exec_target *t)
{
	int fd;

	if (t->fd >= 0 && (!t->path || !*t->path))
		return true;
	if (!t->path)
		return false;
	if (!t->search || strchr(t->path, '/'))
		return syscall(SYS_faccessat, t->fd >= 0 ? t->fd : AT_FDCWD, t->path, X_OK, 0) == 0;
	fd = open_searched(t->path);
	if (fd >= 0)
		syscall(SYS_close, fd);
	return fd >= 0;
}

int lwm2_unmeasured_reason(const struct lwm2_exec_target *t, char *const caller_env[],
                           char *const envp[])
{
	int reason = -1;

	if (self_base[0] && !names_self(preload_of(caller_env)))
		reason = LWM2_C_unmeasured_no_preload;
	else if (self_base[0] && envp != caller_env && !names_self(preload_of(envp)))
		reason = LWM2_C_unmeasured_container;
	else if (exe_is_static(t))
		return LWM2_C_unmeasured_static;
	else if (lwm2_container_dir_lost())
		reason = LWM2_C_unmeasured_container;
	return reason >= 0 && exe_runs(t) ? reason : -1;
}
