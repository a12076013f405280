# Shared set-up for the bats suites: the tools under test come first on
# PATH, each test gets a scratch directory, and a few helpers build frames.
: "${MSG_BIN:=$BATS_TEST_DIRNAME/../build}"
: "${MSG_TOP:=$BATS_TEST_DIRNAME/..}"
PATH="$MSG_BIN:$PATH"
FIXTURES="$BATS_TEST_DIRNAME/fixtures"

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# frame BODY [HEADER ...]: one frame with the given body and headers.
frame() {
	local LC_ALL=C	# ${#body} counts bytes only in the C locale
	local body=$1
	shift
	local h
	for h in "$@"; do
		printf '%s\n' "$h"
	done
	printf 'Content-Length: %d\n\n%s\n' "${#body}" "$body"
}

# Drop the headers that change from run to run (ids, times).
stable_headers() {
	grep -v -E '^(Message-Id|Timestamp): '
}
