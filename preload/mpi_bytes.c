/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Bytes of the collective calls.
 *
 * A collective's bytes are those of its buffers as the call describes them:
 * "sent" is what the call reads from this process's send buffer, "received"
 * what it writes into its receive buffer (IPM's convention; a root's Bcast
 * counts its buffer once, not once per peer).  For the data-moving
 * collectives the sums over all ranks of sent and received are then equal.
 * With MPI_IN_PLACE the block that already is where it belongs moves
 * nowhere and is not counted; for reductions the receive buffer is input
 * and output, so both still count.  Buffers are never read: only counts,
 * datatype sizes (PMPI_Type_size) and communicator sizes.
 *
 *   t = type size, n = communicator size (intercommunicator: remote size),
 *   me = own rank, c = count, sc/rc = send/recv count (arrays: sc[i]/rc[i])
 *
 *   call                  sent                         received
 *   Barrier               0                            0
 *   Bcast                 root: c*t, else 0            root: 0, else c*t
 *   Gather                sc*t (root in place: 0)      root: n*rc*t (in place (n-1)*rc*t)
 *   Gatherv               sc*t (root in place: 0)      root: sum rc[i]*t (in place: i != me)
 *   Scatter               root: n*sc*t (in place n-1)  rc*t (root in place: 0)
 *   Scatterv              root: sum sc[i]*t (i != me   rc*t (root in place: 0)
 *                         in place)
 *   Allgather             sc*t (in place: 0)           n*rc*t (in place: (n-1)*rc*t)
 *   Allgatherv            sc*t (in place: 0)           sum rc[i]*t (in place: i != me)
 *   Alltoall              n*sc*t                       n*rc*t      (in place: both (n-1)*rc*t)
 *   Alltoallv             sum sc[i]*t                  sum rc[i]*t (in place: both i != me, rc)
 *   Alltoallw             sum sc[i]*t[i]               sum rc[i]*t[i] (in place as v)
 *   Reduce                c*t                          root: c*t, else 0
 *   Allreduce             c*t                          c*t
 *   Reduce_scatter        sum rc[i]*t (local group)    rc[me]*t
 *   Reduce_scatter_block  n*rc*t (local group)         rc*t
 *   Scan                  c*t                          c*t
 *   Exscan                c*t                          rank 0: 0, else c*t
 *   Neighbor_allgather    sc*t                         indegree*rc*t
 *   Neighbor_allgatherv   sc*t                         sum over indegree rc[i]*t
 *   Neighbor_alltoall     outdegree*sc*t               indegree*rc*t
 *   Neighbor_alltoallv/w  sum over outdegree sc[i]*t   sum over indegree rc[i]*t
 *
 * Intercommunicators (rooted calls): the root passes MPI_ROOT and counts
 * the root's side with n = remote size and no block of its own; processes
 * passing MPI_PROC_NULL count nothing; the others count the non-root side.
 * Blocks addressed to MPI_PROC_NULL neighbours of a non-periodic Cartesian
 * topology are counted: the buffer describes them.  Nonblocking (I) and
 * persistent (_init) variants count like their blocking call, at the start.
 */
#include "mpi_abi.h"

struct comm_info {
	int n;  /* size, or remote size of an intercommunicator */
	int me; /* own rank, -1 in an intercommunicator */
	int inter;
};

static struct comm_info comm_info(lwm2_mpi_h comm)
{
	struct comm_info ci = {0, -1, 0};

	if (lwm2_mpi_real.comm_test_inter(comm, &ci.inter) != 0)
		ci.inter = 0;
	if (ci.inter) {
		lwm2_mpi_real.comm_remote_size(comm, &ci.n);
	} else {
		lwm2_mpi_real.comm_size(comm, &ci.n);
		lwm2_mpi_real.comm_rank(comm, &ci.me);
	}
	if (ci.n < 0)
		ci.n = 0;
	return ci;
}

