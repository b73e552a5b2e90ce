#!/usr/bin/env python3
"""A stand-in for bisectd in the cli unit tests: serves canned JSON and logs every request.

usage: fake_bisectd.py CANNED_DIR PORT_FILE LOG_FILE
GET  /P        -> CANNED_DIR/P.json (query ignored); 404 {"error"} when absent.
                  A canned object may carry "__status" (the HTTP status) or "__sequence" (a list
                  answered in turn, the last one repeated).
POST/DELETE /P -> needs "Authorization: Bearer test-token" (else 401); answers CANNED_DIR/P.METHOD.json
                  or, when absent, 200 {"echo": true}.
GET  /slow     -> answers after 3 s.   GET /not-json -> 200 "hello".
Each request is appended to LOG_FILE as one JSON line before the answer is sent.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

CANNED, PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2], sys.argv[3]
COUNTS = {}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _log(self, body):
        url = urlsplit(self.path)
        entry = {"method": self.command, "path": url.path, "query": url.query,
                 "authorization": self.headers.get("Authorization"),
                 "content_type": self.headers.get("Content-Type"), "body": body}
        with open(LOG_FILE, "a") as log:
            log.write(json.dumps(entry) + "\n")

    def _send(self, status, payload):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _canned(self, name):
        file = os.path.join(CANNED, name.lstrip("/") + ".json")
        if not os.path.isfile(file):
            return None
        with open(file) as f:
            return json.load(f)

    def _answer(self, name):
        canned = self._canned(name)
        if canned is None:
            return None
        if isinstance(canned, dict) and "__sequence" in canned:
            n = COUNTS.get(name, 0)
            COUNTS[name] = n + 1
            canned = canned["__sequence"][min(n, len(canned["__sequence"]) - 1)]
        status = canned.pop("__status", 200) if isinstance(canned, dict) else 200
        return status, canned

    def do_GET(self):
        self._log(None)
        path = urlsplit(self.path).path
        if path == "/slow":
            time.sleep(3)
        if path == "/not-json":
            return self._send(200, b"hello")
        answer = self._answer(path)
        if answer is None:
            return self._send(404, {"error": path + ": not found"})
        self._send(*answer)

    def _write(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        self._log(body)
        if self.headers.get("Authorization") != "Bearer test-token":
            return self._send(401, {"error": "missing or wrong token"})
        path = urlsplit(self.path).path
        answer = self._answer(path + "." + self.command)
        self._send(*(answer or (200, {"echo": True})))

    do_POST = _write
    do_DELETE = _write


def exit_with_parent(parent):
    """Stop when the test process dies without stopping us (a crash must not leave servers behind)."""
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(0)


threading.Thread(target=exit_with_parent, args=(os.getppid(),), daemon=True).start()
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
