"""Shared fixtures: a real sandbox server (uvicorn on a free loopback port, a fresh SQLite file).

Use ``sandbox`` in any test that talks to the platform::

    def test_something(sandbox):
        response = httpx.post(f"{sandbox.base_url}/api/add_edit_staff", json=..., headers=sandbox.auth())
        assert sandbox.staff(99)[0]["name"] == "Aisha"
"""

from __future__ import annotations

import functools
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import stamina
import uvicorn

from hrimport.reader import workbook
from hrimport.sandbox.alterations import Alterations
from hrimport.sandbox.app import create_app
from hrimport.sandbox.faults import FaultSettings
from tests.mail_relay import Inbox, running_relay


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every test client: building one per client costs ~50 ms (unused on loopback)."""
    return ssl.create_default_context()


class SandboxServer:
    """A sandbox served by uvicorn in a thread of the test process, on ``db_path``.

    Attributes and helpers:

    - ``base_url``: ``http://127.0.0.1:PORT/sandbox`` (the spec's ``{base_url}``); ``root_url`` without
      ``/sandbox``; ``db_path``; ``port``.
    - ``auth(token="demo-customer-99", bearer=True)``: an ``Authorization`` header dict.
    - ``requests()``: the request log (``[{"time", "method", "path", "status", "elements", "fault",
      "duration_ms"}]``, API requests only); ``clear_requests()``.
    - ``bodies``: each POST's body, byte for byte as the server received it, in order (a test comparing the
      bytes a client sent; cleared by ``clear_requests()``).
    - ``set_faults(**settings)`` (the fields of ``FaultSettings``, e.g. ``rules=[{"path":
      "/api/bulk_add_edit_staff", "status": 503, "count": 2}]`` or ``error_rate=0.5, seed=1``);
      ``clear_faults()``.
    - ``set_alterations(**settings)`` (the fields of ``Alterations``, e.g. ``truncate_text=40,
      drop_fields=["highest_education"]``): store staff values otherwise than sent; ``clear_alterations()``.
    - ``staff(customer_id=None)`` and ``time_off(customer_id=None)``: the stored records;
      ``cancel_time_off(record_id)``: cancel one, as HR does in the platform's own pages.
    - ``http``: an ``httpx.Client`` whose base URL is ``base_url`` (``sandbox.http.post("/api/...")``);
      one client for the server's life, because building a client costs ~50 ms (its SSL context).
    - ``restart()``: stop and start again on the same file and port (empty request log, faults and
      alterations kept).
    - ``stop()``: stop (the fixture also stops it and closes ``http`` at teardown).
    """

    def __init__(self, db_path: Path, faults: FaultSettings | None = None,
                 alterations: Alterations | None = None) -> None:
        self.db_path = Path(db_path)
        self.faults = faults
        self.alterations = alterations
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self.bodies: list[bytes] = []
        self.start()
        self.http = httpx.Client(base_url=self.base_url, timeout=10, verify=_tls_context())
        self._admin_http = httpx.Client(base_url=self.root_url + "/_admin", timeout=10, verify=_tls_context())

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/sandbox"

    def start(self) -> None:
        """Serve ``create_app(db_path)`` on a free port; returns once ``GET /`` answers 200."""
        config = uvicorn.Config(
            _BodyRecorder(create_app(self.db_path, self.faults, self.alterations), self.bodies),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name="sandbox", daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the sandbox did not start")
            time.sleep(0.005)
        self._server, self._thread = server, thread
        self.port = server.servers[0].sockets[0].getsockname()[1]
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as probe:
            probe.sendall(b"GET / HTTP/1.1\r\nHost: sandbox\r\nConnection: close\r\n\r\n")
            if not probe.recv(64).startswith(b"HTTP/1.1 200"):
                raise RuntimeError("the sandbox's health page did not answer 200")

    def stop(self, *, wait: bool = True) -> None:
        """Stop the server; ``wait=False`` only asks it to stop (uvicorn takes ~0.15 s to wind down)."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            if wait:
                self._thread.join(timeout=10)
        self._server = self._thread = None

    def close(self) -> None:
        """Close the HTTP clients (so no connection keeps the server busy), then stop without waiting."""
        self.http.close()
        self._admin_http.close()
        self.stop(wait=False)

    def restart(self) -> None:
        """Stop and start again on the same SQLite file (the state must survive)."""
        settings, alterations = self.get_faults(), self._admin("GET", "/alterations")
        self.stop()
        self.faults = FaultSettings.model_validate(settings)
        self.alterations = Alterations.model_validate(alterations)
        self.start()

    @staticmethod
    def auth(token: str = "demo-customer-99", *, bearer: bool = True) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}" if bearer else token}

    def _admin(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._admin_http.request(method, path, **kwargs)
        response.raise_for_status()
        return response.json()

    def requests(self) -> list[dict[str, Any]]:
        return self._admin("GET", "/requests")

    def clear_requests(self) -> None:
        self._admin("DELETE", "/requests")
        self.bodies.clear()

    def get_faults(self) -> dict[str, Any]:
        return self._admin("GET", "/faults")

    def set_faults(self, **settings: Any) -> dict[str, Any]:
        return self._admin("POST", "/faults", json=settings)

    def clear_faults(self) -> None:
        self._admin("DELETE", "/faults")

    def set_alterations(self, **settings: Any) -> dict[str, Any]:
        return self._admin("POST", "/alterations", json=settings)

    def clear_alterations(self) -> None:
        self._admin("DELETE", "/alterations")

    def staff(self, customer_id: int | None = None) -> list[dict[str, Any]]:
        params = {} if customer_id is None else {"customer_id": customer_id}
        return self._admin("GET", "/staff", params=params)

    def time_off(self, customer_id: int | None = None) -> list[dict[str, Any]]:
        params = {} if customer_id is None else {"customer_id": customer_id}
        return self._admin("GET", "/time_off", params=params)

    def cancel_time_off(self, record_id: int) -> dict[str, Any]:
        """Cancel a record as HR does in the platform's own pages (``deleted_at`` set; it overlaps nothing)."""
        return self._admin("DELETE", f"/time_off/{record_id}")


class _BodyRecorder:
    """ASGI middleware in front of the sandbox keeping each POST's body as it arrived (the app gets the same
    messages): what a client put on the wire, not what the app made of it."""

    def __init__(self, app: Any, bodies: list[bytes]) -> None:
        self.app, self.bodies = app, bodies

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or "/_admin" in scope["path"]:
            await self.app(scope, receive, send)
            return
        parts: list[bytes] = []

        async def recording() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                parts.append(message.get("body", b""))
            return message

        try:
            await self.app(scope, recording, send)
        finally:
            self.bodies.append(b"".join(parts))


@pytest.fixture
def start_sandbox() -> Iterator[Callable[..., SandboxServer]]:
    """A factory ``start_sandbox(db_path, faults=None) -> SandboxServer``: more servers (e.g. a second one
    on an existing file); all are stopped at teardown."""
    started: list[SandboxServer] = []

    def start(db_path: Path | str, faults: FaultSettings | None = None) -> SandboxServer:
        server = SandboxServer(Path(db_path), faults)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


@pytest.fixture
def sandbox(tmp_path: Path, start_sandbox: Callable[..., SandboxServer]) -> SandboxServer:
    """A running sandbox on a fresh SQLite file (``tmp_path / "sandbox.db"``) with the demo dataset.

    Real HTTP over loopback: ``sandbox.base_url`` is ``http://127.0.0.1:PORT/sandbox``. Demo tokens:
    ``demo-vendor``, ``demo-vendor-noportal``, ``demo-customer-99``, ``demo-customer-100``. See
    ``SandboxServer`` for ``requests()``, ``set_faults()``, ``staff()``, ``time_off()``, ``restart()``.
    """
    return start_sandbox(tmp_path / "sandbox.db")


@pytest.fixture
def instant_retries() -> Iterator[None]:
    """Retries without their real waits (timing is test_client.py's subject), each client policy's number
    of tries kept (``cap``). Use it with ``pytestmark = pytest.mark.usefixtures("instant_retries")``."""
    with stamina.set_testing(True, attempts=100, cap=True):
        yield


@pytest.fixture(params=["fastexcel", "calamine"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a workbook test through fastexcel and through python-calamine's own objects."""
    if request.param != "fastexcel":
        monkeypatch.setattr(workbook, "FAST_XLSX", False)
    return request.param


@pytest.fixture
def relay() -> Iterator[tuple[Inbox, int]]:
    """A mail relay on a free loopback port, keeping every message it takes: (its inbox, its port)."""
    with running_relay() as (box, port):
        yield box, port


@pytest.fixture
def leave_file(tmp_path: Path, sandbox: Any) -> tuple[Path, Path]:
    """Staff 000101 (MY) on the sandbox; a one-row leave export and its config in ``tmp_path``."""
    import datetime as dt

    from tests.test_timeoff_import import add_staff, write_config, write_xlsx

    add_staff(sandbox, [("000101", "MY")])
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", dt.date(2024, 3, 4), dt.date(2024, 3, 8), "", "", "MY", "", ""]])
    sandbox.clear_requests()
    return write_config(tmp_path), source