/* Role in a rooted call: 1 root, 0 not root, -1 nothing (MPI_PROC_NULL). */
static int role(const struct lwm2_mpi_call *c, const struct comm_info *ci, int root)
{
	if (ci->inter)
		return root == c->abi->root ? 1 : root == c->abi->proc_null ? -1 : 0;
	return root == ci->me;
}

static uint64_t elems(lwm2_mpi_cnt count, uint64_t tsize)
{
	return count > 0 ? (uint64_t)count * tsize : 0;
}

static lwm2_mpi_cnt count_at(const void *counts, int wide, int i)
{
	return wide ? ((const int64_t *)counts)[i] : ((const int *)counts)[i];
}

/* Sum of counts[0..n) * t, leaving out index skip (-1: none). */
static uint64_t sum_counts(const void *counts, int wide, int n, int skip, uint64_t t)
{
	uint64_t s = 0;

	if (!counts)
		return 0;
	for (int i = 0; i < n; i++)
		if (i != skip)
			s += elems(count_at(counts, wide, i), t);
	return s;
}

static uint64_t sum_counts_w(const struct lwm2_mpi_abi *a, const void *counts, int wide,
                             const void *types, int n, int skip)
{
	uint64_t s = 0;

	if (!counts || !types)
		return 0;
	for (int i = 0; i < n; i++) {
		lwm2_mpi_cnt k = count_at(counts, wide, i);

		if (i != skip && k > 0)
			s += (uint64_t)k * lwm2_mpi_tsize(a, lwm2_mpi_handle_at(a, types, i));
	}
	return s;
}

struct lwm2_mpi_sr lwm2_mpi_b_bcast(const struct lwm2_mpi_call *c, lwm2_mpi_cnt count,
                                    lwm2_mpi_h dt, int root, lwm2_mpi_h comm)
{
	struct comm_info ci = comm_info(comm);
	int r = role(c, &ci, root);
	uint64_t b = r < 0 ? 0 : lwm2_mpi_bytes(c, count, dt);

	return r == 1 ? lwm2_mpi_sr(b, 0) : lwm2_mpi_sr(0, b);
}

/* The root's blocks of Gather(v) and Scatter(v): count c of type t each,
 * or (v) counts cs[i] of type t, 64-bit ones where wide. */
struct root_blocks {
	bool v;
	lwm2_mpi_cnt c;
	const void *cs;
	int wide;
	lwm2_mpi_h t;
};

/* The bytes of the root's blocks; in place, its own block is left out. */
static uint64_t root_bytes(const struct lwm2_mpi_call *c, const struct root_blocks *rb,
                           const struct comm_info *ci, bool in_place)
{
	if (rb->v)
		return sum_counts(rb->cs, rb->wide, ci->n, in_place ? ci->me : -1,
		                  lwm2_mpi_tsize(c->abi, rb->t));
	return (uint64_t)(in_place ? ci->n - 1 : ci->n) * lwm2_mpi_bytes(c, rb->c, rb->t);
}

/*
 * A rooted call that moves one block between each process and the root:
 * to it (Gather, Gatherv) or from it (Scatter, Scatterv: scatter).  Each
 * process's own block is count oc of type ot; the root's are rb.  The root
 * in place (its buffer in_place_buf is MPI_IN_PLACE) moves no block of its
 * own.  Only what the process's role makes significant is looked at: the
 * root's arguments elsewhere may be anything.  The other buffer (the
 * receive buffer of Gather, the send buffer of Scatter) is never read.
 */
static inline struct lwm2_mpi_sr rooted(const struct lwm2_mpi_call *c, lwm2_mpi_h comm, int root,
                                        bool scatter, lwm2_mpi_cnt oc, lwm2_mpi_h ot,
                                        const struct root_blocks *rb, const void *in_place_buf)
{
	struct comm_info ci = comm_info(comm);
	int r = role(c, &ci, root);
	uint64_t own = 0, blocks = 0;

	if (r < 0)
		return lwm2_mpi_sr(0, 0);
	if (r == 0)
		own = lwm2_mpi_bytes(c, oc, ot);
	else if (ci.inter)
		blocks = root_bytes(c, rb, &ci, false);
	else if (lwm2_mpi_in_place(c, in_place_buf))
		blocks = root_bytes(c, rb, &ci, true);
	else {
		own = lwm2_mpi_bytes(c, oc, ot);
		blocks = root_bytes(c, rb, &ci, false);
	}
	return scatter ? lwm2_mpi_sr(blocks, own) : lwm2_mpi_sr(own, blocks);
}

