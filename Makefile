# kbench - one non-recursive Makefile (style.md rule 20).
#   make deps      install build dependencies (Debian packages, npm tarballs)
#   make           build/kbench and build/kbench-tui
#   make test      the unit tests and CLI scripts, nproc at once; GPU tests skip without a GPU
#   make test-sanitize  the same under ASan+UBSan and valgrind, and the fuzz targets briefly (CI)
#   make fuzz      every libFuzzer target FUZZ_SECONDS seconds, FUZZ_JOBS at a time (docs/fuzz.md)
#   make fuzz-dist the targets, their corpora and libraries as one tarball for another machine
#   make faults    kill -9 at KILL_POINTS random points of a scripted session (docs/faults.md)
#   make V=1       show full commands
.DEFAULT_GOAL := all

CC        ?= gcc
CUDA_HOME ?= /usr/local/cuda
B         := build
DEPS      := $(B)/deps

ifeq ($(V),1)
Q :=
else
Q := @
endif

PKGS   := ncursesw jansson libcrypto
CSTD   := -std=c11 -D_DEFAULT_SOURCE -D_XOPEN_SOURCE=600
WARN   := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
CFLAGS ?= -O2 -g
# src/shim: an empty <string> so that cupti_profiler_host.h compiles as C
# (gpu-apis.md §0).
CFLAGS += $(CSTD) $(WARN) -MMD -MP -Isrc/shim -I$(CUDA_HOME)/include -I$(TS_INC)
TS_INC := $(DEPS)/tree-sitter/lib/include

# Every CUDA library is dlopen()ed when it is needed: libcuda, CUPTI and NVML
# so that kbench starts and compiles on machines with no driver, NVRTC and
# nvJitLink (about 100 MB each) so that only a compile that misses the cache
# loads them.  src/compile/toolkit.c looks in $CUDA_HOME, then in the
# toolkit built against (this CUDA_HOME), then on the loader's search path.
TOOLKIT_DEF := -DKB_CUDA_HOME='"$(CUDA_HOME)"'
# Bundled libraries (make dist) sit in lib/ beside bin/; DT_RPATH, not
# RUNPATH, so that their own dependencies are found there too.
RPATH := -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/lib',-rpath,'$$ORIGIN/../lib'

# libgit2 and its chain statically (deps.md): GPU machines have no libgit2.
STATIC_LIBS := -Wl,-Bstatic -ljansson -lgit2 -lmbedtls -lmbedx509 -lmbedcrypto -lhttp_parser \
	       -lssh2 -lpcre2-8 -lz -Wl,-Bdynamic -l:libgssapi_krb5.so.2 -lrt
TUI_LIBS := -lncursesw -ltinfo
LDLIBS := $(RPATH) $(STATIC_LIBS) -lcrypto -ldl -lm -lpthread $(TUI_LIBS)

# ---- sources --------------------------------------------------------------
LIB_DIRS := core spec tile tilegen compile tensor reference gpu counters ceilings measure runner diff session llm_bridge report app tui
LIB_SRC  := $(foreach d,$(LIB_DIRS),$(wildcard src/$(d)/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/obj/%.o)
TS_OBJ   := $(B)/ts/runtime.o $(B)/ts/cuda_parser.o $(B)/ts/cuda_scanner.o $(B)/ts/hl_queries.o \
	    $(B)/ts/pyref_server_py.o $(B)/ts/kernelbench_open_py.o
LIB      := $(B)/libkb.a

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
ASAN_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/asan/tests/%)
ASAN_OBJ := $(LIB_SRC:%.c=$(B)/asan/obj/%.o)
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# clang where there is one: its ASan and UBSan are one runtime, so UBSan's
# reports follow log_path too (tests/sanitize.sh needs them in files: the
# TUI's and the runners' stderr are a terminal or /dev/null); GCC 12's
# libubsan, loaded beside libasan, ignores log_path and writes to stderr.
ifeq ($(origin ASAN_CC),undefined)
ASAN_CC := $(if $(shell command -v clang 2>/dev/null),clang,$(CC))
endif

