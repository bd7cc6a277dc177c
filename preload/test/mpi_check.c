/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mpi_check RECORD_DIR EXPECT_DIR LABEL: compares every expect.<rank> file
 * that mpi_prog (or the Fortran programs) wrote with the rank record whose
 * mpi_rank is <rank>, line by line, and prints TAP lines (no plan: the
 * calling script prints the plan).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwm2_record.h"
#include "tap.h"

#define MAXREC 64

static struct lwm2_rank_record *recs[MAXREC];
static int nrecs;

static int load(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	char err[256];

	if (!d || fd < 0)
		return -1;
	while ((e = readdir(d)) && nrecs < MAXREC) {
		struct lwm2_rank_record *r;

		if (e->d_name[0] == '.')
			continue;
		if (lwm2_record_read_file(fd, e->d_name, &r, err, sizeof err) == 0)
			recs[nrecs++] = r;
		else
			diag("%s: %s", e->d_name, err);
	}
	closedir(d);
	return 0;
}

static long long field(const struct lwm2_rank_record *r, const char *key, int *found)
{
	*found = 1;
	for (int i = 0; i < LWM2_NCOUNTERS; i++)
		if (strcmp(lwm2_counter_names[i], key) == 0)
			return (long long)r->counters[i];
	if (strcmp(key, "mpi_size") == 0)
		return r->mpi_size;
	if (strcmp(key, "mpi_thread_provided") == 0)
		return r->mpi_thread_provided;
	if (strcmp(key, "flag_mpi") == 0)
		return !!(r->flags & LWM2_F_MPI);
	if (strcmp(key, "flag_mpi_finalized") == 0)
		return !!(r->flags & LWM2_F_MPI_FINALIZED);
	if (strcmp(key, "library_set") == 0)
		return r->mpi_library[0] != '\0';
	if (strcmp(key, "runtime_fortran") == 0)
		return !!(r->runtimes & LWM2_RT_FORTRAN);
	if (strcmp(key, "runtime_ompi") == 0)
		return !!(r->runtimes & LWM2_RT_MPI_OMPI);
	if (strcmp(key, "runtime_mpich") == 0)
		return !!(r->runtimes & LWM2_RT_MPI_MPICH);
	if (strcmp(key, "mpi_missing") == 0)
		return !!(r->missing & (1u << LWM2_G_MPI));
	*found = 0;
	return 0;
}

int main(int argc, char **argv)
{
	const char *label = argc > 3 ? argv[3] : "mpi";
	int checked = 0;

	if (argc < 3 || load(argv[1]) != 0) {
		ok(0, "%s: records readable in %s", label, argc > 1 ? argv[1] : "?");
		return 1;
	}
	for (int rank = 0; rank < 64; rank++) {
		char path[4096], key[128], op[4];
		long long want;
		FILE *f;
		const struct lwm2_rank_record *r = NULL;
		int n = 0;

		snprintf(path, sizeof path, "%s/expect.%d", argv[2], rank);
		f = fopen(path, "r");
		if (!f)
			continue;
		for (int i = 0; i < nrecs; i++)
			if (recs[i]->mpi_rank == rank)
				r = recs[i], n++;
		if (!ok(n == 1, "%s: rank %d: one record (found %d)", label, rank, n)) {
			fclose(f);
			continue;
		}
		checked++;
		while (fscanf(f, "%127s %3s %lld", key, op, &want) == 3) {
			int found;
			long long got = field(r, key, &found);
			int good = found && ((strcmp(op, "=") == 0 && got == want) ||
			                     (strcmp(op, ">=") == 0 && got >= want) ||
			                     (strcmp(op, "<=") == 0 && got <= want));

			if (!ok(good, "%s: rank %d: %s %s %lld", label, rank, key, op, want))
				diag("  got %lld%s", got, found ? "" : " (unknown key)");
		}
		fclose(f);
	}
	ok(checked > 0, "%s: expectations found in %s", label, argv[2]);
	return tap_failed ? 1 : 0;
}
