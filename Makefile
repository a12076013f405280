# msgtools: Enterprise Integration Patterns as Unix filters.
# make            build the tools into build/
# make demo       install what is missing, build, run examples/
# make check      install what is missing, run shellcheck over the tests
#                 and gcc's static analyzer, then every test twice (as
#                 built, then under AddressSanitizer and UBSan); last
#                 line counts
# make bench      run the benchmarks in bench/ against their peers
# make fuzz       run every fuzz target in fuzz/ (FUZZ_SECONDS each, default 600)
# make install    PREFIX=/usr/local DESTDIR= MANDIR=$(PREFIX)/share/man

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=

BUILD ?= build
CC ?= cc
PKGS = libxml-2.0 libxslt libexslt jansson librabbitmq
# Recursive (=) so pkg-config runs only when a rule needs the flags, after
# the deps step has had its chance to install it.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS = $(shell pkg-config --libs $(filter-out librabbitmq,$(PKGS))) $(RABBITMQ_LIBS)
# rabbitmq-c from its static archive where the system has one: the tools
# use its plain TCP socket only, so OpenSSL, which the shared library
# brings, does not come with every run (it doubled the start of a tool
# that never names a broker: 2.5 to 5.5 ms, 1.4 to 3.5 MiB). Elsewhere
# the shared library.
RABBITMQ_A = $(wildcard $(shell pkg-config --variable=libdir librabbitmq)/librabbitmq.a)
RABBITMQ_LIBS = $(or $(RABBITMQ_A),$(shell pkg-config --libs librabbitmq))
OPT ?= -O2 -g
WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wformat=2
EXTRA_CFLAGS ?=
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(OPT) $(WARN) $(EXTRA_CFLAGS) -Ilib $(PKG_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(EXTRA_LDFLAGS)
LIBS = $(PKG_LIBS) -lm

TOOLS = msg-wrap msg-unwrap msg-split msg-route msg-tap msg-translate msg-aggregate msg-resequence msg-dedupe msg-trickle msg-exec
LIB_SRC = $(wildcard lib/*.c)
LIB_OBJ = $(LIB_SRC:lib/%.c=$(BUILD)/lib/%.o)
UNIT_SRC = $(wildcard tests/unit/test-*.c)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
MAN = $(wildcard man/*.[1-9])
# wrap.sh and unwrap.sh run parts of frames.sh; lib.sh is sourced by all.
BENCH_SCRIPTS = $(filter-out bench/lib.sh bench/wrap.sh bench/unwrap.sh,$(wildcard bench/*.sh))

all: $(TOOLS:%=$(BUILD)/%) $(UNIT_BIN)

$(BUILD)/lib/%.o: lib/%.c lib/*.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libmsg.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/msg-%: cmd/msg-%.c $(BUILD)/libmsg.a lib/*.h
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libmsg.a $(ALL_LDFLAGS) $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/*.h $(BUILD)/libmsg.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(BUILD)/libmsg.a $(ALL_LDFLAGS) $(LIBS)

deps:
	@sh build-aux/deps.sh test

bench-deps:
	@sh build-aux/deps.sh bench

# The suite runs twice; the sanitizer build lives in its own directory.
# The scripts are linted first: a check that cannot fail is found there.
check: deps
	@$(MAKE) -s --no-print-directory check-all

check-all: lint-tests analyze
	@rm -f build/.counts build/.counts.times
	@$(MAKE) -s --no-print-directory BUILD=build EXTRA_CFLAGS=-Werror all
	@sh tests/run.sh build plain build/.counts
	@$(MAKE) -s --no-print-directory BUILD=build-san OPT="-O1 -g" \
		EXTRA_CFLAGS="-Werror -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		EXTRA_LDFLAGS="-fsanitize=address,undefined" all
	@sh tests/run.sh build-san sanitizers build/.counts
	@sh tests/summary.sh build/.counts

# gcc's static analyzer over every file at -O2, its warnings errors: it
# finds what the sanitizers miss, such as a value read before any path
# has set it.
analyze:
	@$(MAKE) -s --no-print-directory CC=gcc BUILD=build-analyze OPT=-O2 \
		EXTRA_CFLAGS="-Werror -fanalyzer" all || \
		{ echo "make check: static analysis failed (make analyze)"; exit 1; }

demo: deps
	@$(MAKE) -s --no-print-directory all
	@sh examples/demo.sh $(BUILD)

bench: deps bench-deps
	@$(MAKE) -s --no-print-directory all
	@for b in $(BENCH_SCRIPTS); do sh "$$b" $(BUILD) || exit 1; done

FUZZ_SECONDS ?= 600
FUZZ_TARGETS = frame json expr envelope header
FUZZ_CFLAGS = -std=gnu11 -D_GNU_SOURCE -g -O1 -Ilib $(PKG_CFLAGS)
FUZZ_OBJ = $(LIB_SRC:lib/%.c=build-fuzz/lib/%.o)

build-fuzz/lib/%.o: lib/%.c lib/*.h
	@mkdir -p build-fuzz/lib
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -c -o $@ $<

build-fuzz/%-fuzz: fuzz/%-fuzz.c fuzz/fuzz.h $(FUZZ_OBJ)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< \
		$(FUZZ_OBJ) $(LIBS)

# Each target runs FUZZ_SECONDS on its committed seeds in fuzz/corpus/T
# and a working corpus in build-fuzz/corpus/T, one after another.
fuzz: deps $(FUZZ_TARGETS:%=build-fuzz/%-fuzz)
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p build-fuzz/corpus/$$t fuzz/corpus/$$t; \
		echo "fuzz: $$t ($(FUZZ_SECONDS) s)"; \
		build-fuzz/$$t-fuzz -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=512 \
			-timeout=10 build-fuzz/corpus/$$t fuzz/corpus/$$t \
			>build-fuzz/$$t.log 2>&1; \
		status=$$?; tail -5 build-fuzz/$$t.log; \
		[ $$status = 0 ] || exit $$status; \
	done

# Settings and the classes disabled for the whole suite: .shellcheckrc.
LINT_SCRIPTS = tests/*.bats tests/*.bash tests/fixtures/*/*.bash tests/*.sh \
	build-aux/*.sh bench/*.sh examples/*.sh .ci/run
lint-tests:
	@shellcheck $(LINT_SCRIPTS) || \
		{ echo "make check: shellcheck found problems in the tests (make lint-tests)"; exit 1; }
	@sh tests/lint-timeouts.sh $(LINT_SCRIPTS)

lint-man:
	mandoc -Tlint -W warning $(MAN)

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7
	for t in $(TOOLS); do install -m 755 $(BUILD)/$$t $(DESTDIR)$(BINDIR)/$$t; done
	for m in $(MAN); do s=$${m##*.}; install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done

uninstall:
	for t in $(TOOLS); do rm -f $(DESTDIR)$(BINDIR)/$$t; done
	for m in $(MAN); do s=$${m##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$${m##*/}; done

clean:
	rm -rf build build-san build-analyze build-fuzz

.PHONY: all deps bench-deps check check-all lint-tests analyze demo bench fuzz lint-man install uninstall clean
