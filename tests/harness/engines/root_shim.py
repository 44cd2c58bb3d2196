#!/usr/bin/env python3
"""root_shim.py: the root endpoint (GET /) for an Elasticsearch node that has
none, in front of that node; everything else is forwarded unchanged.

Elasticsearch 8's integ-test zip on Maven Central (tests/harness/engine.sh,
ENGINE=elasticsearch-8) lacks the rest-root module, so GET / answers 405,
and searchsync reads the engine's version from GET /. This shim answers
GET / and HEAD / with the root document a full distribution writes, its
version taken from the node itself (GET /_nodes/_local); every other request
goes to the node as it came, and its answer comes back as the node wrote it.

usage: root_shim.py LISTEN_PORT UPSTREAM_URL
"""
import http.client
import json
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer",
              "upgrade", "proxy-connection", "content-length"}


def main():
    port, upstream = int(sys.argv[1]), sys.argv[2]
    up = urllib.parse.urlsplit(upstream)

    def forward(method, path, body, headers):
        conn = http.client.HTTPConnection(up.hostname, up.port, timeout=300)
        try:
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            return r.status, r.getheaders(), r.read()
        finally:
            conn.close()

    def root_document():
        status, _, body = forward("GET", "/_nodes/_local?filter_path=cluster_name,nodes.*.name,"
                                  "nodes.*.version,nodes.*.build_flavor,nodes.*.build_type,"
                                  "nodes.*.build_hash", None, {})
        if status != 200:
            return status, body
        info = json.loads(body)
        node = next(iter(info["nodes"].values()))
        return 200, json.dumps({
            "name": node.get("name"),
            "cluster_name": info.get("cluster_name"),
            "version": {"number": node["version"],
                        "build_flavor": node.get("build_flavor", "default"),
                        "build_type": node.get("build_type", "zip"),
                        "build_hash": node.get("build_hash", "")},
            "tagline": "You Know, for Search",
            "searchsync_note": "answered by tests/harness/engines/root_shim.py",
        }).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def answer(self, status, headers, body):
            self.send_response(status)
            for k, v in headers:
                if k.lower() not in HOP_BY_HOP:
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def handle_any(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else None
            if self.command in ("GET", "HEAD") and urllib.parse.urlsplit(self.path).path == "/":
                status, doc = root_document()
                self.answer(status, [("Content-Type", "application/json")], doc)
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            try:
                status, rheaders, rbody = forward(self.command, self.path, body, headers)
            except OSError as e:
                self.answer(502, [("Content-Type", "application/json")],
                            json.dumps({"error": f"root_shim: node unreachable: {e}",
                                        "status": 502}).encode())
                return
            self.answer(status, rheaders, rbody)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    srv.daemon_threads = True
    print(f"SEARCHSYNC_ROOT_SHIM_READY port={port} upstream={upstream}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
