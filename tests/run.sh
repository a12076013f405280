#!/bin/sh
# Run the C unit tests and the bats suites against the tools in BUILD,
# printing the failures; append "LABEL PASSED FAILED SKIPPED" to COUNTS.
# usage: tests/run.sh BUILD LABEL COUNTS
#
# Each unit binary and each bats file runs in a session of its own with
# a time limit, so that a hung test fails within its limit instead of
# hanging the run, and whatever a suite leaves running when it ends is
# killed and counted as a failure. A unit binary that exits non-zero (a
# sanitizer's abort included) fails, whatever it printed before; a
# suite that stops before reporting every test it planned fails too.
#
# Limits, in seconds (environment): MSG_UNIT_LIMIT for a unit binary,
# MSG_SUITE_LIMIT for a bats file. BATS_TEST_TIMEOUT (one bats test) is
# passed on if set, not set by default: bats's watchdog for it is a
# child of the test's shell, and a test's bare `wait` would wait for it.
# MSG_SUITES names the bats files (default: every tests/*.bats).
# Each suite's time goes to COUNTS.times ("LABEL NAME SECONDS"), and the
# slowest are named after the counts, so a run near its limit shows
# where the time went.
set -u
build=$1 label=$2 counts=$3
top=$(cd "$(dirname "$0")/.." && pwd)
case $build in
/*) MSG_BIN=$build ;;
*) MSG_BIN=$top/$build ;;
esac
export MSG_BIN
export MSG_TOP="$top"
: "${MSG_SUITES=$top/tests/*.bats}"
: "${MSG_UNIT_LIMIT:=300}"
: "${MSG_SUITE_LIMIT:=1200}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
all=$work/all.tap

# contained NAME LIMIT LOG CMD...: run CMD under contain.sh, its output
# in LOG; a time-out, or a process left running, is reported in LOG as
# a failed test. Sets $status to CMD's exit status and $timed_out.
contained() {
	name=$1 limit=$2 log=$3
	shift 3
	status=0 timed_out=
	sh "$top/tests/contain.sh" "$limit" "$@" >"$log" 2>&1 </dev/null 3>&- ||
		status=$?
	case $status in
	124 | 137)
		timed_out=1
		echo "not ok - $name timed out after $limit s" >>"$log"
		;;
	*)
		if grep -q '^contain: left running' "$log"; then
			echo "not ok - $name left processes running when it ended" >>"$log"
		fi
		;;
	esac
}

# planned LOG NAME: LOG reports as many tests as its plan line announced.
planned() {
	plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$1" | tail -n 1)
	ran=$(grep -c -E '^(not )?ok [0-9]' "$1")
	if [ -z "$plan" ]; then
		echo "not ok - $2 reported no plan (it did not finish)" >>"$1"
	elif [ "$ran" -lt "$plan" ]; then
		echo "not ok - $2 reported $ran of the $plan tests it planned" >>"$1"
	fi
}

: >"$all"
echo "== $label: unit tests"
for t in "$MSG_BIN"/tests/test-*; do
	[ -x "$t" ] || continue
	name=${t##*/}
	contained "$name" "$MSG_UNIT_LIMIT" "$work/log" "$t"
	if [ -z "$timed_out" ]; then
		if [ "$status" -ne 0 ] && [ "$status" -ne 125 ]; then
			echo "not ok - $name exited with status $status" >>"$work/log"
		fi
		planned "$work/log" "$name"
	fi
	grep '^not ok' "$work/log" | sed "s|^|$name: |"
	cat "$work/log" >>"$all"
done

echo "== $label: bats"
# shellcheck disable=SC2086 # a list of names, globs expanded
for f in $MSG_SUITES; do
	[ -f "$f" ] || continue
	name=${f##*/}
	started=$(date +%s)
	contained "$name" "$MSG_SUITE_LIMIT" "$work/log" bats --tap "$f"
	echo "$label $name $(($(date +%s) - started))" >>"$counts.times"
	[ -n "$timed_out" ] || planned "$work/log" "$name"
	grep -A8 '^not ok' "$work/log" | grep -E '^(not ok|#|contain:)' | sed "s|^|$name: |"
	cat "$work/log" >>"$all"
done

# "ok N ... # skip" is a test that did not run: counted apart.
skipped=$(grep -c -E '^ok [0-9]+ .*# [Ss][Kk][Ii][Pp]' "$all")
passed=$(($(grep -c '^ok ' "$all") - skipped))
failed=$(grep -c '^not ok ' "$all")
awk -v label="$label" '$1 == label { print $3, $2 }' "$counts.times" |
	sort -rn | awk -v label="$label" '
	{ t += $1 }
	NR <= 5 { s = s ", " $2 " " $1 " s" }
	END { print label ": bats took " t " s" s }'
echo "$label: $passed passed, $failed failed, $skipped skipped"
echo "$label $passed $failed $skipped" >>"$counts"
