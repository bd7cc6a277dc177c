/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The program's named regions (lwm2_region_begin/end in include/lwm2.h,
 * lwm2_view(3)): TAUg's named events.  A program brackets a part of its
 * work, "solver", and its rank record gets each region's calls and time
 * (rank_file.c, lwm2_regions_fill), the digest their spread over the ranks.
 *
 * The cost is what the bench row measures (a begin/end pair within
 * 50 ns): a begin reads the clock, finds the region's slot from the name's
 * address in a small per-thread cache (checked against the name, since an
 * address may be reused for another name) or else by the name's hash in
 * the process's table, and pushes it on the thread's stack; an end reads
 * the clock, pops and adds to the slot's two atomics.  No lock, no
 * allocation, no system call: a region may be entered from any thread and
 * from a signal handler.  A program that never calls them pays nothing:
 * the header finds these functions only on its first call.
 *
 * Bounded: the process keeps REGIONS_LIVE names apart (a name found a slot
 * at its first begin, for the process's life); a name beyond them is
 * counted with the others folded, and the record keeps the busiest
 * LWM2_REGIONS_MAX by time, the rest folded and counted.  A thread's
 * regions nest REGION_DEPTH deep; deeper ones are not timed, and their ends
 * pop nothing of the regions below.  A call counts when it ends, so a
 * region still open when the record is written is not in it yet.
 */
#include "core_int.h"

#include <stdatomic.h>
#include <string.h>

#define REGIONS_LIVE 256 /* a power of two */
#define REGION_DEPTH 32
#define REGION_LOST  REGIONS_LIVE /* the index of a name that found no slot */
/* Bytes of a name that count: the record's field less its terminator. */
#define NAME_CUT (LWM2_REGION_NAME_LEN - 1)

LWM2_EXPORT int lwm2_region_enter(const char *name);
LWM2_EXPORT int lwm2_region_leave(void);
LWM2_EXPORT int lwm2_region_read(const char *name, double *out, int n);

enum { SLOT_EMPTY = 0, SLOT_NAMING, SLOT_NAMED };

struct region {
	_Atomic uint32_t state;
	uint32_t hash;
	char name[LWM2_REGION_NAME_LEN];
	_Atomic uint64_t calls, ticks;
};

static struct region regions[REGIONS_LIVE];
static _Atomic uint32_t regions_named;
/* The calls and time of the names that found no slot. */
static _Atomic uint64_t lost_calls, lost_ticks;

struct open_region {
	uint64_t t0;
	uint32_t idx;
	uint32_t again; /* the same region is open below it in this thread */
};

#define TLS_IE __attribute__((tls_model("initial-exec")))
static __thread struct open_region open_stack[REGION_DEPTH] TLS_IE;
static __thread uint32_t open_depth TLS_IE;
/* The last names' addresses and their slots, by address. */
#define CACHE_N 4
static __thread const char *cache_name[CACHE_N] TLS_IE;
static __thread uint32_t cache_idx[CACHE_N] TLS_IE;

static uint32_t name_hash(const char *name, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h;
}

/* The name's cut is the slot's name. */
static bool same_name(const struct region *r, const char *name)
{
	return strncmp(r->name, name, NAME_CUT) == 0;
}

/* The slot of name, named now if it is new; REGION_LOST when the table is
 * full.  A slot another thread is naming is waited for a bounded while
 * (a few stores); past it, or when the thread waits on itself (a signal
 * handler that interrupted the naming), the slot is passed over, at worst
 * naming the region twice, which the record's fill merges. */
static uint32_t region_find(const char *name)
{
	size_t n = strnlen(name, NAME_CUT);
	uint32_t h = name_hash(name, n);

	for (uint32_t i = 0; i < REGIONS_LIVE; i++) {
		uint32_t idx = (h + i) & (REGIONS_LIVE - 1);
		struct region *r = &regions[idx];
		uint32_t st = atomic_load_explicit(&r->state, memory_order_acquire);

		if (st == SLOT_EMPTY) {
			uint32_t expect = SLOT_EMPTY;

			if (atomic_compare_exchange_strong_explicit(&r->state, &expect, SLOT_NAMING,
			                                            memory_order_acquire,
			                                            memory_order_acquire)) {
				r->hash = h;
				memcpy(r->name, name, n);
				r->name[n] = '\0';
				atomic_store_explicit(&r->state, SLOT_NAMED, memory_order_release);
				atomic_fetch_add_explicit(&regions_named, 1, memory_order_relaxed);
				return idx;
			}
			st = expect;
		}
		for (int spin = 0; st == SLOT_NAMING && spin < 1000; spin++)
			st = atomic_load_explicit(&r->state, memory_order_acquire);
		if (st == SLOT_NAMED && r->hash == h && same_name(r, name))
			return idx;
	}
	return REGION_LOST;
}

static uint32_t region_lookup(const char *name)
{
	unsigned k = (unsigned)((uintptr_t)name >> 3) & (CACHE_N - 1);
	uint32_t idx = cache_idx[k];

	if (cache_name[k] == name && idx < REGIONS_LIVE && same_name(&regions[idx], name))
		return idx;
	idx = region_find(name);
	cache_name[k] = name;
	cache_idx[k] = idx;
	return idx;
}

LWM2_EXPORT int lwm2_region_enter(const char *name)
{
	uint64_t t0;
	uint32_t d, idx, again = 0;

	if (!name || !name[0])
		return -1;
	if (!atomic_load_explicit(&lwm2_on, memory_order_relaxed))
		return 1;
	d = open_depth++;
	if (d >= REGION_DEPTH)
		return 0;
	idx = region_lookup(name);
	for (uint32_t k = 0; k < d && !again; k++)
		again = open_stack[k].idx == idx;
	t0 = lwm2_ticks();
	open_stack[d] = (struct open_region){t0, idx, again};
	return 0;
}

LWM2_EXPORT int lwm2_region_leave(void)
{
	uint64_t now = lwm2_ticks(), dt;
	const struct open_region *o;
	uint32_t d;

	if (!open_depth)
		return atomic_load_explicit(&lwm2_on, memory_order_relaxed) ? -1 : 1;
	d = --open_depth;
	if (d >= REGION_DEPTH)
		return 0;
	o = &open_stack[d];
	dt = now - o->t0;
	if (o->idx == REGION_LOST) {
		atomic_fetch_add_explicit(&lost_calls, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&lost_ticks, dt, memory_order_relaxed);
		return 0;
	}
	atomic_fetch_add_explicit(&regions[o->idx].calls, 1, memory_order_relaxed);
	if (!o->again)
		atomic_fetch_add_explicit(&regions[o->idx].ticks, dt, memory_order_relaxed);
	return 0;
}

/* out[0]: the region's time in seconds, summed over the process's threads;
 * out[1]: its calls (both of the calls that ended).  Returns the values
 * filled, 0 for a name never entered, -1 when not measuring. */
LWM2_EXPORT int lwm2_region_read(const char *name, double *out, int n)
{
	uint64_t ticks = 0, calls = 0;
	int got = 0;

	if (!atomic_load_explicit(&lwm2_on, memory_order_relaxed) || !name || !out || n < 0)
		return -1;
	/* a name may have two slots (region_find): both count */
	for (uint32_t i = 0; i < REGIONS_LIVE; i++) {
		struct region *r = &regions[i];

		if (atomic_load_explicit(&r->state, memory_order_acquire) != SLOT_NAMED ||
		    !same_name(r, name))
			continue;
		ticks += atomic_load_explicit(&r->ticks, memory_order_relaxed);
		calls += atomic_load_explicit(&r->calls, memory_order_relaxed);
		got = 1;
	}
	if (!got)
		return 0;
	if (n > 0)
		out[0] = (double)lwm2_ticks_to_ns_fresh(ticks) / 1e9;
	if (n > 1)
		out[1] = (double)calls;
	return n < 2 ? n : 2;
}

bool lwm2_regions_used(void)
{
	return atomic_load_explicit(&regions_named, memory_order_relaxed) != 0 ||
	       atomic_load_explicit(&lost_calls, memory_order_relaxed) != 0;
}

/* The region of slot i as the record has it. */
static void entry_of(uint32_t i, struct lwm2_region_entry *e)
{
	memcpy(e->name, regions[i].name, sizeof(e->name));
	e->calls = atomic_load_explicit(&regions[i].calls, memory_order_relaxed);
	e->ns = lwm2_ticks_to_ns(atomic_load_explicit(&regions[i].ticks, memory_order_relaxed));
}

/* The record's regions: the busiest LWM2_REGIONS_MAX by time, a name's
 * two slots merged, the others folded.  Signal-safe (the final write of a
 * signal): no allocation, no sort of the library's. */
void lwm2_regions_fill(struct lwm2_rank_record *r)
{
	uint64_t taken[REGIONS_LIVE / 64] = {0};
	uint64_t lost = atomic_load_explicit(&lost_calls, memory_order_relaxed);

	r->regions_n = 0;
	r->regions_folded = 0;
	r->regions_other_calls = 0;
	r->regions_other_ns = 0;
	memset(r->regions, 0, sizeof(r->regions));
	if (!lwm2_regions_used())
		return;
	for (;;) {
		uint64_t best_ticks = 0;
		uint32_t best = REGIONS_LIVE;
		struct lwm2_region_entry e, *dup = NULL;

		for (uint32_t i = 0; i < REGIONS_LIVE; i++) {
			uint64_t t;

			if ((taken[i / 64] >> (i % 64)) & 1 ||
			    atomic_load_explicit(&regions[i].state, memory_order_acquire) !=
			        SLOT_NAMED ||
			    !atomic_load_explicit(&regions[i].calls, memory_order_relaxed))
				continue;
			t = atomic_load_explicit(&regions[i].ticks, memory_order_relaxed);
			if (best == REGIONS_LIVE || t > best_ticks) {
				best = i;
				best_ticks = t;
			}
		}
		if (best == REGIONS_LIVE)
			break;
		taken[best / 64] |= 1ull << (best % 64);
		entry_of(best, &e);
		for (uint32_t k = 0; k < r->regions_n && !dup; k++)
			if (strcmp(r->regions[k].name, e.name) == 0)
				dup = &r->regions[k];
		if (dup) {
			dup->calls += e.calls;
			dup->ns += e.ns;
		} else if (r->regions_n < LWM2_REGIONS_MAX) {
			r->regions[r->regions_n++] = e;
		} else {
			r->regions_folded++;
			r->regions_other_calls += e.calls;
			r->regions_other_ns += e.ns;
		}
	}
	if (lost) {
		/* the names beyond the table: at least one more */
		r->regions_folded++;
		r->regions_other_calls += lost;
		r->regions_other_ns +=
		    lwm2_ticks_to_ns(atomic_load_explicit(&lost_ticks, memory_order_relaxed));
	}
}

/* The child of fork starts its counts at zero, as its counters do; the
 * names stay, and the forking thread's open regions start now. */
void lwm2_regions_fork_child(void)
{
	uint64_t now = lwm2_ticks();

	for (uint32_t i = 0; i < REGIONS_LIVE; i++) {
		atomic_store_explicit(&regions[i].calls, 0, memory_order_relaxed);
		atomic_store_explicit(&regions[i].ticks, 0, memory_order_relaxed);
	}
	atomic_store_explicit(&lost_calls, 0, memory_order_relaxed);
	atomic_store_explicit(&lost_ticks, 0, memory_order_relaxed);
	for (uint32_t k = 0; k < open_depth && k < REGION_DEPTH; k++)
		open_stack[k].t0 = now;
}
