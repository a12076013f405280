#!/usr/bin/env bats
# inbox:DIR, a plain directory that partners write files into, read as
# raw inputs by msg-wrap and msg-split -r: which files are taken, in
# which order, with which headers, and what is left behind.

load test_helper
bats_require_minimum_version 1.5.0
load crash/build

setup_file() {
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
	cc_program "$BATS_FILE_TMPDIR/fcntl-hold" "$MSG_TOP/tests/crash/fcntl-hold.c"
}

export LC_ALL=C

# drop NAME BODY STAMP: a file in the inbox in/ with mtime STAMP.
drop() {
	mkdir -p "in/$(dirname -- "$1")"
	printf '%s' "$2" >"in/$1"
	touch -d "$3" "in/$1"
}

# left: what is left in the inbox in/, one a line, sorted, but for the
# readers' own in/.msg, where no claim may be left either.
left() {
	[ -z "$(ls -A in/.msg/work)" ] || { ls -lA in/.msg/work >&2; return 1; }
	ls -A in | grep -v -x '\.msg' | sort
}

# inbox_empty: nothing is left in the inbox in/, nor claimed.
inbox_empty() {
	left >remaining && [ ! -s remaining ]
}

# spooled_one: the dir: output out holds one message.
spooled_one() {
	[ "$(ls out/new 2>/dev/null | wc -l)" = 1 ]
}

# gone PID: the process has ended.
gone() {
	! kill -0 "$1" 2>/dev/null
}

# numbered N: files in/f0001 .. in/fN, each holding b and its number.
numbered() {
	perl -e 'for my $i (1 .. $ARGV[0]) {
		my $n = sprintf "in/f%04d", $i;
		open my $f, ">", $n or die "$n: $!"; print $f "b$i"; close $f or die }' "$1"
}

# runs_at_once N ARG...: N runs of msg-wrap --once ARG... started
# together; each must end with 0.
runs_at_once() {
	local n=$1 i pids=()
	shift
	for ((i = 0; i < n; i++)); do
		spawn msg-wrap --once "$@"
		pids+=("$spawned")
	done
	for i in "${pids[@]}"; do
		status_of "$i" 120
		[ "$status" = 0 ] || return 1
	done
}

@test "inbox: each file one message with File-Name, File-Path, File-Size, File-Mtime; the file deleted" {
	drop orders.csv 'a,1
b,2
' '2026-03-01 10:00:00.250 UTC'
	msg-wrap --once inbox:in >out 2>err
	[ ! -s err ]
	stable_headers <out >got
	cat >want <<-'OUT'
	File-Name: orders.csv
	File-Path: orders.csv
	File-Size: 8
	File-Mtime: 2026-03-01T10:00:00.250Z
	Content-Type: text/csv
	Content-Length: 8

	a,1
	b,2

	OUT
	diff want got
	inbox_empty
}

@test "inbox: oldest mtime first, then name" {
	drop c 'C' '2026-01-01 00:00:01 UTC'
	drop b 'B' '2026-01-01 00:00:02 UTC'
	drop a 'A' '2026-01-01 00:00:02 UTC'
	drop d 'D' '2026-01-01 00:00:00 UTC'
	msg-wrap --once inbox:in | msg-unwrap -s ' ' >got
	[ "$(cat got)" = "D C A B" ]
}

@test "inbox: names that uploads write under, and hidden ones, are left alone" {
	local n
	for n in x.tmp x.part x.filepart x.partial x.crdownload x.lftp-pget-status \
		x~ .hidden .x.csv done.csv; do
		drop "$n" "$n" '2026-01-01 UTC'
	done
	run --separate-stderr msg-wrap --once inbox:in
	[ "$status" = 0 ]
	[ -z "$stderr" ]
	[ "$(printf '%s\n' "$output" | msg-unwrap)" = done.csv ]
	left >left
	printf '%s\n' .hidden .x.csv x.crdownload x.filepart x.lftp-pget-status \
		x.part x.partial x.tmp x~ | diff - left
}

@test "inbox: --include narrows to the names it matches, --exclude leaves out what it matches" {
	local n
	for n in keep.csv keep.xml skip.csv other.txt; do
		drop "$n" "$n" '2026-01-01 UTC'
	done
	msg-wrap --once --include '*.csv' --include '*.xml' --exclude 'skip*' \
		inbox:in | msg-unwrap -H | sed -n 's/^File-Name: //p' | sort >got
	printf '%s\n' keep.csv keep.xml | diff - got
	left >remaining
	paste -sd ' ' remaining | grep -qx 'other.txt skip.csv'
}

@test "inbox: symlinks, FIFOs and directories are never opened, named once, left where they are" {
	drop good 'ok' '2026-01-01 UTC'
	ln -s /etc/passwd in/link
	mkfifo in/fifo
	mkdir in/sub
	drop sub/deeper 'deep' '2026-01-01 UTC'
	# A FIFO opened for reading would wait for a writer for ever.
	run --separate-stderr timeout -k 5 30 msg-wrap --once inbox:in
	[ "$status" = 0 ]
	[ "$(printf '%s\n' "$output" | msg-unwrap)" = ok ]
	printf '%s\n' "$stderr" | sort >got
	cat >want <<-'ERR'
	msg-wrap: 'inbox:in/fifo' is a FIFO, not a regular file: left where it is
	msg-wrap: 'inbox:in/link' is a symbolic link, not a regular file: left where it is
	msg-wrap: 'inbox:in/sub' is a directory, not a regular file: left where it is
	ERR
	diff want got
	left >remaining
	paste -sd ' ' remaining | grep -qx 'fifo link sub'
	[ "$(cat in/sub/deeper)" = deep ]
}

