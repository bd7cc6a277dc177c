/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rank record format: sealing, validation, slot choice, safe reading. */
#include "config.h"
#include "cpu_features.h"
#include "lwm2_record.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A two-slot file image with generations g0, g1 (0: slot never written). */
static char *make_file(uint32_t nslices, uint64_t g0, uint64_t g1, size_t *len)
{
	uint32_t cap = (uint32_t)lwm2_slot_capacity(nslices);
	char *buf = calloc(1, sizeof(struct lwm2_file_header) + 2 * (size_t)cap);
	uint64_t gens[2] = {g0, g1};

	lwm2_file_header_init((struct lwm2_file_header *)buf, cap);
	for (int i = 0; i < 2; i++) {
		struct lwm2_rank_record *r =
		    (void *)(buf + sizeof(struct lwm2_file_header) + (size_t)i * cap);
		if (!gens[i])
			continue;
		r->generation = gens[i];
		r->nslices = nslices;
		r->slice_length_s = 10;
		r->pid = 1000 + i;
		strcpy(r->hostname, "n1");
		r->counters[LWM2_C_posix_write_bytes] = 42 + (uint64_t)i;
		for (uint32_t s = 0; s < nslices; s++)
			((struct lwm2_slice *)(r + 1))[s].counters[LWM2_C_mpi_p2p_calls] = s;
		lwm2_record_seal(r);
	}
	*len = sizeof(struct lwm2_file_header) + 2 * (size_t)cap;
	return buf;
}

static struct lwm2_rank_record *slot(char *buf, int i)
{
	struct lwm2_file_header *h = (void *)buf;
	return (void *)(buf + h->header_size + (size_t)i * h->slot_capacity);
}

/* Names come from the X-macros, in order. */
static void counter_names(void)
{
	is_str(lwm2_counter_names[LWM2_C_posix_read_calls], "posix_read_calls",
	       "first counter name");
	is_str(lwm2_counter_units[LWM2_C_mpi_coll_ns], "ns", "time counters have unit ns");
	is_str(lwm2_earmark_names[LWM2_EARMARK_mpi], "mpi", "earmark names");
}

/* Known CRC-32C check value. */
static void checksums_cpuid(void)
{
	is_int(lwm2_checksum("123456789", 9), 0xe3069283, "CRC-32C check value");
	is_int(lwm2_checksum_portable("123456789", 9), 0xe3069283,
	       "CRC-32C check value, table path");
	{
		/* The table (crc32c_table.h, generated): the CRC of the one
		 * byte b reads its entry b ^ 0xff, checked bit by bit. */
		int same = 1;

		for (unsigned b = 0; b < 256; b++) {
			uint32_t c = ~0u ^ b;
			unsigned char byte = (unsigned char)b;

			for (int k = 0; k < 8; k++)
				c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
			same &= lwm2_checksum_portable(&byte, 1) == ~c;
		}
		ok(same, "CRC-32C table: every entry");
	}
	{
		/* Every length and alignment the instruction path treats
		 * apart (head bytes, 8-byte words, tail bytes). */
		unsigned char data[300];
		int same = 1;

		for (size_t i = 0; i < sizeof(data); i++)
			data[i] = (unsigned char)(i * 131u + 7u);
		for (size_t off = 0; off < 8; off++)
			for (size_t n = 0; off + n <= sizeof(data); n += 13)
				if (lwm2_checksum(data + off, n) !=
				    lwm2_checksum_portable(data + off, n))
					same = 0;
		ok(same, "table path and the CPU's path agree on every length and alignment");
	}
#ifdef LWM2_X86
	/* What glibc's copy of CPUID says (or the fallback, without the
	 * header) against the instruction itself. */
	ok(lwm2_cpu_sse42() == lwm2_cpuid_sse42(), "SSE 4.2 detection agrees with CPUID (%d)",
	   (int)lwm2_cpuid_sse42());
	ok(lwm2_cpu_invariant_tsc() == lwm2_cpuid_invariant_tsc(),
	   "invariant TSC detection agrees with CPUID (%d)", (int)lwm2_cpuid_invariant_tsc());
#else
	skip("not x86: no CPUID");
	skip("not x86: no CPUID");
#endif
}

static void slots(void)
{
	char err[200];
	size_t len;
	char *buf;
	const struct lwm2_rank_record *r;

	buf = make_file(3, 5, 6, &len);
	r = lwm2_record_pick(buf, len, err, sizeof(err));
	ok(r != NULL, "valid two-slot file is read");
	is_int(r ? r->pid : -1, 1001, "newest generation wins");
	is_int(r ? (long long)lwm2_record_slices(r)[2].counters[LWM2_C_mpi_p2p_calls] : -1, 2,
	       "slice series is read");

	/* A torn write of the newest slot falls back to the older one. */
	slot(buf, 1)->counters[LWM2_C_posix_write_bytes] ^= 1;
	r = lwm2_record_pick(buf, len, err, sizeof(err));
	is_int(r ? r->pid : -1, 1000, "corrupt newest slot: the other slot is used");

	slot(buf, 0)->nslices = 100000;
	r = lwm2_record_pick(buf, len, err, sizeof(err));
	ok(r == NULL, "both slots bad: rejected");
	ok(strstr(err, "no valid slot") != NULL, "reason given: %s", err);
	free(buf);

	buf = make_file(0, 7, 0, &len);
	r = lwm2_record_pick(buf, len, err, sizeof(err));
	is_int(r ? r->pid : -1, 1000, "one slot never written: the other is used");
	r = lwm2_record_pick(buf, 10, err, sizeof(err));
	ok(r == NULL && strstr(err, "truncated"), "truncated file rejected: %s", err);
	buf[0] = 'X';
	r = lwm2_record_pick(buf, len, err, sizeof(err));
	ok(r == NULL && strstr(err, "magic"), "bad magic rejected: %s", err);
	free(buf);

	/* Unterminated strings are rejected (a reader prints them). */
	buf = make_file(1, 1, 0, &len);
	memset(slot(buf, 0)->hostname, 'a', sizeof(slot(buf, 0)->hostname));
	lwm2_record_seal(slot(buf, 0));
	r = lwm2_record_pick(buf, len, err, sizeof(err));
	ok(r == NULL && strstr(err, "unterminated"), "unterminated hostname rejected: %s", err);
	free(buf);
}

