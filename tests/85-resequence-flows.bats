#!/usr/bin/env bats
# msg-resequence at the end of real flows: the children of 1,000 split
# orders, shuffled, come back in the order msg-split wrote them; and
# messages partitioned over four parallel msg-translate stages, which
# reorder them, come back in each key's order.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/aggregate/aggregate
load fixtures/resequence/resequence

SHUFFLE=$BATS_TEST_DIRNAME/shuffle-frames

# split_orders: 1,000 orders, order i with i % 4 + 1 items but every
# 50th with none, wrapped one a message in wrapped.msg and split into
# their items in split.msg.
split_orders() {
	perl -e '
		for my $i (1 .. 1000) {
			my $n = $i % 50 ? $i % 4 + 1 : 0;
			print qq(<order id="$i">),
				(map { qq(<item order="$i" n="$_"/>) } 1 .. $n), "</order>\n";
		}' >orders.txt
	msg-wrap -l -t application/xml orders.txt >wrapped.msg
	msg-split -x /order/item wrapped.msg >split.msg
	[ "$(count_frames split.msg)" = 2480 ]
}

@test "flow: split 1,000 orders, shuffle each order's items, resequence: the split comes back byte for byte" {
	split_orders
	"$SHUFFLE" 85 group <split.msg >shuffled.msg
	# The shuffle moved items, kept them all.
	run -1 cmp -s split.msg shuffled.msg
	by_group split.msg | sort >a
	by_group shuffled.msg | sort >b
	expect_same a b
	run -0 --separate-stderr timeout -k 5 60 bash -c \
		'msg-resequence --stats shuffled.msg >out.msg && msg-unwrap out.msg >out.txt'
	cmp split.msg out.msg
	msg-unwrap split.msg | cmp - out.txt
	# 20 orders had no items: their markers passed at once.
	[ "$stderr" = 'msg-resequence: stats: in 2480, out 2480, gaps 0, skipped 0, late 0, duplicates 0, invalid 0, expired 0, waiting 0, most 3' ]
}

@test "flow: split 1,000 orders, shuffle across orders, resequence: each order's items in order, each as soon as it can be" {
	split_orders
	"$SHUFFLE" 85 40 <split.msg >shuffled.msg
	run -1 cmp -s split.msg shuffled.msg
	run -0 --separate-stderr timeout -k 5 60 bash -c 'msg-resequence --stats shuffled.msg >out.msg'
	[ -z "$output" ]
	resequenced shuffled.msg >expect.msg
	cmp expect.msg out.msg
	# Within each order, the split's order.
	by_group split.msg >expect
	by_group out.msg >got
	expect_same expect got
	[ "$stderr" = 'msg-resequence: stats: in 2480, out 2480, gaps 0, skipped 0, late 0, duplicates 0, invalid 0, expired 0, waiting 0, most 14' ]
}

# keyed N ROUNDS: ROUNDS messages for each of the keys k1..kN, round
# by round, each numbered in its key: Correlation-Id kK,
# Sequence-Number R, body <item key="kK" n="R"/>.
keyed() {
	perl -e '
		my ($keys, $rounds) = @ARGV;
		for my $r (1 .. $rounds) {
			for my $k (1 .. $keys) {
				my $body = qq(<item key="k$k" n="$r"/>);
				print "Message-Id: k$k-$r\nContent-Type: application/xml\n",
					"Correlation-Id: k$k\nSequence-Number: $r\n",
					"Content-Length: ", length $body, "\n\n$body\n";
			}
		}' "$@"
}

