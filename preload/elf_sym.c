/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The real functions, found fast.  dlsym(RTLD_NEXT) costs about 900
 * instructions a name (the caller's object looked up, an error catcher set
 * up, every object's hash table searched), and the modules resolve some
 * 60 names at every process start.  The objects loaded with the program
 * after this library (libc, libpthread, an MPI library it links) are
 * searched here in their own GNU hash tables instead (elf_sym.h), in load
 * order, which is the order dlsym(RTLD_NEXT) searches them in: a bloom
 * filter rejects most objects in a few instructions.  Anything unusual (an
 * object without a GNU hash table, an indirect function, a thread-local or
 * unique symbol, several default versions of one name) goes to dlsym as
 * before, and so does every name not found once an object was loaded since
 * (dlopen'ed ones may be local).  Signal-safe: memory reads only.  Under
 * LWM2_DEBUG every answer is checked against dlsym.
 */
#include "core_int.h"
#include "elf_sym.h"

#include <dlfcn.h>
#include <stdatomic.h>

static __thread int resolving __attribute__((tls_model("initial-exec")));

#define NEXT_MAX 32
static struct lwm2_elf_obj next_objs[NEXT_MAX];
static int n_next;
static bool next_complete;           /* every object after this library is in next_objs */
static unsigned long long next_adds; /* objects loaded when next_objs was taken */
static _Atomic int next_state;       /* 0: not yet, 1: being built, 2: ready, 3: not usable */

/* The symbol of name in o: 1 with *sym set when there is exactly one
 * default definition, 0 when there is none, -1 when dlsym must tell. */
static int obj_lookup(const struct lwm2_elf_obj *o, const char *name, uint32_t h,
                      const ElfW(Sym) * *sym)
{
	int found = lwm2_elf_defs(o, name, h, sym), type, bind;

	if (found != 1)
		return found > 1 ? -1 : 0;
	type = LWM2_ST_TYPE((*sym)->st_info);
	bind = LWM2_ST_BIND((*sym)->st_info);
	if ((type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE) ||
	    (bind != STB_GLOBAL && bind != STB_WEAK) || !(*sym)->st_value)
		return -1;
	return 1;
}

struct next_scan {
	uintptr_t self; /* an address in this library */
	bool past_self;
};

static int next_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct next_scan *sc = arg;
	bool self = false;

	(void)size;
	for (int k = 0; k < info->dlpi_phnum && !self; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];

		self = ph->p_type == PT_LOAD && sc->self >= info->dlpi_addr + ph->p_vaddr &&
		       sc->self < info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (self) {
		sc->past_self = true;
		return 0;
	}
	/* The vDSO is no object dlsym(RTLD_NEXT) searches. */
	if (!sc->past_self || (info->dlpi_name && strstr(info->dlpi_name, "linux-vdso")))
		return 0;
	if (n_next == NEXT_MAX || !lwm2_elf_tables(info, &next_objs[n_next])) {
		next_complete = false;
		return 1; /* from here on, dlsym alone keeps the order right */
	}
	n_next++;
	return 0;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *adds = arg;

	*adds = size >= offsetof(struct dl_phdr_info, dlpi_subs) ? info->dlpi_adds : 0;
	return 1;
}

/* Objects loaded so far (dlopen adds to it); 0 when not known. */
static unsigned long long loaded_adds(void)
{
	unsigned long long adds = 0;

	dl_iterate_phdr(first_object, &adds);
	return adds;
}

static void next_build(void)
{
	struct next_scan sc = {(uintptr_t)&next_build, false};
	int expect = 0;

	if (!atomic_compare_exchange_strong(&next_state, &expect, 1))
		return;
	next_complete = true;
	dl_iterate_phdr(next_object, &sc);
	next_adds = loaded_adds();
	atomic_store(&next_state, sc.past_self ? 2 : 3);
}

/* The address of name; NULL with *ask set when dlsym must tell. */
static void *next_lookup(const char *name, bool *ask)
{
	uint32_t h = lwm2_elf_hash(name);

	*ask = true;
	if (atomic_load_explicit(&next_state, memory_order_acquire) != 2)
		return NULL;
	for (int i = 0; i < n_next; i++) {
		const ElfW(Sym) *s = NULL;
		int r = obj_lookup(&next_objs[i], name, h, &s);

		if (r < 0)
			return NULL;
		if (r > 0) {
			*ask = false;
			return (void *)(next_objs[i].base + s->st_value);
		}
	}
	/* Not defined by any object there is (the libraries of io_uring or
	 * libaio a program does not use): dlsym would search them all again
	 * for nothing, unless something was loaded since. */
	*ask = !next_complete || !next_adds || loaded_adds() != next_adds;
	return NULL;
}

bool lwm2_real_signal_safe(void)
{
	if (atomic_load_explicit(&next_state, memory_order_acquire) == 0 && !resolving) {
		resolving = 1;
		next_build();
		resolving = 0;
	}
	return atomic_load_explicit(&next_state, memory_order_acquire) == 2 && next_complete &&
	       next_adds && !lwm2_p.debug;
}

void *lwm2_real(const char *name)
{
	bool ask;
	void *p;

	if (resolving)
		return NULL;
	resolving = 1;
	if (atomic_load_explicit(&next_state, memory_order_relaxed) == 0)
		next_build();
	p = next_lookup(name, &ask);
	if ((ask || lwm2_p.debug) && LWM2_HAVE_DL) {
		void *d = dlsym(RTLD_NEXT, name);

		if (!ask && p != d)
			lwm2_debug("lwm2: start: the fast lookup of %s found %p, dlsym %p", name, p,
			           d);
		p = d;
	}
	resolving = 0;
	return p;
}