/* The container (version 3): LWM2_CONTAINER split at its first ':',
 * each part cut to its field at a character's start, terminated. */
static void container_fields(void)
{
	char err[200];
	size_t len;
	char *buf;
	const struct lwm2_rank_record *r;

	struct lwm2_rank_record *c = calloc(1, sizeof(*c));
	char v[400], want[LWM2_CONTAINER_IMAGE_LEN];

	lwm2_record_set_container(c, "charliecloud:/img/x");
	ok(!strcmp(c->container_runtime, "charliecloud") && !strcmp(c->container_image, "/img/x"),
	   "container: charliecloud:/img/x");
	lwm2_record_set_container(c, "podman:docker.io/library/debian:11");
	ok(!strcmp(c->container_runtime, "podman") &&
	       !strcmp(c->container_image, "docker.io/library/debian:11"),
	   "container: split at the first ':' (podman's docker.io/library/debian:11)");
	lwm2_record_set_container(c, "enroot");
	ok(!strcmp(c->container_runtime, "enroot") && !c->container_image[0],
	   "container: a runtime without an image");
	lwm2_record_set_container(c, ":/img/x");
	ok(!c->container_runtime[0] && !strcmp(c->container_image, "/img/x"),
	   "container: an image without a runtime");
	lwm2_record_set_container(c, "a-runtime-name-longer-than-its-field:/i");
	ok(!strcmp(c->container_runtime, "a-runtime-name-") && !strcmp(c->container_image, "/i"),
	   "container: a long runtime cut to %zu bytes, the image still found",
	   sizeof(c->container_runtime) - 1);
	/* 300 bytes of image with quotes, newlines and ':' */
	snprintf(v, sizeof(v), "apptainer:");
	for (size_t k = strlen(v); k < 310; k++)
		v[k] = "/\"x\n:y'"[k % 7];
	v[310] = '\0';
	lwm2_record_set_container(c, v);
	memcpy(want, v + 10, sizeof(want) - 1);
	want[sizeof(want) - 1] = '\0';
	ok(!strcmp(c->container_runtime, "apptainer") && !strcmp(c->container_image, want) &&
	       strlen(c->container_image) == LWM2_CONTAINER_IMAGE_LEN - 1,
	   "container: a 300-byte image with quotes and newlines cut to %d bytes",
	   LWM2_CONTAINER_IMAGE_LEN - 1);
	/* a two-byte character across the cut is left out whole */
	memset(v, 'a', sizeof(v));
	memcpy(v, "bwrap:", 6);
	memcpy(v + 6 + LWM2_CONTAINER_IMAGE_LEN - 2, "\xc3\xa9", 2);
	v[6 + LWM2_CONTAINER_IMAGE_LEN + 5] = '\0';
	lwm2_record_set_container(c, v);
	is_int(strlen(c->container_image), LWM2_CONTAINER_IMAGE_LEN - 2,
	       "container: no half UTF-8 character at the cut");
	lwm2_record_set_container(c, "");
	ok(!c->container_runtime[0] && !c->container_image[0], "container: empty value");
	lwm2_record_set_container(c, NULL);
	ok(!c->container_runtime[0] && !c->container_image[0], "container: no value");
	free(c);

	buf = make_file(1, 1, 0, &len);
	memset(slot(buf, 0)->container_image, 'a', LWM2_CONTAINER_IMAGE_LEN);
	lwm2_record_seal(slot(buf, 0));
	r = lwm2_record_pick(buf, len, err, sizeof(err));
	ok(r == NULL && strstr(err, "unterminated container"),
	   "unterminated container image rejected: %s", err);
	free(buf);
}

/* Reading from disk: symlinks and non-regular files are refused. */
static void read_from_disk(void)
{
	char err[200];
	size_t len;
	char *buf;

	char dir[] = "/tmp/lwm2-record-test-XXXXXX";
	char path[256], link[256];
	struct lwm2_rank_record *copy = NULL;
	int fd;

	ok(mkdtemp(dir) != NULL, "scratch directory");
	buf = make_file(2, 3, 0, &len);
	snprintf(path, sizeof(path), "%s/rec", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	ok(fd >= 0 && write(fd, buf, len) == (ssize_t)len, "record written");
	close(fd);
	ok(lwm2_record_read_file(AT_FDCWD, path, &copy, err, sizeof(err)) == 0, "record file read");
	is_int(copy ? copy->nslices : 0, 2, "copy holds the slices");
	free(copy);
	snprintf(link, sizeof(link), "%s/link", dir);
	ok(symlink(path, link) == 0, "symlink made");
	ok(lwm2_record_read_file(AT_FDCWD, link, &copy, err, sizeof(err)) != 0 && errno == ELOOP,
	   "symlink refused (O_NOFOLLOW)");
	ok(lwm2_record_read_file(AT_FDCWD, dir, &copy, err, sizeof(err)) != 0,
	   "directory refused: %s", err);
	unlink(link);
	unlink(path);
	rmdir(dir);
	free(buf);
}

int main(void)
{
	counter_names();
	checksums_cpuid();
	slots();
	container_fields();
	read_from_disk();
	return done_testing();
}
