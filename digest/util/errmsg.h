/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The error contract of the library and the command: a function returns 0
 * or -1 (or a pointer or NULL), sets errno, and puts a sentence for a
 * person into the caller's buffer (char *err, size_t errlen).
 */
#ifndef LWM2_ERRMSG_H
#define LWM2_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>

/*
 * The message fmt into err (truncated to errlen; nothing where err is NULL
 * or errlen 0), and errno set to e; e 0 keeps errno as it was, EINVAL
 * where it was 0, so -1 never comes with errno 0.  Returns -1, so that a
 * failure reads `return lwm2_errprintf(EINVAL, err, errlen, "...", ...);`.
 */
int lwm2_errprintf(int e, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int lwm2_verrprintf(int e, char *err, size_t errlen, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

#endif /* LWM2_ERRMSG_H */
