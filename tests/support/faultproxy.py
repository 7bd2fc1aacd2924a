"""A fault-injecting HTTP proxy for the object-store tests (tests/objstore_e2e.py); stdlib only.

It sits between the exporter and an S3 server (moto) or Azure's blob emulator (Azurite) and
forwards every request unchanged until a fault is armed. Neither SigV4 nor Azure's SharedKey
signs anything the proxy changes (it keeps Host and every header). Faults, each for the next N
matching requests:

  slowdown  answer 503 with the store's throttling error (S3: SlowDown; Azure: ServerBusy)
  stall     hold the request for `seconds` before forwarding it, past the client's timeout
  cut       object GETs only: send the headers and half the body, then close the connection
  replace   object GETs only: the object was replaced while being read. The response carries a
            new ETag and its body switches, half-way, to the replacement object's bytes at the
            same offsets (by default the same log with SHIFT bytes removed at the seam, so a line
            breaks there). A request with If-Match (a client that pins the version it listed)
            gets 412 (S3: PreconditionFailed; Azure: ConditionNotMet) instead, as the store
            answers for a replaced object.

A request matches when its path contains `match` (None: every request). An "object GET" is a GET
whose path names a key (S3 path-style /bucket/key, Azurite /account/container/blob) and that is
not a listing (no `list-type`, `prefix`, `delimiter`, `comp` or `restype` parameter).

Used in-process (FaultProxy(...).start(); proxy.arm("cut", n=3); proxy.clear()), or as a program
with a control endpoint:

    python3 tests/support/faultproxy.py --upstream 127.0.0.1:5000 [--port 0] [--flavour azure]
    curl -XPOST 'http://127.0.0.1:PORT/__faultproxy__/arm?fault=stall&n=2&seconds=8'
    curl -XPOST  http://127.0.0.1:PORT/__faultproxy__/clear
    curl         http://127.0.0.1:PORT/__faultproxy__/state      (JSON: armed faults, counts)

The proxy reads each upstream response whole before answering (event logs are small), so a cut
or a replacement happens at a known byte.
"""
import argparse
import hashlib
import http.client
import http.server
import json
import socket
import sys
import threading
import time
import urllib.parse

CONTROL = "/__faultproxy__/"
FAULTS = ("slowdown", "stall", "cut", "replace")
# Bytes the default replacement object lacks at the seam: enough to break a JSON line.
SHIFT = 37
# Hop-by-hop headers (RFC 9110 7.6.1) are not forwarded; Content-Length is set anew.
HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer",
       "upgrade", "content-length"}

# (error code, message) by flavour, for the 503 and 412 answers.
ERRORS = {
    "s3": {503: ("SlowDown", "Please reduce your request rate."),
           412: ("PreconditionFailed", "At least one of the pre-conditions you specified did not hold")},
    "azure": {503: ("ServerBusy", "The server is currently unable to receive requests. Please retry your request."),
              412: ("ConditionNotMet", "The condition specified using HTTP conditional header(s) is not met.")},
}


def error_body(code, message):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
            f'<Message>{message}</Message><RequestId>faultproxy</RequestId></Error>').encode()


class Fault:
    """One armed fault: what, how many more times, and its parameters."""

    def __init__(self, kind, n, match=None, seconds=0.0, replacement=None, at=0.5):
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; one of {', '.join(FAULTS)}")
        self.kind, self.left, self.match = kind, int(n), match
        self.seconds, self.replacement, self.at = float(seconds), replacement, float(at)

    def describe(self):
        return {"fault": self.kind, "left": self.left, "match": self.match,
                "seconds": self.seconds, "at": self.at}


