#!/usr/bin/env python3
"""llm_server.py - a scripted OpenAI-compatible chat-completions server for
the LLM bridge's tests (tests/cli/llm.sh, tests/cli/tui_llm.sh).

  llm_server.py DIR     listens on 127.0.0.1:<free port>, writes the port to
                        DIR/port, and each request's body to DIR/req-N.json.

The MODEL name of a request picks the scripted reply; the kernel the reply
changes is the ```cuda block of the last user message:
  good_file   the whole file with one comment line added
  good_diff   a unified diff adding that line
  bad_diff    a diff whose context is not in the file
  no_compile  the whole file with a line that is not C++
  no_code     prose, no code block
  rate_limit  429 (Retry-After: 1) on the first request, then good_file
  auth        401, echoing the key the way some servers do
  stall       streams a few words, then goes silent for 60 s
  slow        like stall, and writes DIR/streaming when it has started
                (the cancel test waits for it)
  json_only   good_file, always as one JSON body (a server that ignores
                "stream")
Requests must carry "Authorization: Bearer <$KBENCH_TEST_KEY>" when that
is set (else 401).  "stream": true is answered with server-sent events,
else with one JSON body.  The key is never written to DIR.
"""
import difflib
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]
KEY = os.environ.get("KBENCH_TEST_KEY", "")
lock = threading.Lock()
count = {"n": 0}
seen = {}

MARK = "// llm: restrict-qualified loads, no change in what it computes\n"


def source_of(body):
    for m in reversed(body.get("messages", [])):
        if m.get("role") != "user":
            continue
        blocks = re.findall(r"```(?:cuda|ptx)\n(.*?)```", m.get("content", ""), re.S)
        if blocks:
            return blocks[-1]
    return ""


def with_mark(src):
    """The source with MARK after the spec (after the last //! line)."""
    lines = src.splitlines(True)
    last = max([i for i, l in enumerate(lines) if l.lstrip().startswith("//!")] or [0])
    return "".join(lines[: last + 1] + ["\n", MARK] + lines[last + 1:])


def answer(model, src):
    if model in ("good_file", "rate_limit", "json_only"):
        return "Qualify the loads.\n\n```cuda\n" + with_mark(src) + "```\n"
    if model == "good_diff":
        d = difflib.unified_diff(src.splitlines(True), with_mark(src).splitlines(True),
                                 "a/kernel.cu", "b/kernel.cu")
        return "A one-line change:\n\n```diff\n" + "".join(d) + "```\n"
    if model == "bad_diff":
        return ("Try this:\n\n```diff\n--- a/kernel.cu\n+++ b/kernel.cu\n@@ -40,3 +40,3 @@\n"
                " int this_line_is_not_in_the_file = 0;\n-float gone = 1;\n+float gone = 2;\n"
                " return;\n```\n")
    if model == "no_compile":
        return "```cuda\n" + with_mark(src).replace(MARK, "this is not C++ at all;\n") + "```\n"
    return "Use shared memory and vectorised loads; I have no code for you this time."


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_json(self, code, obj, extra=()):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        with lock:
            count["n"] += 1
            n = count["n"]
        with open(os.path.join(DIR, "req-%d.json" % n), "w") as f:
            json.dump({"path": self.path, "body": body}, f)
        model = body.get("model", "")
        auth = self.headers.get("Authorization", "")
        if self.path != "/v1/chat/completions":
            return self.send_json(404, {"error": {"message": "no route " + self.path}})
        if model == "auth" or (KEY and auth != "Bearer " + KEY):
            given = auth[len("Bearer "):]
            return self.send_json(401, {"error": {"message": "Incorrect API key provided: %s" % given}})
        if model == "rate_limit":
            with lock:
                first = not seen.get(model)
                seen[model] = True
            if first:
                return self.send_json(429, {"error": {"message": "slow down"}}, [("Retry-After", "1")])
        text = answer(model, source_of(body))
        if model in ("stall", "slow"):
            return self.stream(["Looking at ", "the hot loop, "], stall=True)
        if body.get("stream") and model != "json_only":
            return self.stream([text[i:i + 40] for i in range(0, len(text), 40)])
        self.send_json(200, {"choices": [{"message": {"role": "assistant", "content": text}}],
                             "usage": {"prompt_tokens": 1000, "completion_tokens": len(text) // 4}})

    def stream(self, pieces, stall=False):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(s):
            b = s.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
            self.wfile.flush()

        try:
            for p in pieces:
                chunk("data: " + json.dumps({"choices": [{"delta": {"content": p}}]}) + "\n\n")
            if stall:
                open(os.path.join(DIR, "streaming"), "w").close()
                time.sleep(60)
                return
            chunk("data: " + json.dumps({"choices": [], "usage": {"prompt_tokens": 1000,
                                                                   "completion_tokens": 50}}) + "\n\n")
            chunk("data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
srv.serve_forever()
