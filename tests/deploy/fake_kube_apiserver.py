"""A stand-in Kubernetes API server on loopback, just enough for `spark-submit --master k8s://`.

Spark's submission client (fabric8 kubernetes-client 7.x over Vert.x) talks to it exactly as it
would to a real API server; this server stores what it is sent and records every request, so a
test can look at the driver pod that Spark *really* built from our pod template.

What it answers (found by logging what spark-submit 4.1.1 asks, see `requests.jsonl`):

* `POST   .../namespaces/{ns}/{plural}`         create: stored, answered 201 with uid etc.
* `GET    .../namespaces/{ns}/{plural}/{name}`  the stored object (pods get `status.phase`)
* `GET    .../namespaces/{ns}/{plural}?watch=true` a watch, over WebSocket (fabric8's default)
  or a chunked HTTP stream; it sends one MODIFIED event with the pod's final phase
* `GET    .../namespaces/{ns}/{plural}`         a list
* `PATCH`/`PUT .../{name}`                      server-side apply / replace: stored
* `DELETE .../{name}`                           removed, answered with a Status
* anything else                                 404 Status, and recorded

It never listens on anything but 127.0.0.1. Run it alone with
`python fake_kube_apiserver.py --port 0 --log requests.jsonl` to watch a real spark-submit.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC11B5B"

#: kind and apiVersion of the collections Spark writes to, by (group/version, plural).
KINDS = {
    ("v1", "pods"): "Pod",
    ("v1", "configmaps"): "ConfigMap",
    ("v1", "services"): "Service",
    ("v1", "secrets"): "Secret",
    ("v1", "persistentvolumeclaims"): "PersistentVolumeClaim",
}


def parse_path(path: str):
    """Split `/api/v1/namespaces/ns/pods/name` (or `/apis/g/v/...`) into its parts.

    Returns (api_version, namespace, plural, name-or-None, subresource-or-None), or None."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        api_version, rest = parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        api_version, rest = f"{parts[1]}/{parts[2]}", parts[3:]
    else:
        return None
    if len(rest) < 3 or rest[0] != "namespaces":
        return None
    ns, plural = rest[1], rest[2]
    name = rest[3] if len(rest) > 3 else None
    sub = rest[4] if len(rest) > 4 else None
    return api_version, ns, plural, name, sub


class FakeKube:
    """The stored objects and the request log, shared by all handler threads."""

    def __init__(self, pod_phase: str = "Succeeded", log_path: str | None = None):
        self.pod_phase = pod_phase
        self.log_path = log_path
        self.lock = threading.Lock()
        self.objects: dict[tuple[str, str, str, str], dict] = {}
        self.requests: list[dict] = []
        #: requests that matched no route (a test asserts there are none)
        self.unrouted: list[str] = []
        self._rv = 1000

    def record(self, entry: dict) -> None:
        with self.lock:
            self.requests.append(entry)
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(entry, sort_keys=True) + "\n")

    def next_rv(self) -> str:
        with self.lock:
            self._rv += 1
            return str(self._rv)

    def created(self, plural: str) -> list[dict]:
        """Every stored object of one collection (e.g. "pods"), in creation order."""
        with self.lock:
            return [o for (_, _, p, _), o in self.objects.items() if p == plural]

    def with_status(self, plural: str, obj: dict) -> dict:
        if plural != "pods":
            return obj
        obj = json.loads(json.dumps(obj))
        obj["status"] = {
            "phase": self.pod_phase,
            "containerStatuses": [
                {
                    "name": c.get("name"),
                    "image": c.get("image", ""),
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
                }
                for c in obj.get("spec", {}).get("containers", [])
            ],
        }
        return obj