struct lwm2_mpi_sr lwm2_mpi_b_gather(const struct lwm2_mpi_call *c, const void *sbuf,
                                     lwm2_mpi_cnt sc, lwm2_mpi_h st, const void *rbuf,
                                     lwm2_mpi_cnt rc, lwm2_mpi_h rt, int root, lwm2_mpi_h comm)
{
	return rooted(c, comm, root, false, sc, st, &(struct root_blocks){.c = rc, .t = rt}, sbuf);
}

struct lwm2_mpi_sr lwm2_mpi_b_gatherv(const struct lwm2_mpi_call *c, const void *sbuf,
                                      lwm2_mpi_cnt sc, lwm2_mpi_h st, const void *rbuf,
                                      const void *rcs, int wide, lwm2_mpi_h rt, int root,
                                      lwm2_mpi_h comm)
{
	return rooted(c, comm, root, false, sc, st,
	              &(struct root_blocks){.v = true, .cs = rcs, .wide = wide, .t = rt}, sbuf);
}

struct lwm2_mpi_sr lwm2_mpi_b_scatter(const struct lwm2_mpi_call *c, const void *sbuf,
                                      lwm2_mpi_cnt sc, lwm2_mpi_h st, const void *rbuf,
                                      lwm2_mpi_cnt rc, lwm2_mpi_h rt, int root, lwm2_mpi_h comm)
{
	return rooted(c, comm, root, true, rc, rt, &(struct root_blocks){.c = sc, .t = st}, rbuf);
}

struct lwm2_mpi_sr lwm2_mpi_b_scatterv(const struct lwm2_mpi_call *c, const void *sbuf,
                                       const void *scs, int wide, lwm2_mpi_h st, const void *rbuf,
                                       lwm2_mpi_cnt rc, lwm2_mpi_h rt, int root, lwm2_mpi_h comm)
{
	return rooted(c, comm, root, true, rc, rt,
	              &(struct root_blocks){.v = true, .cs = scs, .wide = wide, .t = st}, rbuf);
}

struct lwm2_mpi_sr lwm2_mpi_b_allgather(const struct lwm2_mpi_call *c, const void *sbuf,
                                        lwm2_mpi_cnt sc, lwm2_mpi_h st, lwm2_mpi_cnt rc,
                                        lwm2_mpi_h rt, lwm2_mpi_h comm)
{
	struct comm_info ci = comm_info(comm);

	if (lwm2_mpi_in_place(c, sbuf))
		return lwm2_mpi_sr(0,
		                   (uint64_t)(ci.n > 0 ? ci.n - 1 : 0) * lwm2_mpi_bytes(c, rc, rt));
	return lwm2_mpi_sr(lwm2_mpi_bytes(c, sc, st), (uint64_t)ci.n * lwm2_mpi_bytes(c, rc, rt));
}

struct lwm2_mpi_sr lwm2_mpi_b_allgatherv(const struct lwm2_mpi_call *c, const void *sbuf,
                                         lwm2_mpi_cnt sc, lwm2_mpi_h st, const void *rcs, int wide,
                                         lwm2_mpi_h rt, lwm2_mpi_h comm)
{
	struct comm_info ci = comm_info(comm);
	uint64_t t = lwm2_mpi_tsize(c->abi, rt);

	if (lwm2_mpi_in_place(c, sbuf))
		return lwm2_mpi_sr(0, sum_counts(rcs, wide, ci.n, ci.me, t));
	return lwm2_mpi_sr(lwm2_mpi_bytes(c, sc, st), sum_counts(rcs, wide, ci.n, -1, t));
}

