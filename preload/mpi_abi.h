/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The MPI module: internal contract between the generated wrappers
 * (mpi_wrappers.c), the hand-written special calls (mpi_calls.c) and the
 * run time (mpi_abi.c).
 *
 * Why one ABI-neutral source with a run-time descriptor, and not the wrapper
 * source compiled twice (once per mpi.h) behind a dispatcher:
 *  - a wrapper never interprets a handle: it forwards it to the next
 *    definition and hands it to PMPI_Type_size / PMPI_Comm_size.  Handles
 *    travel here as uintptr_t; an Open MPI handle is a pointer, an MPICH
 *    handle an int, and both occupy one integer register or one 8-byte stack
 *    slot in the x86_64 SysV and AAPCS64 calling conventions, so forwarding
 *    the register hands the callee exactly what the application passed;
 *  - what does differ between the ABIs is data: a few sentinel values
 *    (MPI_IN_PLACE, MPI_STATUS_IGNORE, MPI_REQUEST_NULL, MPI_ROOT,
 *    MPI_PROC_NULL, topology kinds), the width of handle arrays (requests,
 *    datatypes of the w variants), and where a status keeps its byte count.
 *    One descriptor holds them; a wrapper reads two or three fields of it;
 *  - a dispatcher for two compiled copies needs one exported entry per
 *    function that jumps into the right copy with the arguments untouched,
 *    which C cannot express (it needs an assembly trampoline per
 *    architecture), and doubles the code that must stay in step.  A third
 *    ABI family (the MPI-5 standard ABI) is one more descriptor here.
 * The one assumption is the register convention above; lwm2 targets Linux
 * on x86_64 and aarch64, where it holds.  An MPICH handle may arrive with
 * undefined upper register bits, so it is cut to 32 bits before it is
 * compared (lwm2_mpi_hv).
 *
 * Every function is wrapped twice, MPI_x and PMPI_x, over one body.  Each
 * calls the next definition of its own name (dlsym RTLD_NEXT), so another
 * PMPI tool preloaded after liblwm2 still sees the call, and one preloaded
 * before it (whose MPI_x calls PMPI_x) is still measured.  The thread's
 * earmark, "mpi" while a measured MPI call runs, counts only the outermost
 * MPI call of a thread: the second layer of such a chain, MPI calls that
 * an MPI call makes itself (ROMIO's collectives inside
 * MPI_File_write_all), and the Fortran bindings, which
 * call MPI_x (MPICH 4.0 libmpichfort) or PMPI_x (Open MPI 4.1
 * libmpi_mpifh, which the mpi_f08 module calls through ompi_*_f) -- all
 * counted exactly once.
 */
#ifndef LWM2_MPI_ABI_H
#define LWM2_MPI_ABI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lwm2_core.h"

typedef uintptr_t lwm2_mpi_h; /* any MPI handle, as the register carried it */
typedef int64_t lwm2_mpi_cnt; /* MPI_Count, MPI_Offset, MPI_Aint: 8 bytes in both ABIs */

enum lwm2_mpi_kind { LWM2_MPI_OMPI = 1, LWM2_MPI_MPICH = 2 };

/* Room for one status of any supported ABI (Open MPI 24 bytes, MPICH 20). */
#define LWM2_MPI_STATUS_MAX 32
/* Completion calls with at most this many requests need no allocation. */
#define LWM2_MPI_STACK_REQS 64

struct lwm2_mpi_abi {
	enum lwm2_mpi_kind kind;
	uint32_t runtime;        /* LWM2_RT_MPI_OMPI or LWM2_RT_MPI_MPICH */
	unsigned handle_size;    /* bytes of one handle in an array */
	unsigned status_size;    /* bytes of one MPI_Status */
	uintptr_t in_place;      /* MPI_IN_PLACE */
	uintptr_t status_ignore; /* MPI_STATUS_IGNORE == MPI_STATUSES_IGNORE */
	uintptr_t request_null;
	uintptr_t comm_world;
	uintptr_t byte_type; /* MPI_BYTE */
	int root;            /* MPI_ROOT */
	int proc_null;       /* MPI_PROC_NULL */
	int undefined;       /* MPI_UNDEFINED */
	int topo_cart, topo_graph, topo_dist_graph;
};

/* The ABI of the loaded MPI; NULL until the first MPI call found one. */
extern _Atomic(const struct lwm2_mpi_abi *) lwm2_mpi_abi;
const struct lwm2_mpi_abi *lwm2_mpi_abi_detect(void);

