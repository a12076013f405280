#!/usr/bin/env bats
# The EXAMPLES of the manual pages work when pasted into a shell: each
# page's examples run in order in one scratch directory, as a reader
# following the page would paste them, each within a time limit; then the
# files and output they make are held to what the text around them says.
# man-examples.awk reads the examples out of the pages.

load test_helper
bats_require_minimum_version 1.5.0

EXTRACT="$BATS_TEST_DIRNAME/man-examples.awk"
MAN="$MSG_TOP/man"

# The pages with an EXAMPLES section, each with a test below.
PAGES="msg-aggregate.1 msg-dedupe.1 msg-exec.1 msg-resequence.1 msg-route.1
msg-split.1 msg-tap.1 msg-tools.7 msg-translate.1 msg-trickle.1 msg-unwrap.1
msg-wrap.1"

# pasted FILE: run the shell code in FILE as a reader pastes it, in the
# current directory.
#
# It runs under the shell its first line names ("#!/bin/bash"), else in
# sh, not bash: the pages are for any Unix shell, and sh (a POSIX shell,
# not bash, on many systems) is what catches an example that works in
# bash only; POSIX code pasted into bash runs the same.  No -e, no
# pipefail unless the code sets them: a reader's shell goes on after a
# failed command, and the tests below look for its traces instead (an
# error message, a file not made).  Standard input is a directory, so
# that code that reads the terminal by mistake (where a reader's paste
# would hang) fails on reading it.  POSIXLY_CORRECT holds the examples to
# their SYNOPSIS: options before operands.  The tools' own environment
# variables are unset, as in a new shell.  It runs in a session of its
# own (tests/contain.sh): a process it leaves running, such as a tool
# under a timeout(1) that outlived its shell, is killed and makes it fail.
pasted() {
	local shell=sh first=
	read -r first <"$1" || true
	case $first in
	'#!'*) shell=${first#'#!'} ;;
	esac
	(
		unset MSG_INVALID MSG_DEAD_LETTER MSG_HISTORY \
			MSG_STORE_MIN_FREE MSG_STORE_NOSYNC
		export POSIXLY_CORRECT=1
		# shellcheck disable=SC2086 # "#!/usr/bin/env bash" is two words
		exec sh "$MSG_TOP/tests/contain.sh" 30 $shell "$1" <.
	)
}

# examples PAGE N: run the N examples of manual page PAGE, in order, in
# the directory work.  Example I is exI.sh, its output outI and errI.
examples() {
	local page=$MAN/$1 want=$2 n i rc
	n=$(awk -v count=1 -f "$EXTRACT" "$page")
	if [ "$n" != "$want" ]; then
		echo "$1: $n examples, where this test knows $want"
		return 1
	fi
	mkdir work
	for ((i = 1; i <= n; i++)); do
		awk -v block="$i" -f "$EXTRACT" "$page" >"ex$i.sh"
		rc=0
		(cd work && pasted "../ex$i.sh" >"../out$i" 2>"../err$i") || rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "$1: example $i exited $rc"
			show "$i"
			return 1
		fi
	done
}

# show I: example I with what it printed.
show() {
	echo "--- example $1:"
	cat "ex$1.sh"
	echo "--- its standard output:"
	cat "out$1"
	echo "--- its standard error:"
	cat "err$1"
}

# quiet I ...: the examples printed nothing on standard error but the
# one warning line a tool writes for each message it diverts to
# --invalid (msg-tools(7)), which examples of --invalid show on purpose.
quiet() {
	local i
	for i; do
		if grep -v -q -E "^msg-[a-z]+: warning: message .*: diverted to '[^']*'\$" "err$i"; then
			show "$i"
			return 1
		fi
	done
}

# same FILE: FILE holds what standard input holds.
same() {
	diff -u - "$1"
}

# names FILE: the File-Name of each message in FILE, one a line.
names() {
	msg-unwrap -H "$1" | sed -n 's/^File-Name: //p'
}

# count PATTERN FILE: how many lines of FILE match the extended PATTERN.
count() {
	grep -c -E -e "$1" "$2" || true
}

@test "man: every page with examples is tested here" {
	local f page found=
	for f in "$MAN"/*.[1-9]; do
		page=${f##*/}
		if [ "$(awk -v count=1 -f "$EXTRACT" "$f")" -gt 0 ]; then
			found="$found $page"
		fi
	done
	# shellcheck disable=SC2086 # both lists are split into their names
	[ "$(printf '%s\n' $found | sort)" = "$(printf '%s\n' $PAGES | sort)" ]
}

