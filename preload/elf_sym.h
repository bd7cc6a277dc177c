/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A loaded object's own dynamic symbol table, read in place: its GNU hash
 * table, symbols and names as the loader mapped them (dl_iterate_phdr).
 * Memory reads only, no allocation, no lock: signal-safe.  The resolver of
 * the real functions (elf_sym.c) and the sanitizer probe (sanitizer.c) ask
 * it; both run at every process start, so all here is inline.
 */
#ifndef LWM2_ELF_SYM_H
#define LWM2_ELF_SYM_H

#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if __ELF_NATIVE_CLASS == 64
#define LWM2_ST_TYPE ELF64_ST_TYPE
#define LWM2_ST_BIND ELF64_ST_BIND
#else
#define LWM2_ST_TYPE ELF32_ST_TYPE
#define LWM2_ST_BIND ELF32_ST_BIND
#endif

/* The tables of one object. */
struct lwm2_elf_obj {
	uintptr_t base;
	const uint32_t *gh;
	const ElfW(Sym) * symtab;
	const char *strtab;
	const ElfW(Half) * versym; /* NULL: every definition counts */
};

/* An address from the dynamic section: the loader has relocated it in
 * place unless it is still an offset into the object. */
static inline uintptr_t lwm2_elf_addr(uintptr_t base, ElfW(Addr) v)
{
	return v < base ? base + v : v;
}

/* The object's tables from its dynamic section; false when it lacks a GNU
 * hash table, a symbol table or a string table. */
static inline bool lwm2_elf_tables(const struct dl_phdr_info *info, struct lwm2_elf_obj *o)
{
	const ElfW(Dyn) *dyn = NULL;

	memset(o, 0, sizeof(*o));
	o->base = info->dlpi_addr;
	for (int k = 0; k < info->dlpi_phnum; k++)
		if (info->dlpi_phdr[k].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[k].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_GNU_HASH)
			o->gh = (const uint32_t *)lwm2_elf_addr(o->base, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_SYMTAB)
			o->symtab = (const ElfW(Sym) *)lwm2_elf_addr(o->base, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			o->strtab = (const char *)lwm2_elf_addr(o->base, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_VERSYM)
			o->versym = (const ElfW(Half) *)lwm2_elf_addr(o->base, dyn->d_un.d_ptr);
	}
	return o->gh && o->symtab && o->strtab;
}

static inline uint32_t lwm2_elf_hash(const char *name)
{
	uint32_t h = 5381;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	return h;
}

/* How many definitions of name (GNU hash h) o has, the last of them in
 * *sym; those of a hidden version (o->versym) are not counted. */
static inline int lwm2_elf_defs(const struct lwm2_elf_obj *o, const char *name, uint32_t h,
                                const ElfW(Sym) * *sym)
{
	const uint32_t *gh = o->gh;
	uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2], bloom_shift = gh[3];
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)(const void *)(gh + 4);
	const uint32_t *buckets, *chain;
	ElfW(Addr) word;
	int found = 0;

	if (!nbuckets || !bloom_size)
		return 0;
	buckets = (const uint32_t *)(const void *)(bloom + bloom_size);
	chain = buckets + nbuckets;
	word = bloom[(h / __ELF_NATIVE_CLASS) % bloom_size];
	if (!((word >> (h % __ELF_NATIVE_CLASS)) &
	      (word >> ((h >> bloom_shift) % __ELF_NATIVE_CLASS)) & 1))
		return 0; /* the bloom filter: almost every miss ends here */
	for (uint32_t i = buckets[h % nbuckets]; i >= symoffset; i++) {
		uint32_t ch = chain[i - symoffset];
		const ElfW(Sym) *s = &o->symtab[i];

		if ((ch | 1) == (h | 1) && strcmp(o->strtab + s->st_name, name) == 0 &&
		    s->st_shndx != SHN_UNDEF && !(o->versym && (o->versym[i] & 0x8000))) {
			*sym = s;
			found++;
		}
		if (ch & 1)
			break;
	}
	return found;
}

#endif /* LWM2_ELF_SYM_H */
