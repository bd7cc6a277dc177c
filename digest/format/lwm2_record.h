/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rank record: what liblwm2.so leaves behind for one measured process.
 *
 * Written by the preload library (the user's process) into the node-local
 * step directory, read by the SPANK plugin at step end (as root), by the
 * `lwm2 dump` command and by the fuzz target.  This header is the one
 * definition both sides compile against.
 *
 * File layout (little-endian, the only byte order Slurm nodes here use):
 *
 *   [struct lwm2_file_header]           written once at creation
 *   [slot 0: struct lwm2_rank_record + nslices * lwm2_slice]
 *   [slot 1: same]
 *
 * The writer keeps the file mapped MAP_SHARED and rewrites the older slot at
 * every heartbeat and at exit, finishing with a new, higher generation and a
 * checksum.  A process killed by SIGKILL in the middle of a write leaves the
 * other slot intact, so a reader always finds a record that is at most one
 * time slice old: it takes the valid slot with the highest generation.
 *
 * Counter lists are X-macros so that the writer, the readers and the JSON
 * names never drift apart.  X(name, unit, description); unit "ns" marks a
 * time counter (the writer converts clock ticks to ns when it folds).
 *
 * How the format grows (doc/digest-schema.md, "Rank records that evolve"):
 * a site upgrades node by node while jobs run, and a step's processes that
 * started before the package upgrade keep the old library while the ones
 * it starts next load the new one, so one job's records come from two
 * builds and every reader must take both.  A counter's id is its index in
 * LWM2_COUNTERS, and that table is append-only: a new counter goes at the
 * end of LWM2_LATER_COUNTERS, never between others, and no counter is
 * removed or renumbered (one that is retired keeps its id and stays 0).
 * A record says how many counters it carries (ncounters); the fields that
 * follow the counters are found after ncounters of them, and every slice
 * is ncounters counters.  Adding a counter therefore changes neither
 * LWM2_RECORD_VERSION nor any field before the counters; a reader of a
 * record with fewer counters than its own has the missing ones as "not
 * measured" (never 0: lwm2_record_upconvert leaves ncounters at the
 * writer's count), one with more skips the ones it does not know (the
 * record carries ids, not names; the node record, JSON, carries names, and
 * the digest keeps a newer library's counters by name).  Fields are added
 * only after the last field of the fixed part, with a new version; a
 * reader takes a newer version's record too, reading the fields it knows
 * and skipping the rest (a change that cannot be made that way takes a
 * new magic).  The writer is unchanged by all this: it writes its own
 * struct as it is, from signal-safe code, without allocation; only the
 * readers (lwm2_record_validate, lwm2_record_upconvert) convert.  Ids
 * rather than a name table in every file: a record is rewritten at every
 * heartbeat and the ids cost nothing there, while the names are known
 * where the records become JSON (one table per build, lwm2_counter_names).
 */
#ifndef LWM2_RECORD_H
#define LWM2_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define LWM2_FILE_MAGIC     "LWM2RANK"
#define LWM2_RECORD_MAGIC   "LWM2SLOT"
#define LWM2_RECORD_VERSION 5
/* Version 1 records (without the application identity at the end of
 * struct lwm2_rank_record), version 2 records (without the container),
 * version 3 records (without the counters' events) and version 4 records
 * (without the named regions) are still read: lwm2_record_upconvert. */
#define LWM2_RECORD_VERSION_MIN 1

/* A rank record file larger than this is rejected unread. */
#define LWM2_RECORD_FILE_MAX (8u << 20)
/* Slices kept before the series is coarsened (pairs merged, length doubled). */
#define LWM2_MAX_SLICES_DEFAULT 256
#define LWM2_MAX_SLICES_LIMIT   4096

/* POSIX file I/O: regular files and block devices only. */
#define LWM2_POSIX_COUNTERS(X)                                                                     \
	X(posix_read_calls, "calls", "POSIX read calls on files")                                  \
	X(posix_read_bytes, "B", "bytes read from files")                                          \
	X(posix_read_ns, "ns", "time in POSIX read calls")                                         \
	X(posix_write_calls, "calls", "POSIX write calls on files")                                \
	X(posix_write_bytes, "B", "bytes written to files")                                        \
	X(posix_write_ns, "ns", "time in POSIX write calls")                                       \
	X(posix_meta_calls, "calls", "open, close, seek and sync calls on files")                  \
	X(posix_meta_ns, "ns", "time in file metadata calls")                                      \
	X(posix_sync_calls, "calls", "fsync and fdatasync calls on files (also metadata calls)")   \
	X(posix_sync_ns, "ns", "time in fsync and fdatasync (also metadata time)")                 \
	X(posix_aio_calls, "calls", "POSIX aio and libaio calls on files")                         \
	X(posix_aio_ns, "ns", "time in POSIX aio and libaio calls (submission and waiting)")       \
	X(posix_aio_read_bytes, "B", "bytes read from files by completed aio requests")            \
	X(posix_aio_write_bytes, "B", "bytes written to files by completed aio requests")

/* MPI: point-to-point, collective, MPI-IO; Wait/Test count to the class of
 * the requests they complete. */
#define LWM2_MPI_COUNTERS(X)                                                                       \
	X(mpi_p2p_calls, "calls", "MPI point-to-point calls")                                      \
	X(mpi_p2p_bytes_sent, "B", "bytes sent in point-to-point calls")                           \
	X(mpi_p2p_bytes_recv, "B", "bytes received in point-to-point calls")                       \
	X(mpi_p2p_ns, "ns", "time in point-to-point calls")                                        \
	X(mpi_coll_calls, "calls", "MPI collective calls")                                         \
	X(mpi_coll_bytes_sent, "B", "bytes sent in collective calls")                              \
	X(mpi_coll_bytes_recv, "B", "bytes received in collective calls")                          \
	X(mpi_coll_ns, "ns", "time in collective calls")                                           \
	X(mpiio_read_calls, "calls", "MPI-IO read calls")                                          \
	X(mpiio_read_bytes, "B", "bytes read through MPI-IO")                                      \
	X(mpiio_read_ns, "ns", "time in MPI-IO read calls")                                        \
	X(mpiio_write_calls, "calls", "MPI-IO write calls")                                        \
	X(mpiio_write_bytes, "B", "bytes written through MPI-IO")                                  \
	X(mpiio_write_ns, "ns", "time in MPI-IO write calls")                                      \
	X(mpiio_meta_calls, "calls", "MPI-IO open, close, sync and set_view calls")                \
	X(mpiio_meta_ns, "ns", "time in MPI-IO metadata calls")                                    \
	X(mpi_other_calls, "calls", "other MPI calls (init, finalize, communicators)")             \
	X(mpi_other_ns, "ns", "time in other MPI calls")                                           \
	X(mpi_p2p_msgs_sent, "msgs", "point-to-point messages sent (each send, each start)")       \
	X(mpi_p2p_msgs_recv, "msgs", "point-to-point messages received (as receives complete)")    \
	X(mpi_init_calls, "calls", "MPI_Init, MPI_Init_thread and MPI_Finalize calls")             \
	X(mpi_init_ns, "ns", "time in MPI_Init, MPI_Init_thread and MPI_Finalize")

/* CUDA through CUPTI. */
#define LWM2_CUDA_COUNTERS(X)                                                                      \
	X(cuda_calls, "calls", "CUDA runtime and driver API calls")                                \
	X(cuda_ns, "ns", "time in CUDA API calls")                                                 \
	X(cuda_h2d_count, "calls", "host-to-device transfers")                                     \
	X(cuda_h2d_bytes, "B", "bytes transferred host to device")                                 \
	X(cuda_d2h_count, "calls", "device-to-host transfers")                                     \
	X(cuda_d2h_bytes, "B", "bytes transferred device to host")                                 \
	X(cuda_other_copy_count, "calls", "device-to-device and peer transfers")                   \
	X(cuda_other_copy_bytes, "B", "bytes in device-to-device and peer transfers")

/* Hardware counters (PAPI), read per thread at thread end and slice ends. */
#define LWM2_HWC_COUNTERS(X)                                                                       \
	X(hwc_cycles, "cycles", "core cycles")                                                     \
	X(hwc_instructions, "instr", "instructions completed")                                     \
	X(hwc_fp_ops, "instr", "floating-point instructions")                                      \
	X(hwc_l1d_accesses, "accesses", "level-1 data cache accesses")                             \
	X(hwc_l1d_misses, "misses", "level-1 data cache misses")                                   \
	X(hwc_llc_misses, "misses", "last-level cache misses")

/* Counters added after the first 50 (record version 3), in the order they
 * were added: append only, whatever their module (the id is the place in
 * LWM2_COUNTERS; doc/HACKING.md walks through adding one).  A test build
 * adds the next version's counter with -DLWM2_TEST_NEXT_COUNTERS
 * (digest/test/evolve.c). */
#ifdef LWM2_TEST_NEXT_COUNTERS
#define LWM2_TEST_NEXT_COUNTER(X)                                                                  \
	X(posix_msync_bytes, "B", "bytes of shared file mappings given to msync")
#else
#define LWM2_TEST_NEXT_COUNTER(X)
#endif
/* Processes a measured process started that the library could not
 * measure (preload/unmeasured.c), by reason: counted by the parent image
 * at its exec or posix_spawn, so that the digest's process total never
 * leaves them out. */
#define LWM2_UNMEASURED_COUNTERS(X)                                                                \
	X(unmeasured_no_preload, "procs",                                                          \
	  "processes started with an environment that no longer preloads lwm2")                    \
	X(unmeasured_static, "procs", "static executables started (no loader to preload lwm2)")    \
	X(unmeasured_container, "procs",                                                           \
	  "processes started in a container without lwm2's library or step directory")             \
	X(unmeasured_rank_subset, "procs",                                                         \
	  "tasks of a step left out by its rank subset (--lwm2-ranks)")
/* The hardware counter roles counted only where an event is named for
 * them (digest/format/hwc_roles.h). */
#define LWM2_HWC_NAMED_COUNTERS(X)                                                                 \
	X(hwc_int_ops, "instr", "integer instructions")                                            \
	X(hwc_loads, "instr", "load instructions")                                                 \
	X(hwc_stores, "instr", "store instructions")                                               \
	X(hwc_l2d_misses, "misses", "level-2 data cache misses")                                   \
	X(hwc_l2d_accesses, "accesses", "level-2 data cache accesses")                             \
	X(hwc_tlb_misses, "misses", "data TLB misses")
#define LWM2_LATER_COUNTERS(X)                                                                     \
	LWM2_UNMEASURED_COUNTERS(X) LWM2_HWC_NAMED_COUNTERS(X) LWM2_TEST_NEXT_COUNTER(X)

/* The reasons of LWM2_UNMEASURED_COUNTERS: consecutive counters from
 * LWM2_C_UNMEASURED_FIRST, each named "unmeasured_REASON". */
#define LWM2_X_ONE(name, unit, desc) +1
enum { LWM2_NUNMEASURED = 0 LWM2_UNMEASURED_COUNTERS(LWM2_X_ONE) };
#undef LWM2_X_ONE
#define LWM2_C_UNMEASURED_FIRST LWM2_C_unmeasured_no_preload
#define LWM2_UNMEASURED_PREFIX  "unmeasured_"

/* Everything that is counted per thread and per time slice. */
#define LWM2_COUNTERS(X)                                                                           \
	LWM2_POSIX_COUNTERS(X)                                                                     \
	LWM2_MPI_COUNTERS(X)                                                                       \
	LWM2_CUDA_COUNTERS(X)                                                                      \
	LWM2_HWC_COUNTERS(X)                                                                       \
	LWM2_LATER_COUNTERS(X)

enum lwm2_counter {
#define LWM2_X_ENUM(name, unit, desc) LWM2_C_##name,
	LWM2_COUNTERS(LWM2_X_ENUM)
#undef LWM2_X_ENUM
	    LWM2_NCOUNTERS
};
/* The counters of every record of versions 1 to 3, ids 0 to 49: a record
 * carries at least these many (a fixed part shorter than that is not a
 * record), and their ids are pinned below. */
#define LWM2_NCOUNTERS_V3 50
/* A record of more counters than this is rejected unread. */
#define LWM2_NCOUNTERS_LIMIT 1024

/* Regions a wrapper earmarks; the sampling handler reads the current one. */
#define LWM2_EARMARKS(X)                                                                           \
	X(compute, "outside any measured library")                                                 \
	X(mpi, "inside MPI")                                                                       \
	X(io, "inside POSIX file I/O")                                                             \
	X(cuda, "inside CUDA")

enum lwm2_earmark {
#define LWM2_X_ENUM(name, desc) LWM2_EARMARK_##name,
	LWM2_EARMARKS(LWM2_X_ENUM)
#undef LWM2_X_ENUM
	    LWM2_NEARMARKS
};

/* Record flags. */
enum lwm2_record_flag {
	LWM2_F_INCOMPLETE = 1u << 0, /* the process did not reach its normal end */
	LWM2_F_PARTIAL = 1u << 1,    /* the memory budget was hit: slices coarsened or dropped */
	LWM2_F_EXEC = 1u << 2,       /* the image was replaced by exec; see the next record */
	LWM2_F_FORK_CHILD = 1u << 3, /* a child of fork in a measured process */
	LWM2_F_SIGNALED = 1u << 4,   /* ended by a signal (term_signal) */
	LWM2_F_MPI = 1u << 5,        /* MPI_Init was reached */
	LWM2_F_MPI_FINALIZED = 1u << 6,
	LWM2_F_SAMPLING_OFF = 1u << 7, /* sampling disabled (reason in missing_reason) */
	LWM2_F_COARSENED = 1u << 8,    /* slice_length_s grew to fit the budget */
	LWM2_F_IO_URING = 1u << 9,     /* set up an io_uring: its I/O is not counted */
	LWM2_F_MMAP_WRITE = 1u << 10,  /* mapped a file shared and writable: stores are unseen */
	LWM2_F_SUMMARY = 1u << 11,     /* node records: short processes of one executable */
	LWM2_F_ASIDE = 1u << 12,       /* built with a sanitizer: nothing counted (reasons) */
};

/* Metric groups that can be missing; the reasons are text in the record. */
enum lwm2_group {
	LWM2_G_POSIX,
	LWM2_G_MPI,
	LWM2_G_SAMPLING,
	LWM2_G_HWC,
	LWM2_G_CUDA,
	LWM2_NGROUPS
};
#define LWM2_REASON_LEN 96
/* The groups light mode (LWM2_MODE=light) leaves empty, and the reason
 * its records give for each: readers tell light mode by it (the node
 * record's short processes, which keep no reasons, take these groups from
 * the step's records: digest/merge/node.c). */
#define LWM2_LIGHT_GROUPS                                                                          \
	((1u << LWM2_G_POSIX) | (1u << LWM2_G_MPI) | (1u << LWM2_G_CUDA) | (1u << LWM2_G_SAMPLING))
#define LWM2_LIGHT_REASON "light mode (--lwm2=light): counters and times at start and end only"
/* A GNU build-id is 20 bytes (SHA-1) by default; some linkers make 16 or
 * 32: longer ones are cut. */
#define LWM2_BUILD_ID_MAX     32
#define LWM2_RUNTIME_LIBS_LEN 96
/* The container a process ran in (LWM2_CONTAINER=RUNTIME:IMAGE): the
 * runtime's short name ("charliecloud", "podman") and the image as the
 * runtime knows it (a path, or "docker.io/library/debian:11"), each cut
 * to its field, terminated. */
#define LWM2_CONTAINER_RUNTIME_LEN 16
#define LWM2_CONTAINER_IMAGE_LEN   176
/* The event that filled each hardware counter role, "role=EVENT" items
 * separated by spaces in the roles' order ("cycles=PAPI_TOT_CYC
 * fp_ops=PAPI_FP_INS"), terminated; a role left out or not available has
 * no item.  Names, not role numbers: a reader of another build reads the
 * roles it knows by name. */
#define LWM2_HWC_EVENTS_LEN 256
/* The program's named regions (lwm2_region_begin/end, lwm2_view(3)) a
 * record keeps: the busiest by time; the others are folded into one
 * entry, counted.  A name is cut to its field, terminated. */
#define LWM2_REGIONS_MAX     32
#define LWM2_REGION_NAME_LEN 48

/* One named region of a process: its calls (begin/end pairs that ended)
 * and their time, summed over the process's threads; a region entered
 * again while open in the same thread (recursion) counts the call but
 * not its time twice. */
struct lwm2_region_entry {
	char name[LWM2_REGION_NAME_LEN];
	uint64_t calls;
	uint64_t ns;
};

/* The threads of a process a record keeps (threads as a scope): the
 * main thread and the busiest others by CPU time, those that ended among
 * them; the rest folded and counted. */
#define LWM2_THREADS_MAX 16
/* What a thread entry keeps of the thread's counters, in this order (the
 * node record names them): time in MPI and in POSIX file I/O (ns), bytes
 * of file I/O, and two hardware counters (0 where not counted). */
#define LWM2_THREAD_COUNTERS(X)                                                                    \
	X(mpi_ns, "ns", "time inside MPI")                                                         \
	X(io_ns, "ns", "time inside POSIX file I/O")                                               \
	X(io_bytes, "B", "bytes read and written by POSIX file I/O")                               \
	X(cycles, "", "CPU cycles (hardware counter)")                                             \
	X(instructions, "", "instructions (hardware counter)")
enum lwm2_thread_counter {
#define LWM2_X_ENUM(name, unit, desc) LWM2_TC_##name,
	LWM2_THREAD_COUNTERS(LWM2_X_ENUM)
#undef LWM2_X_ENUM
	    LWM2_THREAD_NCOUNTERS
};
enum lwm2_thread_flag {
	LWM2_TH_MAIN = 1u << 0,  /* the process's main thread */
	LWM2_TH_ENDED = 1u << 1, /* ended before the record was written */
};
/* One thread of a process. */
struct lwm2_thread_entry {
	int32_t tid;
	uint32_t flags;  /* enum lwm2_thread_flag */
	uint64_t cpu_ns; /* user and system CPU time */
	uint64_t samples[LWM2_NEARMARKS];
	uint64_t counters[LWM2_THREAD_NCOUNTERS];
};

/* Runtimes the process used (as TOPAS recorded language and library). */
enum lwm2_runtime {
	LWM2_RT_FORTRAN = 1u << 0,
	LWM2_RT_CXX = 1u << 1,
	LWM2_RT_OPENMP = 1u << 2,
	LWM2_RT_CUDA = 1u << 3,
	LWM2_RT_PTHREADS = 1u << 4,
	LWM2_RT_MPI_OMPI = 1u << 5,
	LWM2_RT_MPI_MPICH = 1u << 6,
	LWM2_RT_PAPI_APP = 1u << 7, /* the application used PAPI itself */
};

/* The main program's language (from its own dynamic symbols and needed
 * libraries, not from every library loaded). */
enum lwm2_language {
	LWM2_LANG_UNKNOWN = 0,
	LWM2_LANG_C = 1, /* C, or a language without a runtime of its own */
	LWM2_LANG_CXX = 2,
	LWM2_LANG_FORTRAN = 3,
};

/* The language's name as the dump and the job digest's application write
 * it. */
static inline const char *lwm2_language_name(uint32_t language)
{
	return language == LWM2_LANG_C         ? "c"
	       : language == LWM2_LANG_CXX     ? "c++"
	       : language == LWM2_LANG_FORTRAN ? "fortran"
	                                       : "unknown";
}

enum lwm2_clock_source {
	LWM2_CLOCK_NONE = 0,
	LWM2_CLOCK_TSC = 1,       /* invariant TSC, calibrated against CLOCK_MONOTONIC */
	LWM2_CLOCK_MONOTONIC = 2, /* clock_gettime(CLOCK_MONOTONIC) through the vDSO */
};

struct lwm2_file_header {
	char magic[8];          /* LWM2_FILE_MAGIC */
	uint32_t version;       /* LWM2_RECORD_VERSION */
	uint32_t header_size;   /* sizeof(struct lwm2_file_header) */
	uint32_t slot_capacity; /* bytes per slot; slot i starts at header_size + i * capacity */
	uint32_t nslots;        /* 2 */
	uint32_t reserved[10];
};

/* One time slice of one process: the counters that changed in it. */
struct lwm2_slice {
	uint64_t counters[LWM2_NCOUNTERS];
};

struct lwm2_rank_record {
	char magic[8];        /* LWM2_RECORD_MAGIC */
	uint32_t version;     /* LWM2_RECORD_VERSION */
	uint32_t record_size; /* sizeof(struct lwm2_rank_record) */
	uint32_t ncounters;   /* counters in the record and in each slice (LWM2_NCOUNTERS) */
	uint32_t nearmarks;   /* LWM2_NEARMARKS when written */
	uint32_t total_size;  /* record_size + nslices * ncounters * 8 */
	uint32_t checksum;    /* lwm2_checksum over total_size bytes, this field as 0 */
	uint64_t generation;  /* higher is newer; 0 means never written */

	uint32_t flags;   /* enum lwm2_record_flag */
	uint32_t missing; /* bit per enum lwm2_group: not measured */
	char missing_reason[LWM2_NGROUPS][LWM2_REASON_LEN];

	/* identity, from the environment the SPANK plugin sets */
	uint64_t job_id;       /* 0 outside Slurm */
	uint32_t step_id;      /* Slurm's step id (batch, extern: their special values) */
	int32_t task_id;       /* SLURM_PROCID, -1 outside a task */
	int32_t local_task_id; /* SLURM_LOCALID, -1 if unknown */
	int32_t node_id;       /* SLURM_NODEID, -1 if unknown */
	int32_t mpi_rank;      /* from MPI_Comm_rank(MPI_COMM_WORLD), -1 without MPI */
	int32_t mpi_size;
	int32_t mpi_thread_provided;
	int32_t pid;
	int32_t ppid;
	uint32_t runtimes; /* enum lwm2_runtime */
	char hostname[64];
	char executable[256];
	char mpi_library[128]; /* MPI_Get_library_version, first line */

	/* times: CLOCK_REALTIME in ns since the epoch */
	int64_t start_ns;
	int64_t end_ns;      /* last update while incomplete */
	int32_t exit_status; /* valid unless LWM2_F_SIGNALED or LWM2_F_INCOMPLETE */
	int32_t term_signal;

	/* getrusage(RUSAGE_SELF) at the last update */
	uint64_t utime_us;
	uint64_t stime_us;
	uint64_t maxrss_kb;
	uint64_t minflt;
	uint64_t majflt;
	uint64_t nvcsw;
	uint64_t nivcsw;

	/* the clock used to time wrappers */
	uint32_t clock_source;  /* enum lwm2_clock_source */
	uint32_t clock_cost_ps; /* measured cost of one clock read, picoseconds */

	/* threads and sampling (whole run only, as the seed specifies) */
	uint32_t threads_total;    /* threads ever seen, the main thread included */
	uint32_t threads_max;      /* most threads alive at once */
	uint32_t sample_period_us; /* CPU-time period per thread; 0: sampling off */
	int32_t sample_signal;
	uint64_t samples[LWM2_NEARMARKS];
	uint64_t samples_main; /* samples taken on the main thread */

	/* time slices: slice i covers [(first_slice + i) * L, (first_slice + i + 1) * L) */
	uint32_t slice_length_s; /* L, seconds (grows when coarsened) */
	uint32_t nslices;
	uint64_t first_slice;

	/* whole run; on disk ncounters of them, and every field below is found
	 * after them (a record of another build may carry more or fewer) */
	uint64_t counters[LWM2_NCOUNTERS];

	/* the main program's language, told from the executable (enum
	 * lwm2_language); the runtimes above are the libraries it loaded */
	uint32_t language;
	uint32_t reserved_lang;

	/* ---- version 2: the application's identity (preload/identity.c),
	 * taken when the record is written, never at start-up ---- */
	uint32_t identity_flags;                  /* enum lwm2_identity_flag */
	uint32_t build_id_len;                    /* bytes of build_id used; 0: none found */
	uint8_t build_id[LWM2_BUILD_ID_MAX];      /* NT_GNU_BUILD_ID of the main program */
	char runtime_libs[LWM2_RUNTIME_LIBS_LEN]; /* e.g. "gomp.1 gfortran.5 stdc++.6" */
	int32_t cuda_runtime_version; /* cudaRuntimeGetVersion (12020 is 12.2); 0: none */
	/* launch shape, from Slurm's variables (numbers only) */
	int32_t launch_ntasks;        /* SLURM_STEP_NUM_TASKS or SLURM_NTASKS; -1 unknown */
	int32_t launch_nnodes;        /* SLURM_STEP_NUM_NODES or SLURM_JOB_NUM_NODES */
	int32_t launch_cpus_per_task; /* SLURM_CPUS_PER_TASK */
	int32_t launch_omp_threads;   /* OMP_NUM_THREADS (its first number) */
	uint32_t reserved_v2[7];

	/* ---- version 3: the container the process ran in, from the
	 * environment at start-up (preload/identity.c); both empty: not in a
	 * container, or not known (a record of version 1 or 2) ---- */
	char container_runtime[LWM2_CONTAINER_RUNTIME_LEN];
	char container_image[LWM2_CONTAINER_IMAGE_LEN];
	/* ---- version 3: the application's view of its own counters
	 * (include/lwm2.h, preload/view.c): the queries the process made
	 * (each one's end, lwm2_view_read_self op 2) and their wall time, op 1
	 * to op 2, on the core's clock; zero: none made, or not known (a
	 * record of version 1 or 2) ---- */
	uint32_t view_queries;
	uint32_t reserved_v3; /* zero */
	uint64_t view_ns;
	/* ---- version 4: the event each hardware counter role was counted
	 * with (preload/papi.c), so that no digest labels a role with what it
	 * usually counts when LWM2_EVENTS or the processor put something else
	 * there; empty: no counters, or not known (a record of versions 1 to
	 * 3) ---- */
	char hwc_events[LWM2_HWC_EVENTS_LEN];
	/* ---- version 5: the program's named regions (preload/region.c),
	 * the regions_n busiest by time; the rest, and any name beyond what
	 * the process keeps apart, folded into regions_other_*; all zero: no
	 * region, or not known (a record of versions 1 to 4) ---- */
	uint32_t regions_n;      /* entries used in regions[] */
	uint32_t regions_folded; /* names folded into the other entry */
	uint64_t regions_other_calls;
	uint64_t regions_other_ns;
	struct lwm2_region_entry regions[LWM2_REGIONS_MAX];
	/* ---- version 5: the process's threads (threads as a scope,
	 * preload/thread.c), the main thread first, then the busiest by CPU
	 * time; threads_folded others' CPU time in threads_other_cpu_ns ---- */
	uint32_t threads_n;
	uint32_t threads_folded;
	uint64_t threads_other_cpu_ns;
	struct lwm2_thread_entry threads[LWM2_THREADS_MAX];
	/* followed by nslices struct lwm2_slice */
};

/* A record on disk: the head (every field before the counters, the same in
 * every version and build), ncounters counters, the tail (every field after
 * them: it grows with the version), then the slices of ncounters each. */
#define LWM2_RECORD_HEAD offsetof(struct lwm2_rank_record, counters)
/* The tail of each version: version 1 ends before identity_flags, version
 * 2 before the container, version 3 with view_ns, version 4 with
 * hwc_events, version 5 (this one) with the named regions and the
 * threads. */
#define LWM2_RECORD_TAIL_V1                                                                        \
	(offsetof(struct lwm2_rank_record, identity_flags) -                                       \
	 offsetof(struct lwm2_rank_record, language))
#define LWM2_RECORD_TAIL_V2                                                                        \
	(offsetof(struct lwm2_rank_record, container_runtime) -                                    \
	 offsetof(struct lwm2_rank_record, language))
#define LWM2_RECORD_TAIL_V3                                                                        \
	(offsetof(struct lwm2_rank_record, hwc_events) -                                           \
	 offsetof(struct lwm2_rank_record, language))
#define LWM2_RECORD_TAIL_V4                                                                        \
	(offsetof(struct lwm2_rank_record, regions_n) - offsetof(struct lwm2_rank_record, language))
#define LWM2_RECORD_TAIL                                                                           \
	(sizeof(struct lwm2_rank_record) - offsetof(struct lwm2_rank_record, language))
/* The largest tail a newer version's record may have: what is beyond this
 * version's is skipped. */
#define LWM2_RECORD_TAIL_LIMIT 65536u
/* The size of a version 1 and a version 2 record as they were written:
 * with the 50 counters those versions had. */
#define LWM2_RECORD_V1_SIZE (LWM2_RECORD_HEAD + 8 * LWM2_NCOUNTERS_V3 + LWM2_RECORD_TAIL_V1)
#define LWM2_RECORD_V2_SIZE (LWM2_RECORD_HEAD + 8 * LWM2_NCOUNTERS_V3 + LWM2_RECORD_TAIL_V2)

/* Whether r, a valid record, is in this build's layout (this version, this
 * build's counters), that is, readable as the struct without
 * lwm2_record_upconvert. */
static inline int lwm2_record_native(const struct lwm2_rank_record *r)
{
	return r->version == LWM2_RECORD_VERSION && r->ncounters == LWM2_NCOUNTERS &&
	       r->record_size == sizeof(struct lwm2_rank_record);
}

enum lwm2_identity_flag {
	LWM2_ID_DONE = 1u << 0, /* the identity was taken (else the fields are empty) */
};

static inline const struct lwm2_slice *lwm2_record_slices(const struct lwm2_rank_record *r)
{
	return (const struct lwm2_slice *)(const void *)(r + 1);
}

/* Bytes a slot needs for max_slices slices. */
static inline size_t lwm2_slot_capacity(uint32_t max_slices)
{
	size_t n = sizeof(struct lwm2_rank_record) + (size_t)max_slices * sizeof(struct lwm2_slice);
	return (n + 4095) & ~(size_t)4095;
}

/* Names and units by index, for JSON and text output. */
extern const char *const lwm2_counter_names[LWM2_NCOUNTERS];
extern const char *const lwm2_counter_units[LWM2_NCOUNTERS];
extern const char *const lwm2_counter_descriptions[LWM2_NCOUNTERS];
extern const char *const lwm2_earmark_names[LWM2_NEARMARKS];
extern const char *const lwm2_thread_counter_names[LWM2_THREAD_NCOUNTERS];
extern const char *const lwm2_group_names[LWM2_NGROUPS];

/* Fill a file header for slots of slot_capacity bytes. */
void lwm2_file_header_init(struct lwm2_file_header *h, uint32_t slot_capacity);

/*
 * Make r a valid record of r->nslices slices: set magic, version, layout
 * sizes and total_size, then the checksum.  The caller sets generation
 * (nonzero, higher than the other slot's) before sealing.  Signal-safe.
 */
void lwm2_record_seal(struct lwm2_rank_record *r);

/* CRC-32C of len bytes; signal-safe, no allocation. */
uint32_t lwm2_checksum(const void *data, size_t len);
/* The same CRC by table only, whatever the CPU has: the path of CPUs
 * without SSE 4.2, kept testable on those with it. */
uint32_t lwm2_checksum_portable(const void *data, size_t len);

/* Checksum of a slot as stored: over total_size bytes with the checksum
 * field taken as zero. */
uint32_t lwm2_record_checksum(const struct lwm2_rank_record *r);

/*
 * Validate one slot of at most avail bytes.  Returns 0 when it is a complete,
 * consistent record of this version; -1 otherwise with a reason in err.
 */
int lwm2_record_validate(const void *slot, size_t avail, char *err, size_t errlen);

/*
 * Pick the newest valid slot of a whole rank record file held in memory.
 * Returns a pointer into buf, or NULL with the reason in err.  The slot
 * may be of another version or carry another number of counters: readers
 * that use fields beyond the head (LWM2_RECORD_HEAD) bring a record that
 * is not lwm2_record_native to this layout first with
 * lwm2_record_upconvert.
 */
const struct lwm2_rank_record *lwm2_record_pick(const void *buf, size_t len, char *err,
                                                size_t errlen);

/*
 * A malloc'd copy of a valid record (any version, any number of counters)
 * in this build's layout: the fields a version 1 record lacks are zero
 * (identity_flags without LWM2_ID_DONE says "not taken"), the launch
 * shape -1; those a version 2 record lacks (the container, the view
 * queries) empty or zero; fields of a newer version skipped; the slices
 * follow.  Counters: those the record carries and this build knows are
 * copied, those it carries beyond this build's are skipped, and the
 * copy's ncounters is the number it had of this build's, so that counter
 * ids from ncounters on read as "not measured" (zero in the copy).  The
 * copy's checksum is set again; it is a slot of this layout (it passes
 * lwm2_record_validate) when its ncounters is LWM2_NCOUNTERS.  NULL with
 * errno on failure.
 */
struct lwm2_rank_record *lwm2_record_upconvert(const struct lwm2_rank_record *r);

/*
 * Set r's container from a value of LWM2_CONTAINER, "RUNTIME:IMAGE",
 * split at the first ':' (an image may hold more: podman's
 * "docker.io/library/debian:11").  Any bytes, any length: each part is
 * cut to its field (an image at a UTF-8 character's start, so that no
 * half character is left), both terminated.  A value without ':' is a
 * runtime without a known image; NULL or "" leaves both empty.  No
 * allocation, no system call: the library calls it at every start.
 */
void lwm2_record_set_container(struct lwm2_rank_record *r, const char *value);

/*
 * Read a rank record file safely (it was written by a user's process):
 * O_NOFOLLOW, regular file only, at most LWM2_RECORD_FILE_MAX bytes, every
 * field validated.  On success *out is a malloc'd copy of the newest valid
 * record, in this version's layout (free() it), and 0 is returned; on failure -1 with errno set and
 * the reason in err.  dirfd may be AT_FDCWD.
 */
int lwm2_record_read_file(int dirfd, const char *path, struct lwm2_rank_record **out, char *err,
                          size_t errlen);

/*
 * The step's summary of short processes: one file per step directory,
 * LWM2_SUMMARY_FILE, of a fixed size whatever the number of processes.
 *
 * A process that ends before it has lived LWM2_SHORT_MS (and is not a task
 * of the step, an MPI rank nor multithreaded) leaves no rank record of its
 * own: at its end it maps this file and adds itself, with atomic adds, to
 * the slot of its executable (by basename), and its slices' counters to
 * the summary's slices of the same times (a process of another build,
 * of other counters, finds a summary of another size or header: it keeps
 * a record of its own, lwm2_record.h).  A step that runs 100,000 short
 * commands thus leaves one file of 560 KiB, and every process is still
 * counted: processes, images, CPU time, I/O counters, exit status class,
 * and when its I/O happened (the node series, hence the job's space-time
 * grid and the export, see them).  Slots are claimed by a compare-and-swap
 * of the name's hash; the last slot takes every executable once the table
 * is full.  Slices are claimed the same way by their key (index and
 * length, lwm2_summary_slice_key); a process that finds no free slice for
 * one of its own (a step longer than LWM2_SUMMARY_SLICES slices) writes a
 * record file of its own instead, so nothing is ever lost.  The file is
 * the user's: the reader trusts no value (see lwm2_summary_check).
 *
 * Layout: [header] [LWM2_SUMMARY_SLOTS struct lwm2_summary_exe]
 *         [LWM2_SUMMARY_SLICES struct lwm2_summary_slice]
 */
#define LWM2_SUMMARY_FILE    "procs.lwm2sum"
#define LWM2_SUMMARY_MAGIC   "LWM2SUMT"
#define LWM2_SUMMARY_VERSION 2
#define LWM2_SUMMARY_SLOTS   256
#define LWM2_SUMMARY_NAME    64
#define LWM2_SUMMARY_TASKS   1024 /* task ids seen, as a bitmap */
/* Slices of the step's short processes: 1024 of the default 60 s are 17
 * hours of a step (only slices in which a short process counted something
 * take one); 408 KiB. */
#define LWM2_SUMMARY_SLICES 1024

struct lwm2_summary_exe {
	uint64_t key; /* hash of name, never 0; 0: the slot is free */
	char name[LWM2_SUMMARY_NAME];
	uint64_t processes;   /* images that ended the process (not by exec) */
	uint64_t images;      /* every image, those replaced by exec included */
	uint64_t exit_ok;     /* exit status 0 */
	uint64_t exit_failed; /* exit status not 0 */
	uint64_t signaled;    /* ended by a signal */
	uint64_t utime_us;    /* of processes only: an exec'd image's successor has it */
	uint64_t stime_us;
	uint64_t wall_ns;
	uint64_t maxrss_kb; /* largest */
	uint64_t minflt;
	uint64_t majflt;
	uint64_t mpi; /* reserved: MPI ranks keep records of their own */
	uint64_t samples[LWM2_NEARMARKS];
	uint64_t counters[LWM2_NCOUNTERS];
};

/* One time slice of the step's short processes: slice `index` of
 * `length` s, as in a rank record (first_slice + i, slice_length_s). */
struct lwm2_summary_slice {
	uint64_t key; /* lwm2_summary_slice_key(index, length); 0: free */
	struct lwm2_slice s;
};

/* Lengths below 2^22 s; the index in the 42 bits above (any real clock). */
#define LWM2_SUMMARY_LEN_BITS 22
static inline uint64_t lwm2_summary_slice_key(uint64_t index, uint32_t length_s)
{
	return index << LWM2_SUMMARY_LEN_BITS | length_s;
}

struct lwm2_summary_header {
	char magic[8];        /* LWM2_SUMMARY_MAGIC */
	uint32_t version;     /* LWM2_SUMMARY_VERSION */
	uint32_t header_size; /* sizeof(struct lwm2_summary_header) */
	uint32_t slot_size;   /* sizeof(struct lwm2_summary_exe) */
	uint32_t nslots;      /* LWM2_SUMMARY_SLOTS */
	uint32_t ncounters;   /* LWM2_NCOUNTERS */
	uint32_t nearmarks;   /* LWM2_NEARMARKS */
	uint64_t job_id;
	uint32_t step_id;
	uint32_t reserved0;
	int64_t first_start_ns; /* earliest start (0: none yet) */
	int64_t last_end_ns;    /* latest end */
	uint64_t task_bits[LWM2_SUMMARY_TASKS / 64];
	uint32_t nslices;    /* LWM2_SUMMARY_SLICES */
	uint32_t slice_size; /* sizeof(struct lwm2_summary_slice) */
	uint64_t reserved[7];
};

/* Bytes of the summary file. */
#define LWM2_SUMMARY_SIZE                                                                          \
	(sizeof(struct lwm2_summary_header) +                                                      \
	 LWM2_SUMMARY_SLOTS * sizeof(struct lwm2_summary_exe) +                                    \
	 LWM2_SUMMARY_SLICES * sizeof(struct lwm2_summary_slice))

static inline struct lwm2_summary_exe *lwm2_summary_exes(const struct lwm2_summary_header *h)
{
	return (struct lwm2_summary_exe *)(uintptr_t)(h + 1);
}

static inline struct lwm2_summary_slice *lwm2_summary_slices(const struct lwm2_summary_header *h)
{
	return (struct lwm2_summary_slice *)(uintptr_t)(lwm2_summary_exes(h) + LWM2_SUMMARY_SLOTS);
}

/* The slot key of an executable's basename (FNV-1a, never 0). */
static inline uint64_t lwm2_summary_key(const char *name)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < LWM2_SUMMARY_NAME - 1 && name[i]; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	return h ? h : 1;
}

