#!/bin/sh
# shared.sh - the shared runner (src/runner/shared.c): one warm `kbench
# serve --listen` reused by one-shot commands, one client at a time, one per
# executable and environment, gone when idle, never used under an injected
# tool or when told not to.  Forced on with KBENCH_SHARED_RUNNER=1 so that
# it runs without a GPU too (the runner then answers NO GPU, exit 3).
. tests/cli/lib.sh
export KBENCH_SHARED_RUNNER=1 CUDA_VISIBLE_DEVICES= # the same answers with or without a GPU
D=$XDG_RUNTIME_DIR/kbench
runners() { pgrep -f "serve --listen $T_TMP/" | sort; }
# hold LOCK: another client holds the runner's lock (held once this returns)
# until release; no sleep that a loaded machine could outlast
hold() {
	: >"$T_TMP/hold"; rm -f "$T_TMP/held"
	flock -n "$1" sh -c 'touch "$1/held"; while [ -f "$1/hold" ]; do sleep 0.1; done' sh "$T_TMP" &
	i=0; while [ ! -f "$T_TMP/held" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
}
release() { rm -f "$T_TMP/hold"; wait; }
# within SECONDS CMD...: CMD succeeds within SECONDS (polled)
within() {
	n=$(($1 * 10)); shift; i=0
	while [ $i -lt $n ]; do "$@" && return 0; sleep 0.1; i=$((i + 1)); done
	return 1
}
no_runners() { [ -z "$(runners)" ] && ! ls "$D"/runner-*.sock >/dev/null 2>&1; }
no_procs() { [ -z "$(runners)" ]; }
dead() { ! kill -0 "$1" 2>/dev/null; }

run "$KB" run kernels/vector_add.cu
expect_rc shared_first_run_answers 3
first=$(runners)
if [ -n "$first" ] && [ "$(echo "$first" | wc -l)" -eq 1 ] && ls "$D"/runner-*.sock >/dev/null 2>&1; then
	pass shared_runner_started
else
	fail shared_runner_started "runners: '$first', dir: $(ls -la "$D" 2>&1)"
fi
case $(stat -c %a "$D") in 700) pass shared_dir_private ;; *) fail shared_dir_private "$(stat -c %a "$D")" ;; esac

run "$KB" run kernels/vector_add.cu
expect_rc shared_second_run_answers 3
if [ "$(runners)" = "$first" ]; then pass shared_runner_reused; else fail shared_runner_reused "'$first' then '$(runners)'"; fi

# Another client holds it: this one runs a private worker and starts no other.
hold "$(ls "$D"/runner-*.lock)"
run "$KB" run kernels/vector_add.cu
expect_rc shared_busy_private_worker_answers 3
if [ "$(runners)" = "$first" ]; then pass shared_busy_no_second_runner; else fail shared_busy_no_second_runner "$(runners)"; fi
release

# Another environment is another runner (its answers may differ).
run env KBENCH_TEST_MARK=1 "$KB" run kernels/vector_add.cu
expect_rc shared_other_env_answers 3
if [ "$(runners | wc -l)" -eq 2 ] && [ "$(ls "$D"/runner-*.sock | wc -l)" -eq 2 ]; then
	pass shared_other_env_other_runner
else
	fail shared_other_env_other_runner "$(runners) / $(ls "$D")"
fi

# Killed (as the watchdog does to a hung one): the next command starts afresh.
kill -9 $first
within 20 dead $first
run "$KB" run kernels/vector_add.cu --json
expect_json shared_after_kill_answers "j['status'] == 'no_gpu'"
if runners | grep -qvx "$first" && ! runners | grep -qx "$first"; then pass shared_restarted_after_kill; else fail shared_restarted_after_kill "$(runners)"; fi
# Its log (its stderr) gets a line after each client: its resident memory
# and the reference cache's share of it.
if grep -q "after client 1, resident .* GiB (reference cache .* GiB)" "$D"/runner-*.log; then pass shared_log_memory
else fail shared_log_memory "$(tail -n 3 "$D"/runner-*.log)"; fi
# A runner that dies in a request: the client quotes its log's last line.
# (In a runtime folder of its own: its lock and socket stay behind, and the
# tests below take the first lock in $D for the runner's.)
mkdir -p "$T_TMP/run4" && chmod 700 "$T_TMP/run4"
run env XDG_RUNTIME_DIR="$T_TMP/run4" KBENCH_TEST_DIE_ON_RUN=1 "$KB" run kernels/vector_add.cu --json
expect_json shared_died_quotes_log "'ended without a result' in j['message'] and 'ends: \"kbench serve: KBENCH_TEST_DIE_ON_RUN, exiting\"' in j['message']"

