#!/usr/bin/env bats
# msg-split in bounded memory: a 400 MB XML document and a 400 MB JSON
# array are split as they stream in. The data is generated on the fly and
# piped in, so nothing of that size touches the disk. Sanitizer builds
# map shadow memory and run several times slower, so the checks are off
# there.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/split/split

SIZE_MB=400

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	[[ $MSG_BIN != *san* ]] || skip "RSS is not meaningful under sanitizers"
	[ -x /usr/bin/time ] || skip "needs /usr/bin/time"
}

# generate xml|json MB: about MB megabytes of orders on stdout; the number
# of orders goes to the file "generated". Each order has its own id.
generate() {
	perl -e '
		my ($kind, $mb) = @ARGV;
		my ($n, $size, $limit) = (0, 0, $mb * 1024 * 1024);
		my $xml = $kind eq "xml";
		my $out = $xml ? qq{<?xml version="1.0"?>\n<orders region="north">\n} : qq({"region": "north", "orders": [\n);
		while ($size < $limit) {
			$n++;
			$out .= $xml
				? qq{<order id="$n" type="rush"><customer>Customer $n</customer><item sku="A-$n" qty="2">Widget &amp; co</item></order>\n}
				: ($n > 1 ? ",\n" : "") . qq( {"id": $n, "type": "rush", "customer": "Customer $n", "items": [{"sku": "A-$n", "qty": 2}]});
			if (length($out) >= 1 << 20) { print $out; $size += length($out); $out = ""; }
		}
		print $out, $xml ? "</orders>\n" : "\n]}\n";
		open(my $f, ">", "generated") or die; print $f "$n\n";
	' "$1" "$2"
}

# rss_below KIB: the peak /usr/bin/time left in "rss" is under KIB.
rss_below() {
	local kib
	kib=$(tail -n 1 rss)
	echo "max RSS ${kib} KiB, limit $1 KiB"
	[ "$kib" -lt "$1" ]
}

@test "memory: a 400 MB XML document splits in under 32 MB" {
	set -o pipefail
	generate xml "$SIZE_MB" |
		/usr/bin/time -f %M -o rss msg-split -r -x /orders/order -H Region=../@region |
		msg-unwrap -H | grep -c -x 'Region: north' >children
	[ "$(cat generated)" -gt 3000000 ]
	[ "$(cat children)" = "$(cat generated)" ]
	rss_below 32768
}

@test "memory: a 400 MB JSON array splits in under 64 MB" {
	set -o pipefail
	generate json "$SIZE_MB" |
		/usr/bin/time -f %M -o rss msg-split -r -j /orders |
		msg-unwrap -H | grep -c '^Content-Length: ' >children
	[ "$(cat generated)" -gt 3000000 ]
	[ "$(cat children)" = "$(cat generated)" ]
	rss_below 65536
}
