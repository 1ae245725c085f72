#!/bin/sh
# remote_overhead.sh - per-request overhead of `--remote` over loopback ssh
# against the local runner (issue 17's target: <= 30 ms per request beyond
# the local runner's).  Starts a throw-away sshd on 127.0.0.1 (lib_sshd.sh),
# then build/remote/remote_bench makes N run requests of KERNEL through one
# warm local runner and through one warm `ssh kbtest kbench serve`.  On a
# GPU machine both run the kernel (check + time); without one both answer
# NO GPU, which still measures the transport.  Usage (from the checkout):
#   sh bench/remote_overhead.sh [N] [KERNEL]    (default 20 kernels/vector_add.cu)
cd "$(dirname "$0")/.." || exit 1
N=${1:-20}
K=${2:-kernels/vector_add.cu}
. tests/cli/lib.sh
. tests/cli/lib_sshd.sh
[ -n "${SSHD_PID:-}" ] || { echo "no sshd: make deps installs openssh-server"; exit 1; }
export KBENCH_SSH="ssh -F $D/ssh_config"
export KBENCH_REMOTE_CMD="$KB serve"
for i in $(seq 50); do ssh -F "$D/ssh_config" kbtest true 2>/dev/null && break; sleep 0.1; done
# the remote user needs to read the kernel and run build/kbench (a checkout
# under a world-readable path; CUDA caches go to that user's home)
build/remote/remote_bench kbtest "$N" "$K"