# Relative paths are the client's, wherever the runner started.
mkdir -p "$T_TMP/elsewhere" && cp kernels/vector_add.cu "$T_TMP/elsewhere/k.cu"
(cd "$T_TMP/elsewhere" && "$KB" run k.cu --json > "$T_TMP/out" 2> "$T_TMP/err"); RC=$?
expect_json shared_client_cwd "j['status'] == 'no_gpu'"

# Not used when told not to, or under an injected tool (ncu, nsys,
# compute-sanitizer must see the kernels in their own process tree).
for how in KBENCH_NO_SHARED_RUNNER=1 CUDA_INJECTION64_PATH=/nonexistent/libinj.so \
	   NV_NSIGHT_INJECTION_TRANSPORT_TYPE=2; do
	before=$(runners | wc -l)
	run env XDG_RUNTIME_DIR="$T_TMP/run2" $how "$KB" run kernels/vector_add.cu
	if [ "$RC" -eq 3 ] && [ ! -e "$T_TMP/run2/kbench" ] && [ "$(runners | wc -l)" -eq "$before" ]; then
		pass "shared_not_used_${how%%=*}"
	else
		fail "shared_not_used_${how%%=*}" "rc $RC, $(ls "$T_TMP/run2" 2>&1), $(runners)"
	fi
done