def status(code: int, reason: str, message: str) -> dict:
    """A metav1.Status body, as the API server answers errors."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure" if code >= 400 else "Success",
        "message": message,
        "reason": reason,
        "code": code,
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-kube-apiserver/0.1"
    kube: FakeKube  # set on the subclass by serve()

    def log_message(self, fmt, *args):  # quiet: the JSONL log says it all
        pass

    # -- plumbing ---------------------------------------------------------------------------
    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, code: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self, body: bytes) -> None:
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        self.kube.record(
            {
                "t": time.time(),
                "method": self.command,
                "path": self.path,
                "content_type": self.headers.get("Content-Type"),
                "upgrade": self.headers.get("Upgrade"),
                "user_agent": self.headers.get("User-Agent"),
                "body": parsed,
            }
        )

    def _unrouted(self):
        self.kube.unrouted.append(f"{self.command} {self.path}")
        return self._send(404, status(404, "NotFound", f"no route for {self.command} {self.path}"))

    # -- verbs ------------------------------------------------------------------------------
    def do_GET(self):
        self._record(b"")
        url = urlsplit(self.path)
        q = parse_qs(url.query)
        p = parse_path(url.path)
        if url.path in ("/version", "/version/"):
            return self._send(200, {"major": "1", "minor": "33", "gitVersion": "v1.33.0-fake"})
        if p is None:
            return self._unrouted()
        api_version, ns, plural, name, _ = p
        if name is None and q.get("watch", ["false"])[0] in ("true", "1"):
            return self._watch(api_version, ns, plural, q)
        if name is None:
            items = [
                self.kube.with_status(plural, o)
                for (av, n, pl, _), o in list(self.kube.objects.items())
                if (av, n, pl) == (api_version, ns, plural)
            ]
            kind = KINDS.get((api_version, plural), "Object")
            return self._send(
                200,
                {
                    "apiVersion": api_version,
                    "kind": kind + "List",
                    "metadata": {"resourceVersion": self.kube.next_rv()},
                    "items": items,
                },
            )
        obj = self.kube.objects.get((api_version, ns, plural, name))
        if obj is None:
            return self._send(404, status(404, "NotFound", f'{plural} "{name}" not found'))
        return self._send(200, self.kube.with_status(plural, obj))

    def do_POST(self):
        body = self._body()
        self._record(body)
        p = parse_path(urlsplit(self.path).path)
        if p is None or p[3] is not None:
            return self._unrouted()
        api_version, ns, plural, _, _ = p
        obj = json.loads(body)
        name = obj.get("metadata", {}).get("name")
        if (api_version, ns, plural, name) in self.kube.objects:
            return self._send(409, status(409, "AlreadyExists", f'{plural} "{name}" exists'))
        self._store(api_version, ns, plural, name, obj)
        return self._send(201, self.kube.objects[(api_version, ns, plural, name)])

    def _store(self, api_version, ns, plural, name, obj):
        md = obj.setdefault("metadata", {})
        md.setdefault("uid", str(uuid.uuid4()))
        md["namespace"] = ns
        md["resourceVersion"] = self.kube.next_rv()
        md.setdefault("creationTimestamp", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        obj.setdefault("apiVersion", api_version)
        obj.setdefault("kind", KINDS.get((api_version, plural), "Object"))
        self.kube.objects[(api_version, ns, plural, name)] = obj

    def _replace(self, create_ok: bool):
        body = self._body()
        self._record(body)
        p = parse_path(urlsplit(self.path).path)
        if p is None or p[3] is None:
            return self._unrouted()
        api_version, ns, plural, name, _ = p
        ctype = self.headers.get("Content-Type", "")
        try:
            obj = json.loads(body)
        except ValueError:
            import yaml  # apply patches may come as YAML

            obj = yaml.safe_load(body)
        existed = (api_version, ns, plural, name) in self.kube.objects
        if not existed and not create_ok:
            return self._send(404, status(404, "NotFound", f'{plural} "{name}" not found'))
        if existed and "merge-patch" in ctype:
            merged = dict(self.kube.objects[(api_version, ns, plural, name)])
            merged.update(obj)
            obj = merged
        self._store(api_version, ns, plural, name, obj)
        return self._send(200 if existed else 201, self.kube.objects[(api_version, ns, plural, name)])

    def do_PATCH(self):
        # server-side apply creates; a JSON/merge patch needs the object
        return self._replace(create_ok="apply-patch" in self.headers.get("Content-Type", ""))

    def do_PUT(self):
        return self._replace(create_ok=False)

    def do_DELETE(self):
        self._record(self._body())
        p = parse_path(urlsplit(self.path).path)
        if p is None or p[3] is None:
            return self._unrouted()
        obj = self.kube.objects.pop(p[:4], None)
        if obj is None:
            return self._send(404, status(404, "NotFound", "not found"))
        return self._send(200, obj)

    # -- watch ------------------------------------------------------------------------------
    def _events(self, api_version, ns, plural, q) -> list[dict]:
        sel = q.get("fieldSelector", [""])[0]
        want = sel.split("metadata.name=", 1)[1].split(",")[0] if "metadata.name=" in sel else None
        out = []
        for (av, n, pl, name), o in list(self.kube.objects.items()):
            if (av, n, pl) == (api_version, ns, plural) and (want is None or want == name):
                out.append({"type": "MODIFIED", "object": self.kube.with_status(plural, o)})
        return out

    def _watch(self, api_version, ns, plural, q):
        if (self.headers.get("Upgrade") or "").lower() == "websocket":
            return self._watch_websocket(api_version, ns, plural, q)
        # HTTP watch: a chunked stream of JSON lines, closed after the current state
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for ev in self._events(api_version, ns, plural, q):
            line = (json.dumps(ev) + "\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
        self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True

    def _watch_websocket(self, api_version, ns, plural, q):
        key = self.headers.get("Sec-WebSocket-Key", "")
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.send_response(101, "Switching Protocols")
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        sock: socket.socket = self.connection
        sent = 0
        # Send the pod's state as it appears (the pod is created after the watch opens), then
        # answer a close frame, or give up after the bounded wait below.
        sock.settimeout(0.2)
        # Vert.x finishes its upgrade before it accepts frames: bytes that arrive in the same
        # read as the 101 are rejected ("Received an invalid message"), so wait a moment.
        time.sleep(0.3)
        deadline = time.time() + 60
        while time.time() < deadline:
            events = self._events(api_version, ns, plural, q)
            for ev in events[sent:]:
                self._ws_send(sock, 0x1, json.dumps(ev).encode())
            sent = max(sent, len(events))
            try:
                head = sock.recv(2)
            except socket.timeout:
                continue
            except OSError:
                return
            if not head:
                return
            opcode, length = head[0] & 0x0F, head[1] & 0x7F
            if length == 126:
                length = int.from_bytes(self._recv_exact(sock, 2), "big")
            elif length == 127:
                length = int.from_bytes(self._recv_exact(sock, 8), "big")
            mask = self._recv_exact(sock, 4) if head[1] & 0x80 else b"\0\0\0\0"
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(self._recv_exact(sock, length)))
            if opcode == 0x8:  # close: echo it and stop
                self._ws_send(sock, 0x8, payload[:2])
                return
            if opcode == 0x9:  # ping
                self._ws_send(sock, 0xA, payload)

    @staticmethod
    def _recv_exact(sock: socket.socket, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            try:
                chunk = sock.recv(n - len(buf))
            except socket.timeout:
                continue
            if not chunk:
                raise ConnectionError("closed")
            buf += chunk
        return buf

    @staticmethod
    def _ws_send(sock: socket.socket, opcode: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            head = bytes([0x80 | opcode, n])
        elif n < 65536:
            head = bytes([0x80 | opcode, 126]) + n.to_bytes(2, "big")
        else:
            head = bytes([0x80 | opcode, 127]) + n.to_bytes(8, "big")
        try:
            sock.sendall(head + payload)
        except OSError:
            pass


def serve(port: int = 0, pod_phase: str = "Succeeded", log_path: str | None = None):
    """Start the server on 127.0.0.1 in a daemon thread; returns (server, kube, port)."""
    kube = FakeKube(pod_phase=pod_phase, log_path=log_path)
    handler = type("BoundHandler", (Handler,), {"kube": kube})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, kube, server.server_address[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", default=None, help="append every request as a JSON line here")
    ap.add_argument("--pod-phase", default="Succeeded")
    args = ap.parse_args()
    server, _, port = serve(args.port, args.pod_phase, args.log)
    print(f"listening on http://127.0.0.1:{port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
