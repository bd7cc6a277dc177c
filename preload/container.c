/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Containers: what an exec into one passes on, and how a process inside
 * one reaches the step.
 *
 * A container runtime (ch-run, bwrap, an OCI runtime, Apptainer's
 * starter) runs on the host with this library loaded, changes its root
 * and then execs the container's first process with the host's
 * environment, LD_PRELOAD included.  Inside, the library's path is not
 * there (the loader would print an error into every process's stderr) or
 * is another file, and the step directory is not there either.  So every
 * exec looks at "/" (one system call) and, when it is not the root the
 * step began under (LWM2_ROOT), rewrites what the new image gets:
 *
 *   - lwm2's LD_PRELOAD entry stays where that path is the library itself
 *     (a site binds it in), becomes /proc/self/fd/N where the descriptor
 *     the step passed on (LWM2_LIB_FD) is still the library and /proc is
 *     there, and is taken out otherwise, or where the image has no glibc
 *     loader (a musl image, whose loader cannot take this library);
 *   - CUDA_INJECTION64_PATH goes where it names a file that is not there;
 *   - LWM2_CONTAINER=RUNTIME:IMAGE names the container for the digest,
 *     and the container's first process, without LWM2_PARENT, is the
 *     first of its tree: it keeps a record of its own, however short.
 *
 * Processes inside write their records through the directory descriptor
 * the step passed on (LWM2_DIR_FD) when LWM2_DIR is not reachable.  Each
 * descriptor is used only while it is still the file it was (device and
 * inode).
 *
 * Inside a container the two descriptors are kept through the
 * application's closes ("keeping", below): a launcher that closes what it
 * inherited before it execs (Python's subprocess and multiprocessing, a
 * loop over /proc/self/fd, close_range, closefrom) would otherwise leave
 * its children unmeasured.  An application that puts another file on the
 * number (dup2) or closes it by a raw system call still loses them: the
 * children it starts inside go unmeasured (spank_lwm2(8), CONTAINERS).
 *
 * Everything on the exec path may run in the child of vfork: no malloc,
 * no locks, no stdio; buffers live on the caller's stack.
 */
#include "core_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lwm2_env.h"
#include "stepfds.h"

#define LIB_BASENAME   "liblwm2.so"
#define CUDA_BASENAME  "liblwm2cuda.so"
#define PROC_FD_PREFIX "/proc/self/fd/"
#define CONTAINER_MAX  320
#define ENV_MAX        16384

/* The program's arguments as it was started.  Not argv itself: getopt
 * permutes that array (ch-run's "IMAGE --" comes to stand after the
 * "--"); the strings stay where the kernel put them, one after the other,
 * so the first one and their number are all that is kept. */
static int saved_argc LWM2_HOT_STATE;
static const char *saved_args LWM2_HOT_STATE;

/* Raw system calls: no symbol version of libc's stat family to need, and
 * nothing in libc that a vfork child should not run. */
static int raw_stat(const char *path, struct stat *st)
{
	return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
}

static int raw_fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}

static bool same_file(const struct stat *st, const struct lwm2_fd_ident *id)
{
	return (uint64_t)st->st_dev == id->dev && (uint64_t)st->st_ino == id->ino;
}

static bool fd_is(const struct lwm2_fd_ident *id)
{
	struct stat st;

	return id->fd >= 0 && raw_fstat(id->fd, &st) == 0 && same_file(&st, id);
}

static bool path_is(const char *path, const struct lwm2_fd_ident *id)
{
	struct stat st;

	return raw_stat(path, &st) == 0 && same_file(&st, id);
}

/* The program's arguments, for the image's name: glibc passes them to
 * the constructors of shared objects.  Nothing else here: the
 * environment is the program's own until lwm2_init is done with it (a
 * shell's putenv binds a shell variable, after which its getenv sees no
 * other). */