# A runtime dir others may write to is not trusted.
mkdir -p "$T_TMP/run3/kbench" && chmod 777 "$T_TMP/run3/kbench"
run env XDG_RUNTIME_DIR="$T_TMP/run3" "$KB" run kernels/vector_add.cu
if [ "$RC" -eq 3 ] && ! ls "$T_TMP/run3/kbench"/*.sock >/dev/null 2>&1; then pass shared_untrusted_dir; else fail shared_untrusted_dir "rc $RC $(ls "$T_TMP/run3/kbench")"; fi

# `kbench serve --stop`: stops the ones no command uses, leaves a busy one.
run "$KB" run kernels/vector_add.cu
hold "$(ls "$D"/runner-*.lock | head -1)"
run "$KB" serve --stop
expect_in shared_stop_leaves_busy out "a kbench command is using it"
release
run "$KB" serve --stop
expect_in shared_stop_says out "stopped the shared runner pid"
# (it waits 2 s for each to go; an ASan runner's leak check at exit on a
# loaded machine may take longer)
if within 10 no_runners; then pass shared_stop_stops; else fail shared_stop_stops "$(runners) $(ls "$D")"; fi
run "$KB" serve --stop
expect_in shared_stop_none_left out "0 shared runners stopped"

# Idle: it leaves by itself and takes its socket away.
pkill -f "serve --listen $T_TMP/"; within 20 no_procs
rm -f "$D"/runner-*.sock # the names the killed ones left (a client would clear them too)
run env KBENCH_SHARED_IDLE=1 "$KB" run kernels/vector_add.cu
if ls "$D"/runner-*.sock >/dev/null 2>&1; then pass shared_idle_started; else fail shared_idle_started "$(ls "$D")"; fi
# gone 1 s after its last client (polled up to 10 s: well short of the 20 s
# default, and of the time a loaded machine may take)
if within 10 no_runners; then pass shared_idle_exit; else fail shared_idle_exit "$(runners) $(ls "$D")"; fi
# A pool (--gpus 0,1) keeps one shared runner per GPU, each with its GPU in
# its environment, reused by the next such command.  The GPUs are named by
# a CUDA_VISIBLE_DEVICES of ids no driver has (the runners answer NO GPU on
# any machine), GPU N being its N-th entry.
export CUDA_VISIBLE_DEVICES=nogpu-a,nogpu-b
before=$(runners)
run "$KB" run kernels/reduce/02_vec4.cu --gpus 0,1
expect_rc shared_gpus_answers 3
gpu_runners() { runners | grep -vxF "$before"; }
pool1=$(gpu_runners)
envs=$(for p in $pool1; do tr '\0' '\n' < /proc/$p/environ | grep '^CUDA_VISIBLE_DEVICES='; done | sort | tr '\n' ' ')
[ "$envs" = "CUDA_VISIBLE_DEVICES=nogpu-a CUDA_VISIBLE_DEVICES=nogpu-b " ] && pass shared_gpus_one_per_gpu \
	|| fail shared_gpus_one_per_gpu "runners '$pool1', environments '$envs'"
run "$KB" run kernels/reduce/02_vec4.cu --gpus 0,1
[ -n "$pool1" ] && [ "$(gpu_runners)" = "$pool1" ] && pass shared_gpus_reused \
	|| fail shared_gpus_reused "'$pool1' then '$(gpu_runners)'"

# Under a CUDA_VISIBLE_DEVICES of the user's own (a batch system's "3,5";
# here ids no driver has, so that nothing runs on a GPU machine either),
# GPU numbers are positions in it: worker 0 runs on its first entry, never
# on the machine's GPU 0 (another job's); `all` is its entries, counted
# without starting the driver here; a number past its end is refused at
# once, and so is any number under an empty one (every GPU hidden).
"$KB" serve --stop >/dev/null 2>&1
before=$(runners)
run env CUDA_VISIBLE_DEVICES="nogpu3, nogpu5" KBENCH_LOG="$T_TMP/cvd.log" "$KB" run kernels/reduce/02_vec4.cu --gpus all
expect_rc cvd_all_answers 3
envs=$(for p in $(gpu_runners); do tr '\0' '\n' < /proc/$p/environ | grep '^CUDA_VISIBLE_DEVICES='; done | sort | tr '\n' ' ')
[ "$envs" = "CUDA_VISIBLE_DEVICES=nogpu3 CUDA_VISIBLE_DEVICES=nogpu5 " ] && pass cvd_all_entries \
	|| fail cvd_all_entries "environments '$envs'"
grep -q "gpus: 2 named by CUDA_VISIBLE_DEVICES" "$T_TMP/cvd.log" && pass cvd_all_no_driver \
	|| fail cvd_all_no_driver "$(grep 'gpus:' "$T_TMP/cvd.log")"
"$KB" serve --stop >/dev/null 2>&1
run env CUDA_VISIBLE_DEVICES=nogpu3,nogpu5 "$KB" run kernels/reduce/02_vec4.cu --gpus 1
envs=$(for p in $(gpu_runners); do tr '\0' '\n' < /proc/$p/environ | grep '^CUDA_VISIBLE_DEVICES='; done | tr '\n' ' ')
[ "$envs" = "CUDA_VISIBLE_DEVICES=nogpu5 " ] && pass cvd_one_entry || fail cvd_one_entry "environments '$envs'"
run env CUDA_VISIBLE_DEVICES=nogpu3,nogpu5 "$KB" run kernels/reduce/02_vec4.cu --gpus 0,2
expect_rc cvd_past_end_rc 2
expect_in cvd_past_end_says err "--gpus 2: CUDA_VISIBLE_DEVICES='nogpu3,nogpu5' names 2 GPUs"
run env CUDA_VISIBLE_DEVICES= "$KB" run kernels/reduce/02_vec4.cu --gpus 0
expect_rc cvd_empty_rc 2
expect_in cvd_empty_says err "names no GPU"
run "$KB" run kernels/reduce/02_vec4.cu --gpus 0,x
expect_rc gpus_bad_rc 2
expect_in gpus_bad_says err "bad --gpus '0,x'"

"$KB" serve --stop >/dev/null 2>&1
finish
