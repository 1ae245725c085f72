#!/bin/sh
# gpu-session.sh - a real tuning session on a GPU machine, for issue 4's
# evidence: in a throw-away git repository, run v1 (scalar loads), v2 (a
# comment), a broken edit, v3 (128-bit loads); then log, the SASS diff
# v1 -> v3, numbers, replay, and the report (HTML and Markdown) into $OUT.
set -u
cd "$(dirname "$0")/.."
KB=$PWD/build/kbench
S=$PWD/tests/fixtures/session
OUT=${OUT:-/tmp}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kbench-cache} XDG_DATA_HOME=/tmp/kbench-data
R=/tmp/kbench-session-repo
rm -rf "$R" && mkdir -p "$R/sub" && cd "$R" && git init -q -b main
cp "$S/v1.cu" sub/k.cu && git add . && git -c user.name=u -c user.email=u@u commit -qm "user's work"
"$KB" session new softmax-tuning >/dev/null 2>&1 || "$KB" session new "tuning-$(date +%s)"
"$KB" run sub/k.cu --no-sweep > "$OUT/session_runs.txt" 2>&1
cp "$S/v2.cu" sub/k.cu; "$KB" run sub/k.cu --no-sweep >> "$OUT/session_runs.txt" 2>&1
cp "$S/broken.cu" sub/k.cu; "$KB" compile sub/k.cu >> "$OUT/session_runs.txt" 2>&1
cp "$S/v3.cu" sub/k.cu; "$KB" run sub/k.cu --no-sweep >> "$OUT/session_runs.txt" 2>&1
"$KB" log > "$OUT/session_log.txt" 2>&1
"$KB" diff v1 v3 > "$OUT/session_diff_v1_v3.txt" 2>&1
id=$(sed -n 1p "$XDG_DATA_HOME/kbench/current")
"$KB" replay "$id" > "$OUT/session_replay.txt" 2>&1
"$KB" report "$id" -o "$OUT/report.html" > /dev/null 2>&1
"$KB" report "$id" -o "$OUT/report.md" > /dev/null 2>&1
git rev-list --count "refs/kbench/$id" > "$OUT/session_commits.txt"
cat "$OUT/session_log.txt" "$OUT/session_diff_v1_v3.txt" "$OUT/session_replay.txt" "$OUT/session_commits.txt"
