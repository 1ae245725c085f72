#!/bin/sh
# gpu-remote.sh - on a GPU machine, from a working tree with the `make dist`
# tarball: unpack the build, then measure --remote over a loopback sshd
# (bench/remote_overhead.sh) and run the remote tests.  Needs
# openssh-server, or where there is none the bundle of
# scripts/bundle-sshd.sh carried as build/sshd.  Output to stdout and, with $OUT, $OUT/*.log.
set -u
cd "$(dirname "$0")/.."
tar xzf build/dist/kbench-*.tar.gz
OUT=${OUT:-/tmp}
# no sshd there and nothing to install: carry this machine's
# (scripts/bundle-sshd.sh, carry build/sshd)
[ -x /usr/sbin/sshd ] || . build/sshd/env.sh
chmod -R a+rX . 2>/dev/null
build/kbench devices 2>&1 | tee "$OUT/devices.log"
for k in kernels/vector_add.cu kernels/softmax.cu; do
	sh bench/remote_overhead.sh 20 "$k" 2>&1 | tee -a "$OUT/remote_overhead.log"
done
sh tests/cli/remote.sh 2>&1 | tee "$OUT/remote_tests.log"
