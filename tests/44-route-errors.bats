#!/usr/bin/env bats
# msg-route when things go wrong: usage errors, outputs that cannot be
# opened or written (reported by address), --on-error stop and
# skip-channel with a reader that leaves, expired messages and the
# dead-letter channel, broken input.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/route/route

# usage_error MESSAGE ARG...: msg-route ARG... exits 64 with MESSAGE and
# the usage text, reading no input and writing nothing.
usage_error() {
	local want=$1
	shift
	run -64 --separate-stderr msg-route "$@" </dev/null
	[ "${stderr%%$'\n'*}" = "msg-route: $want" ] || {
		echo "got: $stderr"
		return 1
	}
	[[ $stderr == *$'\n'"usage: msg-route "* ]]
	[ -z "$output" ]
}

# ---- usage ----

@test "errors: usage errors exit 64 with the usage text" {
	usage_error 'give one of -w/-t rules, -R, -f, -p or --to-header'
	usage_error 'each -w needs its -t (2 -w, 1 -t)' -w 'true()' -w 'false()' -t a.out
	usage_error 'give one of -w/-t rules, -R, -f, -p or --to-header' -f 'true()' -w 'true()' -t a.out
	usage_error '-f takes no -t, -o or -a' -f 'true()' -o a.out
	usage_error '-p needs -t channels and takes no -o or -a' -p "header('K')"
	usage_error '-p needs -t channels and takes no -o or -a' -p "header('K')" -t a.out -a
	usage_error '--to-header needs --allow channels and takes no -t' --to-header To
	usage_error '--allow needs --to-header' --allow a.out -w 'true()' -t a.out
	usage_error '-R cannot be combined with -w' -R r -w 'true()' -t a.out
	usage_error '-R takes no -t' -R r -t a.out
	usage_error "--on-error takes stop or skip-channel, not 'later'" --on-error later -w 'true()' -t a.out
	usage_error "unknown option '--when-ever'" --when-ever x
	usage_error "option '-w' needs a value" -w
	# Nothing was opened or created.
	[ ! -e a.out ]
}

@test "errors: expressions that do not compile exit 64 before any channel is opened" {
	run -64 --separate-stderr msg-route -w '/order[' -t a.out </dev/null
	[ "$stderr" = "msg-route: invalid expression '/order[': Invalid expression at position 7" ]
	run -64 --separate-stderr msg-route -f 'upper(.)' </dev/null
	[ "$stderr" = "msg-route: unknown function 'upper' in expression 'upper(.)'" ]
	run -64 --separate-stderr msg-route -p "json('/k'" -t a.out -t b.out </dev/null
	[[ $stderr == "msg-route: invalid expression 'json('/k'': "* ]]
	[ ! -e a.out ]
}

# made: the files in the test's directory but bats' own.
made() {
	ls | grep -v '^separate-stderr-' || true
}

@test "errors: a bad rule after good ones creates none of the channels, nor the outputs" {
	run -64 --separate-stderr msg-route -w 'true()' -t a.out -w 'false()' -t dir:b \
		-w 'nope(1)' -t c.out -o rest.out --output main.out --invalid bad.out \
		--dead-letter dead.out </dev/null
	[ "$stderr" = "msg-route: unknown function 'nope' in expression 'nope(1)'" ]
	[ -z "$(made)" ]
	printf '%s\n' "true() -> a.out" "otherwise -> dir:rest" "json('/a' -> c.out" >r.rules
	run -64 --separate-stderr msg-route -R r.rules --dead-letter dead.out </dev/null
	[[ $stderr == "msg-route: r.rules:3: invalid expression "* ]]
	[ "$(made)" = r.rules ]
	# A FIFO without a reader is not opened either: no wait for ever.
	mkfifo f.fifo
	run -64 --separate-stderr timeout -k 10 10 msg-route -w 'true()' -t f.fifo -w '$x' -t a.out </dev/null
	[ "$stderr" = "msg-route: undefined variable '\$x' in expression '\$x'" ]
}

# ---- outputs ----

@test "errors: an output that cannot be opened exits 73, named" {
	run -73 --separate-stderr msg-route -w 'true()' -t no/such/dir.out "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: cannot open 'no/such/dir.out': No such file or directory" ]
	run -73 --separate-stderr msg-route -w 'true()' -t a.out -o fd:9 "$ROUTE/orders.msg" 9>&-
	[ "$stderr" = "msg-route: cannot use 'fd:9': Bad file descriptor" ]
	run -73 --separate-stderr msg-route -w 'true()' -t a.out --dead-letter no/dl.out "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: cannot open 'no/dl.out': No such file or directory" ]
	run -73 --separate-stderr msg-route -w 'true()' -t a.out --invalid no/inv.out "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: cannot open 'no/inv.out': No such file or directory" ]
	# Nothing was routed.
	[ ! -s a.out ]
}

