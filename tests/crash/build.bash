# build.bash: compile the C helpers of the crash and fault tests (loaded
# by bats files with `load crash/build`). They are built from source into
# the test's scratch space with the flags of the build under test and
# linked with its libmsg.a; a sanitizer build ("san" in MSG_BIN) gets a
# sanitized helper, as its libmsg.a needs.

HELPER_PKGS="libxml-2.0 libxslt libexslt jansson"

helper_san_flags() {
	case $MSG_BIN in
	*san*) echo "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" ;;
	esac
}

# cc_program OUT SRC: a program using libmsg.
cc_program() {
	# shellcheck disable=SC2046 # the flags are words
	${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra $(helper_san_flags) \
		-I"$MSG_TOP/lib" $(pkg-config --cflags $HELPER_PKGS) -o "$1" "$2" \
		"$MSG_BIN/libmsg.a" $(pkg-config --libs $HELPER_PKGS) -lm
}

# cc_preload OUT SRC: a shared object for LD_PRELOAD. It is never
# sanitized: the sanitizer runtime of the program it is loaded into
# must come first, and does.
cc_preload() {
	${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -shared -fPIC \
		-o "$1" "$2" -ldl
}

# faulty NAME=VALUE... -- CMD...: CMD with the shim built by cc_preload
# as $BATS_FILE_TMPDIR/faultinject.so preloaded and the FAULT_ settings
# given; failed calls are listed in faults.log (unless FAULT_LOG says). A
# sanitizer runtime wants to be first among the preloaded libraries;
# the shim passes every call it does not fail on to it, so its check of
# the order is turned off.
faulty() {
	local -a settings=()
	while [ "$1" != -- ]; do
		settings+=("$1")
		shift
	done
	shift
	env LD_PRELOAD="$BATS_FILE_TMPDIR/faultinject.so" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		FAULT_LOG="$PWD/faults.log" "${settings[@]}" "$@"
}

# store_helpers: store-writer and the fault shim, built into
# $BATS_FILE_TMPDIR, for the setup_file of a store suite.
store_helpers() {
	cc_program "$BATS_FILE_TMPDIR/store-writer" "$MSG_TOP/tests/crash/store-writer.c"
	cc_preload "$BATS_FILE_TMPDIR/faultinject.so" "$MSG_TOP/tests/faults/faultinject.c"
}
