/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LD_PRELOAD editing: the user's entries kept, ours first and only once. */
#include <errno.h>
#include <string.h>

#include "lwm2_spank.h"
#include "tap.h"

#define LIB "/usr/lib/lwm2/liblwm2.so"

struct row {
	const char *cur;
	const char *added;   /* lwm2_preload_add */
	const char *removed; /* lwm2_preload_remove */
	int has;
};

static const struct row rows[] = {
    {NULL, LIB, "", 0},
    {"", LIB, "", 0},
    {"/home/u/libmine.so", LIB ":/home/u/libmine.so", "/home/u/libmine.so", 0},
    {"/a.so /b.so", LIB ":/a.so:/b.so", "/a.so:/b.so", 0},
    {"/a.so:/b.so", LIB ":/a.so:/b.so", "/a.so:/b.so", 0},
    {LIB, LIB, "", 1},
    {LIB ":/a.so", LIB ":/a.so", "/a.so", 1},
    {"/a.so:" LIB, LIB ":/a.so", "/a.so", 1},
    {LIB ":" LIB, LIB, "", 1},
    {"/other/build/liblwm2.so:/a.so", LIB ":/a.so", "/a.so", 1},
    {"liblwm2.so", LIB, "", 1},
    {"/x/liblwm2.so.bak:/a.so", LIB ":/x/liblwm2.so.bak:/a.so", "/x/liblwm2.so.bak:/a.so", 0},
    {"/x/myliblwm2.so", LIB ":/x/myliblwm2.so", "/x/myliblwm2.so", 0},
    {"  /a.so \t::/b.so  ", LIB ":/a.so:/b.so", "/a.so:/b.so", 0},
    {"::", LIB, "", 0},
};

int main(void)
{
	char out[256], small[16];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		const char *name = r->cur ? r->cur : "(unset)";

		is_int(lwm2_preload_add(r->cur, LIB, out, sizeof(out)), 0, "add to '%s'", name);
		is_str(out, r->added, "add to '%s' gives ours first, once", name);
		is_int(lwm2_preload_remove(r->cur, LIB, out, sizeof(out)), 0, "remove from '%s'",
		       name);
		is_str(out, r->removed, "remove from '%s' keeps the user's entries", name);
		is_int(lwm2_preload_has(r->cur, LIB), r->has, "'%s' %s ours", name,
		       r->has ? "holds" : "does not hold");
	}

	/* Adding twice is adding once. */
	lwm2_preload_add("/a.so", LIB, out, sizeof(out));
	{
		char again[256];

		lwm2_preload_add(out, LIB, again, sizeof(again));
		is_str(again, out, "adding to an edited value changes nothing");
	}

	/* Too small a buffer: -1, ENAMETOOLONG, nothing half-written. */
	errno = 0;
	is_int(lwm2_preload_add("/a.so", LIB, small, sizeof(small)), -1, "add into 16 bytes fails");
	is_int(errno, ENAMETOOLONG, "with ENAMETOOLONG");
	is_str(small, "", "and an empty result");
	errno = 0;
	is_int(lwm2_preload_remove("/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.so", LIB, small, sizeof(small)),
	       -1, "remove into 16 bytes fails");
	is_int(errno, ENAMETOOLONG, "with ENAMETOOLONG");
	return done_testing();
}
