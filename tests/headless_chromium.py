"""Headless Chromium for the report's browser tests: the command line, and a page driven over DevTools.

The command line (``run_chromium``) dumps a page's DOM or takes a screenshot. ``ChromiumPage`` talks the
Chrome DevTools Protocol over ``--remote-debugging-pipe`` (JSON messages ending in a NUL byte, on file
descriptors 3 and 4 of the browser), which needs nothing but the standard library: it sets the viewport
width, runs a measurement in the page (the page's CSP does not apply to DevTools) and prints to PDF on a
given paper size. ``pdf_page_count`` and ``pdf_text_bottoms`` read that PDF (page tree, and where the text
of each page ends, from its content stream), with the standard library too.

Debian's ``chromium`` is needed (``make chromium`` installs it). Without it a test fails with the install
command, unless ``HRIMPORT_SKIP_BROWSER=1`` says to skip it on purpose.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any, Self

import pytest

#: Paper sizes in inches (DevTools' printToPDF unit).
PAPER = {"A4": (8.27, 11.69), "Letter": (8.5, 11.0)}
_TIMEOUT = 60.0  # seconds to wait for any one answer from the browser


def chromium_path() -> str:
    """The Chromium to run; fails (or skips, with HRIMPORT_SKIP_BROWSER=1) when there is none."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and Path("/usr/bin/chromium").exists():
        found = "/usr/bin/chromium"
    if found is None:
        if os.environ.get("HRIMPORT_SKIP_BROWSER") == "1":
            pytest.skip("HRIMPORT_SKIP_BROWSER=1: browser test skipped on purpose")
        pytest.fail(
            "headless Chromium is missing: run `make chromium` (apt-get install chromium), "
            "or set HRIMPORT_SKIP_BROWSER=1 to skip this test"
        )
    return found


def _flags(profile: Path) -> list[str]:
    return [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
    ]


