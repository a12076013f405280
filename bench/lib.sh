# shellcheck shell=sh
# lib.sh: helpers shared by the benchmarks in bench/ (sourced, not run).
#
# A benchmark script does:
#
#     . "$(dirname "$0")/lib.sh"
#     bench_init "${1:-build}"          # build dir, cache dir, scratch dir
#     bench_cache lines.txt bench_gen_lines 1000000; in=$BENCH_FILE
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
	bench_need_positive BENCH_RUNS "$BENCH_RUNS"
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

# bench_check_part SCRIPT ASKED PART...: returns if ASKED (a script's
# second argument) is "all" or one of the PARTs; else prints the usage of
# bench/SCRIPT and exits 64.
bench_check_part() {
	_bcscript=$1 _bcasked=$2
	shift 2
	[ "$_bcasked" = all ] && return 0
	_bcusage=all
	for _bcpart; do
		[ "$_bcasked" = "$_bcpart" ] && return 0
		_bcusage="$_bcusage | $_bcpart"
	done
	echo "usage: sh bench/$_bcscript [build-dir] [$_bcusage]" >&2
	exit 64
}

# bench_need_positive NAMES VALUE...: a broken run ("NAMES must be a
# positive number", or "... positive numbers" for more than one VALUE)
# unless every VALUE is a positive whole number.
bench_need_positive() {
	if [ $# -eq 2 ]; then
		_bnwhat="$1 must be a positive number"
	else
		_bnwhat="$1 must be positive numbers"
	fi
	shift
	for _bnvalue; do
		case $_bnvalue in
		'' | *[!0-9]*) bench_die "$_bnwhat" ;;	# not a number
		*[!0]*) ;;				# a digit other than 0
		*) bench_die "$_bnwhat" ;;		# 0, 00, ...
		esac
	done
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

# The size of FILE in bytes. Called as $(bench_size F), its bench_die ends
# only the subshell: callers add "|| exit 1".
bench_size() {
	_bsz=$(wc -c <"$1") || bench_die "cannot read '$1'"
	echo $((_bsz))
}

# bench_use_cached: the file bench_cache just named as the input of the
# case: sets in to it and bytes to its size.
# shellcheck disable=SC2034 # in and bytes are the caller's
bench_use_cached() {
	in=$BENCH_FILE
	bytes=$(bench_size "$in") || exit 1
}

# Generators for bench_cache: each writes its data to stdout.

# bench_gen_frames WRAP COUNT BODY: COUNT frames, each wrapping the file
# BODY, from one run of WRAP (msg-wrap).
bench_gen_frames() {
	_bgwrap=$1 _bgcount=$2 _bgbody=$3
	set --
	while [ $# -lt "$_bgcount" ]; do
		set -- "$@" "$_bgbody"
	done
	"$_bgwrap" "$@"
}

# bench_gen_orders FORMAT COUNT LAYOUT: COUNT orders as FORMAT, "xml"
# (<order ...><item .../>...</order>) or "json" ({"id": ..., "items":
# [...]}), an order a line. LAYOUT "document" puts them in one document
# (<orders>...</orders> or {"orders": [...]}), "lines" gives them bare.
# Order I is the same in every call, so a smaller set is a prefix of a
# larger one's orders, and its type is "rush" when I % 4 == 1: a quarter
# of the orders, rounded up. One to five items per order, three on
# average; about 200 bytes an order.
bench_gen_orders() {
	case $1 in
	xml | json) ;;
	*) echo "bench: unknown order format '$1'" >&2; return 1 ;;
	esac
	case $3 in
	document) _bgdoc=1 ;;
	lines) _bgdoc=0 ;;
	*) echo "bench: unknown order layout '$3'" >&2; return 1 ;;
	esac
	awk -v fmt="$1" -v n="$2" -v doc="$_bgdoc" '
	function item(i, j) {
		sku = sprintf("SKU-%05d", (i * 31 + j * 17) % 100000)
		qty = 1 + (i + j) % 9
		price = sprintf("%d.%02d", 1 + (i * j) % 200, (i + 3 * j) % 100)
	}
	BEGIN {
		split("standard rush bulk standard", types, " ")
		indent = doc ? "  " : ""
		if (doc && fmt == "xml") {
			print "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
			print "<orders>"
		} else if (doc)
			print "{\"orders\": ["
		for (i = 1; i <= n; i++) {
			type = types[i % 4 + 1]
			cust = sprintf("C%06d", (i * 7919) % 100000)
			k = 1 + (i * 7) % 5
			if (fmt == "xml") {
				printf "%s<order id=\"%d\" type=\"%s\" customer=\"%s\">", indent, i, type, cust
				for (j = 1; j <= k; j++) {
					item(i, j)
					printf "<item sku=\"%s\" qty=\"%d\" price=\"%s\"/>", sku, qty, price
				}
				print "</order>"
			} else {
				printf "%s{\"id\": %d, \"type\": \"%s\", \"customer\": \"%s\", \"items\": [", indent, i, type, cust
				for (j = 1; j <= k; j++) {
					item(i, j)
					printf "%s{\"sku\": \"%s\", \"qty\": %d, \"price\": %s}", (j > 1 ? ", " : ""), sku, qty, price
				}
				# In a document, a comma after every order but the last.
				printf "]}%s\n", (doc && i < n ? "," : "")
			}
		}
		if (doc)
			print (fmt == "xml" ? "</orders>" : "]}")
	}'
}

