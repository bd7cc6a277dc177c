/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The MPI calls whose bodies do more than count one call: MPI_Init(_thread)
 * and MPI_Finalize (identity and flags), the completion calls (their time
 * goes to the class of the requests they complete), the persistent starts,
 * MPI_Request_free, and the Fortran MPI_Init entry points (the runtime
 * flag; their C-layer calls are counted by the C wrappers).
 *
 * Completion calls: a call counts once, with its time, to the class most of
 * the requests it completed belong to (if it completed none, most of the
 * active requests it was given); requests lwm2 did not see start (one-sided,
 * generalised, MPI_REQUEST_NULL) count as "other".  Bytes of receives and
 * MPI-IO reads are taken from each completed request's status; when the
 * caller ignores statuses, the call gets a status array of ours.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "mpi_wrappers.h"

/* Fortran start-up entry points (all name manglings): they only note that
 * the program uses Fortran, then call the binding's own. */
LWM2_EXPORT void mpi_init_(int *ierr);
LWM2_EXPORT void mpi_init__(int *ierr);
LWM2_EXPORT void mpi_init_f08_(int *ierr);
LWM2_EXPORT void MPI_Init_f08(int *ierr);
LWM2_EXPORT void mpi_init_thread_(int *required, int *provided, int *ierr);
LWM2_EXPORT void mpi_init_thread__(int *required, int *provided, int *ierr);
LWM2_EXPORT void mpi_init_thread_f08_(int *required, int *provided, int *ierr);
LWM2_EXPORT void MPI_Init_thread_f08(int *required, int *provided, int *ierr);

/* MPI_Init(_thread) made (rc): its time, then the identity. */
static int init_done(struct lwm2_mpi_call *c, int rc)
{
	lwm2_mpi_count(c, LWM2_MPI_INIT, lwm2_mpi_stop(c), 0, 0);
	if (rc == 0)
		lwm2_mpi_identity(c->abi);
	return rc;
}

/* MPI_Init(_thread) made (rc) and not counted: in light mode (nothing is
 * counted, see lwm2_on) the identity is still kept, once per process. */
static int init_untimed(int rc)
{
	const struct lwm2_mpi_abi *a;

	if (rc == 0 && atomic_load_explicit(&lwm2_on, memory_order_relaxed) == LWM2_ON_LIGHT &&
	    (a = lwm2_mpi_abi_detect()))
		lwm2_mpi_identity(a);
	return rc;
}

int lwm2_mpi_x_Init(lwm2_mpi_fn_Init f, void *argc, void *argv)
{
	struct lwm2_mpi_call c;

	if (!lwm2_mpi_begin(&c))
		return init_untimed(f(argc, argv));
	return init_done(&c, f(argc, argv));
}

int lwm2_mpi_x_Init_thread(lwm2_mpi_fn_Init_thread f, void *argc, void *argv, int required,
                           int *provided)
{
	struct lwm2_mpi_call c;

	if (!lwm2_mpi_begin(&c))
		return init_untimed(f(argc, argv, required, provided));
	return init_done(&c, f(argc, argv, required, provided));
}

int lwm2_mpi_x_Finalize(lwm2_mpi_fn_Finalize f)
{
	struct lwm2_mpi_call c;

	if (!lwm2_mpi_begin(&c))
		return f();
	int rc = f();
	lwm2_mpi_count(&c, LWM2_MPI_INIT, lwm2_mpi_stop(&c), 0, 0);
	if (rc == 0)
		lwm2_set_flag(LWM2_F_MPI_FINALIZED);
	return rc;
}

/* The requests of one completion or start call. */
struct batch {
	const struct lwm2_mpi_abi *a;
	int n;
	struct lwm2_mpi_req *rs;
	void *heap;
	bool need_status;
	void *own_statuses;
	unsigned given[LWM2_MPI_NCLASSES], done[LWM2_MPI_NCLASSES];
	uint64_t sent[LWM2_MPI_NCLASSES], recv[LWM2_MPI_NCLASSES];
	uint64_t msgs_sent, msgs_recv; /* point-to-point messages started, received */
	struct lwm2_mpi_req stack[LWM2_MPI_STACK_REQS];
	unsigned char stack_st[LWM2_MPI_STACK_REQS * LWM2_MPI_STATUS_MAX]
	    __attribute__((aligned(8)));
};

