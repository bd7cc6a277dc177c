/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SHA-256 against the FIPS 180-4 example vectors, whole and in pieces. */
#include "sha256.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

static const struct {
	const char *msg;
	size_t repeat;
	const char *want;
} cases[] = {
    {"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
     "lmnopqrsmnopqrstnopqrstu",
     1, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
};

static void hex(const uint8_t *d, char *out)
{
	for (int i = 0; i < LWM2_SHA256_LEN; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t ml = strlen(cases[i].msg), len = ml * cases[i].repeat;
		char *buf = malloc(len + 1), got[2 * LWM2_SHA256_LEN + 1];
		static const size_t chunks[] = {1, 3, 63, 64, 65, 1000};
		for (size_t k = 0; k < cases[i].repeat; k++)
			memcpy(buf + k * ml, cases[i].msg, ml);
		lwm2_sha256_hex(buf, len, got);
		is_str(got, cases[i].want, "vector %zu in one call", i);
		/* Pieces that straddle block boundaries in every way. */
		size_t wrong = 0;
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			struct lwm2_sha256 s;
			uint8_t d[LWM2_SHA256_LEN];
			lwm2_sha256_init(&s);
			for (size_t off = 0; off < len; off += chunks[c])
				lwm2_sha256_update(&s, buf + off,
				                   len - off < chunks[c] ? len - off : chunks[c]);
			lwm2_sha256_final(&s, d);
			hex(d, got);
			if (strcmp(got, cases[i].want) != 0) {
				diag("vector %zu in pieces of %zu: %s", i, chunks[c], got);
				wrong++;
			}
		}
		is_int(wrong, 0, "vector %zu in pieces of 1..1000 bytes", i);
		free(buf);
	}
	return done_testing();
}
