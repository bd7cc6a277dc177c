/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The regression rule on synthetic histories: what must fire, and what
 * must stay silent (too few runs, another rank count, noise, a tiny
 * change, a new application); the worker's index in a StateDir.
 */
#include "config.h"
#include "jsonutil.h"
#include "lwm2_history.h"
#include "strhash.h"
#include "tap.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct lwm2_hist_entry run(uint32_t job, const char *exe, uint32_t ranks, double dur,
                                  double mpi)
{
	struct lwm2_hist_entry e;

	memset(&e, 0, sizeof(e));
	e.job_id = job;
	e.ranks = ranks;
	e.nodes = 1;
	e.start = 1000 + 100 * (int64_t)job;
	e.end = e.start + (int64_t)dur;
	e.duration = dur;
	e.mpi_share = mpi;
	e.io_share = 1.0;
	e.cpi = NAN;
	e.threads = 1.0;
	snprintf(e.exe, sizeof(e.exe), "%s", exe);
	snprintf(e.build_id, sizeof(e.build_id), "aaaa1111");
	return e;
}

static bool fired(const struct lwm2_hist_result *r, const char *id)
{
	for (size_t i = 0; i < r->nfind; i++)
		if (!strcmp(r->find[i].rule->id, id))
			return true;
	return false;
}

static const char *text_of(const struct lwm2_hist_result *r, const char *id)
{
	for (size_t i = 0; i < r->nfind; i++)
		if (!strcmp(r->find[i].rule->id, id))
			return r->find[i].text;
	return "";
}

/* A digest as jobcomp builds it, reduced to what the history reads. */
static json_object *digest(uint32_t job, const char *exe, const char *build, int ranks, double dur,
                           double mpi)
{
	json_object *d = json_object_new_object(), *j = json_object_new_object(),
	            *a = json_object_new_object(), *m = json_object_new_object();

	ju_add(j, "job_id", ju_u64(job));
	ju_add(j, "user", json_object_new_string("alice"));
	ju_add(j, "start", json_object_new_int64(1000 + 100 * (int64_t)job));
	ju_add(j, "end", json_object_new_int64(1000 + 100 * (int64_t)job + (int64_t)dur));
	ju_add(a, "exe", json_object_new_string(exe));
	ju_add(a, "build_id", json_object_new_string(build));
	ju_add(a, "ranks", json_object_new_int(ranks));
	ju_add(a, "nodes", json_object_new_int(1));
	ju_add(a, "cpu_s", ju_double(dur * ranks));
	ju_add(m, "duration", ju_double(dur));
	ju_add(m, "mpi_time", ju_double(mpi));
	ju_add(a, "metrics", m);
	ju_add(d, "job", j);
	ju_add(d, "application", a);
	return d;
}

static off_t size_of(const char *dir)
{
	char path[512];
	struct stat st;
	off_t total = 0;

	for (int i = 0; i < 1; i++) {
		FILE *p;
		snprintf(path, sizeof(path), "ls %s/history/*.hist 2>/dev/null", dir);
		p = popen(path, "r");
		while (p && fgets(path, sizeof(path), p)) {
			path[strcspn(path, "\n")] = '\0';
			if (stat(path, &st) == 0)
				total += st.st_size;
		}
		if (p)
			pclose(p);
	}
	return total;
}

