"""progress_ticks.py KBENCH FILE: one run request to a fresh `kbench serve`;
prints the progress frames as JSON lines, then the result's status (for
run_gpu.sh: a phase over a second must tick)."""
import json, struct, subprocess, sys

p = subprocess.Popen([sys.argv[1], "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
req = json.dumps({"type": "run", "path": sys.argv[2], "trials": 1, "time": False}).encode()
p.stdin.write(struct.pack("<I", len(req)) + req)
p.stdin.flush()
while True:
    n = struct.unpack("<I", p.stdout.read(4))[0]
    m = json.loads(p.stdout.read(n))
    if m["type"] != "progress":
        print(json.dumps({"result": m.get("status"), "verdict": m.get("verdict")}))
        break
    print(json.dumps(m))
p.stdin.close()
p.wait(timeout=30)