VERSION  := $(shell sed -n 's/.*KB_VERSION "\(.*\)"/\1/p' src/core/kb.h)

all: deps $(B)/kbench $(B)/kbench-tui

# ---- dependencies ---------------------------------------------------------
# Debian packages, installed only when pkg-config cannot find them.
APT_PKGS := pkg-config libncurses-dev libgit2-dev libcurl4-openssl-dev libjansson-dev libssl-dev \
            python3-numpy tmux git chromium openssh-server openssh-client
TS_VERSION      := 0.25.1
TS_SHA256       := 07aeba8dd71630e7e72b2d4ca3bd2680c3471824100cc5ebff44e78a6ed0b6d3
TSCUDA_VERSION  := 0.21.1
TSCUDA_SHA256   := 53b5c000d5a61618a2ec614adcd94cfd9d5a2e8f6cf61258b623a130507542a4
TSC_VERSION     := 0.24.1
TSC_SHA256      := 8e9ecd7687665d2fa1b3c07fbd1f4380b7d285850d6954629e2156e1b757451e
TSCPP_VERSION   := 0.23.4
TSCPP_SHA256    := 615d152f70e7a6bed8f15a93c3c0c264c40dc71c1b6a1445646fff9439e776bc

deps: $(DEPS)/.apt $(DEPS)/tree-sitter/.ok $(DEPS)/tree-sitter-cuda/.ok \
      $(DEPS)/tree-sitter-c/.ok $(DEPS)/tree-sitter-cpp/.ok

$(DEPS)/.apt:
	$(Q)mkdir -p $(DEPS)
	$(Q)if ! pkg-config --exists ncursesw jansson libgit2 libcurl libcrypto 2>/dev/null || \
	   ! /usr/bin/python3 -c 'import numpy' 2>/dev/null || ! command -v chromium >/dev/null || \
	   ! [ -x /usr/sbin/sshd ]; then \
	  echo "APT   $(APT_PKGS)"; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	  $$SUDO apt-get install -y -qq --no-install-recommends $(APT_PKGS) >/dev/null; \
	fi
	$(Q)touch $@

# npm pack fetches the tarball only (no install scripts, no node-gyp); we build the C.
$(DEPS)/tree-sitter/.ok:
	$(Q)scripts/fetch-npm.sh tree-sitter $(TS_VERSION) $(TS_SHA256) $(DEPS)/tree-sitter \
	  package/vendor/tree-sitter/lib package/LICENSE
	$(Q)touch $@

$(DEPS)/tree-sitter-cuda/.ok:
	$(Q)scripts/fetch-npm.sh tree-sitter-cuda $(TSCUDA_VERSION) $(TSCUDA_SHA256) \
	  $(DEPS)/tree-sitter-cuda package/src package/queries package/LICENSE
	$(Q)touch $@

# Only the highlight queries: the CUDA grammar's parser.c already holds C and C++.
$(DEPS)/tree-sitter-c/.ok:
	$(Q)scripts/fetch-npm.sh tree-sitter-c $(TSC_VERSION) $(TSC_SHA256) \
	  $(DEPS)/tree-sitter-c package/queries package/LICENSE
	$(Q)touch $@

$(DEPS)/tree-sitter-cpp/.ok:
	$(Q)scripts/fetch-npm.sh tree-sitter-cpp $(TSCPP_VERSION) $(TSCPP_SHA256) \
	  $(DEPS)/tree-sitter-cpp package/queries package/LICENSE
	$(Q)touch $@

# ---- tree-sitter runtime and the CUDA grammar (compiled once) -------------
TS_CFLAGS := -std=c11 -O2 -D_POSIX_C_SOURCE=200112L -D_DEFAULT_SOURCE -w
$(B)/ts/runtime.o: $(DEPS)/tree-sitter/.ok
	@mkdir -p $(@D)
	@echo "CC    tree-sitter runtime"
	$(Q)$(CC) $(TS_CFLAGS) -I$(DEPS)/tree-sitter/lib/include -I$(DEPS)/tree-sitter/lib/src \
	  -c $(DEPS)/tree-sitter/lib/src/lib.c -o $@
