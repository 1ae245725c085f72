# The Makefile of the fuzz bundle (`make fuzz-dist` in kbench's tree copies
# it in as Makefile): every libFuzzer target FUZZ_SECONDS seconds,
# FUZZ_JOBS of them at a time (default: one per core), then a table of each
# target's final coverage.  Crashes go to build/fuzz/artifacts/NAME/,
# what was found to build/fuzz/work/NAME/ (docs/fuzz.md here says more).
FUZZ_SECONDS ?= 10
FUZZ_JOBS ?= $(shell nproc 2>/dev/null || echo 1)

fuzz:
	@tests/fuzz/run.sh -j $(FUZZ_JOBS) $(FUZZ_SECONDS)

.PHONY: fuzz
