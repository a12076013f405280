# startup.bash: how long a program takes to start here, for the kill
# windows of tests/crash/run.sh (loaded with `load crash/startup`).

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
