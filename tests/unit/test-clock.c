/* test-clock: RFC 3339 timestamps, durations and sizes. */
#include <errno.h>
#include <stdint.h>

#include "clock.h"
#include "unit.h"

static const char *fmt(int64_t ms)
{
	static char out[TIMESTAMP_LEN + 1];

	timestamp_format(out, ms);
	return out;
}

static void test_format(void)
{
	CHECK_STR(fmt(0), "1970-01-01T00:00:00.000Z");
	CHECK_STR(fmt(1796199299123), "2026-12-02T08:14:59.123Z");
	CHECK_STR(fmt(1796199299999), "2026-12-02T08:14:59.999Z");
	CHECK_STR(fmt(1796199300000), "2026-12-02T08:15:00.000Z");
	CHECK_STR(fmt(1796199299001), "2026-12-02T08:14:59.001Z");	/* cached second */
	CHECK_STR(fmt(951868799999), "2000-02-29T23:59:59.999Z");
	CHECK_STR(fmt(-1), "1969-12-31T23:59:59.999Z");
	CHECK_STR(fmt(-1000), "1969-12-31T23:59:59.000Z");
	CHECK_STR(fmt(-1001), "1969-12-31T23:59:58.999Z");
	CHECK_STR(fmt(-86400000), "1969-12-31T00:00:00.000Z");
	CHECK_STR(fmt(-2208988800000), "1900-01-01T00:00:00.000Z");
	CHECK_STR(fmt(253402300799999), "9999-12-31T23:59:59.999Z");
	CHECK(TIMESTAMP_LEN == 24);
}

static void parses(const char *s, int64_t want)
{
	int64_t got = -12345;
	int r = timestamp_parse(s, &got);

	CHECK(r == 0 && got == want);
	if (r != 0 || got != want)
		printf("#   '%s': r=%d got %lld want %lld\n", s, r,
		       (long long)got, (long long)want);
}

static void rejects(const char *s)
{
	int64_t got = 777;

	errno = 0;
	CHECK(timestamp_parse(s, &got) == -1 && errno == EINVAL && got == 777);
	if (got != 777)
		printf("#   '%s' was accepted\n", s);
}

static void test_parse(void)
{
	parses("1970-01-01T00:00:00Z", 0);
	parses("1970-01-01T00:00:00.000Z", 0);
	parses("2026-12-02T08:14:59.123Z", 1796199299123);
	parses("2026-12-02T08:14:59Z", 1796199299000);
	parses("2026-12-02t08:14:59.123z", 1796199299123);
	parses("2026-12-02 08:14:59.123Z", 1796199299123);
	parses("2026-12-02T09:14:59.123+01:00", 1796199299123);
	parses("2026-12-02T03:44:59.123-04:30", 1796199299123);
	parses("2026-12-02T08:14:59.123+00:00", 1796199299123);
	parses("2026-12-02T08:14:59.123-00:00", 1796199299123);
	parses("2026-12-02T08:14:59.1Z", 1796199299100);
	parses("2026-12-02T08:14:59.12Z", 1796199299120);
	parses("2026-12-02T08:14:59.123456789Z", 1796199299123);
	parses("1969-12-31T23:59:59.999Z", -1);
	parses("1900-01-01T00:00:00Z", -2208988800000);
	parses("2000-02-29T23:59:59.999Z", 951868799999);
	parses("2016-12-31T23:59:60Z", 1483228800000);	/* leap second */
	parses("2026-12-03T00:14:59.123+16:00", 1796199299123);

	rejects("");
	rejects("garbage");
	rejects("2026-12-02");
	rejects("2026-12-02T08:14:59");
	rejects("2026-12-02T08:14:59.Z");
	rejects("2026-12-02T08:14:59.123");
	rejects("2026-12-02T08:14:59ZZ");
	rejects("2026-12-02T08:14:59Z ");
	rejects(" 2026-12-02T08:14:59Z");
	rejects("2026-12-02T08:14:59+0100");
	rejects("2026-12-02T08:14:59+01");
	rejects("2026-12-02T08:14:59+24:00");
	rejects("2026-12-02T08:14:59+01:60");
	rejects("2026-13-02T08:14:59Z");
	rejects("2026-00-02T08:14:59Z");
	rejects("2026-12-00T08:14:59Z");
	rejects("2026-12-32T08:14:59Z");
	rejects("2026-12-02T24:00:00Z");
	rejects("2026-12-02T08:60:00Z");
	rejects("2026-12-02T08:14:61Z");
	rejects("26-12-02T08:14:59Z");
	rejects("2026/12/02T08:14:59Z");
	rejects("2026-12-02X08:14:59Z");
	rejects("2026-1a-02T08:14:59Z");
}

