/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lwm2.conf's reader: the table, the defaults, each type's checks, the
 * errors with file and line, the check set, and where the file is. */
#include "lwm2conf.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/lwm2conf-test.XXXXXX";
static char path[64];

static void write_conf(const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		exit(1);
	fputs(text, f);
	fclose(f);
}

/* Loading text with every key checked: the return, err in err. */
static int load_text(struct lwm2_conf *c, const char *text, char *err, size_t len)
{
	write_conf(text);
	err[0] = '\0';
	return lwm2_conf_load(c, path, lwm2_conf_part_keys(~0u), err, len);
}

static void table(void)
{
	struct lwm2_conf c;
	char err[256];
	bool unique = true, documented = true;

	for (int i = 0; i < LWM2_CONF_NKEYS; i++) {
		documented &=
		    lwm2_conf_keys[i].doc && *lwm2_conf_keys[i].doc && lwm2_conf_keys[i].parts != 0;
		unique &= lwm2_conf_find(lwm2_conf_keys[i].name) == i;
	}
	ok(unique, "every key found by its name, once");
	ok(documented, "every key has its parts and a doc line");
	is_int(lwm2_conf_find("watchstucktime"), LWM2_CONF_WatchStuckTime, "names in any case");
	is_int(lwm2_conf_find("NoSuchKey"), -1, "an unknown name: -1");
	ok(lwm2_conf_part_keys(LWM2_CONF_MAIL) >> LWM2_CONF_LwmCommand & 1 &&
	       lwm2_conf_part_keys(LWM2_CONF_LIVE) >> LWM2_CONF_LwmCommand & 1 &&
	       !(lwm2_conf_part_keys(LWM2_CONF_JOBCOMP) >> LWM2_CONF_LwmCommand & 1),
	   "LwmCommand is lwm2-mail's and the live commands', not jobcomp's");
	/* the defaults go through the checks of their types */
	ok(lwm2_conf_load(&c, NULL, lwm2_conf_part_keys(~0u), err, sizeof(err)) == 0,
	   "no file: the defaults");
	is_int(c.v[LWM2_CONF_AdminCommentCap].num, 16384, "UINT default converted");
	ok(c.v[LWM2_CONF_AdminComment].yes && !c.v[LWM2_CONF_KeepNodeRecords].yes,
	   "BOOL defaults converted");
	ok(c.v[LWM2_CONF_WatchMpiWaitShare].frac == 0.9, "FRAC default converted");
	is_str(c.v[LWM2_CONF_WatchAction].text, "report", "CHOICE default");
	ok(!c.v[LWM2_CONF_StateDir].text && !c.v[LWM2_CONF_Database].line,
	   "a default the part works out: no text, no line");
	lwm2_conf_free(&c);
}

static const struct {
	const char *line;
	bool good;
	const char *what;
} values[] = {
    {"MungeSocket = /run/munge/x.socket", true, "TEXT"},
    {"ExportOrg = " /* 256 bytes and more */
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
     false, "TEXT longer than its buffer"},
    {"SpoolDir = /srv/spool", true, "PATH"},
    {"SpoolDir = srv/spool", false, "PATH not absolute"},
    {"JobEndLog =", true, "PATH_EMPTY empty"},
    {"JobEndLog = jobend.log", false, "PATH_EMPTY not absolute"},
    {"ExportURL = https://tsdb:8086/api/v2/write", true, "URL"},
    {"ExportURL = ftp://tsdb/write", false, "URL not http(s)"},
    {"AdminCommentCap = 256", true, "UINT at its minimum"},
    {"AdminCommentCap = 255", false, "UINT below its minimum"},
    {"AdminCommentCap = 60001", false, "UINT above its maximum"},
    {"AdminCommentCap = 1k", false, "UINT with text after it"},
    {"WatchIdleCpu = 0.5", true, "FRAC"},
    {"WatchIdleCpu = 1.5", false, "FRAC above its maximum"},
    {"WatchIdleCpu = -0.1", false, "FRAC below 0"},
    {"WatchWasteEfficiency = 100", true, "FRAC at its maximum"},
    {"ExportGzip = NO", true, "BOOL in any case"},
    {"ExportGzip = maybe", false, "BOOL neither yes nor no"},
    {"WatchAction = Mail", true, "CHOICE in any case"},
    {"WatchAction = page", false, "CHOICE not a word of it"},
    {"WatchGatherTimeout = 0", false, "WatchGatherTimeout 0"},
};

