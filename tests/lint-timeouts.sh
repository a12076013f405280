#!/bin/sh
# Every timeout(1) a test or benchmark runs carries -k: a tool that
# catches SIGTERM (and every msgtools tool does, to end its batch) can
# outlive a plain timeout, and the suite would hang on it. A command
# word "timeout" is one at a line's start or after a separator, or
# after run's, spawn's, in_session's or exec's own words; msg-exec's
# --timeout option and the word in expected output are not.
# usage: sh tests/lint-timeouts.sh FILE...
set -u
command='(^|[;&|(`]|[[:space:]]--[[:space:]]|\b(run|spawn|in_session|exec|then|do|time))[[:space:]]*((-[0-9]+|!|--separate-stderr)[[:space:]]+)*timeout[[:space:]]'
killing='timeout[[:space:]]+(--foreground[[:space:]]+)?(-s[[:space:]]+[A-Z]+[[:space:]]+)?-k[[:space:]]'
bad=$(grep -nE "$command" "$@" | grep -vE "$killing")
[ -z "$bad" ] && exit 0
printf '%s\n' "$bad"
echo "make check: a timeout(1) above has no -k (its KILL when TERM is not enough)" >&2
exit 1
