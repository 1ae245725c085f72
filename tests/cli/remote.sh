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

SSHD=/usr/sbin/sshd
if [ ! -x "$SSHD" ] || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
	skip remote_sshd "no openssh-server here (make deps installs it)"
	finish; exit
fi
D=$T_TMP/ssh
mkdir -p "$D" "$D/stall" && chmod 755 "$T_TMP" "$D" && chmod 777 "$D/stall"
if [ "$(id -u)" = 0 ]; then
	U=kbench-remote-test
	id "$U" >/dev/null 2>&1 || useradd -m -s /bin/sh "$U" || { fail remote_user "useradd failed"; finish; exit; }
	# useradd leaves the account locked ("!"), which sshd refuses without
	# PAM; "*" unlocks it for keys while no password can match
	usermod -p '*' "$U"
	mkdir -p /run/sshd && chmod 755 /run/sshd
else
	U=$(id -un)
fi
ssh-keygen -q -t ed25519 -N '' -f "$D/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$D/user_key"
cp "$D/user_key.pub" "$D/authorized_keys" && chmod 644 "$D/authorized_keys"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$D/sshd_config" <<CFG
ListenAddress 127.0.0.1
Port $PORT
HostKey $D/host_key
AuthorizedKeysFile $D/authorized_keys
PidFile $D/sshd.pid
AllowUsers $U
PermitRootLogin no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
StrictModes no
UsePAM no
CFG
"$SSHD" -D -f "$D/sshd_config" -E "$D/sshd.log" &
SSHD_PID=$!
trap 'kill $SSHD_PID 2>/dev/null; [ -n "${T_KEEP:-}" ] || rm -rf "$T_TMP"' EXIT
echo "[127.0.0.1]:$PORT $(cat "$D/host_key.pub")" >"$D/known_hosts"
cat >"$D/ssh_config" <<CFG
Host kbtest
  HostName 127.0.0.1
  Port $PORT
  User $U
  IdentityFile $D/user_key
  IdentitiesOnly yes
  UserKnownHostsFile $D/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
  LogLevel ERROR
CFG
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
