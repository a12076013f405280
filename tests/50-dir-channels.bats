#!/usr/bin/env bats
# dir: channels (spool directories): writers leave one whole file per
# message in new/, named in arrival order; readers take the oldest first,
# each message once, and delete it when they are done with it.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/dir/dir

UUID7_MSG='^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.msg$'

# ---- writing ----

@test "dir: a writer makes one file per message in new/, 0600 in 0700 directories" {
	umask 022
	seq 1 10 >lines
	msg-wrap -l lines --output dir:out
	is 10 out/new
	is 0 out/tmp
	is 0 out/cur
	local d f
	for d in out out/tmp out/new out/cur; do
		[ "$(stat -c %a "$d")" = 700 ]
	done
	for f in out/new/*; do
		[[ ${f#out/new/} =~ $UUID7_MSG ]]
		[ "$(stat -c %a "$f")" = 600 ]
		# One whole frame a file.
		[ "$(msg-unwrap -H "$f" | grep -c '^Content-Length: ')" = 1 ]
	done
	ls -A out | sort | paste -sd ' ' | grep -qx 'cur new tmp'
}

@test "dir: file names sort in arrival order" {
	seq 1 20 >first
	seq 21 25 >second
	msg-wrap -l first --output dir:out
	# Names order by the millisecond across writers: let one pass.
	sleep 0.01
	msg-wrap -l second --output dir:out
	# Read back in name order, the messages come in the order written,
	# the second writer's after the first's.
	spooled out | msg-unwrap -s '\n' >got
	echo >>got
	seq 1 25 | cmp - got
}

@test "dir: two writers at once: unique names, each writer's order kept" {
	local a b
	seq -f 'a%03g' 1 60 >a.lines
	seq -f 'b%03g' 1 60 >b.lines
	spawn msg-wrap -l a.lines --output dir:out
	a=$spawned
	spawn msg-wrap -l b.lines --output dir:out
	b=$spawned
	status_of "$a" 60
	[ "$status" = 0 ]
	status_of "$b" 60
	[ "$status" = 0 ]
	# No name was taken twice (a rename would have replaced a message).
	is 120 out/new
	is 0 out/tmp
	[ "$(ls out/new | grep -Evc "$UUID7_MSG")" = 0 ]
	spooled out | msg-unwrap -s '\n' >got
	echo >>got
	[ "$(grep -c . got)" = 120 ]
	grep '^a' got | cmp - a.lines
	grep '^b' got | cmp - b.lines
}

@test "dir: binary bodies and large bodies go through a spool unchanged" {
	head -c 3000000 /dev/urandom >big.bin
	printf 'a\0b\nc' >nul.bin
	: >empty.bin
	msg-wrap big.bin nul.bin empty.bin --output dir:s
	is 3 s/new
	msg-unwrap --once dir:s >got
	cat big.bin nul.bin empty.bin | cmp - got
	empty_spool s
}

# ---- reading ----

@test "dir: msg-unwrap --once gives the messages in order and empties the spool" {
	seq 1 10 >lines
	msg-wrap -l lines --output dir:in
	run -0 --separate-stderr msg-unwrap --once -s '\n' dir:in
	[ "$output" = "$(seq 1 10)" ]
	[ -z "$stderr" ]
	empty_spool in
	# An empty spool drains to nothing, at once.
	run -0 timeout -k 10 10 msg-unwrap --once dir:in
	[ -z "$output" ]
}

@test "dir: a reader takes the orphans of dead readers in cur/ before new/" {
	spool_fill s 1 3
	# An unlocked file in cur/: its reader died. It sorts last, yet it
	# was claimed before anything now in new/ arrived.
	frame orphan 'Message-Id: id-orphan' >s/cur/999999.msg
	msg-unwrap --once -e dir:s >got.jsonl
	bodies got.jsonl >got
	printf 'orphan\nm000001\nm000002\nm000003\n' | cmp - got
	empty_spool s
}

@test "dir: a waiting reader picks up messages written later; SIGTERM ends it cleanly" {
	local reader
	seq 1 3 >a
	seq 4 6 >b
	mkdir w
	spawn msg-unwrap -e dir:w >got.jsonl
	reader=$spawned
	wait_until 10 test -d w/new
	msg-wrap -l a --output dir:w
	wait_until 10 eval '[ "$(grep -c . got.jsonl)" = 3 ]'
	sleep 0.3
	msg-wrap -l b --output dir:w
	wait_until 10 eval '[ "$(grep -c . got.jsonl)" = 6 ]'
	empty_spool w
	alive "$reader"
	kill -TERM "$reader"
	status_of "$reader" 10
	[ "$status" = 0 ]
	bodies got.jsonl | cmp - <(seq 1 6)
}

@test "dir: msg-route --once moves every message across, byte for byte" {
	seq 1 10 >lines
	msg-wrap -l lines --output dir:in
	spooled in >before.msg
	run -0 msg-route --once -f 'true()' dir:in --output dir:out
	empty_spool in
	is 10 out/new
	spooled out | cmp - before.msg
}

@test "dir: split, translate, route and tap read and write dir: channels" {
	printf '<map><number key="n">1</number></map>\nnot xml <\n<map><number key="n">3</number></map>\n' >doc.txt
	msg-wrap doc.txt --output dir:a
	msg-split --once -l dir:a --output dir:b
	empty_spool a
	is 3 b/new
	msg-translate --once --to json -H 'Stage: t' dir:b --output dir:c --invalid dir:bad
	empty_spool b
	is 2 c/new
	is 1 bad/new
	grep -qx 'Error: msg-translate: body is neither XML nor JSON' bad/new/*
	msg-route --once -w "header('Stage') = 't' and json('/n') = 3" -t dir:three \
		-o dir:rest dir:c
	empty_spool c
	is 1 three/new
	is 1 rest/new
	[ "$(spooled three | msg-unwrap)" = '{"n":3}' ]
	[ "$(spooled rest | msg-unwrap)" = '{"n":1}' ]
	spooled rest | msg-tap dir:tapped >tapped.msg
	spooled tapped | cmp - tapped.msg
	spooled rest | cmp - tapped.msg
	# msg-tap reads a dir: input with -i (its operands are taps).
	msg-tap --once -i dir:rest tap.msg --output dir:after
	empty_spool rest
	cmp tap.msg tapped.msg
	spooled after | cmp - tapped.msg
}

@test "dir: msg-tap copies whole frames to a dir: tap, large bodies too" {
	seq 1 5 >lines
	head -c 200000 /dev/zero | tr '\0' y >big
	msg-wrap -l lines >in.msg
	msg-wrap big >>in.msg
	# A --buffer smaller than the large body: that one streams.
	msg-tap --buffer 1k dir:t <in.msg >out.msg
	cmp in.msg out.msg
	is 6 t/new
	is 0 t/tmp
	spooled t | cmp - in.msg
}

@test "dir: a dir: tap holds frames: summary and envelope formats are usage errors" {
	msg-wrap -l <<<x >in.msg
	local f
	for f in summary envelope; do
		run -64 --separate-stderr msg-tap -F "$f" dir:t <in.msg
		[ -z "$output" ]
		[ "${stderr_lines[0]}" = "msg-tap: a dir: tap channel holds frames: -F frame only" ]
		[[ ${stderr_lines[1]} == usage:* ]]
	done
	[ ! -e t/new ] || is 0 t/new
}

@test "dir: two --once readers on one spool never take the same message" {
	local a b
	spool_fill x 1 1000
	spawn msg-unwrap -e --once dir:x >r1.jsonl
	a=$spawned
	spawn msg-unwrap -e --once dir:x >r2.jsonl
	b=$spawned
	status_of "$a" 120
	[ "$status" = 0 ]
	status_of "$b" 120
	[ "$status" = 0 ]
	bodies r1.jsonl | sort >r1
	bodies r2.jsonl | sort >r2
	echo "reader 1: $(wc -l <r1), reader 2: $(wc -l <r2)"
	[ -z "$(comm -12 r1 r2)" ]
	sort -m r1 r2 | cmp - <(expect_bodies 1 1000)
	empty_spool x
}

@test "dir: two waiting readers compete over 2,000 arriving messages, each taken once" {
	local a b
	mkdir -p x/tmp x/new x/cur
	spawn msg-unwrap -e dir:x >r1.jsonl
	a=$spawned
	spawn msg-unwrap -e dir:x >r2.jsonl
	b=$spawned
	sleep 0.2
	# Arrivals in four bursts while both readers are at work.
	spool_fill x 1 500
	spool_fill x 501 1000
	spool_fill x 1001 1500
	spool_fill x 1501 2000
	wait_until 120 empty_spool x
	kill -TERM "$a" "$b"
	status_of "$a" 10
	[ "$status" = 0 ]
	status_of "$b" 10
	[ "$status" = 0 ]
	bodies r1.jsonl | sort >r1
	bodies r2.jsonl | sort >r2
	echo "reader 1: $(wc -l <r1), reader 2: $(wc -l <r2)"
	# Both were waiting when the messages came: both took some.
	[ -s r1 ]
	[ -s r2 ]
	[ -z "$(comm -12 r1 r2)" ]
	sort -m r1 r2 | cmp - <(expect_bodies 1 2000)
	# Not checked here: each reader's order. A listing of new/ made while
	# messages arrive may hold a message and miss the one written just
	# before it (readdir(3) need not return entries added meanwhile), as
	# msg-tools(7) says; the order of what is there when a reader lists
	# the spool is checked by the --once tests above.
}

@test "dir: a malformed message file is set aside in bad/, named, and the run goes on (65)" {
	spool_fill s 1 3
	# Between message 1 and message 2 in name order.
	printf 'garbage\n' >s/new/000001z.msg
	run -65 --separate-stderr msg-unwrap --once -e dir:s
	[ "$(bodies <(echo "$output") | paste -sd ' ')" = 'm000001 m000002 m000003' ]
	[ "$stderr" = "msg-unwrap: dir:s/cur/000001z.msg: offset 8: truncated frame: end of input in the header block; not a message stream; wrap raw data with msg-wrap
msg-unwrap: 'dir:s/cur/000001z.msg' set aside as 'dir:s/bad/000001z.msg'" ]
	# Kept byte for byte, out of the way.
	[ "$(cat s/bad/000001z.msg)" = garbage ]
	[ "$(stat -c %a s/bad)" = 700 ]
	empty_spool s
	run -0 msg-unwrap --once -e dir:s
	[ -z "$output" ]
}

@test "dir: three bad files and a good one: one run sets all three aside, delivers the good one, exits 65" {
	spool_fill s 4 4
	printf 'garbage\n' >s/new/000001.msg
	printf 'Content-Length: 100\n\nabc' >s/new/000002.msg
	printf 'Content-Length: 1\n\nxy\n' >s/new/000003.msg
	run -65 --separate-stderr msg-unwrap --once -s '\n' dir:s
	[ "$output" = m000004 ]
	[ "$stderr" = "msg-unwrap: dir:s/cur/000001.msg: offset 8: truncated frame: end of input in the header block; not a message stream; wrap raw data with msg-wrap
msg-unwrap: 'dir:s/cur/000001.msg' set aside as 'dir:s/bad/000001.msg'
msg-unwrap: dir:s/cur/000002.msg: offset 24: truncated frame: end of input after 3 of 100 body bytes
msg-unwrap: 'dir:s/cur/000002.msg' set aside as 'dir:s/bad/000002.msg'
msg-unwrap: dir:s/cur/000003.msg: offset 20: Content-Length mismatch: byte after the 1-byte body is not LF
msg-unwrap: 'dir:s/cur/000003.msg' set aside as 'dir:s/bad/000003.msg'" ]
	empty_spool s
	[ "$(ls s/bad | paste -sd ' ')" = '000001.msg 000002.msg 000003.msg' ]
	cmp s/bad/000002.msg <(printf 'Content-Length: 100\n\nabc')
}

@test "dir: a frame cut short in a spool file is diverted whole with --invalid, before any of its body is used" {
	spool_fill s 2 2
	printf 'Content-Length: 100\n\nabc' >s/new/000001.msg
	run -0 --separate-stderr msg-unwrap --once -s '\n' --invalid bad.msg --stats dir:s
	[ "$output" = m000002 ]
	[ "$stderr" = "msg-unwrap: warning: message $(msg-unwrap -H bad.msg | sed -n 's/^Message-Id: //p'): dir:s/cur/000001.msg: offset 24: truncated frame: end of input after 3 of 100 body bytes: diverted to 'bad.msg'
msg-unwrap: stats: in 1, out 1, invalid 1, expired 0" ]
	msg-unwrap bad.msg >body
	cmp body <(printf 'Content-Length: 100\n\nabc')
	run -0 msg-unwrap -H bad.msg
	[[ "$output" == *"Error: msg-unwrap: dir:s/cur/000001.msg: offset 24: truncated frame: end of input after 3 of 100 body bytes"* ]]
	empty_spool s
	[ ! -e s/bad ]
}

@test "dir: a file set aside under a name already in bad/ gets a number, never replacing the first" {
	mkdir -p s/bad
	printf 'first\n' >s/bad/000001.msg
	printf 'second\n' >s/bad/000001-2.msg
	spool_fill s 2 2
	printf 'third\n' >s/new/000001.msg
	run -65 --separate-stderr msg-unwrap --once dir:s
	[ "$output" = m000002 ]
	[ "${stderr##*$'\n'}" = "msg-unwrap: 'dir:s/cur/000001.msg' set aside as 'dir:s/bad/000001-3.msg'" ]
	[ "$(cat s/bad/000001.msg)" = first ]
	[ "$(cat s/bad/000001-2.msg)" = second ]
	[ "$(cat s/bad/000001-3.msg)" = third ]
	# A name without an extension gets its number at the end.
	drop inbox x '<a>'
	drop inbox y '<b/>'
	mkdir inbox/bad
	: >inbox/bad/x
	run -65 --separate-stderr msg-split --once -r -x /a dir:inbox
	[ "${stderr##*$'\n'}" = "msg-split: 'dir:inbox/cur/x' set aside as 'dir:inbox/bad/x-2'" ]
	[ "$(cat inbox/bad/x-2)" = '<a>' ]
	[ ! -s inbox/bad/x ]
	empty_spool inbox
}

@test "dir: a waiting reader sets files aside as it meets them, goes on, and exits 65 when stopped" {
	local reader
	mkdir -p w/tmp w/new w/cur
	spawn msg-unwrap -e dir:w >got.jsonl 2>err
	reader=$spawned
	printf 'garbage\n' >w/tmp/000001.msg
	mv w/tmp/000001.msg w/new/
	wait_until 20 test -e w/bad/000001.msg
	wait_until 10 eval '[ "$(grep -c . err)" = 2 ]'
	spool_fill w 2 3
	wait_until 20 eval '[ "$(grep -c . got.jsonl)" = 2 ]'
	alive "$reader"
	kill -TERM "$reader"
	status_of "$reader" 20
	[ "$status" = 65 ]
	[ "$(sed -n 2p err)" = "msg-unwrap: 'dir:w/cur/000001.msg' set aside as 'dir:w/bad/000001.msg'" ]
	[ "$(grep -c . err)" = 2 ]
	[ "$(bodies got.jsonl | paste -sd ' ')" = 'm000002 m000003' ]
}

@test "dir: a well-framed message a tool cannot process is set aside too" {
	spool_fill s 1 1
	frame bad 'Message-Id: id-bad' 'Content-Type: application/json' >s/new/000000z.msg
	run -65 --separate-stderr msg-route --once -w "header('Message-Id') != 'id-bad'" -t out.msg dir:s
	[ "$stderr" = "msg-route: dir:s/cur/000000z.msg: message 1 (Message-Id id-bad): no rule matched
msg-route: 'dir:s/cur/000000z.msg' set aside as 'dir:s/bad/000000z.msg'" ]
	cmp s/bad/000000z.msg <(frame bad 'Message-Id: id-bad' 'Content-Type: application/json')
	# The run went on past it.
	[ "$(msg-unwrap out.msg)" = m000001 ]
	empty_spool s
}

@test "dir: with --invalid a malformed file is diverted whole and the run goes on" {
	spool_fill s 1 2
	printf 'Subject: x\nno blank line' >s/new/000001z.msg
	run -0 --separate-stderr msg-unwrap --once -s ' ' --invalid bad.msg --stats dir:s
	[ "$output" = "m000001 m000002" ]
	[ "${#stderr_lines[@]}" = 2 ]
	[[ ${stderr_lines[0]} == "msg-unwrap: warning: message $(msg-unwrap -H bad.msg | sed -n 's/^Message-Id: //p'): dir:s/cur/000001z.msg: "*": diverted to 'bad.msg'" ]]
	[ "${stderr_lines[1]}" = "msg-unwrap: stats: in 2, out 2, invalid 1, expired 0" ]
	run -0 msg-unwrap -H bad.msg
	[[ "$output" == *"Content-Type: application/octet-stream"* ]]
	[[ "$output" == *"Error: msg-unwrap: dir:s/cur/000001z.msg: "* ]]
	[[ "$output" == *"Message-Id: "* ]]
	run -0 msg-unwrap bad.msg
	[ "$output" = "$(printf 'Subject: x\nno blank line')" ]
	empty_spool s
	[ ! -e s/bad ]
}

# ---- entries that are not regular files ----

@test "dir: a symlink in new/ is set aside, never followed: msg-wrap does not ship what it points to" {
	printf 'secret\n' >secret
	drop inbox a.txt 'one'
	ln -s "$PWD/secret" inbox/new/b.txt
	drop inbox c.txt 'three'
	run -65 --separate-stderr msg-wrap --once dir:inbox
	[ "$(msg-unwrap -s ' ' <<<"$output")" = 'one three' ]
	[ "$stderr" = "msg-wrap: 'dir:inbox/new/b.txt' is a symbolic link, not a regular file
msg-wrap: 'dir:inbox/new/b.txt' set aside as 'dir:inbox/bad/b.txt'" ]
	# The link itself is moved, untouched; what it points to is not read.
	[ -L inbox/bad/b.txt ]
	[ "$(readlink inbox/bad/b.txt)" = "$PWD/secret" ]
	[ "$(cat secret)" = secret ]
	empty_spool inbox
}

@test "dir: a directory in new/ is set aside; the messages after it are delivered" {
	spool_fill s 1 2
	mkdir s/new/000001a.msg
	: >s/new/000001a.msg/inside
	run -65 --separate-stderr msg-unwrap --once -s ' ' dir:s
	[ "$output" = 'm000001 m000002' ]
	[ "$stderr" = "msg-unwrap: 'dir:s/new/000001a.msg' is a directory, not a regular file
msg-unwrap: 'dir:s/new/000001a.msg' set aside as 'dir:s/bad/000001a.msg'" ]
	[ -d s/bad/000001a.msg ]
	[ -e s/bad/000001a.msg/inside ]
	empty_spool s
	# The next run has nothing to say.
	run -0 --separate-stderr msg-unwrap --once dir:s
	[ -z "$stderr" ]
}

@test "dir: a directory already claimed into cur/ is set aside from there" {
	# What a reader that opened anything it found left behind: every run
	# stopped at it with "Is a directory".
	spool_fill s 1 1
	mkdir s/cur/000-dir
	run -65 --separate-stderr msg-route --once -f 'true()' --output out.msg dir:s
	[ "$stderr" = "msg-route: 'dir:s/cur/000-dir' is a directory, not a regular file
msg-route: 'dir:s/cur/000-dir' set aside as 'dir:s/bad/000-dir'" ]
	[ -d s/bad/000-dir ]
	[ "$(msg-unwrap out.msg)" = m000001 ]
	empty_spool s
}

@test "dir: a FIFO in new/ does not hang the reader: it is set aside" {
	spool_fill s 1 1
	mkfifo s/new/000000.msg
	drop inbox a 'raw'
	mkfifo inbox/new/b
	run -65 --separate-stderr timeout -k 5 30 msg-unwrap --once dir:s
	[ "$output" = m000001 ]
	[ "$stderr" = "msg-unwrap: 'dir:s/new/000000.msg' is a FIFO, not a regular file
msg-unwrap: 'dir:s/new/000000.msg' set aside as 'dir:s/bad/000000.msg'" ]
	[ -p s/bad/000000.msg ]
	empty_spool s
	run -65 --separate-stderr timeout -k 5 30 msg-split --once -r -l dir:inbox
	[ "$(msg-unwrap <<<"$output")" = raw ]
	[ "${stderr_lines[1]}" = "msg-split: 'dir:inbox/new/b' set aside as 'dir:inbox/bad/b'" ]
	[ -p inbox/bad/b ]
	empty_spool inbox
}

@test "dir: a symlink to /dev/zero in new/ is set aside, not read for ever" {
	drop inbox a 'raw'
	ln -s /dev/zero inbox/new/b
	run -65 --separate-stderr timeout -k 5 30 msg-wrap --once dir:inbox
	[ "$(msg-unwrap <<<"$output")" = raw ]
	[ "$stderr" = "msg-wrap: 'dir:inbox/new/b' is a symbolic link, not a regular file
msg-wrap: 'dir:inbox/new/b' set aside as 'dir:inbox/bad/b'" ]
	[ "$(readlink inbox/bad/b)" = /dev/zero ]
	spool_fill s 1 1
	ln -s /dev/zero s/new/000000.msg
	run -65 --separate-stderr timeout -k 5 30 msg-route --once -f 'true()' dir:s
	[ "$(msg-unwrap <<<"$output")" = m000001 ]
	[ "${stderr_lines[1]}" = "msg-route: 'dir:s/new/000000.msg' set aside as 'dir:s/bad/000000.msg'" ]
	empty_spool s
}

@test "dir: --once drains what was there when it started, not what arrives later" {
	seq 1 3 >lines
	msg-wrap -l lines --output dir:loop
	# Its own output arrives in the spool it reads: a reader that takes
	# newcomers too would go round for ever.
	run -0 timeout -k 10 5 msg-route --once -f 'true()' dir:loop --output dir:loop
	is 3 loop/new
	is 0 loop/cur
	spooled loop | msg-unwrap -s '\n' >got
	echo >>got
	seq 1 3 | cmp - got
}

# ---- channels that cannot be opened ----

@test "dir: an output spool that cannot be created exits 73" {
	: >plain
	echo x >one
	run -73 --separate-stderr msg-wrap one --output dir:plain/s
	[ "$stderr" = "msg-wrap: cannot use spool directory 'dir:plain/s': Not a directory" ]
	run -73 --separate-stderr msg-wrap one --output dir:plain
	[ "$stderr" = "msg-wrap: cannot use spool directory 'dir:plain': Not a directory" ]
	msg-wrap one >one.msg
	run -73 --separate-stderr msg-translate --invalid dir:plain/s <one.msg
	[ "$stderr" = "msg-translate: cannot use spool directory 'dir:plain/s': Not a directory" ]
	run -73 --separate-stderr msg-tap dir:plain/s <one.msg
	[ "$stderr" = "msg-tap: cannot use spool directory 'dir:plain/s': Not a directory" ]
	run -73 --separate-stderr msg-route -f 'true()' --output dir:plain/s <one.msg
	[ "$stderr" = "msg-route: cannot use spool directory 'dir:plain/s': Not a directory" ]
	[ -f plain ]
	[ ! -s plain ]
}

@test "dir: a spool's missing parent directories are created, 0700" {
	umask 022
	echo x >one
	msg-wrap one --output dir:a/b/s
	[ "$(stat -c %a a a/b a/b/s a/b/s/new | paste -sd ' ')" = '700 700 700 700' ]
	is 1 a/b/s/new
}

@test "dir: msg-route -o, -p, -R and -t spools that cannot be created exit 73" {
	: >plain
	echo x | msg-wrap >one.msg
	run -73 --separate-stderr msg-route -o dir:plain/o -w 'false()' -t - <one.msg
	[ "$stderr" = "msg-route: cannot use spool directory 'dir:plain/o': Not a directory" ]
	run -73 --separate-stderr msg-route -p "header('k')" -t dir:plain/p -t - <one.msg
	[ "$stderr" = "msg-route: cannot use spool directory 'dir:plain/p': Not a directory" ]
	printf '%s\n' "true() -> dir:plain/r" >rules
	run -73 --separate-stderr msg-route -R rules <one.msg
	[ "$stderr" = "msg-route: rules:1: cannot use spool directory 'dir:plain/r': Not a directory" ]
	run -73 --separate-stderr msg-route -w 'true()' -t dir:plain/t <one.msg
	[ "$stderr" = "msg-route: cannot use spool directory 'dir:plain/t': Not a directory" ]
}

@test "dir: an input spool that cannot be opened exits 66" {
	: >plain
	run -66 --separate-stderr msg-unwrap --once dir:plain/s
	[ "$stderr" = "msg-unwrap: cannot read spool directory 'dir:plain/s': Not a directory" ]
	[ -z "$output" ]
	run -66 --separate-stderr msg-route --once -f 'true()' dir:plain
	[ "$stderr" = "msg-route: cannot use spool directory 'dir:plain': Not a directory" ]
	# Inputs before the bad one are read and their output flushed.
	spool_fill good 1 2
	run -66 --separate-stderr msg-unwrap --once -e dir:good dir:plain/s
	[ "$(bodies <(echo "$output") | paste -sd ' ')" = 'm000001 m000002' ]
	empty_spool good
}

@test "dir: an input spool that does not exist exits 66 and is not created" {
	run -66 --separate-stderr msg-unwrap --once dir:nowhere
	[ "$stderr" = "msg-unwrap: cannot read spool directory 'dir:nowhere': No such file or directory" ]
	[ ! -e nowhere ]
	# A waiting reader too: a mistyped name must not wait for ever.
	run -66 --separate-stderr msg-route -f 'true()' dir:nowhere/deeper
	[ ! -e nowhere ]
	# An existing empty directory is a spool: tmp/, new/ and cur/ are made.
	mkdir empty
	run -0 msg-unwrap --once dir:empty
	[ -z "$output" ]
	[ "$(ls empty | paste -sd ' ')" = 'cur new tmp' ]
}

@test "dir: a reader drains 10,000 messages oldest first, across many listings" {
	spool_fill big 1 10000
	msg-unwrap --once -e dir:big >got.jsonl
	bodies got.jsonl | cmp - <(expect_bodies 1 10000)
	empty_spool big
}

@test "dir: files dead writers left in tmp/ are removed after an hour; live ones are not" {
	spool_fill s 1 1
	printf 'half a fr' >s/tmp/dead.msg
	printf 'half a fr' >s/tmp/young.msg
	printf 'half a fr' >s/tmp/held.msg
	touch -d '2 hours ago' s/tmp/dead.msg s/tmp/held.msg
	touch -d '50 minutes ago' s/tmp/young.msg
	# A writer at work holds a lock on its file however old it is.
	exec 8<s/tmp/held.msg
	flock 8
	run -0 msg-unwrap --once dir:s
	exec 8<&-
	[ "$output" = m000001 ]
	[ "$(ls s/tmp | paste -sd ' ')" = 'held.msg young.msg' ]
}

@test "dir: a writer holds its file in tmp/ locked until it is in new/" {
	mkfifo feed
	# msg-route streams a body it need not look at and its read buffer
	# (320 KiB) cannot hold: the file in tmp/ is open while the rest of
	# the frame is on its way. (A frame the buffer holds is written once
	# it is all there.)
	head -c 350000 /dev/zero | tr '\0' a >first
	head -c 50000 /dev/zero | tr '\0' b >rest
	msg-route -f 'true()' --output dir:w <feed &
	exec 7>feed
	printf 'Content-Length: 400000\n\n' >&7
	cat first >&7
	wait_until 10 eval '[ "$(nfiles w/tmp)" = 1 ]'
	run -1 flock -n w/tmp/* true
	cat rest >&7
	printf '\n' >&7
	exec 7>&-
	wait
	is 0 w/tmp
	is 1 w/new
	spooled w | msg-unwrap >got
	cat first rest | cmp - got
}

# drop DIR NAME TEXT: a raw file delivered into spool DIR the maildir way.
drop() {
	mkdir -p "$1/tmp" "$1/new"
	printf '%s' "$3" >"$1/tmp/$2"
	mv "$1/tmp/$2" "$1/new/$2"
}

@test "dir: msg-wrap takes raw files from a spool, File-Name their name there" {
	drop inbox a-1.xml '<order id="1"/>'
	drop inbox b-2.json '{"id":2}'
	msg-wrap --once dir:inbox --output dir:flow
	empty_spool inbox
	is 2 flow/new
	run -0 msg-unwrap --once -e dir:flow
	[ "${#lines[@]}" = 2 ]
	[[ "${lines[0]}" == *'"File-Name":"a-1.xml"'* ]]
	[[ "${lines[0]}" == *'"Content-Type":"application/xml"'* ]]
	[[ "${lines[0]}" == *'"body":"<order id=\"1\"/>"'* ]]
	[[ "${lines[1]}" == *'"File-Name":"b-2.json"'* ]]
	[[ "${lines[1]}" == *'"Content-Type":"application/json"'* ]]
	# -l: every line of every file is a message.
	drop inbox c.txt $'x\ny\n'
	run -0 msg-wrap --once -l dir:inbox
	[ "$(msg-unwrap -s ' ' <<<"$output")" = "x y" ]
	empty_spool inbox
}

@test "dir: msg-split -r splits raw documents from a spool; a bad one is set aside and the rest split" {
	drop inbox 1.xml '<orders><o>a</o><o>b</o></orders>'
	drop inbox 2.xml '<orders><o>c</o>'
	drop inbox 3.xml '<orders><o>d</o></orders>'
	run -65 --separate-stderr msg-split --once -r -x /orders/o dir:inbox
	[ "$(msg-unwrap -s ' ' <<<"$output")" = '<o>a</o> <o>b</o> <o>d</o>' ]
	[ "$(msg-unwrap -H <<<"$output" | grep -c '^File-Name: 3.xml$')" = 1 ]
	[ "${#stderr_lines[@]}" = 2 ]
	[[ ${stderr_lines[0]} == "msg-split: dir:inbox/cur/2.xml (Message-Id "*"): body is not XML: "* ]]
	[ "${stderr_lines[1]}" = "msg-split: 'dir:inbox/cur/2.xml' set aside as 'dir:inbox/bad/2.xml'" ]
	[ "$(cat inbox/bad/2.xml)" = '<orders><o>c</o>' ]
	empty_spool inbox
}

@test "dir: msg-wrap and msg-split -r: a raw spool that does not exist exits 66" {
	run -66 --separate-stderr msg-wrap --once dir:nowhere
	[ "$stderr" = "msg-wrap: cannot read spool directory 'dir:nowhere': No such file or directory" ]
	run -66 --separate-stderr msg-split --once -r -l dir:nowhere
	[ "$stderr" = "msg-split: cannot read spool directory 'dir:nowhere': No such file or directory" ]
	[ ! -e nowhere ]
}

@test "dir: msg-route --on-error skip-channel reading a spool goes on when a FIFO reader leaves" {
	local i
	for ((i = 1; i <= 1000; i++)); do
		printf 'message %04d %0190d\n' "$i" 0
	done >lines
	msg-wrap -l --output dir:in lines
	mkfifo gone.fifo
	# A reader that opens the FIFO and leaves at once: every write fails.
	sh -c 'exec 7<gone.fifo' &
	run -74 --separate-stderr msg-route --once --on-error skip-channel -a --stats \
		-w 'true()' -t gone.fifo -w 'true()' -t keep.msg dir:in
	wait
	[ "${stderr_lines[0]}" = "msg-route: cannot write 'gone.fifo': Broken pipe; skipping it from now on" ]
	[[ "$stderr" == *"stats: channel 'keep.msg': 1000"* ]]
	[[ "$stderr" == *"undeliverable "[1-9]* ]]
	# The spool is emptied: every message reached the channel that is left.
	empty_spool in
	[ "$(msg-unwrap -s '\n' keep.msg)" = "$(cat lines)" ]
}
