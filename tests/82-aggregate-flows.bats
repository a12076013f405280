#!/usr/bin/env bats
# msg-aggregate at the end of real flows: a Composed Message Processor
# (split orders into items, route them by type through two different
# translators running in parallel over FIFOs, aggregate them back), a
# nested split undone level by level, and a scatter-gather best quote.

load test_helper
bats_require_minimum_version 1.5.0
load fixtures/aggregate/aggregate

# orders N: order-01.xml .. order-N.xml in orders/, order i with
# i % 5 + 1 items of both types, and in expect.tsv the line each should
# come back as: its file name, its item count, and the order as the
# translators make it, its id kept (msg-split's Sequence-Root).
orders() {
	local i j n type body items
	mkdir orders
	for ((i = 1; i <= $1; i++)); do
		n=$((i % 5 + 1))
		items='' body=''
		for ((j = 1; j <= n; j++)); do
			if (((i + j) % 3 == 0)); then
				type=book
				body+="<book sku=\"s-$i-$j\" qty=\"$j\"/>"
			else
				type=food
				body+="<food sku=\"s-$i-$j\" boxes=\"$(((j + 1) / 2))\" chilled=\"yes\"/>"
			fi
			items+="<item type=\"$type\" sku=\"s-$i-$j\" qty=\"$j\"/>"
		done
		printf '<order id="%d">%s</order>' "$i" "$items" >"orders/order-$(printf %02d "$i").xml"
		printf 'order-%02d.xml\t%d\tcomplete\t<order id="%d">%s</order>\n' "$i" "$n" "$i" "$body"
	done >expect.tsv
}

@test "flow: split, route by type through two translators in parallel, aggregate: one order out per order in" {
	local aggregator books foods
	orders 12
	mkfifo book.fifo food.fifo merged.fifo
	spawn timeout -k 5 60 msg-aggregate -W order merged.fifo >out.msg 2>agg.err
	aggregator=$spawned
	# The test holds merged.fifo open too, so the aggregator's input
	# ends only when both translators are done, whichever opens it first.
	exec 5>merged.fifo
	spawn timeout -k 5 60 msg-translate -x "$FIXTURES/aggregate/book.xsl" \
		--output merged.fifo book.fifo 2>book.err
	books=$spawned
	spawn timeout -k 5 60 msg-translate -x "$FIXTURES/aggregate/food.xsl" \
		--output merged.fifo food.fifo 2>food.err
	foods=$spawned
	run -0 timeout -k 5 60 bash -c 'msg-wrap orders/*.xml | tee wrapped.msg |
		msg-split -x /order/item |
		msg-route -w "/item/@type = '\''book'\''" -t book.fifo -o food.fifo'
	exit_status "$books" 60
	[ "$status" = 0 ]
	exit_status "$foods" 60
	[ "$status" = 0 ]
	exec 5>&-
	exit_status "$aggregator" 60
	[ "$status" = 0 ]
	[ ! -s agg.err ]
	[ ! -s book.err ]
	[ ! -s food.err ]
	# Every order once, whole, its items in their first order whatever
	# way they came; each result correlated with the order it came from.
	fields out.msg File-Name Aggregate-Size Aggregate-Reason | sort >got.tsv
	expect_same expect.tsv got.tsv
	fields wrapped.msg File-Name Message-Id | cut -f 1,2 | sort >ids
	fields out.msg File-Name Correlation-Id | cut -f 1,2 | sort >got
	expect_same ids got
	grep -c '^Content-Type: application/xml$' out.msg | grep -qx 12
	run -1 grep -q '^Sequence-' out.msg
}

