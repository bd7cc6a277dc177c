/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job page's table of the program's named regions (lwm2_region_begin
 * and lwm2_region_end, lwm2_view(3)): the digest's "regions", a row per
 * name as the text digest's "Named regions" lines (calls, the processes
 * that entered it, the spread of its time over them with where, its share
 * of their wall time), then the names the records or the digest folded.
 * Nothing for a digest without "regions".
 */
#include "report.h"
#include "lwm2_keys.h"

#include <inttypes.h>
#include <stdio.h>

#include "jsonutil.h"

/* "rank 3 on n1", or "solver[4711] on n1" for a process without a rank:
 * a statistic's min_at or max_at ([rank, node, pid, exe]). */
static void where_cell(FILE *f, json_object *at)
{
	int32_t rank = -1, pid = 0;
	const char *node = NULL, *exe = NULL;
	char b[48];

	fputs("<td>", f);
	if (at && json_object_array_length(at) >= 4) {
		rank = json_object_get_int(json_object_array_get_idx(at, 0));
		node = json_object_get_string(json_object_array_get_idx(at, 1));
		pid = json_object_get_int(json_object_array_get_idx(at, 2));
		exe = json_object_get_string(json_object_array_get_idx(at, 3));
		if (rank >= 0) {
			snprintf(b, sizeof(b), "rank %" PRId32, rank);
			rp_esc(f, b);
		} else {
			rp_esc(f, exe && *exe ? exe : "pid");
			snprintf(b, sizeof(b), "[%" PRId32 "]", pid);
			rp_esc(f, b);
		}
		if (node && *node) {
			fputs(" on ", f);
			rp_esc(f, node);
		}
	}
	fputs("</td>", f);
}

static void seconds_cell(FILE *f, const char *cls, double s)
{
	char b[64];

	fprintf(f, "<td class=\"%s\">%s</td>", cls, rp_fmt(s, "s", b, sizeof(b)));
}

/* One name's row; none when its statistics are not all there. */
static void region_row(FILE *f, json_object *e)
{
	json_object *t = ju_get(e, LWM2_KEY_SECONDS, json_type_object);
	json_object *sh = ju_get(e, LWM2_KEY_SHARE, json_type_object);
	const char *name = ju_str(e, LWM2_KEY_NAME);
	double avg, min, max, x;
	char v[3][32], b[64];

	if (!name || !t || !ju_num(t, LWM2_KEY_AVG, &avg) || !ju_num(t, LWM2_KEY_MIN, &min) ||
	    !ju_num(t, LWM2_KEY_MAX, &max))
		return;
	/* the digest's own values, as its JSON writes them, for a reader of
	 * the page */
	fputs("<tr data-region=\"", f);
	rp_esc(f, name);
	fprintf(f, "\" data-calls=\"%" PRId64 "\" data-ranks=\"%" PRId64 "\"",
	        ju_int_or(e, LWM2_KEY_CALLS, 0), ju_int_or(e, LWM2_KEY_RANKS, 0));
	fprintf(f, " data-min=\"%s\" data-avg=\"%s\" data-max=\"%s\"",
	        ju_double_text(min, v[0], sizeof(v[0])), ju_double_text(avg, v[1], sizeof(v[1])),
	        ju_double_text(max, v[2], sizeof(v[2])));
	if (sh && ju_num(sh, LWM2_KEY_AVG, &x))
		fprintf(f, " data-share=\"%s\"", ju_double_text(x, v[0], sizeof(v[0])));
	fputs("><td>", f);
	rp_esc(f, name);
	fprintf(f, "</td><td class=\"n\">%" PRId64 "</td><td class=\"n\">%" PRId64 "</td>",
	        ju_int_or(e, LWM2_KEY_CALLS, 0), ju_int_or(e, LWM2_KEY_RANKS, 0));
	seconds_cell(f, "n avg", avg);
	seconds_cell(f, "n", min);
	where_cell(f, ju_get(t, LWM2_KEY_MIN_AT, json_type_array));
	seconds_cell(f, "n", max);
	where_cell(f, ju_get(t, LWM2_KEY_MAX_AT, json_type_array));
	fputs("<td class=\"n\">", f);
	if (sh && ju_num(sh, LWM2_KEY_AVG, &x)) {
		rp_esc(f, rp_fmt(x, "%", b, sizeof(b)));
		if (ju_num(sh, LWM2_KEY_MAX, &x) && ju_int_or(sh, LWM2_KEY_N, 0) > 1) {
			fputs(" (max ", f);
			rp_esc(f, rp_fmt(x, "%", b, sizeof(b)));
			fputs(")", f);
		}
	} else {
		fputs("-", f);
	}
	fputs("</td></tr>\n", f);
}

void rp_job_regions(FILE *f, json_object *digest)
{
	json_object *r = ju_get(digest, LWM2_KEY_REGIONS, json_type_object);
	json_object *names = r ? ju_get(r, LWM2_KEY_NAMES, json_type_array) : NULL;
	json_object *other = r ? ju_get(r, LWM2_KEY_OTHER, json_type_object) : NULL;
	int64_t folded = r ? ju_int_or(r, LWM2_KEY_FOLDED, 0) : 0;
	double x;
	char b[64];

	if (!r)
		return;
	fputs("<h2 id=\"regions\">Named regions</h2>\n"
	      "<p class=\"small\">The program's own regions (lwm2_region_begin/end): each "
	      "region's calls summed over the job, its time over the processes that entered "
	      "it (all of a process's threads), and that time's share of their wall "
	      "time.</p>\n"
	      "<table class=\"digest regions\">\n"
	      "<tr><th>Region</th><th>calls</th><th>processes</th><th>avg</th><th>min</th>"
	      "<th>where min</th><th>max</th><th>where max</th><th>share of wall time "
	      "(avg)</th></tr>\n",
	      f);
	for (size_t i = 0; names && i < json_object_array_length(names); i++)
		region_row(f, json_object_array_get_idx(names, i));
	if (folded > 0) {
		fprintf(f,
		        "<tr class=\"folded\" data-folded=\"%" PRId64
		        "\"><td colspan=\"9\">%" PRId64 " more name%s folded: %" PRId64 " calls, ",
		        folded, folded, folded == 1 ? "" : "s",
		        other ? ju_int_or(other, LWM2_KEY_CALLS, 0) : 0);
		rp_esc(f, rp_fmt(other && ju_num(other, LWM2_KEY_SECONDS, &x) ? x : 0, "s", b,
		                 sizeof(b)));
		fputs(" over the job</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}
