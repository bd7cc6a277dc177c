/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output helpers of `lwm2 report`: HTML escaping, the page frame with its
 * one style sheet, SVG elements and the colour scale.  Everything is
 * inline: a page loads nothing from anywhere.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lwm2_render.h"

/* The entity of a character HTML gives a meaning, NULL for any other. */
static const char *html_entity(char c)
{
	static const struct {
		char c;
		const char *ent;
	} t[] = {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&#39;"}};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (c == t[i].c)
			return t[i].ent;
	return NULL;
}

void rp_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		const char *e = html_entity(*s);

		if (e)
			fputs(e, f);
		else
			fputc(*s, f);
	}
}

static const char style[] =
    "body{font:14px/1.4 sans-serif;margin:1em 2em;color:#222;max-width:1300px}"
    "h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}"
    "h3{font-size:1em;margin-bottom:.2em}"
    /* a table wider than the window scrolls in its own box, a plot shrinks
     * to the window: no text cut off at its edge */
    "table{border-collapse:collapse;margin:.5em 0;display:block;overflow-x:auto;max-width:100%}"
    "td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "th{background:#f3f3f3}tr.sec th{background:#e6ecf5}"
    ".note{background:#fff4d6;border-left:4px solid #e0a800;padding:4px 8px;margin:.5em 0}"
    ".guide{background:#eef6ee;border-left:4px solid #3a3;padding:4px 8px;margin:.4em 0}"
    ".miss{color:#888}.small{font-size:12px;color:#555}"
    "svg{display:block;margin:.3em 0;max-width:100%;height:auto}svg text{font:11px "
    "sans-serif;fill:#222}svg "
    "text.small{fill:#666;font-size:10px}"
    "svg .ax{stroke:#888;stroke-width:1;fill:none}svg .box{fill:#cfe0f3;stroke:#2b5d9b}"
    "svg .med{stroke:#c0392b;stroke-width:2;fill:none}svg .wh{stroke:#2b5d9b;fill:none}"
    "svg .out{fill:#c0392b}svg .job{fill:none;stroke:#000;stroke-width:.6}"
    "svg .bar{fill:#2b5d9b}"
    ".legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;"
    "vertical-align:middle}";

void rp_page_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width\">"
	      "<meta name=\"generator\" content=\"lwm2 report\"><title>",
	      f);
	rp_esc(f, title);
	fprintf(f, "</title><style>%s</style></head>\n<body>\n", style);
}

void rp_page_end(FILE *f)
{
	rp_page_end_by(f, "lwm2 report");
}

void rp_page_end_by(FILE *f, const char *made_by)
{
	fputs("<p class=\"small\">Made by <code>", f);
	rp_esc(f, made_by);
	fputs("</code>; see lwm2(1).</p>\n</body></html>\n", f);
}

/* No xmlns: inline SVG in HTML needs none, and the page then holds no
 * URL at all, which the tests check. */
void rp_svg_begin(FILE *f, int w, int h, const char *label)
{
	fprintf(f,
	        "<svg width=\"%d\" height=\"%d\" "
	        "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
	        w, h, w, h);
	rp_esc(f, label);
	fputs("\">", f);
}

void rp_svg_end(FILE *f)
{
	fputs("</svg>\n", f);
}

void rp_svg_text(FILE *f, double x, double y, const char *anchor, const char *cls, const char *text)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"", x, y, anchor);
	if (cls)
		fprintf(f, " class=\"%s\"", cls);
	fputc('>', f);
	rp_esc(f, text);
	fputs("</text>", f);
}

void rp_color(double t, char buf[8])
{
	/* stops of a yellow-green-blue scale (ColorBrewer YlGnBu) */
	static const unsigned char stops[][3] = {
	    {255, 255, 217}, {199, 233, 180}, {127, 205, 187}, {65, 182, 196},
	    {29, 145, 192},  {34, 94, 168},   {12, 44, 132},
	};
	const size_t ns = sizeof(stops) / sizeof(stops[0]);
	double x;
	size_t i;
	int c[3];

	if (!(t >= 0))
		t = 0;
	if (t > 1)
		t = 1;
	x = t * (double)(ns - 1);
	i = (size_t)x;
	if (i >= ns - 1)
		i = ns - 2;
	x -= (double)i;
	for (int k = 0; k < 3; k++)
		c[k] = (int)lround(stops[i][k] + x * (stops[i + 1][k] - stops[i][k]));
	snprintf(buf, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

static void path_put(struct rp_path *p, const char *s, size_t n)
{
	if (p->len + n + 1 > p->cap) {
		size_t nc = p->cap ? 2 * p->cap : 4096;
		char *nb;

		while (nc < p->len + n + 1)
			nc *= 2;
		if (!(nb = realloc(p->buf, nc)))
			return; /* the plot loses cells, the page stays whole */
		p->buf = nb;
		p->cap = nc;
	}
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

void rp_path_rect(struct rp_path *p, double x, double y, double w, double h)
{
	char b[96];
	int n;

	/* relative moves keep the numbers short */
	n = snprintf(b, sizeof(b), "M%.5g %.5gh%.5gv%.5gh%.5gz", x, y, w, h, -w);
	if (n > 0)
		path_put(p, b, (size_t)n);
}

void rp_path_free(struct rp_path *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

void rp_path_emit(FILE *f, const struct rp_path *p, const char *fill, const char *cls)
{
	if (!p->len)
		return;
	fprintf(f, "<path d=\"%s\"", p->buf);
	if (fill)
		fprintf(f, " fill=\"%s\"", fill);
	if (cls)
		fprintf(f, " class=\"%s\"", cls);
	fputs("/>", f);
}

const char *rp_fmt(double v, const char *unit, char *buf, size_t len)
{
	return lwm2_format_value(v, unit, buf, len);
}

void rp_legend(FILE *f, double vmax, const char *unit)
{
	char b[64], col[8];

	/* 300 wide: room after the scale for the largest value ("1000 kB/s") */
	fputs("<div class=\"small\">Colour scale: <svg class=\"legend\" width=\"300\" "
	      "height=\"14\" style=\"display:inline;vertical-align:middle\" role=\"img\" "
	      "aria-label=\"colour legend\">",
	      f);
	for (int lv = 0; lv < RP_LEVELS; lv++) {
		rp_color((double)lv / (RP_LEVELS - 1), col);
		fprintf(f, "<path d=\"M%d 1h10v12h-10z\" fill=\"%s\"/>", 40 + lv * 10, col);
	}
	rp_svg_text(f, 36, 11, "end", NULL, "0");
	rp_svg_text(f, 204, 11, "start", NULL, rp_fmt(vmax, unit, b, sizeof(b)));
	fputs("</svg></div>\n", f);
}
