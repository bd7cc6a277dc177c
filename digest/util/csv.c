/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CSV fields (see csv.h). */
#include "csv.h"

#include <string.h>

int lwm2_csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r"))
		return fputs(s, f) == EOF ? -1 : 0;
	if (putc('"', f) == EOF)
		return -1;
	for (; *s; s++)
		if ((*s == '"' && putc('"', f) == EOF) || putc(*s, f) == EOF)
			return -1;
	return putc('"', f) == EOF ? -1 : 0;
}
