/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The environment of measured processes (stepenv.h), set by spank_lwm2.so
 * and `lwm2 run` alike.
 *
 * LD_PRELOAD editing: put liblwm2.so first (it must see the application's
 * calls before any other interposer forwards them), keep every entry of the
 * user's own, and never list it twice: the batch shell passes its
 * LD_PRELOAD on to srun and so to every step of the job, and to `lwm2 run`
 * started inside a measured job.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "lwm2_env.h"
#include "stepenv.h"
#include "stepfds.h"

#define SEPARATORS ": \t"

static const char *base_name(const char *p, size_t len, size_t *blen)
{
	const char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] == '/')
			b = p + i + 1;
	*blen = len - (size_t)(b - p);
	return b;
}

static bool is_ours(const char *entry, size_t len, const char *lib)
{
	size_t libbl, bl;
	const char *libb = base_name(lib, strlen(lib), &libbl);
	const char *b = base_name(entry, len, &bl);

	if (len == strlen(lib) && !memcmp(entry, lib, len))
		return true;
	return bl == libbl && libbl > 0 && !memcmp(b, libb, bl);
}

/* Append an entry with a ':' before it if out is not empty. */
static int append(char *out, size_t outlen, size_t *used, const char *s, size_t len)
{
	size_t need = len + (*used ? 1 : 0);

	if (*used + need + 1 > outlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (*used)
		out[(*used)++] = ':';
	memcpy(out + *used, s, len);
	*used += len;
	out[*used] = '\0';
	return 0;
}

/* Copy the entries of cur that are not ours after what out holds. */
static int copy_others(const char *cur, const char *lib, char *out, size_t outlen, size_t *used)
{
	const char *p = cur ? cur : "";

	while (*p) {
		size_t len;

		p += strspn(p, SEPARATORS);
		len = strcspn(p, SEPARATORS);
		if (len && !is_ours(p, len, lib) && append(out, outlen, used, p, len) < 0)
			return -1;
		p += len;
	}
	return 0;
}

/* cur without lib, lib first when first is set. */
static int preload_rebuild(const char *cur, const char *lib, bool first, char *out, size_t outlen)
{
	size_t used = 0;

	if (outlen == 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	out[0] = '\0';
	if ((first && append(out, outlen, &used, lib, strlen(lib)) < 0) ||
	    copy_others(cur, lib, out, outlen, &used) < 0) {
		out[0] = '\0';
		return -1;
	}
	return 0;
}

int lwm2_preload_add(const char *cur, const char *lib, char *out, size_t outlen)
{
	return preload_rebuild(cur, lib, true, out, outlen);
}

int lwm2_preload_remove(const char *cur, const char *lib, char *out, size_t outlen)
{
	return preload_rebuild(cur, lib, false, out, outlen);
}

bool lwm2_preload_has(const char *cur, const char *lib)
{
	const char *p = cur ? cur : "";

	while (*p) {
		size_t len;

		p += strspn(p, SEPARATORS);
		len = strcspn(p, SEPARATORS);
		if (len && is_ours(p, len, lib))
			return true;
		p += len;
	}
	return false;
}

int lwm2_asan_options_add(const char *cur, char *out, size_t outlen)
{
	const char *c = cur ? cur : "";
	int n;

	/* The user's own setting of the check stays, whichever way. */
	if (strstr(c, "verify_asan_link_order"))
		n = snprintf(out, outlen, "%s", c);
	else
		n = snprintf(out, outlen, "%s%s%s", c, *c ? ":" : "", LWM2_ASAN_OPT);
	if (n < 0 || (size_t)n >= outlen) {
		if (outlen)
			out[0] = '\0';
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int lwm2_asan_options_remove(const char *cur, char *out, size_t outlen)
{
	const char *c = cur ? cur : "";
	size_t l = strlen(c), ol = strlen(LWM2_ASAN_OPT), keep = l;

	/* Only what lwm2_asan_options_add appends: the whole value or its
	 * last entry.  The same text typed by the user elsewhere stays. */
	if (!strcmp(c, LWM2_ASAN_OPT))
		keep = 0;
	else if (l > ol && c[l - ol - 1] == ':' && !strcmp(c + l - ol, LWM2_ASAN_OPT))
		keep = l - ol - 1;
	if (!outlen)
		return 0;
	if (keep >= outlen)
		keep = outlen - 1;
	memcpy(out, c, keep);
	out[keep] = '\0';
	return keep != l;
}

void lwm2_cuda_lib_path(const char *lib, char *out, size_t outlen)
{
	const char *slash = strrchr(lib, '/');
	int dl = slash ? (int)(slash - lib) : 0;

	snprintf(out, outlen, "%.*s/liblwm2cuda.so", dl, lib);
}

/* The values are at most this long (LD_PRELOAD, ASAN_OPTIONS): what a
 * step's environment could hold beyond is not a path list. */
#define VALUE_MAX 65536

static int set_or_unset(const struct lwm2_env_ops *ops, const char *var, const char *val, char *err,
                        size_t errlen)
{
	if (!val)
		return 0;
	if (!*val) {
		ops->unset(ops->ctx, var);
		return 0;
	}
	if (ops->set(ops->ctx, var, val) < 0)
		return lwm2_errprintf(0, err, errlen, "couldn't set %s", var);
	return 0;
}

int lwm2_step_env_set(const struct lwm2_env_ops *ops, const struct lwm2_step_env *e, char *err,
                      size_t errlen)
{
	char *cur = malloc(VALUE_MAX), *out = malloc(VALUE_MAX), cuda[4096], ppid[24];
	struct stat sb;
	bool light = e->mode && !strcmp(e->mode, "light");
	int rc = -1;

	if (!cur || !out) {
		lwm2_errprintf(0, err, errlen, "out of memory");
		goto done;
	}
	if (ops->get(ops->ctx, "LD_PRELOAD", cur, VALUE_MAX) < 0) {
		lwm2_errprintf(0, err, errlen, "couldn't read LD_PRELOAD: longer than %d bytes",
		               VALUE_MAX - 1);
		goto done;
	}
	if (lwm2_preload_add(cur, e->lib, out, VALUE_MAX) < 0) {
		lwm2_errprintf(0, err, errlen, "couldn't add %s to LD_PRELOAD: %s", e->lib,
		               strerror(errno));
		goto done;
	}
	snprintf(ppid, sizeof(ppid), "%ld", e->root_ppid);
	/* The library prints nothing itself: the starter prints the digest,
	 * one per step rather than one per process. */
	if (set_or_unset(ops, LWM2_ENV_MODE, e->mode ? e->mode : "on", err, errlen) < 0 ||
	    set_or_unset(ops, LWM2_ENV_DIR, e->dir, err, errlen) < 0 ||
	    set_or_unset(ops, LWM2_ENV_SLICE, e->slice, err, errlen) < 0 ||
	    set_or_unset(ops, LWM2_ENV_JOB_ID, e->job_id, err, errlen) < 0 ||
	    set_or_unset(ops, LWM2_ENV_STEP_ID, e->step_id, err, errlen) < 0 ||
	    /* Tasks are this process's children: the library keeps a record
	     * of its own for each of them however short (see liblwm2(7)). */
	    set_or_unset(ops, LWM2_ENV_ROOT_PPID, ppid, err, errlen) < 0 ||
	    set_or_unset(ops, LWM2_ENV_EVENTS, e->events, err, errlen) < 0 ||
	    set_or_unset(ops, LWM2_ENV_SAMPLE_HZ, e->sample_hz, err, errlen) < 0)
		goto done;
	/* CUPTI loads the CUDA part only when asked to; a site's or user's
	 * own injection library stays. */
	lwm2_cuda_lib_path(e->lib, cuda, sizeof(cuda));
	if (ops->get(ops->ctx, "CUDA_INJECTION64_PATH", cur, VALUE_MAX) == 0) {
		if (light && !strcmp(cur, cuda))
			ops->unset(ops->ctx, "CUDA_INJECTION64_PATH");
		else if (!light && !cur[0] && stat(cuda, &sb) == 0 && S_ISREG(sb.st_mode))
			ops->set(ops->ctx, "CUDA_INJECTION64_PATH", cuda);
	}
	/* A program built with AddressSanitizer ends at once when its runtime
	 * is not first in the list of libraries, which the preload makes it:
	 * the check goes, so the program runs (the library steps aside). */
	{
		char *asan = malloc(VALUE_MAX);

		if (asan && ops->get(ops->ctx, "ASAN_OPTIONS", cur, VALUE_MAX) == 0 &&
		    lwm2_asan_options_add(cur, asan, VALUE_MAX) == 0 && strcmp(cur, asan))
			ops->set(ops->ctx, "ASAN_OPTIONS", asan);
		free(asan);
	}
	if (ops->set(ops->ctx, "LD_PRELOAD", out) < 0) {
		lwm2_errprintf(0, err, errlen, "couldn't set LD_PRELOAD");
		goto done;
	}
	rc = 0;
done:
	free(cur);
	free(out);
	return rc;
}

#define LWM2_VAR(name) name,
static const char *const lwm2_vars[] = {LWM2_ENV_INHERITED(LWM2_VAR) NULL};
#undef LWM2_VAR

void lwm2_step_env_clear(const struct lwm2_env_ops *ops, const char *lib)
{
	char *cur = malloc(VALUE_MAX), *out = malloc(VALUE_MAX), cuda[4096];
	const char *const *v;

	if (!cur || !out)
		goto done;
	if (ops->get(ops->ctx, "LD_PRELOAD", cur, VALUE_MAX) == 0 && cur[0] &&
	    lwm2_preload_has(cur, lib) && lwm2_preload_remove(cur, lib, out, VALUE_MAX) == 0) {
		if (out[0])
			ops->set(ops->ctx, "LD_PRELOAD", out);
		else
			ops->unset(ops->ctx, "LD_PRELOAD");
	}
	for (v = lwm2_vars; *v; v++)
		ops->unset(ops->ctx, *v);
	if (ops->get(ops->ctx, "ASAN_OPTIONS", cur, VALUE_MAX) == 0 && cur[0] &&
	    lwm2_asan_options_remove(cur, out, VALUE_MAX) == 1) {
		if (out[0])
			ops->set(ops->ctx, "ASAN_OPTIONS", out);
		else
			ops->unset(ops->ctx, "ASAN_OPTIONS");
	}
	lwm2_cuda_lib_path(lib, cuda, sizeof(cuda));
	if (ops->get(ops->ctx, "CUDA_INJECTION64_PATH", cur, VALUE_MAX) == 0 && !strcmp(cur, cuda))
		ops->unset(ops->ctx, "CUDA_INJECTION64_PATH");
done:
	free(cur);
	free(out);
}

int lwm2_step_env_fds(const struct lwm2_env_ops *ops, const char *lib, const char *dir, char *err,
                      size_t errlen)
{
	char l[LWM2_FD_IDENT_LEN], d[LWM2_FD_IDENT_LEN], r[LWM2_FD_IDENT_LEN];

	if (lwm2_step_fds_open(lib, dir, l, d, r, err, errlen) == 0) {
		if (ops->set(ops->ctx, LWM2_ENV_LIB_FD, l) == 0 &&
		    ops->set(ops->ctx, LWM2_ENV_DIR_FD, d) == 0 &&
		    ops->set(ops->ctx, LWM2_ENV_ROOT, r) == 0)
			return 0;
		lwm2_errprintf(0, err, errlen, "couldn't pass the step's descriptors on");
	}
	ops->unset(ops->ctx, LWM2_ENV_LIB_FD);
	ops->unset(ops->ctx, LWM2_ENV_DIR_FD);
	ops->unset(ops->ctx, LWM2_ENV_ROOT);
	return -1;
}

static bool is_file(const char *path, const struct lwm2_fd_ident *id)
{
	struct stat sb;

	if (stat(path, &sb) != 0)
		return false;
	return !id || ((uint64_t)sb.st_dev == id->dev && (uint64_t)sb.st_ino == id->ino);
}

/* What our entry e (len bytes) becomes where the task now is: the path
 * itself where it is the library, /proc/self/fd/N where the descriptor
 * is, else nothing (returns 0). */
static size_t entry_here(const char *e, size_t len, const struct lwm2_fd_ident *lib, char *out,
                         size_t outlen)
{
	char path[4096];
	int n;

	if (LWM2_GLIBC_LOADER && access(LWM2_GLIBC_LOADER, X_OK) != 0)
		return 0;
	if (len < sizeof(path) && len < outlen) {
		memcpy(path, e, len);
		path[len] = '\0';
		if (is_file(path, lib)) {
			memcpy(out, e, len);
			out[len] = '\0';
			return len;
		}
	}
	if (!lib)
		return 0;
	n = snprintf(path, sizeof(path), "/proc/self/fd/%d", lib->fd);
	if (n < 0 || (size_t)n >= outlen || !is_file(path, lib))
		return 0;
	memcpy(out, path, (size_t)n + 1);
	return (size_t)n;
}

int lwm2_step_env_enter_root(const struct lwm2_env_ops *ops, const char *lib, const char *container,
                             char *err, size_t errlen)
{
	char *cur = malloc(VALUE_MAX), *out = malloc(VALUE_MAX), id[LWM2_FD_IDENT_LEN];
	char entry[4096], cuda[4096];
	struct lwm2_fd_ident root, libid;
	bool lib_known, moved = false;
	struct stat sb;
	const char *p;
	size_t used = 0;
	int rc = -1;

	if (!cur || !out) {
		lwm2_errprintf(0, err, errlen, "out of memory");
		goto done;
	}
	if (ops->get(ops->ctx, LWM2_ENV_ROOT, id, sizeof(id)) == 0 &&
	    lwm2_fd_ident_parse(id, 0, &root) == 0)
		moved = stat("/", &sb) == 0 &&
		        ((uint64_t)sb.st_dev != root.dev || (uint64_t)sb.st_ino != root.ino);
	lib_known = ops->get(ops->ctx, LWM2_ENV_LIB_FD, id, sizeof(id)) == 0 &&
	            lwm2_fd_ident_parse(id, 1, &libid) == 0;
	/* In the step's own root only a library that is not there is taken
	 * out: the loader would print its error into every process. */
	if (!moved && is_file(lib, NULL)) {
		rc = 0;
		goto done;
	}
	if (ops->get(ops->ctx, "LD_PRELOAD", cur, VALUE_MAX) < 0) {
		lwm2_errprintf(0, err, errlen, "couldn't read LD_PRELOAD: longer than %d bytes",
		               VALUE_MAX - 1);
		goto done;
	}
	out[0] = '\0';
	for (p = cur; *p;) {
		size_t len, put;

		p += strspn(p, SEPARATORS);
		len = strcspn(p, SEPARATORS);
		if (!len)
			continue;
		if (is_ours(p, len, lib)) {
			put = entry_here(p, len, lib_known ? &libid : NULL, entry, sizeof(entry));
			if (put && append(out, VALUE_MAX, &used, entry, put) < 0)
				goto toolong;
		} else if (append(out, VALUE_MAX, &used, p, len) < 0)
			goto toolong;
		p += len;
	}
	if (strcmp(cur, out) && set_or_unset(ops, "LD_PRELOAD", out, err, errlen) < 0)
		goto done;
	lwm2_cuda_lib_path(lib, cuda, sizeof(cuda));
	if (ops->get(ops->ctx, "CUDA_INJECTION64_PATH", cur, VALUE_MAX) == 0 && cur[0] &&
	    !strcmp(cur, cuda) && !is_file(cur, NULL))
		ops->unset(ops->ctx, "CUDA_INJECTION64_PATH");
	if (moved && container && container[0] &&
	    (ops->get(ops->ctx, LWM2_ENV_CONTAINER, cur, VALUE_MAX) < 0 || !cur[0]) &&
	    set_or_unset(ops, LWM2_ENV_CONTAINER, container, err, errlen) < 0)
		goto done;
	rc = moved;
	goto done;
toolong:
	lwm2_errprintf(0, err, errlen, "couldn't rewrite LD_PRELOAD: %s", strerror(ENAMETOOLONG));
done:
	free(cur);
	free(out);
	return rc;
}
