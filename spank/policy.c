/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The site's rules of who is measured: on.SCOPE= and off.SCOPE= lists of
 * users, accounts, QOS and partitions over the default= mode.  The most
 * specific scope that names the job decides, so a site can switch lwm2
 * off for a partition and on again for one account in it, or the reverse
 * for a user.  No Slurm here: the unit test links this file alone;
 * off.nodes= (a hostlist) is read in slurmstepd with Slurm's parser.
 */
#include <stdio.h>
#include <string.h>

#include "errmsg.h"
#include "lwm2_spank.h"
#include "numparse.h"

const char *const lwm2_policy_scope_names[LWM2_NPOLICY] = {
    [LWM2_POLICY_USER] = "user",
    [LWM2_POLICY_ACCOUNT] = "account",
    [LWM2_POLICY_QOS] = "qos",
    [LWM2_POLICY_PARTITION] = "partition",
};

bool lwm2_policy_list_has(const char *list, const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || !list)
		return false;
	while (*list) {
		size_t k = strcspn(list, ",");

		if (k == n && !strncmp(list, name, n))
			return true;
		list += k + (list[k] == ',');
	}
	return false;
}

enum lwm2_mode lwm2_policy_mode(const struct lwm2_config *c, const struct lwm2_job_names *j,
                                char *why, size_t whylen)
{
	for (int s = 0; j && s < LWM2_NPOLICY; s++) {
		const char *name = j->name[s];

		if (lwm2_policy_list_has(c->policy_off[s], name)) {
			if (why)
				snprintf(why, whylen, "off.%s=%s", lwm2_policy_scope_names[s],
				         name);
			return LWM2_MODE_OFF;
		}
		if (lwm2_policy_list_has(c->policy_on[s], name)) {
			if (why)
				snprintf(why, whylen, "on.%s=%s", lwm2_policy_scope_names[s], name);
			/* measured the way default= measures, or fully
			 * where default=off */
			return c->mode == LWM2_MODE_OFF ? LWM2_MODE_ON : c->mode;
		}
	}
	if (why)
		snprintf(why, whylen, "default=%s", lwm2_mode_name(c->mode));
	return c->mode;
}

/* One item of a rank list: "N", "N-M", "first" or "last" (ntasks known:
 * resolved; 0: checked only). */
static int rank_item(const char *s, size_t len, uint32_t ntasks, uint32_t *lo, uint32_t *hi)
{
	char buf[32];
	const char *end;
	uint64_t a, b;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!strcmp(buf, "first")) {
		*lo = *hi = 0;
		return 0;
	}
	if (!strcmp(buf, "last")) {
		*lo = *hi = ntasks ? ntasks - 1 : 0;
		return 0;
	}
	/* ranks below UINT32_MAX: that one is Slurm's NO_VAL */
	if (lwm2_parse_u64(buf, &end, 0, UINT32_MAX - 1, &a) < 0)
		return -1;
	b = a;
	if (*end == '-' && lwm2_parse_u64(end + 1, &end, 0, UINT32_MAX - 1, &b) < 0)
		return -1;
	if (*end || a > b)
		return -1;
	*lo = (uint32_t)a;
	*hi = (uint32_t)b;
	return 0;
}

int lwm2_parse_ranks(const char *s, char *out, size_t outlen, char *err, size_t errlen)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0)
		return lwm2_errprintf(0, err, errlen, "the rank subset is empty");
	if (n >= outlen)
		return lwm2_errprintf(0, err, errlen,
		                      "the rank subset is longer than %zu characters", outlen - 1);
	if (!strncmp(s, "random:", 7)) {
		uint64_t k;

		if (lwm2_parse_u64(s + 7, NULL, 1, UINT32_MAX, &k) < 0)
			return lwm2_errprintf(0, err, errlen, "'%s': random:N wants N from 1", s);
	} else {
		for (const char *p = s; *p;) {
			size_t k = strcspn(p, ",");
			uint32_t lo, hi;

			if (rank_item(p, k, 0, &lo, &hi) < 0)
				return lwm2_errprintf(
				    0, err, errlen,
				    "'%.*s' is not a rank, a range A-B, first or last", (int)k, p);
			p += k;
			if (*p == ',' && !*++p)
				return lwm2_errprintf(0, err, errlen, "'%s' ends with a comma", s);
		}
	}
	memcpy(out, s, n + 1);
	return 0;
}

/* splitmix64: a small, well-mixed generator that needs no state beyond
 * its seed, so that every node draws the same ranks. */
static uint64_t next_random(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

size_t lwm2_ranks_select(const char *rule, uint32_t ntasks, uint64_t seed, const uint32_t *ranks,
                         size_t n, bool *selected)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++)
		selected[i] = !rule || !*rule;
	if (!rule || !*rule)
		return n;
	if (!strncmp(rule, "random:", 7)) {
		/* Selection sampling (Knuth's algorithm S): rank t is taken with
		 * probability (wanted - taken) / (ntasks - t), exactly `wanted`
		 * in all, in one pass over the step's ranks. */
		uint64_t wanted = 0, taken = 0, x = seed;

		/* checked by lwm2_parse_ranks: a bad N takes no rank */
		lwm2_parse_u64(rule + 7, NULL, 1, UINT32_MAX, &wanted);

		for (uint32_t t = 0; t < ntasks && taken < wanted; t++) {
			uint64_t left = ntasks - t;
			bool take = next_random(&x) % left < wanted - taken;

			if (!take)
				continue;
			taken++;
			for (size_t i = 0; i < n; i++)
				if (ranks[i] == t && !selected[i]) {
					selected[i] = true;
					count++;
				}
		}
		return count;
	}
	for (const char *p = rule; *p;) {
		size_t k = strcspn(p, ",");
		uint32_t lo, hi;

		if (rank_item(p, k, ntasks, &lo, &hi) == 0)
			for (size_t i = 0; i < n; i++)
				if (!selected[i] && ranks[i] >= lo && ranks[i] <= hi) {
					selected[i] = true;
					count++;
				}
		p += k + (p[k] == ',');
	}
	return count;
}
