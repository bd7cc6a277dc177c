/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rank record checks shared by the writer (preload) and every reader.
 * Readers run as root on data a user's process wrote: every length and
 * count is checked before it is used, and nothing here trusts a field.
 */
#include "lwm2_record.h"
#include "lwm2_version.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config.h"
#include "cpu_features.h"

_Static_assert(LWM2_RECORD_HEAD % 8 == 0 && LWM2_RECORD_TAIL_V1 % 8 == 0 &&
                   LWM2_RECORD_TAIL_V2 % 8 == 0 && LWM2_RECORD_TAIL_V3 % 8 == 0 &&
                   LWM2_RECORD_TAIL_V4 % 8 == 0 && LWM2_RECORD_TAIL % 8 == 0,
               "counters and slices of 64-bit counters follow the head and the tail");

const char *const lwm2_counter_names[LWM2_NCOUNTERS] = {
#define LWM2_X_NAME(name, unit, desc) #name,
    LWM2_COUNTERS(LWM2_X_NAME)
#undef LWM2_X_NAME
};

const char *const lwm2_counter_units[LWM2_NCOUNTERS] = {
#define LWM2_X_UNIT(name, unit, desc) unit,
    LWM2_COUNTERS(LWM2_X_UNIT)
#undef LWM2_X_UNIT
};

const char *const lwm2_counter_descriptions[LWM2_NCOUNTERS] = {
#define LWM2_X_DESC(name, unit, desc) desc,
    LWM2_COUNTERS(LWM2_X_DESC)
#undef LWM2_X_DESC
};

const char *const lwm2_earmark_names[LWM2_NEARMARKS] = {
#define LWM2_X_NAME(name, desc) #name,
    LWM2_EARMARKS(LWM2_X_NAME)
#undef LWM2_X_NAME
};

const char *const lwm2_group_names[LWM2_NGROUPS] = {"posix", "mpi", "sampling", "hwc", "cuda"};

const char *const lwm2_thread_counter_names[LWM2_THREAD_NCOUNTERS] = {
#define LWM2_X_NAME(name, unit, desc) #name,
    LWM2_THREAD_COUNTERS(LWM2_X_NAME)
#undef LWM2_X_NAME
};

/* CRC-32C (Castagnoli), table driven; the table is constant data (written
 * by crc32c_gen.py) so the function stays signal-safe. */
#include "crc32c_table.h"

