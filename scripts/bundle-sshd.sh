#!/bin/sh
# bundle-sshd.sh [DEST] - this machine's OpenSSH (sshd, ssh, ssh-keygen) with
# the libraries a stock Ubuntu 24.04 + CUDA image lacks, for the GPU
# machines, which have no sshd and cannot install one: the loopback remote
# tests and bench/remote_overhead.sh use it there through
# `. DEST/env.sh` (KBENCH_SSHD, PATH).  Each program is a wrapper that sets
# LD_LIBRARY_PATH and execs the real one by its absolute path (sshd re-execs
# itself by that path and keeps the environment).  Default DEST build/sshd.
set -eu
dest=${1:-build/sshd}
rm -rf "$dest" && mkdir -p "$dest/bin" "$dest/libexec" "$dest/lib"
for p in /usr/sbin/sshd /usr/bin/ssh /usr/bin/ssh-keygen; do
	cp "$p" "$dest/libexec/"
done
scripts/bundle-libs.sh "$dest/lib" "$dest"/libexec/* >/dev/null
for p in sshd ssh ssh-keygen; do
	cat >"$dest/bin/$p" <<W
#!/bin/sh
d=\$(cd "\$(dirname "\$0")/.." && pwd)
LD_LIBRARY_PATH=\$d/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} exec "\$d/libexec/$p" "\$@"
W
	chmod 755 "$dest/bin/$p"
done
cat >"$dest/env.sh" <<'W'
# sourced: the bundled OpenSSH first on PATH, its sshd for lib_sshd.sh
b=$(cd "$(dirname "${KBENCH_SSH_BUNDLE:-build/sshd/env.sh}")" && pwd)
export KBENCH_SSHD=$b/bin/sshd PATH=$b/bin:$PATH
# sshd's privilege separation needs its user
id sshd >/dev/null 2>&1 || useradd -r -d /run/sshd -s /usr/sbin/nologin sshd 2>/dev/null || true
W
du -sh "$dest" | cut -f1
