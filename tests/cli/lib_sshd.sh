# lib_sshd.sh - a throw-away sshd on 127.0.0.1 (sourced after lib.sh, by
# tests/cli/remote.sh and bench/remote_overhead.sh).  It sets SSHD_PID (empty
# when there is no openssh-server), D (its folder: keys, configs, log) and
# U (the user it logs in as), and writes $D/ssh_config with the host
# "kbtest".  As root (CI), sshd runs as root, root may not log in, and the
# login is an unprivileged user made here; otherwise sshd runs as the
# current user and logs in as that user.
SSHD_PID=
SSHD=${KBENCH_SSHD:-/usr/sbin/sshd} # another openssh-server build: KBENCH_SSHD
if [ ! -x "$SSHD" ] || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
	skip remote_sshd "no openssh-server here (make deps installs it)"
	return 0
fi
D=$T_TMP/ssh
mkdir -p "$D" "$D/stall" && chmod 755 "$T_TMP" "$D" && chmod 777 "$D/stall"
if [ "$(id -u)" = 0 ]; then
	U=kbench-remote-test
	id "$U" >/dev/null 2>&1 || useradd -m -s /bin/sh "$U" || { fail remote_user "useradd failed"; return 0; }
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
