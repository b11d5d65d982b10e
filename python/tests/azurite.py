"""The Azurite test server (scripts/testservers): its settings, a container made with a
Shared Key request, and a recording, holding proxy in front of it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import http.server
import os
import threading
import urllib.parse
from datetime import datetime, timezone
from email.utils import format_datetime
from typing import Dict, List, Optional

import pytest


def settings() -> Dict[str, str]:
    ep = os.environ.get("DELTAVACUUM_TEST_AZURE_ENDPOINT")
    if not ep:
        pytest.skip("no Azure test server: set the DELTAVACUUM_TEST_AZURE_* variables (. .cache/testservers.env)")
    # delta-rs's emulator mode (azure_storage_use_emulator) goes to port 10000 unless this says
    # where the server is: the test servers may listen elsewhere (DELTAVACUUM_TEST_AZURE_PORT).
    u = urllib.parse.urlsplit(ep)
    os.environ.setdefault("AZURITE_BLOB_STORAGE_URL", f"{u.scheme}://{u.netloc}")
    return {
        "endpoint": ep.rstrip("/"),
        "account": os.environ.get("DELTAVACUUM_TEST_AZURE_ACCOUNT", "devstoreaccount1"),
        "key": os.environ["DELTAVACUUM_TEST_AZURE_KEY"],
        "container": os.environ.get("DELTAVACUUM_TEST_AZURE_CONTAINER", "deltavacuum-test"),
    }


def ensure_container(s: Dict[str, str]) -> None:
    """PUT ?restype=container, signed with the account key (201 made, 409 already there)."""
    u = urllib.parse.urlsplit(s["endpoint"])
    path = f"{u.path}/{s['container']}"
    date = format_datetime(datetime.now(timezone.utc), usegmt=True)
    headers = {"x-ms-date": date, "x-ms-version": "2021-08-06", "Content-Length": "0"}
    canon_headers = "".join(f"{k}:{v}\n" for k, v in sorted((k.lower(), v) for k, v in headers.items() if k.startswith("x-ms-")))
    # Shared Key string to sign: VERB, 11 standard headers (Content-Length empty for 0), the
    # x-ms- headers, then /account and the URI path (which names the account again on an
    # emulator's path-style endpoint) and the query parameters.
    to_sign = "PUT\n" + "\n" * 11 + canon_headers + f"/{s['account']}{path}\nrestype:container"
    sig = base64.b64encode(hmac.new(base64.b64decode(s["key"]), to_sign.encode(), hashlib.sha256).digest()).decode()
    headers["Authorization"] = f"SharedKey {s['account']}:{sig}"
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("PUT", f"{path}?restype=container", headers=headers)
    r = c.getresponse()
    body = r.read()
    c.close()
    if r.status not in (201, 409):
        raise RuntimeError(f"creating container {s['container']}: HTTP {r.status}: {body[:300]!r}")


class Proxy:
    """A forwarding HTTP proxy on 127.0.0.1 in front of the test server: it records each
    request's method, path and Authorization header, and can hold the DELETE requests (and batch
    POSTs) of data files until released, so that a test knows a run is deleting."""

    def __init__(self, upstream: str) -> None:
        u = urllib.parse.urlsplit(upstream)
        self.host, self.port_up = u.hostname, u.port
        self.requests: List[Dict[str, str]] = []
        self.hold_deletes = False
        self.delete_seen = threading.Event()
        self.release = threading.Event()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # quiet
                pass

            def _forward(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                proxy.requests.append({"method": self.command, "path": self.path,
                                       "authorization": self.headers.get("Authorization", "")})
                deleting = self.command == "DELETE" or (self.command == "POST" and "comp=batch" in self.path)
                # The table's data files only: the run's own bookkeeping under _deltavacuum/ (its
                # heartbeat, removed as the interrupted run ends) goes through.
                hold = deleting and proxy.hold_deletes and "_deltavacuum" not in self.path and b"_deltavacuum" not in body
                if hold:
                    proxy.delete_seen.set()
                    proxy.release.wait(120)
                    self.close_connection = True
                    return  # never forwarded: the client gave up on it
                c = http.client.HTTPConnection(proxy.host, proxy.port_up, timeout=60)
                hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                hdrs["Host"] = f"{proxy.host}:{proxy.port_up}"
                c.request(self.command, self.path, body=body, headers=hdrs)
                r = c.getresponse()
                data = r.read()
                self.send_response_only(r.status, r.reason)
                head = self.command == "HEAD"  # its Content-Length is the blob's size
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection") and (head or k.lower() != "content-length"):
                        self.send_header(k, v)
                if not head:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if not head:
                    self.wfile.write(data)
                c.close()

            do_GET = do_PUT = do_DELETE = do_POST = do_HEAD = _forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def endpoint_via(proxy: Optional[Proxy], s: Dict[str, str]) -> str:
    """The Blob endpoint (with the account) through proxy, or the server's own."""
    if proxy is None:
        return s["endpoint"]
    return proxy.url + urllib.parse.urlsplit(s["endpoint"]).path
