/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The MPI module's run time: which MPI ABI the process loaded, where the
 * next definitions are, the request table, and the identity of the rank.
 * Nothing here links libmpi: the loaded MPI is found when the first MPI
 * call arrives, so a program that never calls MPI never maps it, and one
 * that dlopens MPI later (mpi4py) is measured from its first call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lwm2_core.h"
#include "mpi_abi.h"

_Atomic(const struct lwm2_mpi_abi *) lwm2_mpi_abi;
struct lwm2_mpi_real lwm2_mpi_real;

struct lwm2_mpi_tcache lwm2_mpi_tcache[LWM2_MPI_TCACHE];

/* Open MPI 4.x/5.x (mpi.h: handles are pointers to predefined objects). */
static struct lwm2_mpi_abi abi_ompi = {
    .kind = LWM2_MPI_OMPI,
    .runtime = LWM2_RT_MPI_OMPI,
    .handle_size = 8,
    .status_size = 24,
    .in_place = 1,
    .status_ignore = 0,
    .root = -4,
    .proc_null = -2,
    .undefined = -32766,
    .topo_cart = 1,
    .topo_graph = 2,
    .topo_dist_graph = 3,
    /* request_null, comm_world, byte_type: addresses, filled at detection */
};

/* MPICH and its ABI family (Intel MPI, MVAPICH): int handles. */
static const struct lwm2_mpi_abi abi_mpich = {
    .kind = LWM2_MPI_MPICH,
    .runtime = LWM2_RT_MPI_MPICH,
    .handle_size = 4,
    .status_size = 20,
    .in_place = (uintptr_t)-1,
    .status_ignore = 1,
    .request_null = 0x2c000000,
    .comm_world = 0x44000000,
    .byte_type = 0x4c00010d,
    .root = -3,
    .proc_null = -1,
    .undefined = -32766,
    .topo_cart = 2,
    .topo_graph = 1,
    .topo_dist_graph = 3,
};

/*
 * The loaded MPI library when it is not in the global scope (dlopen'd with
 * RTLD_LOCAL by its caller): the first loaded object, other than liblwm2,
 * that defines PMPI_Init.
 */
static void *mpi_handle;

static int find_mpi(struct dl_phdr_info *info, size_t size, void *arg)
{
	Dl_info self;
	void *h;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	void *f = dlsym(h, "PMPI_Init");
	if (f && dladdr(f, &self) && self.dli_fbase != arg) {
		mpi_handle = h;
		return 1;
	}
	dlclose(h);
	return 0;
}

static void *local_mpi(void)
{
	static _Atomic int searched;
	Dl_info me;

	if (!LWM2_HAVE_DL)
		return NULL;
	if (!atomic_exchange(&searched, 1) && dladdr((void *)find_mpi, &me))
		dl_iterate_phdr(find_mpi, me.dli_fbase);
	return mpi_handle;
}

static void *lookup(const char *name)
{
	void *f = lwm2_real(name);
	void *h;

	if (!f && (h = local_mpi()))
		f = dlsym(h, name);
	return f;
}

static void *lookup_default(const char *name)
{
	void *f = LWM2_HAVE_DL ? dlsym(RTLD_DEFAULT, name) : lwm2_real(name);
	void *h;

	if (!f && (h = local_mpi()))
		f = dlsym(h, name);
	return f;
}

void *lwm2_mpi_resolve(_Atomic(void *) *slot, int pmpi, const char *name)
{
	char full[64];
	void *f;

	snprintf(full, sizeof full, "%s%s", pmpi ? "PMPI_" : "MPI_", name);
	f = lookup(full);
	if (!f && !pmpi) {
		/* A second tool may define MPI_x without libmpi behind it. */
		full[0] = 'P';
		memmove(full + 1, full, strlen(full) + 1);
		memcpy(full, "PMPI_", 5);
		f = lookup(full);
	}
	if (f)
		atomic_store_explicit(slot, f, memory_order_release);
	return f;
}

