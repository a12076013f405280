#!/bin/sh
# Add up the counts of every pass of tests/run.sh; the last line is the
# total, and the exit status says whether anything failed.
set -u
awk '{ p += $2; f += $3; s += $4 }
END {
	printf "%d passed, %d failed, %d skipped\n", p, f, s
	exit (f > 0)
}' "$1"