class FaultProxy:
    """The proxy: start(), arm(...), clear(), fired(kind), stop()."""

    def __init__(self, upstream, host="127.0.0.1", port=0, flavour="s3", upstream_timeout=60.0):
        if flavour not in ERRORS:
            raise ValueError(f"unknown flavour {flavour!r}: s3 or azure")
        self.flavour = flavour
        uhost, _, uport = upstream.rpartition(":")
        self.upstream = (uhost or "127.0.0.1", int(uport))
        self.upstream_timeout = upstream_timeout
        self.lock = threading.Lock()
        self.faults = []
        self.counts = {k: 0 for k in FAULTS}
        self.requests = 0
        self.log = []  # (time, method, path, what happened), the last 500
        self.stopping = threading.Event()
        proxy = self

        class Handler(_Handler):
            owner = proxy

        self.server = http.server.ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.thread = None

    @property
    def port(self):
        return self.server.server_address[1]

    @property
    def url(self):
        return f"http://{self.server.server_address[0]}:{self.port}"

    def start(self):
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()

    def arm(self, kind, n=1, match=None, seconds=0.0, replacement=None, at=0.5):
        """Arm a fault for the next n matching requests (added to any already armed)."""
        with self.lock:
            self.faults.append(Fault(kind, n, match, seconds, replacement, at))

    def clear(self):
        with self.lock:
            self.faults.clear()

    def fired(self, kind):
        """How many times a fault of this kind was applied since the proxy started."""
        with self.lock:
            return self.counts[kind]

    def state(self):
        with self.lock:
            return {"armed": [f.describe() for f in self.faults], "fired": dict(self.counts),
                    "requests": self.requests, "recent": self.log[-20:]}

    def _take(self, method, path, query):
        """The fault that applies to this request, if any, counted as fired."""
        object_get = method == "GET" and _names_key(path) and not (
            {"list-type", "prefix", "delimiter", "comp", "restype"} & set(query))
        with self.lock:
            self.requests += 1
            for f in self.faults:
                if f.left <= 0 or (f.match and f.match not in path):
                    continue
                if f.kind in ("cut", "replace") and not object_get:
                    continue
                f.left -= 1
                self.counts[f.kind] += 1
                self.faults = [g for g in self.faults if g.left > 0]
                return f
        return None

    def _note(self, method, path, what):
        with self.lock:
            self.log.append((round(time.time(), 3), method, path, what))
            del self.log[:-500]


def _names_key(path):
    """True for /bucket/key (path-style S3) and /account/container/blob (Azurite), false for /
    and /bucket; a listing of /account/container is told apart by its parameters."""
    parts = [p for p in path.split("/") if p]
    return len(parts) >= 2 and not path.endswith("/")


