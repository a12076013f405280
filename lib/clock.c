/* clock: time, timestamps, durations and sizes. */
#include "clock.h"

#include <inttypes.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t clock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void timestamp_format(char out[TIMESTAMP_LEN + 1], int64_t unix_ms)
{
	/* Many messages share a second: format the date part once per second. */
	static int64_t cached_sec = INT64_MIN;
	static char cached[64];
	int64_t sec = unix_ms >= 0 ? unix_ms / 1000 : (unix_ms - 999) / 1000;
	int ms = (int)(unix_ms - sec * 1000);

	if (sec != cached_sec) {
		time_t t = (time_t)sec;
		struct tm tm;
		gmtime_r(&t, &tm);
		snprintf(cached, sizeof(cached), "%04d-%02d-%02dT%02d:%02d:%02d",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec);
		cached_sec = sec;
	}
	memcpy(out, cached, 19);
	out[19] = '.';
	out[20] = (char)('0' + ms / 100);
	out[21] = (char)('0' + ms / 10 % 10);
	out[22] = (char)('0' + ms % 10);
	out[23] = 'Z';
	out[24] = '\0';
}

static int days_in_month(int y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : days[m - 1];
}

static int digits(const char **s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if ((*s)[i] < '0' || (*s)[i] > '9')
			return -1;
		v = v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	*out = v;
	return 0;
}

static int expect(const char **s, const char *set)
{
	if (!**s || !strchr(set, **s))
		return -1;
	(*s)++;
	return 0;
}

int timestamp_parse(const char *s, int64_t *unix_ms)
{
	int y, mo, d, h, mi, se, ms = 0, oh = 0, om = 0, sign = 0;
	int64_t t;

	if (digits(&s, 4, &y) || expect(&s, "-") || digits(&s, 2, &mo) ||
	    expect(&s, "-") || digits(&s, 2, &d) || expect(&s, "Tt ") ||
	    digits(&s, 2, &h) || expect(&s, ":") || digits(&s, 2, &mi) ||
	    expect(&s, ":") || digits(&s, 2, &se))
		goto bad;
	if (*s == '.') {
		int scale = 100;
		s++;
		if (*s < '0' || *s > '9')
			goto bad;
		for (; *s >= '0' && *s <= '9'; s++) {
			ms += (*s - '0') * scale;
			scale /= 10;
		}
	}
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s++ == '-' ? -1 : 1;
		if (digits(&s, 2, &oh) || expect(&s, ":") || digits(&s, 2, &om))
			goto bad;
	} else {
		goto bad;
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) ||
	    h > 23 || mi > 59 || se > 60 || oh > 23 || om > 59)
		goto bad;
	t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
	t -= sign * (oh * 3600 + om * 60);
	*unix_ms = t * 1000 + ms;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

/* A decimal number then a unit from the table; the factor it scales by. */
static int number_with_unit(const char *s, const char *const *units,
			    const unsigned long long *factors, int default_unit,
			    unsigned long long *out)
{
	unsigned long long v = 0;
	const char *p = s;
	int u;

	if (*p < '0' || *p > '9')
		goto bad;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (~0ull - d) / 10)
			goto range;
		v = v * 10 + d;
	}
	if (!*p) {
		u = default_unit;
	} else {
		for (u = 0; units[u]; u++)
			if (!strcmp(p, units[u]))
				break;
		if (!units[u])
			goto bad;
	}
	if (factors[u] && v > ~0ull / factors[u])
		goto range;
	*out = v * factors[u];
	return 0;
bad:
	errno = EINVAL;
	return -1;
range:
	errno = ERANGE;
	return -1;
}

int duration_parse(const char *s, int64_t *ms)
{
	static const char *const units[] = { "ms", "s", "m", "h", "d", NULL };
	static const unsigned long long f[] = { 1, 1000, 60000, 3600000,
						86400000 };
	unsigned long long v;

	if (number_with_unit(s, units, f, 1, &v))
		return -1;
	if (v > INT64_MAX) {
		errno = ERANGE;
		return -1;
	}
	*ms = (int64_t)v;
	return 0;
}

void duration_add(struct buf *out, int64_t ms)
{
	if (ms % 1000)
		buf_addf(out, "%" PRId64 "ms", ms);
	else
		buf_addf(out, "%" PRId64 "s", ms / 1000);
}

int size_parse(const char *s, uint64_t *bytes)
{
	static const char *const units[] = { "k", "K", "M", "G", "T", NULL };
	static const unsigned long long f[] = { 1ull << 10, 1ull << 10,
						1ull << 20, 1ull << 30,
						1ull << 40, 1 };
	unsigned long long v;

	/* index 5 (no unit) multiplies by 1 */
	if (number_with_unit(s, units, f, 5, &v))
		return -1;
	*bytes = v;
	return 0;
}