@test "errors: fd:N channels work as outputs" {
	msg-route -w "header('Region') = 'eu'" -t fd:5 -o fd:6 "$ROUTE/orders.msg" 5>eu.out 6>rest.out
	frames "$ROUTE/orders.msg" 1 3 | cmp - eu.out
	frames "$ROUTE/orders.msg" 2 4 | cmp - rest.out
}

@test "errors: a full output is reported by address, exit 74" {
	run -74 --separate-stderr msg-route -w "header('Region') = 'eu'" -t /dev/full -o rest.out "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: cannot write '/dev/full': No space left on device" ]
	run -74 --separate-stderr msg-route -w 'false()' -t a.out -o /dev/full "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: cannot write '/dev/full': No space left on device" ]
	run -74 --separate-stderr sh -c 'msg-route -f "true()" "$1" >/dev/full' sh "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: cannot write 'stdout': No space left on device" ]
	run -74 --separate-stderr msg-route -f 'true()' --output /dev/full "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: cannot write '/dev/full': No space left on device" ]
	run -74 --separate-stderr msg-route -w 'false()' -t a.out --invalid /dev/full "$ROUTE/orders.msg"
	# Diverted into the buffer, the messages fail when it is flushed.
	[ "${#stderr_lines[@]}" = 5 ]
	[ "${stderr_lines[0]}" = "msg-route: warning: message o1: no rule matched: diverted to '/dev/full'" ]
	[ "${stderr_lines[4]}" = "msg-route: cannot write '/dev/full': No space left on device" ]
}

@test "errors: a full output with --on-error skip-channel is still reported" {
	run -74 --separate-stderr msg-route --on-error skip-channel \
		-w "header('Region') = 'eu'" -t /dev/full -o rest.out "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: cannot write '/dev/full': No space left on device" ]
	frames "$ROUTE/orders.msg" 2 4 | cmp - rest.out
}

@test "errors: --on-error stop: a reader that leaves stops the flow, exit 74" {
	local reader
	seqs 3000 >lines
	msg-wrap -l lines >in.msg
	mkfifo early.fifo
	spawn timeout -k 10 30 head -c 100 early.fifo
	reader=$spawned
	run -74 --separate-stderr timeout -k 10 30 msg-route -a \
		-w 'true()' -t early.fifo -w 'true()' -t all.out in.msg
	[ "$stderr" = "msg-route: cannot write 'early.fifo': Broken pipe" ]
	wait "$reader"
	# all.out got every message up to where the flow stopped, in order, whole.
	local n
	n=$(count all.out)
	[ "$n" -gt 0 ]
	[ "$n" -lt 3000 ]
	frames in.msg $(seq "$n") | cmp - all.out
}

@test "errors: --on-error skip-channel: the others get everything, exit 74" {
	local reader
	seqs 3000 >lines
	msg-wrap -l lines >in.msg
	mkfifo early.fifo
	spawn timeout -k 10 30 head -c 100 early.fifo
	reader=$spawned
	run -74 --separate-stderr timeout -k 10 30 msg-route -a --stats --on-error skip-channel \
		--dead-letter dead.out -w 'true()' -t early.fifo -w 'true()' -t all.out in.msg
	wait "$reader"
	cmp in.msg all.out
	[ "$(sed -n 1p <<<"$stderr")" = "msg-route: cannot write 'early.fifo': Broken pipe; skipping it from now on" ]
	# What could not go to early.fifo went to the dead-letter channel,
	# in order, each with an Error header; the counts add up.
	local sent dead
	sent=$(sed -n "s/^msg-route: stats: channel 'early.fifo': \([0-9]*\) (failed)$/\1/p" <<<"$stderr")
	dead=$(count dead.out)
	[ "$((sent + dead))" = 3000 ]
	[ "$(msg-unwrap -e dead.out | jq -r .headers.Error | sort -u)" = "msg-route: channel 'early.fifo' failed: Broken pipe" ]
	msg-unwrap -s '\n' dead.out | cmp - <(tail -n "$dead" lines | head -c -1)
	grep -qx "msg-route: stats: in 3000, routed 3000, otherwise 0, dropped 0, invalid 0, expired 0, undeliverable $dead" <<<"$stderr"
}

@test "errors: --on-error skip-channel without a dead-letter channel warns once and counts" {
	local reader
	seqs 3000 >lines
	msg-wrap -l lines >in.msg
	mkfifo early.fifo
	spawn timeout -k 10 30 head -c 100 early.fifo
	reader=$spawned
	run -74 --separate-stderr timeout -k 10 30 msg-route --stats --on-error skip-channel \
		-w 'number(substring(., 1, 6)) mod 2 = 0' -t early.fifo -o odd.out in.msg
	wait "$reader"
	awk 'NR % 2' lines | msg-wrap -l | msg-unwrap -s '\n' >odd.want
	msg-unwrap -s '\n' odd.out | cmp - odd.want
	[ "$(grep -c 'skipping it from now on' <<<"$stderr")" = 1 ]
	local sent lost
	sent=$(sed -n "s/^msg-route: stats: channel 'early.fifo': \([0-9]*\) (failed)$/\1/p" <<<"$stderr")
	lost=$(sed -n 's/.*undeliverable \([0-9]*\)$/\1/p' <<<"$stderr")
	[ "$((sent + lost))" = 1500 ]
}

