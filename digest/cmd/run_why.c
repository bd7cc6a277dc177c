/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2 run: why a command left no record.  Each reason is said only where
 * it is established: the program's file (an ELF without a program
 * interpreter reads no LD_PRELOAD; a set-user-ID, set-group-ID or
 * capability-carrying file runs in secure mode, where ld.so ignores
 * preload paths; a program of another ELF class or machine cannot take
 * the library), the program's own loader asked in its list mode (it says
 * whether and why liblwm2.so cannot be preloaded), and how the process
 * ended (a signal before the record was written; another program's name
 * after an exec).  What none of these establishes is said as such.
 */
#define _GNU_SOURCE /* sigabbrev_np */
#include "config.h"

#include "cmd_io.h"
#include "run_why.h"
#include "stepenv.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

/* Linux follows at most this many #! interpreters (binfmt_script). */
#define SCRIPT_DEPTH 4
/* The loader lists a program's libraries in milliseconds: a probe that
 * takes longer than this is not answering. */
#define PROBE_MS 5000

int lwm2_run_resolve(const char *cmd, char *out, size_t outlen)
{
	const char *path = getenv("PATH"), *p;
	struct stat sb;

	if (strchr(cmd, '/')) {
		snprintf(out, outlen, "%s", cmd);
		return 0;
	}
	/* execvp's default search path where PATH is unset. */
	p = path ? path : "/bin:/usr/bin";
	for (;;) {
		size_t len = strcspn(p, ":");

		/* An empty entry is the current directory. */
		if ((size_t)snprintf(out, outlen, "%.*s%s%s", (int)len, len ? p : ".", "/", cmd) <
		        outlen &&
		    stat(out, &sb) == 0 && S_ISREG(sb.st_mode) && access(out, X_OK) == 0)
			return 0;
		if (!p[len])
			break;
		p += len + 1;
	}
	return -1;
}

static bool read_at(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off) == (ssize_t)len;
}

struct elf_info {
	bool elf;
	unsigned char cls; /* ELFCLASS32, ELFCLASS64 */
	uint16_t machine;
	bool has_interp;
	char interp[PATH_MAX];
	const char *sanitizer; /* the runtime it is built with, NULL none */
};

/* The runtimes liblwm2.so steps aside for (preload/sanitizer.c), by the symbol
 * each puts in the dynamic symbol table of a program built with it
 * (referenced from libasan.so, gcc's way, or defined, clang's). */
static const char *const san_names[][2] = {
    {"__asan_init", "AddressSanitizer"},
    {"__tsan_init", "ThreadSanitizer"},
    {"__msan_init", "MemorySanitizer"},
    {"__hwasan_init", "HWAddressSanitizer"},
};

/* The dynamic string table is at most this large in a program lwm2 looks
 * into; a larger one is not read. */
#define DYNSTR_MAX (16u << 20)

/* ELF headers of either class, read as one; ELF_FIELD reads a field of
 * the class cls. */
union elf_ehdr {
	Elf32_Ehdr e32;
	Elf64_Ehdr e64;
};
union elf_phdr {
	Elf32_Phdr e32;
	Elf64_Phdr e64;
};
union elf_shdr {
	Elf32_Shdr e32;
	Elf64_Shdr e64;
};
#define ELF_FIELD(cls, u, f) ((cls) == ELFCLASS64 ? (uint64_t)(u).e64.f : (uint64_t)(u).e32.f)

/* The header of class cls at at into u (sizes of its two forms), whose
 * table entries are ent bytes apart: false when it does not fit or
 * cannot be read. */
static bool read_elf_part(int fd, unsigned char cls, void *u, size_t size32, size_t size64,
                          size_t ent, off_t at)
{
	size_t size = cls == ELFCLASS64 ? size64 : size32;

	return ent >= size && read_at(fd, u, size, at);
}

/* The sanitizer whose symbol the dynamic string table (the one .dynsym
 * links to) holds, NULL for none or a file without section headers. */