/* Looks up every request; false (count nothing) when memory ran out. */
static bool batch_open(struct batch *b, const struct lwm2_mpi_abi *a, int n, const void *reqs)
{
	b->a = a;
	b->n = n > 0 ? n : 0;
	b->heap = NULL;
	b->need_status = false;
	b->own_statuses = NULL;
	memset(b->given, 0, sizeof b->given);
	memset(b->done, 0, sizeof b->done);
	memset(b->sent, 0, sizeof b->sent);
	memset(b->recv, 0, sizeof b->recv);
	b->msgs_sent = b->msgs_recv = 0;
	b->rs = b->stack;
	if (b->n > LWM2_MPI_STACK_REQS) {
		b->heap = malloc((size_t)b->n * (sizeof *b->rs + a->status_size));
		if (!b->heap)
			return false;
		b->rs = b->heap;
	}
	for (int i = 0; i < b->n; i++) {
		uintptr_t h = lwm2_mpi_handle_at(a, reqs, i);
		struct lwm2_mpi_req *r = &b->rs[i];

		r->slot = -1;
		if (h == a->request_null)
			continue;
		lwm2_mpi_req_find(h, r);
		if (r->slot < 0) {
			b->given[LWM2_MPI_OTHER]++;
			continue;
		}
		b->given[r->cls]++;
		if (r->flags & LWM2_MPI_REQ_STATUS)
			b->need_status = true;
	}
	return true;
}

/* The statuses argument to pass on: ours when bytes need them and the
 * caller ignores them. */
static void *batch_statuses(struct batch *b, void *statuses)
{
	if (!b->need_status || (uintptr_t)statuses != b->a->status_ignore)
		return statuses;
	b->own_statuses = b->heap ? (void *)(b->rs + b->n) : (void *)b->stack_st;
	return b->own_statuses;
}

static void *status_at(const struct batch *b, void *statuses, int j)
{
	if ((uintptr_t)statuses == b->a->status_ignore)
		return NULL;
	return (char *)statuses + (size_t)j * b->a->status_size;
}

/* Request i completed, with its status st (NULL: none to read). */
static void batch_done(struct batch *b, int i, const void *st)
{
	const struct lwm2_mpi_req *r;

	if (i < 0 || i >= b->n)
		return;
	r = &b->rs[i];
	if (r->slot < 0) {
		b->done[LWM2_MPI_OTHER] += b->given[LWM2_MPI_OTHER] > 0;
		return;
	}
	b->done[r->cls]++;
	if ((r->flags & LWM2_MPI_REQ_STATUS) && st)
		b->recv[r->cls] += lwm2_mpi_status_bytes(b->a, st);
	if ((r->flags & LWM2_MPI_REQ_STATUS) && r->cls == LWM2_MPI_P2P)
		b->msgs_recv++;
	if (!(r->flags & LWM2_MPI_REQ_PERSISTENT))
		lwm2_mpi_req_drop(r);
}

/* Request i was started (MPI_Start): a persistent request moves its bytes. */
static void batch_started(struct batch *b, int i)
{
	const struct lwm2_mpi_req *r = &b->rs[i];

	if (r->slot < 0)
		return;
	b->done[r->cls]++;
	b->sent[r->cls] += r->sent;
	b->recv[r->cls] += r->recv;
	if ((r->flags & LWM2_MPI_REQ_SEND) && r->cls == LWM2_MPI_P2P)
		b->msgs_sent++;
}

static enum lwm2_mpi_class majority(const unsigned *n)
{
	enum lwm2_mpi_class best = LWM2_MPI_OTHER;
	unsigned most = 0;

	for (int k = 0; k < LWM2_MPI_NCLASSES; k++)
		if (n[k] > most) {
			most = n[k];
			best = (enum lwm2_mpi_class)k;
		}
	return best;
}