struct lwm2_mpi_sr lwm2_mpi_b_alltoall(const struct lwm2_mpi_call *c, const void *sbuf,
                                       lwm2_mpi_cnt sc, lwm2_mpi_h st, lwm2_mpi_cnt rc,
                                       lwm2_mpi_h rt, lwm2_mpi_h comm)
{
	struct comm_info ci = comm_info(comm);

	if (lwm2_mpi_in_place(c, sbuf)) {
		uint64_t b = (uint64_t)(ci.n > 0 ? ci.n - 1 : 0) * lwm2_mpi_bytes(c, rc, rt);

		return lwm2_mpi_sr(b, b);
	}
	return lwm2_mpi_sr((uint64_t)ci.n * lwm2_mpi_bytes(c, sc, st),
	                   (uint64_t)ci.n * lwm2_mpi_bytes(c, rc, rt));
}

struct lwm2_mpi_sr lwm2_mpi_b_alltoallv(const struct lwm2_mpi_call *c, const void *sbuf,
                                        const void *scs, lwm2_mpi_h st, const void *rcs, int wide,
                                        lwm2_mpi_h rt, lwm2_mpi_h comm)
{
	struct comm_info ci = comm_info(comm);
	uint64_t t = lwm2_mpi_tsize(c->abi, rt);

	if (lwm2_mpi_in_place(c, sbuf)) {
		uint64_t b = sum_counts(rcs, wide, ci.n, ci.me, t);

		return lwm2_mpi_sr(b, b);
	}
	return lwm2_mpi_sr(sum_counts(scs, wide, ci.n, -1, lwm2_mpi_tsize(c->abi, st)),
	                   sum_counts(rcs, wide, ci.n, -1, t));
}

struct lwm2_mpi_sr lwm2_mpi_b_alltoallw(const struct lwm2_mpi_call *c, const void *sbuf,
                                        const void *scs, const void *sts, const void *rcs, int wide,
                                        const void *rts, lwm2_mpi_h comm)
{
	struct comm_info ci = comm_info(comm);

	if (lwm2_mpi_in_place(c, sbuf)) {
		uint64_t b = sum_counts_w(c->abi, rcs, wide, rts, ci.n, ci.me);

		return lwm2_mpi_sr(b, b);
	}
	return lwm2_mpi_sr(sum_counts_w(c->abi, scs, wide, sts, ci.n, -1),
	                   sum_counts_w(c->abi, rcs, wide, rts, ci.n, -1));
}

struct lwm2_mpi_sr lwm2_mpi_b_reduce(const struct lwm2_mpi_call *c, lwm2_mpi_cnt count,
                                     lwm2_mpi_h dt, int root, lwm2_mpi_h comm)
{
	struct comm_info ci = comm_info(comm);
	int r = role(c, &ci, root);
	uint64_t b = lwm2_mpi_bytes(c, count, dt);

	if (r < 0)
		return lwm2_mpi_sr(0, 0);
	if (r == 0)
		return lwm2_mpi_sr(b, 0);
	return lwm2_mpi_sr(ci.inter ? 0 : b, b);
}

/* The local group's size and own rank, for the calls whose arrays are
 * indexed by the local group. */
static void local_group(lwm2_mpi_h comm, int *n, int *me)
{
	*n = 0;
	*me = -1;
	lwm2_mpi_real.comm_size(comm, n);
	lwm2_mpi_real.comm_rank(comm, me);
}

struct lwm2_mpi_sr lwm2_mpi_b_reduce_scatter(const struct lwm2_mpi_call *c, const void *rcs,
                                             int wide, lwm2_mpi_h dt, lwm2_mpi_h comm)
{
	uint64_t t = lwm2_mpi_tsize(c->abi, dt);
	int n, me;

	local_group(comm, &n, &me);
	if (me < 0 || me >= n || !rcs)
		return lwm2_mpi_sr(0, 0);
	return lwm2_mpi_sr(sum_counts(rcs, wide, n, -1, t), elems(count_at(rcs, wide, me), t));
}

