# lxtrace build. Everything built goes under $(OUT); `make V=1` prints full commands.
# The layout: docs/layout.md (wings lowest first, checked by `make layers`).

OUT ?= build
CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
# -Iinclude: the workloads and benchmarks include <lxtrace/annotate.h> as users do.
CPPFLAGS += -I. -I$(OUT) -Iinclude -D_GNU_SOURCE
LIBS := -lbpf -lelf -lz -ldw -lpthread
# x86-64 only: the unwinder reads its registers and signal frame, the syscall kinds know its
# numbers. ARCH is the kernel's name of it (vmlinux/ARCH, __TARGET_ARCH_ARCH); its Debian
# multiarch directory holds the asm/ headers: the syscall table and what libbpf's headers include.
ifneq ($(shell uname -m),x86_64)
$(error lxtrace builds for x86_64 only, this machine is $(shell uname -m))
endif
ARCH := x86
MULTIARCH := x86_64-linux-gnu
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf -Wall -Werror
# libbpf's usdt.bpf.h includes <linux/errno.h>, whose <asm/errno.h> is in the multiarch dir.
BPF_CFLAGS += -idirafter /usr/include/$(MULTIARCH)
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

ifeq ($(V),1)
Q :=
say :=
else
Q := @
say = @printf '  %-7s %s\n' $(1) $(2);
endif