# bench_cache_frames NAME WRAP COUNT SIZE: sets BENCH_FILE to the cached
# file NAME of COUNT frames made by WRAP (msg-wrap), each wrapping the
# same SIZE random bytes (cached as body-SIZE.bin).
bench_cache_frames() {
	_bcfname=$1 _bcfwrap=$2 _bcfcount=$3
	bench_cache "body-$4.bin" head -c "$4" /dev/urandom
	bench_cache "$_bcfname" bench_gen_frames "$_bcfwrap" "$_bcfcount" \
		"$BENCH_FILE"
}

# bench_gen_lines COUNT: COUNT lines of 100 bytes of text plus LF, each
# different (a serial number).
bench_gen_lines() {
	awk -v n="$1" 'BEGIN {
		s = "the quick brown fox jumps over the lazy dog; "
		while (length(s) < 91) s = s s
		s = substr(s, 1, 91)
		for (i = 1; i <= n; i++) printf "%08d %s\n", i, s
	}'
}

# bench_gen_line_frames WRAP FILE: the lines of FILE as messages, made by
# WRAP -l (msg-wrap) from stdin as a flow has them: no File-Name header.
bench_gen_line_frames() {
	"$1" -l <"$2"
}

# bench_cache_lines COUNT: sets BENCH_FILE to the cached file of COUNT
# lines from bench_gen_lines (lines-COUNTx100.txt).
bench_cache_lines() {
	bench_cache "lines-${1}x100.txt" bench_gen_lines "$1"
}

# bench_cache_small_frames WRAP UNWRAP COUNT: sets BENCH_FILE to the
# cached file of the small frames (small-frames-COUNT.msg): the COUNT
# lines of bench_cache_lines as messages of WRAP -l (msg-wrap), 100-byte
# bodies. The Message-Id and Timestamp of each frame are the time it was
# made, so the file is made once and kept; UNWRAP (msg-unwrap) must give
# back the lines of it on every call, or the run is broken.
bench_cache_small_frames() {
	_bcswrap=$1 _bcsunwrap=$2
	bench_cache_lines "$3"
	_bcslines=$BENCH_FILE
	bench_cache "small-frames-$3.msg" bench_gen_line_frames "$_bcswrap" \
		"$_bcslines"
	bench_check_lines_back "$_bcsunwrap" "$BENCH_FILE" "$_bcslines"
}

# bench_check_lines_back UNWRAP FRAMES LINES: a broken run unless UNWRAP
# -s '\n' (msg-unwrap) of FRAMES gives back LINES, the lines they were
# made of, byte for byte.
bench_check_lines_back() {
	rm -f "$BENCH_TMP/lines-back.status"
	_bclgot=$({
		"$1" -s '\n' <"$2"
		echo $? >"$BENCH_TMP/lines-back.status"
		echo	# the separator goes between bodies, not after the last
	} | cksum)
	if [ "$(cat "$BENCH_TMP/lines-back.status")" != 0 ] ||
		[ "$_bclgot" != "$(cksum <"$3")" ]; then
		bench_die "msg-unwrap of '$2' does not give back '$3'" \
			"(stale cache? remove $BENCH_CACHE)"
	fi
}