static void types(void)
{
	struct lwm2_conf c;
	char err[512], text[512];

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		int rc;

		snprintf(text, sizeof(text), "# a comment\n%s\n", values[i].line);
		rc = load_text(&c, text, err, sizeof(err));
		if (values[i].good) {
			ok(rc == 0, "%s taken", values[i].what);
			lwm2_conf_free(&c);
		} else {
			ok(rc < 0 && errno == EINVAL && strstr(err, ":2: bad value \"") &&
			       strstr(err, path),
			   "%s refused: %s", values[i].what, err);
		}
	}
	ok(load_text(&c, "WatchAction = log\nDatabase = None\n", err, sizeof(err)) == 0 &&
	       c.v[LWM2_CONF_WatchAction].choice == 1 &&
	       !strcmp(c.v[LWM2_CONF_Database].text, "") && c.v[LWM2_CONF_Database].line == 2,
	   "CHOICE's place; NONE_TEXT's none read as empty, its line kept");
	lwm2_conf_free(&c);
	ok(load_text(&c, "  maxqueued = 7   # jobs\nMaxQueued=8\n", err, sizeof(err)) == 0 &&
	       c.v[LWM2_CONF_MaxQueued].num == 8 && c.v[LWM2_CONF_MaxQueued].line == 2,
	   "keys in any case, comments after values, the last line counts");
	lwm2_conf_free(&c);
}

static void errors(void)
{
	struct lwm2_conf c;
	char err[512];

	ok(load_text(&c, "SpoolDir=/x\nSpoolDirr=/y\n", err, sizeof(err)) < 0 && errno == EINVAL &&
	       strstr(err, path) && strstr(err, ":2: unknown key SpoolDirr"),
	   "unknown key: file, line and key: %s", err);
	/* a newer lwm2's key, for the parts that only read */
	write_conf("SpoolDir=/x\nSpoolDirr=/y\nMaxQueued=9\n");
	ok(lwm2_conf_load(&c, path, lwm2_conf_part_keys(LWM2_CONF_JOBCOMP) | LWM2_CONF_LENIENT, err,
	                  sizeof(err)) == 0 &&
	       !strcmp(c.v[LWM2_CONF_SpoolDir].text, "/x") && c.v[LWM2_CONF_MaxQueued].num == 9,
	   "lenient: an unknown key passed over, the keys after it read");
	lwm2_conf_free(&c);
	ok(lwm2_conf_load(&c, path, LWM2_CONF_LENIENT, err, sizeof(err)) == 0 &&
	       !strcmp(c.v[LWM2_CONF_SpoolDir].text, "/x"),
	   "lenient with nothing checked");
	lwm2_conf_free(&c);
	ok(load_text(&c, "\nWatchStuckTime 600\n", err, sizeof(err)) < 0 && errno == EINVAL &&
	       strstr(err, ":2: no '=' in \"WatchStuckTime 600\""),
	   "a line without '=': %s", err);
	/* a key outside the check set: known, kept as text, not checked */
	write_conf("WatchStuckTime = soon\nMailer = /usr/sbin/sendmail\n");
	ok(lwm2_conf_load(&c, path, lwm2_conf_part_keys(LWM2_CONF_MAIL), err, sizeof(err)) == 0 &&
	       !strcmp(c.v[LWM2_CONF_Mailer].text, "/usr/sbin/sendmail") &&
	       !strcmp(c.v[LWM2_CONF_WatchStuckTime].text, "soon"),
	   "another part's value is that part's to check");
	lwm2_conf_free(&c);
	ok(lwm2_conf_load(&c, path, 1ull << LWM2_CONF_WatchStuckTime, err, sizeof(err)) < 0 &&
	       strstr(err, ":1: bad value \"soon\" for WatchStuckTime"),
	   "and refused where it is checked: %s", err);
	ok(lwm2_conf_load(&c, "/nonexistent/lwm2.conf", ~0ull, err, sizeof(err)) == 0 &&
	       c.v[LWM2_CONF_MailWait].num == 120,
	   "a missing file: the defaults");
	lwm2_conf_free(&c);
	if (getuid() != 0) {
		write_conf("MailWait=3\n");
		chmod(path, 0);
		ok(lwm2_conf_load(&c, path, ~0ull, err, sizeof(err)) < 0 && errno == EACCES &&
		       strstr(err, "couldn't open "),
		   "an unreadable file: %s", err);
		chmod(path, 0644);
	} else {
		skip("an unreadable file: root reads it");
	}
}

static void where(void)
{
	char *p;

	unsetenv("LWM2_CONF");
	p = lwm2_conf_path("/opt/cluster/etc/slurm.conf");
	is_str(p, "/opt/cluster/etc/lwm2.conf", "beside slurm.conf");
	free(p);
	p = lwm2_conf_path(NULL);
	is_str(p, "/etc/slurm/lwm2.conf", "no slurm.conf: /etc/slurm");
	free(p);
	p = lwm2_conf_path("slurm.conf");
	is_str(p, "/etc/slurm/lwm2.conf", "slurm.conf without a directory: /etc/slurm");
	free(p);
	setenv("LWM2_CONF", "/x/y.conf", 1);
	p = lwm2_conf_path("/etc/slurm/slurm.conf");
	is_str(p, "/x/y.conf", "LWM2_CONF first");
	free(p);
	setenv("LWM2_CONF", "", 1);
	p = lwm2_conf_path("/srv/slurm.conf");
	is_str(p, "/srv/lwm2.conf", "an empty LWM2_CONF is not set");
	free(p);
	unsetenv("LWM2_CONF");
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/lwm2.conf", dir);
	table();
	types();
	errors();
	where();
	unlink(path);
	rmdir(dir);
	return done_testing();
}