int lwm2_mpi_unresolved(const char *name)
{
	static _Atomic int said;

	if (!atomic_exchange(&said, 1)) {
		char msg[160];
		int n = snprintf(msg, sizeof msg,
		                 "lwm2: mpi: couldn't find the MPI library's MPI_%s\n", name);

		if (n > 0 && write(STDERR_FILENO, msg, (size_t)n) < 0)
			return 16;
	}
	return 16; /* MPI_ERR_INTERN in both ABIs */
}

static bool resolve_real(void)
{
	static const struct {
		const char *name;
		size_t off;
	} tab[] = {
#define R(f, n) {n, offsetof(struct lwm2_mpi_real, f)}
	    R(type_size, "PMPI_Type_size"),
	    R(comm_size, "PMPI_Comm_size"),
	    R(comm_rank, "PMPI_Comm_rank"),
	    R(comm_remote_size, "PMPI_Comm_remote_size"),
	    R(comm_test_inter, "PMPI_Comm_test_inter"),
	    R(topo_test, "PMPI_Topo_test"),
	    R(cartdim_get, "PMPI_Cartdim_get"),
	    R(graph_neighbors_count, "PMPI_Graph_neighbors_count"),
	    R(dist_graph_neighbors_count, "PMPI_Dist_graph_neighbors_count"),
	    R(query_thread, "PMPI_Query_thread"),
	    R(get_library_version, "PMPI_Get_library_version"),
#undef R
	};

	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
		void *f = lookup(tab[i].name);

		if (!f)
			return false;
		memcpy((char *)&lwm2_mpi_real + tab[i].off, &f, sizeof f);
	}
	return true;
}

/*
 * Open MPI's predefined datatypes, most used first (a later one that maps
 * to a taken slot stays out of the table).  Their handles are the
 * addresses of these objects; one missing from this build is skipped.
 * Filled once MPI_Init(_thread) returned (PMPI_Type_size is erroneous
 * before); until then, and where lwm2 did not see the initialisation,
 * every size is asked of PMPI_Type_size.
 */
static const char *const ompi_types[] = {
    "ompi_mpi_byte",
    "ompi_mpi_double",
    "ompi_mpi_int",
    "ompi_mpi_char",
    "ompi_mpi_float",
    "ompi_mpi_long",
    "ompi_mpi_unsigned_long",
    "ompi_mpi_long_long_int",
    "ompi_mpi_unsigned_long_long",
    "ompi_mpi_unsigned",
    "ompi_mpi_unsigned_char",
    "ompi_mpi_signed_char",
    "ompi_mpi_short",
    "ompi_mpi_unsigned_short",
    "ompi_mpi_int8_t",
    "ompi_mpi_uint8_t",
    "ompi_mpi_int16_t",
    "ompi_mpi_uint16_t",
    "ompi_mpi_int32_t",
    "ompi_mpi_uint32_t",
    "ompi_mpi_int64_t",
    "ompi_mpi_uint64_t",
    "ompi_mpi_long_double",
    "ompi_mpi_c_bool",
    "ompi_mpi_c_float_complex",
    "ompi_mpi_c_double_complex",
    "ompi_mpi_c_long_double_complex",
    "ompi_mpi_aint",
    "ompi_mpi_offset",
    "ompi_mpi_count",
    "ompi_mpi_wchar",
    "ompi_mpi_packed",
    "ompi_mpi_float_int",
    "ompi_mpi_double_int",
    "ompi_mpi_long_int",
    "ompi_mpi_2int",
    "ompi_mpi_short_int",
    "ompi_mpi_long_double_int",
    "ompi_mpi_integer",
    "ompi_mpi_real",
    "ompi_mpi_dblprec",
    "ompi_mpi_character",
    "ompi_mpi_logical",
    "ompi_mpi_cplex",
    "ompi_mpi_dblcplex",
    "ompi_mpi_integer4",
    "ompi_mpi_integer8",
    "ompi_mpi_real4",
    "ompi_mpi_real8",
    "ompi_mpi_2integer",
    "ompi_mpi_2real",
    "ompi_mpi_2dblprec",
};

