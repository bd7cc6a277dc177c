/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lwm2 render: digests (JSON, AdminComment, log lines) as text. */
#include "config.h"
#include "lwm2_keys.h"

#include "cmd_io.h"
#include "cmd_opt.h"
#include "digest_internal.h"
#include "errmsg.h"
#include "log.h"
#include "lwm2_cmds.h"

#include <stdlib.h>
#include <string.h>

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
			    .cluster = ju_str(node, LWM2_KEY_CLUSTER),
			    .job_id = (uint64_t)ju_int_or(node, LWM2_KEY_JOB_ID, 0),
			    .nodes = ju_str(node, LWM2_KEY_NODE),
			    .node_count = 1,
			};
			d = lwm2_job_digest_build(&meta, &node, 1);
		} else {
			lwm2_errprintf(0, err, errlen, "node record: %s", nerr);
		}
	}
	json_object_put(node);
	return d;
}

static const struct lwm2_optspec render_spec = {
    .cmd = "render",
    .need = "file",
    .usage = "Usage: lwm2 render [--steps] [--no-guidance] [--no-locations] FILE...\n"
             "Render digests as text: a digest JSON (full or compact, with or\n"
             "without the LWM2: prefix), an AdminComment holding one, or lines of\n"
             "the JSON-lines log; a node record is shown as the digest of its\n"
             "node.  FILE - reads stdin.\n",
    .opts = (const struct lwm2_opt[]){
        {"steps", 's', NULL, NULL},
        {"no-guidance", 'G', NULL, NULL},
        {"no-locations", 'L', NULL, NULL},
        {0},
    }};

static int render_opt(void *ctx, int key, char *arg)
{
	struct lwm2_render_opts *ro = ctx;

	(void)arg;
	if (key == 's')
		ro->steps = 1;
	else
		ro->flags |= key == 'G' ? LWM2_RENDER_NO_GUIDANCE : LWM2_RENDER_NO_LOCATIONS;
	return 0;
}

int lwm2_cmd_render(int argc, char **argv)
{
	struct lwm2_render_opts ro = {0};
	int rc = 0, first = lwm2_opt_parse(&render_spec, argc, argv, render_opt, &ro);

	if (first < 0)
		return lwm2_opt_status(first);
	for (int i = first; i < argc; i++) {
		char err[512] = "";
		size_t len, nd = 0;
		char *text = lwm2_cmd_slurp(argv[i], LWM2_DIGEST_TEXT_MAX, &len, err, sizeof(err)),
		     *line;

		if (!text) {
			lwm2_log_error("render: couldn't read %s: %s", argv[i], err);
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
					lwm2_log_error("render: couldn't read %s: %s", argv[i],
					               err);
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
			lwm2_log_error("render: couldn't read %s: no digest in it (%s)", argv[i],
			               len ? "only blank lines" : "empty");
			rc = 1;
		}
		free(text);
	}
	return rc;
}
