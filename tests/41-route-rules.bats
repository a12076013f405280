#!/usr/bin/env bats
# msg-route -R: rules kept in a file (EXPR -> CHANNEL, '#' comments,
# otherwise -> CHANNEL), errors that name file and line, and SIGHUP reloads
# that take effect before the next message or leave the old rules in force.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/route/route

# rules_error TEXT MESSAGE: a rules file holding TEXT is refused with exit
# 64 and MESSAGE (after "msg-route: ") on stderr; no message is read.
rules_error() {
	printf '%b' "$1" >bad.rules
	run -64 --separate-stderr msg-route -R bad.rules "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: $2" ] || {
		echo "got: $stderr"
		return 1
	}
	[ -z "$output" ]
}

# ---- the file ----

@test "rules: a rules file routes like the same rules on the command line" {
	run -0 --separate-stderr msg-route -R "$ROUTE/rules.txt" "$ROUTE/orders.msg"
	[ -z "$stderr" ]
	frames "$ROUTE/orders.msg" 1 4 | cmp - rush.out
	frames "$ROUTE/orders.msg" 3 | cmp - big.out
	frames "$ROUTE/orders.msg" 2 | cmp - rest.out
	# Opened at start-up even though nothing reached it.
	[ -e apac.out ]
	[ ! -s apac.out ]
	mkdir cli
	cd cli
	msg-route -w "/order/@type = 'rush'" -t rush.out -w '/order/total > 100' -t big.out \
		-w "header('Region') = 'apac'" -t apac.out -o rest.out "$ROUTE/orders.msg"
	for f in rush big apac rest; do
		cmp $f.out ../$f.out
	done
}

@test "rules: --stats names each rule by its text" {
	run -0 --separate-stderr msg-route --stats -R "$ROUTE/rules.txt" "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: stats: rule 1 '/order/@type = 'rush'' -> 'rush.out': 2
msg-route: stats: rule 2 '/order/total > 100' -> 'big.out': 1
msg-route: stats: rule 3 'header('Region') = 'apac'' -> 'apac.out': 0
msg-route: stats: otherwise -> 'rest.out': 1
msg-route: stats: channel 'rush.out': 2
msg-route: stats: channel 'big.out': 1
msg-route: stats: channel 'apac.out': 0
msg-route: stats: channel 'rest.out': 1
msg-route: stats: in 4, routed 3, otherwise 1, dropped 0, invalid 0, expired 0, undeliverable 0" ]
}

@test "rules: -R with --all, and -o on the command line over the file's otherwise" {
	msg-route -a -R "$ROUTE/rules.txt" -o cli-rest.out "$ROUTE/orders.msg"
	frames "$ROUTE/orders.msg" 1 4 | cmp - rush.out
	frames "$ROUTE/orders.msg" 1 3 | cmp - big.out
	frames "$ROUTE/orders.msg" 4 | cmp - apac.out
	frames "$ROUTE/orders.msg" 2 | cmp - cli-rest.out
	[ ! -s rest.out ]
}

@test "rules: the last '->' on a line ends the expression; CRLF lines are read" {
	printf '%s\r\n' "contains(., '->') -> arrow.out" '# a comment\r' 'otherwise -> rest.out' >crlf.rules
	printf 'a -> b' | msg-wrap -H 'Message-Id: a1' >in.msg
	printf 'a b' | msg-wrap -H 'Message-Id: a2' >>in.msg
	msg-route -R crlf.rules in.msg
	[ "$(ids arrow.out)" = a1 ]
	[ "$(ids rest.out)" = a2 ]
}

@test "rules: a file with only 'otherwise' sends everything there" {
	printf 'otherwise -> all.out\n' >only.rules
	msg-route -R only.rules "$ROUTE/orders.msg"
	cmp "$ROUTE/orders.msg" all.out
}

@test "rules: without an otherwise an unmatched message is invalid" {
	printf "header('Region') = 'eu' -> eu.out\n" >eu.rules
	run -65 --separate-stderr msg-route -R eu.rules "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: $ROUTE/orders.msg: message 2 (Message-Id o2): no rule matched" ]
	frames "$ROUTE/orders.msg" 1 | cmp - eu.out
}

# ---- errors, each with file and line ----

@test "rules error: a line without '->'" {
	rules_error "# fine\n\ntrue() -> a.out\nfalse() a.out\n" "bad.rules:4: missing '->' between expression and channel"
}

@test "rules error: nothing before '->'" {
	rules_error "true() -> a.out\n   -> b.out\n" "bad.rules:2: missing expression before '->'"
}

@test "rules error: nothing after '->'" {
	rules_error "true() ->   \n" "bad.rules:1: missing channel after '->'"
}

@test "rules error: a second otherwise" {
	rules_error "otherwise -> a.out\ntrue() -> b.out\notherwise -> c.out\n" "bad.rules:3: a second 'otherwise'"
}

@test "rules error: an expression that does not compile" {
	rules_error "true() -> a.out\n/order[@id = -> b.out\n" \
		"bad.rules:2: invalid expression '/order[@id =': Invalid expression at position 12"
}

@test "rules error: an unknown function" {
	rules_error "# c\nshout('x') -> a.out\n" "bad.rules:2: unknown function 'shout' in expression 'shout('x')'"
}

@test "rules error: a channel that is not an address" {
	rules_error "true() -> fd:x\n" "bad.rules:1: invalid descriptor in channel 'fd:x'"
	rules_error "# spool\ntrue() -> dir:\n" "bad.rules:2: missing directory in channel 'dir:'"
}

@test "rules error: a file with no rules" {
	rules_error "# nothing here\n\n" "bad.rules: no rules"
	rules_error "" "bad.rules: no rules"
}