__attribute__((constructor)) static void container_init(int argc, char **argv)
{
	if (argc > 0 && argv && argv[0]) {
		saved_argc = argc < 256 ? argc : 256; /* a runtime's options and image */
		saved_args = argv[0];
	}
}

/*
 * A process started by hand with the library preloaded (no step set
 * LWM2_ROOT) notes its root for its children, so that a container they
 * start never prints the loader's error either.  Called by lwm2_init
 * beside its own putenv.
 */
void lwm2_container_note_root(void)
{
	static char root_env[sizeof(LWM2_ENV_ROOT) + LWM2_FD_IDENT_LEN];
	struct stat st;
	size_t at = sizeof(LWM2_ENV_ROOT);

	if (lwm2_getenv(LWM2_ENV_ROOT) || raw_stat("/", &st) != 0)
		return;
	memcpy(root_env, LWM2_ENV_ROOT "=", at);
	at += lwm2_put_decimal(root_env + at, (uint64_t)st.st_dev);
	root_env[at++] = ':';
	at += lwm2_put_decimal(root_env + at, (uint64_t)st.st_ino);
	root_env[at] = '\0';
	putenv(root_env);
}

/* ---- keeping the step's descriptors through the application's closes ----
 *
 * Inside a container (the process started under another root than the
 * step's) the library and the step directory are reachable only through
 * LWM2_LIB_FD and LWM2_DIR_FD.  The wrappers of close, close_range and
 * closefrom ask here first (lwm2_keep_on: one load outside containers):
 *
 *   - close(N) of one of them first copies it to a free number below N
 *     (lwm2_keep_move_off), and N is closed and free as the application
 *     expects.  Below: a walk over /proc/self/fd closes upwards and would
 *     meet a higher number again;
 *   - close_range and closefrom close around them (lwm2_keep_in_range);
 *   - an exec puts a moved descriptor back at its number, or as near
 *     above it as is free, and passes that number on.
 *
 * Where each one is now is a hint (keep_at), always checked against the
 * file's identity: a vfork child writes it into its parent's memory, and
 * the parent, whose descriptors did not move, finds them at their
 * numbers.  Only raw system calls here: a vfork child may run them. */
enum { KEEP_LIB, KEEP_DIR, KEEP_N };
bool lwm2_keep_on LWM2_HOT_STATE;
static struct lwm2_fd_ident keep_id[KEEP_N] LWM2_HOT_STATE = {{.fd = -1}, {.fd = -1}};
static _Atomic int keep_at[KEEP_N] LWM2_HOT_STATE = {-1, -1};

static bool in_other_root_of(const char *root_ident)
{
	struct lwm2_fd_ident root;
	struct stat st;

	if (lwm2_fd_ident_parse(root_ident, 0, &root) != 0)
		return false;
	return raw_stat("/", &st) == 0 && !same_file(&st, &root);
}

/* At the start, inside the window of lwm2_getenv. */
void lwm2_container_keep_init(void)
{
	static const char *const names[KEEP_N] = {LWM2_ENV_LIB_FD, LWM2_ENV_DIR_FD};

	if (!in_other_root_of(lwm2_getenv(LWM2_ENV_ROOT)))
		return;
	for (int i = 0; i < KEEP_N; i++)
		if (lwm2_fd_ident_parse(lwm2_getenv(names[i]), 1, &keep_id[i]) == 0 &&
		    fd_is(&keep_id[i]))
			lwm2_keep_on = true;
		else
			keep_id[i].fd = -1;
}

/* Where descriptor i is now, or -1 where the process has lost it. */
static int keep_find(int i)
{
	struct lwm2_fd_ident id = keep_id[i];

	if (id.fd < 0)
		return -1;
	if (fd_is(&id))
		return id.fd;
	id.fd = atomic_load_explicit(&keep_at[i], memory_order_relaxed);
	return fd_is(&id) ? id.fd : -1;
}

