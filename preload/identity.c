/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The application's identity in the rank record: the main program's GNU
 * build-id, the compiler and parallel runtimes loaded (which OpenMP, which
 * Fortran and C++ library), the CUDA runtime's version and the launch
 * shape Slurm gave the task.  Together with the executable's path and the
 * MPI library (the MPI module's) this is what ties a run to its code
 * project across jobs.
 *
 * Nothing here runs at start-up: a process that lives a few milliseconds
 * must not pay for it.  The identity is taken once, when the record is
 * first written for real (the heartbeat's setup, or exit and exec), and
 * copied into the record image under the core's lock.  Taking it costs no
 * system call: the build-id is read from the main program's PT_NOTE
 * segments as the loader mapped them (dl_iterate_phdr), the libraries
 * are the loader's list, the launch shape comes from the environment.
 *
 * The container is the exception, and costs one getenv: it is the
 * environment a process starts with that says where it runs (a runtime
 * passes LWM2_CONTAINER into the container; the process itself may change
 * its environment later), so it is taken at start-up, straight into the
 * record image, before anything is written.
 *
 * Privacy: only the executable's path is a file name; of the libraries
 * only a fixed vocabulary of runtime names and their soname major version
 * is kept ("gomp.1"), never a path; of the environment only the numbers
 * below, never a value as it is.
 */
#include "core_int.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwm2_env.h"
#include "lwm2_record.h"

struct ident {
	uint32_t build_id_len;
	uint8_t build_id[LWM2_BUILD_ID_MAX];
	char libs[LWM2_RUNTIME_LIBS_LEN];
	int32_t cuda_version;
	int32_t ntasks, nnodes, cpus_per_task, omp_threads;
	bool main_seen;
};

static struct ident id;
/* 0: not taken, 1: being taken, 2: taken (id is complete) */
static _Atomic int id_state;

/* Runtime libraries by soname prefix, and the name kept for each. */
static const struct {
	const char *prefix, *name;
} runtime_libs[] = {
    {"libgomp.so.", "gomp"},
    {"libomp.so", "llvm-omp"},
    {"libiomp5.so", "intel-omp"},
    {"libgfortran.so.", "gfortran"},
    {"libifcore", "ifort"},
    {"libflang", "flang"},
    {"libFortranRuntime", "flang"},
    {"libstdc++.so.", "stdc++"},
    {"libc++.so.", "libc++"},
    {"libcudart.so.", "cudart"},
    {"libmpi.so.", "mpi"},
    {"libmpich.so.", "mpich"},
    {"libmpi_mpifh.so.", "mpi-fortran"},
    {"libmpifort.so.", "mpi-fortran"},
};

/* The GNU build-id note among the main program's PT_NOTE segments. */
static void build_id_of(const struct dl_phdr_info *info, struct ident *out)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			const char *name = p + sizeof(*n);
			const uint8_t *desc = (const uint8_t *)name + ((n->n_namesz + 3) & ~3u);
			const char *next = (const char *)desc + ((n->n_descsz + 3) & ~3u);

			if (next > end || next <= p)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && n->n_descsz > 0) {
				uint32_t len = n->n_descsz < LWM2_BUILD_ID_MAX ? n->n_descsz
				                                               : LWM2_BUILD_ID_MAX;
				memcpy(out->build_id, desc, len);
				out->build_id_len = len;
				return;
			}
			p = next;
		}
	}
}

/* " name.major" onto libs, once per name. */
static void add_lib(struct ident *out, const char *name, const char *soname)
{
	char tok[32];
	size_t k, have = strlen(out->libs), nl = strlen(name);
	const char *v = strstr(soname, ".so.");

	/* already listed (two sonames may give one name) */
	for (const char *s = out->libs; (s = strstr(s, name)); s += nl)
		if ((s == out->libs || s[-1] == ' ') && (s[nl] == '.' || s[nl] == ' ' || !s[nl]))
			return;
	k = (size_t)snprintf(tok, sizeof(tok), "%s", name);
	/* The major version: the digits after ".so." */
	if (v && v[4] >= '0' && v[4] <= '9' && k < sizeof(tok) - 2) {
		tok[k++] = '.';
		for (v += 4; *v >= '0' && *v <= '9' && k < sizeof(tok) - 1;)
			tok[k++] = *v++;
		tok[k] = '\0';
	}
	if (have + 1 + k + 1 > sizeof(out->libs))
		return;
	if (have)
		out->libs[have++] = ' ';
	memcpy(out->libs + have, tok, k + 1);
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ident *out = arg;
	const char *base;

	(void)size;
	if (!out->main_seen) {
		/* The first object is the main program. */
		out->main_seen = true;
		build_id_of(info, out);
		return 0;
	}
	if (!info->dlpi_name || !*info->dlpi_name)
		return 0;
	base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	for (size_t i = 0; i < sizeof(runtime_libs) / sizeof(runtime_libs[0]); i++) {
		size_t pl = strlen(runtime_libs[i].prefix);
		if (strncmp(base, runtime_libs[i].prefix, pl) == 0) {
			add_lib(out, runtime_libs[i].name, base);
			break;
		}
	}
	return 0;
}

/* A count from the environment: the first number of the value, -1 when
 * there is none.  glibc never frees an environment array it replaced, so
 * reading while the application calls setenv elsewhere stays safe. */
static int32_t env_count(const char *a, const char *b)
{
	const char *s = getenv(a);
	long v = 0;
	int digits = 0;

	if ((!s || !*s) && b)
		s = getenv(b);
	if (!s)
		return -1;
	for (; *s >= '0' && *s <= '9' && digits < 9; s++, digits++)
		v = v * 10 + (*s - '0');
	return digits ? (int32_t)v : -1;
}

void lwm2_identity_collect(void)
{
	struct ident t;
	int expect = 0;

	if (!atomic_compare_exchange_strong(&id_state, &expect, 1))
		return;
	memset(&t, 0, sizeof(t));
	dl_iterate_phdr(phdr_cb, &t);
	t.cuda_version = 0;
	if (strstr(t.libs, "cudart") && LWM2_HAVE_DL) {
		/* A constant of the runtime: no context is made, no device
		 * touched. */
		int (*get)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
		int v = 0;
		if (get && get(&v) == 0 && v > 0)
			t.cuda_version = v;
	}
	t.ntasks = env_count("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS");
	t.nnodes = env_count("SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES");
	t.cpus_per_task = env_count("SLURM_CPUS_PER_TASK", NULL);
	t.omp_threads = env_count("OMP_NUM_THREADS", NULL);
	id = t;
	atomic_store(&id_state, 2);
}

void lwm2_identity_apply(struct lwm2_rank_record *r)
{
	if (atomic_load(&id_state) != 2 || (r->identity_flags & LWM2_ID_DONE))
		return;
	r->build_id_len = id.build_id_len;
	memcpy(r->build_id, id.build_id, sizeof(r->build_id));
	memcpy(r->runtime_libs, id.libs, sizeof(r->runtime_libs));
	r->cuda_runtime_version = id.cuda_version;
	r->launch_ntasks = id.ntasks;
	r->launch_nnodes = id.nnodes;
	r->launch_cpus_per_task = id.cpus_per_task;
	r->launch_omp_threads = id.omp_threads;
	r->identity_flags |= LWM2_ID_DONE;
}

void lwm2_identity_container(struct lwm2_rank_record *r)
{
	const char *s = lwm2_getenv(LWM2_ENV_CONTAINER);

	/* The image is fresh (zeros): outside a container nothing is
	 * written. */
	if (s && *s)
		lwm2_record_set_container(r, s);
}