$(B)/ts/cuda_parser.o: $(DEPS)/tree-sitter-cuda/.ok
	@mkdir -p $(@D)
	@echo "CC    tree-sitter-cuda grammar (takes a few seconds, once)"
	$(Q)$(CC) $(TS_CFLAGS) -I$(DEPS)/tree-sitter-cuda/src -c $(DEPS)/tree-sitter-cuda/src/parser.c -o $@
$(B)/ts/cuda_scanner.o: $(DEPS)/tree-sitter-cuda/.ok
	@mkdir -p $(@D)
	$(Q)$(CC) $(TS_CFLAGS) -I$(DEPS)/tree-sitter-cuda/src -c $(DEPS)/tree-sitter-cuda/src/scanner.c -o $@

# The grammars' queries/highlights.scm embedded as C strings (name, text, ...,
# NULL; C, C++, CUDA in that order), so the TUI needs no files at run time.
HL_GRAMMARS := c cpp cuda
$(B)/ts/hl_queries.c: $(HL_GRAMMARS:%=$(DEPS)/tree-sitter-%/.ok)
	@mkdir -p $(@D)
	@echo "GEN   $@"
	$(Q){ echo '/* Generated by the Makefile from queries/highlights.scm; do not edit. */'; \
	  echo 'const char *const kb_tui__hl_queries[] = {'; \
	  for g in $(HL_GRAMMARS); do \
	    echo "\"tree-sitter-$$g queries/highlights.scm\", \"\""; \
	    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' \
	      $(DEPS)/tree-sitter-$$g/queries/highlights.scm || exit 1; \
	    echo ','; \
	  done; \
	  echo '0};'; } > $@.tmp && mv $@.tmp $@
$(B)/ts/hl_queries.o: $(B)/ts/hl_queries.c
	$(Q)$(CC) $(TS_CFLAGS) -c $< -o $@

# Python that kbench runs (src/reference/pyref_server.py, the reference
# server; src/app/kernelbench_open.py) as C strings kb_NAME_py, so a runner
# needs no file of ours at run time.
vpath %.py src/reference src/app
$(B)/ts/%_py.c: %.py
	@mkdir -p $(@D)
	@echo "GEN   $@"
	$(Q){ echo '/* Generated by the Makefile from $<; do not edit. */'; \
	  echo 'const char kb_$*_py[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< || exit 1; \
	  echo ';'; } > $@.tmp && mv $@.tmp $@
$(B)/ts/%_py.o: $(B)/ts/%_py.c
	$(Q)$(CC) $(TS_CFLAGS) -c $< -o $@

# ---- library and programs -------------------------------------------------
$(B)/obj/%.o: %.c | $(DEPS)/.apt $(DEPS)/tree-sitter/.ok
	@mkdir -p $(@D)
	@echo "CC    $<"
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(B)/obj/src/compile/toolkit.o $(B)/asan/obj/src/compile/toolkit.o: CFLAGS += $(TOOLKIT_DEF)

$(LIB): $(LIB_OBJ) $(TS_OBJ)
	@echo "AR    $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/kbench: $(B)/obj/src/cli/kbench.o $(B)/obj/src/cli/kbench_llm.o $(B)/obj/src/cli/kbench_session.o \
	     $(B)/obj/src/cli/kbench_target.o $(B)/obj/src/cli/kbench_out.o \
	     $(B)/obj/src/cli/kbench_tools.o $(LIB)
	@echo "LD    $@"
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(B)/kbench-tui: $(B)/obj/src/cli/kbench_tui.o $(LIB)
	@echo "LD    $@"
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS) $(TUI_LIBS)

# ---- tests ----------------------------------------------------------------
$(B)/obj/tests/%.o: tests/%.c | $(DEPS)/.apt $(DEPS)/tree-sitter/.ok
	@mkdir -p $(@D)
	@echo "CC    $<"
	$(Q)$(CC) $(CFLAGS) -Itests -c $< -o $@

