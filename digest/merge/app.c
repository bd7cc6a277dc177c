/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The application of a job: of the executables its processes ran, the one
 * with the most CPU time (then the most processes), named by basename and
 * build-id, with its rank count, nodes, runtimes, launch shape and the
 * averages of the metrics its history compares; the others are listed.
 * Built in the same pass as the job digest (job.c), constant work per
 * process.
 */
#include "digest_internal.h"
#include "grow.h"
#include "lwm2_keys.h"
#include "lwm2_history.h"
#include "strset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Metrics of the application averaged over its processes. */
static const enum lwm2_metric app_metrics[] = {
    LWM2_M_duration, LWM2_M_mpi_time, LWM2_M_posix_io_time, LWM2_M_cpi, LWM2_M_avg_threads};
#define NAPPM         (sizeof(app_metrics) / sizeof(app_metrics[0]))
#define APP_NODES_MAX 4096
#define APP_STEPS_MAX 256
#define APP_OTHERS    8

struct app_ent {
	const char *name, *build_id;
	bool several_builds;
	uint64_t processes, cpu_us;
	json_object *mpi_library, *runtime_libs, *cuda, *launch;
	uint32_t language; /* enum lwm2_language of its first process that told it */
	double sum[NAPPM];
	uint64_t n[NAPPM];
	struct lwm2_step_counts steps; /* ranks per step */
	/* The distinct nodes, counted up to APP_NODES_MAX: every node of a
	 * 10,000-node job may run the application. */
	struct lwm2_strset nodes;
};

struct lwm2_app_acc {
	struct app_ent *e;
	size_t n, cap;
};

struct lwm2_app_acc *lwm2_app_new(void)
{
	return calloc(1, sizeof(struct lwm2_app_acc));
}

void lwm2_app_free(struct lwm2_app_acc *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		free(a->e[i].steps.v);
		lwm2_strset_free(&a->e[i].nodes);
	}
	free(a->e);
	free(a);
}

static struct app_ent *ent(struct lwm2_app_acc *a, const char *name)
{
	/* Jobs run few distinct executables with records of their own (short
	 * ones are summarized per executable): a list is enough. */
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->e[i].name, name))
			return &a->e[i];
	if (LWM2_GROW(a->e, a->n, a->cap, 8) < 0)
		return NULL;
	memset(&a->e[a->n], 0, sizeof(a->e[0]));
	a->e[a->n].name = name;
	return &a->e[a->n++];
}

static int add_node(struct app_ent *e, const char *node)
{
	if (e->nodes.n >= APP_NODES_MAX)
		return 0;
	return lwm2_strset_add(&e->nodes, node, NULL) < 0 ? -1 : 0;
}

int lwm2_app_add(struct lwm2_app_acc *a, json_object *p, const struct lwm2_metrics *m,
                 const char *node, uint64_t step)
{
	const char *exe = ju_str(p, LWM2_KEY_EXE), *bid;
	int64_t flags = ju_int_or(p, LWM2_KEY_FLAGS, 0);
	struct app_ent *e;

	if (!a || !exe || !*exe || (flags & LWM2_F_EXEC))
		return 0;
	if (!(e = ent(a, exe)))
		return -1;
	e->cpu_us += lwm2_proc_cpu_us(p);
	if (flags & LWM2_F_SUMMARY) {
		int64_t n = ju_int_or(p, LWM2_KEY_N, 0);
		e->processes += n > 0 ? (uint64_t)n : 0;
		return 0;
	}
	e->processes++;
	if ((bid = ju_str(p, LWM2_KEY_BUILD_ID))) {
		if (!e->build_id)
			e->build_id = bid;
		else if (strcmp(e->build_id, bid))
			e->several_builds = true;
	}
	if (!e->mpi_library)
		e->mpi_library = ju_get(p, LWM2_KEY_MPI_LIBRARY, json_type_string);
	if (!e->runtime_libs)
		e->runtime_libs = ju_get(p, LWM2_KEY_RUNTIME_LIBS, json_type_string);
	if (!e->language) {
		int64_t lang = ju_int_or(p, LWM2_KEY_LANGUAGE, 0);

		e->language = lang > 0 && lang <= LWM2_LANG_FORTRAN ? (uint32_t)lang : 0;
	}
	if (!e->cuda)
		e->cuda = ju_get(p, LWM2_KEY_CUDA_RUNTIME, json_type_int);
	if (!e->launch)
		e->launch = ju_get(p, LWM2_KEY_LAUNCH, json_type_array);
	/* Ranks: the task's own processes, not what they forked. */
	if (!(flags & LWM2_F_FORK_CHILD) &&
	    lwm2_step_counts_add(&e->steps, step, 1, APP_STEPS_MAX) < 0)
		return -1;
	if (node && add_node(e, node) < 0)
		return -1;
	for (size_t k = 0; m && k < NAPPM; k++)
		if (m->m[app_metrics[k]].valid) {
			e->sum[k] += m->m[app_metrics[k]].value;
			e->n[k]++;
		}
	return 0;
}

