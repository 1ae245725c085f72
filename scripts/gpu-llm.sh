#!/bin/sh
# gpu-llm.sh - issue 16's GPU evidence: `kbench optimize` on
# kernels/softmax.cu for 6 rounds with the scripted command provider
# (tests/fixtures/scripted-llm: a real improvement, then five reward hacks:
# output written on the first launch only, rows skipped on some launches,
# the previous launch's result copied, rows skipped where the output already
# holds values, rows skipped where the input is the last launch's).
# Expected: round 1 kept as the best, rounds 2-6 rejected with the reason
# kbench found (5 and 6 timed as doing the whole work: not faster).  Then the session's log
# and its report (Markdown and HTML) into $OUT.  The file is optimised in a
# copy; kernels/softmax.cu is never changed.  PROFILE=1 adds --profile (the
# prompts then carry counters and hot lines).
set -u
cd "$(dirname "$0")/.."
KB=$PWD/build/kbench
OUT=${OUT:-/tmp/kbench-llm}
mkdir -p "$OUT"
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kbench-cache} XDG_DATA_HOME=${XDG_DATA_HOME:-/tmp/kbench-llm-data}
W=$(mktemp -d /tmp/kbench-llm-work.XXXXXX)
mkdir -p "$W/kernels" && cp kernels/softmax.cu "$W/kernels/"
"$KB" session new "llm-softmax-$(date +%s)" >/dev/null
id=$(sed -n 1p "$XDG_DATA_HOME/kbench/current")
(cd "$W" && "$KB" optimize kernels/softmax.cu --rounds 6 --llm-cmd "$OLDPWD/tests/fixtures/scripted-llm" ${PROFILE:+--profile}) \
	> "$OUT/optimize.txt" 2>&1
echo "optimize exit status $?" >> "$OUT/optimize.txt"
"$KB" log "$id" > "$OUT/log.txt" 2>&1
"$KB" report "$id" -o "$OUT/report.md" > /dev/null 2>&1
"$KB" report "$id" -o "$OUT/report.html" > /dev/null 2>&1
cp "$W/kernels/softmax.cu" "$OUT/softmax.best.cu"
cat "$OUT/optimize.txt" "$OUT/log.txt"
sed -n '/## LLM rounds/,$p' "$OUT/report.md"
