/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Comma-separated values as RFC 4180 writes them (`--csv` output). */
#ifndef LWM2_CSV_H
#define LWM2_CSV_H

#include <stdio.h>

/*
 * s as one field to f: as it is, or between double quotes with each quote
 * doubled where it holds a comma, a quote or a line break (a user's job
 * name may hold any of them).  0, or -1 when f fails.
 */
int lwm2_csv_field(FILE *f, const char *s);

#endif /* LWM2_CSV_H */