/* median */
/* The index in a StateDir: runs judged and added, once each */
static void index_runs(const char *dir)
{
	char err[256];
	json_object *d, *hist, *f;
	off_t before;
	int rc;

	for (uint32_t j = 1; j <= 6; j++) {
		d = digest(j, "sim", "cafe01", 4, 10.0 + 0.1 * j, 5);
		rc = lwm2_history_update(dir, d, err, sizeof(err));
		if (j == 6 || rc != 0)
			ok(rc == 0, "job %u judged and added: %s", j, rc ? err : "");
		json_object_put(d);
	}
	d = digest(7, "sim", "beef02", 4, 15.0, 5);
	rc = lwm2_history_update(dir, d, err, sizeof(err));
	hist = ju_get(d, "history", json_type_object);
	f = hist ? ju_get(hist, "findings", json_type_array) : NULL;
	ok(rc == 0 && f && json_object_array_length(f) == 1,
	   "the 7th run, a slower build, gets one finding");
	ok(f && strstr(ju_str(json_object_array_get_idx(f, 0), "text") ?: "",
	               "This build (beef02) is 45 % slower than the previous build (cafe01)"),
	   "%s", f ? ju_str(json_object_array_get_idx(f, 0), "text") : "");
	before = size_of(dir);
	rc = lwm2_history_update(dir, d, err, sizeof(err));
	ok(rc == 0 && size_of(dir) == before, "a retried job is not added twice");
	json_object_put(d);

	d = digest(8, "sim", "cafe01", 16, 40.0, 50);
	lwm2_history_update(dir, d, err, sizeof(err));
	hist = ju_get(d, "history", json_type_object);
	ok(hist && ju_int_or(hist, "compared", -1) == 0 &&
	       json_object_array_length(ju_get(hist, "findings", json_type_array)) == 0,
	   "16 ranks after runs at 4: compared with none, silent");
	json_object_put(d);

	d = digest(9, "other", "1234", 4, 40.0, 50);
	lwm2_history_update(dir, d, err, sizeof(err));
	hist = ju_get(d, "history", json_type_object);
	ok(hist && ju_int_or(hist, "earlier_runs", -1) == 0, "a new application: no history");
	json_object_put(d);
}

/* A damaged index file is started anew, never misread; a newer lwm2's
 * index is refused by name and left untouched. */
static void index_damaged(const char *dir)
{
	char err[256], path[600];
	json_object *d, *hist;
	int rc;

	snprintf(path, sizeof(path), "for f in %s/history/*.hist; do printf garbage > $f; done",
	         dir);
	ok(system(path) == 0, "index files overwritten with garbage");
	d = digest(10, "sim", "cafe01", 4, 10.0, 5);
	rc = lwm2_history_update(dir, d, err, sizeof(err));
	hist = ju_get(d, "history", json_type_object);
	ok(rc == 0 && hist && ju_int_or(hist, "compared", -1) == 0,
	   "a damaged index: the application's history starts anew");
	json_object_put(d);

	/* A newer lwm2's index is refused by name and left untouched. */
	{
		const char newer[16] = {'L', 'W', 'M', '2', 'H', 'I', 'D', 'X', 99};
		char hname[PATH_MAX + 64], back[16] = "";
		FILE *hf;
		off_t was;
		bool wrote;

		snprintf(hname, sizeof(hname), "%s/history/%016llx.hist", dir,
		         (unsigned long long)lwm2_strhash("sim"));
		wrote = false;
		hf = fopen(hname, "r+");
		if (hf) {
			wrote = fwrite(newer, 1, 8 + 4, hf) == 12;
			wrote = fclose(hf) == 0 && wrote;
		}
		ok(wrote, "an index file marked version 99");
		was = size_of(dir);
		d = digest(11, "sim", "cafe01", 4, 10.0, 5);
		rc = lwm2_history_update(dir, d, err, sizeof(err));
		ok(rc == -1 && strstr(err, "history index version 99: written by a newer lwm2"),
		   "a newer index: refused with the reason (%s)", err);
		hf = fopen(hname, "r");
		ok(hf && fread(back, 1, 12, hf) == 12 && back[8] == 99 && size_of(dir) == was,
		   "a newer index: left as it was");
		if (hf)
			fclose(hf);
		json_object_put(d);
	}
}

/* A digest without an application; the index is cut, not grown without end. */
static void index_bounded(const char *dir)
{
	char err[256], path[600];
	json_object *d;

	d = json_object_new_object();
	ok(lwm2_history_update(dir, d, err, sizeof(err)) == 0 &&
	       !ju_get(d, "history", json_type_object),
	   "a digest without an application: nothing done");
	json_object_put(d);

	/* The index is cut, not grown without end. */
	for (uint32_t j = 100; j < 100 + LWM2_HIST_INDEX_MAX + 10; j++) {
		d = digest(j, "many", "cafe01", 4, 10.0, 5);
		lwm2_history_update(dir, d, err, sizeof(err));
		json_object_put(d);
	}
	snprintf(path, sizeof(path), "%s/history", dir);
	{
		struct lwm2_hist_entry e;
		off_t max = (off_t)(16 + LWM2_HIST_INDEX_MAX * sizeof(e));
		ok(size_of(dir) < 3 * max, "index files stay bounded (%lld bytes)",
		   (long long)size_of(dir));
	}
}

