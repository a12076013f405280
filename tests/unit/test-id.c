/* test-id: UUIDv7 layout, monotonic order, and the time prefix. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "id.h"
#include "unit.h"

/* Layout of RFC 9562: 8-4-4-4-12 lowercase hex, version 7, variant 10. */
static int well_formed(const char *s)
{
	if (strlen(s) != UUID_STR_LEN)
		return 0;
	for (int i = 0; i < UUID_STR_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!strchr("0123456789abcdef", s[i]) || !s[i]) {
			return 0;
		}
	}
	return s[14] == '7' && strchr("89ab", s[19]) != NULL;
}

/* The 48-bit Unix millisecond time at the front of an id. */
static uint64_t id_ms(const char *s)
{
	char hex[13];

	memcpy(hex, s, 8);
	memcpy(hex + 8, s + 9, 4);
	hex[12] = '\0';
	return strtoull(hex, NULL, 16);
}

static void test_format(void)
{
	char id[UUID_STR_LEN + 1];
	int64_t before = clock_now_ms(), after;

	id_new(id);
	after = clock_now_ms();
	CHECK(well_formed(id));
	CHECK(id_ms(id) >= (uint64_t)before && id_ms(id) <= (uint64_t)after);
	CHECK(well_formed("0192f1d4-7b9e-7c31-9a55-2f4b8e61d0aa"));
	CHECK(!well_formed("0192f1d4-7b9e-4c31-9a55-2f4b8e61d0aa"));
	CHECK(!well_formed("0192f1d4-7b9e-7c31-ca55-2f4b8e61d0aa"));
	CHECK(!well_formed("0192F1D4-7b9e-7c31-9a55-2f4b8e61d0aa"));
	CHECK(id_ms("0192f1d4-7b9e-7c31-9a55-2f4b8e61d0aa") == 0x0192f1d47b9eULL);
}

static void test_increasing(void)
{
	char prev[UUID_STR_LEN + 1], id[UUID_STR_LEN + 1];
	int ordered = 1, formed = 1;

	id_new(prev);
	for (int i = 0; i < 100000; i++) {
		id_new(id);
		ordered &= strcmp(prev, id) < 0;
		formed &= well_formed(id);
		memcpy(prev, id, sizeof(id));
	}
	CHECK(ordered);
	CHECK(formed);
}

static void test_at(void)
{
	/* 2100-01-01T00:00:00Z: later than any clock this test runs on. */
	const uint64_t t = 4102444800000ULL;
	char prev[UUID_STR_LEN + 1], id[UUID_STR_LEN + 1];
	int ordered = 1, same_ms = 1, formed = 1;

	id_new_at(prev, t);
	CHECK(!strncmp(prev, "03bb2cc3-d800-7", 15));
	CHECK(id_ms(prev) == t);
	for (int i = 0; i < 1000; i++) {
		id_new_at(id, t);
		ordered &= strcmp(prev, id) < 0;
		same_ms &= id_ms(id) == t;
		formed &= well_formed(id);
		memcpy(prev, id, sizeof(id));
	}
	CHECK(ordered && same_ms && formed);

	/* A clock stepping back does not break the order. */
	id_new_at(id, t - 5000);
	CHECK(strcmp(prev, id) < 0);
	CHECK(id_ms(id) == t);
	memcpy(prev, id, sizeof(id));
	id_new(id);
	CHECK(strcmp(prev, id) < 0);
	memcpy(prev, id, sizeof(id));

	id_new_at(id, t + 1);
	CHECK(strcmp(prev, id) < 0);
	CHECK(!strncmp(id, "03bb2cc3-d801-7", 15));

	/* More ids in one millisecond than the 12-bit counter holds. */
	memcpy(prev, id, sizeof(id));
	for (int i = 0; i < 10000; i++) {
		id_new_at(id, t + 2);
		ordered &= strcmp(prev, id) < 0;
		formed &= well_formed(id);
		memcpy(prev, id, sizeof(id));
	}
	CHECK(ordered && formed);
	CHECK(id_ms(id) > t + 2);
	CHECK(id_ms(id) <= t + 2 + 10000 / 2048 + 1);
}

static void test_random(void)
{
	uint64_t a = id_random64(), b = id_random64(), c = id_random64();

	CHECK(a != b && b != c && a != c);
}

int main(void)
{
	test_format();
	test_increasing();
	test_at();
	test_random();
	return unit_done();
}
