/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A reply's body, error pages, and the text of URLs and CSV fields.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"
#include "serve_pages.h"

FILE *serve_body_open(struct serve_body *b)
{
	b->buf = NULL;
	b->len = 0;
	return b->f = open_memstream(&b->buf, &b->len);
}

int serve_body_close(struct serve_body *b, struct serve_reply *rp, unsigned status,
                     const char *type)
{
	if (fclose(b->f) != 0 || !b->buf) {
		free(b->buf);
		serve_error(rp, 500, "out of memory");
		return -1;
	}
	rp->status = status;
	rp->type = type;
	rp->body = b->buf;
	rp->len = b->len;
	return 0;
}

void serve_error(struct serve_reply *rp, unsigned status, const char *fmt, ...)
{
	char text[512];
	struct serve_body b;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	rp->status = status;
	rp->type = "text/plain; charset=utf-8";
	rp->body = NULL;
	rp->len = 0;
	if (!serve_body_open(&b))
		return;
	fprintf(b.f, "%u: %s\n", status, text);
	if (fclose(b.f) == 0) {
		rp->body = b.buf;
		rp->len = b.len;
	} else {
		free(b.buf);
	}
}

void serve_url_value(FILE *f, const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p))
			fputc(*p, f);
		else
			fprintf(f, "%%%02X", *p);
	}
}

void serve_csv_field(FILE *f, const char *v)
{
	bool quote = strpbrk(v, ",\"\r\n") != NULL || (*v && strchr("=+-@", *v));

	if (!quote) {
		fputs(v, f);
		return;
	}
	fputc('"', f);
	if (*v && strchr("=+-@", *v))
		fputc('\'', f);
	for (; *v; v++) {
		if (*v == '"')
			fputc('"', f);
		fputc(*v, f);
	}
	fputc('"', f);
}

void serve_iso_time(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || !localtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(buf, len, "%s", "");
}

void serve_body_json(struct serve_body *b, struct serve_reply *rp, json_object *o)
{
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), b->f);
	fputc('\n', b->f);
	json_object_put(o);
	serve_body_close(b, rp, 200, "application/json");
}

void serve_signed_in(FILE *f, const struct serve_viewer *v)
{
	fputs("Signed in as ", f);
	rp_esc(f, v->user);
	fputs(v->all ? " (every job)" : " (your jobs and your accounts')", f);
}
