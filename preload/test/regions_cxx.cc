// SPDX-License-Identifier: GPL-2.0-or-later
//
// lwm2.h from C++ (test/regions.sh): a named region and a view of every
// thread with a window; prints "rc RC calls CALLS" of lwm2_region_self.
#include <lwm2.h>

#include <cstdio>

int main()
{
	struct lwm2_view v;
	const int m[] = {LWM2_WALL_TIME};
	double s = 0, c = 0, x = 0;

	lwm2_view_init(&v, m, 1, LWM2_SCOPE_RUN);
	lwm2_view_set_threads(&v, LWM2_THREADS_ALL);
	lwm2_view_set_window(&v, 2);
	lwm2_region_begin("cxx");
	lwm2_view_self(&v, &x);
	lwm2_region_end();
	int rc = lwm2_region_self("cxx", &s, &c);
	std::printf("rc %d calls %.0f\n", rc, c);
	return 0;
}
