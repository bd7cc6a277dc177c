/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The member names of the job digest's JSON (doc/digest-schema.md), for
 * its writers (job.c, app.c, history.c, grid.c, parse.c's up-conversion)
 * and its readers (parse.c, render_json.c, logscan.c, lineproto.c and the
 * lwm2 command).
 *
 * Each name is a string literal macro, so that the fast text scanner
 * (logscan.c) compares against compile-time constants and takes their
 * lengths with sizeof.  The lists below name every one of them once per
 * object that holds it; test/keys.c walks what the writers produce and
 * fails on a member that is not listed, and on a listed member that no
 * writer produces.  Members named by data (metric ids, counter names)
 * are not structure and are not listed: they come from the metric and
 * counter tables.  Where a node record's member is the digest's under the
 * same name (job_id, step_id, node, flags, a series' n and c), its
 * readers use these names too; the node record's own members (procs,
 * series, exes) and the other JSON outputs of the lwm2 command are not
 * the digest's and keep their literals.
 */
#ifndef LWM2_KEYS_H
#define LWM2_KEYS_H

/* The digest object. */
#define LWM2_KEY_DIGEST_VERSION  "lwm2_digest_version"
#define LWM2_KEY_JOB             "job"
#define LWM2_KEY_APPLICATION     "application"
#define LWM2_KEY_SCOPE           "scope"
#define LWM2_KEY_STEPS           "steps"
#define LWM2_KEY_INCOMPLETE_LIST "incomplete_list"
#define LWM2_KEY_FLAGS           "flags"
#define LWM2_KEY_GRID            "grid"
#define LWM2_KEY_RANKS           "ranks"
#define LWM2_KEY_COMPACT         "compact"
#define LWM2_KEY_STEPS_OMITTED   "steps_omitted"
#define LWM2_KEY_UPGRADED_FROM   "upgraded_from"
#define LWM2_KEY_INTERFERENCE    "interference"
#define LWM2_KEY_HISTORY         "history"
#define LWM2_KEY_DERIVED         "derived"

/* "derived": the operation that made a digest of others (algebra.c). */
#define LWM2_KEY_OPERATION     "operation"
#define LWM2_KEY_OPERANDS      "operands"
#define LWM2_KEY_RANKS_ALIGNED "ranks_aligned"

/* A scope's "derived_metrics": name: {"expr", "value", "why"}. */
#define LWM2_KEY_DERIVED_METRICS "derived_metrics"
#define LWM2_KEY_EXPR            "expr"

/* "fit": what the job asked for against what it used (fit.c). */
#define LWM2_KEY_FIT                   "fit"
#define LWM2_KEY_FIT_CPU               "cpu"
#define LWM2_KEY_FIT_MEMORY            "memory"
#define LWM2_KEY_FIT_TIME              "time"
#define LWM2_KEY_FIT_GPU               "gpu"
#define LWM2_KEY_VERDICT               "verdict"
#define LWM2_KEY_ADVICE                "advice"
#define LWM2_KEY_NO_ADVICE             "no_advice"
#define LWM2_KEY_WHY                   "why"
#define LWM2_KEY_ALLOCATED_CORES       "allocated_cores"
#define LWM2_KEY_ELAPSED_S             "elapsed_s"
#define LWM2_KEY_EFFICIENCY            "efficiency"
#define LWM2_KEY_REQUESTED_MB          "requested_mb"
#define LWM2_KEY_REQUESTED_PER_NODE_MB "requested_per_node_mb"
#define LWM2_KEY_PEAK_MB               "peak_mb"
#define LWM2_KEY_PEAK_PER_NODE_MB      "peak_per_node_mb"
#define LWM2_KEY_SOURCE                "source"
#define LWM2_KEY_LIMIT_S               "limit_s"
#define LWM2_KEY_ALLOCATED             "allocated"
#define LWM2_KEY_USED                  "used"

/* "job": the accounting metadata. */
#define LWM2_KEY_CLUSTER       "cluster"
#define LWM2_KEY_JOB_ID        "job_id"
#define LWM2_KEY_USER          "user"
#define LWM2_KEY_ACCOUNT       "account"
#define LWM2_KEY_PARTITION     "partition"
#define LWM2_KEY_NODES         "nodes"
#define LWM2_KEY_NODE_COUNT    "node_count"
#define LWM2_KEY_CPUS_PER_TASK "cpus_per_task"
#define LWM2_KEY_START         "start"
#define LWM2_KEY_END           "end"
#define LWM2_KEY_STATE         "state"

/* A scope: "scope" and each element of "steps". */
#define LWM2_KEY_STEP_ID              "step_id"
#define LWM2_KEY_PROCESSES            "processes"
#define LWM2_KEY_MPI_PROCESSES        "mpi_processes"
#define LWM2_KEY_INCOMPLETE           "incomplete"
#define LWM2_KEY_PARTIAL              "partial"
#define LWM2_KEY_IO_URING_PROCESSES   "io_uring_processes"
#define LWM2_KEY_MMAP_WRITE_PROCESSES "mmap_write_processes"
/* Processes counted in "processes" that started unmeasured, and by
 * reason ("unmeasured": REASON: count, the reasons of
 * LWM2_UNMEASURED_COUNTERS); both only where there are any. */
#define LWM2_KEY_UNMEASURED_PROCESSES "unmeasured_processes"
#define LWM2_KEY_UNMEASURED           "unmeasured"
#define LWM2_KEY_NO_PRELOAD           "no_preload"
#define LWM2_KEY_STATIC               "static"
#define LWM2_KEY_CONTAINER            "container"
#define LWM2_KEY_RANK_SUBSET          "rank_subset"
#define LWM2_KEY_METRICS              "metrics"
#define LWM2_KEY_MISSING              "missing"
#define LWM2_KEY_V1_METRICS           "v1_metrics"
#define LWM2_KEY_TOTALS               "totals"
#define LWM2_KEY_EXECUTABLES          "executables"

/* A metric's statistics over the processes of a scope. */
#define LWM2_KEY_N      "n"
#define LWM2_KEY_MIN    "min"
#define LWM2_KEY_AVG    "avg"
#define LWM2_KEY_MAX    "max"
#define LWM2_KEY_MIN_AT "min_at"
#define LWM2_KEY_MAX_AT "max_at"

/* "executables" of a scope, and the executables of "application". */
#define LWM2_KEY_BY_COUNT "by_count"
#define LWM2_KEY_BY_CPU   "by_cpu"
#define LWM2_KEY_DISTINCT "distinct"
#define LWM2_KEY_EXE      "exe"
#define LWM2_KEY_CPU_S    "cpu_s"

/* "cgroup" of a node record: the memory peaks of the step's and the
 * job's cgroups as slurmstepd read them at step end (spank/cgroup.c). */
#define LWM2_KEY_CGROUP           "cgroup"
#define LWM2_KEY_CG_VERSION       "version"
#define LWM2_KEY_STEP_MEM_PEAK_KB "step_mem_peak_kb"
#define LWM2_KEY_JOB_MEM_PEAK_KB  "job_mem_peak_kb"

/* "cpu" of a node record, the node's processor as slurmstepd read it at
 * step end (spank/cpuinfo.c), and each element of the digest's
 * "processors", the job's nodes grouped by processor, most nodes first. */
#define LWM2_KEY_CPU        "cpu"
#define LWM2_KEY_PROCESSORS "processors"
/* "counter_events" of a node record and of the digest: per hardware
 * counter role ("fp_ops"), the event it was counted with ("PAPI_FP_INS";
 * "A|B" where processes differed), as the rank records say
 * (merge/hwc_events.c). */
#define LWM2_KEY_COUNTER_EVENTS   "counter_events"
#define LWM2_KEY_MODEL            "model"
#define LWM2_KEY_SOCKETS          "sockets"
#define LWM2_KEY_CORES_PER_SOCKET "cores_per_socket"
#define LWM2_KEY_THREADS_PER_CORE "threads_per_core"
#define LWM2_KEY_MHZ_NOMINAL      "mhz_nominal"
#define LWM2_KEY_MHZ_MEASURED     "mhz_measured"
#define LWM2_KEY_NODE_COUNT_CPU   "nodes"

/* A row of "grid": one node's time series of one step. */
#define LWM2_KEY_STEP           "step"
#define LWM2_KEY_NODE           "node"
#define LWM2_KEY_FIRST_SLICE    "first_slice"
#define LWM2_KEY_SLICE_LENGTH_S "slice_length_s"
#define LWM2_KEY_C              "c"

/* An element of "incomplete_list": a process that did not end normally. */
#define LWM2_KEY_RANK "rank"
#define LWM2_KEY_PID  "pid"

/* "ranks": the per-process table, and its processes' "threads" (each
 * row's first column the row of its process; "omitted": rows beyond the
 * table's bound). */
#define LWM2_KEY_COLS    "cols"
#define LWM2_KEY_ROWS    "rows"
#define LWM2_KEY_THREADS "threads"
#define LWM2_KEY_OMITTED "omitted"

/* "application": the main executable's identity. */
#define LWM2_KEY_BUILD_ID       "build_id"
#define LWM2_KEY_SEVERAL_BUILDS "several_builds"
#define LWM2_KEY_MPI_LIBRARY    "mpi_library"
#define LWM2_KEY_RUNTIME_LIBS   "runtime_libs"
#define LWM2_KEY_LANGUAGE       "language"
#define LWM2_KEY_CUDA_RUNTIME   "cuda_runtime"
#define LWM2_KEY_LAUNCH         "launch"
#define LWM2_KEY_OTHERS         "others"
#define LWM2_KEY_OTHERS_OMITTED "others_omitted"

/* "containers": the containers the job's processes ran in. */
#define LWM2_KEY_CONTAINERS         "containers"
#define LWM2_KEY_CONTAINERS_OMITTED "containers_omitted"
#define LWM2_KEY_RUNTIME            "runtime"
#define LWM2_KEY_IMAGE              "image"
#define LWM2_KEY_CPU_SHARE          "cpu_share"

/* "view": the application's queries of its own counters (lwm2_view(3)). */
#define LWM2_KEY_VIEW    "view"
#define LWM2_KEY_QUERIES "queries"
#define LWM2_KEY_SECONDS "seconds"

/* "regions": the program's named regions (lwm2_view(3), regions.c);
 * each name's "calls", "ranks", "seconds" and "share" (statistics). */
#define LWM2_KEY_REGIONS "regions"
#define LWM2_KEY_NAMES   "names"
#define LWM2_KEY_NAME    "name"
#define LWM2_KEY_SHARE   "share"
#define LWM2_KEY_FOLDED  "folded"
#define LWM2_KEY_OTHER   "other"

/* "lwm2_cost": lwm2's own cost in the job, estimated (owncost.c). */
#define LWM2_KEY_LWM2_COST     "lwm2_cost"
#define LWM2_KEY_COST_SHARE    "cpu_share_percent"
#define LWM2_KEY_CALLS         "calls"
#define LWM2_KEY_WRAPPERS_S    "wrappers_s"
#define LWM2_KEY_SAMPLES       "samples"
#define LWM2_KEY_SAMPLING_S    "sampling_s"
#define LWM2_KEY_IMAGES        "images"
#define LWM2_KEY_START_END_S   "start_end_s"
#define LWM2_KEY_HEARTBEATS    "heartbeats"
#define LWM2_KEY_HEARTBEAT_S   "heartbeat_s"
#define LWM2_KEY_CLOCK         "clock"
#define LWM2_KEY_CLOCK_READ_NS "clock_read_ns"

/* "history": the comparison with the application's earlier runs. */
#define LWM2_KEY_APP            "app"
#define LWM2_KEY_EARLIER_RUNS   "earlier_runs"
#define LWM2_KEY_COMPARED       "compared"
#define LWM2_KEY_MIN_RUNS       "min_runs"
#define LWM2_KEY_COMPARED_RANKS "compared_ranks"
#define LWM2_KEY_PREVIOUS_BUILD "previous_build"
#define LWM2_KEY_FINDINGS       "findings"
#define LWM2_KEY_RULE           "rule"
#define LWM2_KEY_TEXT           "text"
#define LWM2_KEY_VALUE          "value"
#define LWM2_KEY_MEDIAN         "median"
#define LWM2_KEY_LOW            "low"
#define LWM2_KEY_HIGH           "high"

/* An element of "interference" (grid.c), and of its "others". */
#define LWM2_KEY_METRIC       "metric"
#define LWM2_KEY_FROM         "from"
#define LWM2_KEY_TO           "to"
#define LWM2_KEY_SLICES       "slices"
#define LWM2_KEY_ACTIVE       "active"
#define LWM2_KEY_BASELINE     "baseline"
#define LWM2_KEY_DURING       "during"
#define LWM2_KEY_FALL         "fall"
#define LWM2_KEY_OTHERS_BYTES "others_bytes"
#define LWM2_KEY_BYTES        "bytes"
#define LWM2_KEY_WRITTEN      "written"
#define LWM2_KEY_READ         "read"

/*
 * Which object holds which member: X(object, key).  The object is a path
 * of the members leading to it, "[]" for an element of an array.
 */
#define LWM2_DIGEST_KEYS(X)                                                                        \
	X("", LWM2_KEY_DIGEST_VERSION)                                                             \
	X("", LWM2_KEY_JOB)                                                                        \
	X("", LWM2_KEY_APPLICATION)                                                                \
	X("", LWM2_KEY_SCOPE)                                                                      \
	X("", LWM2_KEY_STEPS)                                                                      \
	X("", LWM2_KEY_INCOMPLETE_LIST)                                                            \
	X("", LWM2_KEY_FLAGS)                                                                      \
	X("", LWM2_KEY_GRID)                                                                       \
	X("", LWM2_KEY_RANKS)                                                                      \
	X("", LWM2_KEY_COMPACT)                                                                    \
	X("", LWM2_KEY_STEPS_OMITTED)                                                              \
	X("", LWM2_KEY_UPGRADED_FROM)                                                              \
	X("", LWM2_KEY_DERIVED)                                                                    \
	X("/" LWM2_KEY_DERIVED, LWM2_KEY_OPERATION)                                                \
	X("/" LWM2_KEY_DERIVED, LWM2_KEY_OPERANDS)                                                 \
	X("/" LWM2_KEY_DERIVED, LWM2_KEY_RANKS_ALIGNED)                                            \
	X("/" LWM2_KEY_DERIVED "/" LWM2_KEY_OPERANDS "[]", LWM2_KEY_SOURCE)                        \
	X("/" LWM2_KEY_DERIVED "/" LWM2_KEY_OPERANDS "[]", LWM2_KEY_JOB_ID)                        \
	X("", LWM2_KEY_INTERFERENCE)                                                               \
	X("", LWM2_KEY_HISTORY)                                                                    \
	X("", LWM2_KEY_COUNTER_EVENTS)                                                             \
	X("", LWM2_KEY_PROCESSORS)                                                                 \
	X("/" LWM2_KEY_PROCESSORS "[]", LWM2_KEY_MODEL)                                            \
	X("/" LWM2_KEY_PROCESSORS "[]", LWM2_KEY_SOCKETS)                                          \
	X("/" LWM2_KEY_PROCESSORS "[]", LWM2_KEY_CORES_PER_SOCKET)                                 \
	X("/" LWM2_KEY_PROCESSORS "[]", LWM2_KEY_THREADS_PER_CORE)                                 \
	X("/" LWM2_KEY_PROCESSORS "[]", LWM2_KEY_MHZ_NOMINAL)                                      \
	X("/" LWM2_KEY_PROCESSORS "[]", LWM2_KEY_MHZ_MEASURED)                                     \
	X("/" LWM2_KEY_PROCESSORS "[]", LWM2_KEY_NODE_COUNT_CPU)                                   \
	X("", LWM2_KEY_CONTAINERS)                                                                 \
	X("", LWM2_KEY_CONTAINERS_OMITTED)                                                         \
	X("/" LWM2_KEY_CONTAINERS "[]", LWM2_KEY_RUNTIME)                                          \
	X("/" LWM2_KEY_CONTAINERS "[]", LWM2_KEY_IMAGE)                                            \
	X("/" LWM2_KEY_CONTAINERS "[]", LWM2_KEY_PROCESSES)                                        \
	X("/" LWM2_KEY_CONTAINERS "[]", LWM2_KEY_RANKS)                                            \
	X("/" LWM2_KEY_CONTAINERS "[]", LWM2_KEY_CPU_S)                                            \
	X("/" LWM2_KEY_CONTAINERS "[]", LWM2_KEY_CPU_SHARE)                                        \
	X("", LWM2_KEY_LWM2_COST)                                                                  \
	X("/" LWM2_KEY_LWM2_COST, LWM2_KEY_SECONDS)                                                \
	X("/" LWM2_KEY_LWM2_COST, LWM2_KEY_COST_SHARE)                                             \
	X("/" LWM2_KEY_LWM2_COST, LWM2_KEY_CALLS)                                                  \
	X("/" LWM2_KEY_LWM2_COST, LWM2_KEY_WRAPPERS_S)                                             \
	X("/" LWM2_KEY_LWM2_COST, LWM2_KEY_SAMPLES)                                                \
	X("/" LWM2_KEY_LWM2_COST, LWM2_KEY_SAMPLING_S)                                             \
	X("/" LWM2_KEY_LWM2_COST, LWM2_KEY_IMAGES)                                                 \
	X("/" LWM2_KEY_LWM2_COST, LWM2_KEY_START_END_S)                                            \
	X("/" LWM2_KEY_LWM2_COST, LWM2_KEY_HEARTBEATS)                                             \
	X("/" LWM2_KEY_LWM2_COST, LWM2_KEY_HEARTBEAT_S)                                            \
	X("/" LWM2_KEY_LWM2_COST, LWM2_KEY_CLOCK)                                                  \
	X("/" LWM2_KEY_LWM2_COST, LWM2_KEY_CLOCK_READ_NS)                                          \
	X("", LWM2_KEY_VIEW)                                                                       \
	X("/" LWM2_KEY_VIEW, LWM2_KEY_QUERIES)                                                     \
	X("/" LWM2_KEY_VIEW, LWM2_KEY_RANKS)                                                       \
	X("/" LWM2_KEY_VIEW, LWM2_KEY_SECONDS)                                                     \
	X("", LWM2_KEY_REGIONS)                                                                    \
	X("/" LWM2_KEY_REGIONS, LWM2_KEY_NAMES)                                                    \
	X("/" LWM2_KEY_REGIONS, LWM2_KEY_FOLDED)                                                   \
	X("/" LWM2_KEY_REGIONS, LWM2_KEY_OTHER)                                                    \
	X("/" LWM2_KEY_REGIONS "/" LWM2_KEY_OTHER, LWM2_KEY_CALLS)                                 \
	X("/" LWM2_KEY_REGIONS "/" LWM2_KEY_OTHER, LWM2_KEY_SECONDS)                               \
	X("/" LWM2_KEY_REGIONS "/" LWM2_KEY_NAMES "[]", LWM2_KEY_NAME)                             \
	X("/" LWM2_KEY_REGIONS "/" LWM2_KEY_NAMES "[]", LWM2_KEY_CALLS)                            \
	X("/" LWM2_KEY_REGIONS "/" LWM2_KEY_NAMES "[]", LWM2_KEY_RANKS)                            \
	X("/" LWM2_KEY_REGIONS "/" LWM2_KEY_NAMES "[]", LWM2_KEY_SECONDS)                          \
	X("/" LWM2_KEY_REGIONS "/" LWM2_KEY_NAMES "[]", LWM2_KEY_SHARE)                            \
	LWM2_STAT_KEYS(X, "/" LWM2_KEY_REGIONS "/" LWM2_KEY_NAMES "[]/" LWM2_KEY_SECONDS)          \
	LWM2_STAT_KEYS(X, "/" LWM2_KEY_REGIONS "/" LWM2_KEY_NAMES "[]/" LWM2_KEY_SHARE)            \
	X("", LWM2_KEY_FIT)                                                                        \
	X("/" LWM2_KEY_FIT, LWM2_KEY_FIT_CPU)                                                      \
	X("/" LWM2_KEY_FIT, LWM2_KEY_FIT_MEMORY)                                                   \
	X("/" LWM2_KEY_FIT, LWM2_KEY_FIT_TIME)                                                     \
	X("/" LWM2_KEY_FIT, LWM2_KEY_FIT_GPU)                                                      \
	X("/" LWM2_KEY_FIT, LWM2_KEY_NODES)                                                        \
	X("/" LWM2_KEY_FIT, LWM2_KEY_NO_ADVICE)                                                    \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_CPU, LWM2_KEY_VERDICT)                                 \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_CPU, LWM2_KEY_ADVICE)                                  \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_CPU, LWM2_KEY_WHY)                                     \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_CPU, LWM2_KEY_ALLOCATED_CORES)                         \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_CPU, LWM2_KEY_CPU_S)                                   \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_CPU, LWM2_KEY_ELAPSED_S)                               \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_CPU, LWM2_KEY_EFFICIENCY)                              \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_MEMORY, LWM2_KEY_VERDICT)                              \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_MEMORY, LWM2_KEY_ADVICE)                               \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_MEMORY, LWM2_KEY_WHY)                                  \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_MEMORY, LWM2_KEY_REQUESTED_MB)                         \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_MEMORY, LWM2_KEY_REQUESTED_PER_NODE_MB)                \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_MEMORY, LWM2_KEY_PEAK_MB)                              \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_MEMORY, LWM2_KEY_PEAK_PER_NODE_MB)                     \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_MEMORY, LWM2_KEY_SOURCE)                               \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_TIME, LWM2_KEY_VERDICT)                                \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_TIME, LWM2_KEY_ADVICE)                                 \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_TIME, LWM2_KEY_WHY)                                    \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_TIME, LWM2_KEY_LIMIT_S)                                \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_TIME, LWM2_KEY_ELAPSED_S)                              \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_GPU, LWM2_KEY_VERDICT)                                 \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_GPU, LWM2_KEY_ADVICE)                                  \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_GPU, LWM2_KEY_WHY)                                     \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_GPU, LWM2_KEY_ALLOCATED)                               \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_FIT_GPU, LWM2_KEY_USED)                                    \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_NODES "[]", LWM2_KEY_NODE)                                 \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_NODES "[]", LWM2_KEY_CPU_S)                                \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_NODES "[]", LWM2_KEY_EFFICIENCY)                           \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_NODES "[]", LWM2_KEY_PEAK_MB)                              \
	X("/" LWM2_KEY_FIT "/" LWM2_KEY_NODES "[]", LWM2_KEY_USED)                                 \
	X("/" LWM2_KEY_JOB, LWM2_KEY_CLUSTER)                                                      \
	X("/" LWM2_KEY_JOB, LWM2_KEY_JOB_ID)                                                       \
	X("/" LWM2_KEY_JOB, LWM2_KEY_USER)                                                         \
	X("/" LWM2_KEY_JOB, LWM2_KEY_ACCOUNT)                                                      \
	X("/" LWM2_KEY_JOB, LWM2_KEY_PARTITION)                                                    \
	X("/" LWM2_KEY_JOB, LWM2_KEY_NODES)                                                        \
	X("/" LWM2_KEY_JOB, LWM2_KEY_NODE_COUNT)                                                   \
	X("/" LWM2_KEY_JOB, LWM2_KEY_CPUS_PER_TASK)                                                \
	X("/" LWM2_KEY_JOB, LWM2_KEY_START)                                                        \
	X("/" LWM2_KEY_JOB, LWM2_KEY_END)                                                          \
	X("/" LWM2_KEY_JOB, LWM2_KEY_STATE)                                                        \
	LWM2_SCOPE_KEYS(X, "/scope")                                                               \
	LWM2_SCOPE_KEYS(X, "/steps[]")                                                             \
	X("/" LWM2_KEY_STEPS "[]", LWM2_KEY_STEP_ID)                                               \
	X("/" LWM2_KEY_GRID "[]", LWM2_KEY_STEP)                                                   \
	X("/" LWM2_KEY_GRID "[]", LWM2_KEY_NODE)                                                   \
	X("/" LWM2_KEY_GRID "[]", LWM2_KEY_FIRST_SLICE)                                            \
	X("/" LWM2_KEY_GRID "[]", LWM2_KEY_SLICE_LENGTH_S)                                         \
	X("/" LWM2_KEY_GRID "[]", LWM2_KEY_N)                                                      \
	X("/" LWM2_KEY_GRID "[]", LWM2_KEY_C)                                                      \
	X("/" LWM2_KEY_INCOMPLETE_LIST "[]", LWM2_KEY_STEP)                                        \
	X("/" LWM2_KEY_INCOMPLETE_LIST "[]", LWM2_KEY_NODE)                                        \
	X("/" LWM2_KEY_INCOMPLETE_LIST "[]", LWM2_KEY_RANK)                                        \
	X("/" LWM2_KEY_INCOMPLETE_LIST "[]", LWM2_KEY_PID)                                         \
	X("/" LWM2_KEY_RANKS, LWM2_KEY_COLS)                                                       \
	X("/" LWM2_KEY_RANKS, LWM2_KEY_NODES)                                                      \
	X("/" LWM2_KEY_RANKS, LWM2_KEY_ROWS)                                                       \
	X("/" LWM2_KEY_RANKS, LWM2_KEY_THREADS)                                                    \
	X("/" LWM2_KEY_RANKS "/" LWM2_KEY_THREADS, LWM2_KEY_COLS)                                  \
	X("/" LWM2_KEY_RANKS "/" LWM2_KEY_THREADS, LWM2_KEY_ROWS)                                  \
	X("/" LWM2_KEY_RANKS "/" LWM2_KEY_THREADS, LWM2_KEY_OMITTED)                               \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_EXE)                                                  \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_BUILD_ID)                                             \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_SEVERAL_BUILDS)                                       \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_RANKS)                                                \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_NODES)                                                \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_PROCESSES)                                            \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_CPU_S)                                                \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_MPI_LIBRARY)                                          \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_RUNTIME_LIBS)                                         \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_LANGUAGE)                                             \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_CUDA_RUNTIME)                                         \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_LAUNCH)                                               \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_METRICS)                                              \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_OTHERS)                                               \
	X("/" LWM2_KEY_APPLICATION, LWM2_KEY_OTHERS_OMITTED)                                       \
	X("/" LWM2_KEY_APPLICATION "/" LWM2_KEY_OTHERS "[]", LWM2_KEY_EXE)                         \
	X("/" LWM2_KEY_APPLICATION "/" LWM2_KEY_OTHERS "[]", LWM2_KEY_BUILD_ID)                    \
	X("/" LWM2_KEY_APPLICATION "/" LWM2_KEY_OTHERS "[]", LWM2_KEY_PROCESSES)                   \
	X("/" LWM2_KEY_APPLICATION "/" LWM2_KEY_OTHERS "[]", LWM2_KEY_CPU_S)                       \
	X("/" LWM2_KEY_HISTORY, LWM2_KEY_APP)                                                      \
	X("/" LWM2_KEY_HISTORY, LWM2_KEY_BUILD_ID)                                                 \
	X("/" LWM2_KEY_HISTORY, LWM2_KEY_RANKS)                                                    \
	X("/" LWM2_KEY_HISTORY, LWM2_KEY_EARLIER_RUNS)                                             \
	X("/" LWM2_KEY_HISTORY, LWM2_KEY_COMPARED)                                                 \
	X("/" LWM2_KEY_HISTORY, LWM2_KEY_MIN_RUNS)                                                 \
	X("/" LWM2_KEY_HISTORY, LWM2_KEY_COMPARED_RANKS)                                           \
	X("/" LWM2_KEY_HISTORY, LWM2_KEY_PREVIOUS_BUILD)                                           \
	X("/" LWM2_KEY_HISTORY, LWM2_KEY_FINDINGS)                                                 \
	X("/" LWM2_KEY_HISTORY "/" LWM2_KEY_FINDINGS "[]", LWM2_KEY_RULE)                          \
	X("/" LWM2_KEY_HISTORY "/" LWM2_KEY_FINDINGS "[]", LWM2_KEY_TEXT)                          \
	X("/" LWM2_KEY_HISTORY "/" LWM2_KEY_FINDINGS "[]", LWM2_KEY_VALUE)                         \
	X("/" LWM2_KEY_HISTORY "/" LWM2_KEY_FINDINGS "[]", LWM2_KEY_MEDIAN)                        \
	X("/" LWM2_KEY_HISTORY "/" LWM2_KEY_FINDINGS "[]", LWM2_KEY_LOW)                           \
	X("/" LWM2_KEY_HISTORY "/" LWM2_KEY_FINDINGS "[]", LWM2_KEY_HIGH)                          \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_RULE)                                           \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_METRIC)                                         \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_FROM)                                           \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_TO)                                             \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_SLICES)                                         \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_ACTIVE)                                         \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_BASELINE)                                       \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_DURING)                                         \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_FALL)                                           \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_OTHERS_BYTES)                                   \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_OTHERS)                                         \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_NODES)                                          \
	X("/" LWM2_KEY_INTERFERENCE "[]", LWM2_KEY_TEXT)                                           \
	X("/" LWM2_KEY_INTERFERENCE "[]"                                                           \
	  "/" LWM2_KEY_OTHERS "[]",                                                                \
	  LWM2_KEY_JOB)                                                                            \
	X("/" LWM2_KEY_INTERFERENCE "[]"                                                           \
	  "/" LWM2_KEY_OTHERS "[]",                                                                \
	  LWM2_KEY_BYTES)                                                                          \
	X("/" LWM2_KEY_INTERFERENCE "[]"                                                           \
	  "/" LWM2_KEY_OTHERS "[]",                                                                \
	  LWM2_KEY_WRITTEN)                                                                        \
	X("/" LWM2_KEY_INTERFERENCE "[]"                                                           \
	  "/" LWM2_KEY_OTHERS "[]",                                                                \
	  LWM2_KEY_READ)

