/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The log module: the line, the levels, the sink, stderr, long lines,
 * errno, and whole lines from threads that log at once. */
#include "log.h"
#include "tap.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

static char got[8192];
static int got_level, got_calls;

static void keep(enum lwm2_log_level level, const char *line)
{
	snprintf(got, sizeof(got), "%s", line);
	got_level = (int)level;
	got_calls++;
}

/* ---------------------------------------------------------- threads */

#define THREADS 4
#define LINES   2000

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static int seen_whole, seen_torn;

static void count(enum lwm2_log_level level, const char *line)
{
	unsigned t, i;
	char tail[8];
	int whole = sscanf(line, "lwm2: thread %u line %u%7s", &t, &i, tail) == 2;

	(void)level;
	pthread_mutex_lock(&seen_lock);
	if (whole)
		seen_whole++;
	else
		seen_torn++;
	pthread_mutex_unlock(&seen_lock);
}

static void *logger(void *arg)
{
	unsigned t = (unsigned)(size_t)arg;

	for (unsigned i = 0; i < LINES; i++)
		lwm2_log_info("thread %u line %u", t, i);
	return NULL;
}

/* ---------------------------------------------------------- stderr */

/* What lwm2_log_error(fmt, arg) writes to stderr. */
static int to_stderr(char *out, size_t len, const char *arg)
{
	char path[] = "/tmp/lwm2-log-t.XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	if (fd < 0 || saved < 0)
		return -1;
	unlink(path);
	dup2(fd, 2);
	lwm2_log_error("stats: couldn't read %s", arg);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, out, len - 1, 0);
	close(fd);
	if (n < 0)
		return -1;
	out[n] = '\0';
	return 0;
}

int main(void)
{
	char text[6000], out[8192];
	pthread_t th[THREADS];

	lwm2_log_open("lwm2");

	ok(to_stderr(out, sizeof(out), "x.log") == 0 &&
	       !strcmp(out, "lwm2: stats: couldn't read x.log\n"),
	   "no sink: one line on stderr, identity first (\"%s\")", out);

	lwm2_log_set_sink(keep);
	lwm2_log_warning("db: %d jobs", 3);
	ok(got_calls == 1 && got_level == LWM2_LOG_WARNING && !strcmp(got, "lwm2: db: 3 jobs"),
	   "the sink gets the level and the line without a newline (\"%s\")", got);

	static const struct {
		enum lwm2_log_level level;
		const char *name;
	} levels[] = {
	    {LWM2_LOG_ERROR, "error"},     {LWM2_LOG_WARNING, "warning"}, {LWM2_LOG_INFO, "info"},
	    {LWM2_LOG_VERBOSE, "verbose"}, {LWM2_LOG_DEBUG, "debug"},
	};
	lwm2_log_set_level(LWM2_LOG_INFO);
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		int passes = levels[i].level <= LWM2_LOG_INFO;

		got_calls = 0;
		lwm2_log(levels[i].level, "%s", levels[i].name);
		ok(got_calls == passes && (!passes || got_level == (int)levels[i].level),
		   "threshold info: %s %s", levels[i].name, passes ? "passes" : "is dropped");
	}
	lwm2_log_set_level(LWM2_LOG_DEBUG);

	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	lwm2_log_error("%s", text);
	ok(strlen(got) == strlen("lwm2: ") + strlen(text) && !strncmp(got, "lwm2: xxx", 9),
	   "a line past 4 KiB comes whole (%zu bytes)", strlen(got));

	errno = EACCES;
	lwm2_log_error("kept");
	ok(errno == EACCES, "errno is what it was before the message");

	lwm2_log_open(NULL);
	lwm2_log_info("bare");
	ok(!strcmp(got, "bare"), "no identity: the text alone (\"%s\")", got);
	lwm2_log_open("lwm2");

	lwm2_log_set_sink(count);
	for (size_t t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, logger, (void *)t);
	for (size_t t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	ok(seen_whole == THREADS * LINES && seen_torn == 0,
	   "%d threads at once: %d whole lines, %d torn", THREADS, seen_whole, seen_torn);

	lwm2_log_set_sink(NULL);
	ok(to_stderr(out, sizeof(out), "y") == 0 && !strcmp(out, "lwm2: stats: couldn't read y\n"),
	   "sink NULL: back to stderr");
	return done_testing();
}