static bool keep_is(int i, int fd)
{
	return fd >= 0 &&
	       (fd == keep_id[i].fd ||
	        fd == atomic_load_explicit(&keep_at[i], memory_order_relaxed)) &&
	       keep_find(i) == fd;
}

bool lwm2_container_dir_lost(void)
{
	struct stat st;

	return lwm2_keep_on && keep_id[KEEP_DIR].fd >= 0 && keep_find(KEEP_DIR) < 0 &&
	       raw_stat(lwm2_p.dir, &st) != 0;
}

/* Descriptor i, at cur, also at the lowest free number from min up: the
 * new number, or -1.  Without close-on-exec, as the step opened it. */
static int keep_dup(int i, int cur, int min)
{
	int to = (int)syscall(SYS_fcntl, cur, F_DUPFD, min);

	if (to >= 0)
		atomic_store_explicit(&keep_at[i], to, memory_order_relaxed);
	return to;
}

/* The same, cur closed where it is now at to. */
static int keep_move(int i, int cur, int min)
{
	int to = keep_dup(i, cur, min);

	if (to >= 0)
		syscall(SYS_close, cur);
	return to;
}

/* Below fd, where the application's walk has been, but as high as is
 * free: the numbers an application opens next are the lowest, and the
 * step's descriptors stay out of their way.  A number above fd is taken
 * only where nothing below is free (then a walk may move it again). */
#define KEEP_BELOW 64

void lwm2_keep_move_off(int fd)
{
	int err = errno;

	for (int i = 0; i < KEEP_N; i++) {
		int to;

		if (!keep_is(i, fd))
			continue;
		/* fd itself the application's close closes. */
		to = keep_dup(i, fd, fd - KEEP_BELOW > 3 ? fd - KEEP_BELOW : 3);
		if (to > fd && fd - KEEP_BELOW > 3)
			keep_move(i, to, 3);
	}
	errno = err;
}

int lwm2_keep_in_range(unsigned first, unsigned last, int ours[2])
{
	int n = 0, err = errno;

	for (int i = 0; i < KEEP_N; i++) {
		int at = keep_find(i);

		if (at >= 0 && (unsigned)at >= first && (unsigned)at <= last)
			ours[n++] = at;
	}
	if (n == 2 && ours[0] > ours[1]) {
		int t = ours[0];

		ours[0] = ours[1];
		ours[1] = t;
	}
	errno = err;
	return n;
}

/* Descriptor i where an exec passes it on: back at its own number (or
 * the nearest free one above), which goes into *id; false where the
 * process has lost it. */
static bool keep_for_exec(int i, struct lwm2_fd_ident *id)
{
	int at = keep_find(i);

	*id = keep_id[i];
	if (at < 0)
		return false;
	/* An application that marked every descriptor close-on-exec (the
	 * CLOSE_RANGE_CLOEXEC of a range passes lwm2's by, fcntl does not)
	 * meant its own. */
	if ((int)syscall(SYS_fcntl, at, F_GETFD) > 0)
		syscall(SYS_fcntl, at, F_SETFD, 0);
	if (at != id->fd) {
		int to = keep_move(i, at, id->fd);

		id->fd = to < 0 ? at : to;
	}
	return true;
}

/* The step directory through LWM2_DIR_FD, where that descriptor is still
 * the directory (or, kept, is now at another number): a new descriptor
 * the caller closes, or -1. */