@test "man: the examples are read without an unknown escape or macro" {
	local f
	for f in "$MAN"/*.[1-9]; do
		awk -f "$EXTRACT" "$f" >/dev/null 2>err
		same err </dev/null
	done
}

@test "man: man-examples.awk turns escapes into what a reader sees" {
	cat >page.1 <<'EOF'
.Dd January 1, 2026
.Dt PAGE 1
.Os
.Sh NAME
.Nm page
.Nd a page
.Sh DESCRIPTION
.Bd -literal
not an example
.Ed
.Sh EXAMPLES
First:
.Bd -literal -offset indent
printf 'a\en' | tr \-d \(aqa\(aq \e
    | wc \-c  \" a comment
\&.hidden; echo \(dq\[rs]\(ga\(ti\(ha\*q\&\(sl\(ba\[u0041]\N'66'\fBbold\fR\f(CWx\fP
.\" not shown
echo one \c
two	tab
echo three \
four

.Ed
.Pp
Second:
.Bd -offset indent -literal
echo \(hy\-
.Ed
.Bd -filled
not literal
.Ed
.Sh SEE ALSO
.Bd -literal
not an example
.Ed
EOF
	[ "$(awk -v count=1 -f "$EXTRACT" page.1)" = 2 ]
	awk -v block=1 -f "$EXTRACT" page.1 >one
	same one <<'EOF'
printf 'a\n' | tr -d 'a' \
    | wc -c
.hidden; echo "\`~^"/|ABboldx
echo one two    tab
echo three four

EOF
	awk -v block=2 -f "$EXTRACT" page.1 >two
	printf 'echo \342\200\220-\n' | same two
	awk -f "$EXTRACT" page.1 >all
	{
		echo '# page.1 example 1, line 13'
		cat one
		echo
		echo '# page.1 example 2, line 26'
		cat two
	} | same all
	run -1 awk -v block=3 -f "$EXTRACT" page.1
	[ -z "$output" ]
	# Unknown escapes and macros are reported, not passed over.
	printf '.Sh EXAMPLES\n.Bd -literal\necho \\(xx \\z\n.Ar file\n.Ed\n' >bad.1
	run -2 --separate-stderr awk -f "$EXTRACT" bad.1
	[ "${#stderr_lines[@]}" = 3 ]
}

@test "man: the examples read as mandoc renders them" {
	command -v mandoc >/dev/null || skip "no mandoc(1)"
	local page bs
	bs=$(printf '\b')
	for page in $PAGES; do
		# Lines without their indent, empty ones left out: those of the
		# examples come in the rendered section, in the same order.
		# Bold and underlining (overstrikes) are taken out byte by byte.
		LC_ALL=C mandoc -Tutf8 "$MAN/$page" |
			LC_ALL=C sed "s/.$bs//g" |
			sed -n '/^EXAMPLES$/,/^[A-Z]/p' | sed 's/^ *//; /^$/d' >rendered
		awk -f "$EXTRACT" "$MAN/$page" |
			grep -v -x -E '# [^ ]+ example [0-9]+, line [0-9]+' |
			sed 's/^ *//; /^$/d' >extracted
		awk 'NR == FNR { want[++n] = $0; next }
		     k < n && $0 == want[k + 1] { k++ }
		     END {
			if (k < n) {
				print "not rendered: " want[k + 1]
				exit 1
			}
		     }' extracted rendered
	done
}

@test "man: quotes in the rendered pages pair up, none inside another" {
	command -v mandoc >/dev/null || skip "no mandoc(1)"
	local f
	for f in "$MAN"/*.[1-9]; do
		# A quoting macro given another as its argument renders as
		# 'a, 'b'' or "name="x/>"": single quotes open twice before
		# they close, double ones come in pairs.
		LC_ALL=C.UTF-8 mandoc -Tutf8 "$f" | col -b >rendered
		LC_ALL=C awk -v page="${f##*/}" '
			{
				# The UTF-8 quotes as one byte each: < and >.
				line = $0
				gsub(/[<>]/, "", line)
				gsub(/\342\200\230/, "<", line)
				gsub(/\342\200\231/, ">", line)
				n = split(line, c, "")
				for (i = 1; i <= n; i++)
					if ((c[i] == "<" && ++depth > 1) ||
					    (c[i] == ">" && --depth < 0))
						bad = bad "\n" page ":" NR ": " $0
				if (line ~ /""|>>/)
					bad = bad "\n" page ":" NR ": " $0
			}
			END { if (bad != "") { print "nested quotes:" bad; exit 1 } }
		' rendered
	done
}

@test "man: each tool's --help and its page's SYNOPSIS name the same options, each described" {
	local t help synopsis described
	for t in msg-wrap msg-unwrap msg-split msg-route msg-tap msg-translate \
		msg-resequence msg-dedupe msg-trickle msg-exec; do
		help=$("$t" --help 2>&1 | grep -o -E -e '--[a-z][a-z-]*' |
			grep -v -x -E -e '--(help|version)' | sort -u)
		synopsis=$(sed -n '/^\.Sh SYNOPSIS/,/^\.Sh /p' "$MAN/$t.1" |
			grep -o -E '(Fl|\|) -[a-z][a-z-]*' | sed 's/.* -/--/' | sort -u)
		described=$(grep -E '^\.It Fl' "$MAN/$t.1" |
			grep -o -E 'Fl -[a-z][a-z-]*' | sed 's/Fl -/--/' | sort -u)
		if [ "$help" != "$synopsis" ]; then
			echo "$t: --help and SYNOPSIS differ:"
			diff <(echo "$help") <(echo "$synopsis") || true
			return 1
		fi
		if [ -n "$(comm -23 <(echo "$synopsis") <(echo "$described"))" ]; then
			echo "$t: not described in the options list:"
			comm -23 <(echo "$synopsis") <(echo "$described")
			return 1
		fi
	done
}