static void duration_ok(const char *s, int64_t want)
{
	int64_t got = -1;

	CHECK(duration_parse(s, &got) == 0 && got == want);
	if (got != want)
		printf("#   '%s': got %lld want %lld\n", s, (long long)got,
		       (long long)want);
}

static void duration_bad(const char *s, int err)
{
	int64_t got = 5;

	errno = 0;
	CHECK(duration_parse(s, &got) == -1 && errno == err && got == 5);
}

static void test_duration(void)
{
	duration_ok("250ms", 250);
	duration_ok("30s", 30000);
	duration_ok("5m", 300000);
	duration_ok("2h", 7200000);
	duration_ok("1d", 86400000);
	duration_ok("0", 0);
	duration_ok("0ms", 0);
	duration_ok("10", 10000);	/* a bare number is seconds */
	duration_ok("007s", 7000);
	duration_ok("9223372036854775807ms", INT64_MAX);
	duration_ok("106751991167d", 106751991167LL * 86400000);

	duration_bad("5x", EINVAL);
	duration_bad("", EINVAL);
	duration_bad("-1", EINVAL);
	duration_bad("+1s", EINVAL);
	duration_bad("ms", EINVAL);
	duration_bad("s", EINVAL);
	duration_bad("1.5s", EINVAL);
	duration_bad("5 s", EINVAL);
	duration_bad(" 5s", EINVAL);
	duration_bad("5S", EINVAL);
	duration_bad("5sec", EINVAL);
	duration_bad("5ms ", EINVAL);
	duration_bad("9223372036854775808ms", ERANGE);
	duration_bad("9223372036854776s", ERANGE);
	duration_bad("106751991168d", ERANGE);
	duration_bad("99999999999999999999", ERANGE);
	duration_bad("99999999999999999999999999999999ms", ERANGE);
}

static void size_ok(const char *s, uint64_t want)
{
	uint64_t got = 1;

	CHECK(size_parse(s, &got) == 0 && got == want);
	if (got != want)
		printf("#   '%s': got %llu want %llu\n", s,
		       (unsigned long long)got, (unsigned long long)want);
}

static void size_bad(const char *s, int err)
{
	uint64_t got = 5;

	errno = 0;
	CHECK(size_parse(s, &got) == -1 && errno == err && got == 5);
}

static void test_size(void)
{
	size_ok("64k", 65536);
	size_ok("64K", 65536);
	size_ok("10M", 10485760);
	size_ok("1G", 1073741824);
	size_ok("2T", 2199023255552ULL);
	size_ok("0", 0);
	size_ok("0k", 0);
	size_ok("123", 123);
	size_ok("4096", 4096);
	size_ok("17179869183G", 17179869183ULL << 30);

	size_bad("", EINVAL);
	size_bad("k", EINVAL);
	size_bad("10x", EINVAL);
	size_bad("10MB", EINVAL);
	size_bad("10m", EINVAL);
	size_bad("10kk", EINVAL);
	size_bad("-1", EINVAL);
	size_bad(" 1", EINVAL);
	size_bad("1 ", EINVAL);
	size_bad("1.5M", EINVAL);
	size_bad("0x10", EINVAL);
	size_bad("17179869184G", ERANGE);
	size_bad("16777216T", ERANGE);
	size_bad("18446744073709551616", ERANGE);
}

int main(void)
{
	test_format();
	test_parse();
	test_duration();
	test_size();
	return unit_done();
}
