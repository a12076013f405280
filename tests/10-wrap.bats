#!/usr/bin/env bats
# msg-wrap: files, stdin, lines and JSON envelopes to frames, and the round
# trips back through msg-unwrap, byte for byte.

load test_helper
bats_require_minimum_version 1.5.0
load crash/build

UUID7='^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
RFC3339_MS='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'
RSS_LIMIT_KIB=16384

# header NAME [FILE]: the value of NAME in the first header block.
header() {
	awk -v want="$1" '
		$0 == "" { exit }
		{ i = index($0, ": "); if (tolower(substr($0, 1, i - 1)) == tolower(want)) { print substr($0, i + 2); exit } }
	' "${2:-/dev/stdin}"
}

# Every header block of a stream, one header per line, blocks separated by
# an empty line, with ids and times masked.
masked_headers() {
	msg-unwrap -H | sed -E 's/^(Message-Id|Timestamp): .*/\1: X/'
}

# rss_below FILE: the KiB figure /usr/bin/time left in FILE is under the
# limit. Sanitizer builds map shadow memory, so the check is off there.
rss_below() {
	local kib
	kib=$(tail -n 1 "$1")
	echo "max RSS ${kib} KiB ($1)"
	[[ $MSG_BIN == *san* ]] && return 0
	[ "$kib" -lt "$RSS_LIMIT_KIB" ]
}

# big: a path to 100 MB of random bytes, made once per file.
big() {
	local f=$BATS_FILE_TMPDIR/big
	[ -s "$f" ] || head -c 100000000 /dev/urandom >"$f"
	echo "$f"
}

# ---- round trips ----

@test "wrap: an empty body round-trips" {
	: >empty
	msg-wrap empty >out.msg
	[ "$(header Content-Length out.msg)" = 0 ]
	msg-unwrap out.msg >back
	cmp back empty
	# The frame is its header block, the empty line and the closing LF.
	[ "$(tail -c 2 out.msg | od -An -c | tr -d ' ')" = '\n\n' ]
}

@test "wrap: an empty stdin is one message with an empty body" {
	msg-wrap </dev/null >out.msg
	[ "$(grep -c '^Content-Length: ' out.msg)" = 1 ]
	[ "$(header Content-Length out.msg)" = 0 ]
	[ "$(header Content-Type out.msg)" = text/plain ]
	[ -z "$(header File-Name out.msg)" ]
}

@test "wrap: stdin with no operands is one message" {
	printf 'line one\nline two\n\nlast' | msg-wrap >out.msg
	[ "$(msg-unwrap -H out.msg | grep -c '^Content-Length: ')" = 1 ]
	[ "$(header Content-Length out.msg)" = 23 ]
	msg-unwrap out.msg | cmp - <(printf 'line one\nline two\n\nlast')
}

@test "wrap: a body with NUL bytes and invalid UTF-8 round-trips" {
	printf 'a\0b\0\0\xff\xfe\xc3\x28\n\0\x80end' >bin
	msg-wrap bin >out.msg
	[ "$(header Content-Length out.msg)" = "$(stat -c %s bin)" ]
	[ "$(header Content-Type out.msg)" = application/octet-stream ]
	msg-unwrap out.msg >back
	cmp back bin
	msg-wrap <bin | msg-unwrap >back2
	cmp back2 bin
}

@test "wrap: a body without a final newline round-trips" {
	printf 'no newline at the end' >text
	msg-wrap text >out.msg
	[ "$(header Content-Length out.msg)" = 21 ]
	msg-unwrap out.msg >back
	cmp back text
}