@test "man: every script a page writes names its shell in its first line" {
	local f scripts=0
	for f in "$MAN"/*.[1-9]; do
		awk -f "$EXTRACT" "$f"
	done >all.sh
	# A script is a file *.sh written by a here-document.
	awk '
		want && !/^#!\// { print "no #! line in the script of: " want; bad = 1 }
		{ want = "" }
		/^cat >+ *[^ ]+\.sh +<</ { want = $0; n++ }
		END { print n > "count"; exit bad }
	' all.sh
	scripts=$(cat count)
	[ "$scripts" -ge 1 ]
}

@test "man: msg-wrap(1) examples run as pasted" {
	examples msg-wrap.1 9
	quiet 1 2 3 4 5 6 7 8 9
	# The headers of the two messages.
	[ "$(count '^Message-Id: ' out1)" = 2 ]
	grep -qx 'File-Name: order1.xml' out1
	grep -qx 'File-Name: order2.json' out1
	grep -qx 'Content-Type: application/json' out1
	# The files in copy have the same names and contents.
	cmp work/order1.xml work/copy/order1.xml
	cmp work/order2.json work/copy/order2.json
	# The file left inbox once its message was in flow, which msg-unwrap
	# --once then emptied.
	grep -qx 'File-Name: order1.xml' out3
	[ -z "$(ls -A work/inbox/new)" ]
	[ -z "$(ls -A work/inbox/tmp)" ]
	[ -z "$(ls -A work/flow/new)" ]
	# A Message-Id for each of three lines.
	[ "$(grep -c -E '^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$' out4)" = 3 ]
	[ "$(sort -u out4 | wc -l)" = 3 ]
	# A file per element, named after its Order-Id.
	printf '{"id":7,"qty":1}' | same work/copy/order-7.json
	printf '{"id":8,"qty":5}' | same work/copy/order-8.json
	# The type and the headers set, the archive whole.
	msg-unwrap -H work/archive.msg >headers
	grep -qx 'Content-Type: application/gzip' headers
	grep -qx 'File-Name: orders.tar.gz' headers
	grep -qx 'Reply-To: replies.msg' headers
	same <(msg-unwrap work/archive.msg | gzip -dc | tar tf -) <<'EOF'
order1.xml
order2.json
EOF
	# The good envelope kept, the bad one set aside with an Error header.
	printf ok | same <(msg-unwrap work/good.msg)
	grep -qx 'File-Name: in.jsonl' out7
	grep -q '^Error: .*bdy' out7
	# The partner's CSV file picked up, with its File- headers, and gone
	# from the inbox; the upload under way left there.
	[ "$(count '^Message-Id: ' out8)" = 1 ]
	grep -qx 'File-Name: orders-7.csv' out8
	grep -qx 'File-Size: 11' out8
	grep -qx 'Content-Type: text/csv' out8
	[ "$(tail -n 1 out8)" = orders-8.csv.part ]
	# The file sent again unchanged: archived, not passed on.
	same out9 <<'EOF'
1
orders-9.csv
orders-9.csv.1
EOF
	[ "$(wc -l <out8)" = 10 ]
}

@test "man: msg-unwrap(1) examples run as pasted" {
	examples msg-unwrap.1 8
	quiet 1 2 3 4 5 6 7 8
	# Each file under its File-Name.
	cmp work/order1.xml work/out/order1.xml
	cmp work/order2.xml work/out/order2.xml
	# The headers of the stream, and the same read from descriptor 3.
	[ "$(count '^Message-Id: ' out2)" = 2 ]
	grep -qx 'File-Name: order2.xml' out2
	cmp out2 out8
	# The bodies one per line.
	printf 'alice\nbob\n' | same out3
	# The messages counted by type.
	grep -q -x -E ' *2 application/xml' out4
	[ "$(wc -l <out4)" = 1 ]
	# The header added, the Message-Id and the Timestamp as they were.
	msg-unwrap -H work/orders.msg >before
	msg-unwrap -H work/urgent.msg >after
	[ "$(count '^Priority: high$' after)" = 2 ]
	grep -v '^Priority: ' after | same before
	# A file named by its header; the message without it set aside.
	cmp work/order1.xml work/out/order-42.xml
	grep -qx 'File-Name: order2.xml' out6
	grep -q "^Error: .*Order-Id" out6
	[ "$(count '^Message-Id: ' out6)" = 1 ]
	# Two orders in the outbox, each with its marker, mode 0640; the
	# spool emptied.
	[ "$(count '^orders-[0-9]{8}-[0-9a-f-]{36}\.xml$' out7)" = 2 ]
	[ "$(count '^orders-[0-9]{8}-[0-9a-f-]{36}\.xml\.done$' out7)" = 2 ]
	[ "$(wc -l <out7)" = 4 ]
	cat work/outbox/acme/*.xml | same <(cat work/order1.xml work/order2.xml)
	[ "$(stat -c %a work/outbox/acme/* | sort -u)" = 640 ]
	[ -z "$(ls -A work/outgoing/new)" ]
}

@test "man: msg-split(1) examples run as pasted" {
	examples msg-split.1 10
	quiet 1 2 3 4 5 6 7 8 10
	# Only the third child has Sequence-Size: 3.
	same <(grep -E '^Sequence-(Number|Size):' out1) <<'EOF'
Sequence-Number: 1
Sequence-Number: 2
Sequence-Number: 3
Sequence-Size: 3
EOF
	# The rush orders with their ids and the date; both know the size.
	same <(grep -E '^(Order-|Sequence-Size:)' out2) <<'EOF'
Order-Id: 1
Order-Date: 2026-12-02
Sequence-Size: 2
Order-Id: 3
Order-Date: 2026-12-02
Sequence-Size: 2
EOF
	# Each child keeps the exact text of its element.
	same out3 <<'EOF'
["1","{\"id\": 1, \"type\": \"rush\", \"items\": [{\"sku\": \"a-1\", \"qty\": 2}]}"]
["2","{\"id\": 2, \"type\": \"bulk\", \"items\": [{\"sku\": \"b-7\", \"qty\": 40}]}"]
["3","{\"id\": 3, \"type\": \"rush\", \"items\": [{\"sku\": \"c-3\", \"qty\": 1}]}"]
EOF
	# The rush orders as compact JSON.
	same out4 <<'EOF'
{"id":1,"type":"rush","items":[{"sku":"a-1","qty":2}]}
{"id":3,"type":"rush","items":[{"sku":"c-3","qty":1}]}
EOF
	# One child per line, then one per paragraph.
	same out5 <<'EOF'
["1","alice"]
["2","bob"]
["3","carol"]
alice
admin
--
bob
user
--
carol
guest
EOF
	# BATCH 1 - for the two northern orders, BATCH 2 2 for the southern
	# one, BATCH the same in all three and none of the groups.
	same <(grep -E '^Region:' out6) <<'EOF'
Region: north
Region: north
Region: south
EOF
	same <(sed -n 's/^Sequence-Stack: [^ ]* //p' out6) <<'EOF'
1 -
1 -
2 2
EOF
	[ "$(sed -n 's/^Sequence-Stack: \([^ ]*\) .*/\1/p' out6 | sort -u | wc -l)" = 1 ]
	local batch
	batch=$(sed -n 's/^Sequence-Stack: \([^ ]*\) .*/\1/p' out6 | head -n 1)
	[ "$(grep '^Correlation-Id:' out6 | grep -c -F -e "$batch")" = 0 ]
	# Two orders to a child, two JSON orders to a child, ten children.
	same out7 <<'EOF'
<orders><order id="1" type="rush"><item sku="a-1" qty="2"/></order><order id="2" type="bulk"><item sku="b-7" qty="40"/></order></orders>
<orders><order id="3" type="rush"><item sku="c-3" qty="1"/></order></orders>
[{"id": 1, "type": "rush", "items": [{"sku": "a-1", "qty": 2}]},{"id": 2, "type": "bulk", "items": [{"sku": "b-7", "qty": 40}]}]
[{"id": 3, "type": "rush", "items": [{"sku": "c-3", "qty": 1}]}]
10
EOF
	# One file per order, named by its id.
	same <(ls work/outbox) <<'EOF'
order-1.xml
order-2.xml
order-3.xml
EOF
	grep -q '<order id="2"' work/outbox/order-2.xml
	# The broken file whole, with an Error header; the good one split.
	[ "$(count '^Message-Id: ' out9)" = 1 ]
	grep -qx 'File-Name: broken.xml' out9
	grep -q '^Error: ' out9
	grep -qx "Content-Length: $(wc -c <work/broken.xml)" out9
	[ "$(msg-unwrap -H work/split.msg | grep -c '^Message-Id: ')" = 3 ]
	# The warning for the diverted file, then the stats, nothing else.
	grep -q -x -E "msg-split: warning: message [^ ]*: File-Name broken.xml: body is not XML: .*: diverted to 'rejected.msg'" err9
	grep -q -E '^msg-split: stats: in 2, out 3, invalid 1,' err9
	[ "$(wc -l <err9)" = 2 ]
	# Nothing to split, and the sequence still ends.
	grep -qx 'Sequence-Size: 0' out10
	grep -qx 'Sequence-End: true' out10
}

