/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The string set: numbers in order of first addition, growth, duplicates. */
#include "strset.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	static char names[3000][16];
	struct lwm2_strset set = {NULL, NULL, 0, 0};
	size_t idx = 99;
	int wrong = 0;

	is_int(lwm2_strset_add(&set, "n1", &idx), 1, "a new name is added");
	is_int((int)idx, 0, "as number 0");
	is_int(lwm2_strset_add(&set, "n2", &idx), 1, "another is added");
	is_int((int)idx, 1, "as number 1");
	is_int(lwm2_strset_add(&set, "n1", &idx), 0, "a name already there is not added again");
	is_int((int)idx, 0, "and keeps its number");
	/* 3,000 names, each added twice: the set grows past its first slots
	 * and every name keeps the number it got first. */
	for (int k = 0; k < 3000; k++)
		snprintf(names[k], sizeof(names[k]), "node%05d", k);
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < 3000; k++)
			if (lwm2_strset_add(&set, names[k], &idx) != (pass ? 0 : 1) ||
			    idx != (size_t)k + 2)
				wrong++;
	is_int(wrong, 0, "3,000 names twice: added once each, numbered in order");
	is_int((int)set.n, 3002, "3,002 names in the set");
	ok(set.cap >= 2 * set.n, "at most half full (%zu slots)", set.cap);
	is_int(lwm2_strset_add(&set, "n2", NULL), 0, "the number may be left out");
	lwm2_strset_free(&set);
	ok(set.n == 0 && set.cap == 0 && !set.name, "freed and empty");
	return done_testing();
}
