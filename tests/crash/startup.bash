# startup.bash: how long a program takes to start here, the kill
# windows of tests/crash/run.sh that follow from it and from the work a
# crash test does, and the rounds of kills that make a tool drain a
# spool (loaded with `load crash/startup`).

# fastest_ms CMD...: run CMD once to warm the caches, then three times,
# and print the quickest of the three in whole milliseconds, rounded up.
# Timed with bash's clock, so no process but CMD's is counted.
fastest_ms() {
	local t0 t1 us='' i
	"$@"
	for ((i = 0; i < 3; i++)); do
		t0=${EPOCHREALTIME/./}
		"$@"
		t1=${EPOCHREALTIME/./}
		if [ -z "$us" ] || [ $((t1 - t0)) -lt "$us" ]; then
			us=$((t1 - t0))
		fi
	done
	echo $((us / 1000 + 1))
}

# kill_plan WORK_MS: the kill windows and rounds of a crash test whose
# whole work takes WORK_MS here uninterrupted. WINDOW_MS, the longest
# window, is a twentieth of it (from 100 ms to 3 s), so that the kills
# fall all along it: about forty rounds of work, whatever the machine's
# speed, its load or a sanitizer's cost. ROUNDS is up to 60 kills as
# built, MIN_KILLS at least 20; under the sanitizers a third of them
# run the same paths for memory errors, and the last run does what is
# left.
kill_plan() {
	WINDOW_MS=$(($1 / 20))
	[ "$WINDOW_MS" -ge 100 ] || WINDOW_MS=100
	[ "$WINDOW_MS" -le 3000 ] || WINDOW_MS=3000
	export WINDOW_MS
	case $MSG_BIN in
	*san*) export ROUNDS=20 MIN_KILLS=10 ;;
	*) export ROUNDS=60 MIN_KILLS=20 ;;
	esac
}

# kill_until_drained SPOOL SEED CMD...: CMD, a tool that reads the dir:
# spool SPOOL and never stops by itself (no --once), killed ten times a
# round by tests/crash/run.sh at random points of the windows that
# STARTUP_MS and kill_plan give (repeatably from SEED), and started
# again, until the spool is empty or the rounds are up; at least
# MIN_KILLS times, should the machine have got quicker since the
# windows were set (a restart after the work is done still recovers
# the store). Sets kills to how many there were.
kill_until_drained() {
	local spool=$1 seed=$2
	shift 2
	kills=0
	echo "kill windows: $((STARTUP_MS + 10)) to $((STARTUP_MS + WINDOW_MS)) ms"
	while [ "$kills" -lt "$MIN_KILLS" ] || { [ "$kills" -lt "$ROUNDS" ] &&
		[ "$(find "$spool/new" "$spool/cur" -type f | wc -l)" -gt 0 ]; }; do
		CRASH_SEED=$seed CRASH_MIN_MS=$((STARTUP_MS + 10)) \
			CRASH_MAX_MS=$((STARTUP_MS + WINDOW_MS)) \
			run bash "$MSG_TOP/tests/crash/run.sh" 10 acks "$@"
		echo "$output"
		[ "$status" -eq 0 ]
		[[ $output == "10 rounds, 10 killed, "* ]]
		kills=$((kills + 10)) seed=$((seed + 1))
		echo "left after $kills kills: $(find "$spool/new" "$spool/cur" -type f | wc -l) messages"
	done
}

# sleep_ms MS: sleep MS milliseconds.
sleep_ms() {
	sleep "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))"
}

# kill_run PID ERR N: kill PID, the Nth run of a tool that never ends
# by itself (no --once), with SIGKILL and wait for it (status_of, from
# fixtures/dir/dir); fail, showing its status and its stderr (the file
# ERR), if it ended before the kill.
kill_run() {
	kill -KILL "$1" 2>/dev/null || true
	status_of "$1" 20
	if [ "$status" != 137 ]; then
		echo "run $3 ended by itself, status $status:"
		cat "$2"
		return 1
	fi
}