static void batch_close(struct batch *b, struct lwm2_mpi_call *c, uint64_t ticks)
{
	unsigned any = 0;

	for (int k = 0; k < LWM2_MPI_NCLASSES; k++)
		any += b->done[k];
	enum lwm2_mpi_class cls = majority(any ? b->done : b->given);

	for (int k = 0; k < LWM2_MPI_NCLASSES; k++) {
		bool mine = k == (int)cls;

		if (mine || b->sent[k] || b->recv[k])
			lwm2_mpi_count_n(c->t, (enum lwm2_mpi_class)k, mine, mine ? ticks : 0,
			                 b->sent[k], b->recv[k]);
	}
	if (b->msgs_sent || b->msgs_recv)
		lwm2_mpi_msgs(c->t, b->msgs_sent, b->msgs_recv);
	free(b->heap);
}

/* A single request: the common case, without the batch's arrays. */
static void single_open(const struct lwm2_mpi_call *c, const void *request, struct lwm2_mpi_req *r)
{
	uintptr_t h = lwm2_mpi_handle_at(c->abi, request, 0);

	r->slot = -1;
	if (h != c->abi->request_null)
		lwm2_mpi_req_find(h, r);
}

static void single_done(struct lwm2_mpi_call *c, const struct lwm2_mpi_req *r, bool completed,
                        const void *st, uint64_t ticks)
{
	uint64_t recv = 0;

	if (r->slot < 0) {
		lwm2_mpi_count(c, LWM2_MPI_OTHER, ticks, 0, 0);
		return;
	}
	if (completed && (r->flags & LWM2_MPI_REQ_STATUS))
		recv = lwm2_mpi_status_bytes(c->abi, st);
	lwm2_mpi_count(c, (enum lwm2_mpi_class)r->cls, ticks, 0, recv);
	if (completed && (r->flags & LWM2_MPI_REQ_STATUS) && r->cls == LWM2_MPI_P2P)
		lwm2_mpi_msgs(c->t, 0, 1);
	if (completed && !(r->flags & LWM2_MPI_REQ_PERSISTENT))
		lwm2_mpi_req_drop(r);
}

int lwm2_mpi_x_Wait(lwm2_mpi_fn_Wait f, void *request, void *status)
{
	unsigned char own[LWM2_MPI_STATUS_MAX] __attribute__((aligned(8)));
	struct lwm2_mpi_call c;
	struct lwm2_mpi_req r;

	if (!lwm2_mpi_begin(&c))
		return f(request, status);
	single_open(&c, request, &r);
	void *st = lwm2_mpi_status(&c, status, own);
	int rc = f(request, st);
	single_done(&c, &r, rc == 0, st, lwm2_mpi_stop(&c));
	return rc;
}

int lwm2_mpi_x_Test(lwm2_mpi_fn_Test f, void *request, int *flag, void *status)
{
	unsigned char own[LWM2_MPI_STATUS_MAX] __attribute__((aligned(8)));
	struct lwm2_mpi_call c;
	struct lwm2_mpi_req r;

	if (!lwm2_mpi_begin(&c))
		return f(request, flag, status);
	single_open(&c, request, &r);
	void *st = lwm2_mpi_status(&c, status, own);
	int rc = f(request, flag, st);
	single_done(&c, &r, rc == 0 && *flag, st, lwm2_mpi_stop(&c));
	return rc;
}

/* MPI_Start and MPI_Request_free (start false): one request, no status.
 * A started request counts to its class, with its bytes when the start
 * succeeded; a freed one counts as other and is forgotten. */
static int single_plain(lwm2_mpi_fn_Start f, void *request, bool start)
{
	struct lwm2_mpi_call c;
	struct lwm2_mpi_req r;

	if (!lwm2_mpi_begin(&c))
		return f(request);
	single_open(&c, request, &r);
	int rc = f(request);
	uint64_t ticks = lwm2_mpi_stop(&c);

	if (!start) {
		lwm2_mpi_count(&c, LWM2_MPI_OTHER, ticks, 0, 0);
		if (rc == 0 && r.slot >= 0)
			lwm2_mpi_req_drop(&r);
	} else if (r.slot < 0)
		lwm2_mpi_count(&c, LWM2_MPI_OTHER, ticks, 0, 0);
	else if (rc == 0) {
		lwm2_mpi_count(&c, (enum lwm2_mpi_class)r.cls, ticks, r.sent, r.recv);
		if ((r.flags & LWM2_MPI_REQ_SEND) && r.cls == LWM2_MPI_P2P)
			lwm2_mpi_msgs(c.t, 1, 0);
	} else
		lwm2_mpi_count(&c, (enum lwm2_mpi_class)r.cls, ticks, 0, 0);
	return rc;
}

