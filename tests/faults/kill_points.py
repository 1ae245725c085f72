#!/usr/bin/env python3
"""kill_points.py - SIGKILL at random points of a scripted kbench session.

A scripted tuning session (docs/faults.md) with no GPU: two kernel files,
sub/k.cu in a user's git repository (its variants on refs/kbench/<session>
there) and loose/k2.cu in none (the session's private repository).  Each
kill point runs one step of the session and kills, with SIGKILL after a
random delay, one of
  cli     `kbench compile` (a new text, compiled or a cache hit), `kbench
          run` (the runner stalled in its request), `label`, `note`,
          `session new`;
  runner  the `kbench serve` of a `kbench run` (private or the shared
          runner) or of the TUI, mid-start or mid-request;
  tui     kbench-tui in a real terminal (tmux) just after Ctrl-S.
After each point it checks, and any failure fails the point:
  fsck     `git fsck --strict` of every repository the sessions use is clean;
  listed   every variant git holds (the first-parent commits of the session
           ref that changed a file) is listed by `kbench log SESSION`, and
           the log lists no more;
  journal  journal.jsonl reads back: every line but a torn last one is a
           JSON object, and every commit a journal event names is on the ref;
           `kbench log` and `kbench sessions` read it without an error;
  next     the next command works: an un-killed `kbench compile` of a new
           text exits 0 and adds exactly one variant (no stale lock), and
           after a runner or `run` point an un-stalled `kbench run` answers
           NO GPU (exit 3) within 20 s.
Delays are uniform over each step's measured duration (measured first, and
printed), so kills land everywhere from process start to the last write.
The plan (target, step, delay fraction) comes from --seed alone; where a
kill lands in the code still depends on the machine's timing.

Usage: tests/faults/kill_points.py [-n POINTS] [--seed S] [--report FILE]
(from the repository root; KB and TUI name the binaries, default build/).
Prints one line per point, a summary, and "# passed=N failed=N skipped=N".
"""
import argparse, json, os, random, re, shutil, signal, subprocess, sys, tempfile, time

ROOT = os.getcwd()
# KBENCH_BIN_DIR: the programs under test (tests/sanitize.sh points it at
# the ASan+UBSan build)
BIN = os.environ.get("KBENCH_BIN_DIR") or os.path.join(ROOT, "build")
KB = os.environ.get("KB", os.path.join(BIN, "kbench"))
TUI = os.environ.get("TUI", os.path.join(BIN, "kbench-tui"))
FIX = os.path.join(ROOT, "tests/fixtures/session")
FILES = ("sub/k.cu", "loose/k2.cu")  # relative to work/repo and work