@test "wrap: random bodies of many sizes round-trip" {
	local n
	mkdir in out
	# Around the writer's 64 KiB flush and msg-wrap's 1 MiB in-memory limit.
	for n in 1 65535 65536 65537 1048575 1048576 1048577 3000000; do
		head -c "$n" /dev/urandom >"in/$n"
	done
	msg-wrap in/* | msg-unwrap -d out
	diff -r in out
	# A pipe longer than 1 MiB is spooled; at exactly 1 MiB it is not.
	for n in 1048576 1048577; do
		msg-wrap <"in/$n" | msg-unwrap >back
		cmp back "in/$n"
	done
}

@test "wrap: a 100 MB file round-trips in under 16 MB of memory" {
	local big
	big=$(big)
	/usr/bin/time -f %M -o wrap.rss msg-wrap "$big" |
		/usr/bin/time -f %M -o unwrap.rss msg-unwrap >back
	cmp back "$big"
	rm back
	rss_below wrap.rss
	rss_below unwrap.rss
}

@test "wrap: a 100 MB stdin round-trips in under 16 MB and leaves no spool file" {
	local big
	big=$(big)
	mkdir spool
	# shellcheck disable=SC2002 # stdin must be a pipe, not the file
	cat "$big" | TMPDIR=$PWD/spool /usr/bin/time -f %M -o wrap.rss msg-wrap >out.msg
	[ "$(header Content-Length out.msg)" = 100000000 ]
	[ -z "$(header File-Name out.msg)" ]
	/usr/bin/time -f %M -o unwrap.rss msg-unwrap out.msg >back
	cmp back "$big"
	rm back out.msg
	rss_below wrap.rss
	rss_below unwrap.rss
	[ -z "$(ls -A spool)" ]
}

# wrap_spooled TMP: msg-wrap of 'in' from a pipe into out.msg, with TMPDIR
# set to TMP and O_TMPFILE refused there (EINVAL), as a file system
# without it refuses it, so the body is spooled to a named file.
wrap_spooled() {
	# shellcheck disable=SC2002 # the body must come from a pipe
	cat in | faulty FAULT_FUNCS=open FAULT_PATH="$1" FAULT_ERRNO=EINVAL \
		-- env TMPDIR="$1" msg-wrap >out.msg
}

@test "wrap: without O_TMPFILE, a large stdin is spooled under a TMPDIR near PATH_MAX and no file is left" {
	local tmp=$PWD/t
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
	# 4,085 bytes: a directory any call can open, but with a file name
	# after it the path is longer than PATH_MAX (4,096).
	while [ ${#tmp} -lt 3880 ]; do
		tmp+=/$(printf '%0200d' 0)
	done
	tmp+=/$(printf '%0*d' $((4085 - ${#tmp} - 1)) 0)
	[ ${#tmp} -eq 4085 ]
	mkdir -p "$tmp"
	head -c 2000000 /dev/zero | tr '\0' x >in
	run -0 --separate-stderr wrap_spooled "$tmp"
	[ "$stderr" = "" ]
	[ "$(header Content-Length out.msg)" = 2000000 ]
	msg-unwrap out.msg | cmp - in
	[ "$(cat faults.log)" = "open $tmp Invalid argument" ]
	[ -z "$(ls -A "$tmp")" ]
}

@test "wrap: 500 files round-trip, to stdout and to a directory" {
	mkdir in out
	# Sizes from 0 to 3000 bytes; one perl process is far cheaper than 500 heads.
	perl -e 'for my $i (0 .. 499) {
		open(my $f, ">", sprintf("in/f%03d.bin", $i)) or die;
		print $f pack("C*", map { int rand 256 } 1 .. $i * 37 % 3001);
		close($f) or die;
	}'
	[ "$(ls in | wc -l)" = 500 ]
	[ ! -s in/f000.bin ]
	msg-wrap in/* >all.msg
	[ "$(msg-unwrap -H all.msg | grep -c '^File-Name: ')" = 500 ]
	cat in/* >expect
	msg-unwrap all.msg >back
	cmp back expect
	# A directory of a hundred: each file costs an fsync.
	mkdir some
	cp in/f0[0-9]?.bin some/
	msg-wrap some/* | msg-unwrap -d out
	diff -r some out
}

@test "wrap: --lines makes one message per line, empty ones too" {
	printf 'first\n\nthird\n\n\nlast without LF' >lines
	msg-wrap --lines lines >out.msg
	run -0 msg-unwrap -s '|' out.msg
	[ "$output" = "first||third|||last without LF" ]
	run -0 sh -c 'msg-unwrap -H out.msg | grep "^Content-Length: "'
	[ "$output" = "Content-Length: 5
Content-Length: 0
Content-Length: 5
Content-Length: 0
Content-Length: 0
Content-Length: 15" ]
	[ "$(msg-unwrap -H out.msg | grep -c '^File-Name: lines$')" = 6 ]
}

@test "wrap: -l | unwrap -s '\\n' gives back an LF-terminated file less its last LF" {
	printf 'alpha\n\nbeta\n  spaced  \n\n' >lf
	msg-wrap -l lf | msg-unwrap -s '\n' >back
	# Five lines, five messages; the separator goes only between them.
	{ cat back; printf '\n'; } | cmp - lf
	printf 'alpha\n\nbeta' >nolf
	msg-wrap -l nolf | msg-unwrap -s '\n' >back
	cmp back nolf
}

@test "wrap: -l keeps NUL and invalid UTF-8 inside lines" {
	printf 'a\0b\n\xff\xfe\nplain\n' >lines
	msg-wrap -l lines | msg-unwrap -s '\n' >back
	{ cat back; printf '\n'; } | cmp - lines
	[ "$(msg-wrap -l lines | msg-unwrap -H | grep '^Content-Type: ' | tr '\n' ' ')" = \
		"Content-Type: application/octet-stream Content-Type: application/octet-stream Content-Type: text/plain " ]
}

@test "wrap: -l on an empty input makes no message" {
	run -0 --separate-stderr msg-wrap -l </dev/null
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "wrap: -l on a line longer than the read buffer" {
	{ head -c 3000000 /dev/zero | tr '\0' x; printf '\nshort\n'; } >long
	msg-wrap -l long | msg-unwrap -s '\n' >back
	{ cat back; printf '\n'; } | cmp - long
}

# ---- envelopes ----

@test "wrap: envelopes with unicode headers and body" {
	printf '%s\n' '{"headers":{"Subject":"Grüße ☃ \u00e9","X-Emoji":"🎉"},"body":"ünïcødé \ud83c\udf89\n"}' >env.jsonl
	msg-wrap -e env.jsonl >out.msg
	[ "$(header Subject out.msg)" = "Grüße ☃ é" ]
	[ "$(header X-Emoji out.msg)" = "🎉" ]
	[ "$(header Content-Type out.msg)" = text/plain ]
	msg-unwrap out.msg >back
	printf 'ünïcødé 🎉\n' | cmp - back
	# And back to the same JSON values.
	msg-unwrap -e out.msg >round.jsonl
	[ "$(jq -r '.headers.Subject' round.jsonl)" = "Grüße ☃ é" ]
	[ "$(jq -j '.body' round.jsonl)" = "$(printf 'ünïcødé 🎉')" ]
	[ "$(jq -r 'has("body_base64")' round.jsonl)" = false ]
}

@test "wrap: envelopes with binary bodies in base64, both ways" {
	printf '%s\n' '{"headers":{"File-Name":"b.bin"},"body_base64":"AP8QgMMo"}' '{"body_base64":""}' >env.jsonl
	msg-wrap -e env.jsonl >out.msg
	msg-unwrap -s '|' out.msg >back
	printf '\0\xff\x10\x80\xc3\x28|' | cmp - back
	[ "$(header Content-Type out.msg)" = application/octet-stream ]
	[ "$(header File-Name out.msg)" = b.bin ]
	msg-unwrap -e out.msg >round.jsonl
	[ "$(jq -r '.body_base64 // "none"' round.jsonl | tr '\n' ' ')" = "AP8QgMMo none " ]
	[ "$(jq -r '.body // "none"' round.jsonl | tr '\n' ' ')" = "none  " ]
	head -n 1 round.jsonl | jq -j .body_base64 | base64 -d | cmp - <(printf '\0\xff\x10\x80\xc3\x28')
}

@test "wrap: envelope bodies with JSON escapes and NUL" {
	printf '%s\n' '{"body":"tab\there\u0000nul \"q\" \\\\ end"}' >env.jsonl
	msg-wrap -e env.jsonl | msg-unwrap >back
	printf 'tab\there\0nul "q" \\\\ end' | cmp - back
}

@test "wrap: envelope header values: numbers, booleans, arrays, null" {
	printf '%s\n' '{"headers":{"Priority":5,"Ratio":1.5,"Urgent":true,"Old":false,"Gone":null,"X-Tag":["a","b"],"Content-Length":"999"},"body":"abc"}' >env.jsonl
	msg-wrap -e env.jsonl | masked_headers >out.txt
	[ "$(cat out.txt)" = "Priority: 5
Ratio: 1.5
Urgent: true
Old: false
X-Tag: a
X-Tag: b
Message-Id: X
Timestamp: X
Content-Type: text/plain
Content-Length: 3" ]
}

@test "wrap: envelope numbers beyond double or int64 keep their text" {
	printf '%s\n' '{"headers":{"Big":1e400,"Tiny":-1E+999,"Wide":1180591620717411303424,"Low":-9223372036854775809,"Max":9223372036854775807,"L":[2e999,"x",1.5]},"body":"abc"}' >env.jsonl
	run -0 --separate-stderr msg-wrap -e env.jsonl
	[ -z "$stderr" ]
	[ "$(printf '%s\n' "$output" | msg-unwrap -H | grep -v -E '^(Message-Id|Timestamp|Content-Type): ')" = "Big: 1e400
Tiny: -1E+999
Wide: 1180591620717411303424
Low: -9223372036854775809
Max: 9223372036854775807
L: 2e999
L: x
L: 1.5
Content-Length: 3" ]
	# Anywhere else a number is still not what the envelope wants.
	printf '%s\n' '{"body":1e400}' >bad.jsonl
	run -65 --separate-stderr msg-wrap -e bad.jsonl
	[[ $stderr == "msg-wrap: bad.jsonl: line 1: invalid envelope: "* ]]
	[ -z "$output" ]
}

@test "wrap: a file whose size reads as 0 is read to its end" {
	[ -r /proc/version ] || skip "no /proc/version"
	[ "$(stat -c %s /proc/version)" = 0 ] || skip "/proc/version has a size"
	run -0 --separate-stderr msg-wrap --output out.msg /proc/version
	[ -z "$stderr" ]
	msg-unwrap out.msg >body
	cmp body /proc/version
	[ "$(header Content-Length out.msg)" = "$(wc -c </proc/version)" ]
	# A regular file that is empty stays an empty body.
	: >empty
	[ "$(msg-wrap empty | header Content-Length)" = 0 ]
}

@test "wrap: envelope ids and times are kept, others stamped" {
	printf '%s\n' '{"headers":{"Message-Id":"order-1","Timestamp":"2026-01-02T03:04:05.678Z","Content-Type":"text/csv"},"body":"a,b"}' '{"body":"x"}' >env.jsonl
	msg-wrap -e env.jsonl >out.msg
	[ "$(header Message-Id out.msg)" = order-1 ]
	[ "$(header Timestamp out.msg)" = 2026-01-02T03:04:05.678Z ]
	[ "$(header Content-Type out.msg)" = text/csv ]
	msg-unwrap -H out.msg | sed -n 's/^Message-Id: //p' | tail -n 1 | grep -Eq "$UUID7"
}

@test "wrap: msg-unwrap -e | jq works" {
	printf '<order id="7"/>\n' >order.xml
	printf '{"id": 8}' >order.json
	msg-wrap -H 'Order-Id: 7' order.xml order.json | msg-unwrap -e >env.jsonl
	[ "$(wc -l <env.jsonl)" = 2 ]
	[ "$(jq -r '.headers["File-Name"]' env.jsonl | tr '\n' ' ')" = "order.xml order.json " ]
	[ "$(jq -r '.headers["Content-Type"]' env.jsonl | tr '\n' ' ')" = "application/xml application/json " ]
	[ "$(jq -r '.headers["Order-Id"]' env.jsonl | tr '\n' ' ')" = "7 7 " ]
	[ "$(jq -r '.headers | has("Content-Length")' env.jsonl | sort -u)" = false ]
	head -n 1 env.jsonl | jq -j .body | cmp - order.xml
	tail -n 1 env.jsonl | jq -j .body | cmp - order.json
	[ "$(jq -r '.body | fromjson | .id' <(tail -n 1 env.jsonl))" = 8 ]
}

@test "wrap: msg-wrap -e of msg-unwrap -e output gives the same frames" {
	printf '<a/>\n' >a.xml
	printf 'grüße\n' >u.txt
	printf '\0\xff\x01' >b.bin
	: >empty
	{
		msg-wrap -H 'Reply-To: fd:3' a.xml u.txt b.bin empty
		frame 'tagged' 'Message-Id: m-1' 'Timestamp: 2026-01-01T00:00:00.000Z' \
			'Content-Type: text/plain' 'X-Tag: one' 'X-Tag: two' 'X-Empty: '
		printf 'lines\none\n' | msg-wrap -l
	} >orig.msg
	msg-unwrap -e orig.msg >env.jsonl
	[ "$(wc -l <env.jsonl)" = 7 ]
	msg-wrap -e env.jsonl >again.msg
	cmp again.msg orig.msg
}

@test "wrap: blank envelope lines are skipped but counted" {
	printf '%s\n' '{"body":"one"}' '' '   ' '{"body":"two"}' '' '{"body":3}' >env.jsonl
	run -65 --separate-stderr msg-wrap -e env.jsonl
	[ "$stderr" = 'msg-wrap: env.jsonl: line 6: invalid envelope: "body" is not a string' ]
	[ "$(printf '%s\n' "$output" | msg-unwrap -s '|')" = "one|two" ]
}

@test "wrap: invalid envelope lines exit 65 naming the line" {
	printf '%s\n' '{"body":"ok"}' '{"body":"fine"}' '{"headers":[]}' '{"body":"lost"}' >env.jsonl
	run -65 --separate-stderr msg-wrap -e <env.jsonl
	[ "$stderr" = 'msg-wrap: stdin: line 3: invalid envelope: "headers" is not an object' ]
	# The good lines before it were written, nothing after it.
	[ "$(printf '%s\n' "$output" | msg-unwrap -s '|')" = "ok|fine" ]
}

@test "wrap: each kind of invalid envelope is named" {
	local line diag n=0
	: >env.jsonl
	: >expect
	while IFS='	' read -r line diag; do
		n=$((n + 1))
		printf '%s\n' "$line" >>env.jsonl
		printf 'Error: msg-wrap: stdin: line %d: invalid envelope: %s\n' "$n" "$diag" >>expect
	done <<-'EOF'
	not json	not JSON:
	[1]	not a JSON object
	{"body":1}	"body" is not a string
	{"body":"a","body_base64":"YQ=="}	both "body" and "body_base64"
	{"body_base64":"YQ="}	"body_base64" is not valid base64
	{"body_base64":"YR=="}	"body_base64" is not valid base64
	{"headers":[],"body":""}	"headers" is not an object
	{"headers":{"A":{"x":1}}}	header 'A' is not a string
	{"headers":{"A":["x",[1]]}}	header 'A' is not a string
	{"headers":{"Bad Name":"v"}}	invalid header name 'Bad Name'
	{"body":"x","extra":1}	unknown key 'extra'
	{"body":"x","body":"y"}	not JSON:
	EOF
	run -0 --separate-stderr msg-wrap -e --invalid bad.msg <env.jsonl
	[ -z "$output" ]
	# One warning a line, in the form of tool_warn_diverted.
	[ "${#stderr_lines[@]}" = "$n" ]
	msg-unwrap -H bad.msg | sed -n 's/^Message-Id: //p' >ids
	paste -d '\t' ids expect | while IFS='	' read -r id error; do
		printf "msg-wrap: warning: message %s: %s: diverted to 'bad.msg'\n" "$id" "${error#Error: msg-wrap: }"
	done >want
	printf '%s\n' "$stderr" | sed 's/\(: not JSON:\).*\(: diverted to\)/\1\2/' | cmp - want
	# What follows "not JSON:" is the JSON parser's own wording.
	msg-unwrap -H bad.msg | grep '^Error: ' | sed 's/\(: not JSON:\).*/\1/' | cmp - expect
	# Each invalid message's body is its line, without the LF.
	msg-unwrap -s '\n' bad.msg >bodies
	{ cat bodies; echo; } | cmp - env.jsonl
}