int lwm2_mpi_x_Start(lwm2_mpi_fn_Start f, void *request)
{
	return single_plain(f, request, true);
}

int lwm2_mpi_x_Request_free(lwm2_mpi_fn_Request_free f, void *request)
{
	return single_plain(f, request, false);
}

/*
 * The start of a call over count requests: true when it is counted, with
 * the batch open.  False when it is not counted (pass then makes nothing
 * of it), or when memory for the batch ran out (pass then counts it as
 * other).
 */
static bool batch_begin(struct lwm2_mpi_call *c, struct batch *b, int count, const void *reqs)
{
	if (!lwm2_mpi_begin(c)) {
		c->t = NULL;
		return false;
	}
	return batch_open(b, c->abi, count, reqs);
}

/* The call made (rc) without a batch: as other where it is counted. */
static int pass(struct lwm2_mpi_call *c, int rc)
{
	if (c->t)
		lwm2_mpi_count(c, LWM2_MPI_OTHER, lwm2_mpi_stop(c), 0, 0);
	return rc;
}

int lwm2_mpi_x_Startall(lwm2_mpi_fn_Startall f, int count, void *reqs)
{
	struct lwm2_mpi_call c;
	struct batch b;

	if (!batch_begin(&c, &b, count, reqs))
		return pass(&c, f(count, reqs));
	int rc = f(count, reqs);
	uint64_t ticks = lwm2_mpi_stop(&c);

	if (rc == 0)
		for (int i = 0; i < b.n; i++)
			batch_started(&b, i);
	batch_close(&b, &c, ticks);
	return rc;
}

/* Waitall and Testall made (rc; flag: Testall's, NULL for Waitall): every
 * request completed where the call says so. */
static int all_done(struct lwm2_mpi_call *c, struct batch *b, int rc, const int *flag, void *st)
{
	uint64_t ticks = lwm2_mpi_stop(c);

	if (rc == 0 && (!flag || *flag))
		for (int i = 0; i < b->n; i++)
			batch_done(b, i, status_at(b, st, i));
	batch_close(b, c, ticks);
	return rc;
}

/* Waitany and Testany made (flag as for all_done): the request at *index
 * completed where the call says so. */
static int any_done(struct lwm2_mpi_call *c, struct batch *b, int rc, const int *flag,
                    const int *index, void *st)
{
	uint64_t ticks = lwm2_mpi_stop(c);

	if (rc == 0 && (!flag || *flag) && *index != c->abi->undefined)
		batch_done(b, *index, st);
	batch_close(b, c, ticks);
	return rc;
}

int lwm2_mpi_x_Waitall(lwm2_mpi_fn_Waitall f, int count, void *reqs, void *statuses)
{
	struct lwm2_mpi_call c;
	struct batch b;

	if (!batch_begin(&c, &b, count, reqs))
		return pass(&c, f(count, reqs, statuses));
	void *st = batch_statuses(&b, statuses);
	return all_done(&c, &b, f(count, reqs, st), NULL, st);
}

int lwm2_mpi_x_Testall(lwm2_mpi_fn_Testall f, int count, void *reqs, int *flag, void *statuses)
{
	struct lwm2_mpi_call c;
	struct batch b;

	if (!batch_begin(&c, &b, count, reqs))
		return pass(&c, f(count, reqs, flag, statuses));
	void *st = batch_statuses(&b, statuses);
	return all_done(&c, &b, f(count, reqs, flag, st), flag, st);
}

int lwm2_mpi_x_Waitany(lwm2_mpi_fn_Waitany f, int count, void *reqs, int *index, void *status)
{
	unsigned char own[LWM2_MPI_STATUS_MAX] __attribute__((aligned(8)));
	struct lwm2_mpi_call c;
	struct batch b;

	if (!batch_begin(&c, &b, count, reqs))
		return pass(&c, f(count, reqs, index, status));
	void *st = lwm2_mpi_status(&c, status, own);
	return any_done(&c, &b, f(count, reqs, index, st), NULL, index, st);
}

