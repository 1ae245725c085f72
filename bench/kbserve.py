"""kbserve.py - the client side of `kbench serve`'s protocol for the bench
scripts: a request as one length-prefixed JSON frame, answered by progress
frames and one result (src/core/proto.h)."""
import json, struct, time


def call(p, req):
    """Sends req to the runner p (a Popen with pipes); returns the result
    and the wall ms from writing the request to reading the result."""
    b = json.dumps(req).encode()
    t0 = time.perf_counter()
    p.stdin.write(struct.pack("<I", len(b)) + b)
    p.stdin.flush()
    while True:
        n = struct.unpack("<I", p.stdout.read(4))[0]
        m = json.loads(p.stdout.read(n))
        if m["type"] != "progress":
            return m, (time.perf_counter() - t0) * 1e3