def _content_range_start(headers):
    """First byte of a 206 response (Content-Range: bytes START-END/TOTAL), else 0."""
    v = headers.get("Content-Range", "")
    try:
        return int(v.split()[1].split("-")[0])
    except (IndexError, ValueError):
        return 0


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as object stores are used
    owner = None  # the FaultProxy, set by a subclass

    def log_message(self, fmt, *args):  # quiet: the proxy keeps its own log
        pass

    def do_GET(self):
        self._handle()

    do_HEAD = do_PUT = do_POST = do_DELETE = do_GET

    def _handle(self):
        p = self.owner
        split = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if split.path.startswith(CONTROL):
            return self._control(split.path[len(CONTROL):], query, body)
        fault = p._take(self.command, split.path, query)
        what = fault.kind if fault else "forward"
        p._note(self.command, self.path, what)
        if fault and fault.kind == "slowdown":
            return self._error(503)
        if fault and fault.kind == "replace" and self.headers.get("If-Match"):
            return self._error(412)
        if fault and fault.kind == "stall":
            # Sleep in slices so that stop() is not held up for the whole stall.
            end = time.time() + fault.seconds
            while time.time() < end and not p.stopping.is_set():
                time.sleep(0.05)
        try:
            status, reason, headers, rbody = self._forward(split, body)
        except OSError as e:
            return self._answer(502, f"faultproxy: upstream failed: {e}".encode(),
                                {"Content-Type": "text/plain"})
        if fault and fault.kind in ("cut", "replace") and status in (200, 206):
            return self._faulty_body(fault, status, reason, headers, rbody)
        self._send(status, reason, headers, rbody)

    def _forward(self, split, body):
        p = self.owner
        conn = http.client.HTTPConnection(*p.upstream, timeout=p.upstream_timeout)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            if body or self.command in ("PUT", "POST"):
                headers["Content-Length"] = str(len(body))
            target = split.path + (f"?{split.query}" if split.query else "")
            conn.request(self.command, target, body=body or None, headers=headers)
            r = conn.getresponse()
            rbody = r.read()
            return r.status, r.reason, r.getheaders(), rbody
        finally:
            conn.close()

    def _send(self, status, reason, headers, body, length=None):
        """Status line and headers; Content-Length is `length` (HEAD: upstream's) or len(body)."""
        try:
            self.send_response_only(status, reason)
            upstream_length = None
            for k, v in headers:
                if k.lower() == "content-length":
                    upstream_length = v
                if k.lower() not in HOP and k.lower() not in ("date", "server"):
                    self.send_header(k, v)
            self.send_header("Date", self.date_time_string())
            if self.command == "HEAD":
                self.send_header("Content-Length", upstream_length or "0")
            else:
                self.send_header("Content-Length", str(len(body) if length is None else length))
            self.end_headers()
            if self.command != "HEAD" and length is None:
                self.wfile.write(body)
            self.wfile.flush()
        except OSError:
            # The client gave up (a stalled request past its timeout): nothing to answer.
            self.close_connection = True

    def _answer(self, status, body, headers):
        self._send(status, None, list(headers.items()), body)

    def _error(self, status):
        code, message = ERRORS[self.owner.flavour][status]
        headers = {"Content-Type": "application/xml", "x-amz-request-id": "faultproxy"}
        if self.owner.flavour == "azure":
            headers = {"Content-Type": "application/xml", "x-ms-error-code": code,
                       "x-ms-request-id": "faultproxy"}
        self._answer(status, error_body(code, message), headers)

    def _faulty_body(self, fault, status, reason, headers, body):
        half = int(len(body) * fault.at)
        if fault.kind == "cut":
            # Announce the whole body, send half of it, then drop the connection.
            self._send(status, reason, headers, body, length=len(body))
            try:
                self.wfile.write(body[:half])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.close_connection = True
            return
        start = _content_range_start(dict(headers))
        if fault.replacement is None:
            rest = body[half + SHIFT:] + b"\n" * min(SHIFT, len(body) - half)
        else:
            rest = fault.replacement[start + half:start + len(body)]
        stitched = (body[:half] + rest + b"\n" * len(body))[:len(body)]
        etag = '"replaced-' + hashlib.md5(stitched).hexdigest() + '"'
        # The replacement has its own ETag; the original's checksums would not hold for it.
        headers = [(k, etag if k.lower() == "etag" else v) for k, v in headers
                   if not k.lower().startswith(("x-amz-checksum-", "content-md5", "x-ms-content-crc64"))]
        self._send(status, reason, headers, stitched)

    def _control(self, verb, query, body):
        p = self.owner
        try:
            params = dict(query)
            if body:
                params.update(json.loads(body))
            if verb == "arm":
                p.arm(params["fault"], int(params.get("n", 1)), params.get("match") or None,
                      float(params.get("seconds", 0)), None, float(params.get("at", 0.5)))
            elif verb == "clear":
                p.clear()
            elif verb != "state":
                raise ValueError(f"unknown control {verb!r}: arm, clear or state")
            out, status = json.dumps(p.state()).encode(), 200
        except (KeyError, ValueError) as e:
            out, status = json.dumps({"error": str(e)}).encode(), 400
        self._answer(status, out, {"Content-Type": "application/json"})


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", required=True, help="HOST:PORT of the S3 server")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--flavour", choices=sorted(ERRORS), default="s3", help="the store's error bodies")
    a = ap.parse_args()
    p = FaultProxy(a.upstream, a.host, a.port, a.flavour).start()
    print(f"faultproxy: {p.url} -> {a.upstream}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        p.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
