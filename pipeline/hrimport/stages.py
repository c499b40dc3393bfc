"""Stage lines: an import says as each stage starts (reading, validating, sending), for whoever watches; and
while it sends, how far it is (``ProgressLog``).

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
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["PROGRESS_LOG_SECONDS", "ProgressLog", "announce", "stage_listener"]

#: An import says how far a long stage is (``ProgressLog``) at most this often, in seconds.
PROGRESS_LOG_SECONDS = 60.0

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


class ProgressLog:
    """A progress callback (rows just done, the total: ``hrimport.outcomes.Progress``) that says in the log, at
    most every ``every`` seconds (``PROGRESS_LOG_SECONDS``), how many rows are done (``done``: "answered" by the
    sending, "checked" by the total days), how long since the first call and about how long is left at that pace
    (``staff: 1,200 of 19,527 rows answered (6%) after 1 min 5 s; about 16 min 32 s left``), then hands the
    count on to ``then`` (a terminal's progress bar). ``hrimport run`` keeps the lines in run.log: a cron run
    sending for half an hour shows that it moves, and how fast, where its log said "Sending 19,527 rows" and
    nothing more until the end. A stage shorter than ``every`` says nothing."""

    def __init__(self, label: str, then: Callable[[int, int], None] | None = None, *, done: str = "answered",
                 every: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.then, self.clock, self.what = label, then, clock, done
        self.every = PROGRESS_LOG_SECONDS if every is None else every
        self.done = self.first = 0  # rows done, and of them those of the first call
        self.started: float | None = None
        self.said: float | None = None

    def __call__(self, answered: int, total: int) -> None:
        if self.then is not None:
            self.then(answered, total)
        now = self.clock()
        self.done += answered
        if self.started is None:  # the first call: the pace is measured from it (reading took its own time)
            self.started, self.said, self.first = now, now, self.done
            return
        assert self.said is not None
        if now - self.said < self.every or self.done >= total:
            return
        self.said = now
        took = now - self.started
        pace = (self.done - self.first) / took if took else 0.0  # rows a second since the first call
        left = f"; about {_duration((total - self.done) / pace)} left" if pace else ""
        log.info("%s: %s of %s rows %s (%d%%) after %s%s", self.label, f"{self.done:,}", f"{total:,}", self.what,
                 100 * self.done // total, _duration(took), left)


def _duration(seconds: float) -> str:
    """``45 s``, ``2 min 10 s``, ``1 h 5 min``: as a person reads a log.

    >>> _duration(45.2), _duration(130), _duration(3900)
    ('45 s', '2 min 10 s', '1 h 5 min')
    """
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"