#if defined(__x86_64__)
/* The SSE 4.2 crc32 instruction computes this very CRC, eight bytes per
 * instruction: reading 256 records of 256 slices checksums some 40 MB. */
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const unsigned char *p,
                                                            size_t len)
{
	uint64_t c = crc;

	for (; len && ((uintptr_t)p & 7); len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v;
		memcpy(&v, p, sizeof(v));
		c = __builtin_ia32_crc32di(c, v);
	}
	for (; len; len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

static uint32_t crc_table_update(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

static uint32_t crc_update(uint32_t crc, const unsigned char *p, size_t len)
{
#if defined(__x86_64__)
	/* Not libgcc's __builtin_cpu_supports: it would run cpuid in a
	 * constructor at every load of liblwm2.so (cpu_features.h says why
	 * that is slow). */
	if (lwm2_cpu_sse42())
		return crc_sse42(crc, p, len);
#endif
	return crc_table_update(crc, p, len);
}

uint32_t lwm2_checksum_portable(const void *data, size_t len)
{
	return ~crc_table_update(~0u, data, len);
}

uint32_t lwm2_checksum(const void *data, size_t len)
{
	return ~crc_update(~0u, data, len);
}

uint32_t lwm2_record_checksum(const struct lwm2_rank_record *r)
{
	const unsigned char *p = (const unsigned char *)r;
	size_t off = offsetof(struct lwm2_rank_record, checksum);
	static const unsigned char zero[sizeof(r->checksum)];
	uint32_t crc = ~0u;

	crc = crc_update(crc, p, off);
	crc = crc_update(crc, zero, sizeof(zero));
	crc = crc_update(crc, p + off + sizeof(r->checksum),
	                 r->total_size - off - sizeof(r->checksum));
	return ~crc;
}

void lwm2_file_header_init(struct lwm2_file_header *h, uint32_t slot_capacity)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, LWM2_FILE_MAGIC, sizeof(h->magic));
	h->version = LWM2_RECORD_VERSION;
	h->header_size = sizeof(*h);
	h->slot_capacity = slot_capacity;
	h->nslots = 2;
}

void lwm2_record_seal(struct lwm2_rank_record *r)
{
	memcpy(r->magic, LWM2_RECORD_MAGIC, sizeof(r->magic));
	r->version = LWM2_RECORD_VERSION;
	r->record_size = sizeof(*r);
	r->ncounters = LWM2_NCOUNTERS;
	r->nearmarks = LWM2_NEARMARKS;
	r->total_size = (uint32_t)(sizeof(*r) + (size_t)r->nslices * sizeof(struct lwm2_slice));
	r->checksum = lwm2_record_checksum(r);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static bool terminated(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

/*
 * A record on disk is its head (LWM2_RECORD_HEAD bytes, every field before
 * the counters: the same in every version), ncounters counters, its tail
 * (the fields after the counters, which only grow, one version after the
 * other) and nslices slices of ncounters counters each (lwm2_record.h says
 * why).  The tail of each version this reader knows; a newer version's is
 * at least this version's, and what lies beyond it is skipped.
 */
static const size_t tail_size[LWM2_RECORD_VERSION + 1] = {
    [1] = LWM2_RECORD_TAIL_V1, [2] = LWM2_RECORD_TAIL_V2, [3] = LWM2_RECORD_TAIL_V3,
    [4] = LWM2_RECORD_TAIL_V4, [5] = LWM2_RECORD_TAIL,
};

/* A field of the tail of r, a record of nc counters, by its place in this
 * build's struct. */
#define TAIL_AT(r, nc, field)                                                                      \
	((const char *)(r) + LWM2_RECORD_HEAD + 8 * (size_t)(nc) +                                 \
	 (offsetof(struct lwm2_rank_record, field) - offsetof(struct lwm2_rank_record, language)))

int lwm2_record_validate(const void *slot, size_t avail, char *err, size_t errlen)
{
	const struct lwm2_rank_record *r = slot;
	uint64_t need, counters, tail;
	uint32_t build_id_len;

	/* The head is where every version has it. */
	if (avail < LWM2_RECORD_HEAD)
		return fail(err, errlen, "record truncated: %zu of %zu bytes", avail,
		            (size_t)LWM2_RECORD_HEAD);
	if (memcmp(r->magic, LWM2_RECORD_MAGIC, sizeof(r->magic)) != 0)
		return fail(err, errlen, "bad record magic");
	/* A newer version is read: its tail only adds fields. */
	if (r->version < LWM2_RECORD_VERSION_MIN &&
	    lwm2_version_check("record", r->version, LWM2_RECORD_VERSION_MIN, LWM2_RECORD_VERSION,
	                       err, errlen))
		return -1;
	if (r->ncounters < LWM2_NCOUNTERS_V3 || r->ncounters > LWM2_NCOUNTERS_LIMIT ||
	    r->nearmarks != LWM2_NEARMARKS)
		return fail(err, errlen,
		            "record layout differs (size %u, %u counters, %u earmarks)",
		            r->record_size, r->ncounters, r->nearmarks);
	counters = 8 * (uint64_t)r->ncounters;
	tail = r->record_size >= LWM2_RECORD_HEAD + counters
	           ? r->record_size - LWM2_RECORD_HEAD - counters
	           : UINT64_MAX;
	if (r->version <= LWM2_RECORD_VERSION
	        ? tail != tail_size[r->version]
	        : tail < LWM2_RECORD_TAIL || tail > LWM2_RECORD_TAIL_LIMIT || tail % 8 != 0)
		return fail(err, errlen, "record layout differs (version %u, size %u, %u counters)",
		            r->version, r->record_size, r->ncounters);
	if (r->generation == 0)
		return fail(err, errlen, "record never written");
	if (r->nslices > LWM2_MAX_SLICES_LIMIT)
		return fail(err, errlen, "%u slices, more than the limit %u", r->nslices,
		            LWM2_MAX_SLICES_LIMIT);
	need = r->record_size + (uint64_t)r->nslices * counters;
	if (r->total_size != need)
		return fail(err, errlen, "total size %u does not match %u slices", r->total_size,
		            r->nslices);
	if (need > avail)
		return fail(err, errlen, "record of %llu bytes exceeds its slot of %zu",
		            (unsigned long long)need, avail);
	if (lwm2_record_checksum(r) != r->checksum)
		return fail(err, errlen, "checksum mismatch");
	if (r->nslices > 0 && r->slice_length_s == 0)
		return fail(err, errlen, "slices with zero length");
	if (!terminated(r->hostname, sizeof(r->hostname)) ||
	    !terminated(r->executable, sizeof(r->executable)) ||
	    !terminated(r->mpi_library, sizeof(r->mpi_library)))
		return fail(err, errlen, "unterminated string field");
	memcpy(&build_id_len, TAIL_AT(r, r->ncounters, build_id_len), sizeof(build_id_len));
	if (r->version >= 2 &&
	    (!terminated(TAIL_AT(r, r->ncounters, runtime_libs), sizeof(r->runtime_libs)) ||
	     build_id_len > LWM2_BUILD_ID_MAX))
		return fail(err, errlen, "bad identity fields");
	if (r->version >= 3 &&
	    (!terminated(TAIL_AT(r, r->ncounters, container_runtime),
	                 sizeof(r->container_runtime)) ||
	     !terminated(TAIL_AT(r, r->ncounters, container_image), sizeof(r->container_image))))
		return fail(err, errlen, "unterminated container field");
	if (r->version >= 4 &&
	    !terminated(TAIL_AT(r, r->ncounters, hwc_events), sizeof(r->hwc_events)))
		return fail(err, errlen, "unterminated counter events");
	if (r->version >= 5) {
		uint32_t nreg;

		memcpy(&nreg, TAIL_AT(r, r->ncounters, regions_n), sizeof(nreg));
		if (nreg > LWM2_REGIONS_MAX)
			return fail(err, errlen, "%u named regions, more than %u", nreg,
			            LWM2_REGIONS_MAX);
		for (uint32_t i = 0; i < nreg; i++)
			if (!terminated(TAIL_AT(r, r->ncounters, regions) +
			                    i * sizeof(struct lwm2_region_entry),
			                LWM2_REGION_NAME_LEN))
				return fail(err, errlen, "unterminated region name");
		memcpy(&nreg, TAIL_AT(r, r->ncounters, threads_n), sizeof(nreg));
		if (nreg > LWM2_THREADS_MAX)
			return fail(err, errlen, "%u threads, more than %u", nreg,
			            LWM2_THREADS_MAX);
	}
	for (int g = 0; g < LWM2_NGROUPS; g++)
		if (!terminated(r->missing_reason[g], LWM2_REASON_LEN))
			return fail(err, errlen, "unterminated reason for %s", lwm2_group_names[g]);
	return 0;
}

const struct lwm2_rank_record *lwm2_record_pick(const void *buf, size_t len, char *err,
                                                size_t errlen)
{
	const struct lwm2_file_header *h = buf;
	const struct lwm2_rank_record *best = NULL;
	char why[2][120] = {"absent", "absent"};

	if (len < sizeof(*h)) {
		fail(err, errlen, "file truncated: %zu bytes", len);
		return NULL;
	}
	if (memcmp(h->magic, LWM2_FILE_MAGIC, sizeof(h->magic)) != 0) {
		fail(err, errlen, "not an lwm2 rank record (bad magic)");
		return NULL;
	}
	/* A newer version's file is read as its records are (its header
	 * keeps this size and two slots). */
	if (h->version < LWM2_RECORD_VERSION_MIN &&
	    lwm2_version_check("rank record file", h->version, LWM2_RECORD_VERSION_MIN,
	                       LWM2_RECORD_VERSION, err, errlen))
		return NULL;
	if (h->header_size != sizeof(*h) || h->nslots != 2) {
		fail(err, errlen, "unsupported file header (version %u, size %u, %u slots)",
		     h->version, h->header_size, h->nslots);
		return NULL;
	}
	/* A capacity off a multiple of 8 would misalign the second slot's
	 * 64-bit fields (undefined behaviour, a fault on strict platforms). */
	if (h->slot_capacity < LWM2_RECORD_V1_SIZE || h->slot_capacity > LWM2_RECORD_FILE_MAX ||
	    h->slot_capacity % 8 != 0) {
		fail(err, errlen, "bad slot capacity %u", h->slot_capacity);
		return NULL;
	}
	for (uint32_t i = 0; i < h->nslots; i++) {
		uint64_t off = h->header_size + (uint64_t)i * h->slot_capacity;
		const struct lwm2_rank_record *r;
		size_t avail;

		if (off >= len)
			break;
		avail = len - off;
		if (avail > h->slot_capacity)
			avail = h->slot_capacity;
		/* Slots sit at multiples of the page-rounded capacity from a
		 * 64-byte header, so they are 8-byte aligned. */
		r = (const void *)((const char *)buf + off);
		if (lwm2_record_validate(r, avail, why[i], sizeof(why[i])) != 0)
			continue;
		if (!best || r->generation > best->generation)
			best = r;
	}
	if (!best)
		fail(err, errlen, "no valid slot: slot 0: %s; slot 1: %s", why[0], why[1]);
	return best;
}

int lwm2_record_read_file(int dirfd, const char *path, struct lwm2_rank_record **out, char *err,
                          size_t errlen)
{
	const struct lwm2_rank_record *r;
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd, saved;

	*out = NULL;
	fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, "open: %s", strerror(errno));
	if (fstat(fd, &st) != 0) {
		saved = errno;
		fail(err, errlen, "stat: %s", strerror(errno));
		goto out_errno;
	}
	if (!S_ISREG(st.st_mode)) {
		saved = EINVAL;
		fail(err, errlen, "not a regular file");
		goto out_errno;
	}
	if (st.st_size > (off_t)LWM2_RECORD_FILE_MAX) {
		saved = EFBIG;
		fail(err, errlen, "file of %lld bytes exceeds the limit of %u",
		     (long long)st.st_size, LWM2_RECORD_FILE_MAX);
		goto out_errno;
	}
	buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (!buf) {
		saved = errno;
		fail(err, errlen, "out of memory");
		goto out_errno;
	}
	/* The file may shrink or grow while we read; take what is there. */
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			saved = errno;
			fail(err, errlen, "read: %s", strerror(errno));
			goto out_errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	r = lwm2_record_pick(buf, got, err, errlen);
	if (!r) {
		saved = EINVAL;
		goto out_errno;
	}
	*out = lwm2_record_upconvert(r);
	if (!*out) {
		saved = errno;
		fail(err, errlen, "out of memory");
		goto out_errno;
	}
	free(buf);
	close(fd);
	return 0;

out_errno:
	free(buf);
	close(fd);
	errno = saved;
	return -1;
}

struct lwm2_rank_record *lwm2_record_upconvert(const struct lwm2_rank_record *r)
{
	uint32_t nc = r->ncounters, keep = nc < LWM2_NCOUNTERS ? nc : LWM2_NCOUNTERS;
	size_t tail = r->record_size - LWM2_RECORD_HEAD - 8 * (size_t)nc;
	const char *from = (const char *)r + r->record_size;
	struct lwm2_slice *sl;
	struct lwm2_rank_record *n =
	    calloc(1, sizeof(*n) + (size_t)r->nslices * sizeof(struct lwm2_slice));

	if (!n)
		return NULL;
	/* The head as it is; the counters this build knows (those beyond are
	 * a newer build's: skipped); the tail this version knows (a newer
	 * version's further fields: skipped); the slices, counter by counter
	 * as the whole run's. */
	memcpy(n, r, LWM2_RECORD_HEAD);
	memcpy(n->counters, (const char *)r + LWM2_RECORD_HEAD, 8 * (size_t)keep);
	memcpy(&n->language, (const char *)r + LWM2_RECORD_HEAD + 8 * (size_t)nc,
	       tail < LWM2_RECORD_TAIL ? tail : LWM2_RECORD_TAIL);
	sl = (struct lwm2_slice *)(void *)(n + 1);
	for (uint32_t i = 0; i < r->nslices; i++)
		memcpy(sl[i].counters, from + (size_t)i * 8 * nc, 8 * (size_t)keep);
	/* Version 1 lacks the identity (its launch shape is "unknown"),
	 * versions 1 and 2 the container and the view queries, versions 1 to
	 * 3 the counters' events, versions 1 to 4 the named regions and the
	 * threads (empty
	 * and zero: calloc's zeros). */
	if (tail < LWM2_RECORD_TAIL_V2) {
		n->launch_ntasks = n->launch_nnodes = -1;
		n->launch_cpus_per_task = n->launch_omp_threads = -1;
	}
	lwm2_record_seal(n);
	/* A record of an older build lacks this build's later counters: they
	 * were not measured, which the copy says by its ncounters. */
	if (keep != LWM2_NCOUNTERS) {
		n->ncounters = keep;
		n->checksum = lwm2_record_checksum(n);
	}
	return n;
}

/* Bytes of s to keep in a field of cap bytes (the terminator included):
 * all of them if they fit, else as many as fit without splitting a UTF-8
 * character (an image name is shown as text: half a character would make
 * its end invalid).  A run of continuation bytes longer than a character
 * is not UTF-8 at all and is cut where it stands. */
static size_t fit(const char *s, size_t n, size_t cap)
{
	size_t k;

	if (n < cap)
		return n;
	k = cap - 1;
	for (size_t back = 0; back < 3 && k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80; back++)
		k--;
	return ((unsigned char)s[k] & 0xc0) == 0x80 ? cap - 1 : k;
}

void lwm2_record_set_container(struct lwm2_rank_record *r, const char *value)
{
	const char *colon;
	size_t rn, in;

	memset(r->container_runtime, 0, sizeof(r->container_runtime));
	memset(r->container_image, 0, sizeof(r->container_image));
	if (!value || !*value)
		return;
	/* The environment bounds the scan (an argument string is at most
	 * 128 KiB); only what fits is copied. */
	colon = strchr(value, ':');
	rn = colon ? (size_t)(colon - value) : strnlen(value, sizeof(r->container_runtime));
	rn = fit(value, rn, sizeof(r->container_runtime));
	memcpy(r->container_runtime, value, rn);
	if (!colon)
		return;
	in = strnlen(colon + 1, sizeof(r->container_image));
	in = fit(colon + 1, in, sizeof(r->container_image));
	memcpy(r->container_image, colon + 1, in);
}

size_t lwm2_summary_size(uint32_t ncounters)
{
	return sizeof(struct lwm2_summary_header) +
	       LWM2_SUMMARY_SLOTS *
	           (offsetof(struct lwm2_summary_exe, counters) + 8 * (size_t)ncounters) +
	       LWM2_SUMMARY_SLICES *
	           (offsetof(struct lwm2_summary_slice, s) + 8 * (size_t)ncounters);
}

int lwm2_summary_check(const void *buf, size_t len, char *err, size_t errlen)
{
	const struct lwm2_summary_header *h = buf;
	uint32_t nc;

	if (len < sizeof(*h)) {
		fail(err, errlen, "size %zu, expected %zu", len, (size_t)LWM2_SUMMARY_SIZE);
		return -1;
	}
	/* A summary lives as long as its step: only this version is read,
	 * another named; of any number of counters (a node upgraded while
	 * the step ran: lwm2_summary_upconvert). */
	if (memcmp(h->magic, LWM2_SUMMARY_MAGIC, sizeof(h->magic)) == 0 &&
	    lwm2_version_check("step summary", h->version, LWM2_SUMMARY_VERSION,
	                       LWM2_SUMMARY_VERSION, err, errlen))
		return -1;
	nc = h->ncounters;
	if (memcmp(h->magic, LWM2_SUMMARY_MAGIC, sizeof(h->magic)) != 0 ||
	    h->version != LWM2_SUMMARY_VERSION || h->header_size != sizeof(*h) ||
	    nc < LWM2_NCOUNTERS_V3 || nc > LWM2_NCOUNTERS_LIMIT ||
	    h->slot_size != offsetof(struct lwm2_summary_exe, counters) + 8 * (size_t)nc ||
	    h->nslots != LWM2_SUMMARY_SLOTS || h->nearmarks != LWM2_NEARMARKS ||
	    h->nslices != LWM2_SUMMARY_SLICES ||
	    h->slice_size != offsetof(struct lwm2_summary_slice, s) + 8 * (size_t)nc) {
		fail(err, errlen, "not a summary of this layout (version %u)", h->version);
		return -1;
	}
	if (len != lwm2_summary_size(nc)) {
		fail(err, errlen, "size %zu, expected %zu", len, lwm2_summary_size(nc));
		return -1;
	}
	return 0;
}

struct lwm2_summary_header *lwm2_summary_upconvert(const void *buf)
{
	const struct lwm2_summary_header *h = buf;
	uint32_t nc = h->ncounters, keep = nc < LWM2_NCOUNTERS ? nc : LWM2_NCOUNTERS;
	const char *from = (const char *)buf + sizeof(*h);
	struct lwm2_summary_header *n = calloc(1, LWM2_SUMMARY_SIZE);

	if (!n)
		return NULL;
	memcpy(n, h, sizeof(*h));
	n->slot_size = sizeof(struct lwm2_summary_exe);
	n->slice_size = sizeof(struct lwm2_summary_slice);
	/* as a record's copy: the counters this build knows and the summary
	 * had; from ncounters on, not measured */
	n->ncounters = keep;
	for (uint32_t i = 0; i < LWM2_SUMMARY_SLOTS; i++, from += h->slot_size)
		memcpy(&lwm2_summary_exes(n)[i], from,
		       offsetof(struct lwm2_summary_exe, counters) + 8 * (size_t)keep);
	for (uint32_t i = 0; i < LWM2_SUMMARY_SLICES; i++, from += h->slice_size)
		memcpy(&lwm2_summary_slices(n)[i], from,
		       offsetof(struct lwm2_summary_slice, s) + 8 * (size_t)keep);
	return n;
}