static void ompi_fill_tcache(void)
{
	for (size_t i = 0; i < sizeof ompi_types / sizeof ompi_types[0]; i++) {
		uintptr_t h = (uintptr_t)lookup_default(ompi_types[i]);
		struct lwm2_mpi_tcache *e = &lwm2_mpi_tcache[lwm2_mpi_tcache_slot(h)];
		uintptr_t held = atomic_load_explicit(&e->handle, memory_order_relaxed);
		int s = 0;

		if (!h || (held && held != h) || lwm2_mpi_real.type_size(h, &s) != 0 || s < 0)
			continue;
		atomic_store_explicit(&e->size, (uint64_t)s, memory_order_relaxed);
		atomic_store_explicit(&e->handle, h, memory_order_release);
	}
}

/*
 * Which ABI: Open MPI exports its predefined objects by name
 * (ompi_mpi_comm_world); anything else that defines PMPI_Init is taken as
 * the MPICH ABI family.  Runs at the first measured MPI call of the
 * process; racing threads compute the same answer.
 */
const struct lwm2_mpi_abi *lwm2_mpi_abi_detect(void)
{
	static _Atomic int failed;
	const struct lwm2_mpi_abi *a = NULL;
	void *world;

	if (atomic_load(&failed))
		return NULL;
	if ((world = lookup_default("ompi_mpi_comm_world"))) {
		void *rnull = lookup_default("ompi_request_null");
		void *byte = lookup_default("ompi_mpi_byte");

		if (rnull && byte) {
			abi_ompi.comm_world = (uintptr_t)world;
			abi_ompi.request_null = (uintptr_t)rnull;
			abi_ompi.byte_type = (uintptr_t)byte;
			a = &abi_ompi;
		}
	} else if (lookup_default("PMPI_Init")) {
		a = &abi_mpich;
	}
	if (a && !resolve_real())
		a = NULL;
	if (!a) {
		if (!atomic_exchange(&failed, 1))
			lwm2_group_missing(LWM2_G_MPI,
			                   world ? "Open MPI without its predefined objects"
			                         : "MPI library not recognised");
		return NULL;
	}
	atomic_store_explicit(&lwm2_mpi_abi, a, memory_order_release);
	return a;
}

void lwm2_mpi_identity(const struct lwm2_mpi_abi *a)
{
	static char version[8192]; /* MPI_MAX_LIBRARY_VERSION_STRING of MPICH, the larger */
	int rank = -1, size = -1, provided = -1, len = 0;

	lwm2_mpi_real.comm_rank(a->comm_world, &rank);
	lwm2_mpi_real.comm_size(a->comm_world, &size);
	lwm2_mpi_real.query_thread(&provided);
	if (lwm2_mpi_real.get_library_version(version, &len) != 0 || len < 0)
		len = 0;
	version[len < (int)sizeof version ? len : (int)sizeof version - 1] = '\0';
	version[strcspn(version, "\n")] = '\0';
	if (a->kind == LWM2_MPI_OMPI)
		ompi_fill_tcache(); /* PMPI_Type_size needs MPI initialised */
	lwm2_set_mpi_identity(rank, size, provided, version);
	lwm2_set_runtime(a->runtime);
	lwm2_set_flag(LWM2_F_MPI);
}

/*
 * The request table: open addressing over a fixed array, lock-free.  A
 * slot's word is 0 (empty), TOMB (freed), CLAIM (being written) or the
 * request handle with a 16-bit stamp above bit 48.  The stamp makes a
 * removal by the thread that completed a request fail when another thread
 * already got the same handle value back from MPI and tracked it anew.
 * Probes are bounded: a request that finds no slot is not tracked and its
 * completion counts as "other".
 */
