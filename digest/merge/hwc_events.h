/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The events the hardware counter roles were counted with, gathered over
 * processes (a node record's "counter_events") and over node records (the
 * digest's): per role the distinct events, "A|B" where processes differed
 * (two nodes of different processors, a fallback event on one).  Not
 * installed.
 */
#ifndef LWM2_HWC_EVENTS_H
#define LWM2_HWC_EVENTS_H

#include <json-c/json.h>
#include <stddef.h>

#define LWM2_HWC_EVENTS_ROLES 16  /* roles kept, this build's and later ones */
#define LWM2_HWC_EVENTS_ROLE  32  /* a role's name, terminated */
#define LWM2_HWC_EVENTS_EACH  128 /* a role's events, "A|B", terminated */

struct lwm2_hwc_events {
	size_t n;
	struct {
		char role[LWM2_HWC_EVENTS_ROLE];
		char events[LWM2_HWC_EVENTS_EACH];
	} r[LWM2_HWC_EVENTS_ROLES];
};

/* A record's hwc_events ("role=EVENT ..."); NULL or "" adds nothing. */
void lwm2_hwc_events_add_text(struct lwm2_hwc_events *acc, const char *text);

/* A node record's or a digest's "counter_events" object. */
void lwm2_hwc_events_add_json(struct lwm2_hwc_events *acc, json_object *obj);

/* {"role": "EVENT", ...} in the roles' order of first sight; NULL when
 * there are none. */
json_object *lwm2_hwc_events_json(const struct lwm2_hwc_events *acc);

/* "role=EVENT ..." into buf (a scope's, a process's), cut before an item
 * that would not fit; "" when there are none. */
void lwm2_hwc_events_text(const struct lwm2_hwc_events *acc, char *buf, size_t len);

/* The text of obj (a "counter_events" object) into buf: the two above. */
void lwm2_hwc_events_json_text(json_object *obj, char *buf, size_t len);

#endif /* LWM2_HWC_EVENTS_H */