# cpu_ticks PID: the processor time PID has used, in clock ticks.
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

@test "inbox: a waiting reader of an inbox that holds only a symlink and a sub-folder sleeps between looks, takes a file dropped later and stops on SIGTERM; --stats counts them passed" {
	local p st=0 used
	mkdir -p in/sub
	ln -s /etc/passwd in/link
	spawn msg-wrap --stats --settle 0 --output dir:out inbox:in 2>err
	p=$spawned
	wait_until 30 grep -q "'inbox:in/sub' is a directory" err
	used=$(cpu_ticks "$p")
	sleep 3
	# Three looks in three seconds cost next to nothing; a walk that
	# lists again at once spins the processor the whole time.
	[ $(($(cpu_ticks "$p") - used)) -lt 50 ]
	drop good 'ok' '2026-01-01 UTC'
	wait_until 30 spooled_one
	kill -TERM "$p"
	wait_until 30 gone "$p"
	wait "$p" || st=$?
	[ "$st" = 0 ]
	sort err >got
	cat >want <<-'ERR'
	msg-wrap: 'inbox:in/link' is a symbolic link, not a regular file: left where it is
	msg-wrap: 'inbox:in/sub' is a directory, not a regular file: left where it is
	msg-wrap: stats: in 1, out 1, invalid 0, passed 2
	ERR
	diff want got
	[ "$(left | paste -sd ' ')" = 'link sub' ]
}