/*
 * Check a summary file held in memory (len bytes): 0 when its header is
 * this version's, of any number of counters (ncounters, as a rank
 * record's: a node upgraded while the step ran leaves a summary of the
 * other build's counters), and len its size; -1 with the reason in err.
 * Slot values are taken as they are (sums of what the step's processes
 * added); names are made terminated by the reader.
 */
int lwm2_summary_check(const void *buf, size_t len, char *err, size_t errlen);
/* Bytes of a summary of ncounters counters (LWM2_SUMMARY_SIZE for this
 * build's). */
size_t lwm2_summary_size(uint32_t ncounters);
/* A malloc'd copy of a checked summary in this build's layout
 * (LWM2_SUMMARY_SIZE bytes): the counters it had and this build knows;
 * the copy's ncounters is their number, counters from there on were not
 * measured.  NULL on allocation failure. */
struct lwm2_summary_header *lwm2_summary_upconvert(const void *buf);

/*
 * The on-disk layout, pinned: the preload library of one installation
 * writes what the readers of another read (a node upgraded while a job
 * runs, records kept with --keep, the fuzz corpus).  A counter appended
 * to LWM2_LATER_COUNTERS changes none of these.  Any other change that
 * fails here changes the format: add the field at the end of the tail,
 * raise LWM2_RECORD_VERSION (or LWM2_SUMMARY_VERSION), teach the readers
 * the old layout (lwm2_record_upconvert), then update these numbers.
 */
