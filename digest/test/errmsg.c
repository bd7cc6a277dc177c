/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The 0 / -1 + message contract: the text, errno, truncation, no buffer. */
#include "errmsg.h"
#include "tap.h"

#include <errno.h>

int main(void)
{
	char err[16] = "";

	errno = 0;
	ok(lwm2_errprintf(ENOENT, err, sizeof(err), "no %s", "file") == -1 && errno == ENOENT &&
	       !strcmp(err, "no file"),
	   "the message, errno set, -1 returned");
	errno = EACCES;
	ok(lwm2_errprintf(0, err, sizeof(err), "kept") == -1 && errno == EACCES,
	   "e 0 keeps the errno of the failed call");
	errno = 0;
	ok(lwm2_errprintf(0, err, sizeof(err), "none") == -1 && errno == EINVAL,
	   "e 0 without an errno gives EINVAL: -1 never comes with errno 0");
	lwm2_errprintf(E2BIG, err, sizeof(err), "%s", "a message longer than the buffer");
	ok(strlen(err) == sizeof(err) - 1 && !strncmp(err, "a message longer", sizeof(err) - 1),
	   "a long message is cut to the buffer, terminated (\"%s\")", err);
	errno = 0;
	ok(lwm2_errprintf(EPERM, NULL, 0, "nowhere") == -1 && errno == EPERM,
	   "no buffer: errno still set");
	strcpy(err, "before");
	ok(lwm2_errprintf(EPERM, err, 0, "nowhere") == -1 && !strcmp(err, "before"),
	   "a buffer of length 0 is left alone");
	return done_testing();
}