@test "rules error: a channel that cannot be opened exits 73, as with -t" {
	run -73 --separate-stderr msg-route -w 'true()' -t no/such/a.out "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: cannot open 'no/such/a.out': No such file or directory" ]
	printf 'true() -> no/such/a.out\n' >bad.rules
	run -73 --separate-stderr msg-route -R bad.rules "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: bad.rules:1: cannot open 'no/such/a.out': No such file or directory" ]
	printf 'true() -> a.out\notherwise -> fd:9\n' >bad.rules
	run -73 --separate-stderr msg-route -R bad.rules "$ROUTE/orders.msg" 9>&-
	[ "$stderr" = "msg-route: bad.rules:2: cannot use 'fd:9': Bad file descriptor" ]
	[ -z "$output" ]
}

@test "rules error: a rules file that cannot be read exits 66" {
	run -66 --separate-stderr msg-route -R no-such.rules "$ROUTE/orders.msg"
	[ "$stderr" = "msg-route: cannot open 'no-such.rules': No such file or directory" ]
	[ -z "$output" ]
}

# ---- SIGHUP ----

# start_router ARG...: msg-route ARG... reading the FIFO "in", which the
# test holds open on fd 7 (read-write, so the test never waits in open(2)
# for a router that failed to start); its stderr goes to "err", its pid is
# $router. timeout passes each SIGHUP on to the router; without
# --foreground it would ignore every signal after the first one.
start_router() {
	mkfifo in
	exec 7<>in
	spawn timeout -k 10 --foreground 30 msg-route "$@" in 2>err
	router=$spawned
}

# send ID KIND: one message with that Message-Id and a Kind header.
send() {
	printf '%s' "$1" | timeout -k 10 10 msg-wrap -H "Message-Id: $1" -H "Kind: $2" >&7
}

# finish: end the input and wait for the router; its exit status is $rc.
finish() {
	exec 7>&-
	rc=0
	wait "$router" || rc=$?
}

@test "rules: SIGHUP reloads the file before the next message" {
	printf "header('Kind') = 'a' -> a.out\notherwise -> rest.out\n" >r.rules
	start_router --stats -R r.rules
	send m1 a
	send m2 b
	wait_until 60 has 1 a.out
	wait_until 60 has 1 rest.out
	printf "header('Kind') = 'b' -> b.out\nheader('Kind') = 'c' -> c.out\notherwise -> rest.out\n" >r.rules
	kill -HUP "$router"
	send m3 a
	send m4 b
	send m5 c
	finish
	[ "$rc" = 0 ]
	[ "$(ids a.out)" = m1 ]
	[ "$(ids b.out)" = m4 ]
	[ "$(ids c.out)" = m5 ]
	[ "$(ids rest.out)" = "m2 m3" ]
	grep -qx "msg-route: 'r.rules': 2 rules loaded" err
	grep -qx "msg-route: stats: channel 'a.out': 1" err
	grep -qx "msg-route: stats: in 5, routed 3, otherwise 2, dropped 0, invalid 0, expired 0, undeliverable 0" err
}

@test "rules: SIGHUP with a bad file keeps the old rules and warns" {
	printf "header('Kind') = 'a' -> a.out\notherwise -> rest.out\n" >r.rules
	start_router -R r.rules
	send m1 a
	wait_until 60 has 1 a.out
	printf "header('Kind') = 'b' -> b.out\nheader('Kind') = -> c.out\n" >r.rules
	kill -HUP "$router"
	send m2 a
	send m3 b
	wait_until 60 has 1 rest.out
	# The warning is there once the next message has been routed.
	[ "$(cat err)" = "msg-route: r.rules:2: invalid expression 'header('Kind') =': Invalid expression at position 16; keeping the rules in force" ]
	# A file that has gone is a bad file too.
	rm r.rules
	kill -HUP "$router"
	send m4 a
	finish
	[ "$rc" = 0 ]
	[ "$(ids a.out)" = "m1 m2 m4" ]
	[ "$(ids rest.out)" = m3 ]
	# The bad file was compiled whole before any of its channels opened.
	[ ! -e b.out ]
	[ "$(sed -n 2p err)" = "msg-route: cannot open 'r.rules': No such file or directory; keeping the rules in force" ]
}

@test "rules: SIGHUP twice, good then bad then good" {
	printf "otherwise -> one.out\n" >r.rules
	start_router -R r.rules
	send m1 x
	wait_until 60 has 1 one.out
	printf "otherwise -> two.out\n" >r.rules
	kill -HUP "$router"
	send m2 x
	wait_until 60 has 1 two.out
	printf "otherwise two.out\n" >r.rules
	kill -HUP "$router"
	send m3 x
	wait_until 60 has 2 two.out
	printf "true() -> three.out\n" >r.rules
	kill -HUP "$router"
	send m4 x
	finish
	[ "$rc" = 0 ]
	[ "$(ids one.out)" = m1 ]
	[ "$(ids two.out)" = "m2 m3" ]
	[ "$(ids three.out)" = m4 ]
	[ "$(cat err)" = "msg-route: 'r.rules': 0 rules loaded
msg-route: r.rules:1: missing '->' between expression and channel; keeping the rules in force
msg-route: 'r.rules': 1 rules loaded" ]
}

@test "rules: -o on the command line stays in force across a reload" {
	printf "header('Kind') = 'a' -> a.out\n" >r.rules
	start_router -R r.rules -o rest.out
	send m1 a
	send m2 b
	wait_until 60 has 1 rest.out
	printf "header('Kind') = 'b' -> b.out\n" >r.rules
	kill -HUP "$router"
	send m3 a
	send m4 b
	finish
	[ "$rc" = 0 ]
	[ "$(ids a.out)" = m1 ]
	[ "$(ids b.out)" = m4 ]
	[ "$(ids rest.out)" = "m2 m3" ]
}
