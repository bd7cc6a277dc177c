/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lwm2 dump: rank records, signed node records and digests as JSON. */
#include "config.h"

#include "cmd_io.h"
#include "cmd_opt.h"
#include "digest_internal.h"
#include "errmsg.h"
#include "log.h"
#include "lwm2_cmds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A file is a rank record (binary magic), a signed node record (framed
 * text), or JSON (a node record or a digest). */
static json_object *load_any(const char *path, bool verify, char *err, size_t errlen)
{
	struct lwm2_rank_record *r;
	char head[16] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	if (fd < 0) {
		lwm2_errprintf(0, err, errlen, "%s", strerror(errno));
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
			lwm2_errprintf(0, err, errlen, "out of memory");
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
			text = lwm2_cmd_slurp(path, LWM2_NODE_FILE_MAX, &len, err, errlen);
			free(dir);
			if (!text)
				return NULL;
			{
				char *nl1 = strchr(text, '\n'),
				     *nl2 = nl1 ? strchr(nl1 + 1, '\n') : NULL;
				json_object *j = nl2 ? json_tokener_parse(nl2 + 1) : NULL;
				if (!j || lwm2_node_validate(j, err, errlen) != 0) {
					if (!j)
						lwm2_errprintf(0, err, errlen,
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
			lwm2_errprintf(0, err, errlen, "couldn't open its directory");
		free(dir);
		return rec;
	}
	{
		size_t len;
		char *text = lwm2_cmd_slurp(path, LWM2_DIGEST_TEXT_MAX, &len, err, errlen);
		json_object *j;
		json_tokener *tok;
		if (!text)
			return NULL;
		tok = json_tokener_new_ex(64);
		j = tok ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
		if (!j || json_tokener_get_error(tok) != json_tokener_success) {
			lwm2_errprintf(0, err, errlen, "neither an lwm2 record nor JSON");
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

struct dump_opts {
	bool pretty, verify;
};

static const struct lwm2_optspec dump_spec = {
    .cmd = "dump",
    .usage = "Usage: lwm2 dump [--pretty] [--verify] FILE...\n"
             "Print rank records (.lwm2), signed node records (.lwm2node), node\n"
             "records or digests (JSON) as JSON, one line per file.\n",
    .need = "file",
    .col = 17,
    .opts = (const struct lwm2_opt[]){
        {"pretty", 'p', NULL, "indent the JSON"},
        {"verify", 'v', NULL, "check the munge signature of node records (as root)"},
        {0},
    }};

/* One file as JSON on stdout: 0, or 1 having said why not. */
static int dump_one(const char *path, const struct dump_opts *o)
{
	char err[512] = "";
	json_object *j = load_any(path, o->verify, err, sizeof(err));
	int rc;

	if (!j) {
		lwm2_log_error("dump: couldn't read %s: %s", path, err);
		return 1;
	}
	rc = lwm2_cmd_print_json(j, o->pretty) != 0;
	json_object_put(j);
	return rc;
}

/* The options lwm2_opt_parse_store stores itself. */
static const struct lwm2_optstore dump_store[] = {
    {'p', LWM2_OPT_TRUE(struct dump_opts, pretty)},
    {'v', LWM2_OPT_TRUE(struct dump_opts, verify)},
    {0},
};

int lwm2_cmd_dump(int argc, char **argv)
{
	struct dump_opts o = {0};
	int rc = 0, first = lwm2_opt_parse_store(&dump_spec, dump_store, argc, argv, NULL, &o);

	if (first < 0)
		return lwm2_opt_status(first);
	for (int i = first; i < argc; i++)
		rc |= dump_one(argv[i], &o);
	if (fflush(stdout) != 0)
		rc = 1;
	return rc;
}