static const char *sanitizer_of(int fd, unsigned char cls, uint64_t shoff, unsigned shnum,
                                unsigned shent)
{
	uint64_t off = 0, size = 0;
	const char *found = NULL;
	unsigned link = 0;
	char *tab;

	for (unsigned pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < shnum && i < 65536; i++) {
			off_t at = (off_t)(shoff + (uint64_t)i * shent);
			uint64_t type, o, sz, l;

			union elf_shdr sh;

			if (!read_elf_part(fd, cls, &sh, sizeof(sh.e32), sizeof(sh.e64), shent, at))
				return NULL;
			type = ELF_FIELD(cls, sh, sh_type), o = ELF_FIELD(cls, sh, sh_offset);
			sz = ELF_FIELD(cls, sh, sh_size), l = ELF_FIELD(cls, sh, sh_link);
			if (pass == 0 && type == SHT_DYNSYM) {
				link = (unsigned)l;
				break;
			}
			if (pass == 1 && i == link) {
				off = o, size = sz;
				break;
			}
		}
		if (!link)
			return NULL;
	}
	if (!size || size > DYNSTR_MAX || !(tab = malloc(size + 1)))
		return NULL;
	if (read_at(fd, tab, size, (off_t)off)) {
		tab[size] = '\0';
		for (size_t at = 0; at < size && !found; at += strlen(tab + at) + 1)
			for (size_t k = 0; k < sizeof(san_names) / sizeof(san_names[0]); k++)
				if (!strcmp(tab + at, san_names[k][0]))
					found = san_names[k][1];
	}
	free(tab);
	return found;
}

/* The file's ELF header and program interpreter (PT_INTERP), host byte
 * order only: a program of the other order does not run here at all. */
static void read_elf(const char *path, struct elf_info *e)
{
	unsigned char id[EI_NIDENT];
	union elf_ehdr h;
	uint64_t phoff, shoff;
	unsigned phnum, phent, shnum, shent;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	memset(e, 0, sizeof(*e));
	if (fd < 0)
		return;
	if (!read_at(fd, id, sizeof(id), 0) || memcmp(id, ELFMAG, SELFMAG) ||
	    (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64))
		goto out;
	e->cls = id[EI_CLASS];
	if (!read_elf_part(fd, e->cls, &h, sizeof(h.e32), sizeof(h.e64), sizeof(h), 0))
		goto out;
	e->machine = (unsigned)ELF_FIELD(e->cls, h, e_machine);
	phoff = ELF_FIELD(e->cls, h, e_phoff);
	phnum = (unsigned)ELF_FIELD(e->cls, h, e_phnum);
	phent = (unsigned)ELF_FIELD(e->cls, h, e_phentsize);
	shoff = ELF_FIELD(e->cls, h, e_shoff);
	shnum = (unsigned)ELF_FIELD(e->cls, h, e_shnum);
	shent = (unsigned)ELF_FIELD(e->cls, h, e_shentsize);
	e->elf = true;
	e->sanitizer = sanitizer_of(fd, e->cls, shoff, shnum, shent);
	for (unsigned i = 0; i < phnum && i < 4096; i++) {
		uint64_t type, off, size;
		off_t at = (off_t)(phoff + (uint64_t)i * phent);

		union elf_phdr ph;

		if (!read_elf_part(fd, e->cls, &ph, sizeof(ph.e32), sizeof(ph.e64), phent, at))
			break;
		type = ELF_FIELD(e->cls, ph, p_type), off = ELF_FIELD(e->cls, ph, p_offset);
		size = ELF_FIELD(e->cls, ph, p_filesz);
		if (type != PT_INTERP)
			continue;
		e->has_interp = true;
		if (size >= sizeof(e->interp))
			size = sizeof(e->interp) - 1;
		if (!read_at(fd, e->interp, size, (off_t)off))
			e->interp[0] = '\0';
		e->interp[size] = '\0';
		break;
	}
out:
	close(fd);
}

/* A "#!" script's interpreter into interp; false for anything else. */
static bool script_interp(const char *path, char *interp, size_t len)
{
	char buf[256];
	ssize_t n;
	size_t s, l;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 3 || buf[0] != '#' || buf[1] != '!')
		return false;
	buf[n] = '\0';
	s = 2 + strspn(buf + 2, " \t");
	l = strcspn(buf + s, " \t\n");
	if (!l || l >= len)
		return false;
	memcpy(interp, buf + s, l);
	interp[l] = '\0';
	return true;
}

