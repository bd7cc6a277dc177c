/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The portal's pages and API, from the central database:
 *
 *   /                 the query builder and its jobs (sortable, paged),
 *                     each user, account and application a link that
 *                     narrows the list (site -> user -> job)
 *   /api/jobs         the same jobs as JSON (default) or CSV (format=csv)
 *   /site             the selected jobs by user, account, application,
 *                     partition, ... (by=): jobs, core-hours, Num%, Time%
 *   /job/ID           the job's report (`lwm2 report`'s page): steps,
 *                     nodes (each a link to its page), ranks, the
 *                     space-time grid
 *   /node/NAME        the jobs that ran on the node, as the list shows
 *                     them (site -> user -> job -> node -> its jobs)
 *   /api/job/ID       the job's digest as JSON
 *   /api/series       ?job=ID&metric=NAME: the counter's value per node and
 *                     time slice as CSV (node,time,value), LWM2's HTTP query
 */
#include "config.h"

#include <string.h>

#include "serve_pages.h"

void serve_handle(const struct serve_request *rq, struct serve_reply *rp)
{
	const char *p = rq->path;

	memset(rp, 0, sizeof(*rp));
	if (strcmp(p, "/") == 0)
		serve_jobs(rq, rp, false);
	else if (strcmp(p, "/api/jobs") == 0)
		serve_jobs(rq, rp, true);
	else if (strcmp(p, "/site") == 0)
		serve_site(rq, rp);
	else if (strncmp(p, "/job/", 5) == 0)
		serve_job_page(rq, p + 5, rp);
	else if (strncmp(p, "/node/", 6) == 0)
		serve_node(rq, p + 6, rp);
	else if (strncmp(p, "/api/job/", 9) == 0)
		serve_job_json(rq, p + 9, rp);
	else if (strcmp(p, "/api/series") == 0)
		serve_series(rq, rp);
	else
		serve_error(rp, 404, "no page here: see lwm2-serve(8) for the pages and the API");
}
