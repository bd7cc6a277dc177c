/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hand-built rank records for the digest tests. */
#ifndef LWM2_TEST_MKRECORD_H
#define LWM2_TEST_MKRECORD_H

#include "lwm2_record.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline struct lwm2_rank_record *mk_rec(uint32_t nslices, int32_t rank, const char *host)
{
	struct lwm2_rank_record *r =
	    calloc(1, sizeof(*r) + (size_t)nslices * sizeof(struct lwm2_slice));

	r->nslices = nslices;
	r->slice_length_s = 10;
	r->mpi_rank = rank;
	r->task_id = rank;
	r->pid = 1000 + rank;
	r->flags = LWM2_F_MPI;
	r->threads_total = 1;
	r->start_ns = 1700000000000000000ll;
	r->end_ns = r->start_ns + 10000000000ll; /* 10 s */
	strcpy(r->hostname, host);
	strcpy(r->executable, "/opt/app/bin/solver");
	return r;
}

/* A two-slot file holding r in slot 1 (slot 0 never written). */
static inline int write_rec(int dirfd, const char *name, struct lwm2_rank_record *r)
{
	uint32_t cap = (uint32_t)lwm2_slot_capacity(r->nslices);
	size_t len = sizeof(struct lwm2_file_header) + 2 * (size_t)cap;
	char *buf = calloc(1, len);
	struct lwm2_rank_record *slot = (void *)(buf + sizeof(struct lwm2_file_header) + cap);
	int fd, rc = -1;

	lwm2_file_header_init((struct lwm2_file_header *)buf, cap);
	memcpy(slot, r, sizeof(*r) + (size_t)r->nslices * sizeof(struct lwm2_slice));
	slot->generation = 7;
	lwm2_record_seal(slot);
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0 && write(fd, buf, len) == (ssize_t)len)
		rc = 0;
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

static inline struct lwm2_slice *mk_slices(struct lwm2_rank_record *r)
{
	return (struct lwm2_slice *)(void *)(r + 1);
}

#endif /* LWM2_TEST_MKRECORD_H */
