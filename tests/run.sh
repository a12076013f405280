#!/bin/sh
# Run the C unit tests and the bats suites against the tools in BUILD,
# printing TAP; append "LABEL PASSED FAILED" to COUNTS.
# usage: tests/run.sh BUILD LABEL COUNTS
set -u
build=$1 label=$2 counts=$3
top=$(cd "$(dirname "$0")/.." && pwd)
export MSG_BIN="$top/$build"
export MSG_TOP="$top"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "== $label: unit tests"
for t in "$top/$build"/tests/test-*; do
	[ -x "$t" ] || continue
	"$t" >>"$out" 2>&1 || true
done
grep -E '^(not )?ok ' "$out" | grep '^not ok' || true

echo "== $label: bats"
bats --tap "$top"/tests/*.bats >>"$out" 2>&1 || true
grep -A8 '^not ok' "$out" | grep -E '^(not ok|#)' || true

passed=$(grep -c '^ok ' "$out")
failed=$(grep -c '^not ok ' "$out")
# A suite that crashed before it could report counts as a failure.
if ! grep -q '^1\.\.' "$out"; then
	failed=$((failed + 1))
fi
echo "$label: $passed passed, $failed failed"
echo "$label $passed $failed" >>"$counts"
