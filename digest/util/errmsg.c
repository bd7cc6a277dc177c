/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The 0 / -1 + message contract (see errmsg.h). */
#include "errmsg.h"

#include <errno.h>
#include <stdio.h>

int lwm2_verrprintf(int e, char *err, size_t errlen, const char *fmt, va_list ap)
{
	/* taken first: formatting may itself set errno */
	if (!e)
		e = errno ? errno : EINVAL;
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	errno = e;
	return -1;
}

int lwm2_errprintf(int e, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lwm2_verrprintf(e, err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}
