"""A headless Chromium driven over the DevTools protocol, python3 standard library only.

    with Browser.start() as b:          # None when no chromium is installed
        page = b.page()
        page.navigate("file:///tmp/x.html")
        page.eval("document.title")
        page.problems()                 # console errors, exceptions, network requests

The WebSocket client is the least RFC 6455 needs: the opening handshake, masked text
frames out, unmasked (possibly fragmented) frames in, pings answered.
"""
import base64
import hashlib
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class WebSocket:
    def __init__(self, url, timeout=60):
        u = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n"
                           % (u.path, u.hostname, u.port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("websocket: closed during the handshake")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        if " 101 " not in lines[0] + " ":
            raise ConnectionError("websocket: %s" % lines[0])
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        fields = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip()
                  for l in lines[1:] if ":" in l}
        if fields.get("sec-websocket-accept") != accept:
            raise ConnectionError("websocket: bad Sec-WebSocket-Accept")

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("websocket: connection closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def _send_frame(self, opcode, payload):
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i & 3] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + masked)

    def send(self, text):
        self._send_frame(0x1, text.encode())

    def recv(self):
        """The next text message (continuation frames joined)."""
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i & 3] for i, b in enumerate(payload))
            opcode = b0 & 0x0F
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode == 0x8:
                raise ConnectionError("websocket: closed by the browser")
            if opcode in (0x0, 0x1, 0x2):
                message += payload
                if b0 & 0x80:
                    return message.decode()

    def close(self):
        try:
            self._send_frame(0x8, b"")
        except OSError:
            pass
        self.sock.close()


class CDPError(Exception):
    pass


class Page:
    """One page target: commands, the events they produced, and the page's problems."""

    def __init__(self, ws_url):
        self.ws = WebSocket(ws_url)
        self.next_id = 0
        self.events = []
        self.cmd("Runtime.enable")
        self.cmd("Log.enable")
        self.cmd("Page.enable")
        self.cmd("Network.enable")

    def cmd(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise CDPError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method, timeout=30):
        end = time.monotonic() + timeout
        seen = len(self.events)
        for e in self.events:
            if e["method"] == method:
                return e
        while time.monotonic() < end:
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == method:
                    return msg
        raise CDPError("no %s within %ds (%d events)" % (method, timeout, len(self.events) - seen))

    def eval(self, expr):
        """The value of a JavaScript expression (JSON-able), or CDPError on an exception."""
        r = self.cmd("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise CDPError("%s: %s" % (expr[:60], d.get("exception", {}).get("description",
                                                                            d.get("text"))))
        return r["result"].get("value")

    def navigate(self, url, ready="document.documentElement.dataset.ready === '1'", timeout=30):
        """Loads url and waits for its load event and for ready; returns the seconds the
        navigation took until ready was true."""
        self.events = []
        self.url = url
        start = time.monotonic()
        self.cmd("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired", timeout)
        end = time.monotonic() + timeout
        while not self.eval("!!(%s)" % ready):
            if time.monotonic() > end:
                raise CDPError("%s: not ready within %ds" % (url, timeout))
            time.sleep(0.02)
        return time.monotonic() - start

    def problems(self, since=0):
        """Console errors, uncaught exceptions, error log entries and any request for
        something other than the page itself, since the last navigate (and since event
        number since)."""
        out = []
        for e in self.events[since:]:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s: %s" % (p["type"], " ".join(
                    str(a.get("value", a.get("description", ""))) for a in p.get("args", []))))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: %s" % d.get("exception", {}).get("description",
                                                                        d.get("text")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: %s" % p["entry"].get("text"))
            elif m == "Network.requestWillBeSent":
                url = p.get("request", {}).get("url", "")
                if url != self.url and not url.startswith("data:"):
                    out.append("a request for %s" % url)
        return out

    def click(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.cmd("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                     clickCount=1 if kind != "mouseMoved" else 0)

    def hover(self, x, y):
        self.cmd("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)

    def screenshot(self, path, full_page=True):
        params = {"format": "png"}
        if full_page:
            m = self.cmd("Page.getLayoutMetrics")["cssContentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": m["width"], "height": m["height"],
                                "scale": 1})
        data = self.cmd("Page.captureScreenshot", **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        self.ws.close()


class Browser:
    NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

    @staticmethod
    def find():
        for name in Browser.NAMES:
            path = shutil.which(name)
            if path:
                return path
        return None

    def __init__(self, exe, width=1400, height=1000):
        self.dir = tempfile.mkdtemp(prefix="fnprof-chromium-")
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions",
             "--window-size=%d,%d" % (width, height), "--user-data-dir=" + self.dir,
             # A blank page first: the tests navigate once the page's domains are enabled,
             # so that nothing a report logs while it loads is missed.
             "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.dir, "DevToolsActivePort")
        end = time.monotonic() + 30
        while True:
            if os.path.exists(port_file):
                with open(port_file) as f:
                    lines = f.read().split()
                if lines:
                    self.port = int(lines[0])
                    break
            if self.proc.poll() is not None or time.monotonic() > end:
                self.close()
                raise CDPError("chromium did not start (no DevToolsActivePort)")
            time.sleep(0.05)

    def page(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/json" % self.port, timeout=10) as r:
            targets = json.loads(r.read())
        for t in targets:
            if t.get("type") == "page":
                return Page(t["webSocketDebuggerUrl"])
        raise CDPError("no page target")

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
# SPDX-License-Identifier: MIT