$(B)/tests/%: $(B)/obj/tests/unit/%.o $(LIB)
	@mkdir -p $(@D)
	@echo "LD    $@"
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(B)/asan/obj/%.o: %.c | $(DEPS)/.apt $(DEPS)/tree-sitter/.ok
	@mkdir -p $(@D)
	@echo "CC    $< (asan)"
	$(Q)$(ASAN_CC) $(CFLAGS) -Itests $(ASAN_FLAGS) -c $< -o $@

$(B)/asan/tests/%: $(B)/asan/obj/tests/unit/%.o $(ASAN_OBJ) $(TS_OBJ)
	@mkdir -p $(@D)
	@echo "LD    $@"
	$(Q)$(ASAN_CC) $(CFLAGS) $(ASAN_FLAGS) $^ -o $@ $(LDLIBS)

# The programs once more under ASan+UBSan, side by side (kbench-tui starts
# the kbench beside it): tests/run.sh runs the CLI scripts against them too.
ASAN_PROGS := $(B)/asan/kbench $(B)/asan/kbench-tui
$(B)/asan/kbench: $(B)/asan/obj/src/cli/kbench.o $(B)/asan/obj/src/cli/kbench_llm.o \
		  $(B)/asan/obj/src/cli/kbench_session.o $(B)/asan/obj/src/cli/kbench_target.o \
		  $(B)/asan/obj/src/cli/kbench_out.o $(B)/asan/obj/src/cli/kbench_tools.o \
		  $(ASAN_OBJ) $(TS_OBJ)
	@echo "LD    $@"
	$(Q)$(ASAN_CC) $(CFLAGS) $(ASAN_FLAGS) $^ -o $@ $(LDLIBS)

$(B)/asan/kbench-tui: $(B)/asan/obj/src/cli/kbench_tui.o $(ASAN_OBJ) $(TS_OBJ)
	@echo "LD    $@"
	$(Q)$(ASAN_CC) $(CFLAGS) $(ASAN_FLAGS) $^ -o $@ $(LDLIBS) $(TUI_LIBS)

