#!/usr/bin/env python3
"""fault_proxy.py: an HTTP/1.1 proxy in front of the real search engine, for
tests of how searchsync waits out an engine that is briefly unavailable.

Every request is forwarded to UPSTREAM unchanged, except that while the file
FLAG exists, requests with method METHOD whose path matches PATH_REGEX are
answered 503 (as a node that is restarting answers) without reaching the
engine. Each refusal appends a line to FLAG + ".refused". Every request with
METHOD whose path matches PATH_REGEX, whether FLAG exists or not, appends a
line to FLAG + ".seen" as it arrives (what the sender sent, and when).

usage: fault_proxy.py PORTFILE UPSTREAM_URL METHOD PATH_REGEX FLAG [hold BODY_REGEX | delay MS BODY_REGEX]
Listens on 127.0.0.1 on a free port and writes that port to PORTFILE.

hold BODY_REGEX: instead of refusing them, matching requests whose body
(gunzipped when it is sent gzipped) also matches BODY_REGEX are held while
FLAG exists (at most 120 s), then forwarded; each held request appends a
line to FLAG + ".held" when its hold starts. If FLAG + ".drop" exists when
the hold ends, the request is not forwarded and its connection is closed
unanswered (a request that never reached the engine: its sender was killed).

delay MS BODY_REGEX: matching requests whose body matches BODY_REGEX are
forwarded MS milliseconds late while FLAG exists (a slow path to one index);
each appends a line to FLAG + ".delayed". MS may be a range MIN-MAX: each
request waits a uniformly random time in it (a busy index, as a loaded
engine or a proxy in front of it holds requests unevenly).
"""
import gzip
import http.client
import os
import random
import re
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer",
              "upgrade", "proxy-connection", "content-length"}


def main():
    portfile, upstream, method, pattern, flag = sys.argv[1:6]
    hold_re = re.compile(sys.argv[7].encode()) if len(sys.argv) > 7 and sys.argv[6] == "hold" else None
    delay_ms, delay_re = (0, 0), None
    if len(sys.argv) > 8 and sys.argv[6] == "delay":
        lo, _, hi = sys.argv[7].partition("-")
        delay_ms, delay_re = (int(lo), int(hi or lo)), re.compile(sys.argv[8].encode())
    up = urllib.parse.urlsplit(upstream)
    path_re = re.compile(pattern)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet: the test reads .refused
            pass

        def answer(self, status, headers, body):
            self.send_response(status)
            for k, v in headers:
                if k.lower() not in HOP_BY_HOP:
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def handle_any(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else None
            if self.command == method and path_re.search(self.path):
                with open(flag + ".seen", "a") as f:
                    f.write(f"{time.time():.3f} {self.command} {self.path}\n")
            if delay_re is not None:
                if self.command == method and path_re.search(self.path) and os.path.exists(flag):
                    plain = body or b""
                    if self.headers.get("Content-Encoding", "").lower() == "gzip" and plain:
                        plain = gzip.decompress(plain)
                    if delay_re.search(plain):
                        with open(flag + ".delayed", "a") as f:
                            f.write(f"{self.command} {self.path}\n")
                        time.sleep(random.uniform(*delay_ms) / 1000.0)
            elif hold_re is not None:
                if self.command == method and path_re.search(self.path) and os.path.exists(flag):
                    plain = body or b""
                    if self.headers.get("Content-Encoding", "").lower() == "gzip" and plain:
                        plain = gzip.decompress(plain)
                    if hold_re.search(plain):
                        with open(flag + ".held", "a") as f:
                            f.write(f"{self.command} {self.path}\n")
                        end = time.monotonic() + 120
                        while os.path.exists(flag) and time.monotonic() < end:
                            time.sleep(0.02)
                        if os.path.exists(flag + ".drop"):
                            self.close_connection = True
                            return
            elif self.command == method and path_re.search(self.path) and os.path.exists(flag):
                with open(flag + ".refused", "a") as f:
                    f.write(f"{self.command} {self.path}\n")
                self.answer(503, [("Content-Type", "application/json")],
                            b'{"error":"fault_proxy: unavailable","status":503}')
                return
            conn = http.client.HTTPConnection(up.hostname, up.port, timeout=120)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                conn.request(self.command, self.path, body=body, headers=headers)
                r = conn.getresponse()
                self.answer(r.status, r.getheaders(), r.read())
            finally:
                conn.close()

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    class Server(ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            # a client that went away (a daemon SIGKILLed, a timed-out
            # request) is no error of the proxy's: no traceback in the log
            if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
                return
            super().handle_error(request, client_address)

    srv = Server(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


if __name__ == "__main__":
    main()
