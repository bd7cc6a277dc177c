/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sanitizer runtime a program was built with, if any.  Such a runtime
 * intercepts the very calls the library wraps and wants to come first:
 * the library steps aside and leaves the user's debugging tool alone (the
 * SPANK plugin turns off ASan's link-order check, which would end the
 * program before this runs).  A library built with a sanitizer itself
 * (the test suite's sanitizer builds) finds its own runtime: it measures.
 *
 * Asked of every process at its start, so it is cheap: only the main
 * program and objects named like a sanitizer runtime are looked at, in
 * their own GNU hash tables (elf_sym.h: a bloom filter rejects nearly
 * every miss), not with four dlsym calls that search every loaded object.
 */
#include "core_int.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LWM2_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define LWM2_SANITIZED 1
#endif
#endif

#ifndef LWM2_SANITIZED
#include "elf_sym.h"

static const char *const san_syms[][2] = {
    {"__asan_init", "AddressSanitizer"},
    {"__tsan_init", "ThreadSanitizer"},
    {"__msan_init", "MemorySanitizer"},
    {"__hwasan_init", "HWAddressSanitizer"},
};

struct san_probe {
	const char *found;
	bool unsure; /* an object without GNU hash: ask the loader */
};

static int san_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct san_probe *p = arg;
	const char *n = info->dlpi_name ? info->dlpi_name : "", *b = strrchr(n, '/');
	struct lwm2_elf_obj o;
	const ElfW(Sym) * sym;

	(void)size;
	b = b ? b + 1 : n;
	/* The main program (a runtime linked in statically, clang's way) and
	 * any object named like a sanitizer runtime (libasan.so,
	 * libclang_rt.asan-x86_64.so, ...); the vDSO and the rest are
	 * neither. */
	if (*n && !strstr(b, "san"))
		return 0;
	/* Without a GNU hash table to tell, the loader is asked. */
	if (!lwm2_elf_tables(info, &o)) {
		p->unsure = true;
		return 0;
	}
	o.versym = NULL; /* a definition of any version counts */
	for (size_t i = 0; i < sizeof(san_syms) / sizeof(san_syms[0]); i++)
		if (lwm2_elf_defs(&o, san_syms[i][0], lwm2_elf_hash(san_syms[i][0]), &sym) > 0) {
			p->found = san_syms[i][1];
			return 1;
		}
	return 0;
}
#endif

const char *lwm2_sanitizer_runtime(void)
{
#ifndef LWM2_SANITIZED
	struct san_probe p = {NULL, false};

	dl_iterate_phdr(san_object, &p);
	if (p.found || !p.unsure || !LWM2_HAVE_DL)
		return p.found;
	for (size_t i = 0; i < sizeof(san_syms) / sizeof(san_syms[0]); i++)
		if (dlsym(RTLD_DEFAULT, san_syms[i][0]))
			return san_syms[i][1];
#endif
	return NULL;
}