@test "flow: nested split, split, split, then aggregate three times gives the documents and their headers back" {
	local i j k parts
	for i in 1 2; do
		{
			printf '<orders>'
			for ((j = 1; j <= i + 1; j++)); do
				printf '<order>'
				for ((k = 1; k <= j; k++)); do
					printf '<item>'
					for ((parts = 1; parts <= (i + j + k) % 3 + 1; parts++)); do
						printf '<part n="%d-%d-%d-%d">p</part>' "$i" "$j" "$k" "$parts"
					done
					printf '</item>'
				done
				printf '</order>'
			done
			printf '</orders>'
		} >"batch$i.xml"
	done
	run -0 timeout -k 5 60 bash -c 'set -o pipefail
		msg-wrap batch1.xml batch2.xml | tee wrapped.msg |
		msg-split -x /orders/order | tee orders.msg |
		msg-split -x /order/item | tee items.msg |
		msg-split -x /item/part |
		msg-aggregate -W item | tee items-back.msg |
		msg-aggregate -W order | tee orders-back.msg |
		msg-aggregate -W orders >back.msg'
	# The documents, equal to the inputs.
	[ "$(count_frames back.msg)" = 2 ]
	msg-unwrap back.msg | cmp - <(cat batch1.xml batch2.xml)
	# Each level has its headers back: those of the split that made it,
	# less the new ids and the aggregate's own headers.
	stable items.msg >expect
	stable items-back.msg | grep -v '^Aggregate-' >got
	expect_same expect got
	stable orders.msg >expect
	stable orders-back.msg | grep -v '^Aggregate-' >got
	expect_same expect got
	# The whole batches: correlated with the messages they were.
	stable wrapped.msg >expect
	stable back.msg | grep -v '^Aggregate-\|^Correlation-Id: ' >got
	expect_same expect got
	expect_same <(sed -n 's/^Message-Id: //p' wrapped.msg) \
		<(sed -n 's/^Correlation-Id: //p' back.msg)
	[ "$(cat items-back.msg orders-back.msg back.msg | grep -c '^Aggregate-Reason: ')" = \
		"$(cat items-back.msg orders-back.msg back.msg | grep -c '^Aggregate-Reason: complete$')" ]
}

@test "flow: nested split and aggregate give back containers with attributes, escapes and namespaces" {
	local mode
	printf '%s' '<orders batch="b1" note="a &amp; &lt;b&gt; &quot;c&quot;"><order id="7" rush="yes"><item sku="A"><part n="1">p</part><part n="2">q</part></item><item><part>r</part></item></order><order><item sku="C"><part n="3">s</part></item></order></orders>' >batch.xml
	printf '%s' '<n:box xmlns:n="urn:n" size="big"><n:set n:k="v"><n:item>1</n:item></n:set></n:box>' >ns.xml
	for mode in '' --no-stream; do
		run -0 timeout -k 5 60 bash -c 'set -o pipefail
			msg-wrap batch.xml | msg-split '"$mode"' -x /orders/order |
			msg-split '"$mode"' -x /order/item | msg-split '"$mode"' -x /item/part |
			msg-aggregate -W item | msg-aggregate -W order |
			msg-aggregate -W orders >back.msg'
		# Byte for byte: attribute order and escapes as they came.
		msg-unwrap back.msg | cmp - batch.xml
		run -1 grep -q '^Sequence-Root: ' back.msg
		# The result is the document element's equal; namespace
		# declarations are repeated where msg-split made each part
		# stand alone.
		run -0 timeout -k 5 60 bash -c 'set -o pipefail
			msg-wrap ns.xml | msg-split '"$mode"' --ns n=urn:n -x /n:box/n:set |
			msg-split '"$mode"' --ns n=urn:n -x /n:set/n:item |
			msg-aggregate -W n:set | msg-aggregate -W n:box | msg-unwrap'
		[ "$output" = '<n:box xmlns:n="urn:n" size="big"><n:set xmlns:n="urn:n" n:k="v"><n:item xmlns:n="urn:n">1</n:item></n:set></n:box>' ]
	done
	# Another -W than the element's: the tag is not used, but its level
	# is taken off all the same, and the next level finds its own.
	run -0 timeout -k 5 60 bash -c 'set -o pipefail
		msg-wrap batch.xml | msg-split -x /orders/order | msg-split -x /order/item |
		msg-aggregate -W lines | msg-aggregate -W orders | msg-unwrap'
	[ "$output" = '<orders batch="b1" note="a &amp; &lt;b&gt; &quot;c&quot;"><lines><item sku="A"><part n="1">p</part><part n="2">q</part></item><item><part>r</part></item></lines><lines><item sku="C"><part n="3">s</part></item></lines></orders>' ]
}

@test "flow: scatter-gather, the cheapest of three quotes" {
	printf '{"supplier": "north", "price": 41}\n{"supplier": "south", "price": 17}\n{"supplier": "east", "price": 17.0}\n' >quotes.json
	# One quote a line: the delimiter is a newline itself.
	run -0 --separate-stderr timeout -k 5 60 bash -c \
		'msg-split -r -d "$1" quotes.json | msg-translate -H "Correlation-Id: q1" |
		msg-aggregate -n 3 -T 5s -b "json('\''/price'\'')" --min | msg-unwrap' _ $'\n'
	[ "$output" = '{"supplier": "south", "price": 17}' ]
	[ -z "$stderr" ]
}