@test "man: msg-route(1) examples run as pasted" {
	examples msg-route.1 10
	quiet 1 2 4 6 7 8 9 10
	[ "$(names work/orders.msg | wc -l)" = 4 ]
	# Order 1 is rush and large, and goes to rush.msg only.
	echo 'File-Name: 3.xml' | same out2
	echo 1.xml | same <(names work/rush.msg)
	printf '2.xml\n4.xml\n' | same <(names work/rest.msg)
	# Each order to every channel whose rule it meets, with the counts.
	echo 1.xml | same <(names work/rush2.msg)
	printf '1.xml\n3.xml\n' | same <(names work/big2.msg)
	printf '2.xml\n4.xml\n' | same <(names work/rest2.msg)
	grep -qx "msg-route: stats: channel 'big2.msg': 2" err3
	[ "$(grep -v -c '^msg-route: stats: ' err3)" = 0 ]
	# The fan-out through FIFOs.
	same out4 <<'EOF'
bulk:
2.xml
3.xml
4.xml

rush:
1.xml
EOF
	# The first order by the first rules, the second by the new ones.
	printf 'File-Name: 3.xml\nFile-Name: 2.xml\n' | same out5
	grep -qx "msg-route: 'orders.rules': 3 rules loaded" err5
	[ "$(wc -l <err5)" = 1 ]
	[ ! -s work/rest3.msg ]
	# The filter, on XML and on JSON.
	same out6 <<'EOF'
File-Name: 1.xml
File-Name: 3.xml
{"id": 5, "type": "rush"}
EOF
	# All the events of a customer in one partition, in order.
	cat work/part0.out work/part1.out work/part2.out >parts
	[ "$(wc -l <parts)" = 6 ]
	local i
	[ -z "$(for i in 0 1 2; do
		jq -r .customer "work/part$i.out" | sort -u
	done | sort | uniq -d)" ]
	jq -r '"\(.customer) \(.event)"' parts |
		awk '$2 != ++n[$1] { bad = 1 } END { exit bad }'
	# Two recipients allowed; the third message set aside.
	printf a | same <(msg-unwrap work/billing.msg)
	printf 'a|b' | same <(msg-unwrap -s '|' work/audit.msg)
	echo "Error: msg-route: recipient '/etc/passwd' in To is not allowed" |
		same out8
	# The store tapped as the flow was routed, unwrapped into a directory.
	printf '1.xml\n2.xml\n3.xml\n4.xml\n' | same out9
	echo 1.xml | same <(names work/rush4.msg)
	# The expired message in the dead-letter channel.
	echo 'Error: msg-route: message expired' | same out10
}