@test "inbox: --recursive takes files of subdirectories, File-Path relative to the inbox" {
	drop top 'T' '2026-01-01 00:00:00 UTC'
	drop a/mid 'M' '2026-01-01 00:00:01 UTC'
	drop a/b/low 'L' '2026-01-01 00:00:02 UTC'
	drop .hidden/no 'N' '2026-01-01 00:00:03 UTC'
	run --separate-stderr msg-wrap --once --recursive inbox:in
	[ "$status" = 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" | msg-unwrap -H | grep -E '^File-(Name|Path)' >got
	cat >want <<-'OUT'
	File-Name: top
	File-Path: top
	File-Name: mid
	File-Path: a/mid
	File-Name: low
	File-Path: a/b/low
	OUT
	diff want got
	[ -z "$(find in -type f ! -path 'in/.hidden/*')" ]
	[ "$(cat in/.hidden/no)" = N ]
}

@test "inbox: --max-files N takes the N oldest, the rest for the next run" {
	local i
	for i in 1 2 3 4 5; do
		drop "f$i" "$i" "2026-01-01 00:00:0$i UTC"
	done
	msg-wrap --once --max-files 2 inbox:in | msg-unwrap -s ' ' >got
	[ "$(cat got)" = "1 2" ]
	ls in | paste -sd ' ' | grep -qx 'f3 f4 f5'
	msg-wrap --once --max-files 2 inbox:in | msg-unwrap -s ' ' >got
	[ "$(cat got)" = "3 4" ]
	run -64 --separate-stderr msg-wrap --once --max-files 0 inbox:in
	[ "${stderr%%$'\n'*}" = "msg-wrap: --max-files takes a positive number, not '0'" ]
	[ "$(cat in/f5)" = 5 ]
}

@test "inbox: names with spaces, UTF-8, a leading '-' and a newline" {
	drop 'with space' 1 '2026-01-01 00:00:01 UTC'
	drop 'façade-日本' 2 '2026-01-01 00:00:02 UTC'
	drop '-rf' 3 '2026-01-01 00:00:03 UTC'
	drop $'new\nline' 4 '2026-01-01 00:00:04 UTC'
	msg-wrap --once inbox:in >out
	msg-unwrap -s ' ' out >got
	[ "$(cat got)" = "1 2 3 4" ]
	# A header value holds no newline: it reads as a space.
	msg-unwrap -H out | sed -n 's/^File-Name: //p' >names
	printf '%s\n' 'with space' 'façade-日本' '-rf' 'new line' | diff - names
	inbox_empty
}

@test "inbox: empty files are messages with an empty body" {
	drop empty '' '2026-01-01 UTC'
	msg-wrap --once inbox:in | stable_headers >got
	printf '%s\n' 'File-Name: empty' 'File-Path: empty' 'File-Size: 0' \
		'File-Mtime: 2026-01-01T00:00:00.000Z' 'Content-Type: text/plain' \
		'Content-Length: 0' '' '' | diff - got
}

@test "inbox: msg-split -r splits each file, every part with its file's headers" {
	drop a.xml '<o><i>1</i><i>2</i></o>' '2026-01-01 00:00:01 UTC'
	drop b.xml '<o><i>3</i></o>' '2026-01-01 00:00:02 UTC'
	run --separate-stderr msg-split -r -x //i --once inbox:in
	[ "$status" = 0 ]
	printf '%s\n' "$output" | msg-unwrap -H | sed -n 's/^File-Path: //p' \
		| paste -sd ' ' | grep -qx 'a.xml a.xml b.xml'
	inbox_empty
}

@test "inbox: a dir: output holds the messages before the files are gone" {
	drop a 'A' '2026-01-01 00:00:01 UTC'
	drop b 'B' '2026-01-01 00:00:02 UTC'
	msg-wrap --once --output dir:out inbox:in
	[ "$(ls out/new | wc -l)" = 2 ]
	inbox_empty
	cat out/new/* | msg-unwrap -s ' ' >got
	[ "$(cat got)" = "A B" ]
}

@test "inbox: an inbox that is missing ends the tool (66); frame readers refuse one" {
	run -66 --separate-stderr msg-wrap --once inbox:nowhere
	[ "$stderr" = "msg-wrap: cannot open 'inbox:nowhere': No such file or directory" ]
	mkdir in
	run -66 --separate-stderr msg-unwrap --once inbox:in
	[ "$stderr" = "msg-unwrap: cannot read 'inbox:in': an inbox holds raw data, not messages" ]
}

@test "inbox: without --once the reader waits for files and ends on SIGTERM" {
	mkdir in
	spawn msg-wrap --output dir:out inbox:in
	local pid=$spawned
	# Written under an upload name, then renamed: whole when seen.
	drop late.part 'L' '2026-01-01 UTC'
	mv in/late.part in/late
	wait_until 30 spooled_one
	wait_until 30 test ! -e in/late
	kill -TERM "$pid"
	wait_until 30 gone "$pid"
	[ "$(cat out/new/* | msg-unwrap)" = L ]
}

# ---- writers still writing ----

@test "inbox: a file a writer still holds open is left to it, and taken whole once it is closed" {
	mkdir in
	exec 8>>in/orders.csv
	printf 'a,1\n' >&8
	msg-wrap --once inbox:in >out1 2>err1
	[ ! -s out1 ]
	[ ! -s err1 ]
	[ "$(left)" = orders.csv ]
	printf 'b,2\n' >&8
	exec 8>&-
	msg-wrap --once inbox:in >out2
	[ "$(msg-unwrap <out2)" = "a,1
b,2" ]
	inbox_empty
}

@test "inbox: a waiting reader takes a file written in chunks over seconds only when its writer closes it" {
	mkdir in
	spawn msg-wrap --output dir:out inbox:in
	local pid=$spawned
	exec 8>>in/slow.csv
	for i in 1 2 3 4; do
		printf 'line %s\n' "$i" >&8
		sleep 0.5
	done
	[ ! -e out/new ] || [ -z "$(ls out/new)" ]
	exec 8>&-
	wait_until 30 spooled_one
	kill -TERM "$pid"
	wait_until 30 gone "$pid"
	[ "$(cat out/new/* | msg-unwrap)" = "line 1
line 2
line 3
line 4" ]
	inbox_empty
}

@test "inbox: a file its writer holds under an flock(2) lock is left until the lock goes" {
	mkdir in
	printf 'x\n' >in/locked.txt
	# Open for reading only, so only the lock can tell.
	exec 8<in/locked.txt
	flock -x 8
	msg-wrap --once inbox:in >out1
	[ ! -s out1 ]
	[ "$(left)" = locked.txt ]
	flock -u 8
	exec 8<&-
	msg-wrap --once inbox:in >out2
	[ "$(msg-unwrap <out2)" = x ]
	inbox_empty
}

# "${WITHOUT_LEASE[@]}" CMD...: CMD as root without CAP_LEASE, so that
# a lease on a file root does not own is refused to it (EACCES), as to a
# reader that neither owns a partner's files nor holds the right: no
# lease can tell it that a writer has a file open, only the locks can.
# A command, not a function, so that a spawned CMD is the process
# spawned.
WITHOUT_LEASE=(setpriv --inh-caps=-lease --bounding-set=-lease --)

@test "inbox: a file its writer holds under an fcntl(2) lock is left until the lock goes, by a reader that no lease can tell of writers" {
	[ "$(id -u)" = 0 ] || skip "only root can give the reader files it does not own and take its lease right away"
	mkdir in
	printf 'x\n' >in/locked.txt
	printf 'o\n' >in/open.txt
	chown 65534:65534 in/locked.txt in/open.txt
	spawn "$BATS_FILE_TMPDIR/fcntl-hold" in/locked.txt held
	local holder=$spawned
	wait_until 30 test -e held
	# A file merely open for writing is taken by such a reader: the
	# lease cannot see the writer, so only the lock leaves locked.txt.
	exec 8>>in/open.txt
	"${WITHOUT_LEASE[@]}" msg-wrap --once --settle 0 inbox:in >out1
	exec 8>&-
	[ "$(msg-unwrap <out1)" = o ]
	[ "$(left)" = locked.txt ]
	kill -TERM "$holder"
	status_of "$holder" 30
	"${WITHOUT_LEASE[@]}" msg-wrap --once --settle 0 inbox:in >out2
	[ "$(msg-unwrap <out2)" = x ]
	inbox_empty
}

@test "inbox: --done-marker takes NAME only once NAME+SUFFIX is there, never the marker, and deletes the marker after the file" {
	drop a.csv 'a' '2026-01-01 UTC'
	drop b.csv 'b' '2026-01-02 UTC'
	: >in/a.csv.done
	: >in/orphan.done
	msg-wrap --done-marker .done --once inbox:in >out1
	[ "$(msg-unwrap <out1)" = a ]
	[ "$(left)" = "b.csv
orphan.done" ]
	: >in/b.csv.done
	msg-wrap --done-marker .done --once inbox:in >out2
	[ "$(msg-unwrap <out2)" = b ]
	[ "$(left)" = orphan.done ]
	run -64 --separate-stderr msg-wrap --done-marker a/b --once inbox:in
	[ "${stderr_lines[0]}" = "msg-wrap: --done-marker takes a suffix of a file name, not 'a/b'" ]
}

# taken_whole_once FILE N: the spool out holds one message, whose body
# is "line 1" to "line N", one a line, and whose File-Name is FILE; the
# inbox is empty.
taken_whole_once() {
	spooled_one
	[ "$(msg-unwrap -H out/new/* | sed -n 's/^File-Name: //p')" = "$1" ]
	msg-unwrap --once dir:out >body
	seq -f 'line %g' "$2" | diff - body
	inbox_empty
}

@test "inbox: --done-marker: a file appended in chunks over seconds by a writer holding it open is never taken before its marker, then taken once, whole, with the marker" {
	local reader
	local -a look=(msg-wrap --done-marker .done --settle 0 --output dir:out inbox:in)
	mkdir in
	exec 8>>in/slow.csv
	# As root the reader is one no lease can tell of the writer (a file
	# it does not own, no CAP_LEASE): only the marker holds it back.
	if [ "$(id -u)" = 0 ]; then
		chown 65534:65534 in/slow.csv
		look=("${WITHOUT_LEASE[@]}" "${look[@]}")
	fi
	spawn "${look[@]}" 2>reader.err
	reader=$spawned
	for i in 1 2 3 4 5 6; do
		printf 'line %s\n' "$i" >&8
		sleep 0.5
		[ -z "$(ls out/new 2>/dev/null)" ]
	done
	exec 8>&-
	# Closed, but no marker yet: still left through two more looks (the
	# reader lists every second). A wait that can only let a wrong take
	# pass unseen, never fail a right one.
	sleep 2.5
	[ -z "$(ls out/new 2>/dev/null)" ]
	[ "$(ls in)" = slow.csv ]
	: >in/slow.csv.done
	wait_until 30 spooled_one
	kill -TERM "$reader"
	status_of "$reader" 30
	[ "$status" = 0 ]
	[ ! -s reader.err ]
	taken_whole_once slow.csv 6
}

@test "inbox: --settle: a waiting reader takes a file that its writer reopens for each chunk over seconds only once it is done, whole, once" {
	local reader writer
	mkdir in
	# A gap of a tenth of the settle time between chunks, the file
	# closed in between: no lease can see such a writer, only the
	# second look.
	spawn sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do
		printf "line %s\n" "$i" >>in/f.txt; sleep 0.3; done'
	writer=$spawned
	wait_until 30 test -s in/f.txt
	spawn msg-wrap --settle 3s --output dir:out inbox:in
	reader=$spawned
	status_of "$writer" 60
	[ "$status" = 0 ]
	# Nothing taken while it was written: a take would be in out now.
	[ -z "$(ls out/new 2>/dev/null)" ]
	wait_until 30 spooled_one
	kill -TERM "$reader"
	status_of "$reader" 30
	[ "$status" = 0 ]
	taken_whole_once f.txt 10
}

@test "inbox: --settle takes a file only when two looks that far apart see the same size and mtime" {
	mkdir in
	# Opened and closed for every write, so no lease can see it.
	spawn sh -c 'while [ ! -e stop ]; do printf x >>in/f.txt; sleep 0.05; done'
	local writer=$spawned
	wait_until 30 test -s in/f.txt
	msg-wrap --settle 2s --once inbox:in >out1
	[ ! -s out1 ]
	[ "$(left)" = f.txt ]
	: >stop
	wait_until 30 gone "$writer"
	msg-wrap --settle 500ms --once inbox:in >out2
	msg-unwrap <out2 >body
	[ -s body ]
	[ -z "$(tr -d x <body)" ]
	[ "$(grep '^File-Size: ' out2)" = "File-Size: $(wc -c <body)" ]
	inbox_empty
	run -64 --separate-stderr msg-wrap --settle soon --once inbox:in
	[ "${stderr_lines[0]}" = "msg-wrap: --settle takes a duration such as 2s or 0, not 'soon'" ]
}

# ---- files that cannot be processed ----

@test "inbox: a file that cannot be split goes to DIR/.msg/failed with NAME.error, the run goes on, exit 65 at the end" {
	drop a.xml '<orders><order>1</order><order>2</order></orders>' '2026-01-01 UTC'
	drop bad.xml '<orders><order>1</order><ord' '2026-01-02 UTC'
	drop c.xml '<orders><order>3</order></orders>' '2026-01-03 UTC'
	run -65 --separate-stderr msg-split -r -x /orders/order --once inbox:in
	[ "$(printf '%s\n' "$output" | msg-unwrap -s ,)" = '<order>1</order>,<order>2</order>,<order>3</order>' ]
	[ "${#stderr_lines[@]}" = 2 ]
	[[ ${stderr_lines[0]} == "msg-split: inbox:in/bad.xml (Message-Id "*"): body is not XML: line 1: truncated: the document ends inside element 'orders'" ]]
	[ "${stderr_lines[1]}" = "msg-split: 'inbox:in/bad.xml' set aside as 'inbox:in/.msg/failed/bad.xml'" ]
	inbox_empty
	[ "$(ls in/.msg/failed)" = "bad.xml
bad.xml.error" ]
	[ "$(cat in/.msg/failed/bad.xml)" = '<orders><order>1</order><ord' ]
	[ "${stderr_lines[0]#msg-split: }" = "$(cat in/.msg/failed/bad.xml.error)" ]
	# Moved back by the operator and failing again: a name of its own.
	cp in/.msg/failed/bad.xml in/bad.xml
	run -65 msg-split -r -x /orders/order --once inbox:in
	[ "$(ls in/.msg/failed)" = "bad.xml
bad.xml.1
bad.xml.1.error
bad.xml.error" ]
	inbox_empty
}

@test "inbox: a file the reader may not open is named and left in the inbox, never set aside; the run goes on, exit 74 at the end" {
	[ "$(id -u)" -ne 0 ] || skip "root reads every file"
	drop a 'A' '2026-01-01 00:00:01 UTC'
	drop closed 'X' '2026-01-01 00:00:02 UTC'
	drop c 'C' '2026-01-01 00:00:03 UTC'
	chmod 000 in/closed
	run -74 --separate-stderr msg-wrap --once --settle 0 inbox:in
	[ "$(printf '%s\n' "$output" | msg-unwrap -s ' ')" = 'A C' ]
	[ "$stderr" = "msg-wrap: cannot read 'inbox:in/closed': Permission denied" ]
	# Not the file's fault: back under its name, its mode as it was.
	[ "$(left)" = closed ]
	[ "$(stat -c %a in/closed)" = 0 ]
	[ ! -e in/.msg/failed ]
	# Once it may be read, the next run takes it.
	chmod 600 in/closed
	[ "$(msg-wrap --once --settle 0 inbox:in | msg-unwrap)" = X ]
	inbox_empty
}

# ---- where files go: --done and --failed ----

# names FILE...: the File-Name of each message in the streams or spool
# files given, one a line.
names() {
	cat "$@" | msg-unwrap -H | sed -n 's/^File-Name: //p'
}

@test "inbox: --done DIR moves each file there once its messages are out; DIR's strftime fields in local time, made with its parents" {
	drop a.csv 'A' '2026-01-01 00:00:01 UTC'
	drop b.csv 'B' '2026-01-01 00:00:02 UTC'
	# Two zones 26 hours apart never share a date: each run files under
	# its own local one.
	local east west
	east=$(TZ=EAST-14 date +%Y-%m-%d)
	TZ=EAST-14 msg-wrap --once --settle 0 --done 'arch/x/%Y-%m-%d' --output dir:out inbox:in
	[ "$(TZ=EAST-14 date +%Y-%m-%d)" = "$east" ] || east=$(TZ=EAST-14 date +%Y-%m-%d)
	[ "$(names out/new/* | paste -sd ' ')" = 'a.csv b.csv' ]
	inbox_empty
	[ "$(ls "arch/x/$east")" = 'a.csv
b.csv' ]
	[ "$(cat "arch/x/$east/a.csv")" = A ]
	[ "$(cat "arch/x/$east/b.csv")" = B ]
	drop c.csv 'C' '2026-01-01 00:00:03 UTC'
	west=$(TZ=WEST+12 date +%Y-%m-%d)
	TZ=WEST+12 msg-wrap --once --settle 0 --done 'arch/x/%Y-%m-%d' >/dev/null inbox:in
	[ "$(TZ=WEST+12 date +%Y-%m-%d)" = "$west" ] || west=$(TZ=WEST+12 date +%Y-%m-%d)
	[ "$west" != "$east" ]
	[ "$(ls "arch/x/$west")" = c.csv ]
	[ "$(ls arch/x | wc -l)" = 2 ]
}

@test "inbox: --done: each directory made is synced into its parent, the file's new place before the claims it left" {
	drop a 'A' '2026-01-01 00:00:01 UTC'
	local top
	top=$(pwd -P)
	faulty FAULT_FUNCS=dirsync FAULT_ERRNO=none FAULT_COUNT=0 FAULT_PATH="$top*" \
		-- msg-wrap --once --settle 0 --done "$top/archive/day" inbox:in >/dev/null
	sed -e "s|$top|.|" -e 's|/\.msg/work/[^/ ]*|/.msg/work/RUN|' faults.log >got
	[ "$(cat got)" = "dirsync . skipped
dirsync ./archive skipped
dirsync ./archive/day skipped
dirsync ./in/.msg/work/RUN skipped" ]
	[ "$(cat archive/day/a)" = A ]
}

@test "inbox: --done: a name already there gets .1, .2, ...; nothing there is replaced" {
	mkdir archive
	printf 'old' >archive/a.csv
	drop a.csv 'new1' '2026-01-01 00:00:01 UTC'
	msg-wrap --once --settle 0 --done archive inbox:in >out1
	drop a.csv 'new2' '2026-01-01 00:00:02 UTC'
	msg-wrap --once --settle 0 --done archive inbox:in >out2
	[ "$(names out1 out2 | paste -sd ' ')" = 'a.csv a.csv' ]
	inbox_empty
	[ "$(ls archive)" = 'a.csv
a.csv.1
a.csv.2' ]
	[ "$(cat archive/a.csv)" = old ]
	[ "$(cat archive/a.csv.1)" = new1 ]
	[ "$(cat archive/a.csv.2)" = new2 ]
}

@test "inbox: --done inside the inbox is never listed, not even with --recursive" {
	drop a 'A' '2026-01-01 00:00:01 UTC'
	run --separate-stderr msg-wrap --once --settle 0 --recursive --done in/archive inbox:in
	[ "$status" = 0 ]
	[ -z "$stderr" ]
	[ "$(names <<<"$output")" = a ]
	[ "$(cat in/archive/a)" = A ]
	# Taken again, the archive would be read and moved into itself.
	run --separate-stderr msg-wrap --once --settle 0 --recursive --done in/archive inbox:in
	[ "$status" = 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	[ "$(ls in/archive)" = a ]
	run --separate-stderr msg-wrap --once --settle 0 --done in/archive inbox:in
	[ "$status" = 0 ]
	[ -z "$stderr" ]
}

@test "inbox: --done or --failed on another file system than the inbox is a usage error (64), nothing taken" {
	[ "$(stat -c %d /dev/shm)" != "$(stat -c %d .)" ] || skip "/dev/shm is on the test's file system"
	drop a 'A' '2026-01-01 00:00:01 UTC'
	# Names no one has: the check makes nothing.
	local elsewhere
	elsewhere=$(mktemp -u /dev/shm/msg-inbox-test.XXXXXXXX)
	run -64 --separate-stderr msg-wrap --once --settle 0 --done "$elsewhere/done" inbox:in
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "msg-wrap: --done '$elsewhere/done' is not on the file system of 'inbox:in': files are moved there with one rename" ]
	[ ! -e "$elsewhere" ]
	run -64 --separate-stderr msg-split -r -l --once --failed "$elsewhere" inbox:in
	[ "${stderr_lines[0]}" = "msg-split: --failed '$elsewhere' is not on the file system of 'inbox:in': files are moved there with one rename" ]
	[ ! -e "$elsewhere" ]
	[ "$(left)" = a ]
	run -64 --separate-stderr msg-wrap --once --remember 5d inbox:in
	[ "${stderr_lines[0]}" = "msg-wrap: --remember needs --idempotent" ]
	run -64 --separate-stderr msg-wrap --once --done '' inbox:in
	[ "${stderr_lines[0]}" = "msg-wrap: --done takes a directory, not ''" ]
	[ "$(left)" = a ]
}

@test "inbox: a move to --done that fails ends the run (74) with the file claimed, never in two places; the next run takes it back" {
	drop a 'A' '2026-01-01 00:00:01 UTC'
	mkdir archive
	run -74 --separate-stderr faulty FAULT_FUNCS=renameat2 FAULT_PATH='*/in/.msg/work/*' \
		-- msg-wrap --once --settle 0 --done archive --output dir:out inbox:in
	[ "${stderr_lines[0]}" = "msg-wrap: cannot finish with what was read from 'inbox:in': Input/output error" ]
	[ "$(ls out/new | wc -l)" = 1 ]
	[ -z "$(ls archive)" ]
	[ "$(cat in/.msg/work/*/a)" = A ]
	[ ! -e in/a ]
	# Its messages were out: it is processed again (at least once).
	msg-wrap --once --settle 0 --done archive --output dir:out inbox:in
	inbox_empty
	[ "$(ls archive)" = a ]
	[ "$(names out/new/* | paste -sd ' ')" = 'a a' ]
}