/* Counter classes. */
enum lwm2_mpi_class {
	LWM2_MPI_P2P,
	LWM2_MPI_COLL,
	LWM2_MPI_IO_READ,
	LWM2_MPI_IO_WRITE,
	LWM2_MPI_IO_META,
	LWM2_MPI_OTHER,
	LWM2_MPI_INIT, /* MPI_Init, MPI_Init_thread, MPI_Finalize */
	LWM2_MPI_NCLASSES
};

struct lwm2_mpi_ctr {
	enum lwm2_counter calls, sent, recv, ns; /* LWM2_NCOUNTERS: none */
};

/* Here, not in a .c file, so a wrapper's constant class folds into
 * constant counter offsets and the "no such counter" tests disappear. */
#define C(x) LWM2_C_##x
static const struct lwm2_mpi_ctr lwm2_mpi_ctr[LWM2_MPI_NCLASSES] = {
    [LWM2_MPI_P2P] = {C(mpi_p2p_calls), C(mpi_p2p_bytes_sent), C(mpi_p2p_bytes_recv),
                      C(mpi_p2p_ns)},
    [LWM2_MPI_COLL] = {C(mpi_coll_calls), C(mpi_coll_bytes_sent), C(mpi_coll_bytes_recv),
                       C(mpi_coll_ns)},
    [LWM2_MPI_IO_READ] = {C(mpiio_read_calls), LWM2_NCOUNTERS, C(mpiio_read_bytes),
                          C(mpiio_read_ns)},
    [LWM2_MPI_IO_WRITE] = {C(mpiio_write_calls), C(mpiio_write_bytes), LWM2_NCOUNTERS,
                           C(mpiio_write_ns)},
    [LWM2_MPI_IO_META] = {C(mpiio_meta_calls), LWM2_NCOUNTERS, LWM2_NCOUNTERS, C(mpiio_meta_ns)},
    [LWM2_MPI_OTHER] = {C(mpi_other_calls), LWM2_NCOUNTERS, LWM2_NCOUNTERS, C(mpi_other_ns)},
    [LWM2_MPI_INIT] = {C(mpi_init_calls), LWM2_NCOUNTERS, LWM2_NCOUNTERS, C(mpi_init_ns)},
};
#undef C

/*
 * The helpers of the wrappers' hot path are always inlined: mpi_wrappers.c
 * is large enough that the compiler's inlining budget otherwise leaves
 * them as calls, each with its own frame, and a wrapper then costs
 * several calls more than its body.
 */
#define LWM2_MPI_HOT static inline __attribute__((always_inline))

/*
 * Next definitions.  slot[0] caches the next MPI_<name>, slot[1] the next
 * PMPI_<name>; dlsym runs once per symbol and layer (racing threads store
 * the same value).  NULL when the loaded MPI does not define it.
 */
void *lwm2_mpi_resolve(_Atomic(void *) *slot, int pmpi, const char *name);

LWM2_MPI_HOT void *lwm2_mpi_next(_Atomic(void *) *slot, int pmpi, const char *name)
{
	/* Acquire, which on x86_64 is the plain load a relaxed one is. */
	void *f = atomic_load_explicit(slot, memory_order_acquire);

	if (LWM2_UNLIKELY(!f))
		f = lwm2_mpi_resolve(slot, pmpi, name);
	return f;
}

/* The return value when no next definition exists (MPI_ERR_INTERN in
 * both ABIs, 16); says so once on stderr. */
int lwm2_mpi_unresolved(const char *name);

/* Internal calls into the loaded MPI (the PMPI layer, never our wrappers). */
struct lwm2_mpi_real {
	int (*type_size)(lwm2_mpi_h, int *);
	int (*comm_size)(lwm2_mpi_h, int *);
	int (*comm_rank)(lwm2_mpi_h, int *);
	int (*comm_remote_size)(lwm2_mpi_h, int *);
	int (*comm_test_inter)(lwm2_mpi_h, int *);
	int (*topo_test)(lwm2_mpi_h, int *);
	int (*cartdim_get)(lwm2_mpi_h, int *);
	int (*graph_neighbors_count)(lwm2_mpi_h, int, int *);
	int (*dist_graph_neighbors_count)(lwm2_mpi_h, int *, int *, int *);
	int (*query_thread)(int *);
	int (*get_library_version)(char *, int *);
};
extern struct lwm2_mpi_real lwm2_mpi_real;

