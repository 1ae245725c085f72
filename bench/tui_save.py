#!/usr/bin/env python3
"""tui_save.py - save -> result latency of kbench-tui, as a user sees it.

kbench-tui runs in a real terminal (tmux) on a copy of a kernel file.  Each
save types one character into the file's first comment line (so every save
is a new text: a compile miss, a new variant) and presses Ctrl-S; the
screen is then read (tmux capture-pane) every few milliseconds until
  verdict: the title shows the new verdict ("[CORRECT]") with the run over
           (no run phase left in the title), and
  time:    the Summary pane shows the new run's "us median" line,
both counted from the moment Ctrl-S was sent.  The first save warms the
runner and is not counted.  Prints each save and the median/min/max.

Usage: bench/tui_save.py [FILE] [SAVES]   (repo root, on a GPU machine)
"""
import os, re, shutil, statistics, subprocess, sys, tempfile, time

TUI = os.environ.get("TUI", os.path.abspath("build/kbench-tui"))
src = sys.argv[1] if len(sys.argv) > 1 else "kernels/softmax.cu"
saves = int(sys.argv[2]) if len(sys.argv) > 2 else 12
tmp = tempfile.mkdtemp()
env = dict(os.environ, TMUX_TMPDIR=tmp)
S = "save"
kfile = os.path.join(tmp, os.path.basename(src))
shutil.copy(src, kfile)


def tmux(*args):
    return subprocess.run(["tmux", *args], env=env, capture_output=True, text=True).stdout


def screen():
    return tmux("capture-pane", "-p", "-t", S)


RUN_PHASES = re.compile(r"(compil|check|tim|reference|queued|running|load|fill|counter|profil|open|hot|calibrat)")


def title_state(scr):
    first = scr.split("\n", 1)[0]
    m = re.search(r"\[([A-Z ]*)\]\s+(.*)$", first)
    return (m.group(1), m.group(2).strip()) if m else ("", first)


def wait_result(t0, timeout=30.0):
    """(verdict_s, time_s, screen) after a save sent at t0."""
    busy = False
    t_verdict = t_time = None
    while time.monotonic() - t0 < timeout:
        scr = screen()
        now = time.monotonic() - t0
        verdict, state = title_state(scr)
        if RUN_PHASES.search(state) or verdict in ("compiled",):
            busy = True
        if busy and verdict and verdict not in ("compiled", "errors") and not RUN_PHASES.search(state):
            t_verdict = t_verdict or now
            if "us median" in scr:
                t_time = now
                return t_verdict, t_time, scr
        time.sleep(0.004)
    return t_verdict, t_time, screen()


def main():
    cmd = (f"cd {tmp} && XDG_DATA_HOME={tmp}/data XDG_CACHE_HOME={tmp}/cache "
           f"TERM=screen-256color {TUI} {os.path.basename(kfile)}; sleep 3")
    tmux("new-session", "-d", "-s", S, "-x", "200", "-y", "50", cmd)
    time.sleep(1.5)
    print(f"kbench-tui save -> result  {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}  "
          f"{os.path.basename(src)}  {saves} saves (the first not counted)")
    verdicts, times = [], []
    for i in range(saves + 1):
        tmux("send-keys", "-t", S, "C-g")
        tmux("send-keys", "-t", S, "1", "Enter")
        tmux("send-keys", "-t", S, "End")
        tmux("send-keys", "-t", S, "-l", "x")
        time.sleep(0.3)
        t0 = time.monotonic()
        tmux("send-keys", "-t", S, "C-s")
        tv, tt, scr = wait_result(t0)
        label = "warm-up" if i == 0 else f"save {i}"
        print(f"  {label:8s} verdict {tv * 1e3 if tv else float('nan'):7.0f} ms   "
              f"time on screen {tt * 1e3 if tt else float('nan'):7.0f} ms   [{title_state(scr)[0]}]")
        if i > 0 and tv and tt:
            verdicts.append(tv * 1e3)
            times.append(tt * 1e3)
        time.sleep(0.5)
    open(os.path.join(os.environ.get("OUT", tmp), "tui_save_last_screen.txt"), "w").write(scr)
    tmux("send-keys", "-t", S, "C-q")
    time.sleep(0.3)
    tmux("kill-server")
    for name, v in (("save -> verdict", verdicts), ("save -> time on screen", times)):
        if v:
            print(f"{name:24s} median {statistics.median(v):6.0f} ms  min {min(v):6.0f}  max {max(v):6.0f}  (n={len(v)})")
        else:
            print(f"{name:24s} no result seen")
    shutil.rmtree(tmp, ignore_errors=True)


main()
