"""Stage lines: an import says as each stage starts (reading, validating, sending), for whoever watches.

The imports call ``announce("Reading staff.csv")``; the line is logged at INFO (so ``hrimport run`` keeps it
in run.log, with its time) and handed to the listener that whoever runs the import set with
``stage_listener``: the CLI's prints it on a terminal, so the seconds before the progress bar are not silent,
and sets none without one, so cron logs stay as they were. The stages only announce and never print; the
listener is a context variable, not an argument of every stage function, because nothing but this line
depends on it.

Example::

    with stage_listener(print):
        import_file(config, source)   # prints "Reading staff.csv", "Validating 1,204 rows", "Sending ..."
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["announce", "stage_listener"]

log = logging.getLogger(__name__)

_listener: ContextVar[Callable[[str], None] | None] = ContextVar("hrimport_stage_listener", default=None)


def announce(line: str) -> None:
    """Say that a stage starts: ``line`` in the log, and to the listener if one is set."""
    log.info("%s", line)
    listener = _listener.get()
    if listener is not None:
        listener(line)


@contextmanager
def stage_listener(listener: Callable[[str], None]) -> Iterator[None]:
    """Hand every stage line announced inside the block to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
