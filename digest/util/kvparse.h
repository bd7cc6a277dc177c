/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * "Key = value" lines of lwm2.conf (read by jobcomp/lwm2 and by the live
 * commands) and of the export credentials file.
 */
#ifndef LWM2_KVPARSE_H
#define LWM2_KVPARSE_H

#include <stdbool.h>

/* s without leading and trailing blanks (cut in place). */
char *lwm2_trim(char *s);

/*
 * Split line (changed in place) into a trimmed key and value around the
 * first '='.  A '#' starts a comment: anywhere with hash_anywhere (no
 * value of lwm2.conf holds one), else only at the start of the line (a
 * password may hold one).  1: *key and *val set; 0: blank or comment;
 * -1: no '=' (*key is then the trimmed line, for the message).
 */
int lwm2_kv_split(char *line, bool hash_anywhere, char **key, char **val);

/* yes/true/1 and no/false/0 (any case) into *out; 0, or -1 with errno
 * EINVAL for anything else. */
int lwm2_parse_bool(const char *v, bool *out);

#endif /* LWM2_KVPARSE_H */