# ---- fuzzing (docs/fuzz.md) ----------------------------------------------
# libFuzzer targets tests/fuzz/fuzz_*.c, built with clang against the library
# compiled once more with coverage hooks (fuzzer-no-link) and ASan+UBSan.
FUZZ_CC    := clang
FUZZ_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	      -fno-sanitize-recover=all
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN   := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
FUZZ_OBJ   := $(LIB_SRC:%.c=$(B)/fuzz/obj/%.o)
FUZZ_LIB   := $(B)/fuzz/libkb.a
FUZZ_SECONDS ?= 10
FUZZ_JOBS    ?= 1
# Whether clang can link a libFuzzer program here (evaluated only when used).
FUZZ_OK = $(shell printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\n{ return 0; }\n' | \
	    $(FUZZ_CC) -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null && echo 1)

$(B)/fuzz/obj/%.o: %.c | $(DEPS)/.apt $(DEPS)/tree-sitter/.ok
	@mkdir -p $(@D)
	@echo "CC    $< (fuzz)"
	$(Q)$(FUZZ_CC) $(CFLAGS) -Itests $(FUZZ_FLAGS) -c $< -o $@

$(B)/fuzz/obj/src/compile/toolkit.o: CFLAGS += $(TOOLKIT_DEF)

$(FUZZ_LIB): $(FUZZ_OBJ)
	@echo "AR    $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/fuzz/fuzz_%: $(B)/fuzz/obj/tests/fuzz/fuzz_%.o $(FUZZ_LIB) $(TS_OBJ)
	@echo "LD    $@"
	$(Q)$(FUZZ_CC) $(CFLAGS) -fsanitize=fuzzer,address,undefined $^ -o $@ $(LDLIBS)

fuzz-bins: $(FUZZ_BIN)
	@:

fuzz-build: deps
	$(Q)if [ -n "$(FUZZ_OK)" ]; then $(MAKE) --no-print-directory fuzz-bins; \
	else echo "fuzz: $(FUZZ_CC) cannot link -fsanitize=fuzzer here; targets not built"; fi

# Every target FUZZ_SECONDS seconds; fails on a crash and names its reproducer.
fuzz: fuzz-build
	$(Q)tests/fuzz/run.sh -j $(FUZZ_JOBS) $(FUZZ_SECONDS)

# The targets (with their debug info: file:line in a stack trace), every
# shared library they load but glibc's (in build/lib, which run.sh puts on
# LD_LIBRARY_PATH), run.sh and the corpora, and a Makefile whose `make fuzz
# FUZZ_SECONDS=600` runs every target at once, one per core (docs/fuzz.md).
FUZZ_DIST := $(B)/fuzz-dist/kbench-fuzz-$(VERSION)
fuzz-dist: deps
	$(Q)$(MAKE) --no-print-directory fuzz-bins
	@echo "DIST  $(FUZZ_DIST).tar.gz"
	$(Q)rm -rf $(FUZZ_DIST) && mkdir -p $(FUZZ_DIST)/build/fuzz $(FUZZ_DIST)/build/lib $(FUZZ_DIST)/tests/fuzz
	$(Q)cp $(FUZZ_BIN) $(FUZZ_DIST)/build/fuzz/
	$(Q)cp -R tests/fuzz/run.sh tests/fuzz/corpus $(FUZZ_DIST)/tests/fuzz/
	$(Q)cp tests/fuzz/dist.mk $(FUZZ_DIST)/Makefile
	$(Q)cp docs/fuzz.md $(FUZZ_DIST)/
	$(Q)scripts/bundle-libs.sh --all $(FUZZ_DIST)/build/lib $(FUZZ_BIN) >/dev/null
	$(Q)tar czf $(FUZZ_DIST).tar.gz -C $(dir $(FUZZ_DIST)) $(notdir $(FUZZ_DIST))
	@ls -la $(FUZZ_DIST).tar.gz

# kill -9 of the CLI, the runner and the TUI at KILL_POINTS random points of
# a scripted session, each followed by git fsck, kbench log and the journal
# (docs/faults.md); KILL_SEED=S replays a run's plan.  Needs tmux and git.
KILL_POINTS ?= 200
faults: all
	$(Q)python3 tests/faults/kill_points.py -n $(KILL_POINTS) $(if $(KILL_SEED),--seed $(KILL_SEED))

# The README's first command: build, then the main job on the example kernel
# (compile everywhere; check + time + ceilings where a GPU is present).
demo: all
	$(Q)$(B)/kbench compile kernels/softmax.cu
	$(Q)if $(B)/kbench devices >/dev/null 2>&1; then \
	  echo; $(B)/kbench run kernels/softmax.cu; \
	else \
	  echo; echo "(no GPU here: \`kbench run\` checks and times kernels on a machine with one)"; \
	fi

# The host emulator (tests/emu/README.md): its driver, and the runtime that
# every kernel it builds links (position-independent: kernels are loaded
# as shared objects).
EMU_BIN := $(B)/emu/tile_emu
EMU_RT  := $(B)/emu/cuda_emu.o
EMU_OBJ := $(B)/obj/tests/emu/tile_emu.o $(B)/obj/tests/emu/emu_source.o $(B)/obj/tests/emu/emu_report.o

EMU_RT_PARTS := $(B)/emu/rt/cuda_emu.o $(B)/emu/rt/ptx_emu.o $(B)/emu/rt/mbar_emu.o $(B)/emu/rt/tma_emu.o

$(B)/emu/rt/%.o: tests/emu/%.cpp tests/emu/cuda_emu.h tests/emu/cuda_emu_int.h tests/emu/emu.h
	@mkdir -p $(@D)
	@echo "CXX   $<"
	$(Q)$(CXX) -std=c++17 -O2 -g -fPIC -Wall -Wextra -Werror -c $< -o $@

# one object the driver hands to g++ with each kernel
$(EMU_RT): $(EMU_RT_PARTS)
	@echo "LD -r $@"
	$(Q)$(LD) -r $^ -o $@

$(EMU_BIN): $(EMU_OBJ) $(LIB)
	@mkdir -p $(@D)
	@echo "LD    $@"
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# The runtime's own unit tests (C++, run by tests/run.sh like the others).
$(B)/tests/test_emu_runtime: tests/emu/test_emu_runtime.cpp $(EMU_RT) tests/t.h
	@mkdir -p $(@D)
	@echo "CXX   $<"
	$(Q)$(CXX) -std=c++17 -O1 -g -Wall -Wextra -Werror -Itests -Itests/emu $< $(EMU_RT) -o $@

build-tests: all $(UNIT_BIN) $(EMU_BIN) $(EMU_RT) $(B)/tests/test_emu_runtime \
	     $(B)/remote/remote_drop $(B)/remote/remote_bench

build-sanitize: build-tests $(ASAN_BIN) $(ASAN_PROGS)
	$(Q)$(MAKE) --no-print-directory fuzz-build

# Driven by tests/cli/remote.sh and bench/remote_overhead.sh through their
# loopback sshd (not run alone).
$(B)/remote/%: $(B)/obj/tests/remote/%.o $(LIB)
	@mkdir -p $(@D)
	@echo "LD    $@"
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# The builds below use every core unless make was given -j; tests/run.sh
# runs that many test programs at once.
JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))