def run_chromium(page: Path, tmp_path: Path, *args: str) -> str:
    """Run headless Chromium on ``page`` with ``args`` (``--dump-dom``, ``--screenshot=...``); its stdout."""
    command = [chromium_path(), *_flags(tmp_path / "chromium-profile"), *args, page.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


#: Run by a fresh Python: put the two pipes on fds 3 and 4, then become Chromium.
_START = ("import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
          "os.execv(sys.argv[3], sys.argv[3:])")


def _above_nine(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class ChromiumPage:
    """One headless Chromium tab driven over the DevTools pipe. Use as a context manager::

        with ChromiumPage(tmp_path) as tab:
            tab.open(report.html, width=420)
            overflow = tab.evaluate("document.documentElement.scrollWidth")
    """

    def __init__(self, tmp_path: Path) -> None:
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        # The browser reads commands on fd 3 and writes answers on fd 4: a small Python puts the pipes there
        # and starts it, from numbers above 9 so that moving one cannot overwrite the other.
        to_browser_read, from_browser_write = _above_nine(to_browser_read), _above_nine(from_browser_write)
        flags = [*_flags(tmp_path / "chromium-devtools-profile"), "--remote-debugging-pipe", "about:blank"]
        self._log = tmp_path / "chromium-devtools.log"
        with open(self._log, "wb") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _START, str(to_browser_read), str(from_browser_write), chromium_path(),
                 *flags],
                pass_fds=(to_browser_read, from_browser_write),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        try:
            target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self._send("Target.attachToTarget",
                                       {"targetId": target, "flatten": True})["sessionId"]
            self.send("Page.enable")
            self.send("Runtime.enable")
        except (OSError, AssertionError) as exc:
            self.close()
            said = self._log.read_text(errors="replace")[-2000:]
            raise AssertionError(f"Chromium did not start: {said}") from exc

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                self._send("Browser.close")
            except (OSError, AssertionError):
                pass
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    # --- the protocol ---------------------------------------------------------------------------------

    def _message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            readable, _, _ = select.select([self._from_browser], [], [], _TIMEOUT)
            assert readable, f"Chromium did not answer in {_TIMEOUT:.0f} s"
            chunk = os.read(self._from_browser, 1 << 16)
            assert chunk, "Chromium closed the DevTools pipe"
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def _send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self._next_id += 1
        request: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            request["sessionId"] = session
        os.write(self._to_browser, json.dumps(request).encode() + b"\0")
        while True:
            message = self._message()
            if message.get("id") == self._next_id:
                assert "error" not in message, (method, message["error"])
                return message.get("result", {})
            if "method" in message:
                self._events.append(message)

    def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send one DevTools command to the tab; its result."""
        return self._send(method, params, self._session)

    def _wait_for(self, event: str) -> None:
        while True:
            for i, message in enumerate(self._events):
                if message.get("method") == event and message.get("sessionId") == self._session:
                    del self._events[: i + 1]
                    return
            self._events.append(self._message())

    # --- what the tests do ------------------------------------------------------------------------------

    def open(self, page: Path | str, *, width: int = 1400, height: int = 900, media: str = "") -> None:
        """Load ``page`` in a viewport ``width`` CSS pixels wide (a phone's when 600 or less). ``media="print"``
        lays it out with its print styles on screen (as on paper, but in one long page); ``""`` leaves the
        media alone: the screen, and print when printing."""
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width <= 600})
        self.send("Emulation.setEmulatedMedia", {"media": media})
        self._events.clear()
        url = page.as_uri() if isinstance(page, Path) else page
        self.send("Page.navigate", {"url": url})
        self._wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-like values only)."""
        answer = self.send("Runtime.evaluate",
                           {"expression": expression, "returnByValue": True, "awaitPromise": True})
        assert "exceptionDetails" not in answer, answer["exceptionDetails"]
        return answer["result"].get("value")

    def print_pdf(self, paper: str) -> bytes:
        """The page printed to PDF on ``paper`` (``A4`` or ``Letter``), margins as the page's CSS says."""
        width, height = PAPER[paper]
        answer = self.send("Page.printToPDF", {"paperWidth": width, "paperHeight": height,
                                                "printBackground": True, "preferCSSPageSize": False})
        return base64.b64decode(answer["data"])


# --- where the text sits on each page of a PDF Chromium printed --------------------------------------------

_OBJECT = re.compile(rb"(\d+) 0 obj\s*")
_TOKEN = re.compile(rb"<<|>>|\[|\]|/[^\s/\[\]<>()%]+|<[0-9A-Fa-f\s]*>|\((?:\\.|[^\\)])*\)"
                    rb"|[-+]?(?:\d+\.?\d*|\.\d+)|[A-Za-z'\"*]+")
_NUMBER = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)")

Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def _times(m: Matrix, n: Matrix) -> Matrix:
    """``m`` then ``n`` (PDF's row-vector convention: m x n)."""
    a, b, c, d, e, f = m
    p, q, r, s, t, u = n
    return (a * p + b * r, a * q + b * s, c * p + d * r, c * q + d * s, e * p + f * r + t, e * q + f * s + u)


def _matrix(values: list[float]) -> Matrix:
    a, b, c, d, e, f = values
    return (a, b, c, d, e, f)


def _objects(pdf: bytes) -> dict[int, tuple[bytes, bytes]]:
    """Object number -> (dictionary text, stream bytes or b"")."""
    found: dict[int, tuple[bytes, bytes]] = {}
    for m in _OBJECT.finditer(pdf):
        start = m.end()
        end = pdf.find(b"endobj", start)
        stream_at = pdf.find(b"stream", start, end)
        if stream_at == -1:
            found[int(m.group(1))] = (pdf[start:end], b"")
            continue
        head = pdf[start:stream_at]
        length = re.search(rb"/Length (\d+)(?! 0 R)", head)
        data_at = stream_at + len(b"stream") + (2 if pdf[stream_at + 6:stream_at + 8] == b"\r\n" else 1)
        if length:
            data = pdf[data_at:data_at + int(length.group(1))]
        else:
            data = pdf[data_at:pdf.find(b"endstream", data_at)].rstrip(b"\r\n")
        found[int(m.group(1))] = (head, zlib.decompress(data) if b"/FlateDecode" in head else data)
    return found


def _pages(objects: dict[int, tuple[bytes, bytes]], number: int) -> list[int]:
    head = objects[number][0]
    if re.search(rb"/Type\s*/Pages\b", head):
        kids = re.search(rb"/Kids\s*\[([^\]]*)\]", head)
        assert kids is not None
        return [p for kid in re.findall(rb"(\d+) 0 R", kids.group(1)) for p in _pages(objects, int(kid))]
    return [number]


def _text_heights(content: bytes) -> list[float]:
    """The y (PDF units, from the bottom) of every run of text a page's content stream draws."""
    ys: list[float] = []
    ctm, stack, tlm = _IDENTITY, [], _IDENTITY
    operands: list[float] = []
    for token in _TOKEN.findall(content):
        if _NUMBER.fullmatch(token):
            operands.append(float(token))
            continue
        if token == b"q":
            stack.append(ctm)
        elif token == b"Q":
            ctm = stack.pop() if stack else _IDENTITY
        elif token == b"cm" and len(operands) >= 6:
            ctm = _times(_matrix(operands[-6:]), ctm)
        elif token == b"BT":
            tlm = _IDENTITY
        elif token == b"Tm" and len(operands) >= 6:
            tlm = _matrix(operands[-6:])
        elif token in (b"Td", b"TD") and len(operands) >= 2:
            tlm = _times((1.0, 0.0, 0.0, 1.0, operands[-2], operands[-1]), tlm)
        elif token in (b"Tj", b"TJ", b"'", b'"'):
            ys.append(_times(tlm, ctm)[5])
        if not token.startswith((b"<", b"(", b"/", b"[", b"]")):
            operands = []
    return ys


def _page_list(pdf: bytes) -> tuple[dict[int, tuple[bytes, bytes]], list[int]]:
    objects = _objects(pdf)
    root = next(n for n, (head, _) in objects.items()
                if re.search(rb"/Type\s*/Pages\b", head) and b"/Parent" not in head)
    return objects, _pages(objects, root)


def pdf_page_count(pdf: bytes) -> int:
    """Pages in a PDF Chromium printed."""
    return len(_page_list(pdf)[1])


def pdf_text_bottoms(pdf: bytes) -> list[float]:
    """For each page, in order: how far down it its last line of text sits, as a share of the page's height
    (0 top, 1 bottom; 0 for a page without text). A first page whose text stops halfway is mostly empty."""
    objects, pages = _page_list(pdf)
    bottoms = []
    for page in pages:
        head = objects[page][0]
        box = re.search(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]", head)
        contents = re.search(rb"/Contents\s*(\[[^\]]*\]|\d+ 0 R)", head)
        assert box is not None and contents is not None
        height = float(box.group(4)) - float(box.group(2))
        ys = [y for n in re.findall(rb"(\d+) 0 R", contents.group(1)) for y in _text_heights(objects[int(n)][1])]
        bottoms.append(1 - min(ys) / height if ys else 0.0)
    return bottoms
