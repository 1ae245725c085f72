#!/bin/sh
# faults_kill.sh - kill -9 at 20 random points of a scripted session
# (tests/faults/kill_points.py; `make faults` runs 200, docs/faults.md):
# the CLI, the runner and the TUI killed mid-step, then git fsck clean,
# every committed variant listed by `kbench log`, the journal readable, and
# the next command working.  The seed is printed; KBENCH_KILL_SEED=S
# replays a run's plan, KBENCH_KILL_POINTS=N changes the count.
exec python3 tests/faults/kill_points.py -n "${KBENCH_KILL_POINTS:-20}" ${KBENCH_KILL_SEED:+--seed "$KBENCH_KILL_SEED"}