int lwm2_mpi_x_Testany(lwm2_mpi_fn_Testany f, int count, void *reqs, int *index, int *flag,
                       void *status)
{
	unsigned char own[LWM2_MPI_STATUS_MAX] __attribute__((aligned(8)));
	struct lwm2_mpi_call c;
	struct batch b;

	if (!batch_begin(&c, &b, count, reqs))
		return pass(&c, f(count, reqs, index, flag, status));
	void *st = lwm2_mpi_status(&c, status, own);
	return any_done(&c, &b, f(count, reqs, index, flag, st), flag, index, st);
}

/* Waitsome and Testsome: the same arguments, the same counting. */
static int some(lwm2_mpi_fn_Waitsome f, int incount, void *reqs, int *outcount, int *indices,
                void *statuses)
{
	struct lwm2_mpi_call c;
	struct batch b;

	if (!batch_begin(&c, &b, incount, reqs))
		return pass(&c, f(incount, reqs, outcount, indices, statuses));
	void *st = batch_statuses(&b, statuses);
	int rc = f(incount, reqs, outcount, indices, st);
	uint64_t ticks = lwm2_mpi_stop(&c);

	if (rc == 0 && *outcount != c.abi->undefined)
		for (int j = 0; j < *outcount; j++)
			batch_done(&b, indices[j], status_at(&b, st, j));
	batch_close(&b, &c, ticks);
	return rc;
}

int lwm2_mpi_x_Waitsome(lwm2_mpi_fn_Waitsome f, int incount, void *reqs, int *outcount,
                        int *indices, void *statuses)
{
	return some(f, incount, reqs, outcount, indices, statuses);
}

int lwm2_mpi_x_Testsome(lwm2_mpi_fn_Testsome f, int incount, void *reqs, int *outcount,
                        int *indices, void *statuses)
{
	return some(f, incount, reqs, outcount, indices, statuses);
}

/*
 * Fortran MPI_Init entry points: mark the Fortran runtime, then go on to
 * the binding, whose C-layer call the C wrappers count.  Open MPI 4.1
 * (libmpi_mpifh, libmpi_usempif08) and MPICH 4.0 (libmpichfort) names.
 */
static _Atomic(void *) next_finit[8];

static void *fortran_next(int i, const char *name)
{
	void *f = atomic_load_explicit(&next_finit[i], memory_order_acquire);

	lwm2_set_runtime(LWM2_RT_FORTRAN);
	if (!f && (f = lwm2_real(name)))
		atomic_store_explicit(&next_finit[i], f, memory_order_release);
	return f;
}

static void fortran_init(int i, const char *name, int *ierr)
{
	void (*f)(int *) = (void (*)(int *))fortran_next(i, name);

	if (f)
		f(ierr);
	else if (ierr)
		*ierr = lwm2_mpi_unresolved(name);
}

static void fortran_init_thread(int i, const char *name, int *required, int *provided, int *ierr)
{
	void (*f)(int *, int *, int *) = (void (*)(int *, int *, int *))fortran_next(i, name);

	if (f)
		f(required, provided, ierr);
	else if (ierr)
		*ierr = lwm2_mpi_unresolved(name);
}

LWM2_EXPORT void mpi_init_(int *ierr)
{
	fortran_init(0, "mpi_init_", ierr);
}

LWM2_EXPORT void mpi_init__(int *ierr)
{
	fortran_init(1, "mpi_init__", ierr);
}

LWM2_EXPORT void mpi_init_f08_(int *ierr)
{
	fortran_init(2, "mpi_init_f08_", ierr);
}

LWM2_EXPORT void MPI_Init_f08(int *ierr)
{
	fortran_init(3, "MPI_Init_f08", ierr);
}

LWM2_EXPORT void mpi_init_thread_(int *required, int *provided, int *ierr)
{
	fortran_init_thread(4, "mpi_init_thread_", required, provided, ierr);
}

LWM2_EXPORT void mpi_init_thread__(int *required, int *provided, int *ierr)
{
	fortran_init_thread(5, "mpi_init_thread__", required, provided, ierr);
}

LWM2_EXPORT void mpi_init_thread_f08_(int *required, int *provided, int *ierr)
{
	fortran_init_thread(6, "mpi_init_thread_f08_", required, provided, ierr);
}

LWM2_EXPORT void MPI_Init_thread_f08(int *required, int *provided, int *ierr)
{
	fortran_init_thread(7, "MPI_Init_thread_f08", required, provided, ierr);
}
