#!/bin/sh
# usage: contain.sh SECONDS CMD...
# Run CMD in a session of its own, stopped after SECONDS (SIGTERM, then
# SIGKILL 10 s later; exit status 124 or 137). When CMD ends, anything
# still running in its session (a background job it forgot, a child of
# a killed timeout(1) in a process group of its own) is killed and named
# on standard error, one "contain: left running: ..." line each, and the
# exit status is 125 if CMD's own was 0. Otherwise CMD's exit status.
set -u
limit=$1
shift
sidfile=$(mktemp)
status=0
setsid -w sh -c 'echo $$ >"$0"; exec "$@"' "$sidfile" \
	timeout -k 10 "$limit" "$@" || status=$?
sid=$(cat "$sidfile")
rm -f "$sidfile"
# Zombies are not running: their parent, gone too, never reaped them.
left=$(ps -e -o sid=,pid=,stat=,args= | awk -v sid="$sid" '$1 == sid && $3 !~ /^Z/')
if [ -n "$left" ]; then
	pkill -KILL -s "$sid" 2>/dev/null
	printf '%s\n' "$left" | sed 's/^ *[0-9]* */contain: left running: /' >&2
	[ "$status" -ne 0 ] || status=125
fi
exit "$status"