/* The members of a scope at path p, and of its metrics and executables. */
#define LWM2_SCOPE_KEYS(X, p)                                                                      \
	X(p, LWM2_KEY_PROCESSES)                                                                   \
	X(p, LWM2_KEY_MPI_PROCESSES)                                                               \
	X(p, LWM2_KEY_NODES)                                                                       \
	X(p, LWM2_KEY_INCOMPLETE)                                                                  \
	X(p, LWM2_KEY_PARTIAL)                                                                     \
	X(p, LWM2_KEY_IO_URING_PROCESSES)                                                          \
	X(p, LWM2_KEY_MMAP_WRITE_PROCESSES)                                                        \
	X(p, LWM2_KEY_UNMEASURED_PROCESSES)                                                        \
	X(p, LWM2_KEY_UNMEASURED)                                                                  \
	X(p "/" LWM2_KEY_UNMEASURED, LWM2_KEY_NO_PRELOAD)                                          \
	X(p "/" LWM2_KEY_UNMEASURED, LWM2_KEY_STATIC)                                              \
	X(p "/" LWM2_KEY_UNMEASURED, LWM2_KEY_CONTAINER)                                           \
	X(p "/" LWM2_KEY_UNMEASURED, LWM2_KEY_RANK_SUBSET)                                         \
	X(p, LWM2_KEY_METRICS)                                                                     \
	X(p, LWM2_KEY_MISSING)                                                                     \
	X(p, LWM2_KEY_V1_METRICS)                                                                  \
	X(p, LWM2_KEY_TOTALS)                                                                      \
	X(p, LWM2_KEY_EXECUTABLES)                                                                 \
	X(p, LWM2_KEY_DERIVED_METRICS)                                                             \
	X(p "/" LWM2_KEY_DERIVED_METRICS "/*", LWM2_KEY_EXPR)                                      \
	X(p "/" LWM2_KEY_DERIVED_METRICS "/*", LWM2_KEY_VALUE)                                     \
	X(p "/" LWM2_KEY_DERIVED_METRICS "/*", LWM2_KEY_WHY)                                       \
	LWM2_STAT_KEYS(X, p "/" LWM2_KEY_METRICS "/*")                                             \
	LWM2_STAT_KEYS(X, p "/" LWM2_KEY_V1_METRICS "/*")                                          \
	X(p "/" LWM2_KEY_EXECUTABLES, LWM2_KEY_BY_COUNT)                                           \
	X(p "/" LWM2_KEY_EXECUTABLES, LWM2_KEY_BY_CPU)                                             \
	X(p "/" LWM2_KEY_EXECUTABLES, LWM2_KEY_DISTINCT)                                           \
	X(p "/" LWM2_KEY_EXECUTABLES "/" LWM2_KEY_BY_COUNT "[]", LWM2_KEY_EXE)                     \
	X(p "/" LWM2_KEY_EXECUTABLES "/" LWM2_KEY_BY_COUNT "[]", LWM2_KEY_PROCESSES)               \
	X(p "/" LWM2_KEY_EXECUTABLES "/" LWM2_KEY_BY_COUNT "[]", LWM2_KEY_CPU_S)                   \
	X(p "/" LWM2_KEY_EXECUTABLES "/" LWM2_KEY_BY_CPU "[]", LWM2_KEY_EXE)                       \
	X(p "/" LWM2_KEY_EXECUTABLES "/" LWM2_KEY_BY_CPU "[]", LWM2_KEY_PROCESSES)                 \
	X(p "/" LWM2_KEY_EXECUTABLES "/" LWM2_KEY_BY_CPU "[]", LWM2_KEY_CPU_S)

/* A metric's statistics at path p. */
#define LWM2_STAT_KEYS(X, p)                                                                       \
	X(p, LWM2_KEY_N)                                                                           \
	X(p, LWM2_KEY_MIN)                                                                         \
	X(p, LWM2_KEY_AVG)                                                                         \
	X(p, LWM2_KEY_MAX)                                                                         \
	X(p, LWM2_KEY_MIN_AT)                                                                      \
	X(p, LWM2_KEY_MAX_AT)

#endif /* LWM2_KEYS_H */