# ---- expired messages and the dead-letter channel ----

# expiring: three messages: one expired, one that expires in 2999, one
# with an Expires header that is not a time.
expiring() {
	frame old 'Message-Id: e1' 'Expires: 2000-01-01T00:00:00Z'
	frame new 'Message-Id: e2' 'Expires: 2999-01-01T00:00:00.000Z'
	frame bad 'Message-Id: e3' 'Expires: tomorrow'
}

@test "errors: an expired message goes to --dead-letter with an Error header" {
	expiring >in.msg
	run -0 --separate-stderr msg-route -w 'true()' -t ok.out --dead-letter dead.out \
		--invalid bad.out in.msg
	[ "$stderr" = "msg-route: warning: message e3: invalid Expires 'tomorrow': diverted to 'bad.out'" ]
	frames in.msg 2 | cmp - ok.out
	frames in.msg 1 | sed 's/^Content-Length:/Error: msg-route: message expired\n&/' | cmp - dead.out
	frames in.msg 3 | sed "s/^Content-Length:/Error: msg-route: invalid Expires 'tomorrow'\n&/" | cmp - bad.out
	# $MSG_DEAD_LETTER names the same channel.
	MSG_DEAD_LETTER=env.out msg-route -w 'true()' -t ok2.out --invalid bad2.out in.msg
	cmp dead.out env.out
}

@test "errors: an expired message without a dead-letter channel is dropped with a warning, counted" {
	expiring >in.msg
	run -0 --separate-stderr msg-route --stats -w 'true()' -t ok.out --invalid bad.out in.msg
	frames in.msg 2 | cmp - ok.out
	[ "$(sed -n 1p <<<"$stderr")" = "msg-route: message expired; message e1 dropped" ]
	grep -qx 'msg-route: stats: in 3, routed 1, otherwise 0, dropped 0, invalid 1, expired 1, undeliverable 0' <<<"$stderr"
	# Expired before any rule is tried: not counted against a rule.
	grep -qx "msg-route: stats: rule 1 'true()' -> 'ok.out': 1" <<<"$stderr"
}

@test "errors: --stats counts what went to the dead-letter channel" {
	expiring >in.msg
	run -0 --separate-stderr msg-route --stats -w 'true()' -t ok.out --dead-letter dead.out \
		--invalid bad.out in.msg
	grep -qx "msg-route: stats: channel 'dead.out': 1" <<<"$stderr"
}

# ---- input ----

@test "errors: a truncated input frame: what came before is routed, exit 65" {
	frame one 'Message-Id: g1' >in.msg
	printf 'Message-Id: t1\nContent-Length: 10\n\nabc' >>in.msg
	run -65 --separate-stderr msg-route -w 'true()' -t out.msg in.msg
	[ "$stderr" = "msg-route: in.msg: offset 76: truncated frame: end of input after 3 of 10 body bytes (Message-Id t1)" ]
	# The partial frame is not passed on: out.msg stays a clean stream.
	frames in.msg 1 | cmp - out.msg
}

@test "errors: raw data gets a hint, a missing input exits 66" {
	run -65 --separate-stderr msg-route -f 'true()' "$ROUTE/rules.txt"
	[[ $stderr == *"not a message stream; wrap raw data with msg-wrap" ]]
	[ -z "$output" ]
	run -66 --separate-stderr msg-route -f 'true()' no-such.msg
	[ "$stderr" = "msg-route: cannot open 'no-such.msg': No such file or directory" ]
}

@test "errors: a truncated body is reported as truncated" {
	printf '<orders><order id="3">' >half.xml
	msg-wrap -H 'Message-Id: H' half.xml >in.msg
	run -65 --separate-stderr msg-route -f //order in.msg
	[ "$stderr" = "msg-route: in.msg: message 1 (Message-Id H): body is not XML: line 1: truncated: the document ends inside element 'order'" ]
	[ -z "$output" ]
}

# ---- the machine's faults ----

@test "errors: out of memory parsing a body is exit 70 and the message stays for a retry" {
	skip_without_memory_limits
	spool_of_big_xml
	runs_out_of_memory msg-route -f //b
	runs_out_of_memory msg-route --invalid inv.msg -f //b
	# With memory enough, the next run routes it.
	run -0 --separate-stderr msg-route --once -f //b --output out.msg dir:sp
	msg-unwrap out.msg | cmp - big.xml
	[ -z "$(find sp -type f)" ]
}