test: deps
	$(Q)$(MAKE) --no-print-directory $(JOBS) build-tests
	$(Q)tests/run.sh

# CI (.ci/run), after make test: the same once more under ASan+UBSan and
# valgrind, and the fuzz targets briefly (tests/run.sh sanitize).
test-sanitize: deps
	$(Q)$(MAKE) --no-print-directory $(JOBS) build-sanitize
	$(Q)tests/run.sh sanitize

test-gpu: deps
	$(Q)$(MAKE) --no-print-directory $(JOBS) build-tests
	$(Q)KBENCH_REQUIRE_GPU=1 tests/run.sh

asan: $(ASAN_BIN) $(ASAN_PROGS)

# A relocatable bundle for GPU machines that have the driver and toolkit but
# none of our -dev packages: the programs, the test programs, and every
# shared library they need that a stock Ubuntu + CUDA image lacks.
DIST := $(B)/dist/kbench-$(VERSION)
dist: all $(UNIT_BIN) $(EMU_BIN) $(EMU_RT) $(B)/remote/remote_drop $(B)/remote/remote_bench
	@echo "DIST  $(DIST).tar.gz"
	$(Q)rm -rf $(DIST) && mkdir -p $(DIST)/build/tests $(DIST)/build/lib $(DIST)/build/emu \
	  $(DIST)/build/remote
	$(Q)cp $(B)/remote/remote_drop $(B)/remote/remote_bench $(DIST)/build/remote/
	$(Q)cp $(B)/kbench $(B)/kbench-tui $(DIST)/build/
	$(Q)(git describe --always --dirty --abbrev=7 2>/dev/null || echo unknown) >$(DIST)/build/COMMIT
	$(Q)cp $(UNIT_BIN) $(DIST)/build/tests/
	$(Q)cp $(EMU_BIN) $(EMU_RT) $(DIST)/build/emu/
	$(Q)scripts/bundle-libs.sh $(DIST)/build/lib $(B)/kbench $(B)/kbench-tui $(UNIT_BIN) $(EMU_BIN)
	$(Q)tar czf $(DIST).tar.gz -C $(DIST) build
	@ls -la $(DIST).tar.gz

# Each folder includes other folders only through their one header (style rule 1).
check-includes:
	$(Q)! grep -rnE '#include "\.\./[a-z_]+/[a-z_]+\.h"' src | \
	  awk -F'[/"]' '{ split($$0,a,"#include \"../"); split(a[2],b,"/"); \
	    hdr=b[2]; sub(/\.h".*/,"",hdr); if (hdr != b[1] && hdr != "kb") print }' | grep .

clean:
	rm -rf $(B)/obj $(B)/asan $(B)/fuzz $(B)/tests $(B)/emu $(B)/ts $(B)/kbench $(B)/kbench-tui $(LIB)

distclean:
	rm -rf $(B)

.PHONY: all demo deps test test-sanitize test-gpu build-tests build-sanitize asan fuzz fuzz-build fuzz-bins fuzz-dist faults dist check-includes clean distclean
.SECONDARY:

-include $(shell find $(B)/obj $(B)/asan $(B)/fuzz/obj -name '*.d' 2>/dev/null)