@test "man: msg-tap(1) examples run as pasted" {
	# The FIFO example stops its readers with timeout(1), which sends a
	# SIGCONT after its TERM. In the sanitizer pass, one that lands while
	# LeakSanitizer stops the exiting reader's threads (by ptrace) discards
	# that stop, and the check waits until timeout's KILL (seen under
	# load: the reader in sched_yield, the sanitizer's tracer in wait4).
	# No leak check here, then; tests/11, 45 and 46 check these tools'.
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	examples msg-tap.1 7
	quiet 4 5 6 7
	# A line on standard error for each message; the flow goes on.
	[ ! -s out1 ]
	[ "$(wc -l <err1)" = 2 ]
	grep -q ' File-Name=1\.xml$' err1
	grep -q ' File-Name=2\.xml$' err1
	echo 1.xml | same <(names work/rush.msg)
	echo 2.xml | same <(names work/bulk.msg)
	# Only the rush order watched, with its headers; the flow kept whole.
	[ ! -s out2 ]
	same <(jq -r '.headers."File-Name"' err2) <<<1.xml
	printf '1.xml\n2.xml\n' | same <(names work/all.msg)
	# The readers of the tap FIFO came and went, each seeing some orders,
	# in order; the flow lost none.  Which orders a reader saw depends on
	# timing, so only that is checked.
	same <(tail -n 6 out3) <<'EOF'
order 1
order 2
order 3
order 4
order 5
order 6
EOF
	head -n "$(($(wc -l <out3) - 6))" out3 | grep -v '^$' >seen || true
	[ "$(grep -c -v -x -E 'order [1-6]' seen)" = 0 ]
	sort -u -k 2n seen | same seen
	# At most the tap's count of copies and drops on standard error
	# (shown when there is more, to say what it was).
	[ "$(wc -l <err3)" -le 1 ] || { cat err3 >&2; false; }
	[ "$(grep -c -v -E "^msg-tap: tap 'watch\.fifo': [0-9]+ copied, [0-9]+ dropped, reopened [0-9]+ times$" err3)" = 0 ]
	# A copy of every message in the store.
	printf '1.xml\n2.xml\n' | same out4
	echo 1.xml | same <(names work/rush2.msg)
	# The spool: a file per message, taken out oldest first.
	[ "$(head -n 2 out5 | grep -c -E '^[^/]+\.msg$')" = 2 ]
	same <(tail -n +3 out5) <<'EOF'
spool/new:

store3:
1.xml
2.xml
EOF
	cmp work/1.xml work/store3/1.xml
	# The spool drained into another, a summary line per message.
	printf '2 passed.log\n2\n' | same out6
	[ -z "$(ls -A work/inbox/new)" ]
	# JSON envelopes, wrapped again and unwrapped.
	printf '1.xml\n2.xml\n1.xml\n2.xml\n' | same out7
	cmp work/2.xml work/store2/2.xml
}

