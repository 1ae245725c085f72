#!/usr/bin/env python3
"""bad_runner.py - a runner that breaks the protocol mid-request, for
tests/cli/faults.sh.  Stands where `kbench serve` would (the remote command
of `--remote`, through tests/faults/fake_ssh.sh): it answers hello (with
the client's own protocol number) and devices (no GPU) as a runner does,
then answers the first run request as $KBENCH_BAD_RUNNER says, and keeps
its pipes open (the client must decide from what came, not from an end of
file):
  garbage   64 random bytes (the first four, read as a frame length, are
            over the 256 MiB limit)
  notjson   a well-formed frame whose payload is not JSON
  notype    a frame holding a JSON object without "type"
  half      a frame header announcing 100 bytes, then 10 of them
  silent    nothing at all
"""
import json, os, random, struct, sys, time

BAD = {
    "garbage": bytes([0xff, 0xff, 0xff, 0x7f]) + random.Random(1).randbytes(60),
    "notjson": struct.pack("<I", 17) + b"}{ not a message!",
    "notype": struct.pack("<I", 15) + b'{"status":"ok"}',
    "half": struct.pack("<I", 100) + b"0123456789",
    "silent": b"",
}


def read_exact(n):
    b = b""
    while len(b) < n:
        got = os.read(0, n - len(b))
        if not got:
            sys.exit(0)
        b += got
    return b


def send(obj):
    p = json.dumps(obj).encode()
    os.write(1, struct.pack("<I", len(p)) + p)


while True:
    req = json.loads(read_exact(struct.unpack("<I", read_exact(4))[0]))
    if req.get("type") == "hello":
        send({"type": "hello", "protocol": req.get("protocol"), "version": req.get("version"),
              "host": "bad-runner"})
    elif req.get("type") == "devices":
        send({"type": "result", "status": "no_gpu", "message": "bad_runner.py has no GPU"})
    else:
        os.write(1, BAD[os.environ.get("KBENCH_BAD_RUNNER", "garbage")])
        time.sleep(600)