#define LWM2_LAYOUT(cond) _Static_assert(cond, "on-disk layout changed: " #cond)
/* Counter ids are append-only: the 50 of version 3 keep their places
 * (test/evolve.c pins their names), later ones follow. */
LWM2_LAYOUT(LWM2_NCOUNTERS >= LWM2_NCOUNTERS_V3);
LWM2_LAYOUT(LWM2_NCOUNTERS <= LWM2_NCOUNTERS_LIMIT);
LWM2_LAYOUT(LWM2_C_hwc_llc_misses == LWM2_NCOUNTERS_V3 - 1);
LWM2_LAYOUT(LWM2_NEARMARKS == 4);
LWM2_LAYOUT(LWM2_NGROUPS == 5);
LWM2_LAYOUT(LWM2_REASON_LEN == 96);
LWM2_LAYOUT(sizeof(struct lwm2_file_header) == 64);
LWM2_LAYOUT(offsetof(struct lwm2_file_header, version) == 8);
LWM2_LAYOUT(offsetof(struct lwm2_file_header, header_size) == 12);
LWM2_LAYOUT(offsetof(struct lwm2_file_header, slot_capacity) == 16);
LWM2_LAYOUT(offsetof(struct lwm2_file_header, nslots) == 20);
LWM2_LAYOUT(sizeof(struct lwm2_slice) == 8 * LWM2_NCOUNTERS);
/* The head: the fields every version has where version 1 put them. */
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, version) == 8);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, record_size) == 12);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, ncounters) == 16);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, total_size) == 24);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, checksum) == 28);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, generation) == 32);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, flags) == 40);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, job_id) == 528);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, hostname) == 576);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, start_ns) == 1024);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, utime_us) == 1048);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, samples) == 1128);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, slice_length_s) == 1168);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, nslices) == 1172);
LWM2_LAYOUT(offsetof(struct lwm2_rank_record, first_slice) == 1176);
LWM2_LAYOUT(LWM2_RECORD_HEAD == 1184);
/* The tail, from the end of the counters: version 1's. */
#define LWM2_TAIL_AT(field)                                                                        \
	(offsetof(struct lwm2_rank_record, field) - LWM2_RECORD_HEAD - 8 * LWM2_NCOUNTERS)
