/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The messages of the lwm2 command, jobcomp/lwm2 (inside slurmctld),
 * lwm2-jobend and the code they share: one line per message, "IDENTITY:
 * TEXT", to stderr or to the sink that the program installs (Slurm's log
 * in a plugin, syslog or a file in lwm2-jobend, a list in a test).
 *
 * Levels, most important first: error (something failed), warning
 * (something is off, the work goes on), info (what was done), verbose
 * (details a site asks for with Slurm's verbose level) and debug.  A
 * message above the threshold (lwm2_log_set_level; default: all) is
 * dropped before it is formatted; a sink may drop more (Slurm's own level
 * decides in slurmctld).
 *
 * Set-up: lwm2_log_open once, before the program's first message and
 * before it starts any thread; lwm2_log_set_sink and lwm2_log_set_level at
 * any time (they are atomic; a message goes to the sink that was set when
 * it was written).
 *
 * Threads: a message is formatted in the calling thread and handed to the
 * sink, or written to stderr, as one whole line in one call, so that
 * messages of threads that log at the same time (jobcomp's keeper, worker
 * and export threads) never interleave within a line; a sink is called
 * from every thread that logs and must be safe for that.  Nothing here
 * allocates except for a line longer than 4 KiB, and nothing is
 * async-signal-safe: the preload library does not use this module.
 */
#ifndef LWM2_LOG_H
#define LWM2_LOG_H

#include <stdarg.h>

enum lwm2_log_level {
	LWM2_LOG_ERROR = 0,
	LWM2_LOG_WARNING,
	LWM2_LOG_INFO,
	LWM2_LOG_VERBOSE,
	LWM2_LOG_DEBUG,
};

/* Where messages go instead of stderr: line is "IDENTITY: TEXT", without
 * a newline, valid only during the call. */
typedef void (*lwm2_log_sink_fn)(enum lwm2_log_level level, const char *line);

/* The identity every line starts with ("lwm2"); the string must stay
 * valid (a literal).  NULL or "" (before the first call): lines are the
 * text alone. */
void lwm2_log_open(const char *identity);

/* NULL: back to stderr (the default). */
void lwm2_log_set_sink(lwm2_log_sink_fn sink);

/* Messages above max are dropped. */
void lwm2_log_set_level(enum lwm2_log_level max);

void lwm2_log(enum lwm2_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void lwm2_vlog(enum lwm2_log_level level, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

#define lwm2_log_error(...)   lwm2_log(LWM2_LOG_ERROR, __VA_ARGS__)
#define lwm2_log_warning(...) lwm2_log(LWM2_LOG_WARNING, __VA_ARGS__)
#define lwm2_log_info(...)    lwm2_log(LWM2_LOG_INFO, __VA_ARGS__)
#define lwm2_log_verbose(...) lwm2_log(LWM2_LOG_VERBOSE, __VA_ARGS__)
#define lwm2_log_debug(...)   lwm2_log(LWM2_LOG_DEBUG, __VA_ARGS__)

#endif /* LWM2_LOG_H */
