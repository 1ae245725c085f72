#!/bin/sh
# remote.sh - `--remote HOST` through a real sshd on 127.0.0.1 (Debian's
# openssh-server, installed by `make deps`): a throw-away host key, user key
# and port, no root login.  Run as root (CI), sshd runs as root and the test
# logs in as an unprivileged user it creates; otherwise sshd runs as the
# current user and logs in as that user.  The remote `kbench serve` sees no
# GPU (CUDA_VISIBLE_DEVICES= there), so it answers NO GPU, exit 3, with its
# own reason; a connection cut mid-request is a result and the next request
# reconnects; a protocol mismatch is refused naming both versions.
. tests/cli/lib.sh

. tests/cli/lib_sshd.sh
if [ -z "${SSHD_PID:-}" ]; then finish; exit; fi
export KBENCH_SSH="ssh -F $D/ssh_config"
REMOTE_KB="env CUDA_VISIBLE_DEVICES= KBENCH_TEST_STALL=$D/stall/file $KB serve"
export KBENCH_REMOTE_CMD="$REMOTE_KB"
for i in $(seq 50); do ssh -F "$D/ssh_config" kbtest true 2>/dev/null && break; sleep 0.1; done

run "$KB" run kernels/vector_add.cu --remote kbtest --no-sweep
expect_rc remote_run_nogpu_rc 3
expect_in remote_run_nogpu out "NO GPU"
expect_in remote_run_names_host out "remote      kbtest (runner on"
cp "$D/sshd.log" "$T_TMP/sshd_log"
expect_in remote_logged_in_by_key sshd_log "Accepted publickey for $U"
run "$KB" run kernels/vector_add.cu --remote kbtest --json
expect_json remote_run_json "j['status'] == 'no_gpu' and len(j['message']) > 10 and j['remote']['host'] == 'kbtest' and j['remote']['runner']['protocol'] == 2"
run env KBENCH_REMOTE=kbtest "$KB" devices
expect_rc remote_env_devices_rc 3
run "$KB" compile kernels/vector_add.cu --remote kbtest
expect_rc remote_compile_nogpu_rc 3
expect_in remote_compile_reason err "NO GPU on kbtest (its runner says:"
run "$KB" compile kernels/vector_add.cu --remote kbtest --arch sm_90 --no-sass
expect_rc remote_compile_with_arch 0

# replay over a host's worker: the remote's own reason for having no GPU
run "$KB" replay sessions/reduce --file row_max.cu --hosts kbtest
expect_rc remote_replay_hosts_rc 3
expect_in remote_replay_hosts_says err "replay re-runs each variant on a GPU, and there is none here"

# a protocol mismatch, refused by either side, naming both numbers
run env KBENCH_REMOTE_CMD="env KBENCH_TEST_PROTOCOL=99 $REMOTE_KB" "$KB" run kernels/vector_add.cu --remote kbtest
expect_rc remote_mismatch_rc 3
expect_in remote_mismatch_refused out "PROTOCOL MISMATCH"
expect_in remote_mismatch_names_theirs out "speaks runner protocol 99"
expect_in remote_mismatch_names_ours out "speaks 2"
run env KBENCH_TEST_PROTOCOL=98 "$KB" run kernels/vector_add.cu --remote kbtest
expect_rc remote_mismatch_server_rc 3
expect_in remote_mismatch_server_refuses out "speaks runner protocol 2, the client"
expect_in remote_mismatch_server_names_theirs out "speaks 98"

# a connection cut mid-request: a result, then a reconnect
: >"$D/stall/file" && chmod 666 "$D/stall/file"
run build/remote/remote_drop kbtest "$D/stall/file"
expect_in remote_drop_reported out "call1 rc=0 status=disconnected"
expect_in remote_drop_names_host out "the connection to kbtest was lost"
expect_in remote_drop_recovered out "call2 rc=0 status=no_gpu starts=2"
expect_in remote_drop_stays out "call3 rc=0 status=no_gpu starts=2"
rm -f "$D/stall/file"

# kbench remote setup: a bundle copied, unpacked and answering
mkdir -p "$T_TMP/b/build" && cp "$KB" "$T_TMP/b/build/kbench" && tar czf "$T_TMP/b.tar.gz" -C "$T_TMP/b" build
run env KBENCH_REMOTE_CMD= "$KB" remote setup kbtest --bundle "$T_TMP/b.tar.gz"
expect_rc remote_setup_rc 0
expect_in remote_setup_unpacked out "unpacked in ~/.kbench/kbench-"
expect_in remote_setup_checked out "runner protocol 2"
finish