# bench_elapsed_us CMD [ARG...]: run CMD once, timed by the wall clock;
# _us becomes the microseconds it took (at least 1). A failing CMD ends
# the benchmark: a broken tool must not pass for a fast one.
bench_elapsed_us() {
	_t0=$(date +%s%N)
	"$@" || bench_die "'$*' failed"
	_t1=$(date +%s%N)
	_us=$(((_t1 - _t0) / 1000))
	[ "$_us" -gt 0 ] || _us=1
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

# bench_measure_runs RUNS INPUT SINK CMD [ARG...]: bench_measure, best of
# RUNS runs instead of BENCH_RUNS (for slow peers, where more runs buy
# little accuracy for a lot of time).
bench_measure_runs() {
	_bmruns=$BENCH_RUNS
	BENCH_RUNS=$1
	shift
	bench_measure "$@"
	BENCH_RUNS=$_bmruns
}

# bench_cat_baseline INPUT SINK NAME BYTES: measures cat < INPUT into SINK
# and prints it as "cat < NAME" and the sink, with BYTES over its time in
# MB/s. Sets BENCH_TO to the sink as the labels write it ("> /dev/null"
# or "| cat > /dev/null"), BENCH_CAT_US to cat's time, and BENCH_US and
# BENCH_RSS as bench_measure does.
bench_cat_baseline() {
	case $2 in
	null) BENCH_TO="> /dev/null" ;;
	pipe) BENCH_TO="| cat > /dev/null" ;;
	*) bench_die "unknown sink '$2'" ;;
	esac
	bench_measure "$1" "$2" cat
	# shellcheck disable=SC2034 # for the scripts
	BENCH_CAT_US=$BENCH_US
	bench_mb_result "cat < $3 $BENCH_TO" "$4"
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

# bench_cpu_best RUNS INPUT SINK CMD [ARG...]: sets BENCH_CPU_MS to the
# least user + system time of CMD, in milliseconds, over RUNS runs, and
# BENCH_CPU_WALL_US to the least wall time of those runs (both empty
# without time(1)). Unlike wall time it does not grow with the wait for a
# processor, so on a busy machine it says what the work itself costs.
# If BENCH_CPU_TIDY names a command (a function), it runs after each run,
# outside the time taken, to remove what the run left.
bench_cpu_best() {
	BENCH_CPU_MS=
	BENCH_CPU_WALL_US=
	[ -n "$BENCH_TIME" ] || return 0
	_bcruns=$1 _bcin=$2 _bcsink=$3
	shift 3
	_bci=0
	while [ "$_bci" -lt "$_bcruns" ]; do
		rm -f "$BENCH_TMP/cpu"
		bench_run_once "$_bcin" "$_bcsink" "$BENCH_TIME" -f '%U %S' \
			-o "$BENCH_TMP/cpu" "$@"
		[ -z "${BENCH_CPU_TIDY:-}" ] || $BENCH_CPU_TIDY
		if [ -z "$BENCH_CPU_WALL_US" ] || [ "$_bus" -lt "$BENCH_CPU_WALL_US" ]; then
			BENCH_CPU_WALL_US=$_bus
		fi
		_bcms=$(tail -n 1 "$BENCH_TMP/cpu" |
			awk 'NF == 2 { printf "%.0f", ($1 + $2) * 1000 }')
		if [ -n "$_bcms" ] &&
			{ [ -z "$BENCH_CPU_MS" ] || [ "$_bcms" -lt "$BENCH_CPU_MS" ]; }; then
			BENCH_CPU_MS=$_bcms
		fi
		_bci=$((_bci + 1))
	done
}

# bench_measure_cpu LABEL COUNT UNIT INPUT CMD [ARG...]: CMD's best
# processor time and best wall time over BENCH_RUNS runs into /dev/null,
# printed with COUNT per processor-second and CMD's peak RSS (from one
# more run). Sets BENCH_CPU_MS (at least 1) and BENCH_RATE (COUNT per
# processor-second); without time(1) the run is broken. BENCH_CPU_TIDY,
# if set, runs after the peak RSS run too.
bench_measure_cpu() {
	_bmclabel=$1 _bmccount=$2 _bmcunit=$3 _bmcin=$4
	shift 4
	bench_cpu_best "$BENCH_RUNS" "$_bmcin" null "$@"
	[ -n "$BENCH_CPU_MS" ] ||
		bench_die "time(1) is needed to measure '$_bmclabel'"
	[ "$BENCH_CPU_MS" -gt 0 ] || BENCH_CPU_MS=1
	BENCH_RATE=$(bench_per_sec "$_bmccount" $((BENCH_CPU_MS * 1000)))
	bench_peak_rss "$_bmcin" null "$@"
	[ -z "${BENCH_CPU_TIDY:-}" ] || $BENCH_CPU_TIDY
	bench_result "$_bmclabel" $((BENCH_CPU_MS * 1000)) "$BENCH_RSS" \
		"$BENCH_RATE $_bmcunit"
	echo "    (processor time; best wall time" \
		"$(bench_ms "$BENCH_CPU_WALL_US") ms)"
}

