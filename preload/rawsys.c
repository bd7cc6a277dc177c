/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The library's own system calls, made by number: past its own exported
 * wrappers (mmap, write) and past libc's state (a vfork or clone child
 * shares its parent's cached pid).  Each is one system call, signal-safe.
 */
#include "core_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Diagnostics under LWM2_DEBUG, one line to stderr by a single write. */
void lwm2_debug(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (!lwm2_p.debug)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	syscall(SYS_write, 2, buf, (size_t)n);
}

pid_t lwm2_raw_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

void *lwm2_raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);

	/* The kernel's error range, as glibc's mmap reads it. */
	return (unsigned long)r > -4096ul ? MAP_FAILED : (void *)r;
}

pid_t lwm2_raw_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

bool lwm2_here(void)
{
	return lwm2_raw_getpid() == lwm2_p.pid;
}