@test "man: msg-translate(1) examples run as pasted" {
	examples msg-translate.1 6
	quiet 1 2 3 4 5
	# An invoice for each order.
	same out1 <<'EOF'
<invoice order="1" lines="1"/>
<invoice order="2" lines="2"/>
EOF
	# What the text says it prints.
	echo '{"order":"A-7","total":6.5}' | same out2
	# The mapping, and the JSON back from it.
	grep -qx '<map><string key="id">A-7</string><boolean key="paid">true</boolean></map>' out3
	same <(sed -n '/^{/,$p' out3 | jq -c .) <<<'{"id":"A-7","paid":true}'
	# The same headers with a stylesheet and with --set.
	same <(grep -E '^(Order-Id|Format):' out4) <<'EOF'
Order-Id: 1
Format: order-v1
Order-Id: 2
Format: order-v1
Order-Id: 1
Format: order-v1
Order-Id: 2
Format: order-v1
EOF
	# Each partner's order normalized.
	same <(grep '^<order' out5) <<'EOF'
<order id="17" source="partner-a"/>
<order id="18" source="partner-b"/>
EOF
	# The batch job under bash: an invoice for each order of the good
	# files, the file cut short set aside and reported, nothing lost.
	local stamp='[0-9]{8}T[0-9]{6}Z-[0-9]+-'
	local uuid='[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}'
	sed -n '1,/^<invoice/p' out6 | sed '$d' | sed -E "s/^$stamp//" | same <(cat <<-'EOF'
	failed:
	cut.xml

	processed:
	more.xml
	orders.xml
	EOF
	)
	same <(grep '^<invoice' out6 | sort) <<-'EOF'
	<invoice order="1" lines="1"/>
	<invoice order="2" lines="2"/>
	<invoice order="3" lines="1"/>
	EOF
	[ -z "$(ls -A work/incoming)" ]
	[ "$(wc -l <err6)" = 2 ]
	grep -q '^msg-split: ' err6
	[ "$(sed -n 2p err6)" = 'translate-incoming: incoming/cut.xml: bad data, moved to failed/' ]
	[ "$(cd work/outgoing && printf '%s\n' * | grep -c -x -E "invoice-$uuid\.xml")" = 3 ]
	# Every name its own: the same files sent again replace nothing, and
	# the run exits 1 for the broken one.
	cp work/orders.xml work/incoming/orders.xml
	printf '<orders><order id="4"><item/>' >work/incoming/cut.xml
	local rc=0
	(cd work && pasted translate-incoming.sh >../out7 2>../err7) || rc=$?
	[ "$rc" = 1 ]
	[ ! -s out7 ]
	[ "$(sed -n 2p err7)" = 'translate-incoming: incoming/cut.xml: bad data, moved to failed/' ]
	[ "$(cd work/outgoing && printf '%s\n' * | grep -c -x -E "invoice-$uuid\.xml")" = 5 ]
	same <(cat work/outgoing/* | sort | uniq -c) <<-'EOF'
	      2 <invoice order="1" lines="1"/>
	      2 <invoice order="2" lines="2"/>
	      1 <invoice order="3" lines="1"/>
	EOF
	same <(cd work && printf '%s\n' failed/* processed/* | sed -E "s|/$stamp|/|") <<-'EOF'
	failed/cut.xml
	failed/cut.xml
	processed/more.xml
	processed/orders.xml
	processed/orders.xml
	EOF
	[ -z "$(ls -A work/incoming)" ]
}

@test "man: msg-dedupe(1) examples run as pasted" {
	examples msg-dedupe.1 4
	quiet 2 3
	# The copy dropped, and counted.
	printf 'one\ntwo\n' | same out1
	same err1 <<'EOF'
msg-dedupe: stats: in 4, out 2, duplicates 2, invalid 0, expired 0, keys 2, forgotten 0
EOF
	# Each order once, in the order they came; the copies set apart,
	# each with its reason.
	same out2 <<'EOF'
<order id="7"/>
<order id="8"/>
<order id="9"/>
Error: msg-dedupe: duplicate: key seen before
Error: msg-dedupe: duplicate: key seen before
EOF
	msg-unwrap -s '\n' work/copies.msg >copies
	printf '<order id="7"/>\n<order id="8"/>' | same copies
	same out3 <<'EOF'
{"order": {"id": 1}}
{"order": {"id": 2}}
same line
other line
EOF
	# Two cron runs: the first lets the two orders through once, the
	# second knows the copies by the keys kept in the state.
	same out4 <<'EOF'
{"id": 1, "type": "order"}
{"id": 2, "type": "order"}
EOF
	same err4 <<'EOF'
msg-dedupe: stats: in 4, out 2, duplicates 2, invalid 0, expired 0, keys 2, forgotten 0
msg-dedupe: stats: in 2, out 0, duplicates 2, invalid 0, expired 0, keys 2, forgotten 0
EOF
	[ -d work/outbox/new ]
	[ -z "$(find work/inbox work/routed work/outbox -type f)" ]
	[ -d work/dedupe.state ]
}

@test "man: msg-exec(1) examples run as pasted" {
	examples msg-exec.1 7
	quiet 1 2 4
	local uuid='[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}'
	# A reply for each line, correlated with it, with what wc printed.
	msg-unwrap -H work/lines.msg | sed -n 's/^Message-Id: /Correlation-Id: /p' >ids
	same <(grep '^Correlation-Id: ' out1) <ids
	[ "$(count "^Message-Id: $uuid\$" out1)" = 2 ]
	[ "$(count '^Exit-Status: 0$' out1)" = 2 ]
	[ "$(count '^Status: success$' out1)" = 2 ]
	[ "$(count '^Content-Type: text/plain$' out1)" = 2 ]
	[ "$(count '^Error:' out1)" = 0 ]
	same <(grep '^Content-Length: ' out1) <<'EOF'
Content-Length: 2
Content-Length: 3
EOF
	printf '3\n13\n' | same <(sed -n '/^[0-9]/p' out1)
	# The header's value as it was, through argv and the environment.
	same out2 <<'EOF'
[O'Brien; $(date)]
[O'Brien; $(date)]
EOF
	# Orders 1 and 3 accepted under their own Message-Id as the key,
	# order 2 refused with curl's reason, which its stderr line names.
	local ids
	mapfile -t ids < <(msg-unwrap -H work/replies.msg | sed -n 's/^Correlation-Id: //p')
	[ "${#ids[@]}" = 3 ]
	same out3 <<EOF
{"key": "${ids[0]}", "order": {"order": 1, "qty": 2}}
{"key": "${ids[2]}", "order": {"order": 3, "qty": 5}}
Status: success
Status: failure
Error: msg-exec: curl: (22) The requested URL returned error: 422
Status: success
EOF
	echo "msg-exec: ${ids[1]}: curl: (22) The requested URL returned error: 422" | same err3
	# The good postcodes passed as they were, the bad one set aside.
	same out4 <<'EOF'
{"id": 1, "zip": "75001"}
{"id": 3, "zip": "10115"}
{"id": 2, "zip": "7501"}
Error: msg-exec: exit status 1
EOF
	# Each order booked once; the copies answered, not booked again.
	same out5 <<'EOF'
order 1: booked
order 2: booked
order 1: booked before
order 2: booked before
<order id="1"/>
<order id="2"/>
EOF
	same err5 <<'EOF'
msg-exec: stats: in 4, runs 4, succeeded 4, failed 0, retried 0, timed-out 0, invalid 0, expired 0, replies 4
EOF
	[ -z "$(find work/requests work/replies -type f)" ]
	# The loop: every version but the refused one booked once, those of
	# each order in order (a stable sort by order keeps it), A 1 after
	# its retry; B held at its failure, A done.
	same <(grep '^<po' out6 | sort -s -t '"' -k 2,2) <<'EOF'
<po id="A" version="0"/>
<po id="A" version="1"/>
<po id="A" version="2"/>
<po id="B" version="0"/>
EOF
	same <(grep -v '^<po' out6) <<'EOF'
KEY	STATE	VERSION	FAILURE
A	idle	-	-
B	failed	1	failure: msg-exec: B 1: no such customer
EOF
	[ "$(wc -l <err6)" = 2 ]
	grep -q -x -E "msg-exec: $uuid: A 1: the warehouse is busy" err6
	grep -q -x -E "msg-exec: $uuid: B 1: no such customer" err6
	# One msg-translate made the three invoices, each the reply to its
	# order.
	sed -E "s/^Correlation-Id: $uuid\$/Correlation-Id: ID/" out7 | same <(cat <<'EOF'
<invoice order="1" total="5"/>
<invoice order="2" total="2.5"/>
<invoice order="3" total="10"/>
Correlation-Id: ID
Status: success
Correlation-Id: ID
Status: success
Correlation-Id: ID
Status: success
EOF
	)
	same err7 <<'EOF'
msg-exec: stats: in 3, runs 1, succeeded 3, failed 0, retried 0, timed-out 0, invalid 0, expired 0, replies 3
EOF
}

@test "man: msg-aggregate(1) examples run as pasted" {
	examples msg-aggregate.1 4
	quiet 1 2 3 4
	# The items back in their orders, ids and all, the orders in their
	# file (white space between elements is no item: it is left out).
	printf '%s' '<orders><order id="1"><item sku="a-1"/><item sku="b-7"/></order><order id="2"><item sku="c-3"/></order></orders>' | same out1
	# The cheapest quote alone.
	printf '%s' '{"supplier": "south", "price": 17}' | same out2
	# An hour has not passed: both groups wait in the state directory,
	# their members taken from the inbox, nothing out yet.
	[ -z "$(find work/inbox/new work/inbox/cur work/outbox/new -type f)" ]
	[ ! -s out3 ]
	PATH=$MSG_BIN:$PATH run -0 msg-aggregate -c "json('/account')" -T 1h \
		--state work/hourly.state --at-end flush --stats </dev/null
	[ "$(grep -c '^Aggregate-Reason: end$' <<<"$output")" = 2 ]
	grep -q '^msg-aggregate: stats: in 0, members 0, .* released 2, .* end 2,' <<<"$output"
	# The second run of the batch gave the same bytes: cmp said nothing.
	[ -s work/day.out ]
	[ ! -s out4 ]
}

@test "man: msg-resequence(1) examples run as pasted" {
	examples msg-resequence.1 4
	quiet 2 3
	# The book's example: 5 comes last, after the gap of 4, and the
	# statistics count the gap.
	same out1 <<'EOF'
Sequence-Number: 1
Sequence-Number: 2
Sequence-Number: 3
Sequence-Number: 5
Resequence-Gap: 4
EOF
	same err1 <<'EOF'
msg-resequence: stats: in 4, out 4, gaps 1, skipped 1, late 0, duplicates 0, invalid 0, expired 0, waiting 0, most 2
EOF
	# The shuffled items in the order of the document.
	same out2 <<'EOF'
<item sku="a-1"/>
<item sku="b-7"/>
<item sku="c-3"/>
<item sku="d-4"/>
<item sku="e-5"/>
EOF
	# The events back from three parallel translations in file order.
	same out3 <<'EOF'
<event customer="alice" n="1"/>
<event customer="bob" n="1"/>
<event customer="carol" n="1"/>
<event customer="alice" n="2"/>
<event customer="bob" n="2"/>
<event customer="alice" n="3"/>
EOF
	# Two runs from cron: the first writes 1 and keeps 3 and 5, the
	# second writes the rest; both spools are drained.
	printf 'line %s\n' 1 2 3 4 5 | same out4
	same err4 <<'EOF'
msg-resequence: stats: in 3, out 1, gaps 0, skipped 0, late 0, duplicates 0, invalid 0, expired 0, waiting 2, most 2
msg-resequence: stats: in 2, out 4, gaps 0, skipped 0, late 0, duplicates 0, invalid 0, expired 0, waiting 0, most 2
EOF
	[ -d work/inbox/new ]
	[ -d work/outbox/new ]
	[ -z "$(find work/inbox work/outbox -type f \( -path '*/new/*' -o -path '*/cur/*' \))" ]
}

@test "man: msg-trickle(1) examples run as pasted" {
	examples msg-trickle.1 5
	quiet 2
	# stats IN RESPONSES SENT SUCCEEDED FAILED RETRIED BLOCKED WAITING
	# IN-FLIGHT: the line of --stats, the other counters 0.
	stats() {
		printf 'msg-trickle: stats: in %s, responses %s, sent %s, succeeded %s, failed %s, retried %s, resent 0, superseded 0, stale 0, duplicates 0, unmatched 0, invalid 0, commands 0, blocked %s, waiting %s, in-flight %s\n' "$@"
	}
	# The loop: every order reached the target once, those of each
	# entity in the order of their versions (a stable sort by entity
	# keeps it); how A and B interleave is up to the timing.
	[ "$(wc -l <out1)" = 5 ]
	same <(sort -s -t '"' -k 2,2 out1) <<'EOF'
<po id="A" version="0"/>
<po id="A" version="1"/>
<po id="A" version="2"/>
<po id="B" version="0"/>
<po id="B" version="1"/>
EOF
	stats 5 5 5 5 0 0 0 0 0 | same err1
	# Both orders went through: nothing in flight, nothing waiting.
	same out2 <<'EOF'
KEY	STATE	VERSION	SINCE	ATTEMPTS	WAITING	LAST-OK	FAILURE
A	idle	-	-	0	-	2	-
B	idle	-	-	0	-	1	-
EOF
	# Three cron runs: A 0 and B 0, then A 1 and B 1, then nothing.
	same out3 <<'EOF'
<po id="A" version="0"/>
<po id="B" version="0"/>
<po id="A" version="1"/>
<po id="B" version="1"/>
EOF
	{
		stats 3 0 2 0 0 0 0 1 2
		stats 1 2 2 2 0 0 0 0 2
		stats 0 2 0 2 0 0 0 0 0
	} | same err3
	# The failure holds version 1 back, and status says why.
	same out4 <<'EOF'
KEY	STATE	VERSION	WAITING	FAILURE
C	failed	0	1	error: customer 42 is blocked
EOF
	{
		stats 2 0 1 0 0 0 0 1 1
		stats 0 1 0 0 1 0 1 1 0
	} | same err4
	# The retry applied at once, version 0 sent again with its attempt
	# by the next run, then version 1 after its success.
	same out5 <<'EOF'
File-Name: A-0.xml
File-Name: B-0.xml
File-Name: A-1.xml
File-Name: B-1.xml
File-Name: C-0.xml
File-Name: C-0.xml
Trickle-Attempt: 2
File-Name: C-1.xml
EOF
	{
		echo "msg-trickle: retry 'C': applied"
		stats 0 0 1 0 0 1 0 1 1
		stats 0 1 1 1 0 0 0 0 1
		stats 0 1 0 1 0 0 0 0 0
	} | same err5
	# Every spool drained; the drop's raw files taken.
	[ -z "$(find work/drop work/requests work/outbox work/answers -type f)" ]
	[ -d work/feed.state/commands ]
}

@test "man: msg-tools(7) examples run as pasted" {
	examples msg-tools.7 6
	quiet 1 2 3 4 5 6
	# The files unwrapped into out.
	cmp work/in/1.xml work/out/1.xml
	cmp work/in/2.xml work/out/2.xml
	# Through a FIFO.
	[ "$(count '^Message-Id: ' out2)" = 1 ]
	grep -qx 'File-Name: 1.xml' out2
	# The reader got the messages of both writers: out now holds each
	# file twice.
	[ "$(ls work/out | wc -l)" = 4 ]
	local f ones=0 twos=0
	for f in work/out/*; do
		if cmp -s "$f" work/in/1.xml; then
			ones=$((ones + 1))
		elif cmp -s "$f" work/in/2.xml; then
			twos=$((twos + 1))
		fi
	done
	[ "$ones" = 2 ]
	[ "$twos" = 2 ]
	# The journal, with the step in Message-History.
	[ "$(count '^Message-History: intake$' out4)" = 2 ]
	[ "$(msg-unwrap -H work/journal.msg | grep -c '^Message-Id: ')" = 2 ]
	# The good body through, the bad line set aside.
	[ "$(head -n 1 out5)" = ok ]
	grep -q '^Error: .*not JSON' out5
	grep -qx 'Content-Length: 8' out5
	# One round of the file transfer flow: the rush order in the
	# outbox, the bulk one in its spool, the upload under way left.
	[ "$(cat out6)" = "acme/in:
orders-2.xml.part

acme/out:
rush-7.xml" ]
	[ "$(cat work/acme/out/rush-7.xml)" = '<order id="7" type="rush"/>' ]
	[ "$(msg-unwrap --once dir:work/acme/bulk)" = '<order id="8" type="bulk"/>' ]
	[ -z "$(find work/acme/orders work/acme/rush work/acme/in/.msg -type f)" ]
}

@test "README: the flow to paste runs under the shell its first line names" {
	awk '/^A flow to paste$/ { on = 1; next } /^The tools$/ { on = 0 }
	     on && sub(/^    /, "")' "$MSG_TOP/README" >flow.sh
	[ "$(head -n 1 flow.sh)" = '#!/bin/sh' ]
	# From the top of a tree holding examples/; the tools are on PATH.
	mkdir tree tmp
	cp -R "$MSG_TOP/examples" tree/
	# Standard output and error in one file, as cron or "> log 2>&1"
	# has them: the Wire Tap's lines must not overwrite the flow's.
	(cd tree && TMPDIR=$BATS_TEST_TMPDIR/tmp pasted ../flow.sh >../log 2>&1)
	[ "$(grep -c -E ' application/json [0-9]+ corr=[^ ]+ seq=[123]/' log)" = 3 ]
	[ "$(grep -c -x 'Region: north' log)" = 3 ]
	grep -q -x 'orders-north.xml' log
	grep -q -x 'orders-south.xml' log
	[ "$(tail -n 1 log)" = '{"id": 3003, "type": "standard", "customer": "C-09", "total": 120.00}' ]
	[ "$(grep -c -F '"type": "rush"' log)" = 2 ]
	# Everything it wrote is in the directory of its own, drained.
	local out
	out=$(printf '%s\n' tmp/*)
	[ -d "$out" ]
	[ -z "$(ls -A "$out/spool/new")" ]
	# The inbox keeps only the upload under way.
	[ "$(cd "$out/inbox" && printf '%s\n' *)" = more.json.part ]
	same <(cd "$out/outbox" && printf '%s\n' *) <<-'EOF'
	orders-north.xml
	orders-south.xml
	EOF
}