@test "inbox: --failed DIR (strftime fields) takes the files that cannot be processed, NAME.error beside, .1 when the name is taken" {
	drop bad.xml '<orders><ord' '2026-01-01 00:00:01 UTC'
	drop good.xml '<orders><order>1</order></orders>' '2026-01-01 00:00:02 UTC'
	local day
	day=$(date +%Y)
	run -65 --separate-stderr msg-split -r -x /orders/order --once --settle 0 \
		--failed 'rejects/%Y' --done archive inbox:in
	[ "$(date +%Y)" = "$day" ] || day=$(date +%Y)
	[ "$(printf '%s\n' "$output" | msg-unwrap)" = '<order>1</order>' ]
	[ "${stderr_lines[1]}" = "msg-split: 'inbox:in/bad.xml' set aside as 'rejects/$day/bad.xml'" ]
	inbox_empty
	[ "$(ls archive)" = good.xml ]
	[ "$(ls "rejects/$day")" = 'bad.xml
bad.xml.error' ]
	[ "$(cat "rejects/$day/bad.xml.error")" = "${stderr_lines[0]#msg-split: }" ]
	[ ! -e in/.msg/failed ]
	cp "rejects/$day/bad.xml" in/bad.xml
	run -65 --separate-stderr msg-split -r -x /orders/order --once --settle 0 \
		--failed 'rejects/%Y' inbox:in
	[ "${stderr_lines[1]}" = "msg-split: 'inbox:in/bad.xml' set aside as 'rejects/$day/bad.xml.1'" ]
	[ "$(ls "rejects/$day")" = 'bad.xml
bad.xml.1
bad.xml.1.error
bad.xml.error' ]
	[ "$(cat "rejects/$day/bad.xml.1")" = '<orders><ord' ]
	inbox_empty
}

@test "inbox: a move to --failed that fails gives the file back to the inbox, exit 74" {
	drop bad.xml '<orders><ord' '2026-01-01 00:00:01 UTC'
	run -74 --separate-stderr faulty FAULT_FUNCS=renameat2 FAULT_PATH='*/in/.msg/work/*' \
		-- msg-split -r -x /orders/order --once --settle 0 --failed rejects inbox:in
	[ "${stderr_lines[1]}" = "msg-split: cannot set 'inbox:in/bad.xml' aside; it stays in the spool: Input/output error" ]
	[ "$(left)" = bad.xml ]
	[ "$(cat in/bad.xml)" = '<orders><ord' ]
	[ -z "$(ls rejects)" ]
}

# ---- --idempotent ----

@test "inbox: --idempotent skips an identical re-send (new mtime), counts it and lets it go; a changed file under the name is taken" {
	drop a.csv 'A1' '2026-01-01 00:00:01 UTC'
	drop b.csv 'B1' '2026-01-01 00:00:02 UTC'
	run --separate-stderr msg-wrap --once --settle 0 --idempotent --stats inbox:in
	[ "$status" = 0 ]
	[ "$(names <<<"$output" | paste -sd ' ')" = 'a.csv b.csv' ]
	[ "$stderr" = 'msg-wrap: stats: in 2, out 2, invalid 0, skipped 0' ]
	inbox_empty
	# a.csv again, the same bytes written anew; b.csv changed.
	drop a.csv 'A1' '2026-02-01 00:00:01 UTC'
	drop b.csv 'B2' '2026-02-01 00:00:02 UTC'
	run --separate-stderr msg-wrap --once --settle 0 --idempotent --stats --done archive inbox:in
	[ "$status" = 0 ]
	printf '%s\n' "$output" | msg-unwrap -H | sed -n 's/^File-Name: //p' >got
	[ "$(cat got)" = b.csv ]
	[ "$(printf '%s\n' "$output" | msg-unwrap)" = B2 ]
	[ "$stderr" = 'msg-wrap: stats: in 1, out 1, invalid 0, skipped 1' ]
	inbox_empty
	[ "$(ls archive)" = 'a.csv
b.csv' ]
	# Without --idempotent nothing is remembered nor skipped.
	drop a.csv 'A1' '2026-03-01 00:00:01 UTC'
	[ "$(msg-wrap --once --settle 0 inbox:in | msg-unwrap)" = A1 ]
	# The record of b.csv is now of B2.
	drop b.csv 'B1' '2026-03-01 00:00:02 UTC'
	drop c.csv 'B2' '2026-03-01 00:00:03 UTC'
	[ "$(msg-wrap --once --settle 0 --idempotent inbox:in | msg-unwrap -s ' ')" = 'B1 B2' ]
	drop b.csv 'B1' '2026-03-01 00:00:04 UTC'
	[ -z "$(msg-wrap --once --settle 0 --idempotent inbox:in)" ]
	inbox_empty
}

@test "inbox: --idempotent --remember D forgets a file D after it was taken" {
	drop a 'A' '2026-01-01 00:00:01 UTC'
	[ "$(msg-wrap --once --settle 0 --idempotent --remember 1s inbox:in | msg-unwrap)" = A ]
	drop a 'A' '2026-01-01 00:00:02 UTC'
	[ -z "$(msg-wrap --once --settle 0 --idempotent --remember 1s inbox:in)" ]
	sleep 1.2	# past the second a is remembered for
	drop a 'A' '2026-01-01 00:00:03 UTC'
	[ "$(msg-wrap --once --settle 0 --idempotent --remember 1s inbox:in | msg-unwrap)" = A ]
	inbox_empty
}

@test "inbox: --idempotent: killed before the record is committed, the file is processed again; after it, never again" {
	drop a 'A' '2026-01-01 00:00:01 UTC'
	# Killed as the record is written: its messages are out, its record
	# not.
	run -137 faulty FAULT_FUNCS=write FAULT_PATH='*/in/.msg/seen/log.*' FAULT_ERRNO=kill \
		-- msg-wrap --once --settle 0 --idempotent --output dir:out inbox:in
	[ "$(ls out/new | wc -l)" = 1 ]
	[ ! -e in/a ]
	# Killed at the move to --done, once the record is durable (the
	# first rename out of the claims gives back the dead run's).
	run -137 faulty FAULT_FUNCS=renameat2 FAULT_PATH='*/in/.msg/work/*' FAULT_AT=2 FAULT_ERRNO=kill \
		-- msg-wrap --once --settle 0 --idempotent --done archive --output dir:out inbox:in
	[ "$(ls out/new | wc -l)" = 2 ]
	[ ! -e archive/a ]
	run --separate-stderr msg-wrap --once --settle 0 --idempotent --stats --done archive --output dir:out inbox:in
	[ "$status" = 0 ]
	[ "$stderr" = 'msg-wrap: stats: in 0, out 0, invalid 0, skipped 1' ]
	[ "$(ls out/new | wc -l)" = 2 ]
	[ "$(cat archive/a)" = A ]
	inbox_empty
}

@test "inbox: --idempotent with no room for the record ends the run (74) before the file goes; the next run processes it" {
	drop a 'A' '2026-01-01 00:00:01 UTC'
	# The store refuses a put when less than this is free.
	run -74 --separate-stderr env MSG_STORE_MIN_FREE=1000T \
		msg-wrap --once --settle 0 --idempotent --done archive --output dir:out inbox:in
	[ "${stderr_lines[0]}" = "msg-wrap: cannot finish with what was read from 'inbox:in': No space left on device" ]
	[ "$(ls out/new | wc -l)" = 1 ]
	[ ! -e archive/a ]
	[ "$(cat in/.msg/work/*/a)" = A ]
	msg-wrap --once --settle 0 --idempotent --done archive --output dir:out inbox:in
	[ "$(ls out/new | wc -l)" = 2 ]
	[ "$(cat archive/a)" = A ]
	inbox_empty
	drop a 'A' '2026-01-01 00:00:02 UTC'
	[ -z "$(msg-wrap --once --settle 0 --idempotent inbox:in)" ]
}

@test "inbox: --idempotent runs at the same instant take turns on the record, each file once, and remember every one" {
	mkdir in
	numbered 200
	runs_at_once 4 --settle 0 --idempotent --output dir:out inbox:in
	inbox_empty
	names out/new/* | sort >got
	[ "$(wc -l <got)" = 200 ]
	[ "$(uniq <got | wc -l)" = 200 ]
	# Sent again, the same bytes: every one is skipped.
	numbered 200
	run --separate-stderr msg-wrap --once --settle 0 --idempotent --stats inbox:in
	[ "$status" = 0 ]
	[ -z "$output" ]
	[ "$stderr" = 'msg-wrap: stats: in 0, out 0, invalid 0, skipped 200' ]
	inbox_empty
}

# ---- claiming ----

@test "inbox: claims of a reader that died are taken back by the next run; a live reader's are not" {
	mkdir -p in/.msg/work/dead in/.msg/work/live
	printf 'D' >'in/.msg/work/dead/sub%2Fd%25x'
	: >in/.msg/work/dead/lock
	printf 'L' >in/.msg/work/live/l
	: >in/.msg/work/live/lock
	# The live reader holds its lock for as long as it runs.
	# (flock runs sleep as its child: the test's end kills both, where a
	# kill of flock alone would leave sleep running.)
	spawn flock in/.msg/work/live/lock sleep 600
	wait_until 30 lock_held in/.msg/work/live/lock
	run --separate-stderr msg-wrap --once --recursive inbox:in
	[ "$status" = 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" | msg-unwrap -H | sed -n 's/^File-Path: //p' >got
	[ "$(cat got)" = 'sub/d%x' ]
	[ ! -e in/.msg/work/dead ]
	[ "$(cat in/.msg/work/live/l)" = L ]
	[ "$(ls in/.msg/work)" = live ]
}

# claimed NAME: a reader holds NAME claimed.
claimed() {
	local f
	for f in in/.msg/work/*/"$1"; do
		[ -e "$f" ] && return 0
	done
	return 1
}

# lock_held FILE: another process holds an flock on FILE.
lock_held() {
	! flock -n "$1" true
}

@test "inbox: a reader killed while it holds a claim leaves it for the next, which takes it once" {
	drop big "$(head -c 300000 /dev/zero | tr '\0' x)" '2026-01-01 00:00:01 UTC'
	drop small 's' '2026-01-01 00:00:02 UTC'
	mkfifo slow
	# The reader blocks writing the big file to a FIFO no one empties.
	exec 4<>slow
	spawn msg-wrap --once --output slow inbox:in
	local pid=$spawned
	wait_until 30 claimed big
	kill -KILL "$pid"
	exec 4>&-
	[ "$(cat in/small)" = s ]
	msg-wrap --once inbox:in >out
	msg-unwrap -H out | sed -n 's/^File-Name: //p' | paste -sd ' ' >got
	[ "$(cat got)" = 'big small' ]
	inbox_empty
	[ -z "$(ls -A in/.msg/work)" ]
}

@test "inbox: overlapping runs, some at the same instant, take each file once" {
	mkdir in
	numbered 400
	runs_at_once 6 --output dir:out inbox:in
	inbox_empty
	cat out/new/* | msg-unwrap -H | sed -n 's/^File-Name: //p' | sort >got
	[ "$(wc -l <got)" = 400 ]
	[ "$(uniq <got | wc -l)" = 400 ]
}

# status_of PID SECONDS: wait for PID (at most SECONDS) and set $status.
status_of() {
	wait_until "$2" gone "$1" || return 1
	status=0
	wait "$1" || status=$?
}