int lwm2_stepdir_inherited(void)
{
	struct lwm2_fd_ident id;

	if (lwm2_fd_ident_parse(getenv(LWM2_ENV_DIR_FD), 1, &id) != 0)
		return -1;
	if (lwm2_keep_on && id.fd == keep_id[KEEP_DIR].fd)
		id.fd = keep_find(KEEP_DIR);
	if (!fd_is(&id))
		return -1;
	return (int)syscall(SYS_openat, id.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* dir/name into buf by hand (a short process's exit runs no printf). */
static bool join(char *buf, size_t len, const char *dir, size_t dirmax, const char *name)
{
	size_t d = strnlen(dir, dirmax), n = strlen(name);

	if (d + 1 + n + 1 > len)
		return false;
	memcpy(buf, dir, d);
	buf[d] = '/';
	memcpy(buf + d + 1, name, n + 1);
	return true;
}

/* A path that does not lead to the directory (another mount namespace,
 * another user's view of it) is worth the inherited descriptor; an
 * existing file or a full disk is not. */
static bool path_missed(int err)
{
	return err == ENOENT || err == ENOTDIR || err == EACCES || err == ELOOP || err == EPERM;
}

int lwm2_stepdir_open(const char *name, int flags, mode_t mode)
{
	char path[sizeof(lwm2_p.dir) + 700];
	int fd = -1, dfd, err;

	if (join(path, sizeof(path), lwm2_p.dir, sizeof(lwm2_p.dir), name)) {
		fd = (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
		if (fd >= 0 || !path_missed(errno))
			return fd;
	}
	err = errno;
	dfd = lwm2_stepdir_inherited();
	if (dfd < 0) {
		errno = err;
		return -1;
	}
	fd = (int)syscall(SYS_openat, dfd, name, flags, mode);
	err = errno;
	syscall(SYS_close, dfd);
	errno = err;
	return fd;
}

int lwm2_stepdir_unlink(const char *name)
{
	char path[sizeof(lwm2_p.dir) + 700];
	int rc = -1, dfd;

	if (join(path, sizeof(path), lwm2_p.dir, sizeof(lwm2_p.dir), name)) {
		rc = (int)syscall(SYS_unlinkat, AT_FDCWD, path, 0);
		if (rc == 0 || !path_missed(errno))
			return rc;
	}
	dfd = lwm2_stepdir_inherited();
	if (dfd < 0)
		return -1;
	rc = (int)syscall(SYS_unlinkat, dfd, name, 0);
	syscall(SYS_close, dfd);
	return rc;
}

/* ---- the environment an exec passes on ---- */

static const char *env_value(char *const envp[], const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, n) && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

/* Whether "/" is another root than the step's: only then is anything
 * rewritten.  Known only where a step or a first process noted its root. */
static bool in_other_root(void)
{
	return in_other_root_of(getenv(LWM2_ENV_ROOT));
}

const char *lwm2_path_base(const char *p, size_t len, size_t *blen)
{
	const char *b = p;

	for (size_t i = 0; i < len; i++)
		if (p[i] == '/')
			b = p + i + 1;
	*blen = len - (size_t)(b - p);
	return b;
}

static bool is_lib_entry(const char *e, size_t len, const struct lwm2_fd_ident *lib)
{
	size_t bl;
	const char *b = lwm2_path_base(e, len, &bl);
	char fdpath[sizeof(PROC_FD_PREFIX) + 12];
	int n;

	if (bl == sizeof(LIB_BASENAME) - 1 && !memcmp(b, LIB_BASENAME, bl))
		return true;
	if (lib->fd < 0 || len >= sizeof(fdpath))
		return false;
	memcpy(fdpath, e, len);
	fdpath[len] = '\0';
	n = (int)sizeof(PROC_FD_PREFIX) - 1;
	if (strncmp(fdpath, PROC_FD_PREFIX, (size_t)n))
		return false;
	return atoi(fdpath + n) == lib->fd;
}

/*
 * What lwm2's entry becomes inside the container: its own path where that
 * is the library, /proc/self/fd/N where the descriptor still is, else
 * nothing (returns 0).  Writes the entry into out (size len).
 */
static size_t lib_entry_inside(const char *e, size_t elen, const struct lwm2_fd_ident *lib,
                               bool lib_known, char *out, size_t len)
{
	char path[4096];
	size_t n;

	if (LWM2_GLIBC_LOADER && syscall(SYS_faccessat, AT_FDCWD, LWM2_GLIBC_LOADER, X_OK, 0) != 0)
		return 0;
	if (elen < sizeof(path)) {
		memcpy(path, e, elen);
		path[elen] = '\0';
		if (lib_known ? path_is(path, lib)
		              : syscall(SYS_faccessat, AT_FDCWD, path, R_OK, 0) == 0) {
			if (elen >= len)
				return 0;
			memcpy(out, e, elen);
			return elen;
		}
	}
	/* Close-on-exec, it would be gone when the loader looks for it. */
	if (!lib_known || !fd_is(lib) || (int)syscall(SYS_fcntl, lib->fd, F_GETFD) > 0)
		return 0;
	n = sizeof(PROC_FD_PREFIX) - 1;
	memcpy(path, PROC_FD_PREFIX, n);
	n += lwm2_put_decimal(path + n, (uint64_t)lib->fd);
	path[n] = '\0';
	if (!path_is(path, lib) || n >= len)
		return 0;
	memcpy(out, path, n);
	return n;
}

/* LD_PRELOAD=... with lwm2's entry as it must be inside, the library's
 * descriptor now at lib_now; false where the value stays as it is. */
static bool rewrite_preload(const char *cur, int lib_now, char *out, size_t outlen)
{
	static const char name[] = "LD_PRELOAD=";
	struct lwm2_fd_ident lib = {.fd = -1}, now;
	bool lib_known = lwm2_fd_ident_parse(getenv(LWM2_ENV_LIB_FD), 1, &lib) == 0;
	bool changed = false;
	size_t at = sizeof(name) - 1;
	const char *p = cur;

	memcpy(out, name, at);
	while (*p) {
		size_t len = strcspn(p, ": "), put;
		char entry[4096];

		if (len == 0) {
			p++;
			continue;
		}
		if (is_lib_entry(p, len, &lib)) {
			now = lib;
			now.fd = lib_now >= 0 ? lib_now : lib.fd;
			put = lib_entry_inside(p, len, &now, lib_known, entry, sizeof(entry));
			changed |= put != len || memcmp(entry, p, len) != 0;
		} else {
			put = len < sizeof(entry) ? len : 0;
			memcpy(entry, p, put);
		}
		if (put && at + put + 2 < outlen) {
			if (at > sizeof(name) - 1)
				out[at++] = ':';
			memcpy(out + at, entry, put);
			at += put;
		}
		p += len;
	}
	out[at] = '\0';
	return changed;
}

static bool is_cuda_lib_missing(const char *path)
{
	size_t bl;
	const char *b = lwm2_path_base(path, strlen(path), &bl);

	return bl == sizeof(CUDA_BASENAME) - 1 && !memcmp(b, CUDA_BASENAME, bl) &&
	       syscall(SYS_faccessat, AT_FDCWD, path, R_OK, 0) != 0;
}

/* ---- naming the container ---- */

/* Argument i as the program was started (the strings in their order). */
static const char *arg(int i)
{
	const char *p = saved_args;

	if (!p || i < 0 || i >= saved_argc)
		return "";
	while (i-- > 0)
		p += strlen(p) + 1;
	return p;
}

static const char *prog_base(void)
{
	const char *p, *s;

	if (saved_argc < 1)
		return "";
	p = arg(0);
	s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* ch-run [OPTIONS] IMAGE -- CMD: the argument before "--", else the first
 * that is neither an option nor an option's value. */
static const char *image_ch_run(void)
{
	static const char *const with_value[] = {
	    "-b", "--bind",    "-c",        "--cd",        "-g",         "--gid",
	    "-u", "--uid",     "--set-env", "--unset-env", "-m",         "--mount",
	    "-s", "--storage", "--join-ct", "--join-tag",  "--join-pid", NULL};

	for (int i = 1; i < saved_argc; i++)
		if (!strcmp(arg(i), "--"))
			return i > 1 ? arg(i - 1) : "";
	for (int i = 1; i < saved_argc; i++) {
		const char *a = arg(i);
		bool takes = false;

		if (a[0] != '-')
			return a;
		for (int k = 0; with_value[k]; k++)
			takes |= !strcmp(a, with_value[k]);
		i += takes;
	}
	return "";
}

/* bwrap ... --ro-bind IMAGE / ...: the source of what became "/". */
static const char *image_bwrap(void)
{
	static const char *const binds[] = {"--bind",     "--ro-bind",     "--dev-bind",
	                                    "--bind-try", "--ro-bind-try", "--dev-bind-try",
	                                    NULL};

	for (int i = 1; i + 2 < saved_argc; i++)
		for (int k = 0; binds[k]; k++)
			if (!strcmp(arg(i), binds[k]) && !strcmp(arg(i + 2), "/"))
				return arg(i + 1);
	return "";
}

/* chroot [OPTIONS] NEWROOT [CMD]. */
static const char *image_first_arg(void)
{
	for (int i = 1; i < saved_argc; i++)
		if (arg(i)[0] != '-')
			return arg(i);
	return "";
}

/* An OCI runtime under podman: podman writes the image's name into
 * /run/.containerenv of every container (image="..."). */
static const char *image_containerenv(char *buf, size_t len)
{
	char text[4096];
	const char *p, *q;
	long n;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/run/.containerenv", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return "";
	n = syscall(SYS_read, fd, text, sizeof(text) - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return "";
	text[n] = '\0';
	p = strstr(text, "\nimage=\"");
	if (!p)
		return "";
	p += 8;
	q = strchr(p, '"');
	if (!q || (size_t)(q - p) >= len)
		return "";
	memcpy(buf, p, (size_t)(q - p));
	buf[q - p] = '\0';
	return buf;
}

/* LWM2_CONTAINER=RUNTIME:IMAGE for the container's first process. */
static void name_container(char *const envp[], char *out, size_t len)
{
	static const struct {
		const char *prog, *runtime;
		const char *(*image)(void);
	} rules[] = {
	    {"ch-run", "charliecloud", image_ch_run},
	    {"bwrap", "bubblewrap", image_bwrap},
	    {"chroot", "chroot", image_first_arg},
	};
	static const char name[] = LWM2_ENV_CONTAINER "=";
	const char *prog = prog_base(), *runtime = prog, *image = "", *v;
	char oci[256];
	size_t at = sizeof(name) - 1, n;

	if ((v = env_value(envp, "APPTAINER_CONTAINER"))) {
		runtime = "apptainer";
		image = v;
	} else if ((v = env_value(envp, "SINGULARITY_CONTAINER"))) {
		runtime = "singularity";
		image = v;
	} else if ((v = env_value(envp, "container")) && !strcmp(v, "podman")) {
		runtime = "podman";
		image = image_containerenv(oci, sizeof(oci));
	} else if (!strncmp(prog, "enroot", 6)) {
		runtime = "enroot";
		if ((v = env_value(envp, "ENROOT_ROOTFS")))
			image = v;
	} else {
		for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
			if (!strcmp(prog, rules[i].prog)) {
				runtime = rules[i].runtime;
				image = rules[i].image();
			}
	}
	memcpy(out, name, at);
	n = strnlen(runtime, 32);
	memcpy(out + at, runtime, n);
	at += n;
	out[at++] = ':';
	n = strnlen(image, len - at - 1);
	memcpy(out + at, image, n);
	at += n;
	out[at] = '\0';
}

/* NAME=N:DEV:INO into buf (LWM2_FD_IDENT_LEN + 16 bytes). */
static char *ident_entry(char *buf, const char *name, const struct lwm2_fd_ident *id)
{
	size_t at = strlen(name);

	memcpy(buf, name, at);
	buf[at++] = '=';
	at += lwm2_put_decimal(buf + at, (uint64_t)id->fd);
	buf[at++] = ':';
	at += lwm2_put_decimal(buf + at, id->dev);
	buf[at++] = ':';
	at += lwm2_put_decimal(buf + at, id->ino);
	buf[at] = '\0';
	return buf;
}

/* The kept descriptors for an exec: where each one is passed on (its
 * NAME=N:DEV:INO entry where it moved, else an empty string) and the
 * library's number (-1 where kept nothing, the environment's number
 * then stands). */
static int keep_exec_entries(char moved[KEEP_N][LWM2_FD_IDENT_LEN + 16])
{
	static const char *const names[KEEP_N] = {LWM2_ENV_LIB_FD, LWM2_ENV_DIR_FD};
	int lib_now = -1;

	for (int i = 0; i < KEEP_N; i++) {
		struct lwm2_fd_ident id;

		moved[i][0] = '\0';
		if (!lwm2_keep_on || keep_id[i].fd < 0)
			continue;
		if (!keep_for_exec(i, &id))
			continue;
		if (i == KEEP_LIB)
			lib_now = id.fd;
		if (id.fd != keep_id[i].fd)
			ident_entry(moved[i], names[i], &id);
	}
	return lib_now;
}

/*
 * Call exec_fn with the environment the new image must get: envp itself
 * outside a container; inside, a copy (on this stack) with LD_PRELOAD,
 * CUDA_INJECTION64_PATH and LWM2_CONTAINER as described at the top, and
 * the kept descriptors' numbers where they moved.
 */
int lwm2_exec_with_env(char *const envp[], lwm2_exec_fn exec_fn, void *ctx)
{
	const char *preload;
	size_t n = 0, plen;

	if (!envp || !in_other_root())
		return exec_fn(ctx, envp);
	while (n < ENV_MAX && envp[n])
		n++;
	if (envp[n]) /* too many to copy on a stack: passed on as it is */
		return exec_fn(ctx, envp);
	preload = env_value(envp, "LD_PRELOAD");
	plen = preload ? strlen(preload) + sizeof("LD_PRELOAD=") + sizeof(PROC_FD_PREFIX) + 16 : 1;
	{
		char *env[n + 2];
		char pre[plen], cont[CONTAINER_MAX], moved[KEEP_N][LWM2_FD_IDENT_LEN + 16];
		size_t k = 0;
		bool have_name = env_value(envp, LWM2_ENV_CONTAINER) != NULL;
		int lib_now = keep_exec_entries(moved);
		bool new_pre = preload && rewrite_preload(preload, lib_now, pre, plen);

		for (size_t i = 0; i < n; i++) {
			if (!strncmp(envp[i], "LD_PRELOAD=", 11) && new_pre) {
				if (pre[11])
					env[k++] = pre;
			} else if (moved[KEEP_LIB][0] &&
			           !strncmp(envp[i], LWM2_ENV_LIB_FD "=", sizeof(LWM2_ENV_LIB_FD)))
				env[k++] = moved[KEEP_LIB];
			else if (moved[KEEP_DIR][0] &&
			         !strncmp(envp[i], LWM2_ENV_DIR_FD "=", sizeof(LWM2_ENV_DIR_FD)))
				env[k++] = moved[KEEP_DIR];
			else if (!strncmp(envp[i], "CUDA_INJECTION64_PATH=", 22) &&
			         is_cuda_lib_missing(envp[i] + 22))
				continue;
			/* The container's first process is the first of its
			 * tree, as a task is: it keeps a record of its own,
			 * which names the container, however short. */
			else if (!have_name &&
			         !strncmp(envp[i], LWM2_ENV_PARENT "=", sizeof(LWM2_ENV_PARENT)))
				continue;
			else
				env[k++] = envp[i];
		}
		if (!have_name) {
			name_container(envp, cont, sizeof(cont));
			env[k++] = cont;
		}
		env[k] = NULL;
		return exec_fn(ctx, env);
	}
}