LIB_SRCS := $(wildcard lib/*.c)
FORMAT_SRCS := $(wildcard format/*.c format/go119/*.c format/go123/*.c)
USER_SRCS := $(wildcard user/*/*.c)
BPF_SRCS := $(wildcard bpf/*.bpf.c)
TESTLIB_SRCS := $(wildcard tests/lib/*.c)
UNIT_SRCS := $(wildcard tests/unit/*.c)
INTEG_SRCS := $(wildcard tests/integration/*.c)
KERNEL_SRCS := $(wildcard tests/kernels/*.c)
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
BENCH_SRCS := $(wildcard bench/*.c)

LIB_OBJS := $(LIB_SRCS:%.c=$(OUT)/%.o)
FORMAT_OBJS := $(FORMAT_SRCS:%.c=$(OUT)/%.o)
USER_OBJS := $(USER_SRCS:%.c=$(OUT)/%.o)
# Everything of the daemon but main(), so tests can drive its modules directly.
USER_LIB_OBJS := $(filter-out $(OUT)/user/cli/main.o,$(USER_OBJS))
TESTLIB_OBJS := $(TESTLIB_SRCS:%.c=$(OUT)/%.o)
SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(OUT)/%.skel.h)
# Script workloads (Python's) are copied beside the built ones, which is where tests look.
WORKLOADS := $(WORKLOAD_SRCS:tests/workloads/%.c=$(OUT)/tests/workloads/%) \
	     $(patsubst tests/workloads/%,$(OUT)/tests/workloads/%,$(wildcard tests/workloads/*.py))
BENCHES := $(BENCH_SRCS:bench/%.c=$(OUT)/bench/%)

LIBFORMAT := $(OUT)/libgtformat.a
# $LXTRACE from the environment names a binary to put in make kernel-test's guests instead of
# this build's; read here, before the next line gives the name to this build's binary (which
# make then exports in its place).
KERNEL_LXTRACE := $(if $(filter environment%,$(origin LXTRACE)),$(LXTRACE))
LXTRACE := $(OUT)/lxtrace
UNIT_TESTS := $(OUT)/tests/unit-tests
INTEG_TESTS := $(OUT)/tests/integration-tests
KERNEL_TESTS := $(OUT)/tests/kernel-tests
FUZZER := $(OUT)/fuzz/fuzz_reader
FUZZ_MODEL := $(OUT)/fuzz/fuzz_model
FUZZ_MERGE := $(OUT)/fuzz/fuzz_merge
FUZZ_GO123 := $(OUT)/fuzz/fuzz_reader_go123
FUZZ_REPORT := $(OUT)/fuzz/fuzz_report
# Records the fixtures of the golden tests (tests/streams/), by hand and as root.
CAPTURE_STREAM := $(OUT)/tests/capture-stream

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all test layers docs docs-check unit-test integration-test test-load kernel-test sanitize-test fuzz fuzz-model fuzz-merge fuzz-go123 fuzz-report fuzz-replay \
	bench deps demo vmlinux clean FORCE

all: $(LXTRACE) $(WORKLOADS) $(BENCHES) $(CAPTURE_STREAM)

deps:
	bash scripts/deps.sh

# A 3-second trace of the machine while some test workloads run: demo.trace.
demo: all
	bash scripts/demo.sh $(LXTRACE) demo.trace

# Regenerates the vendored vmlinux.h from the running kernel's BTF.
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h

# -MMD: each object depends on exactly the headers it includes, as the C objects below.
$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c
	$(call say,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(call say,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $* > $@

# Syscall number -> name, generated from the system's own header, never typed by hand.
SYSCALL_HDR ?= /usr/include/$(MULTIARCH)/asm/unistd_64.h
$(OUT)/syscall_names.h: $(SYSCALL_HDR)
	$(call say,GEN,$@)
	@mkdir -p $(@D)
	$(Q)sed -n 's/^#define __NR_\([a-z0-9_]*\)[[:space:]]\{1,\}\([0-9]\{1,\}\)$$/[\2] = "\1",/p' $< > $@
	$(Q)test -s $@ || { echo "syscall_names.h: no __NR_ definitions in $<" >&2; exit 1; }

# The version `lxtrace --version` prints: git's description of the tree it was built from
# ("unknown" outside a git checkout), rewritten only when it changes, so only main.o follows.
$(OUT)/version.h: FORCE
	@mkdir -p $(@D)
	$(Q)v=$$(git -C $(CURDIR) describe --always --dirty 2>/dev/null || echo unknown); \
		printf '#define LXTRACE_VERSION "%s"\n' "$$v" >$@.tmp; \
		if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(OUT)/user/cli/main.o: $(OUT)/version.h
FORCE:

# Generated headers exist before user/ compiles (order-only: they do not make every object
# out of date); from then on -MMD ties each object to the headers it includes, so only
# user/capture/capture.o follows the skeletons and only user/proc/syscalls.o the names.
$(USER_OBJS): | $(SKELS) $(OUT)/syscall_names.h

$(OUT)/%.o: %.c
	$(call say,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARNINGS) -MMD -MP -c $< -o $@

# The golden tests and the mutants read their fixtures from the source tree, wherever they
# run from.
$(OUT)/tests/unit/%.o $(OUT)/tests/integration/mutants.o: CPPFLAGS += -DLXTRACE_SRCDIR='"$(CURDIR)"'

$(LIBFORMAT): $(FORMAT_OBJS) $(LIB_OBJS)
	$(call say,AR,$@)
	$(Q)$(AR) rcs $@ $^

$(LXTRACE): $(USER_OBJS) $(LIBFORMAT)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBS) -o $@

$(OUT)/tests/workloads/%: tests/workloads/%.c
	$(call say,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -O1 -g -fno-omit-frame-pointer $(WARNINGS) -MMD -MP -MF $@.d $< \
		-lpthread -o $@

$(OUT)/tests/workloads/%.py: tests/workloads/%.py
	@mkdir -p $(@D)
	$(Q)cp $< $@

# The unwinder's tests need code built as distributions build it: without frame pointers.
$(OUT)/tests/workloads/frameless: tests/workloads/frameless.c
	$(call say,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -O2 -g -fomit-frame-pointer $(WARNINGS) $< -lpthread -o $@

# The filesystem that stalls on a signal is a libfuse3 server.
$(OUT)/tests/workloads/stallfs: tests/workloads/stallfs.c
	$(call say,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $$(pkg-config --cflags fuse3) -O1 -g $(WARNINGS) $< \
		$$(pkg-config --libs fuse3) -o $@

# Each benchmark links what it measures: the model, the symbolizer and the row cache need the
# daemon's modules, the encoder only the format library (and the file worker lib/), the
# annotation API nothing.
$(OUT)/bench/bench_model $(OUT)/bench/bench_symbolize $(OUT)/bench/bench_cfi_cache: \
	$(USER_LIB_OBJS) $(LIBFORMAT)
$(OUT)/bench/bench_encode $(OUT)/bench/bench_file_worker: $(LIBFORMAT)
$(OUT)/bench/%: $(OUT)/bench/%.o
	$(call say,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBS) -o $@

$(UNIT_TESTS): $(UNIT_SRCS:%.c=$(OUT)/%.o) $(TESTLIB_OBJS) $(USER_LIB_OBJS) $(LIBFORMAT)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBS) -lcriterion -o $@

$(INTEG_TESTS): $(INTEG_SRCS:%.c=$(OUT)/%.o) $(TESTLIB_OBJS) $(USER_LIB_OBJS) $(LIBFORMAT)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBS) -lcriterion -o $@

$(KERNEL_TESTS): $(KERNEL_SRCS:%.c=$(OUT)/%.o) $(TESTLIB_OBJS) $(USER_LIB_OBJS) $(LIBFORMAT)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBS) -lcriterion -o $@

$(CAPTURE_STREAM): $(OUT)/tests/streams/capture.o $(OUT)/tests/lib/stream.o $(USER_LIB_OBJS) \
		  $(LIBFORMAT)
	$(call say,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBS) -o $@

# One compile of the decoder and what it needs, instrumented; the headers they include are
# format/'s shared ones, format/go119/'s and lib/'s. lib/disk_cache.c checksums with zlib.
$(FUZZER): tests/fuzz/fuzz_reader.c $(FORMAT_SRCS) $(LIB_SRCS) | $(wildcard format/*.h format/go119/*.h lib/*.h)
	$(call say,FUZZ-CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(CPPFLAGS) $(FUZZ_FLAGS) $(filter %.c,$^) -lz -o $@

# The go1.23 reader, repair and cut, instrumented.
$(FUZZ_GO123): tests/fuzz/fuzz_reader_go123.c $(FORMAT_SRCS) $(LIB_SRCS) | $(wildcard format/*.h format/go123/*.h lib/*.h)
	$(call say,FUZZ-CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(CPPFLAGS) $(FUZZ_FLAGS) $(filter %.c,$^) -lz -o $@

# The model and what it calls (the symbolizer, /proc, the flight recorder and the event stream it
# reads its window through), instrumented; its syscall names come from the normal build.
FUZZ_MODEL_SRCS := tests/fuzz/fuzz_model.c $(FORMAT_SRCS) $(LIB_SRCS) \
	$(wildcard user/model/*.c user/stacks/*.c user/proc/*.c user/events/*.c user/flight/*.c)
$(FUZZ_MODEL): $(FUZZ_MODEL_SRCS) | $(OUT)/syscall_names.h
	$(call say,FUZZ-CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(CPPFLAGS) $(FUZZ_FLAGS) $(filter %.c,$^) $(LIBS) -o $@

# report and pprof (user/report/) and what they call, instrumented, as the model's target.
FUZZ_REPORT_SRCS := tests/fuzz/fuzz_report.c $(filter-out tests/fuzz/fuzz_model.c,$(FUZZ_MODEL_SRCS)) \
	$(wildcard user/report/*.c)
$(FUZZ_REPORT): $(FUZZ_REPORT_SRCS) | $(OUT)/syscall_names.h
	$(call say,FUZZ-CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(CPPFLAGS) $(FUZZ_FLAGS) $(filter %.c,$^) $(LIBS) -o $@

# The reorder engine alone, instrumented.
$(FUZZ_MERGE): tests/fuzz/fuzz_merge.c user/capture/merge.c | user/capture/merge.h bpf/lxtrace.h
	$(call say,FUZZ-CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(CPPFLAGS) $(FUZZ_FLAGS) $(filter %.c,$^) -o $@

# Symbolizer (user/stacks/symbolize.c): libstdc++ demangles C++ and Rust names; the unit tests look
# up code addresses printed by the fixture programs of tests/symfix/, built here with
# frame pointers and debug info (the Go one with both installed toolchains); throw is built
# without frame pointers, for the unwinder.
LIBS += -lstdc++
GO119 ?= /usr/bin/go
GO123 ?= /usr/lib/go-1.23/bin/go
SYMFIX := $(addprefix $(OUT)/tests/symfix/,hot cxx throw spin-go1.19 spin-go1.23 libversioned.so \
	gostacks-go1.19 gostacks-go1.23 gostacks-stripped-go1.23 cgostacks-go1.19 cgostacks-go1.23)

$(UNIT_TESTS): | $(SYMFIX)
# tests/integration/stacks.c samples the Go fixtures as they spin.
$(INTEG_TESTS): | $(SYMFIX)

$(OUT)/tests/symfix/hot: tests/symfix/hot.c
	$(call say,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -g -O2 -fno-omit-frame-pointer $(WARNINGS) $< -o $@

$(OUT)/tests/symfix/cxx: tests/symfix/cxx.cc
	$(call say,CXX,$@)
	@mkdir -p $(@D)
	$(Q)$(CXX) -g -O2 -fno-omit-frame-pointer -Wall -Wextra -Werror $< -o $@

$(OUT)/tests/symfix/throw: tests/symfix/throw.cc
	$(call say,CXX,$@)
	@mkdir -p $(@D)
	$(Q)$(CXX) -g -O2 -Wall -Wextra -Werror $< -o $@

# Built as Debian builds libc: versioned symbols, compiled in its own directory with the build
# root mapped to "." (a relative DW_AT_comp_dir that is also the line table's directory 0).
$(OUT)/tests/symfix/libversioned.so: tests/symfix/versioned.c tests/symfix/versioned.map
	$(call say,CC,$@)
	@mkdir -p $(@D)
	$(Q)cd tests/symfix && $(CC) -g -O2 -fPIC -shared -fdebug-prefix-map=$(CURDIR)=. \
		$(WARNINGS) -Wl,--version-script=versioned.map versioned.c -o $(abspath $@)

$(OUT)/tests/symfix/spin-go1.19: tests/symfix/spin.go
	$(call say,GO,$@)
	@mkdir -p $(@D)
	$(Q)GOTOOLCHAIN=local $(GO119) build -o $@ $<

$(OUT)/tests/symfix/spin-go1.23: tests/symfix/spin.go
	$(call say,GO,$@)
	@mkdir -p $(@D)
	$(Q)GOTOOLCHAIN=local $(GO123) build -o $@ $<

# Go code a frame-pointer walk loses frames of (tests/integration/stacks.c, unwind.c), also
# stripped as release builds are: only its pc tables are left to unwind it.
$(OUT)/tests/symfix/gostacks-go1.19: tests/symfix/gostacks.go
	$(call say,GO,$@)
	@mkdir -p $(@D)
	$(Q)GOTOOLCHAIN=local $(GO119) build -o $@ $<

$(OUT)/tests/symfix/gostacks-go1.23: tests/symfix/gostacks.go
	$(call say,GO,$@)
	@mkdir -p $(@D)
	$(Q)GOTOOLCHAIN=local $(GO123) build -o $@ $<

$(OUT)/tests/symfix/gostacks-stripped-go1.23: tests/symfix/gostacks.go
	$(call say,GO,$@)
	@mkdir -p $(@D)
	$(Q)GOTOOLCHAIN=local $(GO123) build -ldflags='-s -w' -o $@ $<

# A cgo call (tests/integration/unwind.c): C code without frame pointers, over Go frames.
$(OUT)/tests/symfix/cgostacks-go1.19: tests/symfix/cgostacks.go
	$(call say,GO,$@)
	@mkdir -p $(@D)
	$(Q)CGO_ENABLED=1 GOTOOLCHAIN=local $(GO119) build -o $@ $<

$(OUT)/tests/symfix/cgostacks-go1.23: tests/symfix/cgostacks.go
	$(call say,GO,$@)
	@mkdir -p $(@D)
	$(Q)CGO_ENABLED=1 GOTOOLCHAIN=local $(GO123) build -o $@ $<

# The whole suite: the layout's rules, the README's --help, unit tests (parallel), the fuzz
# corpus replayed, then the root-only integration tests one at a time, since they record the
# whole machine, then the same lxtrace recording on Debian's kernels in QEMU.
test: layers docs-check unit-test fuzz-replay integration-test kernel-test

# Each command's options have one source, its option table; the README shows `lxtrace record
# --help` and docs/report.md `lxtrace report --help` and `lxtrace pprof --help`
# (scripts/sync-help.py): make docs rewrites those copies, make test fails when one drifted,
# or when a doc or comment names a path or a docs/format.md section that does not exist.
docs: $(LXTRACE)
	python3 scripts/sync-help.py $(LXTRACE) README.md docs/report.md

docs-check: $(LXTRACE)
	python3 scripts/sync-help.py --check $(LXTRACE) README.md docs/report.md
	python3 scripts/check-refs.py

# The layout's rules (docs/layout.md): includes go down the wings; no include or call cycle.
layers: $(LXTRACE)
	python3 scripts/check-layers.py $(OUT)

# scripts/run-tests.sh repeats what failed at the end of the output, where a CI log's tail is.
unit-test: $(UNIT_TESTS) $(LXTRACE)
	scripts/run-tests.sh $(UNIT_TESTS) --short-filename

integration-test: $(INTEG_TESTS) $(LXTRACE) $(WORKLOADS) $(CAPTURE_STREAM)
	scripts/run-tests.sh $(INTEG_TESTS) --short-filename --jobs 1

# The integration tests again beside a busy machine (scripts/load.sh: CPU hogs beyond the
# cores, exec churn, direct-IO reads, the page cache dropped): what they assert must hold there.
# Not yet a stage of `make test`: docs/testing.md, "The load stage", says what still fails
# there (truths lxtrace loses when its reader falls behind, not the tests' assumptions).
test-load: $(INTEG_TESTS) $(LXTRACE) $(WORKLOADS) $(CAPTURE_STREAM)
	bash scripts/load.sh -- scripts/run-tests.sh $(INTEG_TESTS) --short-filename --jobs 1

# Debian's own kernels booted in QEMU, each recording tests/kernels/scenario.sh, and the host's
# kernel natively; the files come back and tests/kernels/kernel_tests.c asserts them, kernel by
# kernel (docs/testing.md). KERNELS=bullseye make kernel-test runs one; LXTRACE= and
# LXTRACE_WORKLOADS= put another build's programs in the guests.
KERNELS ?= bullseye bookworm bookworm-backports trixie-backports host
kernel-test: $(KERNEL_TESTS) $(LXTRACE) $(WORKLOADS)
	LXTRACE=$(or $(KERNEL_LXTRACE),$(LXTRACE)) bash tests/kernels/run.sh $(OUT) $(KERNELS)
# make -j test: the host's run records the whole machine too, so not while the integration tests do.
ifneq ($(filter test,$(MAKECMDGOALS)),)
kernel-test: integration-test
endif

fuzz-replay: $(FUZZER) $(FUZZ_MODEL) $(FUZZ_MERGE) $(FUZZ_GO123) $(FUZZ_REPORT)
	$(FUZZER) -runs=0 tests/fuzz/corpus >/dev/null 2>$(OUT)/fuzz/replay.log || { cat $(OUT)/fuzz/replay.log; exit 1; }
	$(FUZZ_GO123) -runs=0 tests/fuzz/go123-corpus >/dev/null 2>$(OUT)/fuzz/replay.log || \
		{ cat $(OUT)/fuzz/replay.log; exit 1; }
	$(FUZZ_MODEL) -runs=0 tests/fuzz/model-corpus >/dev/null 2>$(OUT)/fuzz/replay.log || \
		{ cat $(OUT)/fuzz/replay.log; exit 1; }
	$(FUZZ_MERGE) -runs=0 tests/fuzz/merge-corpus >/dev/null 2>$(OUT)/fuzz/replay.log || \
		{ cat $(OUT)/fuzz/replay.log; exit 1; }
	$(FUZZ_REPORT) -runs=0 tests/fuzz/report-corpus >/dev/null 2>$(OUT)/fuzz/replay.log || \
		{ cat $(OUT)/fuzz/replay.log; exit 1; }
	@echo "fuzz-replay: $$(ls tests/fuzz/corpus | wc -l) reader, $$(ls tests/fuzz/go123-corpus | wc -l) go1.23 reader, $$(ls tests/fuzz/model-corpus | wc -l) model, $$(ls tests/fuzz/merge-corpus | wc -l) merge and $$(ls tests/fuzz/report-corpus | wc -l) report inputs, no crash"

# The unit tests, report's and pprof's fuzz corpus (its target is built with the sanitizers
# already) and one short recording again, built with AddressSanitizer and
# UndefinedBehaviorSanitizer in a tree of their own (build/san), every finding fatal. CI runs it
# after make test; it takes a few minutes, mostly the second build.
SAN_OUT := $(OUT)/san
SAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
SAN_ENV := ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	UBSAN_OPTIONS=print_stacktrace=1
sanitize-test: $(FUZZ_REPORT)
	$(MAKE) OUT=$(SAN_OUT) CFLAGS="$(SAN_CFLAGS)" $(SAN_OUT)/lxtrace $(SAN_OUT)/tests/unit-tests \
		$(addprefix $(SAN_OUT)/tests/workloads/,stress annotated execthread)
	$(SAN_ENV) scripts/run-tests.sh $(SAN_OUT)/tests/unit-tests --short-filename
	$(SAN_ENV) $(FUZZ_REPORT) -runs=0 tests/fuzz/report-corpus >/dev/null 2>$(OUT)/fuzz/san-replay.log || \
		{ cat $(OUT)/fuzz/san-replay.log; exit 1; }
	$(SAN_ENV) bash scripts/sanitize-record.sh $(SAN_OUT)

FUZZ_SECONDS ?= 60
fuzz: $(FUZZER)
	@mkdir -p $(OUT)/fuzz/corpus
	$(FUZZER) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(OUT)/fuzz/corpus tests/fuzz/corpus
fuzz-model: $(FUZZ_MODEL)
	@mkdir -p $(OUT)/fuzz/model-corpus
	$(FUZZ_MODEL) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(OUT)/fuzz/model-corpus \
		tests/fuzz/model-corpus
fuzz-go123: $(FUZZ_GO123)
	@mkdir -p $(OUT)/fuzz/go123-corpus
	$(FUZZ_GO123) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(OUT)/fuzz/go123-corpus \
		tests/fuzz/go123-corpus
fuzz-report: $(FUZZ_REPORT)
	@mkdir -p $(OUT)/fuzz/report-corpus
	$(FUZZ_REPORT) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(OUT)/fuzz/report-corpus \
		tests/fuzz/report-corpus
fuzz-merge: $(FUZZ_MERGE)
	@mkdir -p $(OUT)/fuzz/merge-corpus
	$(FUZZ_MERGE) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(OUT)/fuzz/merge-corpus \
		tests/fuzz/merge-corpus

bench: all

clean:
	rm -rf $(OUT)

-include $(shell find $(OUT) -name '*.d' 2>/dev/null)
