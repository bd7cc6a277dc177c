/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The export of one large job, as jobcomp/lwm2's export thread does it:
 * the job's log line read back (lwm2_lp_format_line), its InfluxDB line
 * protocol formatted in batches, each batch gzip-compressed and POSTed.
 *
 *   export line NODES SLICES             the log line of such a job on stdout
 *   export format NODES SLICES REPS      median ms of reading and formatting
 *   export send NODES SLICES URL [CRED]  parse + format + send to URL (database
 *                                        lwm2, batches of 5000): wall time, the
 *                                        thread's CPU time, lines/s, bytes
 *
 * The job: one step on NODES nodes, SLICES slices of 60 s each, with the
 * counters an MPI job with file I/O moves (16 columns), values differing
 * per node and slice.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "bench_util.h"
#include "lineproto.h"

static const char *const cols[] = {
    "posix_read_calls",  "posix_read_bytes",    "posix_read_ns",       "posix_write_calls",
    "posix_write_bytes", "posix_write_ns",      "posix_meta_calls",    "posix_meta_ns",
    "mpi_p2p_calls",     "mpi_p2p_bytes_sent",  "mpi_p2p_bytes_recv",  "mpi_p2p_ns",
    "mpi_coll_calls",    "mpi_coll_bytes_sent", "mpi_coll_bytes_recv", "mpi_coll_ns",
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static struct lwm2_lp_buf text;

static void put(const char *s)
{
	if (lwm2_lp_buf_put(&text, s, strlen(s)) < 0) {
		perror("export");
		exit(1);
	}
}

/* The log line jobcomp/lwm2 would write for such a job (the members the
 * export reads; the scope is small next to the grid). */
static const char *make_line(int nodes, int slices)
{
	char b[256];
	uint64_t first = 1700000000 / 60;

	text.len = 0;
	snprintf(b, sizeof(b),
	         "{\"cluster\":\"bench\",\"job_id\":777,\"user\":\"alice\",\"account\":\"physics\","
	         "\"partition\":\"batch\",\"name\":\"solver\",\"node_count\":%d,\"cpus\":%d,"
	         "\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"state\":\"COMPLETED\","
	         "\"status\":\"ok\",\"digest\":{",
	         nodes, nodes * 64, first * 60, (first + (uint64_t)slices) * 60);
	put(b);
	snprintf(b, sizeof(b),
	         "\"scope\":{\"processes\":%d,\"mpi_processes\":%d,\"nodes\":%d,\"incomplete\":0,"
	         "\"metrics\":{\"mpi_time\":{\"min\":5.5,\"avg\":12.25,\"max\":30.125,\"n\":%d}},"
	         "\"totals\":{\"mpi_p2p_calls\":123456789}},",
	         nodes * 64, nodes * 64, nodes, nodes * 64);
	put(b);
	snprintf(b, sizeof(b), "\"steps\":[{\"step_id\":0,\"processes\":%d,\"nodes\":%d}],",
	         nodes * 64, nodes);
	put(b);
	put("\"grid\":[");
	for (int n = 0; n < nodes; n++) {
		snprintf(b, sizeof(b),
		         "%s{\"step\":0,\"node\":\"node%04d\",\"first_slice\":%" PRIu64
		         ",\"slice_length_s\":60,\"n\":%d,\"c\":{",
		         n ? "," : "", n, first, slices);
		put(b);
		for (size_t c = 0; c < NCOLS; c++) {
			snprintf(b, sizeof(b), "%s\"%s\":[", c ? "," : "", cols[c]);
			put(b);
			for (int k = 0; k < slices; k++) {
				uint64_t v =
				    (uint64_t)(n + 1) * 7919u * (uint64_t)(k + 1) * (c + 3) % 99991;

				if (strstr(cols[c], "_ns"))
					v *= 100000; /* times in ns are large */
				snprintf(b, sizeof(b), "%s%" PRIu64, k ? "," : "", v);
				put(b);
			}
			put("]");
		}
		put("}}");
	}
	put("]}}");
	return text.p;
}

struct sink {
	struct lwm2_lp_sender *sender;
	size_t lines, bytes, wire, batches;
	int failed;
};

static int to_sink(void *arg, const char *t, size_t len, size_t lines)
{
	struct sink *s = arg;
	char err[512];
	size_t wire = 0;

	s->lines += lines;
	s->bytes += len;
	s->batches++;
	if (!s->sender)
		return 0;
	if (lwm2_lp_send(s->sender, t, len, &wire, err, sizeof(err)) != LWM2_LP_SENT) {
		fprintf(stderr, "export: couldn't send: %s\n", err);
		s->failed = 1;
		return -1;
	}
	s->wire += wire;
	return 0;
}

static double thread_cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One export as the export thread does it: the log line read as text,
 * its points formatted in batches of 5000, each handed to the sink. */
static int run(const char *line, struct sink *s)
{
	struct lwm2_lp_buf b = {0};
	int rc = lwm2_lp_format_line(line, strlen(line), &b, 5000, to_sink, s, NULL);

	if (rc == 0 && b.lines)
		rc = to_sink(s, b.p, b.len, b.lines);
	lwm2_lp_buf_free(&b);
	return rc;
}

int main(int argc, char **argv)
{
	int nodes = argc > 2 ? atoi(argv[2]) : 1000, slices = argc > 3 ? atoi(argv[3]) : 60;
	const char *line;

	if (argc < 4 || nodes <= 0 || slices <= 0) {
		fprintf(stderr, "usage: export line|format|send NODES SLICES [REPS|URL [CRED]]\n");
		return 2;
	}
	line = make_line(nodes, slices);
	if (!strcmp(argv[1], "line")) {
		puts(line);
		return 0;
	}
	if (!strcmp(argv[1], "format")) {
		int reps = argc > 4 && atoi(argv[4]) > 0 ? atoi(argv[4]) : 5;
		double *ms = calloc((size_t)reps, sizeof(*ms)),
		       *cpu = calloc((size_t)reps, sizeof(*cpu));
		struct sink s = {0};

		if (!ms || !cpu)
			return 1;
		for (int r = 0; r < reps; r++) {
			double t0 = bench_now_ns(), c0 = thread_cpu_ms();

			memset(&s, 0, sizeof(s));
			if (run(line, &s) < 0)
				return 1;
			ms[r] = (bench_now_ns() - t0) / 1e6;
			cpu[r] = thread_cpu_ms() - c0;
		}
		printf(
		    "lines %zu text_bytes %zu line_bytes %zu format_ms %.1f format_cpu_ms %.1f\n",
		    s.lines, s.bytes, strlen(line), bench_median(ms, (size_t)reps),
		    bench_median(cpu, (size_t)reps));
		free(ms);
		free(cpu);
		return 0;
	}
	if (!strcmp(argv[1], "send") && argc > 4) {
		struct lwm2_lp_target t = {.url = argv[4], .database = "lwm2", .gzip = true};
		char *user = NULL, *password = NULL, *token = NULL, err[512];
		struct sink s = {0};
		double t0, c0, wall, cpu;

		if (argc > 5 && lwm2_lp_read_credentials(argv[5], false, &user, &password, &token,
		                                         err, sizeof(err)) < 0) {
			fprintf(stderr, "export: %s\n", err);
			return 1;
		}
		t.user = user;
		t.password = password;
		t.token = token;
		if (!(s.sender = lwm2_lp_sender_new(&t, err, sizeof(err)))) {
			fprintf(stderr, "export: %s\n", err);
			return 1;
		}
		t0 = bench_now_ns();
		c0 = thread_cpu_ms();
		if (run(line, &s) < 0)
			return 1;
		wall = (bench_now_ns() - t0) / 1e6;
		cpu = thread_cpu_ms() - c0;
		printf(
		    "lines %zu batches %zu text_bytes %zu wire_bytes %zu wall_ms %.1f cpu_ms %.1f "
		    "lines_per_s %.0f\n",
		    s.lines, s.batches, s.bytes, s.wire, wall, cpu, (double)s.lines / (wall / 1e3));
		lwm2_lp_sender_free(s.sender);
		free(user);
		free(password);
		free(token);
		return 0;
	}
	fprintf(stderr, "usage: export line|format|send NODES SLICES [REPS|URL [CRED]]\n");
	return 2;
}