#define REQ_SLOTS  4096u
#define REQ_PROBES 64u
#define REQ_TOMB   1u
#define REQ_CLAIM  2u
#define REQ_HMASK  ((UINT64_C(1) << 48) - 1)

struct req_slot {
	_Atomic uint64_t word;
	uint64_t sent, recv;
	uint8_t cls, flags;
};

static struct req_slot req_tab[REQ_SLOTS];
static __thread uint32_t req_stamp __attribute__((tls_model("initial-exec")));

static inline uint32_t req_hash(uint64_t h)
{
	return (uint32_t)((h * UINT64_C(0x9E3779B97F4A7C15)) >> 52) & (REQ_SLOTS - 1);
}

static inline bool req_live(uint64_t w)
{
	return w > REQ_CLAIM;
}

void lwm2_mpi_req_track(const struct lwm2_mpi_abi *a, const void *request, enum lwm2_mpi_class k,
                        unsigned flags, uint64_t sent, uint64_t recv)
{
	uint64_t h = lwm2_mpi_handle_at(a, request, 0);
	uint32_t i0 = req_hash(h);

	if (h == 0 || h > REQ_HMASK || h == a->request_null)
		return;
	if (!req_stamp)
		req_stamp = (uint32_t)(uintptr_t)&req_stamp >> 6;
	uint64_t stamp = (uint64_t)((++req_stamp & 0xffff) | 1);
	uint64_t word = h | stamp << 48;

	for (int attempt = 0; attempt < 2; attempt++) {
		struct req_slot *free_slot = NULL;
		uint64_t free_w = 0;

		for (uint32_t p = 0; p < REQ_PROBES; p++) {
			struct req_slot *s = &req_tab[(i0 + p) & (REQ_SLOTS - 1)];
			uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);

			if (req_live(w) && (w & REQ_HMASK) == h) {
				/* a stale entry of a handle MPI reused: take it over */
				free_slot = s;
				free_w = w;
				break;
			}
			if (!free_slot && (w == 0 || w == REQ_TOMB)) {
				free_slot = s;
				free_w = w;
			}
			if (w == 0)
				break;
		}
		if (!free_slot)
			return;
		if (atomic_compare_exchange_strong_explicit(&free_slot->word, &free_w, REQ_CLAIM,
		                                            memory_order_acquire,
		                                            memory_order_relaxed)) {
			free_slot->cls = (uint8_t)k;
			free_slot->flags = (uint8_t)flags;
			free_slot->sent = sent;
			free_slot->recv = recv;
			atomic_store_explicit(&free_slot->word, word, memory_order_release);
			return;
		}
	}
}

void lwm2_mpi_req_find(uintptr_t h, struct lwm2_mpi_req *r)
{
	uint32_t i0 = req_hash(h);

	r->slot = -1;
	if (h == 0 || h > REQ_HMASK)
		return;
	for (uint32_t p = 0; p < REQ_PROBES; p++) {
		uint32_t i = (i0 + p) & (REQ_SLOTS - 1);
		struct req_slot *s = &req_tab[i];
		uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);

		if (w == 0)
			return;
		if (req_live(w) && (w & REQ_HMASK) == h) {
			r->word = w;
			r->slot = (int)i;
			r->cls = s->cls;
			r->flags = s->flags;
			r->sent = s->sent;
			r->recv = s->recv;
			return;
		}
	}
}

void lwm2_mpi_req_drop(const struct lwm2_mpi_req *r)
{
	uint64_t w = r->word;

	if (r->slot >= 0)
		atomic_compare_exchange_strong_explicit(&req_tab[r->slot].word, &w, REQ_TOMB,
		                                        memory_order_release, memory_order_relaxed);
}

/* Nothing to set up early: the loaded MPI is found at its first call. */
const struct lwm2_module lwm2_module_mpi = {
    .name = "mpi",
};
