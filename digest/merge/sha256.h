/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SHA-256 (FIPS 180-4): binds the munge credential of a node record to the
 * exact bytes of the record.  Small and dependency-free so the digest
 * library needs no crypto library beyond munge.
 */
#ifndef LWM2_SHA256_H
#define LWM2_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define LWM2_SHA256_LEN 32

struct lwm2_sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	uint8_t buf[64];
	size_t nbuf;
};

void lwm2_sha256_init(struct lwm2_sha256 *s);
void lwm2_sha256_update(struct lwm2_sha256 *s, const void *data, size_t len);
void lwm2_sha256_final(struct lwm2_sha256 *s, uint8_t out[LWM2_SHA256_LEN]);

/* One call: hash of data as 64 lowercase hex digits and a NUL. */
void lwm2_sha256_hex(const void *data, size_t len, char out[2 * LWM2_SHA256_LEN + 1]);

#endif /* LWM2_SHA256_H */
