#!/usr/bin/env bats
# msg-route -p: the value of an expression picks one of the -t channels,
# so every message with a given key goes to the same output, in order, on
# every run; keys spread evenly.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/route/route

# keyed N ROUNDS [ORDER]: ROUNDS rounds over N keys "k1".."kN", one JSON
# message per key per round: {"key":"kK","round":R}. ORDER "reverse" walks
# the keys backwards.
keyed() {
	perl -e 'my ($n, $rounds, $order) = @ARGV;
		my @k = 1 .. $n;
		@k = reverse @k if $order eq "reverse";
		for my $r (1 .. $rounds) {
			print qq({"key":"k$_","round":$r}\n) for @k;
		}' "$1" "$2" "${3:-}" | msg-wrap -l
}

# key_map FILE...: "KEY FILE" for every message, one line each.
key_map() {
	local f
	for f in "$@"; do
		msg-unwrap -e "$f" | jq -r --arg f "$f" '(.body | fromjson | .key) + " " + $f'
	done
}

@test "partition: every key goes to one output, in order" {
	keyed 500 4 >in.msg
	run -0 --separate-stderr msg-route -p "json('/key')" -t p0 -t p1 -t p2 -t p3 in.msg
	[ -z "$output" ]
	[ -z "$stderr" ]
	key_map p0 p1 p2 p3 | sort -u >map
	# 500 keys, each in exactly one file.
	[ "$(wc -l <map)" = 500 ]
	[ "$(cut -d' ' -f1 map | sort -u | wc -l)" = 500 ]
	# Each output keeps each key's rounds in order 1, 2, 3, 4.
	local f
	for f in p0 p1 p2 p3; do
		msg-unwrap -e $f | jq -r '.body | fromjson | "\(.key) \(.round)"' >rounds.$f
		[ "$(awk '$2 != ++seen[$1] { bad++ } END { print bad + 0 }' rounds.$f)" = 0 ]
	done
	[ "$(cat p0 p1 p2 p3 | msg-unwrap -H | grep -c '^Content-Length: ')" = 2000 ]
}

@test "partition: 10,000 keys spread evenly over 4 outputs" {
	keyed 10000 1 >in.msg
	run -0 --separate-stderr msg-route --stats -p "json('/key')" -t p0 -t p1 -t p2 -t p3 in.msg
	local f n total=0
	for f in p0 p1 p2 p3; do
		n=$(count $f)
		echo "$f: $n"
		# Within 20% of 2,500.
		[ "$n" -ge 2000 ]
		[ "$n" -le 3000 ]
		total=$((total + n))
		grep -qx "msg-route: stats: channel '$f': $n" <<<"$stderr"
	done
	[ "$total" = 10000 ]
	grep -qx 'msg-route: stats: in 10000, routed 10000, otherwise 0, dropped 0, invalid 0, expired 0, undeliverable 0' <<<"$stderr"
}

@test "partition: the same key goes to the same output on another run" {
	keyed 2000 1 >one.msg
	# Another run: keys in the other order, interleaved with other keys.
	perl -e 'for my $i (reverse 1 .. 2000) {
			print qq({"key":"k$i","other":"first"}\n);
			print qq({"key":"z$i"}\n);
		}' | msg-wrap -l >two.msg
	mkdir one two
	(cd one && msg-route -p "json('/key')" -t p0 -t p1 -t p2 -t p3 ../one.msg)
	(cd two && msg-route -p "json('/key')" -t p0 -t p1 -t p2 -t p3 ../two.msg)
	(cd one && key_map p0 p1 p2 p3) | sort >one.map
	(cd two && key_map p0 p1 p2 p3) | grep '^k' | sort >two.map
	[ "$(wc -l <one.map)" = 2000 ]
	diff one.map two.map
}

@test "partition: the key is hashed with 64-bit FNV-1a, modulo the number of outputs" {
	# The hash is part of the contract: a partitioned flow keeps its
	# key-to-output mapping across versions and hosts.
	keyed 300 1 >in.msg
	msg-route -p "json('/key')" -t p0 -t p1 -t p2 -t p3 -t p4 in.msg
	key_map p0 p1 p2 p3 p4 | sort >got
	# FNV-1a in two 32-bit halves, so plain perl integers never overflow.
	perl -e 'for my $i (1 .. 300) {
			my ($hi, $lo) = (0xcbf29ce4, 0x84222325);
			for my $c (unpack "C*", "k$i") {
				$lo ^= $c;
				# times 0x100000001b3 = 2^40 + 0x1b3, modulo 2^64
				my $p = $lo * 0x1b3;
				$hi = ($hi * 0x1b3 + ($p >> 32) + ($lo << 8)) & 0xffffffff;
				$lo = $p & 0xffffffff;
			}
			my $m = (($hi % 5) * (4294967296 % 5) + $lo % 5) % 5;
			print "k$i p$m\n";
		}' | sort >want
	diff want got
}

@test "partition: by header and by XPath" {
	msg-route -p "header('Region')" -t a.out -t b.out -t c.out "$ROUTE/orders.msg"
	# Each Region is in one output only; o1 and o3 (eu) are together.
	local f r
	for r in eu us apac; do
		[ "$(for f in a.out b.out c.out; do grep -l "^Region: $r\$" $f; done | wc -l)" = 1 ]
	done
	[ "$(cat a.out b.out c.out | msg-unwrap -H | grep -c '^Content-Length: ')" = 4 ]
	f=$(grep -l '^Message-Id: o1$' a.out b.out c.out)
	grep -q '^Message-Id: o3$' "$f"
	# A node-set key is its string value, as string() gives it.
	msg-route -p "/order/customer" -t x.out -t y.out "$ROUTE/orders.msg"
	msg-route -p "string(/order/customer)" -t x2.out -t y2.out "$ROUTE/orders.msg"
	cmp x.out x2.out
	cmp y.out y2.out
	[ $(($(count x.out) + $(count y.out))) = 4 ]
}

@test "partition: an empty key is a key like any other" {
	keyed 50 2 >in.msg
	msg-route -p "json('/no-such-member')" -t p0 -t p1 -t p2 in.msg
	# All 100 in one output, the other two empty, in input order.
	local full
	full=$(for f in p0 p1 p2; do if [ -s $f ]; then echo $f; fi; done)
	[ "$(wc -w <<<"$full")" = 1 ]
	cmp in.msg "$full"
}

@test "partition: a key that cannot be computed makes the message invalid" {
	keyed 3 1 >in.msg
	printf '{"key": ' | msg-wrap -t application/json -H 'Message-Id: broken' >>in.msg
	run -65 --separate-stderr msg-route -p "json('/key')" -t p0 -t p1 in.msg
	[[ $stderr == "msg-route: in.msg: message 4 (Message-Id broken): body is not JSON: "* ]]
	[ "$(cat p0 p1 | msg-unwrap -H | grep -c '^Content-Length: ')" = 3 ]
	run -0 --separate-stderr msg-route -p "json('/key')" -t q0 -t q1 --invalid bad.out in.msg
	[ "$(ids bad.out)" = broken ]
	[ "$(cat q0 q1 | msg-unwrap -H | grep -c '^Content-Length: ')" = 3 ]
}
