/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A stand-in for the core, for posix_unit.t only: the POSIX module linked
 * into a test program over this file counts into one storage per thread
 * that the test reads directly, without a rank record in between.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "core_int.h"
#include "lwm2_core.h"
#include "posix_core_stub.h"

_Atomic int lwm2_on = 1;
struct lwm2_proc lwm2_p;
int lwm2_clock_is_tsc;
__thread struct lwm2_thread *lwm2_self __attribute__((tls_model("initial-exec")));

static __thread struct lwm2_thread stub_thread;
static __thread int stub_resolving;

struct lwm2_thread *lwm2_thread_attach_slow(void)
{
	lwm2_self = &stub_thread;
	return lwm2_self;
}

bool lwm2_real_signal_safe(void)
{
	return false;
}

void *lwm2_real(const char *name)
{
	void *f;

	if (stub_resolving)
		return NULL;
	stub_resolving = 1;
	f = dlsym(RTLD_NEXT, name);
	stub_resolving = 0;
	return f;
}

uint32_t stub_flags;

void lwm2_set_flag(uint32_t flag)
{
	stub_flags |= flag;
}

/* Not inside a container: the step's descriptors are not kept. */
bool lwm2_keep_on;

void lwm2_keep_move_off(int fd)
{
	(void)fd;
}

int lwm2_keep_in_range(unsigned first, unsigned last, int ours[2])
{
	(void)first, (void)last, (void)ours;
	return 0;
}

uint64_t stub_counter(enum lwm2_counter c)
{
	return stub_thread.buf[0][c] + stub_thread.buf[1][c];
}

uint32_t stub_earmark(void)
{
	return stub_thread.earmark;
}

void stub_flip(void)
{
	stub_thread.active ^= 1;
}
