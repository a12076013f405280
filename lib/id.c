/* id: UUIDv7 generation. */
#include "id.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"

static uint64_t rng_state[2];
static int rng_seeded;
static uint64_t last_ms;
static unsigned counter;	/* 12 bits: rand_a */

static void seed(void)
{
	uint64_t s[2] = { 0, 0 };

	if (getrandom(s, sizeof(s), 0) != (ssize_t)sizeof(s)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		s[0] = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
		s[1] = (uint64_t)ts.tv_sec * 0x9e3779b97f4a7c15ull;
	}
	rng_state[0] = s[0] | 1;
	rng_state[1] = s[1] ^ 0x6a09e667f3bcc909ull;
	rng_seeded = 1;
}

/* xorshift128+: fast, and good enough for the non-secret random bits. */
uint64_t id_random64(void)
{
	uint64_t a, b;

	if (!rng_seeded)
		seed();
	a = rng_state[0];
	b = rng_state[1];
	rng_state[0] = b;
	a ^= a << 23;
	rng_state[1] = a ^ b ^ (a >> 17) ^ (b >> 26);
	return rng_state[1] + b;
}

static void format(char *out, const unsigned char u[16])
{
	static const char hex[] = "0123456789abcdef";
	char *p = out;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hex[u[i] >> 4];
		*p++ = hex[u[i] & 15];
	}
	*p = '\0';
}

void id_new_at(char out[UUID_STR_LEN + 1], uint64_t ms)
{
	unsigned char u[16];
	uint64_t r = id_random64();

	/* Monotonic: within one millisecond (or a clock step back) count up. */
	if (ms <= last_ms) {
		ms = last_ms;
		if (++counter > 0xfff) {
			ms++;
			counter = (unsigned)(r & 0x7ff);
		}
	} else {
		counter = (unsigned)(r & 0x7ff);	/* leave room to count */
	}
	last_ms = ms;
	r = id_random64();
	for (int i = 0; i < 6; i++)
		u[i] = (unsigned char)(ms >> (40 - 8 * i));
	u[6] = (unsigned char)(0x70 | (counter >> 8));
	u[7] = (unsigned char)counter;
	u[8] = (unsigned char)(0x80 | ((r >> 56) & 0x3f));
	for (int i = 9; i < 16; i++)
		u[i] = (unsigned char)(r >> (8 * (15 - i)));
	format(out, u);
}

void id_new(char out[UUID_STR_LEN + 1])
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	id_new_at(out, (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}