@test "wrap: --invalid takes bad envelope lines with an Error header" {
	printf '%s\n' '{"body":"one"}' '{"body":2}' '{"body":"three"}' '[2]' '{"body":"five"}' >env.jsonl
	run -0 --separate-stderr msg-wrap -e --invalid bad.msg env.jsonl
	msg-unwrap -H bad.msg | sed -n 's/^Message-Id: //p' >ids
	[ "$stderr" = "msg-wrap: warning: message $(sed -n 1p ids): File-Name env.jsonl: env.jsonl: line 2: invalid envelope: \"body\" is not a string: diverted to 'bad.msg'
msg-wrap: warning: message $(sed -n 2p ids): File-Name env.jsonl: env.jsonl: line 4: invalid envelope: not a JSON object: diverted to 'bad.msg'" ]
	[ "$(printf '%s\n' "$output" | msg-unwrap -s '|')" = "one|three|five" ]
	[ "$(msg-unwrap -s '|' bad.msg)" = '{"body":2}|[2]' ]
	run -0 sh -c 'msg-unwrap -H bad.msg | grep -E "^(Error|File-Name|Content-Type): "'
	[ "$output" = "File-Name: env.jsonl
Content-Type: application/json
Error: msg-wrap: env.jsonl: line 2: invalid envelope: \"body\" is not a string
File-Name: env.jsonl
Content-Type: application/json
Error: msg-wrap: env.jsonl: line 4: invalid envelope: not a JSON object" ]
	[ "$(msg-unwrap -H bad.msg | sed -n 's/^Message-Id: //p' | grep -Ec "$UUID7")" = 2 ]
}

# ---- headers ----

@test "wrap: a file's frame is exactly its headers, body and LF" {
	mkdir -p deep/er
	printf '<a/>\n' >deep/er/orders.xml
	msg-wrap deep/er/orders.xml >out.msg
	sed -E 's/^(Message-Id|Timestamp): .*/\1: X/' out.msg >masked
	printf 'Message-Id: X\nTimestamp: X\nFile-Name: orders.xml\nContent-Type: application/xml\nContent-Length: 5\n\n<a/>\n\n' |
		cmp - masked
}

@test "wrap: File-Name is the base name; stdin has none" {
	mkdir -p a/b
	printf 'x' >a/b/report.final.txt
	[ "$(msg-wrap a/b/report.final.txt | header File-Name)" = report.final.txt ]
	[ "$(msg-wrap "$PWD/a/b/report.final.txt" | header File-Name)" = report.final.txt ]
	[ "$(msg-wrap <a/b/report.final.txt | grep -c '^File-Name:')" = 0 ]
	[ "$(msg-wrap - <a/b/report.final.txt | grep -c '^File-Name:')" = 0 ]
}

@test "wrap: Content-Type is detected from the body" {
	local body want n=0
	: >expect
	while IFS='	' read -r body want; do
		printf -v n '%02d' $((10#$n + 1))
		# shellcheck disable=SC2059 # the table writes bodies as printf formats
		printf "$body" >"in$n"
		printf 'Content-Type: %s\n' "$want" >>expect
	done <<-'EOF'
	<?xml version="1.0"?>\n<orders><order/></orders>\n	application/xml
	\n  <a>x</a>  \n\n	application/xml
	\xef\xbb\xbf<a/>	application/xml
	{"id": 1, "items": [1, 2]}\n	application/json
	[1, 2, 3]	application/json
	  [\n]\n	application/json
	hello world\n	text/plain
	gr\xc3\xbc\xc3\x9fe \xe2\x98\x83\n	text/plain
	<not closed\n	text/plain
	{"half": 1\n	text/plain
	a\0b	application/octet-stream
	\xff\xfe\xfd	application/octet-stream
	EOF
	msg-wrap in* | msg-unwrap -H | grep '^Content-Type: ' | cmp - expect
	# From a pipe the same bodies get the same types.
	[ "$(msg-wrap <in01 | header Content-Type)" = application/xml ]
	[ "$(msg-wrap <in04 | header Content-Type)" = application/json ]
	[ "$(msg-wrap <in08 | header Content-Type)" = text/plain ]
	[ "$(msg-wrap <in12 | header Content-Type)" = application/octet-stream ]
}

@test "wrap: XML in UTF-16 or UTF-32 is application/xml, by its byte-order mark or declaration" {
	local enc
	for enc in UTF-16 UTF-16LE UTF-16BE UTF-32 UTF-32LE UTF-32BE; do
		printf '<?xml version="1.0" encoding="%s"?>\n<a>caf\xc3\xa9</a>\n' "$enc" |
			iconv -f UTF-8 -t "$enc" >in
		[ "$(msg-wrap in | header Content-Type)" = application/xml ] || {
			echo "$enc: $(msg-wrap in | header Content-Type)"
			return 1
		}
	done
	# Text in UTF-16 is not UTF-8 text.
	printf 'hello\n' | iconv -f UTF-8 -t UTF-16 >in
	[ "$(msg-wrap in | header Content-Type)" = application/octet-stream ]
}

@test "wrap: Content-Type of an empty body is text/plain" {
	: >empty
	[ "$(msg-wrap empty | header Content-Type)" = text/plain ]
}

@test "wrap: Content-Type is detected for bodies over 1 MiB" {
	{ printf '<?xml version="1.0"?>\n<r>\n'; yes '<i>x</i>' | head -n 300000; printf '</r>\n'; } >big.xml
	{ printf '['; yes '{"a": 1},' | head -n 300000; printf '{"a": 2}]\n'; } >big.json
	{ yes 'grüße, a line of text' | head -n 100000; } >big.txt
	head -c 2000000 /dev/urandom >big.bin
	{ yes 'text' | head -n 300000; printf '\0'; } >nul-at-end
	[ "$(msg-wrap big.xml | header Content-Type)" = application/xml ]
	[ "$(msg-wrap <big.xml | header Content-Type)" = application/xml ]
	[ "$(msg-wrap big.json | header Content-Type)" = application/json ]
	[ "$(msg-wrap big.txt | header Content-Type)" = text/plain ]
	[ "$(msg-wrap <big.txt | header Content-Type)" = text/plain ]
	[ "$(msg-wrap big.bin | header Content-Type)" = application/octet-stream ]
	[ "$(msg-wrap nul-at-end | header Content-Type)" = application/octet-stream ]
}

@test "wrap: a file's extension decides its Content-Type through mime.types, the body only without one" {
	printf '42' >orders.json
	printf '<a/>' >a.XML
	printf '{"runs": []}' >scan.sarif.json
	printf 'hello' >notes.zzz
	printf '<a/>' >.json
	printf '<a/>' >noext
	printf '{}' >trailing.
	local f want
	while read -r f want; do
		[ "$(msg-wrap "$f" | header Content-Type)" = "$want" ] || {
			echo "$f: $(msg-wrap "$f" | header Content-Type), not $want"
			return 1
		}
	done <<-'EOF'
	orders.json	application/json
	a.XML	application/xml
	scan.sarif.json	application/sarif+json
	notes.zzz	text/plain
	.json	application/xml
	noext	application/xml
	trailing.	application/json
	EOF
	# The name's type is what JSON paths go by.
	run -0 --separate-stderr sh -c "msg-wrap orders.json | msg-route -f \"json('') = 42\" | msg-unwrap"
	[ "$output" = 42 ]
	# -t wins; stdin has no name; -l types each line by its body.
	[ "$(msg-wrap -t text/x-custom orders.json | header Content-Type)" = text/x-custom ]
	[ "$(msg-wrap <orders.json | header Content-Type)" = text/plain ]
	[ "$(msg-wrap -l orders.json | header Content-Type)" = text/plain ]
	# Without a mime.types file, the body decides.
	[ "$(MSG_MIME_TYPES=no-such-file msg-wrap orders.json | header Content-Type)" = text/plain ]
}

@test "wrap: -l detects the type of each line" {
	printf '<a/>\n{"x": 1}\nplain\n\n' >mixed
	run -0 sh -c 'msg-wrap -l mixed | msg-unwrap -H | grep "^Content-Type: "'
	[ "$output" = "Content-Type: application/xml
Content-Type: application/json
Content-Type: text/plain
Content-Type: text/plain" ]
}

@test "wrap: -t overrides the detected type" {
	printf '<a/>' >a.xml
	[ "$(msg-wrap -t text/x-custom a.xml | header Content-Type)" = text/x-custom ]
	[ "$(msg-wrap --type 'application/vnd.x+xml; charset=utf-8' a.xml | header Content-Type)" = \
		'application/vnd.x+xml; charset=utf-8' ]
	printf 'a\nb\n' | msg-wrap -l -t text/csv | msg-unwrap -H >h
	[ "$(grep -c '^Content-Type: text/csv$' h)" = 2 ]
}

# lines_block 'HEADER...' LENGTH: one block as masked_headers shows it,
# the headers after the stamp and before Content-Length given.
lines_block() {
	printf 'Message-Id: X\nTimestamp: X\n%s\nContent-Length: %s\n\n' "$1" "$2"
}

@test "wrap: -l gives every line the headers of its file, type and -H, line after line" {
	local extra='X-Batch: 7
File-Name: renamed.txt'
	printf '<a/>\n{"x": 1}\nplain\n<b/>\nplain2\n' >mixed.txt
	msg-wrap -l -H 'X-Batch: 7' -H 'File-Name: renamed.txt' mixed.txt | masked_headers >h
	{
		lines_block "Content-Type: application/xml
$extra" 4
		lines_block "Content-Type: application/json
$extra" 8
		lines_block "Content-Type: text/plain
$extra" 5
		lines_block "Content-Type: application/xml
$extra" 4
		lines_block "Content-Type: text/plain
$extra" 6
	} >want
	diff -u want h
	# Without -H, each file's own name, on every line of it.
	printf 'b1\nb2\n' >second.txt
	msg-wrap -l mixed.txt second.txt | msg-unwrap -H | grep '^File-Name: ' | uniq -c >names
	[ "$(awk '{ print $1, $3 }' names | tr '\n' ' ')" = "5 mixed.txt 2 second.txt " ]
}

@test "wrap: -l with -H over the id, and with MSG_HISTORY, still gives each line its block" {
	printf 'a\n<b/>\n' | msg-wrap -l -H 'Message-Id: fixed-1' -H 'Timestamp: t' | msg-unwrap -H >h
	printf '%s\n' 'Content-Type: text/plain' 'Message-Id: fixed-1' 'Timestamp: t' \
		'Content-Length: 1' '' 'Content-Type: application/xml' 'Message-Id: fixed-1' \
		'Timestamp: t' 'Content-Length: 4' '' >want
	diff -u want h
	printf 'a\nbb\n' | MSG_HISTORY=wrap1 msg-wrap -l | masked_headers >h
	{
		lines_block "Content-Type: text/plain
Message-History: wrap1" 1
		lines_block "Content-Type: text/plain
Message-History: wrap1" 2
	} >want
	diff -u want h
}

@test "wrap: -l stamps a line with the time it was read, not the time the run began" {
	local first second
	{ echo early; sleep 1.5; echo late; } | msg-wrap -l | msg-unwrap -H |
		sed -n 's/^Timestamp: //p' >stamps
	[ "$(wc -l <stamps)" = 2 ]
	first=$(date -u -d "$(sed -n 1p stamps)" +%s%3N)
	second=$(date -u -d "$(sed -n 2p stamps)" +%s%3N)
	[ $((second - first)) -ge 1400 ]
}

@test "wrap: -t with an empty or multi-line type is a usage error" {
	run -64 --separate-stderr msg-wrap -t '' </dev/null
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "msg-wrap: invalid content type ''" ]
	[[ ${stderr_lines[1]} == "usage: msg-wrap "* ]]
	run -64 --separate-stderr msg-wrap -t $'text/plain\nX: y' </dev/null
	[ -z "$output" ]
}

@test "wrap: -H adds headers, repeatable, values trimmed" {
	printf 'x' | msg-wrap -H 'Order-Id: 42' --header 'X-Note:   two  words   ' -H 'Reply-To:fd:3' |
		masked_headers >h
	[ "$(cat h)" = "Message-Id: X
Timestamp: X
Content-Type: text/plain
Order-Id: 42
X-Note: two  words
Reply-To: fd:3
Content-Length: 1" ]
}

@test "wrap: -H replaces a header msg-wrap would set" {
	printf 'x' >f.txt
	msg-wrap -H 'File-Name: renamed.txt' -H 'Content-Type: text/csv' -H 'Message-Id: fixed-1' f.txt >out.msg
	[ "$(header File-Name out.msg)" = renamed.txt ]
	[ "$(header Content-Type out.msg)" = text/csv ]
	[ "$(header Message-Id out.msg)" = fixed-1 ]
	[ "$(grep -c '^File-Name: ' out.msg)" = 1 ]
	[ "$(grep -c '^Message-Id: ' out.msg)" = 1 ]
}

@test "wrap: -H cannot set Content-Length" {
	printf 'abc' | msg-wrap -H 'Content-Length: 99' >out.msg
	[ "$(grep -c '^Content-Length: ' out.msg)" = 1 ]
	[ "$(header Content-Length out.msg)" = 3 ]
	[ "$(msg-unwrap out.msg)" = abc ]
}

@test "wrap: an invalid -H is a usage error" {
	local h
	for h in 'NoColon' ': empty name' 'Bad Name: v' 'Ünï: v' "$(head -c 257 /dev/zero | tr '\0' n): v"; do
		run -64 --separate-stderr msg-wrap -H "$h" </dev/null
		[ -z "$output" ]
		[ "${stderr_lines[0]}" = "msg-wrap: invalid header '$h' (want 'Name: value')" ]
		[[ ${stderr_lines[1]} == "usage: msg-wrap "* ]]
	done
}

@test "wrap: Message-Id is a UUIDv7, unique across 10,000 lines" {
	seq 10000 | msg-wrap -l >out.msg
	msg-unwrap -H out.msg | sed -n 's/^Message-Id: //p' >ids
	[ "$(wc -l <ids)" = 10000 ]
	[ "$(sort -u ids | wc -l)" = 10000 ]
	run -1 grep -Ev "$UUID7" ids
	[ -z "$output" ]
}

@test "wrap: Message-Ids of one run sort in creation order" {
	seq 5000 | msg-wrap -l | msg-unwrap -H | sed -n 's/^Message-Id: //p' >ids
	LC_ALL=C sort -c -u ids
}

@test "wrap: Timestamp is RFC 3339 UTC with milliseconds, now" {
	local before after ts ms
	before=$(date +%s%3N)
	printf 'x' | msg-wrap >out.msg
	after=$(date +%s%3N)
	ts=$(header Timestamp out.msg)
	[[ $ts =~ $RFC3339_MS ]]
	ms=$(date -u -d "$ts" +%s%3N)
	[ "$ms" -ge $((before - 1000)) ]
	[ "$ms" -le $((after + 1000)) ]
}

@test "wrap: the Message-Id carries the Timestamp's millisecond" {
	local id ts idms tsms
	printf 'x' | msg-wrap >out.msg
	id=$(header Message-Id out.msg)
	ts=$(header Timestamp out.msg)
	[[ $id =~ $UUID7 ]]
	idms=$((16#$(printf '%s' "$id" | tr -d - | cut -c1-12)))
	tsms=$(date -u -d "$ts" +%s%3N)
	[ $((idms - tsms)) -le 1000 ]
	[ $((tsms - idms)) -le 1000 ]
}

@test "wrap: each file operand is one message, '-' is stdin" {
	printf 'one' >1.txt
	printf 'three' >3.txt
	printf 'two' | msg-wrap 1.txt - 3.txt >out.msg
	[ "$(msg-unwrap -s '|' out.msg)" = "one|two|three" ]
	[ "$(msg-unwrap -H out.msg | grep -c '^File-Name: ')" = 2 ]
}

@test "wrap: a missing file exits 66 after the files before it" {
	printf 'one' >1.txt
	printf 'three' >3.txt
	run -66 --separate-stderr msg-wrap 1.txt x 3.txt
	[ "$stderr" = "msg-wrap: cannot open 'x': No such file or directory" ]
	[ "$(printf '%s\n' "$output" | msg-unwrap)" = one ]
}

@test "wrap: --stats counts messages on stderr" {
	printf 'a\nb\nc\n' >l
	run -0 --separate-stderr msg-wrap -l --stats l
	[ "$stderr" = "msg-wrap: stats: in 3, out 3, invalid 0" ]
}

# ---- usage ----

@test "wrap: unknown options exit 64 with usage" {
	run -64 --separate-stderr msg-wrap --bogus </dev/null
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "msg-wrap: unknown option '--bogus'" ]
	[ "${stderr_lines[1]}" = "usage: msg-wrap [-l | -e] [-t type] [-H 'name: value'] ... [--output channel]" ]
	run -64 --separate-stderr msg-wrap -x </dev/null
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "msg-wrap: unknown option '-x'" ]
	[[ ${stderr_lines[1]} == "usage: msg-wrap "* ]]
}

@test "wrap: options that need a value, and -l with -e, are usage errors" {
	run -64 --separate-stderr msg-wrap -t
	[ "${stderr_lines[0]}" = "msg-wrap: option '-t' needs a value" ]
	[[ ${stderr_lines[1]} == "usage: msg-wrap "* ]]
	run -64 --separate-stderr msg-wrap -l -e </dev/null
	[ "${stderr_lines[0]}" = "msg-wrap: -l and -e cannot be combined" ]
	[ -z "$output" ]
}

@test "wrap: a long option without its value is named as typed" {
	run -64 --separate-stderr msg-wrap --header
	[ "${stderr_lines[0]}" = "msg-wrap: option '--header' needs a value" ]
	run -64 --separate-stderr msg-wrap --output
	[ "${stderr_lines[0]}" = "msg-wrap: option '--output' needs a value" ]
}

@test "wrap: --help and --version" {
	run -0 --separate-stderr msg-wrap --help
	[[ ${lines[0]} == "usage: msg-wrap "* ]]
	[ -z "$stderr" ]
	run -0 msg-wrap --version
	[[ $output =~ ^msg-wrap\ \(msgtools\)\ [0-9]+\.[0-9]+ ]]
}
