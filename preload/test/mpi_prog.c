/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MPI test program for the MPI module.  Each mode makes a known set of MPI
 * calls and writes, per rank, what the rank record must then hold
 * ($LWM2_EXPECT_DIR/expect.<rank>: "<counter> <op> <value>" lines, op one
 * of = >= <=); mpi_check compares them with the records.  The expectations
 * follow the byte table in mpi_bytes.c, written out per call here.
 *
 *   mpi_prog p2p|coll|io|wait              (2 to 4 ranks; p2p: even count)
 *   mpi_prog threads [ITERATIONS]          (2 ranks, 4 threads each)
 *   mpi_prog bench ITERATIONS              ns per 0-byte ping-pong and
 *                                          8-byte allreduce (2 ranks; with
 *                                          1 rank the peer is MPI_PROC_NULL)
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size;
static unsigned long long p2p_calls, p2p_sent, p2p_recv, coll_calls, coll_sent, coll_recv;
static unsigned long long rd_calls, rd_bytes, wr_calls, wr_bytes, meta_calls, other_calls;
/* MPI_Init(_thread) and MPI_Finalize: a class of their own */
static unsigned long long init_calls;
/* point-to-point messages: each send, each completed receive (-1: not
 * expected in this mode) */
static long long msgs_sent = -1, msgs_recv = -1;

static void die(const char *what)
{
	fprintf(stderr, "mpi_prog: rank %d: %s\n", rank, what);
	MPI_Abort(MPI_COMM_WORLD, 2);
}

static void expect_file(const char *extra)
{
	const char *dir = getenv("LWM2_EXPECT_DIR");
	char path[4096];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof path, "%s/expect.%d", dir, rank);
	f = fopen(path, "w");
	if (!f)
		die("cannot write the expect file");
	fprintf(f, "mpi_size = %d\n", size);
	fprintf(f, "mpi_p2p_calls = %llu\nmpi_p2p_bytes_sent = %llu\nmpi_p2p_bytes_recv = %llu\n",
	        p2p_calls, p2p_sent, p2p_recv);
	fprintf(f,
	        "mpi_coll_calls = %llu\nmpi_coll_bytes_sent = %llu\nmpi_coll_bytes_recv = %llu\n",
	        coll_calls, coll_sent, coll_recv);
	fprintf(f, "mpiio_read_calls = %llu\nmpiio_read_bytes = %llu\n", rd_calls, rd_bytes);
	fprintf(f, "mpiio_write_calls = %llu\nmpiio_write_bytes = %llu\n", wr_calls, wr_bytes);
	fprintf(f, "mpiio_meta_calls = %llu\nmpi_other_calls = %llu\n", meta_calls, other_calls);
	fprintf(f, "mpi_init_calls = %llu\n", init_calls);
	if (msgs_sent >= 0)
		fprintf(f, "mpi_p2p_msgs_sent = %lld\nmpi_p2p_msgs_recv = %lld\n", msgs_sent,
		        msgs_recv);
	fprintf(f, "flag_mpi = 1\nflag_mpi_finalized = 1\nlibrary_set = 1\n");
	if (extra)
		fputs(extra, f);
	fclose(f);
}

static void p2p(long long n, long long sent, long long recv)
{
	p2p_calls += (unsigned long long)n;
	p2p_sent += (unsigned long long)sent;
	p2p_recv += (unsigned long long)recv;
}

static void coll(long long sent, long long recv)
{
	coll_calls++;
	coll_sent += (unsigned long long)sent;
	coll_recv += (unsigned long long)recv;
}

