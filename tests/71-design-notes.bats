#!/usr/bin/env bats
# doc/design.md, the developers' notes, keeps to the tree: its module map
# has one line for every lib/*.c and names nothing that is not in lib/,
# and what the code cites of it is there. Each check is a function of the
# notes and the tree, tried first on a scratch copy made wrong on purpose,
# so that a check that could never fail would be seen to.

load test_helper
bats_require_minimum_version 1.5.0

export LC_ALL=C
NOTES=$MSG_TOP/doc/design.md

# map_modules NOTES: the files the module map names ("buf.c"), one a
# line, sorted. A map line reads "- `lib/NAME` what it owns".
map_modules() {
	awk '/^## / { inmap = ($0 == "## Module map") }
	     inmap && match($0, /^- `lib\/[^`]+`/) {
		print substr($0, 8, RLENGTH - 8)
	     }' "$1" | sort
}

# unmapped NOTES LIB: the lib/*.c files that have no line in the map.
unmapped() {
	(cd "$2" && ls -- *.c) | sort >"$BATS_TEST_TMPDIR/tree"
	map_modules "$1" | comm -23 "$BATS_TEST_TMPDIR/tree" -
}

# stale NOTES LIB: what the map names that is not a file of LIB, and
# what it names twice.
stale() {
	map_modules "$1" >"$BATS_TEST_TMPDIR/map"
	while read -r m; do
		[ -f "$2/$m" ] || echo "$m"
	done <"$BATS_TEST_TMPDIR/map"
	uniq -d "$BATS_TEST_TMPDIR/map"
}

# cited_sections NOTES DIR...: the citations 'doc/design.md, "SECTION"'
# in DIR whose SECTION is no heading (## or ###) of NOTES; the made-up
# ones of this file aside.
cited_sections() {
	local notes=$1 s
	shift
	grep -rhoE --exclude="${BATS_TEST_FILENAME##*/}" \
		'doc/design\.md, "[^"]+"' "$@" | sed 's/^[^"]*"//; s/"$//' |
		sort -u | while read -r s; do
			grep -qxF -e "## $s" -e "### $s" "$notes" || echo "$s"
		done
}

# A scratch tree: two modules, a map that leaves one out, names a third
# that is not there and one twice, and code that cites three sections.
scratch() {
	mkdir -p lib src
	: >lib/a.c
	: >lib/b.c
	: >lib/b.h
	cat >notes.md <<-'EOF'
		# notes
		## Module map
		- `lib/a.c` a
		- `lib/gone.c` gone
		- `lib/a.c` a again
		- `lib/b.h` b
		## Next
		### Deep
		- `lib/b.c` not in the map
	EOF
	printf '%s\n' '/* (doc/design.md, "Module map") */' \
		'/* (doc/design.md, "Deep") and (doc/design.md, "Nowhere") */' >src/x.c
}

@test "the checks find a module left out of the map, one named that is not there, and a cited section that is not there" {
	scratch
	run -0 unmapped notes.md lib
	[ "$output" = "b.c" ]
	run -0 stale notes.md lib
	[ "$output" = "$(printf '%s\n' gone.c a.c)" ]
	run -0 cited_sections notes.md src
	[ "$output" = "Nowhere" ]
}

@test "every lib/*.c has a line in the module map of doc/design.md" {
	run -0 map_modules "$NOTES"
	[ "${#lines[@]}" -gt 0 ]
	run -0 unmapped "$NOTES" "$MSG_TOP/lib"
	[ "$output" = "" ]
}

@test "every file the module map names is in lib/, and is named once" {
	run -0 map_modules "$NOTES"
	[ "${#lines[@]}" -gt 0 ]
	run -0 stale "$NOTES" "$MSG_TOP/lib"
	[ "$output" = "" ]
}

@test "every section of doc/design.md the code cites is there" {
	run -0 cited_sections "$NOTES" "$MSG_TOP/lib" "$MSG_TOP/cmd" "$MSG_TOP/tests"
	[ "$output" = "" ]
}

@test "no comment cites a design file the repository does not have" {
	cd "$MSG_TOP"
	run -1 grep -rnwI --exclude=71-design-notes.bats DESIGN \
		lib cmd tests fuzz bench examples build-aux Makefile
	[ "$output" = "" ]
}

@test "the README points to doc/design.md" {
	run -0 grep -c 'doc/design\.md' "$MSG_TOP/README"
	[ "$output" -ge 1 ]
}
