# latwhy - eBPF latency root-cause tracer.
#
#   make          build ./latwhy and the lab tools
#   make test     install missing packages, build, run unit, browser + integration tests
#   make demo     install missing packages, build, run latwhy on the built-in demo
#   make bench    benchmarks (print, never fail)
#   make install  PREFIX=/usr/local DESTDIR= (docs/install.md); make uninstall
#   make deb      build/deb/latwhy_<version>_<arch>.deb (tools/debian/)
#   make unit T=engine              one unit test: build/tests/test_engine
#   make integration TESTS="a b"    those integration tests (run.sh --list)

CLANG    ?= clang
BPFTOOL  ?= bpftool
CC       ?= cc
# Cross builds: `make ARCH=arm64`, or `make CROSS_COMPILE=aarch64-linux-gnu-`,
# with Debian's cross toolchain and the target's -dev libraries (multiarch,
# tools/deps.sh --cross arm64). They go to build/<arch>/, the binary too
# (build/arm64/latwhy), so the host's build is left as it is.
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ifneq ($(origin ARCH),command line) # an environment's ARCH does not count
ifneq ($(CROSS_COMPILE),)
ARCH     := $(shell $(CROSS_COMPILE)gcc -dumpmachine | sed -e 's/-.*//' -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
else
ARCH     := $(HOST_ARCH)
endif
endif
TRIPLET  := $(if $(filter arm64,$(ARCH)),aarch64,x86_64)-linux-gnu
ifeq ($(ARCH),$(HOST_ARCH))
BUILD    := build
BIN      := latwhy
else
CROSS_COMPILE ?= $(TRIPLET)-
ifeq ($(origin CC),default)
CC       := $(CROSS_COMPILE)gcc
endif
ifeq ($(origin AR),default)
AR       := $(CROSS_COMPILE)ar
endif
BUILD    := build/$(ARCH)
BIN      := $(BUILD)/latwhy
endif
VMLINUX  := vmlinux/vmlinux_$(ARCH).h
VMLINUX_DEPS := vmlinux/vmlinux.h $(VMLINUX)

WARN     := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror
CFLAGS   ?= -O2 -g
# recorded in captures and build info; a constant, so that an object built
# before a commit and one built after agree
VERSION  := 0.2.0
CFLAGS   += $(WARN) -D_GNU_SOURCE -I$(BUILD) -Ibpf -Iuser -DLW_VERSION='"$(VERSION)"'
LDLIBS   := -lbpf -lelf -lz -lm -lmicrohttpd
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BUILD) -Ibpf -Ivmlinux \
	      -idirafter /usr/include/$(TRIPLET) -Wall -Werror