struct lwm2_mpi_sr lwm2_mpi_b_reduce_scatter_block(const struct lwm2_mpi_call *c, lwm2_mpi_cnt rc,
                                                   lwm2_mpi_h dt, lwm2_mpi_h comm)
{
	uint64_t b = lwm2_mpi_bytes(c, rc, dt);
	int n, me;

	local_group(comm, &n, &me);
	return lwm2_mpi_sr((uint64_t)(n > 0 ? n : 0) * b, b);
}

struct lwm2_mpi_sr lwm2_mpi_b_exscan(const struct lwm2_mpi_call *c, lwm2_mpi_cnt count,
                                     lwm2_mpi_h dt, lwm2_mpi_h comm)
{
	uint64_t b = lwm2_mpi_bytes(c, count, dt);
	int me = -1;

	lwm2_mpi_real.comm_rank(comm, &me);
	return lwm2_mpi_sr(b, me == 0 ? 0 : b);
}

/* In- and out-degree of a process topology (0 without one). */
static void degrees(const struct lwm2_mpi_call *c, lwm2_mpi_h comm, int *in, int *out)
{
	int topo = -1, k = 0, w = 0, me = 0;

	*in = *out = 0;
	if (lwm2_mpi_real.topo_test(comm, &topo) != 0)
		return;
	if (topo == c->abi->topo_cart) {
		if (lwm2_mpi_real.cartdim_get(comm, &k) == 0 && k > 0)
			*in = *out = 2 * k;
	} else if (topo == c->abi->topo_graph) {
		if (lwm2_mpi_real.comm_rank(comm, &me) == 0 &&
		    lwm2_mpi_real.graph_neighbors_count(comm, me, &k) == 0 && k > 0)
			*in = *out = k;
	} else if (topo == c->abi->topo_dist_graph) {
		if (lwm2_mpi_real.dist_graph_neighbors_count(comm, in, out, &w) != 0)
			*in = *out = 0;
	}
}

struct lwm2_mpi_sr lwm2_mpi_b_nbr(const struct lwm2_mpi_call *c, int alltoall, lwm2_mpi_cnt sc,
                                  lwm2_mpi_h st, lwm2_mpi_cnt rc, lwm2_mpi_h rt, lwm2_mpi_h comm)
{
	int in, out;

	degrees(c, comm, &in, &out);
	return lwm2_mpi_sr((uint64_t)(alltoall ? out : 1) * lwm2_mpi_bytes(c, sc, st),
	                   (uint64_t)in * lwm2_mpi_bytes(c, rc, rt));
}

struct lwm2_mpi_sr lwm2_mpi_b_nbrv(const struct lwm2_mpi_call *c, lwm2_mpi_cnt sc, const void *scs,
                                   lwm2_mpi_h st, const void *rcs, int wide, lwm2_mpi_h rt,
                                   lwm2_mpi_h comm)
{
	int in, out;

	degrees(c, comm, &in, &out);
	uint64_t sent = scs ? sum_counts(scs, wide, out, -1, lwm2_mpi_tsize(c->abi, st))
	                    : lwm2_mpi_bytes(c, sc, st);
	return lwm2_mpi_sr(sent, sum_counts(rcs, wide, in, -1, lwm2_mpi_tsize(c->abi, rt)));
}

struct lwm2_mpi_sr lwm2_mpi_b_nbrw(const struct lwm2_mpi_call *c, const void *scs, const void *sts,
                                   const void *rcs, int wide, const void *rts, lwm2_mpi_h comm)
{
	int in, out;

	degrees(c, comm, &in, &out);
	return lwm2_mpi_sr(sum_counts_w(c->abi, scs, wide, sts, out, -1),
	                   sum_counts_w(c->abi, rcs, wide, rts, in, -1));
}
