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
