/*
 * jsonlex: the lexical rules of JSON (RFC 8259) that every JSON reader of
 * libmsg shares: the streaming scanner (jsonscan), the tree mapping
 * (jsonxml) and the pointer lookup (jsonptr). Character classes, escapes,
 * the number grammar, how a byte is named in a message, and the one
 * nesting limit. Each reader keeps only its own way of walking the text.
 */
#ifndef MSG_JSONLEX_H
#define MSG_JSONLEX_H

#include <stddef.h>
#include <stdint.h>

/*
 * Containers nested deeper than this are rejected by every reader (the
 * outermost is level 1), with "offset N: nesting deeper than 512" where N
 * is the offset of the bracket that opens level 513.
 */
#define JSON_MAX_DEPTH 512
#define JSONLEX_STR_(x) #x
#define JSONLEX_STR(x) JSONLEX_STR_(x)
#define JSON_TOO_DEEP "nesting deeper than " JSONLEX_STR(JSON_MAX_DEPTH)

/* Bytes a JSON string holds as they are: printable ASCII but '"' and '\'. */
extern const unsigned char jsonlex_plain[256];
/* The four whitespace bytes of JSON. */
extern const unsigned char jsonlex_space[256];

static inline int jsonlex_is_digit(unsigned c)
{
	return c - '0' < 10;
}

static inline int jsonlex_is_hex(unsigned c)
{
	unsigned low = c | 0x20;

	return jsonlex_is_digit(c) || (low >= 'a' && low <= 'f');
}

/* The literal a value that starts with byte b must be: "true", "false"
 * or "null"; NULL when no literal starts so. */
static inline const char *jsonlex_literal(unsigned b)
{
	return b == 't' ? "true" : b == 'f' ? "false" : b == 'n' ? "null" : NULL;
}

/* "'x'" for a printable byte, else "byte 0xNN": for messages. */
const char *jsonlex_describe(unsigned c, char out[16]);

/* Four hex digits at s[0..n): 0 with their value in *v, or -1. */
int jsonlex_hex4(const unsigned char *s, size_t n, uint32_t *v);

/*
 * The escape at s[0] (a '\') in s[0..n): its length with the code point in
 * *cp: 2 for \n and the like, 6 for \uXXXX, 12 for a surrogate pair that
 * makes one character. A lone surrogate is returned as it is. 0 if the
 * escape is invalid or cut off by the end of s.
 */
size_t jsonlex_unescape(const unsigned char *s, size_t n, uint32_t *cp);

/*
 * The number grammar as states, for readers that meet a number a byte at
 * a time. JSONLEX_NUM_START is before its first byte.
 */
enum jsonlex_num {
	JSONLEX_NUM_START = 1,
	JSONLEX_NUM_MINUS,
	JSONLEX_NUM_ZERO,
	JSONLEX_NUM_INT,	/* in the integer part */
	JSONLEX_NUM_DOT,
	JSONLEX_NUM_FRAC,	/* in the fraction */
	JSONLEX_NUM_EXP_MARK,
	JSONLEX_NUM_EXP_SIGN,
	JSONLEX_NUM_EXP,	/* in the exponent's digits */
};

/* In a run of digits, where any number of digits may come next? */
static inline int jsonlex_num_in_digits(int st)
{
	return st == JSONLEX_NUM_INT || st == JSONLEX_NUM_FRAC ||
	       st == JSONLEX_NUM_EXP;
}

/*
 * The state after byte b in state st; 0 if the number ended before b; -1
 * if b is wrong there, with the reason in *why. Inline: the streaming
 * scanner takes it for every byte of a number that is not a digit run.
 */
static inline int jsonlex_num_step(int st, unsigned b, const char **why)
{
	int digit = jsonlex_is_digit(b), mark = b == 'e' || b == 'E';

	switch (st) {
	case JSONLEX_NUM_START:
		*why = "digit expected after '-'";
		return b == '-' ? JSONLEX_NUM_MINUS : b == '0' ? JSONLEX_NUM_ZERO
			: digit ? JSONLEX_NUM_INT : -1;
	case JSONLEX_NUM_MINUS:
		*why = "digit expected after '-'";
		return b == '0' ? JSONLEX_NUM_ZERO : digit ? JSONLEX_NUM_INT : -1;
	case JSONLEX_NUM_ZERO:
		*why = "leading zero in number";
		return digit ? -1 : b == '.' ? JSONLEX_NUM_DOT
			: mark ? JSONLEX_NUM_EXP_MARK : 0;
	case JSONLEX_NUM_INT:
		return digit ? JSONLEX_NUM_INT : b == '.' ? JSONLEX_NUM_DOT
			: mark ? JSONLEX_NUM_EXP_MARK : 0;
	case JSONLEX_NUM_DOT:
		*why = "digit expected after '.'";
		return digit ? JSONLEX_NUM_FRAC : -1;
	case JSONLEX_NUM_FRAC:
		return digit ? JSONLEX_NUM_FRAC : mark ? JSONLEX_NUM_EXP_MARK : 0;
	case JSONLEX_NUM_EXP_MARK:
		*why = "digit expected in exponent";
		return digit ? JSONLEX_NUM_EXP
			: b == '+' || b == '-' ? JSONLEX_NUM_EXP_SIGN : -1;
	case JSONLEX_NUM_EXP_SIGN:
		*why = "digit expected in exponent";
		return digit ? JSONLEX_NUM_EXP : -1;
	default:
		return digit ? JSONLEX_NUM_EXP : 0;
	}
}

/* Where the input ends in state st: NULL if the number is whole, else why
 * it is not. */
const char *jsonlex_num_end(int st);

/*
 * Length of the JSON number at the start of s[0..n). On a syntax error
 * returns 0 with *why and *at (the offending byte's index, or n) set.
 */
size_t jsonlex_number_len(const unsigned char *s, size_t n, size_t *at,
			  const char **why);

#endif
