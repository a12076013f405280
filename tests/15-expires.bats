#!/usr/bin/env bats
# Expires (msg-format(5), msg-tools(7)): msg-unwrap, msg-split and
# msg-translate never process an expired message; it goes to
# --dead-letter with an Error header, or is dropped with a warning, and is
# counted. An Expires that is not a time makes the message invalid.

load test_helper
bats_require_minimum_version 1.5.0

export LC_ALL=C

PAST=2020-01-01T00:00:00Z
FUTURE=2999-01-01T00:00:00Z

# The four kinds of message, in one stream: live (no Expires), expired,
# not yet expired, and with an Expires that is not a time.
mixed() {
	frame live 'Message-Id: id-live'
	frame old 'Message-Id: id-old' "Expires: $PAST"
	frame later 'Message-Id: id-later' "Expires: $FUTURE"
	frame odd 'Message-Id: id-odd' 'Expires: next tuesday'
}

@test "expires: msg-unwrap drops an expired message with a warning and counts it" {
	{ frame live 'Message-Id: id-live'; frame old 'Message-Id: id-old' "Expires: $PAST"
	  frame later "Expires: $FUTURE"; } >in.msg
	run -0 --separate-stderr msg-unwrap -s ' ' --stats in.msg
	[ "$output" = "live later" ]
	[ "${stderr_lines[0]}" = "msg-unwrap: message expired; message id-old dropped" ]
	[ "${stderr_lines[1]}" = "msg-unwrap: stats: in 3, out 2, invalid 0, expired 1" ]
}

@test "expires: --dead-letter gets the expired message whole, with an Error header" {
	mixed >in.msg
	run -0 --separate-stderr msg-unwrap -s ' ' --dead-letter dead.msg --invalid bad.msg in.msg
	[ "$output" = "live later" ]
	# Expired is not invalid: only the invalid one is named on stderr.
	[ "$stderr" = "msg-unwrap: warning: message id-odd: invalid Expires 'next tuesday': diverted to 'bad.msg'" ]
	cmp dead.msg <(frame old 'Message-Id: id-old' "Expires: $PAST" 'Error: msg-unwrap: message expired')
	cmp bad.msg <(frame odd 'Message-Id: id-odd' 'Expires: next tuesday' \
		"Error: msg-unwrap: invalid Expires 'next tuesday'")
}

@test "expires: \$MSG_DEAD_LETTER names the dead-letter channel" {
	frame old "Expires: $PAST" >in.msg
	MSG_DEAD_LETTER=dead.msg run -0 --separate-stderr msg-translate -H 'X: 1' in.msg
	[ -z "$output" ]
	[ -z "$stderr" ]
	cmp dead.msg <(frame old "Expires: $PAST" 'Error: msg-translate: message expired')
}

@test "expires: an Expires that is not a time stops the tool (65) without --invalid" {
	mixed >in.msg
	run -65 --separate-stderr msg-unwrap -s ' ' --dead-letter dead.msg in.msg
	[ "$output" = "live later" ]
	[ "$stderr" = "msg-unwrap: in.msg: message 4 (Message-Id id-odd): invalid Expires 'next tuesday'" ]
}

@test "expires: a large expired body streams to the dead-letter channel byte for byte" {
	head -c 3000000 /dev/urandom >big
	{ printf 'Expires: %s\nContent-Length: 3000000\n\n' "$PAST"; cat big; printf '\n'; } >in.msg
	run -0 --separate-stderr msg-unwrap --dead-letter dead.msg in.msg
	[ -z "$output" ]
	[ "$(msg-unwrap -H dead.msg)" = "$(printf 'Expires: %s\nError: msg-unwrap: message expired\nContent-Length: 3000000\n' "$PAST")" ]
	# The body is the same bytes.
	sed '1,/^$/d' dead.msg | head -c 3000000 | cmp - big
}

@test "expires: msg-split and msg-translate keep expired messages from their work" {
	mixed >in.msg
	run -0 --separate-stderr msg-split -l --dead-letter dead.msg --invalid bad.msg --stats in.msg
	[ "$(msg-unwrap -s ' ' <<<"$output")" = "live later" ]
	[ "$stderr" = "msg-split: warning: message id-odd: invalid Expires 'next tuesday': diverted to 'bad.msg'
msg-split: stats: in 4, out 2, invalid 1, empty 0, expired 1" ]
	[ "$(msg-unwrap -H dead.msg | grep '^Error: ')" = "Error: msg-split: message expired" ]
	run -0 --separate-stderr msg-translate --to json --dead-letter dead2.msg --invalid bad2.msg --stats in.msg
	[ "${#stderr_lines[@]}" = 4 ]
	[ "${stderr_lines[2]}" = "msg-translate: warning: message id-odd: invalid Expires 'next tuesday': diverted to 'bad2.msg'" ]
	[ "${stderr_lines[3]}" = "msg-translate: stats: in 4, out 0, invalid 3, expired 1" ]
	[ "$(msg-unwrap -H dead2.msg | grep '^Error: ')" = "Error: msg-translate: message expired" ]
}

@test "expires: msg-unwrap -H and -e show expired messages, so dead letters can be read" {
	frame old 'Message-Id: id-old' "Expires: $PAST" 'Error: msg-unwrap: message expired' >dead.msg
	run -0 --separate-stderr msg-unwrap -H dead.msg
	[ "${lines[0]}" = "Message-Id: id-old" ]
	[ -z "$stderr" ]
	run -0 --separate-stderr msg-unwrap -e dead.msg
	[[ "$output" == *'"body":"old"'* ]]
	[ -z "$stderr" ]
}

@test "expires: an expired message from a dir: input goes to a dir: dead-letter spool" {
	mkdir -p s/tmp s/new
	frame old 'Message-Id: id-old' "Expires: $PAST" >s/new/0001.msg
	frame live 'Message-Id: id-live' >s/new/0002.msg
	run -0 --separate-stderr msg-unwrap --once -s ' ' --dead-letter dir:dead dir:s
	[ "$output" = live ]
	[ "$(find s/new s/cur -type f | wc -l)" = 0 ]
	[ "$(ls dead/new | wc -l)" = 1 ]
	cmp dead/new/* <(frame old 'Message-Id: id-old' "Expires: $PAST" 'Error: msg-unwrap: message expired')
}

@test "expires: an expired message near the header-block limit still fits the dead-letter channel" {
	{ frame old 'Message-Id: e1' "Expires: $PAST" "X: $(head -c 65440 /dev/zero | tr '\0' a)"
	  frame live 'Message-Id: e2'; } >in.msg
	run -0 --separate-stderr msg-unwrap --dead-letter dead.msg in.msg
	[ "$output" = live ]
	[ -z "$stderr" ]
	# No room for even a short Error: the longest header goes, named, and
	# the frame is one a reader takes.
	run -0 msg-unwrap -H dead.msg
	[ "$output" = "Message-Id: e1
Expires: $PAST
Error: msg-unwrap: message expired; header 'X' of 65440 bytes dropped
Content-Length: 3" ]
	[ "$(tail -c 4 dead.msg)" = old ]
}
