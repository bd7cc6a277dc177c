/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lwm2 dump, lwm2 merge, lwm2 render: records and digests in files. */
#include "config.h"

#include "digest_internal.h"
#include "lwm2_cmds.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void log_stderr(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "%s\n", msg);
}

/* Whole file, at most max bytes, NUL-terminated; "-" is stdin. */
static char *slurp(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	size_t cap = 65536, n = 0;
	char *buf = NULL;

	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	for (;;) {
		ssize_t r;
		if (n + 1 >= cap || !buf) {
			char *nb;
			if (buf)
				cap *= 2;
			if (cap > max + 2)
				cap = max + 2;
			nb = realloc(buf, cap);
			if (!nb) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s", strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			snprintf(err, errlen, "larger than %zu bytes", max);
			goto fail;
		}
	}
	if (fd)
		close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	if (fd)
		close(fd);
	free(buf);
	return NULL;
}

static int print_json(json_object *o, bool pretty)
{
	const char *s = json_object_to_json_string_ext(
	    o, pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN);

	if (!s || puts(s) == EOF)
		return -1;
	return 0;
}

/* A file is a rank record (binary magic), a signed node record (framed
 * text), or JSON (a node record or a digest). */
static json_object *load_any(const char *path, bool verify, char *err, size_t errlen)
{
	struct lwm2_rank_record *r;
	char head[16] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n >= 8 && memcmp(head, LWM2_FILE_MAGIC, 8) == 0) {
		json_object *o;
		if (lwm2_record_read_file(AT_FDCWD, path, &r, err, errlen) != 0)
			return NULL;
		o = lwm2_record_to_json(r);
		free(r);
		return o;
	}
	if (n >= 10 && memcmp(head, "lwm2-node ", 10) == 0) {
		struct lwm2_verify_opts o = {0};
		char *dir = strdup(path), *slash, *base;
		const char *b;
		json_object *rec;
		int dfd;
		uint64_t job;

		if (!dir) {
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
		slash = strrchr(dir, '/');
		if (slash) {
			*slash = '\0';
			base = slash + 1;
			dfd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		} else {
			base = dir;
			dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		/* The job is the name of the directory the spool keeps it in. */
		b = slash ? strrchr(dir, '/') : NULL;
		b = b ? b + 1 : (slash ? dir : "");
		job = strtoull(b, NULL, 10);
		if (!verify) {
			/* Without verification: show the record part only. */
			char *text;
			size_t len;
			close(dfd);
			text = slurp(path, LWM2_NODE_FILE_MAX, &len, err, errlen);
			free(dir);
			if (!text)
				return NULL;
			{
				char *nl1 = strchr(text, '\n'),
				     *nl2 = nl1 ? strchr(nl1 + 1, '\n') : NULL;
				json_object *j = nl2 ? json_tokener_parse(nl2 + 1) : NULL;
				if (!j || lwm2_node_validate(j, err, errlen) != 0) {
					if (!j)
						snprintf(err, errlen,
						         "malformed signed node record");
					json_object_put(j);
					free(text);
					return NULL;
				}
				free(text);
				return j;
			}
		}
		rec = dfd < 0 ? NULL : lwm2_node_read_verified(dfd, base, job, &o, err, errlen);
		if (dfd >= 0)
			close(dfd);
		else
			snprintf(err, errlen, "couldn't open its directory");
		free(dir);
		return rec;
	}
	{
		size_t len;
		char *text = slurp(path, LWM2_DIGEST_TEXT_MAX, &len, err, errlen);
		json_object *j;
		json_tokener *tok;
		if (!text)
			return NULL;
		tok = json_tokener_new_ex(64);
		j = tok ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
		if (!j || json_tokener_get_error(tok) != json_tokener_success) {
			snprintf(err, errlen, "neither an lwm2 record nor JSON");
			json_object_put(j);
			j = NULL;
		} else if (ju_get(j, "lwm2_node_version", json_type_int)) {
			if (lwm2_node_validate(j, err, errlen) != 0) {
				json_object_put(j);
				j = NULL;
			}
		} else if (lwm2_digest_validate(j, err, errlen) != 0) {
			json_object_put(j);
			j = NULL;
		} else {
			lwm2_digest_upgrade(j);
		}
		if (tok)
			json_tokener_free(tok);
		free(text);
		return j;
	}
}

int lwm2_cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"pretty", no_argument, NULL, 'p'},
	    {"verify", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	bool pretty = false, verify = false;
	int c, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "pvh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pretty = true;
			break;
		case 'v':
			verify = true;
			break;
		case 'h':
			printf("Usage: lwm2 dump [--pretty] [--verify] FILE...\n"
			       "Print rank records (.lwm2), signed node records (.lwm2node), node\n"
			       "records or digests (JSON) as JSON, one line per file.\n"
			       "  -p, --pretty   indent the JSON\n"
			       "  -v, --verify   check the munge signature of node records (as "
			       "root)\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "lwm2: dump: no file given\n");
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		char err[512] = "";
		json_object *o = load_any(argv[i], verify, err, sizeof(err));
		if (!o) {
			fprintf(stderr, "lwm2: dump: couldn't read %s: %s\n", argv[i], err);
			rc = 1;
			continue;
		}
		if (print_json(o, pretty) != 0)
			rc = 1;
		json_object_put(o);
	}
	if (fflush(stdout) != 0)
		rc = 1;
	return rc;
}

