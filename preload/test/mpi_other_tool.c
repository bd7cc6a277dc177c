/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A second PMPI tool for the tests: wraps MPI_Send and MPI_Finalize the
 * classic way (calling PMPI_x) and reports at MPI_Finalize how many sends
 * it saw.  Preloaded before or after liblwm2.
 */
#include <mpi.h>
#include <stdio.h>

static long sends;

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	sends++;
	return PMPI_Send(buf, count, dt, dest, tag, comm);
}

int MPI_Finalize(void)
{
	printf("other tool: MPI_Send calls %ld\n", sends);
	fflush(stdout);
	return PMPI_Finalize();
}
