/* fuzz: what every libFuzzer harness of libmsg shares. */
#ifndef MSG_FUZZ_H
#define MSG_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "header.h"

/* A broken promise of the code under test: report it as a crash. */
#define REQUIRE(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

/* The same headers, names and values, in the same order. */
static inline void same_headers(const struct headers *a, const struct headers *b)
{
	REQUIRE(headers_count(a) == headers_count(b));
	for (size_t i = 0; i < headers_count(a); i++) {
		size_t an, av, bn, bv;
		const char *x = headers_name(a, i, &an), *y = headers_name(b, i, &bn);
		const char *xv = headers_value(a, i, &av), *yv = headers_value(b, i, &bv);

		REQUIRE(an == bn && !memcmp(x, y, an));
		REQUIRE(av == bv && !memcmp(xv, yv, av));
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
