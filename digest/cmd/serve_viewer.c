/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which jobs a viewer may see, once serve_access.c has asked Slurm who
 * they are: kept apart from the asking, so that the pages (and their
 * tests and benchmarks) need no Slurm.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "serve.h"

void serve_viewer_free(struct serve_viewer *v)
{
	free(v->accounts);
	v->accounts = NULL;
	v->naccounts = 0;
}

bool serve_viewer_sees(const struct serve_viewer *v, const char *user, const char *account)
{
	if (v->all)
		return true;
	if (user && strcmp(user, v->user) == 0)
		return true;
	for (size_t i = 0; account && i < v->naccounts; i++)
		if (strcmp(account, v->accounts[i]) == 0)
			return true;
	return false;
}