@test "flow: partitioned over 4 parallel msg-translate stages over FIFOs and back through msg-resequence, each key in order" {
	local i resequencer
	local -a stages
	keyed 20 50 >in.msg
	mkfifo p0.fifo p1.fifo p2.fifo p3.fifo merged.fifo
	spawn timeout -k 5 60 bash -c 'cat merged.fifo | tee merged.msg |
		msg-resequence --stats >out.msg 2>rsq.err'
	resequencer=$spawned
	# The test holds merged.fifo open too, so the resequencer's input
	# ends only when every stage is done, whichever opens it first.
	exec 5>merged.fifo
	# Stage i starts reading 0.3 i seconds late: the stages' outputs
	# come out of order, as parallel work does.
	for i in 0 1 2 3; do
		spawn timeout -k 5 60 bash -c 'exec <"p$1.fifo"; sleep "$2"
			exec msg-translate -x "$3" --output merged.fifo' stage "$i" "0.$((3 * i))" \
			"$FIXTURES/resequence/stage.xsl" 2>"stage$i.err"
		stages[i]=$spawned
	done
	# Partition by number: every key's messages spread over the stages.
	run -0 --separate-stderr timeout -k 5 60 msg-route -p "header('Sequence-Number')" \
		-t p0.fifo -t p1.fifo -t p2.fifo -t p3.fifo in.msg
	[ -z "$output" ]
	[ -z "$stderr" ]
	for i in 0 1 2 3; do
		exit_status "${stages[i]}" 60
		[ "$status" = 0 ]
		[ ! -s "stage$i.err" ]
	done
	exec 5>&-
	exit_status "$resequencer" 60
	[ "$status" = 0 ]
	# The stages did reorder them: some key came out of order.
	[ "$(count_frames merged.msg)" = 1000 ]
	run -1 awk -F '\t' '$2 != ++next_of[$1] { exit 1 }' <(fields merged.msg Correlation-Id Sequence-Number)
	# Back in order: every key's 50 in turn, as the stages made them.
	perl -e 'for my $r (1 .. 50) {
			print qq(k$_\t$r\t<done key="k$_" n="$r"/>\\n\n) for 1 .. 20;
		}' | sort -s -t "$(printf '\t')" -k 1,1 >expect
	by_group out.msg >got
	expect_same expect got
	[ "$(count_frames out.msg)" = 1000 ]
	[[ $(cat rsq.err) =~ ^'msg-resequence: stats: in 1000, out 1000, gaps 0, skipped 0, late 0, duplicates 0, invalid 0, expired 0, waiting 0, most '[1-9][0-9]*$ ]]
}

@test "flow: 100,000 messages shuffled by windows of 1,000 through a pipe with -C 200: no hang, each key in order, every skipped number late" {
	keyed 100 1000 | "$SHUFFLE" 7 1000 >shuffled.msg
	run -0 --separate-stderr timeout -k 5 300 bash -c \
		'cat shuffled.msg | msg-resequence -C 200 --late late.msg --stats >out.msg'
	# Each key's numbers count up; a gap is marked exactly where
	# numbers were skipped, and only there.
	fields out.msg Correlation-Id Sequence-Number Resequence-Gap >out.tsv
	run -0 awk -F '\t' '
		{
			n = $2
			want = n == last[$1] + 1 ? "-" : n == last[$1] + 2 ? n - 1 : last[$1] + 1 "-" n - 1
			if (n <= last[$1] || $3 != want) {
				print "bad: " $0 " after " last[$1]
				exit 1
			}
			if ($3 != "-")
				skipped += n - last[$1] - 1
			gaps += $3 != "-"
			last[$1] = n
		}
		END { print gaps, skipped }' out.tsv
	read -r gaps skipped <<<"$output"
	[ "$gaps" -gt 0 ]
	# Every number came once: those skipped came late.
	local out late
	out=$(count_frames out.msg)
	late=$(count_frames late.msg)
	[ "$late" = "$skipped" ]
	[ $((out + late)) = 100000 ]
	[ "$(grep -c '^Error: msg-resequence: late: sequence number [0-9]* was skipped as a gap$' late.msg)" = "$late" ]
	[[ $stderr =~ ^"msg-resequence: stats: in 100000, out $out, gaps $gaps, skipped $skipped, late $late, duplicates 0, invalid 0, expired 0, waiting 0, most "([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" -le 200 ]
}
