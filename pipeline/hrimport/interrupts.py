"""Ctrl-C and SIGTERM during an import: stop sending, finish the report, exit 130 or 143.

An import killed outright leaves the rows in flight unreported (the state folder still knows what the
service accepted). A person pressing Ctrl-C, or systemd stopping a unit, deserves better: while
``stop_sending_on_signals`` is active, the first SIGINT or SIGTERM only halts the client
(``ServiceClient.halt``): the requests in flight finish, nothing new is sent, every row not yet sent
becomes ``not_sent``, the report is written, and the command exits 130 (SIGINT) or 143 (SIGTERM)
(``RunResult.exit_code``). A second signal stops at once, as without this module.

Outside the sending (reading, a dry run or a validation, the report), the command line has SIGTERM raise
``Terminated`` (``raise_on_sigterm``), as Python has Ctrl-C raise ``KeyboardInterrupt``: the command's
``finally`` blocks run and it ends in one line, exit 143, rather than vanish without a word in the middle of
a cron job's log.

Signal handlers can only be set from the main thread; elsewhere (a test runner's worker thread, an
embedding application) this does nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Protocol

__all__ = ["Terminated", "raise_on_sigterm", "stop_sending_on_signals"]

_SIGNALS = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}


class Terminated(BaseException):
    """SIGTERM arrived outside the sending (``raise_on_sigterm``): a ``BaseException``, as ``KeyboardInterrupt``
    is, so that no ``except Exception`` takes it for a failure of its own."""


@contextmanager
def raise_on_sigterm() -> Iterator[None]:
    """While active, SIGTERM raises ``Terminated`` in the main thread; the previous handler comes back after
    (``stop_sending_on_signals`` takes SIGTERM over while rows are sent)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


class Haltable(Protocol):
    """What a signal stops (``hrimport.service.client.ServiceClient``)."""

    halted: str | None

    def halt(self, reason: str) -> None: ...


@contextmanager
def stop_sending_on_signals(client: Haltable) -> Iterator[None]:
    """While active, SIGINT/SIGTERM halt ``client`` the first time; the previous handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        if client.halted is not None:  # the second signal: stop now
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)
            return
        client.halt(_SIGNALS[signal.Signals(signum)])

    previous = {signum: signal.signal(signum, handle) for signum in _SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