/*
 * Whether the kernel runs the file in secure mode for us (AT_SECURE): it
 * changes our effective user or group, or grants capabilities.  Neither
 * happens on a nosuid mount or under no_new_privs.  Into what: the reason.
 */
static bool secure_mode(const char *path, char *what, size_t len)
{
	struct stat sb;
	struct statvfs vfs;

	if (stat(path, &sb) < 0)
		return false;
	if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID))
		return false;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		return false;
	if ((sb.st_mode & S_ISUID) && sb.st_uid != geteuid()) {
		snprintf(what, len, "is set-user-ID (to uid %u)", (unsigned)sb.st_uid);
		return true;
	}
	if ((sb.st_mode & S_ISGID) && (sb.st_mode & S_IXGRP) && sb.st_gid != getegid()) {
		snprintf(what, len, "is set-group-ID (to gid %u)", (unsigned)sb.st_gid);
		return true;
	}
	/* Capabilities make exec secure only for a caller who is not root
	 * already (the kernel's cap_bprm_creds_from_file). */
	if ((getuid() != 0 || geteuid() != 0) &&
	    getxattr(path, "security.capability", NULL, 0) > 0) {
		snprintf(what, len, "has file capabilities");
		return true;
	}
	return false;
}

/* glibc's loader, whose list mode runs none of the program's code; another
 * loader (musl's) would run the program itself when asked the same. */
static bool glibc_loader(const char *interp)
{
	const char *b = strrchr(interp, '/');

	b = b ? b + 1 : interp;
	return !strncmp(b, "ld-linux", 8) || !strncmp(b, "ld64.so", 7) || !strncmp(b, "ld.so", 5);
}

static int own_get(void *ctx, const char *var, char *buf, size_t len)
{
	const char *v = getenv(var);

	(void)ctx;
	if (snprintf(buf, len, "%s", v ? v : "") >= (int)len)
		return -1;
	return 0;
}

static int own_set(void *ctx, const char *var, const char *val)
{
	(void)ctx;
	return setenv(var, val, 1);
}

static void own_unset(void *ctx, const char *var)
{
	(void)ctx;
	unsetenv(var);
}

const struct lwm2_env_ops lwm2_run_own_env = {own_get, own_set, own_unset, NULL};

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Ask the program's own loader, in its list mode and with the environment
 * the program had, whether it preloads liblwm2.so.  Returns true with the
 * loader's words in said where it cannot.
 */
static bool loader_refuses(const char *path, const struct lwm2_step_env *env, char *said,
                           size_t len)
{
	char out[8192], err[256];
	size_t n = 0;
	int rfd, st;
	struct timespec t0;
	pid_t pid;
	char *line, *save = NULL;

	pid = lwm2_cmd_fork_pipe(&rfd);
	if (pid < 0)
		return false;
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, 0);
		dup2(1, 2);
		if (lwm2_step_env_set(&lwm2_run_own_env, env, err, sizeof(err)) < 0)
			_exit(126);
		setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pf = {.fd = rfd, .events = POLLIN};
		long left = PROBE_MS - ms_since(&t0);
		ssize_t r;

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		r = read(rfd, out + n, sizeof(out) - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == sizeof(out) - 1)
			break;
	}
	close(rfd);
	kill(pid, SIGKILL); /* already gone, but for a loader that hangs */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	out[n] = '\0';
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *why = strstr(line, "cannot be preloaded (");

		line += strspn(line, " \t");
		if (why) {
			/* ERROR: ld.so: object 'L' from LD_PRELOAD cannot be
			 * preloaded (REASON): ignored. */
			const char *s = why + strlen("cannot be preloaded (");
			const char *e = strrchr(s, ')');

			snprintf(said, len, "%.*s", e ? (int)(e - s) : (int)strlen(s), s);
			return true;
		}
		/* A library liblwm2.so needs ("libX => not found"), or a
		 * symbol version its C library lacks. */
		if (strstr(line, "not found")) {
			snprintf(said, len, "%s", line);
			return true;
		}
	}
	return false;
}

