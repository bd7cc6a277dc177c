/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2.conf, the site's settings file, read in one place: every key once
 * (its type, limits, default, the parts that read it and its doc line),
 * the file found once, its lines read with lwm2_kv_split.  jobcomp/lwm2
 * (and lwm2-jobend), the live commands (`lwm2 top`, `lwm2 watch`, the
 * site commands' Database=) and lwm2-mail (through `lwm2 config`) take
 * their values from here; a key no part reads is an error in each.
 */
#ifndef LWM2_CONF_H
#define LWM2_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The parts that read a key: a key's value is checked where its part asks. */
enum {
	LWM2_CONF_JOBCOMP = 1u << 0, /* jobcomp/lwm2 and lwm2-jobend */
	LWM2_CONF_LIVE = 1u << 1,    /* lwm2 top, lwm2 watch, the site commands */
	LWM2_CONF_MAIL = 1u << 2,    /* lwm2-mail */
};

enum lwm2_conf_type {
	LWM2_CONF_TEXT,       /* any text, shorter than len when len is set */
	LWM2_CONF_NONE_TEXT,  /* the same, "none" (any case) read as "" */
	LWM2_CONF_PATH,       /* an absolute path */
	LWM2_CONF_PATH_EMPTY, /* an absolute path, or empty */
	LWM2_CONF_URL,        /* http:// or https://, or empty */
	LWM2_CONF_UINT,       /* a decimal integer in [min, max] */
	LWM2_CONF_DURATION,   /* a time as Slurm writes it, or 90s, 10min; num: seconds */
	LWM2_CONF_FRAC,       /* a decimal number in [0, max] */
	LWM2_CONF_BOOL,       /* yes/true/1 or no/false/0 */
	LWM2_CONF_CHOICE,     /* one of choices ("a|b|c", any case) */
	LWM2_CONF_LINES,      /* any text; every line of the key counts, joined by '\n' */
};

/* The limits of a value: a text's length (len: its buffer, NUL included;
 * 0: none), a number's range, a choice's words. */
struct lwm2_conf_limits {
	uint64_t min, max;
	size_t len;
	const char *choices;
};
/* in parentheses, so that a table line's limits are one argument of X */
#define LWM2_CONF_ANY            (0, 0, 0, NULL)
#define LWM2_CONF_LEN(n)         (0, 0, n, NULL)
#define LWM2_CONF_RANGE(lo, hi)  (lo, hi, 0, NULL)
#define LWM2_CONF_WORDS(choices) (0, 0, 0, choices)
#define LWM2_CONF_LIMITS(min, max, len, choices)                                                   \
	{                                                                                          \
		min, max, len, choices                                                             \
	}

/*
 * X(name, type, limits, default, parts, doc) for every key of lwm2.conf.
 * default is the value as it would be written in the file; NULL where the
 * part works it out itself (the doc line says how).  Keys are matched in
 * any case.
 */
#define LWM2_CONF_KEYS(X)                                                                          \
	/* jobcomp/lwm2 */                                                                         \
	X(SpoolDir, PATH, LWM2_CONF_ANY, "/var/spool/lwm2", LWM2_CONF_JOBCOMP,                     \
	  "the node records (the SPANK plugin's spool=)")                                          \
	X(StateDir, PATH, LWM2_CONF_ANY, NULL, LWM2_CONF_JOBCOMP,                                  \
	  "one file per pending job (default: StateSaveLocation/lwm2)")                            \
	X(LogFile, PATH, LWM2_CONF_ANY, "/var/log/slurm/lwm2-digests.jsonl", LWM2_CONF_JOBCOMP,    \
	  "lwm2-jobend's JSON-lines log (jobcomp/lwm2 takes JobCompLoc)")                          \
	X(JobEndLog, PATH_EMPTY, LWM2_CONF_LEN(1024), "", LWM2_CONF_JOBCOMP,                       \
	  "lwm2-jobend's messages (empty: syslog)")                                                \
	X(Database, NONE_TEXT, LWM2_CONF_LEN(1024), NULL, LWM2_CONF_JOBCOMP | LWM2_CONF_LIVE,      \
	  "the central database (none: the log alone; default: lwm2.db beside the log)")           \
	X(MungeSocket, TEXT, LWM2_CONF_ANY, NULL, LWM2_CONF_JOBCOMP,                               \
	  "munged's socket (default: munged's)")                                                   \
	X(AdminComment, BOOL, LWM2_CONF_ANY, "yes", LWM2_CONF_JOBCOMP,                             \
	  "no: leave AdminComment alone")                                                          \
	X(KeepNodeRecords, BOOL, LWM2_CONF_ANY, "no", LWM2_CONF_JOBCOMP,                           \
	  "yes: leave the node records in the spool")                                              \
	X(LateRecordWait, UINT, LWM2_CONF_RANGE(0, 86400), "120", LWM2_CONF_JOBCOMP,               \
	  "seconds after the job's end to wait for its nodes")                                     \
	X(RecordSettle, UINT, LWM2_CONF_RANGE(0, 600), "1", LWM2_CONF_JOBCOMP,                     \
	  "seconds after the nodes finished, for a shared file system")                            \
	X(AdviceMinRuntime, DURATION, LWM2_CONF_RANGE(0, 365ull * 86400), "60s",                   \
	  LWM2_CONF_JOBCOMP, "run time under which the fit gives no --ntasks/--mem/--time advice") \
	/* the LWM2 part must leave room for other tools' parts */                                 \
	X(AdminCommentCap, UINT, LWM2_CONF_RANGE(256, 60000), "16384", LWM2_CONF_JOBCOMP,          \
	  "bytes of the LWM2 part of the AdminComment")                                            \
	X(RetryMax, UINT, LWM2_CONF_RANGE(0, 365ull * 86400), "604800", LWM2_CONF_JOBCOMP,         \
	  "seconds after the job's end to keep trying")                                            \
	X(VerifyDelay, UINT, LWM2_CONF_RANGE(0, 86400), "5", LWM2_CONF_JOBCOMP,                    \
	  "seconds before reading AdminComment back")                                              \
	X(VerifyWindow, UINT, LWM2_CONF_RANGE(0, 86400), "120", LWM2_CONF_JOBCOMP,                 \
	  "seconds after the job's end to keep checking AdminComment")                             \
	X(MaxQueued, UINT, LWM2_CONF_RANGE(1, 10000000), "100000", LWM2_CONF_JOBCOMP,              \
	  "jobs the in-memory queue takes")                                                        \
	X(ExportURL, URL, LWM2_CONF_LEN(1024), "", LWM2_CONF_JOBCOMP,                              \
	  "the time-series engine's write endpoint (empty: no export)")                            \
	X(ExportDatabase, TEXT, LWM2_CONF_LEN(256), "", LWM2_CONF_JOBCOMP,                         \
	  "db= or bucket= of the export")                                                          \
	X(ExportOrg, TEXT, LWM2_CONF_LEN(256), "", LWM2_CONF_JOBCOMP,                              \
	  "org= of the export (InfluxDB 2.x)")                                                     \
	X(ExportCredentials, PATH, LWM2_CONF_LEN(1024), NULL, LWM2_CONF_JOBCOMP,                   \
	  "the export's credentials file, root's only")                                            \
	X(ExportBatchSize, UINT, LWM2_CONF_RANGE(1, 1000000), "5000", LWM2_CONF_JOBCOMP,           \
	  "points per export request")                                                             \
	X(ExportTimeout, UINT, LWM2_CONF_RANGE(1, 600), "10", LWM2_CONF_JOBCOMP,                   \
	  "seconds per export request")                                                            \
	X(ExportGzip, BOOL, LWM2_CONF_ANY, "yes", LWM2_CONF_JOBCOMP, "gzip the export's requests") \
	X(ExportMaxQueued, UINT, LWM2_CONF_RANGE(1, 10000000), "10000", LWM2_CONF_JOBCOMP,         \
	  "jobs waiting for export")                                                               \
	/* lwm2-mail (LwmCommand also the live commands') */                                       \
	X(MailDigest, BOOL, LWM2_CONF_ANY, "yes", LWM2_CONF_MAIL,                                  \
	  "put the digest into END and FAIL mails")                                                \
	X(MailWait, UINT, LWM2_CONF_RANGE(0, UINT32_MAX), "120", LWM2_CONF_MAIL,                   \
	  "seconds to wait for the digest")                                                        \
	X(Mailer, TEXT, LWM2_CONF_ANY, NULL, LWM2_CONF_MAIL,                                       \
	  "the real mailer (default: /usr/bin/mail, else /usr/sbin/sendmail)")                     \
	X(LwmCommand, TEXT, LWM2_CONF_LEN(1024), NULL, LWM2_CONF_MAIL | LWM2_CONF_LIVE,            \
	  "the lwm2 command (default: this lwm2)")                                                 \
	X(SlurmConf, TEXT, LWM2_CONF_ANY, NULL, LWM2_CONF_MAIL,                                    \
	  "slurm.conf for lwm2 digest in mails (default: Slurm's own)")                            \
	/* lwm2 top and lwm2 watch */                                                              \
	X(BaseDir, PATH, LWM2_CONF_LEN(1024), "/run/lwm2", LWM2_CONF_LIVE,                         \
	  "the SPANK plugin's basedir=")                                                           \
	X(WatchMailProg, PATH, LWM2_CONF_LEN(1024), "/usr/sbin/lwm2-mail", LWM2_CONF_LIVE,         \
	  "the mail path of lwm2 watch")                                                           \
	X(WatchStateDir, PATH, LWM2_CONF_LEN(1024), "/var/lib/lwm2", LWM2_CONF_LIVE,               \
	  "what lwm2 watch remembers (watch.json)")                                                \
	X(WatchStuckTime, UINT, LWM2_CONF_RANGE(0, 30 * 86400), "1800", LWM2_CONF_LIVE,            \
	  "seconds a verdict lasts before it is acted on")                                         \
	X(WatchMpiWaitShare, FRAC, LWM2_CONF_RANGE(0, 1), "0.9", LWM2_CONF_LIVE,                   \
	  "share of samples in MPI that counts as MPI waits")                                      \
	X(WatchIdleCpu, FRAC, LWM2_CONF_RANGE(0, 1), "0.02", LWM2_CONF_LIVE,                       \
	  "cores under which a process is idle")                                                   \
	X(WatchThreadsRatio, FRAC, LWM2_CONF_RANGE(0, 1), "0.25", LWM2_CONF_LIVE,                  \
	  "underused below this times cpus-per-task cores")                                        \
	X(WatchAction, CHOICE, LWM2_CONF_WORDS("report|log|mail"), "report", LWM2_CONF_LIVE,       \
	  "what lwm2 watch does with a verdict")                                                   \
	X(WatchCancel, BOOL, LWM2_CONF_ANY, "no", LWM2_CONF_LIVE,                                  \
	  "yes: cancel a job still stuck after its mail")                                          \
	X(WatchCancelAfter, UINT, LWM2_CONF_RANGE(0, 30 * 86400), "3600", LWM2_CONF_LIVE,          \
	  "seconds after the mail before cancelling")                                              \
	X(WatchJobInterval, UINT, LWM2_CONF_RANGE(0, 365 * 86400), "86400", LWM2_CONF_LIVE,        \
	  "seconds between notices of one job")                                                    \
	X(WatchUserInterval, UINT, LWM2_CONF_RANGE(0, 365 * 86400), "3600", LWM2_CONF_LIVE,        \
	  "seconds between mails to one user")                                                     \
	X(WatchWasteMail, BOOL, LWM2_CONF_ANY, "no", LWM2_CONF_LIVE,                               \
	  "yes: mail the owners of jobs that waste cores")                                         \
	X(WatchWasteEfficiency, FRAC, LWM2_CONF_RANGE(0, 100), "10", LWM2_CONF_LIVE,               \
	  "CPU efficiency (percent) under which a job wastes")                                     \
	X(WatchWasteAfter, UINT, LWM2_CONF_RANGE(0, 365 * 86400), "3600", LWM2_CONF_LIVE,          \
	  "seconds a job runs before waste counts")                                                \
	X(WatchGatherTimeout, UINT, LWM2_CONF_RANGE(1, 600), "30", LWM2_CONF_LIVE,                 \
	  "seconds for a job's snapshots from its nodes")                                          \
	/* the commands that show digests */                                                       \
	X(DerivedMetric, LINES, LWM2_CONF_ANY, NULL, LWM2_CONF_LIVE,                               \
	  "NAME=EXPRESSION over metrics and counters (one a line)")

#define LWM2_CONF_ID(name, type, limits, def, parts, doc) LWM2_CONF_##name,
enum lwm2_conf_id { LWM2_CONF_KEYS(LWM2_CONF_ID) LWM2_CONF_NKEYS };
#undef LWM2_CONF_ID

struct lwm2_conf_key {
	const char *name;
	enum lwm2_conf_type type;
	struct lwm2_conf_limits limits;
	const char *def;
	unsigned parts;
	const char *doc;
};

/* The table, LWM2_CONF_NKEYS entries in the order of LWM2_CONF_KEYS. */
extern const struct lwm2_conf_key lwm2_conf_keys[LWM2_CONF_NKEYS];

/* A key's value, converted by its type; text is set for every type. */
struct lwm2_conf_value {
	char *text;      /* as read, NONE_TEXT's "none" as ""; NULL: no default */
	uint64_t num;    /* UINT; DURATION: seconds */
	double frac;     /* FRAC */
	bool yes;        /* BOOL */
	unsigned choice; /* CHOICE: the word's place in choices */
	unsigned line;   /* the line it was read from; 0: the default */
};

struct lwm2_conf {
	struct lwm2_conf_value v[LWM2_CONF_NKEYS];
};

/* In lwm2_conf_load's check: a key this lwm2 does not know is passed over
 * instead of refused.  For the parts that only read (the commands, the
 * mailer through `lwm2 config --get`): a site that upgrades jobcomp/lwm2
 * first may already have a newer lwm2's keys in the file, and the older
 * commands on its login nodes must keep working.  jobcomp/lwm2 refuses
 * them, as the part whose settings they mostly are. */
#define LWM2_CONF_LENIENT (1ull << 63)

/* The key named name (any case), or -1. */
int lwm2_conf_find(const char *name);

/* The keys parts read, as a set for lwm2_conf_load's check. */
uint64_t lwm2_conf_part_keys(unsigned parts);

/*
 * Where lwm2.conf is: $LWM2_CONF, else lwm2.conf in the directory of
 * slurm_conf_path (NULL, or no directory: /etc/slurm).  A malloc'd path,
 * or NULL with errno ENOMEM.
 */
char *lwm2_conf_path(const char *slurm_conf_path);

/*
 * The defaults, then the file at path (NULL or missing: the defaults
 * only).  Every line must be "key = value" of a key of the table; the
 * values of the keys in check (bit 1 << id; lwm2_conf_part_keys) are
 * checked and converted, the others only kept as text.  '#' starts a
 * comment; the last line of a key counts (LINES: every line).  0, or -1 with errno and the
 * reason in err: "PATH:LINE: unknown key KEY", "PATH:LINE: bad value
 * \"V\" for KEY", "PATH:LINE: no '=' in \"TEXT\"", "couldn't open PATH:
 * ...", "out of memory"; c holds nothing to free then.
 */
int lwm2_conf_load(struct lwm2_conf *c, const char *path, uint64_t check, char *err, size_t errlen);
void lwm2_conf_free(struct lwm2_conf *c);

/* c's text of key id into dst of len bytes (NULL text: ""): 0, or -1
 * with errno ENAMETOOLONG when it does not fit. */
int lwm2_conf_copy(const struct lwm2_conf *c, enum lwm2_conf_id id, char *dst, size_t len);

#endif /* LWM2_CONF_H */
