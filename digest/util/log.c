/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One line per message, to stderr or to the program's sink (see log.h). */
#include "log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static _Atomic(const char *) log_identity;
static _Atomic(lwm2_log_sink_fn) log_sink;
static atomic_int log_max = LWM2_LOG_DEBUG;

void lwm2_log_open(const char *identity)
{
	atomic_store(&log_identity, identity);
}

void lwm2_log_set_sink(lwm2_log_sink_fn sink)
{
	atomic_store(&log_sink, sink);
}

void lwm2_log_set_level(enum lwm2_log_level max)
{
	atomic_store(&log_max, (int)max);
}

/* "IDENTITY: TEXT" into buf (len bytes); the length it needs, or -1. */
static int format_line(char *buf, size_t len, const char *id, const char *fmt, va_list ap)
{
	int head = 0, text;

	if (id && *id) {
		head = snprintf(buf, len, "%s: ", id);
		if (head < 0)
			return -1;
	}
	text = vsnprintf(buf + ((size_t)head < len ? (size_t)head : len),
	                 (size_t)head < len ? len - (size_t)head : 0, fmt, ap);
	return text < 0 ? -1 : head + text;
}

void lwm2_vlog(enum lwm2_log_level level, const char *fmt, va_list ap)
{
	/* messages carry paths and the error texts of the library: 4 KiB
	 * holds nearly every one, a longer one is formatted again whole */
	char small[4096], *line = small;
	const char *id = atomic_load(&log_identity);
	lwm2_log_sink_fn sink = atomic_load(&log_sink);
	int saved = errno, n;
	va_list again;

	if ((int)level > atomic_load(&log_max))
		return;
	va_copy(again, ap);
	n = format_line(small, sizeof(small), id, fmt, ap);
	if (n >= (int)sizeof(small)) {
		char *big = malloc((size_t)n + 1);

		/* without memory, the cut line is still better than none */
		if (big && format_line(big, (size_t)n + 1, id, fmt, again) >= 0)
			line = big;
		else
			free(big);
	}
	va_end(again);
	if (n >= 0) {
		if (sink)
			sink(level, line);
		else
			fprintf(stderr, "%s\n", line);
	}
	if (line != small)
		free(line);
	/* a caller may log and then return -1 with the errno it had */
	errno = saved;
}

void lwm2_log(enum lwm2_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lwm2_vlog(level, fmt, ap);
	va_end(ap);
}
