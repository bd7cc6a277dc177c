/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The counter roles' events over processes and nodes (hwc_events.h). */
#include "hwc_events.h"
#include "lwm2_render.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether the event [e, e+n) is one of the alternatives in list ("A|B"). */
static bool listed(const char *list, const char *e, size_t n)
{
	for (const char *p = list; *p;) {
		const char *bar = strchr(p, '|');
		size_t k = bar ? (size_t)(bar - p) : strlen(p);

		if (k == n && !memcmp(p, e, n))
			return true;
		p += k + (bar != NULL);
	}
	return false;
}

/* One event [e, e+n) of role [role, role+rn); names that do not fit
 * their field, or a role past the table, are left out. */
static void add_one(struct lwm2_hwc_events *acc, const char *role, size_t rn, const char *e,
                    size_t n)
{
	size_t i, have;

	if (!rn || !n || rn >= LWM2_HWC_EVENTS_ROLE || memchr(e, '|', n) || memchr(e, ' ', n))
		return;
	for (i = 0; i < acc->n; i++)
		if (strlen(acc->r[i].role) == rn && !memcmp(acc->r[i].role, role, rn))
			break;
	if (i == acc->n) {
		if (acc->n == LWM2_HWC_EVENTS_ROLES)
			return;
		memcpy(acc->r[i].role, role, rn);
		acc->r[i].role[rn] = '\0';
		acc->r[i].events[0] = '\0';
		acc->n++;
	}
	if (listed(acc->r[i].events, e, n))
		return;
	have = strlen(acc->r[i].events);
	if (have + (have > 0) + n >= LWM2_HWC_EVENTS_EACH)
		return;
	if (have)
		acc->r[i].events[have++] = '|';
	memcpy(acc->r[i].events + have, e, n);
	acc->r[i].events[have + n] = '\0';
}

/* Every alternative of an "A|B" value [v, v+n) of role. */
static void add_value(struct lwm2_hwc_events *acc, const char *role, size_t rn, const char *v,
                      size_t n)
{
	for (const char *p = v, *end = v + n; p < end;) {
		const char *bar = memchr(p, '|', (size_t)(end - p));
		size_t k = (size_t)((bar ? bar : end) - p);

		add_one(acc, role, rn, p, k);
		p += k + 1;
	}
}

void lwm2_hwc_events_add_text(struct lwm2_hwc_events *acc, const char *text)
{
	const char *role, *ev;
	size_t rl, el;

	while (lwm2_hwc_events_next(&text, &role, &rl, &ev, &el))
		add_value(acc, role, rl, ev, el);
}

void lwm2_hwc_events_add_json(struct lwm2_hwc_events *acc, json_object *obj)
{
	if (!obj || !json_object_is_type(obj, json_type_object))
		return;
	json_object_object_foreach(obj, role, v)
	{
		const char *s =
		    json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

		if (s)
			add_value(acc, role, strlen(role), s, strlen(s));
	}
}

json_object *lwm2_hwc_events_json(const struct lwm2_hwc_events *acc)
{
	json_object *o;

	if (!acc->n)
		return NULL;
	o = json_object_new_object();
	for (size_t i = 0; o && i < acc->n; i++)
		json_object_object_add(o, acc->r[i].role, json_object_new_string(acc->r[i].events));
	return o;
}

void lwm2_hwc_events_text(const struct lwm2_hwc_events *acc, char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < acc->n; i++) {
		int w = snprintf(buf + n, len - n, "%s%s=%s", n ? " " : "", acc->r[i].role,
		                 acc->r[i].events);

		if (w < 0 || (size_t)w >= len - n) {
			buf[n] = '\0';
			return;
		}
		n += (size_t)w;
	}
}

void lwm2_hwc_events_json_text(json_object *obj, char *buf, size_t len)
{
	struct lwm2_hwc_events acc = {0};

	lwm2_hwc_events_add_json(&acc, obj);
	lwm2_hwc_events_text(&acc, buf, len);
}