static inline uintptr_t lwm2_mpi_hv(const struct lwm2_mpi_abi *a, lwm2_mpi_h h)
{
	return a->handle_size == 4 ? (uint32_t)h : h;
}

/* One measured call in flight. */
struct lwm2_mpi_call {
	struct lwm2_thread *t;
	const struct lwm2_mpi_abi *abi;
	uint64_t t0;
	uint32_t mark;
};

/*
 * The thread's earmark is the depth flag: it reads "mpi" exactly while a
 * measured MPI call runs on the thread (nothing else sets it, and the I/O
 * and CUDA calls an MPI call makes restore it when they return), so a
 * nested MPI call sees it and is not counted again.  That is one load
 * from the line the counters are on, instead of a thread-local flag of
 * its own to test, set and clear.
 */
LWM2_MPI_HOT bool lwm2_mpi_begin(struct lwm2_mpi_call *c)
{
	c->t = lwm2_enter();
	if (LWM2_UNLIKELY(!c->t))
		return false;
	c->mark = atomic_load_explicit(&c->t->earmark, memory_order_relaxed);
	if (c->mark == LWM2_EARMARK_mpi)
		return false;
	c->abi = atomic_load_explicit(&lwm2_mpi_abi, memory_order_acquire);
	if (LWM2_UNLIKELY(!c->abi) && !(c->abi = lwm2_mpi_abi_detect()))
		return false;
	atomic_store_explicit(&c->t->earmark, LWM2_EARMARK_mpi, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	c->t0 = lwm2_ticks();
	return true;
}

/* Ends the timed part; returns its ticks. */
LWM2_MPI_HOT uint64_t lwm2_mpi_stop(struct lwm2_mpi_call *c)
{
	uint64_t t1 = lwm2_ticks();

	lwm2_earmark_leave(c->t, c->mark);
	return t1 - c->t0;
}

LWM2_MPI_HOT void lwm2_mpi_count_n(struct lwm2_thread *t, enum lwm2_mpi_class k, uint64_t calls,
                                   uint64_t ticks, uint64_t sent, uint64_t recv)
{
	_Atomic uint64_t *b = lwm2_buffer(t);
	const struct lwm2_mpi_ctr *m = &lwm2_mpi_ctr[k];

	if (calls)
		lwm2_add(b, m->calls, calls);
	lwm2_add(b, m->ns, ticks);
	if (sent && m->sent != LWM2_NCOUNTERS)
		lwm2_add(b, m->sent, sent);
	if (recv && m->recv != LWM2_NCOUNTERS)
		lwm2_add(b, m->recv, recv);
}

LWM2_MPI_HOT void lwm2_mpi_count(struct lwm2_mpi_call *c, enum lwm2_mpi_class k, uint64_t ticks,
                                 uint64_t sent, uint64_t recv)
{
	lwm2_mpi_count_n(c->t, k, 1, ticks, sent, recv);
}

/* Point-to-point messages: one per send as it is posted or started, one
 * per receive as it completes (what the average message size divides by). */
LWM2_MPI_HOT void lwm2_mpi_msgs(struct lwm2_thread *t, uint64_t sent, uint64_t recv)
{
	_Atomic uint64_t *b = lwm2_buffer(t);

	if (sent)
		lwm2_add(b, LWM2_C_mpi_p2p_msgs_sent, sent);
	if (recv)
		lwm2_add(b, LWM2_C_mpi_p2p_msgs_recv, recv);
}

/* Bytes in a status (the element count in bytes both ABIs keep there). */
LWM2_MPI_HOT uint64_t lwm2_mpi_status_bytes(const struct lwm2_mpi_abi *a, const void *st)
{
	if (a->kind == LWM2_MPI_OMPI) {
		uint64_t u; /* size_t _ucount after four ints */

		memcpy(&u, (const char *)st + 16, sizeof u);
		return u;
	}
	uint32_t lo, hi; /* count_lo, count_hi_and_cancelled (cancel flag in bit 0) */

	memcpy(&lo, st, sizeof lo);
	memcpy(&hi, (const char *)st + 4, sizeof hi);
	return ((uint64_t)(hi >> 1) << 32) + lo;
}

/* The status the call gets: the caller's, or ours when the caller ignores it. */
LWM2_MPI_HOT void *lwm2_mpi_status(const struct lwm2_mpi_call *c, void *status, void *own)
{
	return (uintptr_t)status == c->abi->status_ignore ? own : status;
}

static inline bool lwm2_mpi_in_place(const struct lwm2_mpi_call *c, const void *buf)
{
	return (uintptr_t)buf == c->abi->in_place;
}

/*
 * Sizes of Open MPI's predefined datatypes, looked up once after
 * MPI_Init (lwm2_mpi_identity), keyed by handle: a direct-mapped table,
 * so a lookup is one multiply, one load and one compare.  Only predefined
 * types go in: they are never freed, so an entry never goes stale, while
 * a derived type's handle can be freed and come back as another type.  A
 * type that is not here (derived, or predefined but sharing its slot with
 * a more common one) is asked of PMPI_Type_size.  An entry's handle is
 * stored (release) after its size, and loaded with acquire (a plain move
 * on x86_64), so another thread never pairs a handle with a stale size.
 */
#define LWM2_MPI_TCACHE 128
struct lwm2_mpi_tcache {
	_Atomic uintptr_t handle; /* 0: empty */
	_Atomic uint64_t size;
};
extern struct lwm2_mpi_tcache lwm2_mpi_tcache[LWM2_MPI_TCACHE];

static inline unsigned lwm2_mpi_tcache_slot(uintptr_t h)
{
	return (unsigned)(((uint64_t)h * UINT64_C(0x9E3779B97F4A7C15)) >> 57); /* 7 bits */
}

/* Bytes of one datatype; MPICH's predefined types carry it in the handle,
 * Open MPI's are in the table above. */
LWM2_MPI_HOT uint64_t lwm2_mpi_tsize(const struct lwm2_mpi_abi *a, lwm2_mpi_h dt)
{
	const struct lwm2_mpi_tcache *e = &lwm2_mpi_tcache[lwm2_mpi_tcache_slot(dt)];
	int s = 0;

	if (a->kind == LWM2_MPI_MPICH) {
		uint32_t h = (uint32_t)dt;

		if ((h >> 30) == 1 && ((h >> 26) & 0xf) == 3) /* builtin kind, datatype object */
			return (h >> 8) & 0xff;
	} else if (LWM2_LIKELY(atomic_load_explicit(&e->handle, memory_order_acquire) == dt)) {
		return atomic_load_explicit(&e->size, memory_order_relaxed);
	}
	if (lwm2_mpi_real.type_size(dt, &s) != 0 || s < 0)
		return 0;
	return (uint64_t)s;
}

LWM2_MPI_HOT uint64_t lwm2_mpi_bytes(const struct lwm2_mpi_call *c, lwm2_mpi_cnt count,
                                     lwm2_mpi_h dt)
{
	return count > 0 ? (uint64_t)count * lwm2_mpi_tsize(c->abi, dt) : 0;
}

/* A handle from an array of handles (requests, datatypes). */
static inline uintptr_t lwm2_mpi_handle_at(const struct lwm2_mpi_abi *a, const void *arr, long i)
{
	if (a->handle_size == 4)
		return ((const uint32_t *)arr)[i];
	return (uintptr_t)((const uint64_t *)arr)[i];
}

/*
 * Request table: request handle -> class, for the completion calls.
 */
enum {
	LWM2_MPI_REQ_PERSISTENT = 1u << 0, /* survives completion; freed by MPI_Request_free */
	LWM2_MPI_REQ_STATUS = 1u << 1,     /* its bytes come from the status at completion */
	LWM2_MPI_REQ_SEND = 1u << 2,       /* a persistent send: each start sends one message */
};

struct lwm2_mpi_req {
	uint64_t word;       /* the table word found (handle and stamp), for removal */
	uint64_t sent, recv; /* bytes a persistent request moves per start */
	int slot;            /* -1: not tracked */
	uint8_t cls;
	uint8_t flags;
};

void lwm2_mpi_req_track(const struct lwm2_mpi_abi *a, const void *request, enum lwm2_mpi_class k,
                        unsigned flags, uint64_t sent, uint64_t recv);
/* Looks up handle h (already cut with lwm2_mpi_hv); slot -1 when unknown. */
void lwm2_mpi_req_find(uintptr_t h, struct lwm2_mpi_req *r);
/* Forgets a request found by lwm2_mpi_req_find, unless it was replaced since. */
void lwm2_mpi_req_drop(const struct lwm2_mpi_req *r);

/* Collective byte rules (mpi_bytes.c); counts arrays are int or, with wide,
 * MPI_Count. */
struct lwm2_mpi_sr {
	uint64_t sent, recv;
};

struct lwm2_mpi_sr lwm2_mpi_b_bcast(const struct lwm2_mpi_call *c, lwm2_mpi_cnt count,
                                    lwm2_mpi_h dt, int root, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_gather(const struct lwm2_mpi_call *c, const void *sbuf,
                                     lwm2_mpi_cnt sc, lwm2_mpi_h st, const void *rbuf,
                                     lwm2_mpi_cnt rc, lwm2_mpi_h rt, int root, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_gatherv(const struct lwm2_mpi_call *c, const void *sbuf,
                                      lwm2_mpi_cnt sc, lwm2_mpi_h st, const void *rbuf,
                                      const void *rcs, int wide, lwm2_mpi_h rt, int root,
                                      lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_scatter(const struct lwm2_mpi_call *c, const void *sbuf,
                                      lwm2_mpi_cnt sc, lwm2_mpi_h st, const void *rbuf,
                                      lwm2_mpi_cnt rc, lwm2_mpi_h rt, int root, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_scatterv(const struct lwm2_mpi_call *c, const void *sbuf,
                                       const void *scs, int wide, lwm2_mpi_h st, const void *rbuf,
                                       lwm2_mpi_cnt rc, lwm2_mpi_h rt, int root, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_allgather(const struct lwm2_mpi_call *c, const void *sbuf,
                                        lwm2_mpi_cnt sc, lwm2_mpi_h st, lwm2_mpi_cnt rc,
                                        lwm2_mpi_h rt, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_allgatherv(const struct lwm2_mpi_call *c, const void *sbuf,
                                         lwm2_mpi_cnt sc, lwm2_mpi_h st, const void *rcs, int wide,
                                         lwm2_mpi_h rt, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_alltoall(const struct lwm2_mpi_call *c, const void *sbuf,
                                       lwm2_mpi_cnt sc, lwm2_mpi_h st, lwm2_mpi_cnt rc,
                                       lwm2_mpi_h rt, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_alltoallv(const struct lwm2_mpi_call *c, const void *sbuf,
                                        const void *scs, lwm2_mpi_h st, const void *rcs, int wide,
                                        lwm2_mpi_h rt, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_alltoallw(const struct lwm2_mpi_call *c, const void *sbuf,
                                        const void *scs, const void *sts, const void *rcs, int wide,
                                        const void *rts, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_reduce(const struct lwm2_mpi_call *c, lwm2_mpi_cnt count,
                                     lwm2_mpi_h dt, int root, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_reduce_scatter(const struct lwm2_mpi_call *c, const void *rcs,
                                             int wide, lwm2_mpi_h dt, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_reduce_scatter_block(const struct lwm2_mpi_call *c, lwm2_mpi_cnt rc,
                                                   lwm2_mpi_h dt, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_exscan(const struct lwm2_mpi_call *c, lwm2_mpi_cnt count,
                                     lwm2_mpi_h dt, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_nbr(const struct lwm2_mpi_call *c, int alltoall, lwm2_mpi_cnt sc,
                                  lwm2_mpi_h st, lwm2_mpi_cnt rc, lwm2_mpi_h rt, lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_nbrv(const struct lwm2_mpi_call *c, lwm2_mpi_cnt sc, const void *scs,
                                   lwm2_mpi_h st, const void *rcs, int wide, lwm2_mpi_h rt,
                                   lwm2_mpi_h comm);
struct lwm2_mpi_sr lwm2_mpi_b_nbrw(const struct lwm2_mpi_call *c, const void *scs, const void *sts,
                                   const void *rcs, int wide, const void *rts, lwm2_mpi_h comm);

LWM2_MPI_HOT struct lwm2_mpi_sr lwm2_mpi_sr(uint64_t sent, uint64_t recv)
{
	struct lwm2_mpi_sr r = {sent, recv};

	return r;
}

/* As many bytes received as sent (Allreduce, Scan): one type size lookup. */
LWM2_MPI_HOT struct lwm2_mpi_sr lwm2_mpi_sr_same(uint64_t bytes)
{
	return lwm2_mpi_sr(bytes, bytes);
}

/* MPI_Init and MPI_Init_thread returned: record who this process is. */
void lwm2_mpi_identity(const struct lwm2_mpi_abi *a);

#endif /* LWM2_MPI_ABI_H */
