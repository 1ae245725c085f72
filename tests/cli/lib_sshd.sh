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
	# useradd leaves the account locked ("!"), which sshd refuses without
	# PAM; "*" unlocks it for keys while no password can match.  One script
	# at a time (tests/run.sh runs remote.sh and faults.sh at once; a second
	# useradd fails, and so does a usermod while another holds the lock).
	flock /tmp/kbench-remote-user.lock sh -c \
		'id "$1" >/dev/null 2>&1 || useradd -m -s /bin/sh "$1" && usermod -p "*" "$1"' sh "$U" \
		|| { fail remote_user "useradd or usermod failed"; return 0; }
	mkdir -p /run/sshd && chmod 755 /run/sshd
else
	U=$(id -un)
fi
ssh-keygen -q -t ed25519 -N '' -f "$D/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$D/user_key"
cp "$D/user_key.pub" "$D/authorized_keys" && chmod 644 "$D/authorized_keys"
# The free port is picked before sshd takes it: where another program took
# it meanwhile, sshd exits and another port is tried.  Ready when a login
# works (up to 30 s: a loaded machine).
sshd_up() {
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
	i=0
	while [ $i -lt 300 ] && kill -0 "$SSHD_PID" 2>/dev/null; do
		ssh -F "$D/ssh_config" kbtest true 2>/dev/null && return 0
		sleep 0.1; i=$((i + 1))
	done
	kill "$SSHD_PID" 2>/dev/null; wait "$SSHD_PID" 2>/dev/null
	return 1
}
trap 'kill $SSHD_PID 2>/dev/null; [ -n "${T_KEEP:-}" ] || rm -rf "$T_TMP"' EXIT
tries=0
until sshd_up; do
	tries=$((tries + 1))
	if [ $tries -ge 3 ]; then
		fail remote_sshd "no login through sshd on 127.0.0.1 (3 ports tried): $(tail -5 "$D/sshd.log")"
		SSHD_PID=
		return 0
	fi
done
