/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef LWM2_POSIX_CORE_STUB_H
#define LWM2_POSIX_CORE_STUB_H

#include "lwm2_core.h"

/* Record flags the module set (lwm2_set_flag). */
extern uint32_t stub_flags;

/* The calling thread's count of c, both buffers. */
uint64_t stub_counter(enum lwm2_counter c);
/* The calling thread's current earmark. */
uint32_t stub_earmark(void);
/* Switch the calling thread's active buffer, as the heartbeat does. */
void stub_flip(void);

#endif