/* A decimal number in [lo, hi]: no sign, no wrap, nothing after it. */
static int parse_id(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int lwm2_cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"pretty", no_argument, NULL, 'p'},        {"job", required_argument, NULL, 'j'},
	    {"step", required_argument, NULL, 's'},    {"node", required_argument, NULL, 'n'},
	    {"cluster", required_argument, NULL, 'M'}, {"digest", no_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},          {0},
	};
	struct lwm2_node_ident id = {.cluster = "", .node = ""};
	char host[256] = "";
	bool pretty = false, digest = false;
	json_object *node;
	struct stat st;
	int c, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "pj:s:n:M:dh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pretty = true;
			break;
		case 'd':
			digest = true;
			break;
		case 'j':
			if (parse_id(optarg, 1, UINT32_MAX - 2, &id.job_id) < 0) {
				fprintf(stderr,
				        "lwm2: merge: couldn't parse --job \"%s\": want 1 to %u\n",
				        optarg, UINT32_MAX - 2);
				return 2;
			}
			break;
		case 's': {
			uint64_t v;

			/* up to Slurm's batch step, the highest a record can carry */
			if (parse_id(optarg, 0, UINT32_MAX - 3, &v) < 0) {
				fprintf(stderr,
				        "lwm2: merge: couldn't parse --step \"%s\": want 0 to %u\n",
				        optarg, UINT32_MAX - 3);
				return 2;
			}
			id.step_id = (uint32_t)v;
			break;
		}
		case 'n':
			id.node = optarg;
			break;
		case 'M':
			id.cluster = optarg;
			break;
		case 'h':
			printf(
			    "Usage: lwm2 merge [--job ID --step ID] [--node NAME] [--cluster "
			    "NAME]\n"
			    "                  [--digest] [--pretty] DIR | FILE...\n"
			    "Merge the rank records (*.lwm2) of a directory, or the given files,\n"
			    "into one node record (JSON on stdout).  Malformed records are\n"
			    "reported and skipped.  With --job, records of other jobs or steps\n"
			    "are skipped too.  With --digest, print the job digest of that one\n"
			    "node instead.\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "lwm2: merge: no directory or file given\n");
		return 2;
	}
	if (!*id.node && gethostname(host, sizeof(host) - 1) == 0)
		id.node = host;
	if (optind + 1 == argc && stat(argv[optind], &st) == 0 && S_ISDIR(st.st_mode)) {
		int dfd = open(argv[optind], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		node = dfd < 0 ? NULL : lwm2_node_merge(dfd, &id, log_stderr, NULL);
		if (!node) {
			fprintf(stderr, "lwm2: merge: couldn't read %s: %s\n", argv[optind],
			        strerror(errno));
			if (dfd >= 0)
				close(dfd);
			return 1;
		}
		close(dfd);
	} else {
		int n = argc - optind;
		struct lwm2_rank_record **recs = calloc((size_t)n, sizeof(*recs));
		const char **files = calloc((size_t)n, sizeof(*files));
		size_t k = 0;
		if (!recs || !files) {
			fprintf(stderr, "lwm2: merge: out of memory\n");
			return 1;
		}
		for (int i = optind; i < argc; i++) {
			char err[256];
			if (lwm2_record_read_file(AT_FDCWD, argv[i], &recs[k], err, sizeof(err))) {
				fprintf(stderr, "lwm2: merge: couldn't read %s: %s\n", argv[i],
				        err);
				rc = 1;
				continue;
			}
			files[k++] = argv[i];
		}
		node = lwm2_node_merge_records(&id, recs, files, k, log_stderr, NULL);
		for (size_t i = 0; i < k; i++)
			free(recs[i]);
		free(recs);
		free(files);
		if (!node) {
			fprintf(stderr, "lwm2: merge: couldn't merge: %s\n", strerror(errno));
			return 1;
		}
	}
	if (digest) {
		struct lwm2_job_meta meta = {
		    .cluster = id.cluster, .job_id = id.job_id, .nodes = id.node, .node_count = 1};
		json_object *d = lwm2_job_digest_build(&meta, &node, 1);
		if (!d) {
			fprintf(stderr, "lwm2: merge: couldn't build the digest: %s\n",
			        strerror(errno));
			json_object_put(node);
			return 1;
		}
		json_object_put(node);
		node = d;
	}
	if (print_json(node, pretty) != 0 || fflush(stdout) != 0)
		rc = 1;
	json_object_put(node);
	return rc;
}