# bench_cpu_note LABEL COUNT UNIT: prints BENCH_CPU_MS (from bench_cpu_best),
# and COUNT per processor-second.
bench_cpu_note() {
	if [ -z "$BENCH_CPU_MS" ]; then
		echo "  (processor time of $1 not measured)"
	elif [ "$BENCH_CPU_MS" -gt 0 ]; then
		echo "  (processor time, user + system, of $1: $BENCH_CPU_MS ms," \
			"$(bench_per_sec "$2" $((BENCH_CPU_MS * 1000))) $3 per processor-second)"
	else
		echo "  (processor time, user + system, of $1: under 10 ms)"
	fi
}

# Prints the load average and the number of processors, where the system
# tells them: on a shared machine they explain slow wall times.
bench_load_note() {
	_blload=$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null) || _blload=
	[ -n "$_blload" ] && echo "  (load average $_blload;" \
		"$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') cpus)"
	return 0
}

# bench_measure_long RUNS INPUT CMD [ARG...]: for runs of many seconds,
# where the start-up that bench_measure subtracts is noise and a run more
# for each figure is dear: RUNS runs of CMD, stdin from INPUT, through a
# pipe into cat, each timed whole and under time(1) at once. Sets
# BENCH_US (best wall time), BENCH_CPU_MS (least user + system time) and
# BENCH_RSS (highest peak RSS); the last two are empty without time(1).
# If BENCH_CPU_TIDY names a command, it runs after each run, untimed.
bench_measure_long() {
	_mlruns=$1 _mlin=$2
	shift 2
	BENCH_US='' BENCH_CPU_MS='' BENCH_RSS=''
	_mli=0
	while [ "$_mli" -lt "$_mlruns" ]; do
		rm -f "$BENCH_TMP/long"
		if [ -n "$BENCH_TIME" ]; then
			bench_run_once "$_mlin" pipe "$BENCH_TIME" -f '%U %S %M' \
				-o "$BENCH_TMP/long" "$@"
		else
			bench_run_once "$_mlin" pipe "$@"
		fi
		[ -z "${BENCH_CPU_TIDY:-}" ] || $BENCH_CPU_TIDY
		if [ -z "$BENCH_US" ] || [ "$_bus" -lt "$BENCH_US" ]; then
			BENCH_US=$_bus
		fi
		# time(1) puts its own notes before the figures: the last line.
		_mlfig=$(tail -n 1 "$BENCH_TMP/long" 2>/dev/null | awk \
			'NF == 3 && $3 ~ /^[0-9]+$/ { printf "%.0f %d", ($1 + $2) * 1000, $3 }')
		if [ -n "$_mlfig" ]; then
			_mlcpu=${_mlfig% *} _mlrss=${_mlfig#* }
			if [ -z "$BENCH_CPU_MS" ] || [ "$_mlcpu" -lt "$BENCH_CPU_MS" ]; then
				BENCH_CPU_MS=$_mlcpu
			fi
			if [ -z "$BENCH_RSS" ] || [ "$_mlrss" -gt "$BENCH_RSS" ]; then
				BENCH_RSS=$_mlrss
			fi
		fi
		_mli=$((_mli + 1))
	done
}

# bench_strace_syncs INPUT OUT ERR CMD [ARG...]: one run of CMD, stdin
# from INPUT, stdout into OUT and stderr into ERR, under strace -c -f
# when there is one. Sets BENCH_SYNCS to the fsync(2) and fdatasync(2)
# calls of CMD and its children, or empty without strace; returns CMD's
# status (strace's, which is the same).
# shellcheck disable=SC2034 # BENCH_SYNCS is for the scripts
bench_strace_syncs() {
	_bsin=$1 _bsout=$2 _bserr=$3
	shift 3
	BENCH_SYNCS=
	rm -f "$BENCH_TMP/strace.out"
	if command -v strace >/dev/null; then
		# LeakSanitizer cannot run under ptrace: a sanitizer build would
		# fail at exit.
		set -- env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
			strace -c -f -e trace=fsync,fdatasync \
			-o "$BENCH_TMP/strace.out" "$@"
	fi
	"$@" <"$_bsin" >"$_bsout" 2>"$_bserr" || return
	[ -e "$BENCH_TMP/strace.out" ] || return 0
	# The summary's fourth column is the number of calls; strace writes
	# an empty file when there were none.
	BENCH_SYNCS=$(awk '$NF == "fsync" || $NF == "fdatasync" { n += $4 }
		END { print n + 0 }' "$BENCH_TMP/strace.out")
}

# bench_nosync_init: compiles the fault shim of tests/faults into the
# scratch directory, for bench_nosync and bench_count_syncs (once, before
# anything is timed). A broken run if it cannot be compiled.
bench_nosync_init() {
	BENCH_SHIM=$BENCH_TMP/faultinject.so
	${CC:-cc} -O2 -shared -fPIC -o "$BENCH_SHIM" \
		"$(dirname "$0")/../tests/faults/faultinject.c" -ldl ||
		bench_die "cannot compile tests/faults/faultinject.c"
}

# bench_nosync CMD [ARG...]: CMD with every fsync(2) and fdatasync(2)
# skipped, as a disk that acknowledges what it has not stored would (the
# shim with FAULT_ERRNO=none). The time of a run this way against one
# with its syncs says how much of it is the disk's; it is never a way to
# run for real.
bench_nosync() {
	[ -n "${BENCH_SHIM:-}" ] || bench_die "bench_nosync without bench_nosync_init"
	LD_PRELOAD=$BENCH_SHIM FAULT_FUNCS=fsync,fdatasync FAULT_ERRNO=none \
		FAULT_COUNT=0 "$@"
}

# bench_count_syncs LOG CMD [ARG...]: prints how many syncs CMD made,
# run under bench_nosync with each one listed in LOG (so skipped, and
# counted without strace). A failing CMD is a broken run.
bench_count_syncs() {
	_bclog=$1
	shift
	FAULT_LOG=$_bclog bench_nosync "$@" || bench_die "'$*' failed"
	[ -f "$_bclog" ] || : >"$_bclog"
	wc -l <"$_bclog" | tr -d ' '
}

# bench_report_syncs LABEL SYNCS COUNT: SYNCS (from bench_strace_syncs)
# per 1,000 of COUNT messages, with LABEL, as bench_report prints.
bench_report_syncs() {
	if [ -z "$2" ]; then
		echo "  strace not found: fsync calls not counted"
		return 0
	fi
	bench_report "fsync + fdatasync calls per 1,000 messages, $1" \
		"$(awk -v s="$2" -v n="$3" 'BEGIN { printf "%.2f", s * 1000 / n }')" \
		" ($2 in all, by strace -c -f)"
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

# bench_rss_line LABEL: BENCH_RSS alone with LABEL, in bench_result's
# columns.
bench_rss_line() {
	printf '  %-42s %12s  %-16s %s\n' "$1" "" "" "$(bench_rss_text "$BENCH_RSS")"
}

# One measurement: LABEL, time, RATE text, peak RSS.
bench_result() {
	printf '  %-42s %9s ms  %-16s %s\n' "$1" "$(bench_ms "$2")" "$4" \
		"$(bench_rss_text "$3")"
}

# bench_mb_result LABEL BYTES: bench_result for the last bench_measure,
# with BYTES over its time in MB/s as the rate.
bench_mb_result() {
	bench_result "$1" "$BENCH_US" "$BENCH_RSS" \
		"$(bench_mb_per_sec "$2" "$BENCH_US") MB/s"
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

# bench_report WHAT VALUE UNIT: a figure asked for without a target, in
# bench_verdict's layout.
bench_report() {
	echo "  => $1: $2$3 (no target: reported)"
}

# bench_peer_ratios TOOL PEER PEER_CMD US CPU_MS RSS: how TOOL, which took
# US microseconds, CPU_MS of processor time and RSS KiB at its peak (the
# last two may be empty), compares with its peer PEER, run as PEER_CMD
# and just measured (BENCH_US, BENCH_CPU_MS and BENCH_RSS are its):
# times faster in wall time and in processor time, and the ratio of the
# peaks, each as bench_report prints it.
bench_peer_ratios() {
	bench_report "$1 vs $3, times faster" "$(bench_ratio "$BENCH_US" "$4")" "x"
	# Under 10 ms, time(1) says 0: no ratio then.
	if [ -n "$5" ] && [ -n "$BENCH_CPU_MS" ] && [ "$5" -gt 0 ] &&
		[ "$BENCH_CPU_MS" -gt 0 ]; then
		bench_report "the same in processor time" \
			"$(bench_ratio "$BENCH_CPU_MS" "$5")" "x"
	fi
	if [ -n "$6" ] && [ -n "$BENCH_RSS" ]; then
		bench_report "peak RSS, $1 / $2" "$(bench_ratio "$6" "$BENCH_RSS")" "x"
	fi
}