static void median(void)
{
	{
		double a[] = {5, 1, 3}, b[] = {4, 1, 3, 2};
		ok(lwm2_median(a, 3) == 3, "median of an odd count");
		ok(lwm2_median(b, 4) == 2.5, "median of an even count");
	}
}

static void steady_history(struct lwm2_hist_entry *h, size_t n)
{
	struct lwm2_hist_entry cur;
	struct lwm2_hist_result r;

	cur = run(200, "lmp", 64, 24.2, 20);
	lwm2_history_judge(&cur, h, n, &r);
	is_int((int)r.compared, 12, "12 comparable runs");
	is_int((int)r.nfind, 0, "a run like the others: silent");

	cur = run(200, "lmp", 64, 24.2, 41);
	lwm2_history_judge(&cur, h, n, &r);
	ok(fired(&r, "history-mpi-share"), "MPI share 41 %% against 18-22 %%: fires");
	ok(strstr(text_of(&r, "history-mpi-share"),
	          "MPI share 41.0 %: the last 12 runs of lmp at 64 ranks had 18.0-22.0 %") != NULL,
	   "its text: %s", text_of(&r, "history-mpi-share"));
	ok(!fired(&r, "history-slower"), "the run time did not change: no slower finding");

	cur = run(200, "lmp", 64, 31.5, 20);
	snprintf(cur.build_id, sizeof(cur.build_id), "bbbb2222");
	lwm2_history_judge(&cur, h, n, &r);
	ok(fired(&r, "history-slower"), "31.5 s against 23.1-24.8 s: fires");
	ok(strstr(text_of(&r, "history-slower"), "This build (bbbb2222) is 32 % slower than the "
	                                         "previous build (aaaa1111)") != NULL,
	   "a new build is named: %s", text_of(&r, "history-slower"));
	snprintf(cur.build_id, sizeof(cur.build_id), "aaaa1111");
	lwm2_history_judge(&cur, h, n, &r);
	ok(strstr(text_of(&r, "history-slower"), "Run time 31.5 s is 32 % higher") != NULL,
	   "the same build: the run time is compared: %s", text_of(&r, "history-slower"));
}

/* must stay silent */
static void stays_silent(struct lwm2_hist_entry *h, size_t n)
{
	struct lwm2_hist_entry cur;
	struct lwm2_hist_result r;

	cur = run(200, "lmp", 64, 26.0, 23.5);
	lwm2_history_judge(&cur, h, n, &r);
	is_int((int)r.nfind, 0, "8 %% longer and 1.5 points more MPI: below the effect sizes");

	cur = run(200, "lmp", 128, 40.0, 41);
	lwm2_history_judge(&cur, h, n, &r);
	is_int((int)r.compared, 0, "another rank count (128 against 64) is not comparable");
	is_int((int)r.nfind, 0, "so a run at another rank count stays silent");
	is_int((int)r.same_app, 12, "though the application's runs are seen");

	cur = run(200, "lmp", 90, 40.0, 41);
	lwm2_history_judge(&cur, h, n, &r);
	is_int((int)r.compared, 12, "90 ranks against 64 is within the factor 1.5");

	cur = run(200, "newapp", 64, 400.0, 90);
	lwm2_history_judge(&cur, h, n, &r);
	is_int((int)r.compared + (int)r.nfind, 0, "a new application: no history, no finding");

	cur = run(200, "lmp", 64, 40.0, 41);
	lwm2_history_judge(&cur, h, 4, &r);
	ok(r.compared == 4 && r.nfind == 0, "4 earlier runs are fewer than the 5 needed: silent");
	lwm2_history_judge(&cur, h, 5, &r);
	ok(r.compared == 5 && r.nfind > 0, "5 are enough");
}