static void p2p_blocking(int peer, int even, int *buf, int *big)
{
	MPI_Status st;

	for (int i = 0; i < 10; i++) { /* blocking: 250 ints each way */
		if (even) {
			MPI_Send(buf, 250, MPI_INT, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(big, 250, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(big, 250, MPI_INT, peer, 1, MPI_COMM_WORLD, &st);
			MPI_Send(buf, 250, MPI_INT, peer, 1, MPI_COMM_WORLD);
		}
		p2p(2, 1000, 1000);
	}
	/* a receive posted larger than the message counts what arrived */
	if (even) {
		MPI_Ssend(buf, 25, MPI_INT, peer, 2, MPI_COMM_WORLD);
		p2p(1, 100, 0);
	} else {
		MPI_Recv(big, 500, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		p2p(1, 0, 100);
	}
	/* buffered mode */
	{
		static char attach[4096 + MPI_BSEND_OVERHEAD];
		void *b;
		int bs;

		MPI_Buffer_attach(attach, sizeof attach);
		if (even) {
			MPI_Bsend(buf, 64, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
			p2p(1, 64, 0);
		} else {
			MPI_Recv(big, 64, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &st);
			p2p(1, 0, 64);
		}
		MPI_Buffer_detach(&b, &bs);
	}
	MPI_Sendrecv(buf, 16, MPI_DOUBLE, peer, 4, big, 16, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD,
	             MPI_STATUS_IGNORE);
	p2p(1, 128, 128);
	MPI_Sendrecv_replace(big, 8, MPI_INT, peer, 5, peer, 5, MPI_COMM_WORLD, &st);
	p2p(1, 32, 32);
}

/* probe, matched probe */
static void p2p_probe(int peer, int even, int *buf, int *big)
{
	MPI_Status st;

	if (even) {
		MPI_Send(buf, 4, MPI_INT, peer, 6, MPI_COMM_WORLD);
		MPI_Send(buf, 6, MPI_INT, peer, 7, MPI_COMM_WORLD);
		p2p(2, 40, 0);
	} else {
		MPI_Message m;

		MPI_Probe(peer, 6, MPI_COMM_WORLD, &st);
		MPI_Recv(big, 4, MPI_INT, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Mprobe(peer, 7, MPI_COMM_WORLD, &m, &st);
		MPI_Mrecv(big, 6, MPI_INT, &m, MPI_STATUS_IGNORE);
		p2p(4, 0, 40);
	}
}

/* nonblocking, completed by Waitall, Wait, Waitany, Waitsome, Test* */
static void p2p_nonblocking(int peer, int *buf, int *big)
{
	MPI_Status st;
	MPI_Request rq[2];

	for (int i = 0; i < 5; i++) {
		MPI_Irecv(big, 512, MPI_INT, peer, 8, MPI_COMM_WORLD, &rq[0]);
		MPI_Isend(buf, 512, MPI_INT, peer, 8, MPI_COMM_WORLD, &rq[1]);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		p2p(3, 2048, 2048);
	}
	MPI_Irecv(big, 100, MPI_INT, peer, 9, MPI_COMM_WORLD, &rq[0]);
	MPI_Issend(buf, 100, MPI_INT, peer, 9, MPI_COMM_WORLD, &rq[1]);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	MPI_Wait(&rq[1], &st);
	p2p(4, 400, 400);
}

static void p2p_ready_and_tests(int peer, int *buf, int *big)
{
	MPI_Status st;
	MPI_Request rq[2];

	int idx, flag = 0, out = 0, idxs[2];
	MPI_Status sts[2];

	MPI_Irecv(big, 10, MPI_INT, peer, 10, MPI_COMM_WORLD, &rq[0]);
	MPI_Barrier(MPI_COMM_WORLD); /* the peer's receive is posted: ready mode is legal */
	coll(0, 0);
	MPI_Rsend(buf, 10, MPI_INT, peer, 10, MPI_COMM_WORLD);
	MPI_Waitany(1, rq, &idx, &st);
	p2p(3, 40, 40);
	MPI_Irecv(big, 20, MPI_INT, peer, 10, MPI_COMM_WORLD, &rq[0]);
	MPI_Barrier(MPI_COMM_WORLD);
	coll(0, 0);
	MPI_Irsend(buf, 20, MPI_INT, peer, 10, MPI_COMM_WORLD, &rq[1]);
	MPI_Waitall(2, rq, sts);
	p2p(3, 80, 80);
	{
		static char attach[4096 + MPI_BSEND_OVERHEAD];
		void *b;
		int bs;

		MPI_Buffer_attach(attach, sizeof attach);
		MPI_Ibsend(buf, 30, MPI_INT, peer, 10, MPI_COMM_WORLD, &rq[1]);
		MPI_Recv(big, 30, MPI_INT, peer, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
		MPI_Buffer_detach(&b, &bs);
		p2p(3, 120, 120);
	}
	MPI_Irecv(big, 3, MPI_INT, peer, 11, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(buf, 3, MPI_INT, peer, 11, MPI_COMM_WORLD, &rq[1]);
	p2p(2, 12, 0);
	int got = 0;
	while (got < 2) {
		MPI_Testsome(2, rq, &out, idxs, sts);
		p2p(1, 0, 0);
		if (out != MPI_UNDEFINED)
			got += out;
	}
	p2p(0, 0, 12);
	MPI_Irecv(big, 5, MPI_INT, peer, 12, MPI_COMM_WORLD, &rq[0]);
	MPI_Send(buf, 5, MPI_INT, peer, 12, MPI_COMM_WORLD);
	p2p(2, 20, 0);
	while (!flag) {
		MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
		p2p(1, 0, 0);
	}
	p2p(0, 0, 20);
	MPI_Irecv(big, 7, MPI_INT, peer, 13, MPI_COMM_WORLD, &rq[0]);
	MPI_Send(buf, 7, MPI_INT, peer, 13, MPI_COMM_WORLD);
	p2p(2, 28, 0);
	for (flag = 0; !flag;) {
		MPI_Testall(1, rq, &flag, MPI_STATUSES_IGNORE);
		p2p(1, 0, 0);
	}
	p2p(0, 0, 28);
	MPI_Irecv(big, 9, MPI_INT, peer, 14, MPI_COMM_WORLD, &rq[0]);
	MPI_Send(buf, 9, MPI_INT, peer, 14, MPI_COMM_WORLD);
	p2p(2, 36, 0);
	for (flag = 0; !flag;) {
		MPI_Testany(1, rq, &idx, &flag, MPI_STATUS_IGNORE);
		p2p(1, 0, 0);
	}
	p2p(0, 0, 36);
	MPI_Irecv(big, 11, MPI_INT, peer, 15, MPI_COMM_WORLD, &rq[0]);
	MPI_Send(buf, 11, MPI_INT, peer, 15, MPI_COMM_WORLD);
	MPI_Waitsome(1, rq, &out, idxs, MPI_STATUSES_IGNORE);
	p2p(3, 44, 44);
}

/* persistent: two inits, four rounds of Startall + Waitall, two frees */
static void p2p_persistent(int peer, int *buf, int *big)
{
	MPI_Request rq[2];

	MPI_Send_init(buf, 128, MPI_INT, peer, 16, MPI_COMM_WORLD, &rq[1]);
	MPI_Recv_init(big, 128, MPI_INT, peer, 16, MPI_COMM_WORLD, &rq[0]);
	p2p(2, 0, 0);
	for (int i = 0; i < 4; i++) {
		MPI_Startall(2, rq);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		p2p(2, 512, 512);
	}
	MPI_Start(&rq[0]);
	MPI_Start(&rq[1]);
	MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	p2p(4, 512, 512);
	MPI_Request_free(&rq[0]);
	MPI_Request_free(&rq[1]);
	other_calls += 2;
}

static void mode_p2p(void)
{
	int peer = rank ^ 1, even = !(rank & 1);
	int buf[512], big[512];

	memset(buf, 0, sizeof buf);
	p2p_blocking(peer, even, buf, big);
	p2p_probe(peer, even, buf, big);
	p2p_nonblocking(peer, buf, big);
	p2p_ready_and_tests(peer, buf, big);
	p2p_persistent(peer, buf, big);
	/* Messages, not calls: every send above is one message (the blocking
	 * loop 10, Sendrecv and Sendrecv_replace 1 each, the nonblocking loop
	 * 5, Issend, Rsend, Irsend, Ibsend 1 each, the five Test/Waitsome
	 * rounds 1 each, 4 + 1 persistent starts), and each rank receives as
	 * many; the even ranks send 4 more (Ssend, Bsend, two probed Sends),
	 * the odd ranks receive them.  Waits, Tests and probes are calls that
	 * move no message. */
	msgs_sent = 31 + ((rank & 1) ? 0 : 4);
	msgs_recv = 31 + ((rank & 1) ? 4 : 0);
	/* a probe that may or may not find something is still one call */
	{
		int flag;

		MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		p2p(1, 0, 0);
	}
}

static void mode_coll(void)
{
	enum { C = 6 };
	int sb[4 * C], rb[4 * C * 4], cnts[4], mine[4], displs[4], root = size - 1;
	int in_place_buf[4 * C];
	MPI_Datatype tw[4], triple;
	MPI_Request rq;

	memset(sb, 0, sizeof sb);
	for (int i = 0; i < size; i++) {
		cnts[i] = i + 1;
		mine[i] = rank + 1; /* what this rank sends to each in the v/w variants */
		displs[i] = i * C;
		tw[i] = MPI_INT;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	coll(0, 0);
	MPI_Bcast(rb, C, MPI_INT, root, MPI_COMM_WORLD);
	coll(rank == root ? 4 * C : 0, rank == root ? 0 : 4 * C);
	MPI_Type_contiguous(3, MPI_DOUBLE, &triple);
	MPI_Type_commit(&triple);
	MPI_Bcast(rb, 2, triple, 0, MPI_COMM_WORLD);
	coll(rank == 0 ? 48 : 0, rank == 0 ? 0 : 48);
	MPI_Type_free(&triple);
	MPI_Gather(sb, C, MPI_INT, rb, C, MPI_INT, root, MPI_COMM_WORLD);
	coll(4 * C, rank == root ? 4 * C * size : 0);
	if (rank == root)
		MPI_Gather(MPI_IN_PLACE, C, MPI_INT, rb, C, MPI_INT, root, MPI_COMM_WORLD);
	else
		MPI_Gather(sb, C, MPI_INT, NULL, 0, MPI_INT, root, MPI_COMM_WORLD);
	coll(rank == root ? 0 : 4 * C, rank == root ? 4 * C * (size - 1) : 0);
	MPI_Gatherv(sb, rank + 1, MPI_INT, rb, cnts, displs, MPI_INT, 0, MPI_COMM_WORLD);
	coll(4 * (rank + 1), rank == 0 ? 4 * size * (size + 1) / 2 : 0);
	MPI_Scatter(sb, C, MPI_INT, rb, C, MPI_INT, 0, MPI_COMM_WORLD);
	coll(rank == 0 ? 4 * C * size : 0, 4 * C);
	MPI_Scatterv(sb, cnts, displs, MPI_INT, rb, rank + 1, MPI_INT, root, MPI_COMM_WORLD);
	coll(rank == root ? 4 * size * (size + 1) / 2 : 0, 4 * (rank + 1));
	MPI_Allgather(sb, C, MPI_INT, rb, C, MPI_INT, MPI_COMM_WORLD);
	coll(4 * C, 4 * C * size);
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, C, MPI_INT, MPI_COMM_WORLD);
	coll(0, 4 * C * (size - 1));
	MPI_Allgatherv(sb, rank + 1, MPI_INT, rb, cnts, displs, MPI_INT, MPI_COMM_WORLD);
	coll(4 * (rank + 1), 4 * size * (size + 1) / 2);
	MPI_Alltoall(sb, 2, MPI_INT, rb, 2, MPI_INT, MPI_COMM_WORLD);
	coll(8 * size, 8 * size);
	MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, 3, MPI_INT, MPI_COMM_WORLD);
	coll(12 * (size - 1), 12 * (size - 1));
	MPI_Alltoallv(sb, mine, displs, MPI_INT, rb, cnts, displs, MPI_INT, MPI_COMM_WORLD);
	coll(4 * size * (rank + 1), 4 * size * (size + 1) / 2);
	{
		int bd[4];

		for (int i = 0; i < size; i++)
			bd[i] = displs[i] * 4;
		MPI_Alltoallw(sb, mine, bd, tw, rb, cnts, bd, tw, MPI_COMM_WORLD);
		coll(4 * size * (rank + 1), 4 * size * (size + 1) / 2);
	}
	MPI_Reduce(sb, rb, C, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
	coll(4 * C, rank == root ? 4 * C : 0);
	memcpy(in_place_buf, sb, sizeof sb);
	if (rank == root)
		MPI_Reduce(MPI_IN_PLACE, in_place_buf, C, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
	else
		MPI_Reduce(sb, NULL, C, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
	coll(4 * C, rank == root ? 4 * C : 0);
	MPI_Allreduce(sb, rb, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	coll(16, 16);
	MPI_Allreduce(MPI_IN_PLACE, in_place_buf, C, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	coll(4 * C, 4 * C);
	MPI_Reduce_scatter(sb, rb, cnts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	coll(4 * size * (size + 1) / 2, 4 * (rank + 1));
	MPI_Reduce_scatter_block(sb, rb, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	coll(8 * size, 8);
	MPI_Scan(sb, rb, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	coll(12, 12);
	MPI_Exscan(sb, rb, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	coll(12, rank == 0 ? 0 : 12);
	/* nonblocking: the start counts the bytes, the wait one more call */
	MPI_Ibcast(rb, 5, MPI_INT, 0, MPI_COMM_WORLD, &rq);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	coll(rank == 0 ? 20 : 0, rank == 0 ? 0 : 20);
	coll_calls++;
	MPI_Iallreduce(sb, rb, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	coll(16, 16);
	coll_calls++;
	MPI_Ialltoallv(sb, mine, displs, MPI_INT, rb, cnts, displs, MPI_INT, MPI_COMM_WORLD, &rq);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	coll(4 * size * (rank + 1), 4 * size * (size + 1) / 2);
	coll_calls++;
	MPI_Ibarrier(MPI_COMM_WORLD, &rq);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	coll(0, 0);
	coll_calls++;
	/* neighbourhood: a periodic ring, two neighbours */
	{
		MPI_Comm ring;
		int dims[1] = {size}, periods[1] = {1};

		MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
		MPI_Neighbor_alltoall(sb, 3, MPI_INT, rb, 3, MPI_INT, ring);
		coll(24, 24);
		MPI_Neighbor_allgather(sb, 3, MPI_INT, rb, 3, MPI_INT, ring);
		coll(12, 24);
		MPI_Comm_free(&ring);
	}
#if MPI_VERSION >= 4
	/* persistent collectives: init counts a call, each start the bytes */
	MPI_Allreduce_init(sb, rb, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
	coll(0, 0);
	for (int i = 0; i < 3; i++) {
		MPI_Start(&rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		coll(20, 20);
		coll_calls++;
	}
	MPI_Request_free(&rq);
	other_calls++;
#endif
}

static void mode_io(void)
{
	const char *dir = getenv("LWM2_EXPECT_DIR");
	char path[4096], buf[4096];
	MPI_File fh;
	MPI_Request rq;
	MPI_Status st;

	snprintf(path, sizeof path, "%s/io.dat", dir ? dir : "/tmp");
	memset(buf, 'a' + rank, sizeof buf);
	MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	meta_calls += 2;
	MPI_File_write_at_all(fh, (MPI_Offset)rank * 4096, buf, 4096, MPI_BYTE, &st);
	wr_calls++, wr_bytes += 4096;
	MPI_File_sync(fh);
	meta_calls++;
	MPI_File_read_at_all(fh, (MPI_Offset)((rank + 1) % size) * 4096, buf, 1024, MPI_INT,
	                     MPI_STATUS_IGNORE);
	rd_calls++, rd_bytes += 4096;
	/* a read past the end counts what it got */
	MPI_File_read_at(fh, (MPI_Offset)size * 4096 - 100, buf, 1000, MPI_BYTE, &st);
	rd_calls++, rd_bytes += 100;
	/* Every rank has read past the end before any rank writes beyond it:
	 * otherwise a fast peer's write makes that read longer. */
	MPI_Barrier(MPI_COMM_WORLD);
	coll(0, 0);
	MPI_File_iwrite_at(fh, (MPI_Offset)(size + rank) * 4096, buf, 512, MPI_INT, &rq);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	wr_calls += 2, wr_bytes += 2048;
	MPI_File_iread_at(fh, (MPI_Offset)rank * 4096, buf, 300, MPI_BYTE, &rq);
	MPI_Wait(&rq, &st);
	rd_calls += 2, rd_bytes += 300;
	MPI_File_write_at_all_begin(fh, (MPI_Offset)(2 * size + rank) * 4096, buf, 4096, MPI_BYTE);
	MPI_File_write_at_all_end(fh, buf, MPI_STATUS_IGNORE);
	wr_calls += 2, wr_bytes += 4096;
	MPI_File_read_at_all_begin(fh, (MPI_Offset)rank * 4096, buf, 2000, MPI_BYTE);
	MPI_File_read_at_all_end(fh, buf, MPI_STATUS_IGNORE);
	rd_calls += 2, rd_bytes += 2000;
	MPI_File_close(&fh);
	meta_calls++;
}

/* MPI_THREAD_MULTIPLE: four threads, each with its own tag. */
enum { NTHREADS = 4 };
static long titer = 1000;

static void *thread_main(void *arg)
{
	int tag = (int)(intptr_t)arg, peer = rank ^ 1;
	double out = tag, in;
	MPI_Request rq[2];

	for (long i = 0; i < titer; i++) {
		MPI_Sendrecv(&out, 1, MPI_DOUBLE, peer, tag, &in, 1, MPI_DOUBLE, peer, tag,
		             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Irecv(&in, 1, MPI_DOUBLE, peer, tag + 100, MPI_COMM_WORLD, &rq[0]);
		MPI_Isend(&out, 1, MPI_DOUBLE, peer, tag + 100, MPI_COMM_WORLD, &rq[1]);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	}
	return NULL;
}

static void mode_threads(void)
{
	pthread_t th[NTHREADS];

	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	p2p(4LL * NTHREADS * titer, 16LL * NTHREADS * titer, 16LL * NTHREADS * titer);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank 0 waits in a barrier while the others compute for 400 ms. */
static char wait_extra[256];

static void mode_wait(void)
{
	volatile double x = 0;

	if (rank != 0) {
		double t0 = now();

		while (now() - t0 < 0.4)
			x += 1.0;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	coll(0, 0);
	if (rank == 0)
		snprintf(wait_extra, sizeof wait_extra, "mpi_coll_ns >= 350000000\n");
	else
		snprintf(wait_extra, sizeof wait_extra, "mpi_coll_ns <= 200000000\n");
}

static void mode_bench(long n)
{
	char b = 0;
	double v = 1, s;
	double t0, t1, t2;
	/* one rank: the peer is MPI_PROC_NULL, so the loop times the call path */
	int peer = size == 1 ? MPI_PROC_NULL : 1 - rank;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now();
	for (long i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(&b, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			MPI_Recv(&b, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(&b, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(&b, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
		}
	}
	t1 = now();
	for (long i = 0; i < n; i++)
		MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	t2 = now();
	if (rank == 0)
		printf("pingpong_ns %.1f allreduce_ns %.1f\n", (t1 - t0) * 1e9 / (double)n,
		       (t2 - t1) * 1e9 / (double)n);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "p2p";
	char extra[512] = "";
	int provided = MPI_THREAD_SINGLE;

	if (strcmp(mode, "threads") == 0) {
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
		if (provided != MPI_THREAD_MULTIPLE)
			die("no MPI_THREAD_MULTIPLE");
	} else {
		MPI_Init(&argc, &argv);
	}
	init_calls++;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	snprintf(extra, sizeof extra, "mpi_thread_provided = %d\n", provided);
	if (strcmp(mode, "p2p") == 0)
		mode_p2p();
	else if (strcmp(mode, "coll") == 0)
		mode_coll();
	else if (strcmp(mode, "io") == 0)
		mode_io();
	else if (strcmp(mode, "threads") == 0)
		titer = argc > 2 ? atol(argv[2]) : titer, mode_threads();
	else if (strcmp(mode, "wait") == 0)
		mode_wait(), strcat(extra, wait_extra);
	else if (strcmp(mode, "bench") == 0)
		mode_bench(argc > 2 ? atol(argv[2]) : 100000);
	else
		die("unknown mode");
	MPI_Finalize();
	init_calls++;
	expect_file(extra);
	return 0;
}