# user/ has one folder per stage of the pipeline (see user/README.md).
STAGES    := cli source engine node advice output capture export lib
USER_SRCS := $(filter-out user/cli/main.c,$(wildcard $(addprefix user/,$(addsuffix /*.c,$(STAGES)))))
USER_HDRS := $(wildcard user/*/*.h)
USER_OBJS := $(patsubst user/%.c,$(BUILD)/%.o,$(USER_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
TOOL_SRCS := $(wildcard tools/*.c)
TOOL_BINS := $(patsubst tools/%.c,$(BUILD)/tools/%,$(TOOL_SRCS))

.PHONY: all deps test unit browser integration demo bench accuracy vmlinux format clean \
	install uninstall install-list deb man FORCE
.DELETE_ON_ERROR:

all: $(BIN) $(TOOL_BINS)

deps:
	@tools/deps.sh

$(BUILD) $(BUILD)/tests $(BUILD)/tools $(addprefix $(BUILD)/,$(STAGES)):
	@mkdir -p $@

$(BUILD)/latwhy.bpf.o: bpf/latwhy.bpf.c $(wildcard bpf/*.h) $(VMLINUX_DEPS) | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/latwhy.skel.h: $(BUILD)/latwhy.bpf.o
	$(BPFTOOL) gen skeleton $< name latwhy_bpf > $@

# CPPFLAGS and LDFLAGS: a packager's (dpkg-buildflags: fortify, relro, now)
$(BUILD)/%.o: user/%.c $(USER_HDRS) bpf/latwhy.h | $(addprefix $(BUILD)/,$(STAGES))
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# Only the record source knows libbpf's skeleton.
$(patsubst user/%.c,$(BUILD)/%.o,$(wildcard user/source/*.c)): $(BUILD)/latwhy.skel.h

# The folder rules (user/README.md): which folders a folder's files may
# include, and only the record source knows libbpf. Everything else runs on
# records, without root or BPF. tools/layout.sh names each include that breaks one.
LAYOUT := cli:* source:source,engine,node,lib engine:engine,lib node:node,lib \
	  advice:advice,engine,node,lib output:output,advice,engine,node,lib \
	  capture:capture,engine,node,lib export:export,engine,node,lib lib:lib
$(BUILD)/layout.ok: $(USER_SRCS) $(USER_HDRS) user/cli/main.c tools/layout.sh | $(BUILD)
	@tools/layout.sh '$(LAYOUT)' $(filter user/%,$^)
	@touch $@

$(BUILD)/liblatwhy.a: $(USER_OBJS) $(BUILD)/layout.ok
	rm -f $@ && $(AR) rcs $@ $(USER_OBJS)  # no member of a removed file

# --version: the commit (a source tree's COMMIT file, else git's, -dirty
# with uncommitted changes) and, in a package, its version (LW_PKG_VERSION,
# set by tools/debian/rules). Only main.o sees them, rebuilt when they change.
LW_COMMIT ?= $(shell cat COMMIT 2>/dev/null || { c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && \
	{ git diff --quiet HEAD -- 2>/dev/null || c=$$c-dirty; } && echo $$c; } || echo unknown)
LW_PKG_VERSION ?=
$(BUILD)/version.stamp: FORCE | $(BUILD)
	@echo '$(LW_COMMIT) $(LW_PKG_VERSION)' >$@.tmp; cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@
$(BUILD)/cli/main.o: $(BUILD)/version.stamp
$(BUILD)/cli/main.o: CFLAGS += -DLW_COMMIT='"$(LW_COMMIT)"' -DLW_PKG_VERSION='"$(LW_PKG_VERSION)"'

$(BIN): $(BUILD)/cli/main.o $(BUILD)/liblatwhy.a
	$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/liblatwhy.a user/cli/main.c | $(BUILD)/tests
	$(CC) $(CFLAGS) $< $(BUILD)/liblatwhy.a $(LDLIBS) -lcmocka -o $@

$(BUILD)/tools/%: tools/%.c tools/lab.h | $(BUILD)/tools
	$(CC) $(CFLAGS) -pthread $< -lm $(TOOL_LIBS) -o $@

# drives latwhy's loaded cpu_frequency program with BPF_PROG_TEST_RUN
$(BUILD)/tools/lw_freqinject: TOOL_LIBS := -lbpf -lelf -lz

# make unit T=NAME: build/tests/test_NAME alone (tests/unit/test_NAME.c), built
# first; without T every unit binary, then the capture and tool checks. T and
# (for integration) TESTS count when given on make's command line only: an
# environment's T or TESTS never narrows make test.
UNIT_T := $(if $(filter command line,$(origin T)),$(patsubst test_%,%,$(T)))
ifeq ($(UNIT_T),)
unit: $(UNIT_BINS) latwhy $(BUILD)/tests/lw_http_serve
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done
	@echo "== tests/captures/check.sh"; tests/captures/check.sh
	@echo "== tests/tools/test_score.py"; python3 tests/tools/test_score.py
	@echo "== tests/tools/test_lab.sh"; tests/tools/test_lab.sh
	@echo "== tests/tools/test_systemd.sh"; tests/tools/test_systemd.sh
	@echo "== tests/tools/test_layout.sh"; tests/tools/test_layout.sh
	@echo "== tests/tools/test_usage.py"; python3 tests/tools/test_usage.py
	@echo "== tests/install/check.sh"; tests/install/check.sh
	@echo "== tests/tools/test_http.py"; python3 tests/tools/test_http.py $(BUILD)/tests/lw_http_serve
	@echo "== tests/k8s/test_manifests.py"; python3 tests/k8s/test_manifests.py
else
unit: $(filter $(BUILD)/tests/test_$(UNIT_T),$(UNIT_BINS))
	@[ -n "$^" ] || { echo "make unit: no unit test '$(T)': T is one of $(patsubst $(BUILD)/tests/test_%,%,$(UNIT_BINS))" >&2; exit 2; }
	@echo "== $^"; $^
endif

# serve's HTTP endpoint without a tracer, for tests/tools/test_http.py
$(BUILD)/tests/lw_http_serve: tests/tools/lw_http_serve.c $(BUILD)/liblatwhy.a | $(BUILD)/tests
	$(CC) $(CFLAGS) -pthread $< $(BUILD)/liblatwhy.a $(LDLIBS) -o $@

# the HTML report of each golden capture in headless Chromium (Debian's
# python3-selenium is in /usr/bin's python3, whatever python3 comes first);
# it prints where each page's screenshot went
PY3 := $(firstword $(wildcard /usr/bin/python3) python3)
browser: latwhy
	@echo "== tests/browser/check_html.py (screenshots: $(BUILD)/test-artifacts/report-*.png)"
	@$(PY3) tests/browser/check_html.py

$(BUILD)/tests/uprobe_target: tests/integration/uprobe_target.c | $(BUILD)/tests
	$(CC) $(CFLAGS) $< -o $@

# make integration TESTS="NAME ...": those alone (tests/integration/run.sh
# --list names them all)
integration: latwhy $(TOOL_BINS) $(BUILD)/tests/uprobe_target
	@tests/integration/run.sh $(if $(filter command line,$(origin TESTS)),$(TESTS))

test: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS)
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory browser
	@$(MAKE) --no-print-directory asan-unit
	@$(MAKE) --no-print-directory fuzz-short
	@$(MAKE) --no-print-directory integration

demo: deps
	@$(MAKE) --no-print-directory all
	@tools/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@tools/bench/run.sh

accuracy: deps
	@$(MAKE) --no-print-directory all
	@tools/accuracy/run.sh --out tools/accuracy/last-run.txt

# ---- install (docs/install.md) ----
# make install [PREFIX=/usr/local] [DESTDIR=]: what INSTALLED lists, each
# file once; make uninstall removes exactly those (and the folders of
# latwhy's own it made, when empty). /etc/default/latwhy (SYSCONFDIR) is
# the one file kept: install does not replace an operator's copy, and
# uninstall removes it only while it is still the example installed.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DATADIR    ?= $(PREFIX)/share/latwhy
DOCDIR     ?= $(PREFIX)/share/doc/latwhy
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
INSTALL    ?= install
PROM_FILES := prometheus.yml latwhy.rules.yml latwhy.alerts.yml
DOC_FILES  := README.md $(wildcard $(addprefix docs/,usage.md serve.md install.md model.md capture.md json.md performance.md))
DEFAULTS   := $(SYSCONFDIR)/default/latwhy
INSTALLED  := $(BINDIR)/latwhy $(MANDIR)/man8/latwhy.8 $(UNITDIR)/latwhy.service \
	      $(addprefix $(DATADIR)/prometheus/,$(PROM_FILES)) \
	      $(addprefix $(DOCDIR)/,$(notdir $(DOC_FILES)))

# latwhy(8) from docs/usage.md and docs/serve.md, with the paths installed
$(BUILD)/paths.stamp: FORCE | $(BUILD)
	@echo '$(VERSION) $(PREFIX) $(UNITDIR)' >$@.tmp; cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@
$(BUILD)/latwhy.8: tools/man/mkman.sh docs/usage.md docs/serve.md $(BUILD)/paths.stamp
	tools/man/mkman.sh $(VERSION) $(PREFIX) $(UNITDIR) >$@
man: $(BUILD)/latwhy.8

# the unit, its ExecStart pointed at the installed binary
$(BUILD)/latwhy.service: tools/systemd/latwhy.service $(BUILD)/paths.stamp
	sed 's|/usr/local/bin/latwhy|$(BINDIR)/latwhy|' $< >$@

install: latwhy $(BUILD)/latwhy.8 $(BUILD)/latwhy.service
	$(INSTALL) -D -m 755 latwhy $(DESTDIR)$(BINDIR)/latwhy
	$(INSTALL) -D -m 644 $(BUILD)/latwhy.8 $(DESTDIR)$(MANDIR)/man8/latwhy.8
	$(INSTALL) -D -m 644 $(BUILD)/latwhy.service $(DESTDIR)$(UNITDIR)/latwhy.service
	$(INSTALL) -d $(DESTDIR)$(DATADIR)/prometheus $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 644 $(addprefix tools/prometheus/,$(PROM_FILES)) $(DESTDIR)$(DATADIR)/prometheus/
	$(INSTALL) -m 644 $(DOC_FILES) $(DESTDIR)$(DOCDIR)/
	@if [ -e $(DESTDIR)$(DEFAULTS) ]; then \
		echo "install: $(DESTDIR)$(DEFAULTS) exists: kept"; \
	else \
		echo "$(INSTALL) -D -m 644 tools/systemd/latwhy.default $(DESTDIR)$(DEFAULTS)"; \
		$(INSTALL) -D -m 644 tools/systemd/latwhy.default $(DESTDIR)$(DEFAULTS); \
	fi
	@[ -n "$(DESTDIR)" ] || ! [ -d /run/systemd/system ] || \
		echo "install: then systemctl daemon-reload; set LATWHY_TARGET in $(DEFAULTS); systemctl enable --now latwhy"

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	@if cmp -s tools/systemd/latwhy.default $(DESTDIR)$(DEFAULTS); then \
		echo "rm -f $(DESTDIR)$(DEFAULTS)"; rm -f $(DESTDIR)$(DEFAULTS); \
	elif [ -e $(DESTDIR)$(DEFAULTS) ]; then \
		echo "uninstall: $(DESTDIR)$(DEFAULTS) was edited: kept"; \
	fi
	@rmdir $(DESTDIR)$(DATADIR)/prometheus $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR) 2>/dev/null || true

# build/deb/latwhy_<version>_<arch>.deb from tools/debian/ (tools/debian/build.sh)
deb:
	@LW_COMMIT='$(LW_COMMIT)' tools/debian/build.sh

# the file list, for tests/install/check.sh
install-list:
	@printf '%s\n' $(INSTALLED) $(DEFAULTS)

# ---- sanitizers and fuzzing (capture reader) ----
# asan-unit: every unit test built with ASan and UBSan over an instrumented
# copy of the library; it runs them all and names those that fail.
# fuzz: libFuzzer on the capture reader, seeded with tests/fuzz/corpus
# (fuzz-corpus rewrites the seeds with capgen); fuzz-short is the bounded
# run for test.
SAN_FLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ASAN_OBJS   := $(patsubst user/%.c,$(BUILD)/asan/%.o,$(USER_SRCS))
ASAN_BINS   := $(patsubst tests/unit/%.c,$(BUILD)/asan/tests/%,$(UNIT_SRCS))
# the reader and what its node snapshots need (not the hindsight window:
# serve's, nor the capture source: both built on the engine)
FUZZ_SRCS   := $(filter-out user/capture/hindsight%.c user/capture/source.c,$(wildcard user/capture/*.c user/node/*.c user/lib/*.c))
FUZZ_CORPUS := tests/fuzz/corpus
FUZZ_RUN     = $(BUILD)/fuzz/fuzz_capture -timeout=10 -rss_limit_mb=1024 \
	       -artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus $(FUZZ_CORPUS)

.PHONY: asan-unit fuzz fuzz-short fuzz-corpus

$(BUILD)/asan/%.o: user/%.c $(USER_HDRS) bpf/latwhy.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(BUILD)/asan/source/tracer.o: $(BUILD)/latwhy.skel.h

$(BUILD)/asan/liblatwhy.a: $(ASAN_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/asan/tests/%: tests/unit/%.c $(BUILD)/asan/liblatwhy.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN_FLAGS) $< $(BUILD)/asan/liblatwhy.a $(LDLIBS) -lcmocka -o $@

asan-unit: $(ASAN_BINS)
	@bad=""; for t in $(ASAN_BINS); do echo "== $$t"; $$t || bad="$$bad $${t##*/}"; done; \
	if [ -n "$$bad" ]; then echo "asan-unit: failed:$$bad" >&2; exit 1; fi

# ethtool.c follows the kernel's own link-settings idiom (a struct ending in
# a flexible array, inside another), which clang flags as an extension
$(BUILD)/fuzz/fuzz_capture: tests/fuzz/fuzz_capture.c $(FUZZ_SRCS) $(USER_HDRS)
	@mkdir -p $(@D)/corpus
	$(CLANG) -g -O1 -fsanitize=fuzzer $(SAN_FLAGS) $(WARN) -D_GNU_SOURCE -Ibpf -Iuser \
		-Wno-gnu-variable-sized-type-not-at-end \
		-DLW_VERSION='"fuzz"' $< $(FUZZ_SRCS) -lz -o $@

fuzz: $(BUILD)/fuzz/fuzz_capture
	$(FUZZ_RUN) -max_total_time=300

fuzz-short: $(BUILD)/fuzz/fuzz_capture
	$(FUZZ_RUN) -max_total_time=20

$(BUILD)/fuzz/capgen: tests/fuzz/capgen.c $(BUILD)/liblatwhy.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< $(BUILD)/liblatwhy.a $(LDLIBS) -o $@

fuzz-corpus: $(BUILD)/fuzz/capgen
	@mkdir -p $(FUZZ_CORPUS)
	$< seeds $(FUZZ_CORPUS)

# the host's own BTF; another architecture's from a Debian kernel of it
vmlinux:
ifeq ($(ARCH),$(HOST_ARCH))
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX)
else
	tools/kernels/vmlinux.sh $(ARCH) $(VMLINUX)
endif

format:
	clang-format -i bpf/*.c bpf/*.h user/*/*.c user/*/*.h tests/unit/*.c tools/*.c

clean:
	rm -rf $(BUILD) latwhy