/* A noisy history: 10 to 40 s. */
static void history_changes(struct lwm2_hist_entry *h)
{
	struct lwm2_hist_entry cur;
	struct lwm2_hist_result r;

	for (size_t i = 0; i < 12; i++)
		h[i].duration = 10 + (double)((i * 7) % 12) * 2.7;
	cur = run(200, "lmp", 64, 45, 20);
	lwm2_history_judge(&cur, h, 12, &r);
	ok(!fired(&r, "history-slower"), "45 s after runs of 10 to 40 s: within the noise");

	/* A perfectly steady history: the floors keep a tiny change silent. */
	for (size_t i = 0; i < 12; i++) {
		h[i].duration = 100;
		h[i].mpi_share = 20;
	}
	cur = run(200, "lmp", 64, 103, 22);
	lwm2_history_judge(&cur, h, 12, &r);
	is_int((int)r.nfind, 0, "3 %% and 2 points after identical runs: silent");

	/* One outlier among the earlier runs does not hide a regression. */
	h[3].mpi_share = 60;
	cur = run(200, "lmp", 64, 100, 41);
	lwm2_history_judge(&cur, h, 12, &r);
	ok(fired(&r, "history-mpi-share"), "an outlier in the history: still fires");

	/* Lower is worse for busy threads. */
	for (size_t i = 0; i < 12; i++)
		h[i].threads = 7.8 + 0.05 * (double)(i % 4);
	cur = run(200, "lmp", 64, 100, 20);
	cur.threads = 1.0;
	lwm2_history_judge(&cur, h, 12, &r);
	ok(fired(&r, "history-threads"), "1 busy thread after about 8: fires");
	cur.threads = 9.5;
	lwm2_history_judge(&cur, h, 12, &r);
	ok(!fired(&r, "history-threads"), "more threads than before: silent");

	/* Missing metrics (no CPI measured) and entries that do not count. */
	cur = run(200, "lmp", 64, 100, 20);
	cur.cpi = 3.0;
	lwm2_history_judge(&cur, h, 12, &r);
	ok(!fired(&r, "history-cpi"), "no CPI in the history: no CPI finding");
	h[11].job_id = 200;
	h[10].end = cur.end + 50;
	lwm2_history_judge(&cur, h, 12, &r);
	is_int((int)r.compared, 10, "the job itself and runs that ended after it are left out");
}

/* Every rule is documented: in lwm2(1) and doc/digest-schema.md. */
static void rules_documented(void)
{
	{
		const char *srcdir = getenv("srcdir");
		const char *docs[] = {"doc/lwm2.1", "doc/digest-schema.md"};

		for (size_t k = 0; k < 2; k++) {
			char path[1024], *text;
			FILE *f;
			long len;

			snprintf(path, sizeof(path), "%s/../%s", srcdir ? srcdir : ".", docs[k]);
			f = fopen(path, "r");
			if (!f) {
				ok(0, "open %s", path);
				continue;
			}
			fseek(f, 0, SEEK_END);
			len = ftell(f);
			rewind(f);
			text = calloc(1, (size_t)len + 1);
			/* a short read leaves no text: every point below fails */
			if (fread(text, 1, (size_t)len, f) != (size_t)len)
				text[0] = '\0';
			fclose(f);
			for (size_t i = 0; i < lwm2_nhistory_rules; i++) {
				/* roff spells a hyphen in a name "\-" */
				char roff[64];
				size_t rn = 0;

				for (const char *c = lwm2_history_rules[i].id;
				     *c && rn + 2 < sizeof(roff); c++) {
					if (*c == '-')
						roff[rn++] = '\\';
					roff[rn++] = *c;
				}
				roff[rn] = '\0';
				ok(strstr(text, k == 0 ? roff : lwm2_history_rules[i].id) != NULL,
				   "%s documents %s", docs[k], lwm2_history_rules[i].id);
			}
			free(text);
		}
	}
}

int main(void)
{
	struct lwm2_hist_entry h[40];
	size_t n = 0;

	median();

	/* A steady history: 12 runs of lmp at 64 ranks, 23.1 to 24.9 s, MPI
	 * share 18 to 22 %. */
	for (int i = 0; i < 12; i++)
		h[n++] = run((uint32_t)(100 + i), "lmp", 64, 23.1 + 0.15 * (i % 13), 18 + (i % 5));
	steady_history(h, n);
	stays_silent(h, n);
	history_changes(h);

	/* The index in a StateDir. */
	{
		char dir[] = "/tmp/lwm2-hist-XXXXXX", path[600];
		FILE *fp;

		if (!mkdtemp(dir)) {
			ok(0, "mkdtemp");
			return done_testing();
		}
		index_runs(dir);
		index_damaged(dir);
		index_bounded(dir);
		snprintf(path, sizeof(path), "rm -rf %s", dir);
		fp = popen(path, "r");
		if (fp)
			pclose(fp);
	}

	rules_documented();
	return done_testing();
}