LWM2_LAYOUT(LWM2_TAIL_AT(language) == 0);
LWM2_LAYOUT(LWM2_RECORD_TAIL_V1 == 8);
LWM2_LAYOUT(LWM2_RECORD_V1_SIZE == 1592);
/* Version 2 adds the application's identity. */
LWM2_LAYOUT(LWM2_TAIL_AT(build_id) == 16);
LWM2_LAYOUT(LWM2_TAIL_AT(runtime_libs) == 48);
LWM2_LAYOUT(LWM2_TAIL_AT(cuda_runtime_version) == 144);
LWM2_LAYOUT(LWM2_TAIL_AT(launch_ntasks) == 148);
LWM2_LAYOUT(LWM2_RECORD_TAIL_V2 == 192);
LWM2_LAYOUT(LWM2_RECORD_V2_SIZE == 1776);
/* Version 3 adds the container and the view queries. */
LWM2_LAYOUT(LWM2_CONTAINER_RUNTIME_LEN == 16);
LWM2_LAYOUT(LWM2_CONTAINER_IMAGE_LEN == 176);
LWM2_LAYOUT(LWM2_TAIL_AT(container_image) == 208);
LWM2_LAYOUT(LWM2_TAIL_AT(view_queries) == 384);
LWM2_LAYOUT(LWM2_TAIL_AT(view_ns) == 392);
LWM2_LAYOUT(LWM2_RECORD_TAIL_V3 == 400);
/* Version 4 adds the counters' events. */
LWM2_LAYOUT(LWM2_HWC_EVENTS_LEN == 256);
LWM2_LAYOUT(LWM2_TAIL_AT(hwc_events) == 400);
LWM2_LAYOUT(LWM2_RECORD_TAIL_V4 == 656);
/* Version 5 adds the named regions, */
LWM2_LAYOUT(sizeof(struct lwm2_region_entry) == 64);
LWM2_LAYOUT(LWM2_TAIL_AT(regions_other_ns) == 672);
LWM2_LAYOUT(LWM2_TAIL_AT(regions) == 680);
/* and the threads */
LWM2_LAYOUT(LWM2_NEARMARKS == 4 && LWM2_THREAD_NCOUNTERS == 5);
LWM2_LAYOUT(sizeof(struct lwm2_thread_entry) == 88);
LWM2_LAYOUT(LWM2_TAIL_AT(threads_n) == 680 + 64 * LWM2_REGIONS_MAX);
LWM2_LAYOUT(LWM2_TAIL_AT(threads) == 696 + 64 * LWM2_REGIONS_MAX);
LWM2_LAYOUT(LWM2_RECORD_TAIL == 696 + 64 * LWM2_REGIONS_MAX + 88 * LWM2_THREADS_MAX);
LWM2_LAYOUT(sizeof(struct lwm2_rank_record) == LWM2_RECORD_HEAD + 8 * LWM2_NCOUNTERS + 696 +
                                                   64 * LWM2_REGIONS_MAX + 88 * LWM2_THREADS_MAX);
#undef LWM2_TAIL_AT
LWM2_LAYOUT(sizeof(struct lwm2_summary_header) == 256);
LWM2_LAYOUT(offsetof(struct lwm2_summary_header, version) == 8);
LWM2_LAYOUT(offsetof(struct lwm2_summary_header, ncounters) == 24);
LWM2_LAYOUT(offsetof(struct lwm2_summary_header, job_id) == 32);
LWM2_LAYOUT(offsetof(struct lwm2_summary_header, task_bits) == 64);
LWM2_LAYOUT(offsetof(struct lwm2_summary_header, nslices) == 192);
LWM2_LAYOUT(offsetof(struct lwm2_summary_exe, counters) == 200);
LWM2_LAYOUT(sizeof(struct lwm2_summary_exe) == 200 + 8 * LWM2_NCOUNTERS);
LWM2_LAYOUT(sizeof(struct lwm2_summary_slice) == 8 + 8 * LWM2_NCOUNTERS);
#undef LWM2_LAYOUT

#endif /* LWM2_RECORD_H */