static int cmp_app(const void *x, const void *y)
{
	const struct app_ent *a = *(const struct app_ent *const *)x,
	                     *b = *(const struct app_ent *const *)y;

	if (a->cpu_us != b->cpu_us)
		return a->cpu_us > b->cpu_us ? -1 : 1;
	if (a->processes != b->processes)
		return a->processes > b->processes ? -1 : 1;
	return strcmp(a->name, b->name);
}

json_object *lwm2_app_json(const struct lwm2_app_acc *a)
{
	const struct app_ent **v;
	const struct app_ent *e;
	json_object *o, *ms, *others;

	if (!a || !a->n || !(v = malloc(a->n * sizeof(*v))))
		return NULL;
	for (size_t i = 0; i < a->n; i++)
		v[i] = &a->e[i];
	qsort(v, a->n, sizeof(*v), cmp_app);
	e = v[0];
	o = json_object_new_object();
	ju_add(o, LWM2_KEY_EXE, json_object_new_string(e->name));
	if (e->build_id)
		ju_add(o, LWM2_KEY_BUILD_ID, json_object_new_string(e->build_id));
	if (e->several_builds)
		ju_add(o, LWM2_KEY_SEVERAL_BUILDS, json_object_new_boolean(1));
	ju_add(o, LWM2_KEY_RANKS, ju_u64(lwm2_step_counts_max(&e->steps)));
	ju_add(o, LWM2_KEY_NODES, ju_u64(e->nodes.n));
	ju_add(o, LWM2_KEY_PROCESSES, ju_u64(e->processes));
	ju_add(o, LWM2_KEY_CPU_S, ju_double((double)e->cpu_us / 1e6));
	if (e->mpi_library)
		ju_add(o, LWM2_KEY_MPI_LIBRARY, json_object_get(e->mpi_library));
	if (e->runtime_libs)
		ju_add(o, LWM2_KEY_RUNTIME_LIBS, json_object_get(e->runtime_libs));
	if (e->language)
		ju_add(o, LWM2_KEY_LANGUAGE,
		       json_object_new_string(lwm2_language_name(e->language)));
	if (e->cuda)
		ju_add(o, LWM2_KEY_CUDA_RUNTIME, json_object_get(e->cuda));
	if (e->launch)
		ju_add(o, LWM2_KEY_LAUNCH, json_object_get(e->launch));
	ms = json_object_new_object();
	for (size_t k = 0; k < NAPPM; k++)
		if (e->n[k])
			ju_add(ms, lwm2_metric_ids[app_metrics[k]],
			       ju_double(e->sum[k] / (double)e->n[k]));
	ju_add(o, LWM2_KEY_METRICS, ms);
	others = json_object_new_array();
	for (size_t i = 1; i < a->n && i <= APP_OTHERS; i++) {
		json_object *x = json_object_new_object();
		ju_add(x, LWM2_KEY_EXE, json_object_new_string(v[i]->name));
		if (v[i]->build_id)
			ju_add(x, LWM2_KEY_BUILD_ID, json_object_new_string(v[i]->build_id));
		ju_add(x, LWM2_KEY_PROCESSES, ju_u64(v[i]->processes));
		ju_add(x, LWM2_KEY_CPU_S, ju_double((double)v[i]->cpu_us / 1e6));
		json_object_array_add(others, x);
	}
	ju_add(o, LWM2_KEY_OTHERS, others);
	if (a->n > APP_OTHERS + 1)
		ju_add(o, LWM2_KEY_OTHERS_OMITTED, ju_u64(a->n - APP_OTHERS - 1));
	free(v);
	return o;
}