class Bench:
    """The scripted session's folders, environment and the commands it runs."""

    def __init__(self, keep):
        self.tmp = tempfile.mkdtemp(prefix="kbench-faults.")
        self.keep = keep
        self.work = os.path.join(self.tmp, "work")
        self.repo = os.path.join(self.work, "repo")
        self.stall = os.path.join(self.tmp, "stall")
        self.exported = os.path.join(self.work, "exported")  # `session export -o` here
        run_dir = os.path.join(self.tmp, "run")
        os.makedirs(run_dir, mode=0o700)
        self.env = dict(os.environ, XDG_DATA_HOME=os.path.join(self.tmp, "data"),
                        XDG_CACHE_HOME=os.path.join(self.tmp, "cache"), XDG_RUNTIME_DIR=run_dir,
                        TMUX_TMPDIR=self.tmp, GIT_CEILING_DIRECTORIES=self.tmp,
                        KBENCH_SHARED_IDLE="20", KBENCH_LOG=os.path.join(self.tmp, "kbench.log"), CUDA_VISIBLE_DEVICES="", TERM="screen-256color",
                        KBENCH_TEST_STALL=self.stall, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                        GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
        for k in ("KBENCH_NO_SESSION", "KBENCH_SESSION", "KBENCH_REMOTE", "KBENCH_SHARED_RUNNER"):
            self.env.pop(k, None)
        os.makedirs(os.path.join(self.repo, "sub"))
        os.makedirs(os.path.join(self.work, "loose"))
        self.texts = [open(os.path.join(FIX, f)).read() for f in ("v1.cu", "v2.cu", "v3.cu")]
        self.write(0, self.texts[0])
        self.write(1, self.texts[1])
        self.git(self.repo, "init", "-q", "-b", "main")
        self.git(self.repo, "add", ".")
        self.git(self.repo, "commit", "-qm", "user's work")
        self.fresh = 0

    def close(self):
        subprocess.run(["tmux", "kill-server"], env=self.env, capture_output=True)
        subprocess.run(["pkill", "-9", "-f", "serve --listen " + self.tmp], capture_output=True)
        if not self.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, f):
        return os.path.join(self.repo if f == 0 else self.work, FILES[f])

    def cwd(self, f):
        return self.repo if f == 0 else self.work

    def write(self, f, text):
        with open(self.path(f), "w") as fh:
            fh.write(text)

    def git(self, where, *args):
        r = subprocess.run(["git", *args], cwd=where, env=self.env, capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def kb(self, f, *args, timeout=60, extra=None):
        env = dict(self.env, **(extra or {}))
        try:
            r = subprocess.run([KB, *args], cwd=self.cwd(f), env=env, capture_output=True,
                               text=True, timeout=timeout)
            return r.returncode, r.stdout + r.stderr
        except subprocess.TimeoutExpired:
            return "hang", "no exit within %d s" % timeout

    def spawn(self, f, args, extra=None):
        env = dict(self.env, **(extra or {}))
        return subprocess.Popen([KB, *args], cwd=self.cwd(f), env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)

    def new_text(self, f, kind):
        """A text for file f: "miss" is one never compiled (an NVRTC run),
        "hit" one of the fixtures (a cache hit) other than the latest variant."""
        if kind == "miss":
            self.fresh += 1
            text = self.texts[self.fresh % 3] + "// edit %d\n" % self.fresh
        else:
            latest = self.latest_text(f)
            text = [t for t in self.texts if t != latest][self.fresh % 2]
        self.write(f, text)
        return text

    # ---- ground truth: git -------------------------------------------------

    def sessions(self):
        base = os.path.join(self.tmp, "data/kbench/sessions")
        return sorted(d for d in os.listdir(base) if os.path.exists(os.path.join(base, d, "meta.json"))) \
            if os.path.isdir(base) else []

    def current(self):
        try:
            return open(os.path.join(self.tmp, "data/kbench/current")).read().strip()
        except OSError:
            return None

    def repos(self, sid):
        """The git directories that may hold session sid's variants."""
        out = [os.path.join(self.repo, ".git")]
        priv = os.path.join(self.tmp, "data/kbench/sessions", sid, "repo")
        if os.path.isdir(priv):
            out.append(priv)
        return out

    def variants(self, gitdir, sid):
        """{path: [commit, ...]} of the session ref: the first-parent commits
        that changed each file (kbench's variants), oldest first."""
        rc, out = self.git(gitdir, "--git-dir", gitdir, "log", "--first-parent", "--reverse",
                           "--format=C %H", "--name-only", "--no-renames", "refs/kbench/" + sid, "--")
        per, commit = {}, None
        if rc != 0:
            return per
        for line in out.splitlines():
            if line.startswith("C "):
                commit = line[2:]
            elif line.strip():
                per.setdefault(line.strip(), []).append(commit)
        return per

    def latest_text(self, f):
        sid = self.current()
        gitdir = os.path.join(self.repo, ".git") if f == 0 else \
            os.path.join(self.tmp, "data/kbench/sessions", sid or "-", "repo")
        name = self.stored(f)
        rc, out = self.git(self.work, "--git-dir", gitdir, "show", "refs/kbench/%s:%s" % (sid, name))
        return out if rc == 0 else None

    def count(self, f):
        sid = self.current()
        gitdir = os.path.join(self.repo, ".git") if f == 0 else \
            os.path.join(self.tmp, "data/kbench/sessions", sid or "-", "repo")
        if not os.path.isdir(gitdir):
            return 0
        return len(self.variants(gitdir, sid).get(self.stored(f), []))

    def stored(self, f):
        """The file's path in its repository: sub/k.cu in work/repo; the
        loose file's real path without its leading '/' in the private one."""
        return "sub/k.cu" if f == 0 else os.path.realpath(os.path.join(self.work, FILES[1]))[1:]


# ---- the checks after a kill point -------------------------------------------

def check_journal(b, sid, commits):
    """Problems with sid's journal; (problems, events, torn tail?).  A commit
    the journal names must be on the ref, unless a later event names the
    same variant with one that is (a run's Result rewords the commit of the
    compile before it: store.c)."""
    path = os.path.join(b.tmp, "data/kbench/sessions", sid, "journal.jsonl")
    if not os.path.exists(path):
        return [], 0, False
    data = open(path, "rb").read()
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last '\n': empty unless torn
    probs, events = [], []
    for i, line in enumerate(lines):
        try:
            ev = json.loads(line)
            assert isinstance(ev, dict)
        except Exception:
            if line and not (i == len(lines) - 1 and not tail):
                probs.append("journal line %d of %s is not JSON: %r" % (i + 1, sid, line[:80]))
            continue
        events.append(ev)
    for i, ev in enumerate(events):
        c, key = ev.get("commit"), (ev.get("file"), ev.get("variant"))
        if c and c not in commits and not any(
                (e.get("file"), e.get("variant")) == key and e.get("commit") in commits
                for e in events[i + 1:]):
            probs.append("journal of %s names commit %s (%s %s), not on the ref" %
                         (sid, c[:10], ev.get("event"), ev.get("variant")))
    return sorted(set(probs)), len(events), bool(tail)


def check_export(b):
    """The export folder, when there is one, is a whole export: its
    manifest reads and names files that are all there; nothing half-written
    beside it is taken for one."""
    if not os.path.exists(b.exported):
        return []
    try:
        m = json.load(open(os.path.join(b.exported, "manifest.json")))
        assert m.get("format", "").startswith("kbench-session/")
    except Exception as e:
        return ["export folder without a whole manifest: %s; holds %s" %
                (e, sorted(os.listdir(b.exported))[:8])]
    missing = [v[k] for f in m.get("files", []) for v in f.get("variants", [])
               for k in ("source", "result") if k in v and
               not os.path.exists(os.path.join(b.exported, v[k]))]
    # a session with no step yet has no journal, and its export none either
    for name in ("README.md",) + (("journal.jsonl",) if m.get("files") else ()):
        if not os.path.exists(os.path.join(b.exported, name)):
            missing.append(name)
    return ["export folder lacks %d files its manifest names: %s" % (len(missing), missing[:5])] \
        if missing else []


def check_all(b):
    """Every check but `next`: a list of problems, and facts for the line."""
    probs, total, events, torn = check_export(b), 0, 0, 0
    for sid in b.sessions():
        commits = set()
        want = []
        for gitdir in b.repos(sid):
            rc, out = b.git(b.work, "--git-dir", gitdir, "fsck", "--strict", "--no-dangling",
                            "--no-progress")
            if rc != 0 or re.search(r"^(error|missing|broken|bad)", out, re.M):
                probs.append("git fsck of %s: %s" % (gitdir, out.strip()[:300]))
            for path, cs in b.variants(gitdir, sid).items():
                want += cs
                commits.update(cs)
        rc, log = b.kb(0, "log", sid)
        rows = re.findall(r"^  v\d+\s.*\s([0-9a-f]{10})$", log, re.M)
        if rc != 0:
            probs.append("kbench log %s: exit %s: %s" % (sid, rc, log.strip()[:300]))
        missing = [c[:10] for c in want if c[:10] not in rows]
        if missing:
            probs.append("kbench log %s lacks %d of %d variants git holds: %s" %
                         (sid, len(missing), len(want), " ".join(missing[:5])))
        if len(rows) != len(want):
            probs.append("kbench log %s lists %d variants, git holds %d" % (sid, len(rows), len(want)))
        jp, n, t = check_journal(b, sid, commits)
        probs += jp
        total += len(want)
        events += n
        torn += t
    rc, out = b.kb(0, "sessions")
    if rc != 0:
        probs.append("kbench sessions: exit %s: %s" % (rc, out.strip()[:300]))
    return probs, {"variants": total, "events": events, "torn": torn}


def check_next(b, f, runner, created=None):
    """The next commands work: a compile adds one variant; a run answers;
    after a killed `session new NAME`, NAME is a session or can become one."""
    probs = []
    if created:
        made = os.path.exists(os.path.join(b.tmp, "data/kbench/sessions", created, "meta.json"))
        rc, out = b.kb(0, "session", "new", created)
        if (rc == 0) == made or (made and "already exists" not in out):
            probs.append("session new %s again (it %s): exit %s: %s" %
                         (created, "was made" if made else "was not made", rc, out.strip()[:300]))
    if os.path.exists(b.stall):
        os.unlink(b.stall)
    rc, out = b.kb(0, "session", "export", b.current() or "s0", "-o", b.exported)
    if rc != 0 or check_export(b):
        probs.append("next export: exit %s: %s %s" % (rc, out.strip()[:300], check_export(b)))
    before = b.count(f)
    b.new_text(f, "hit")
    rc, out = b.kb(f, "compile", FILES[f], "--no-sass")
    after = b.count(f)
    if rc != 0 or after != before + 1:
        probs.append("next compile: exit %s, variants %d -> %d: %s" % (rc, before, after, out.strip()[:300]))
    if runner:
        t0 = time.monotonic()
        rc, out = b.kb(0, "run", "sub/k.cu", "--no-sweep", timeout=20,
                       extra={"KBENCH_SHARED_RUNNER": "1"} if runner == "shared" else None)
        if rc != 3 or "NO GPU" not in out:
            probs.append("next run: exit %s after %.1f s: %s" % (rc, time.monotonic() - t0, out.strip()[:300]))
    return probs


# ---- killing ----------------------------------------------------------------

def descendants(pid):
    """Pids under pid (children, their children...)."""
    kids = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            ppid = int(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(p))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def cmdline(pid):
    try:
        return open("/proc/%d/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def find_runner(b, under, wait_s):
    """A `kbench serve` of this bench: under pid `under`, or the shared one."""
    end = time.monotonic() + wait_s
    while True:
        for p in descendants(under) if under else []:
            if " serve" in cmdline(p):  # argv[0] may be /proc/self/exe
                return p, "private"
        for p in os.listdir("/proc"):
            if p.isdigit() and ("serve --listen " + b.tmp) in cmdline(int(p)):
                return int(p), "shared"
        if time.monotonic() > end:
            return None, None
        time.sleep(0.001)


def kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
        return True
    except ProcessLookupError:
        return False


def finish(p, timeout=30):
    """The exit status of p (or "hang") and its output."""
    try:
        out = p.communicate(timeout=timeout)[0]
        return p.returncode, out
    except subprocess.TimeoutExpired:
        p.kill()
        return "hang", p.communicate()[0]


# ---- the steps ---------------------------------------------------------------

class Tui:
    """kbench-tui on one file in a tmux session, restarted after a kill."""

    def __init__(self, b):
        self.b, self.pid, self.f, self.n = b, None, 0, 0

    def tmux(self, *args):
        return subprocess.run(["tmux", *args], env=self.b.env, capture_output=True, text=True).stdout

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "kb")

    def wait(self, pattern, secs):
        end = time.monotonic() + secs
        while time.monotonic() < end:
            s = self.screen()
            if re.search(pattern, s):
                return s
            time.sleep(0.02)
        return None

    def start(self, f):
        if self.pid and os.path.exists("/proc/%d" % self.pid) and self.f == f:
            return None
        self.stop()
        self.f = f
        self.tmux("kill-server")
        cmd = "cd %s && exec %s %s" % (self.b.cwd(f), TUI, FILES[f])
        # a new-session that meets the killed server still exiting fails
        # ("server exited unexpectedly"): tried again
        for _ in range(25):
            if subprocess.run(["tmux", "new-session", "-d", "-s", "kb", "-x", "120", "-y", "40", cmd],
                              env=self.b.env, capture_output=True).returncode == 0:
                break
            time.sleep(0.2)
        self.pid = int(self.tmux("display-message", "-p", "-t", "kb", "#{pane_pid}").strip() or 0)
        s = self.wait(r"registers|use it\? \(y/n\)", 20)
        if s and "use it?" in s:
            self.tmux("send-keys", "-t", "kb", "n")  # the file as saved, not the autosave
            s = self.wait(r"registers", 20)
        return None if s else "kbench-tui did not show a compile: " + (self.screen() or "")[:300]

    def stop(self):
        if self.pid:
            kill(self.pid)
        self.pid = None
        self.tmux("kill-server")

    def save(self):
        """Types an edit on line 1 and presses Ctrl-S; the moment it did."""
        self.n += 1
        for keys in (["C-g"], ["1", "Enter"], ["End"], ["-l", " x%d" % self.n]):
            self.tmux("send-keys", "-t", "kb", *keys)
        time.sleep(0.05)
        t0 = time.monotonic()
        self.tmux("send-keys", "-t", "kb", "C-s")
        return t0

    def settle(self):
        """Waits until the TUI shows a verdict for the last save (idle)."""
        return self.wait(r"\]  idle", 10) if self.pid else None


def step_cli(b, rng, plan, dur):
    f, op = plan["file"], plan["op"]
    extra = None
    if op in ("compile-miss", "compile-hit"):
        b.new_text(f, op[8:])
        args = ["compile", FILES[f], "--no-sass"]
    elif op == "run":
        b.new_text(f, "hit")
        open(b.stall, "w").close()
        args = ["run", FILES[f], "--no-sweep"]
        extra = {"KBENCH_SHARED_RUNNER": "1"} if plan["shared"] else None
    elif op == "export":
        args = ["session", "export", b.current() or "s0", "-o", b.exported]
    elif op in ("label", "note"):
        n = max(b.count(f), 1)
        args = [op, "v%d" % rng.randint(1, n), "x%d" % plan["i"], "--file", FILES[f]]
    else:  # session new
        args = ["session", "new", "s%d" % plan["i"]]
    delay = plan["frac"] * dur[op]
    t0 = time.monotonic()
    p = b.spawn(f, args, extra)
    time.sleep(max(0.0, delay - (time.monotonic() - t0)))
    at = (time.monotonic() - t0) * 1e3
    killed = kill(p.pid)
    rc, _ = finish(p)
    if op == "run":  # the stalled runner of a killed `run` wakes up and finds no client
        os.unlink(b.stall)
    what = "kill at %6.1f ms%s" % (at, "" if killed and rc == -9 else " (it had exited %s)" % rc)
    return what, ("shared" if plan["shared"] else "private") if op == "run" else None, []


def step_runner(b, plan, dur):
    f = plan["file"]
    b.new_text(f, "hit")
    open(b.stall, "w").close()
    extra = {"KBENCH_SHARED_RUNNER": "1"} if plan["shared"] else None
    t0 = time.monotonic()
    p = b.spawn(f, ["run", FILES[f], "--no-sweep"], extra)
    time.sleep(plan["frac"] * dur["runner"])
    pid, kind = find_runner(b, p.pid, 10)
    phase = "in its request" if os.path.getsize(b.stall) else "starting"
    at = (time.monotonic() - t0) * 1e3
    ok = pid and kill(pid)
    os.unlink(b.stall)
    rc, out = finish(p)
    if not ok:
        return "no runner to kill", kind or "private", ["no runner found; run: exit %s: %s" % (rc, out[:300])]
    probs = [] if rc in (1, 3) else ["`kbench run` after its runner was killed: exit %s: %s" % (rc, out[:300])]
    return "kill %s runner %s at %6.1f ms, run exit %s" % (kind, phase, at, rc), kind, probs


def step_tui(b, tui, plan, dur):
    f = plan["file"]
    err = tui.start(f)
    if err:
        return err, None, [err]
    if plan["op"] == "tui-runner":
        open(b.stall, "w").close()
    t0 = tui.save()
    time.sleep(max(0.0, plan["frac"] * dur[plan["op"]] - (time.monotonic() - t0)))
    at = (time.monotonic() - t0) * 1e3
    if plan["op"] == "tui":
        kill(tui.pid)
        tui.stop()
        return "kill kbench-tui at %6.1f ms after ^S" % at, None, []
    pid, _ = find_runner(b, tui.pid, 2)
    phase = "in its request" if os.path.getsize(b.stall) else "idle"
    if pid:
        kill(pid)
    os.unlink(b.stall)
    s = tui.settle()
    probs = [] if s else ["kbench-tui shows no verdict after its runner was killed: " + tui.screen()[:300]]
    return "kill the TUI's runner %s at %6.1f ms after ^S" % (phase, at), "private", probs


# ---- calibration: how long each step takes here --------------------------------

def calibrate(b, tui):
    def timed(fn, n=3):
        ts = []
        for _ in range(n):
            t0 = time.monotonic()
            fn()
            ts.append(time.monotonic() - t0)
        return sorted(ts)[len(ts) // 2]

    def compile_(kind):
        b.new_text(0, kind)
        b.kb(0, "compile", FILES[0], "--no-sass")

    def runner_reach():
        open(b.stall, "w").close()
        p = b.spawn(0, ["run", FILES[0], "--no-sweep"])
        end = time.monotonic() + 10
        while os.path.getsize(b.stall) == 0 and time.monotonic() < end:
            time.sleep(0.001)
        os.unlink(b.stall)
        finish(p)

    b.kb(0, "session", "new", "s0")
    compile_("miss")
    compile_("hit")
    dur = {"compile-miss": timed(lambda: compile_("miss")), "compile-hit": timed(lambda: compile_("hit")),
           "label": timed(lambda: b.kb(0, "label", "v1", "cal", "--file", FILES[0])),
           "note": timed(lambda: b.kb(0, "note", "v1", "cal", "--file", FILES[0])),
           "session new": 0.02,
           "export": timed(lambda: b.kb(0, "session", "export", "s0", "-o", b.exported))}
    dur["runner"] = timed(runner_reach)
    dur["run"] = dur["runner"] * 1.2
    b.new_text(0, "hit")
    tui.start(0)

    def tui_save():
        n = b.count(0)
        t0 = tui.save()
        end = t0 + 10
        while b.count(0) == n and time.monotonic() < end:
            time.sleep(0.002)
        tui.settle()
        return time.monotonic() - t0
    dur["tui"] = sorted(tui_save() for _ in range(3))[1]
    dur["tui-runner"] = dur["tui"] * 1.5
    return {k: v * 1.2 for k, v in dur.items()}  # past the end too: some steps finish


# ---- the plan and the loop ---------------------------------------------------

def plan_points(seed, n):
    rng = random.Random(seed)
    cli_ops = ["compile-miss"] * 3 + ["compile-hit"] * 4 + ["run", "label", "note", "export"]
    plans = []
    for i in range(1, n + 1):
        target = rng.choice(["cli", "cli", "runner", "tui"])
        p = {"i": i, "target": target, "file": rng.randint(0, 1), "frac": rng.random(),
             "shared": rng.random() < 0.5}
        if target == "cli":
            p["op"] = "session new" if rng.random() < 0.04 else rng.choice(cli_ops)
        elif target == "runner":
            p["op"] = "tui-runner" if rng.random() < 0.3 else "runner"
        else:
            p["op"] = "tui"
        if p["op"] in ("tui", "tui-runner"):
            p["file"] = 0 if rng.random() < 0.7 else 1
        plans.append(p)
    return plans


def machine():
    """CPU model, cores and GPU, in words."""
    model = "?"
    try:
        model = re.search(r"^model name\s*:\s*(.*)$", open("/proc/cpuinfo").read(), re.M).group(1)
    except (OSError, AttributeError):
        pass
    gpu = "an NVIDIA driver" if os.path.exists("/proc/driver/nvidia/version") else "no GPU"
    return "%s, %d cores, %s (runs answer NO GPU: CUDA_VISIBLE_DEVICES is empty)" % (
        model, os.cpu_count(), gpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=200, help="kill points (200)")
    ap.add_argument("--seed", type=int, default=None, help="the plan's seed (default: from the clock)")
    ap.add_argument("--report", help="also write the output to this file")
    ap.add_argument("--keep", action="store_true", help="keep the bench's folder")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int(time.time()) % 100000
    out = open(a.report, "w") if a.report else None

    def say(s):
        print(s, flush=True)
        if out:
            out.write(s + "\n")
            out.flush()

    if not shutil.which("tmux"):
        print("  SKIP kill_points: tmux not installed\n# passed=0 failed=0 skipped=1")
        return 0
    b = Bench(a.keep)
    tui = Tui(b)
    start = time.monotonic()
    try:
        dur = calibrate(b, tui)
        say("kbench kill points: %d, seed %d (rerun: tests/faults/kill_points.py -n %d --seed %d)" %
            (a.n, seed, a.n, seed))
        say("date: %s; machine: %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), machine()))
        say("kbench: %s, commit %s" % (b.kb(0, "--version")[1].strip(), subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or "?"))
        say("delays: uniform over 0..%s" % ", ".join("%s %.0f ms" % (k, v * 1e3) for k, v in sorted(dur.items())))
        if a.keep:
            say("bench: %s" % b.tmp)
        passed = failed = torn = after = 0
        counts = {}
        for plan in plan_points(seed, a.n):
            rng = random.Random(seed * 1000003 + plan["i"])
            runner, probs = None, []
            if plan["target"] == "cli":
                if tui.pid:
                    tui.stop()
                what, runner, probs = step_cli(b, rng, plan, dur)
            elif plan["op"] == "runner":
                if tui.pid:
                    tui.stop()
                what, runner, probs = step_runner(b, plan, dur)
            else:
                what, runner, probs = step_tui(b, tui, plan, dur)
                if plan["op"] == "tui-runner" or tui.pid:
                    tui.stop()  # quiet while checking: the checks write variants
            found, facts = check_all(b)
            probs += found + check_next(b, plan["file"], runner,
                                        "s%d" % plan["i"] if plan["op"] == "session new" else None)
            key = plan["target"] if plan["op"] != "tui-runner" else "runner"
            counts[key] = counts.get(key, 0) + 1
            verdict = "ok" if not probs else "FAIL"
            say("%4d %-6s %-12s %-11s %s; %d variants listed, %d journal events%s  %s" %
                (plan["i"], plan["target"], plan["op"], FILES[plan["file"]], what, facts["variants"],
                 facts["events"], ", torn tail" if facts["torn"] else "", verdict))
            for p in probs:  # "  FAIL" starts the line: tests/run.sh shows such lines
                say("  FAIL point %d: %s" % (plan["i"], p))
            passed += not probs
            failed += bool(probs)
            torn += facts["torn"]
            after += "had exited" in what
        secs = time.monotonic() - start
        try:
            log = open(b.env["KBENCH_LOG"]).read()
        except OSError:
            log = ""
        say("recovered: %d stale ref locks removed (kbench log), %d checks found a torn journal tail; "
            "%d kills came after the command had exited" % (len(re.findall(r"removed \S+\.lock", log)),
                                                            torn, after))
        say("%d kill points (%s) in %.0f s: %d passed, %d failed; %d sessions, %d variants at the end" %
            (a.n, ", ".join("%s %d" % kv for kv in sorted(counts.items())), secs, passed, failed,
             len(b.sessions()), check_all(b)[1]["variants"]))
        print("# passed=%d failed=%d skipped=0" % (passed, failed))
        return 0 if failed == 0 else 1
    finally:
        b.close()


if __name__ == "__main__":
    sys.exit(main())
