/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A minimal TAP producer for the unit tests (run through Automake's
 * tap-driver.sh).  Header only so every directory can use it.
 */
#ifndef LWM2_TAP_H
#define LWM2_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_count;
static int tap_failed;

static inline void tap_plan(int n)
{
	printf("1..%d\n", n);
	fflush(stdout);
}

__attribute__((format(printf, 2, 3))) static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

__attribute__((format(printf, 1, 2))) static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

__attribute__((format(printf, 1, 2))) static inline void skip(const char *fmt, ...)
{
	va_list ap;

	printf("ok %d # SKIP ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

#define is_int(got, want, ...)                                                                     \
	do {                                                                                       \
		long long g_ = (long long)(got), w_ = (long long)(want);                           \
		if (!ok(g_ == w_, __VA_ARGS__))                                                    \
			diag("  got %lld, want %lld", g_, w_);                                     \
	} while (0)

#define is_str(got, want, ...)                                                                     \
	do {                                                                                       \
		const char *g_ = (got), *w_ = (want);                                              \
		if (!ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__))                             \
			diag("  got \"%s\", want \"%s\"", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
	} while (0)

/* Ends the test: prints the plan and returns the exit status. */
static inline int done_testing(void)
{
	printf("1..%d\n", tap_count);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif /* LWM2_TAP_H */