static const char *base(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

void lwm2_run_why(const struct lwm2_run_end *end, const struct lwm2_step_env *env, char *why,
                  size_t len)
{
	char path[PATH_MAX], prog[PATH_MAX], what[64], said[512], via[PATH_MAX + 64] = "";
	struct elf_info e, l;
	int depth;

	if (lwm2_run_resolve(end->cmd, path, sizeof(path)) < 0) {
		snprintf(why, len, "lwm2 couldn't find %s along PATH to look at it", end->cmd);
		return;
	}
	/* The program that runs: a script's interpreter, followed. */
	snprintf(prog, sizeof(prog), "%s", path);
	for (depth = 0; depth < SCRIPT_DEPTH; depth++) {
		char interp[PATH_MAX];

		if (!script_interp(prog, interp, sizeof(interp)))
			break;
		snprintf(via, sizeof(via), "%s is a script for %s, which ", end->cmd, interp);
		snprintf(prog, sizeof(prog), "%s", interp);
	}
	if (!via[0])
		snprintf(via, sizeof(via), "%s ", end->cmd);
	read_elf(prog, &e);
	read_elf(env->lib, &l);
	if (e.elf && l.elf && (e.cls != l.cls || e.machine != l.machine)) {
		snprintf(why, len,
		         "%sis a %s program for ELF machine %u and %s a %s library for machine %u: "
		         "a program's loader preloads only libraries of its own kind",
		         via, e.cls == ELFCLASS64 ? "64-bit" : "32-bit", e.machine, env->lib,
		         l.cls == ELFCLASS64 ? "64-bit" : "32-bit", l.machine);
		return;
	}
	if (e.elf && !e.has_interp) {
		snprintf(why, len,
		         "%sis statically linked (no program interpreter in its ELF file): "
		         "LD_PRELOAD is read by the dynamic loader, which a static program does "
		         "not have",
		         via);
		return;
	}
	if (secure_mode(prog, what, sizeof(what))) {
		snprintf(why, len,
		         "%s%s: the loader runs it in secure mode, which ignores LD_PRELOAD "
		         "entries with a '/' such as %s",
		         via, what, env->lib);
		return;
	}
	if (e.elf && glibc_loader(e.interp) && loader_refuses(prog, env, said, sizeof(said))) {
		snprintf(why, len, "its loader couldn't preload %s into %s: %s", env->lib, prog,
		         said);
		return;
	}
	/* liblwm2.so loads, steps aside in a sanitizer's program and writes
	 * the record from an on_exit handler (preload/core.c): a program
	 * that left none did not reach exit(3), which is how a sanitizer
	 * ends one when it reports an error (_exit). */
	if (e.sanitizer && !WIFSIGNALED(end->status)) {
		snprintf(
		    why, len,
		    "%sis built with %s: liblwm2.so steps aside in it and writes its record at "
		    "exit(3), which the program did not reach (a sanitizer that reports an "
		    "error ends the program with _exit)",
		    via, e.sanitizer);
		return;
	}
	if (WIFSIGNALED(end->status)) {
		const char *abbrev = sigabbrev_np(WTERMSIG(end->status));

		snprintf(why, len,
		         "%s was killed by signal %d (SIG%s) before liblwm2.so wrote its "
		         "record",
		         end->cmd, WTERMSIG(end->status), abbrev ? abbrev : "?");
		return;
	}
	/* The kernel names a process after the file it last ran (15 bytes):
	 * another name means the command replaced itself with exec. */
	if (end->last_comm && end->last_comm[0] && strncmp(end->last_comm, base(path), 15) != 0) {
		snprintf(why, len,
		         "%s replaced itself (exec) with %s, which ran without liblwm2.so; lwm2 "
		         "knows that program by its name only, so not whether its LD_PRELOAD was "
		         "changed or it is static or set-user-ID",
		         end->cmd, end->last_comm);
		return;
	}
	snprintf(why, len, "lwm2 couldn't tell why: %s is %s, not run in secure mode, and %s", prog,
	         !e.elf ? "not an ELF program" : "dynamically linked",
	         !e.elf || !glibc_loader(e.interp)
	             ? "its loader is not glibc's, which lwm2 does not ask (it could run the "
	               "program)"
	             : "its loader preloads liblwm2.so");
}