/* A digest, or a node record shown as the digest of its node. */
static json_object *digest_from_text(const char *text, size_t len, char *err, size_t errlen)
{
	json_object *d = lwm2_digest_parse(text, len, err, errlen), *node;
	json_tokener *tok;
	char nerr[256];

	if (d || len > INT32_MAX)
		return d;
	tok = json_tokener_new_ex(64);
	node = tok ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
	if (tok)
		json_tokener_free(tok);
	if (node && ju_get(node, "lwm2_node_version", json_type_int)) {
		if (lwm2_node_validate(node, nerr, sizeof(nerr)) == 0) {
			struct lwm2_job_meta meta = {
			    .cluster = ju_str(node, "cluster"),
			    .job_id = (uint64_t)ju_int_or(node, "job_id", 0),
			    .nodes = ju_str(node, "node"),
			    .node_count = 1,
			};
			d = lwm2_job_digest_build(&meta, &node, 1);
		} else {
			snprintf(err, errlen, "node record: %s", nerr);
		}
	}
	json_object_put(node);
	return d;
}

int lwm2_cmd_render(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"steps", no_argument, NULL, 's'},
	    {"no-guidance", no_argument, NULL, 'G'},
	    {"no-locations", no_argument, NULL, 'L'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct lwm2_render_opts ro = {0};
	int c, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "sGLh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			ro.steps = 1;
			break;
		case 'G':
			ro.flags |= LWM2_RENDER_NO_GUIDANCE;
			break;
		case 'L':
			ro.flags |= LWM2_RENDER_NO_LOCATIONS;
			break;
		case 'h':
			printf(
			    "Usage: lwm2 render [--steps] [--no-guidance] [--no-locations] "
			    "FILE...\n"
			    "Render digests as text: a digest JSON (full or compact, with or\n"
			    "without the LWM2: prefix), an AdminComment holding one, or lines of\n"
			    "the JSON-lines log; a node record is shown as the digest of its\n"
			    "node.  FILE - reads stdin.\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "lwm2: render: no file given\n");
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		char err[512] = "";
		size_t len, nd = 0;
		char *text = slurp(argv[i], LWM2_DIGEST_TEXT_MAX, &len, err, sizeof(err)), *line;

		if (!text) {
			fprintf(stderr, "lwm2: render: couldn't read %s: %s\n", argv[i], err);
			rc = 1;
			continue;
		}
		/* A JSON-lines log: one digest per line.  Anything else: the
		 * whole file is one digest. */
		line = text;
		while (line && *line) {
			char *nl = strchr(line, '\n');
			size_t l = nl ? (size_t)(nl - line) : strlen(line);
			json_object *d;
			bool whole = nd == 0 && (!nl || nl[1] == '\0' || line[0] != '{' || l < 2 ||
			                         line[l - 1] != '}');
			if (whole)
				l = len - (size_t)(line - text);
			if (l && !(l == 1 && *line == '\n')) {
				d = digest_from_text(line, l, err, sizeof(err));
				if (!d) {
					fprintf(stderr, "lwm2: render: couldn't read %s: %s\n",
					        argv[i], err);
					rc = 1;
				} else {
					if (nd++)
						putchar('\n');
					if (lwm2_digest_render(d, stdout, &ro) != 0)
						rc = 1;
					json_object_put(d);
				}
			}
			if (whole)
				break;
			line = nl ? nl + 1 : NULL;
		}
		/* An empty file, /dev/null or a FIFO nobody writes: say so
		 * rather than succeed with no output. */
		if (!nd && !err[0]) {
			fprintf(stderr, "lwm2: render: couldn't read %s: no digest in it (%s)\n",
			        argv[i], len ? "only blank lines" : "empty");
			rc = 1;
		}
		free(text);
	}
	return rc;
}
