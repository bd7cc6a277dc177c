/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sums of counters that every view shows under one name: the digest's
 * metrics, the live view (lwm2 top, snapshots), the reports' slice plots
 * and the export read these lists, so that "time in MPI" or "bytes read"
 * means the same wherever it is shown.
 *
 *  - MPI time: the calls that complete MPI operations, MPI-IO included;
 *    MPI_Init and MPI_Finalize have their own counter (start-up and
 *    shutdown are no sign of a communication problem).
 *  - POSIX I/O time: read, write and metadata calls; MPI-IO reaches the
 *    files through them, so its time is not added to it again.
 *  - Bytes read and written: POSIX calls and asynchronous requests (data
 *    moved like any other); MPI-IO's bytes went through the POSIX calls.
 */
#ifndef LWM2_SUMS_H
#define LWM2_SUMS_H

#include <stddef.h>
#include <stdint.h>

#include "lwm2_record.h"

#define LWM2_MPI_TIME_COUNTERS(X)                                                                  \
	X(mpi_p2p_ns)                                                                              \
	X(mpi_coll_ns) X(mpiio_read_ns) X(mpiio_write_ns) X(mpiio_meta_ns) X(mpi_other_ns)
#define LWM2_POSIX_IO_TIME_COUNTERS(X) X(posix_read_ns) X(posix_write_ns) X(posix_meta_ns)
#define LWM2_READ_BYTES_COUNTERS(X)    X(posix_read_bytes) X(posix_aio_read_bytes)
#define LWM2_WRITE_BYTES_COUNTERS(X)   X(posix_write_bytes) X(posix_aio_write_bytes)

#define LWM2_X_SUM_ID(name) LWM2_C_##name,
static const enum lwm2_counter lwm2_mpi_time_ids[] = {LWM2_MPI_TIME_COUNTERS(LWM2_X_SUM_ID)};
static const enum lwm2_counter lwm2_posix_io_time_ids[] = {
    LWM2_POSIX_IO_TIME_COUNTERS(LWM2_X_SUM_ID)};
static const enum lwm2_counter lwm2_read_bytes_ids[] = {LWM2_READ_BYTES_COUNTERS(LWM2_X_SUM_ID)};
static const enum lwm2_counter lwm2_write_bytes_ids[] = {LWM2_WRITE_BYTES_COUNTERS(LWM2_X_SUM_ID)};
#undef LWM2_X_SUM_ID

/* The same lists by name, for the readers of JSON (the counters' names
 * are their record names, lwm2_counter_names). */
#define LWM2_X_SUM_NAME(name) #name,
static const char *const lwm2_mpi_time_names[] = {LWM2_MPI_TIME_COUNTERS(LWM2_X_SUM_NAME)};
static const char *const lwm2_read_bytes_names[] = {LWM2_READ_BYTES_COUNTERS(LWM2_X_SUM_NAME)};
static const char *const lwm2_write_bytes_names[] = {LWM2_WRITE_BYTES_COUNTERS(LWM2_X_SUM_NAME)};
#undef LWM2_X_SUM_NAME

#define LWM2_NSUM(ids) (sizeof(ids) / sizeof((ids)[0]))

/* The sum of the counters c[ids[i]] of a record's counter array. */
static inline uint64_t lwm2_counter_sum(const uint64_t *c, const enum lwm2_counter *ids, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += c[ids[i]];
	return s;
}

#define LWM2_SUM(c, ids) lwm2_counter_sum((c), (ids), LWM2_NSUM(ids))

#endif /* LWM2_SUMS_H */
