# Shared set-up for the bats suites: the tools under test come first on
# PATH, each test gets a scratch directory, and a few helpers build frames.
: "${MSG_BIN:=$BATS_TEST_DIRNAME/../build}"
: "${MSG_TOP:=$BATS_TEST_DIRNAME/..}"
PATH="$MSG_BIN:$PATH"
# shellcheck disable=SC2034 # for the suites and the fixture helpers
FIXTURES="$BATS_TEST_DIRNAME/fixtures"
# Types by file name come from a fixed list, not the system's.
export MSG_MIME_TYPES="$FIXTURES/wrap/mime.types"

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
	# shellcheck disable=SC2034 # for the caller
	spawned=$!
}

# test_processes ROOT: the pids of every process below ROOT still
# running, children and their children, not counting the command
# substitution that lists them, nor bats's own watchdog for
# BATS_TEST_TIMEOUT (killing its sleep would make it fire, failing the
# test as timed out).
test_processes() {
	# The shell running this function; ps and awk are its children (a
	# pipeline's $BASHPID would be awk's own).
	local lister=$BASHPID
	ps -e -o pid=,ppid=,stat= | awk -v root="$1" -v lister="$lister" \
		-v watchdog="${BATS_killer_pid:-0}" '
		# A zombie is dead already: only its parent waiting for it is left.
		$3 !~ /^Z/ { parent[$1] = $2 }
		END {
			for (p in parent) {
				q = p + 0
				while (q > 1 && q != root && q != lister && q != watchdog &&
				    (q in parent))
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
	local root=$BASHPID round pids killed=
	exec 4>&- 5>&- 7>&-
	for ((round = 0; round < 20; round++)); do
		pids=$(test_processes "$root")
		[ -z "$pids" ] && break
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null || true
		killed="$killed $pids"
		sleep 0.05
	done
	# Only those: a bare wait would wait for bats's watchdog too. Those
	# that are not children of this shell are not waited for.
	# shellcheck disable=SC2086
	[ -z "$killed" ] || wait $killed 2>/dev/null || true
}

# shellcheck source=fixtures/wait-until.bash
. "$FIXTURES/wait-until.bash"

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

# stats_line_of TOOL 'NAME...' [NAME=VALUE ...]: the --stats line TOOL
# prints, its counters NAME... in that order, each the VALUE given or 0.
stats_line_of() {
	local tool=$1 kv name line sep=' '
	local -a names
	local -A given=()
	read -r -a names <<<"$2"
	shift 2
	for kv in "$@"; do
		given[${kv%%=*}]=${kv#*=}
	done
	line="$tool: stats:"
	for name in "${names[@]}"; do
		line="$line$sep$name ${given[$name]:-0}"
		sep=', '
	done
	printf '%s\n' "$line"
}

# Drop the headers that change from run to run (ids, times).
stable_headers() {
	grep -v -E '^(Message-Id|Timestamp): '
}

# ---- running out of memory ----
#
# short_of_memory KB CMD...: run CMD with its address space limited to KB
# KiB (bats' run around it gives the status). A sanitizer build reserves
# terabytes of address space for its shadow memory as it starts, so under
# any such limit it dies before main(): tests that need one skip there
# (MSG_BIN names the build, and the sanitizer build's name has "san").
short_of_memory() {
	local kb=$1
	shift
	bash -c 'ulimit -v "$1" && shift && exec "$@"' short_of_memory "$kb" "$@"
}

skip_without_memory_limits() {
	[[ $MSG_BIN != *san* ]] || skip "ulimit -v stops a sanitizer build before it starts"
}

# spool_of_big_xml: a dir: spool sp holding one message whose body is
# 11 MB of small elements (/a/b, 800,000 of them), too many to build a
# tree of within 70,000 KiB but no trouble for the tools otherwise; the
# file is also left as big.xml.
spool_of_big_xml() {
	perl -e 'print "<a>", "<b x=\"1\">t</b>" x 800000, "</a>"' >big.xml
	msg-wrap --output dir:sp big.xml
}

# runs_out_of_memory TOOL ARG...: TOOL --once ARG... dir:sp, given too
# little memory for the message of spool_of_big_xml, exits 70 naming the
# message and leaves it in sp/cur for the next run: not set aside in
# sp/bad, not diverted to inv.msg.
runs_out_of_memory() {
	local tool=$1 path name id
	shift
	path=$(find sp/new sp/cur -type f)
	name=${path##*/}
	id=$(sed -n 's/^Message-Id: //p' "$path")
	run -70 --separate-stderr short_of_memory 70000 "$tool" --once "$@" dir:sp
	[ "$stderr" = "$tool: dir:sp/cur/$name: message 1 (Message-Id $id): out of memory parsing the body" ]
	[ -z "$output" ]
	[ "$(find sp -type f)" = "sp/cur/$name" ]
	[ ! -s inv.msg ]
}
