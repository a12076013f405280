# lib.sh: helpers shared by the benchmarks in bench/ (sourced, not run).
#
# A benchmark script does:
#
#     . "$(dirname "$0")/lib.sh"
#     bench_init "${1:-build}"          # build dir, cache dir, scratch dir
#     bench_cache lines.txt gen_lines 1000000; in=$BENCH_FILE
#     bench_measure "$in" null cat      # best of BENCH_RUNS: BENCH_US, BENCH_RSS
#     bench_result "cat < in > /dev/null" "$BENCH_US" "$BENCH_RSS" ""
#     bench_verdict "what" "$actual" ">=" "$target" "unit"
#
# Only a broken run (a tool failing, wrong output, missing build) makes a
# script exit non-zero; a missed target is printed as TARGET MISSED.
#
# Environment: BENCH_RUNS (best of how many runs, default 5), TMPDIR (the
# data cache lives in $TMPDIR/msgtools-bench and is reused across runs).

bench_die() {
	echo "bench: $*" >&2
	exit 1
}

bench_init() {
	BENCH_BUILD=${1:-build}
	BENCH_RUNS=${BENCH_RUNS:-5}
	case $BENCH_RUNS in
	'' | *[!0-9]* | 0) bench_die "BENCH_RUNS must be a positive number" ;;
	esac
	case $(date +%s%N) in
	*[!0-9]*) bench_die "date(1) does not support %N; need GNU coreutils" ;;
	esac
	[ -d "$BENCH_BUILD" ] ||
		bench_die "no build directory '$BENCH_BUILD'; run make first"
	BENCH_CACHE=${TMPDIR:-/tmp}/msgtools-bench
	mkdir -p "$BENCH_CACHE" || bench_die "cannot create '$BENCH_CACHE'"
	BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/msgtools-bench-run.XXXXXX") ||
		bench_die "cannot create a scratch directory"
	# The scratch directory goes on every exit, an interrupted one too.
	trap 'rm -rf "$BENCH_TMP"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	BENCH_TIME=
	if [ -x /usr/bin/time ]; then
		BENCH_TIME=/usr/bin/time
	else
		echo "bench: /usr/bin/time not found; peak RSS not measured" >&2
	fi
	echo "# $(uname -sm), $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') cpus;" \
		"best of $BENCH_RUNS runs, less the best of as many empty runs"
}

# The path of a built tool, or a broken run.
bench_tool() {
	[ -x "$BENCH_BUILD/$1" ] ||
		bench_die "'$BENCH_BUILD/$1' not found; run make first"
	echo "$BENCH_BUILD/$1"
}

# Sets BENCH_FILE to $BENCH_CACHE/NAME, running GENERATOR [ARG...] with its
# stdout into that file first if it is not there yet. The data is written
# under a temporary name and renamed, so an interrupted run never leaves a
# half-written file to be reused.
bench_cache() {
	BENCH_FILE=$BENCH_CACHE/$1
	shift
	[ -s "$BENCH_FILE" ] && return 0
	echo "generating $BENCH_FILE"
	"$@" >"$BENCH_FILE.tmp.$$" || {
		rm -f "$BENCH_FILE.tmp.$$"
		bench_die "cannot generate '$BENCH_FILE'"
	}
	mv "$BENCH_FILE.tmp.$$" "$BENCH_FILE" || bench_die "cannot rename '$BENCH_FILE'"
}

# One run of CMD [ARG...] with stdin from INPUT and stdout to SINK:
# "null" (/dev/null) or "pipe" (through a pipe into cat > /dev/null).
# Sets _bus to the elapsed wall time in microseconds. A failing CMD (or
# consumer) is a broken run.
bench_run_once() {
	_bin=$1 _bsink=$2
	shift 2
	rm -f "$BENCH_TMP/status"
	_bt0=$(date +%s%N)
	case $_bsink in
	null)
		"$@" <"$_bin" >/dev/null
		_bst=$?
		_bcst=0
		;;
	pipe)
		# POSIX sh has no pipefail: the producer reports through a file.
		{
			"$@" <"$_bin"
			echo $? >"$BENCH_TMP/status"
		} | cat >/dev/null
		_bcst=$?
		_bst=$(cat "$BENCH_TMP/status" 2>/dev/null || echo 1)
		;;
	*) bench_die "unknown sink '$_bsink'" ;;
	esac
	_bt1=$(date +%s%N)
	[ "$_bst" -eq 0 ] || bench_die "'$*' failed (exit $_bst)"
	[ "$_bcst" -eq 0 ] || bench_die "the consumer of '$*' failed (exit $_bcst)"
	_bus=$(((_bt1 - _bt0) / 1000))
}

