#!/bin/sh
# fake_ssh.sh - stands in for ssh ($KBENCH_SSH) in tests/cli/faults.sh: drops
# ssh's options and the host, and runs the remote command here, so that the
# "remote" can be any program: one whose shell prints a banner, one that
# breaks the protocol.  (tests/cli/remote.sh uses a real sshd.)
while [ $# -gt 1 ]; do shift; done
exec sh -c "$1"
