"""A real mail relay for the tests: aiosmtpd on a free loopback port, keeping every message it takes."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller


class Inbox:
    """An aiosmtpd handler keeping every message it receives, and the TLS version each came over (None:
    plain text)."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.envelopes: list[Any] = []
        self.tls: list[str | None] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.envelopes.append(envelope)
        tls = server.transport.get_extra_info("ssl_object")
        self.tls.append(tls.version() if tls is not None else None)
        self.messages.append(message_from_bytes(envelope.original_content, policy=policy.default))  # type: ignore[arg-type]
        return "250 Message accepted for delivery"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_relay(box: Inbox | None = None, **options: Any) -> Iterator[tuple[Inbox, int]]:
    """A plain relay (no TLS, no login) handing what it takes to ``box``; ``options`` go to aiosmtpd's
    Controller (``data_size_limit``...)."""
    box, port = box or Inbox(), free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port, **options)
    controller.start()
    try:
        yield box, port
    finally:
        controller.stop()