# bench_measure INPUT SINK CMD [ARG...]: best of BENCH_RUNS runs.
# Sets BENCH_US (best time in microseconds, at least 1) and BENCH_RSS
# (peak RSS of CMD in KiB, or empty).
#
# Starting processes is slow and noisy on a small shared machine (several
# milliseconds, as long as cat takes on 100 MB), so each timed run is
# paired with an empty one (cat of /dev/null, same sink) and the best
# empty time is subtracted from the best real one: what is left is the
# work. The pairs share the machine's load of the moment. Peak RSS comes
# from one more run under time(1), outside the timed ones.
bench_measure() {
	_bbest=
	_bempty=
	_bi=0
	while [ "$_bi" -lt "$BENCH_RUNS" ]; do
		bench_run_once /dev/null "$2" cat
		if [ -z "$_bempty" ] || [ "$_bus" -lt "$_bempty" ]; then
			_bempty=$_bus
		fi
		bench_run_once "$@"
		if [ -z "$_bbest" ] || [ "$_bus" -lt "$_bbest" ]; then
			_bbest=$_bus
		fi
		_bi=$((_bi + 1))
	done
	BENCH_US=$((_bbest - _bempty))
	[ "$BENCH_US" -ge 1 ] || BENCH_US=1
	bench_peak_rss "$@"
}

# bench_peak_rss INPUT SINK CMD [ARG...]: sets BENCH_RSS (KiB, or empty).
bench_peak_rss() {
	BENCH_RSS=
	[ -n "$BENCH_TIME" ] || return 0
	_brin=$1 _brsink=$2
	shift 2
	rm -f "$BENCH_TMP/rss"
	bench_run_once "$_brin" "$_brsink" "$BENCH_TIME" -f %M -o "$BENCH_TMP/rss" "$@"
	# time(1) puts its own notes before the figure: take the last line.
	[ -s "$BENCH_TMP/rss" ] && BENCH_RSS=$(tail -n 1 "$BENCH_TMP/rss")
	case $BENCH_RSS in
	'' | *[!0-9]*) BENCH_RSS= ;;
	esac
}

# Formatting: shell arithmetic is integer-only, awk does the fractions.
bench_ms() {
	awk -v us="$1" 'BEGIN { printf "%.1f", us / 1000 }'
}

# COUNT per second, over US microseconds.
bench_per_sec() {
	awk -v n="$1" -v us="$2" 'BEGIN { printf "%.0f", n * 1e6 / us }'
}

# Megabytes (10^6 bytes), to one decimal.
bench_mb() {
	awk -v n="$1" 'BEGIN { printf "%.1f", n / 1e6 }'
}

# Megabytes (10^6 bytes) per second.
bench_mb_per_sec() {
	awk -v n="$1" -v us="$2" 'BEGIN { printf "%.0f", n / us }'
}

# A / B to two decimals.
bench_ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
}

bench_rss_text() {
	if [ -n "$1" ]; then
		awk -v kb="$1" 'BEGIN { printf "peak rss %.1f MiB", kb / 1024 }'
	else
		echo "peak rss n/a"
	fi
}

# One measurement: LABEL, time, RATE text, peak RSS.
bench_result() {
	printf '  %-42s %9s ms  %-16s %s\n' "$1" "$(bench_ms "$2")" "$4" \
		"$(bench_rss_text "$3")"
}

# bench_verdict WHAT ACTUAL OP TARGET UNIT, OP being ">=" or "<=";
# UNIT is appended as is (" msg/s", "x").
bench_verdict() {
	if awk -v a="$2" -v t="$4" -v op="$3" \
		'BEGIN { exit !(op == ">=" ? a >= t : a <= t) }'; then
		_bv="target met"
	else
		_bv="TARGET MISSED"
	fi
	echo "  => $1: $2$5 (target $3 $4$5): $_bv"
}
