# Shared set-up for the bats suites: the tools under test come first on
# PATH, each test gets a scratch directory, and a few helpers build frames.
: "${MSG_BIN:=$BATS_TEST_DIRNAME/../build}"
: "${MSG_TOP:=$BATS_TEST_DIRNAME/..}"
PATH="$MSG_BIN:$PATH"
FIXTURES="$BATS_TEST_DIRNAME/fixtures"

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# Every process a test starts ends with the test. A suite that defines
# its own teardown calls reap_test_processes from it.
teardown() {
	reap_test_processes
}

# spawn CMD...: run CMD in the background, without the descriptors bats
# watches (3) or a test holds FIFOs open with (4, 5, 7), so neither the
# end of the test nor the end of a FIFO's input waits for it; its pid is
# in $spawned. Standard input is passed on explicitly: a background
# command of a shell without job control otherwise reads /dev/null.
spawn() {
	"$@" <&0 3>&- 4>&- 5>&- 7>&- &
	spawned=$!
}

# test_processes ROOT: the pids of every process below ROOT still
# running, children and their children, not counting the command
# substitution that lists them.
test_processes() {
	ps -e -o pid=,ppid= | awk -v root="$1" -v lister="$BASHPID" '
		{ parent[$1] = $2 }
		END {
			for (p in parent) {
				q = p + 0
				while (q > 1 && q != root && q != lister && (q in parent))
					q = parent[q] + 0
				if (q == root && p + 0 != root)
					print p
			}
		}'
}

# reap_test_processes: kill every process the test left running, then
# wait for its children. SIGKILL, not SIGTERM: the tools finish the
# message in hand on SIGTERM, and one stuck in a write (or a sanitizer's
# exit-time check) would outlive the test. Processes can fork while they
# are being killed, so the list is taken again until it is empty.
reap_test_processes() {
	local root=$BASHPID round pids
	exec 4>&- 5>&- 7>&-
	for ((round = 0; round < 20; round++)); do
		pids=$(test_processes "$root")
		[ -z "$pids" ] && break
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null || true
		sleep 0.05
	done
	wait 2>/dev/null || true
}

# wait_until SECONDS CMD...: poll until CMD succeeds; fail after SECONDS.
wait_until() {
	local limit=$(($1 * 20)) i
	shift
	for ((i = 0; i < limit; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	echo "timed out after $((limit / 20)) s waiting for: $*" >&2
	return 1
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
