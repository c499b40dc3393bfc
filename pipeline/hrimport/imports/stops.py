"""Why an import stopped after rows were done, in the words its journal ends with (``OutcomeJournal.stopped``).

A run stopped before its report leaves only its journal (``outcomes.jsonl``: one line per row the service
answered). ``hrimport runs``, its ``--json`` and the job's ``index.html`` read it, and would otherwise call every
such run "stopped before it finished (or is still sending)": HR, reading the page, cannot tell a full disk
to free from a run still going. So an import that stops for a reason it knows ends its journal with a
``stopped`` line: ``why`` (what happened, named so that an HR person understands it: which folder, which
disk) and ``next`` (what to do). A kill (``kill -9``, a power cut, the OOM killer) writes nothing: nothing runs.

``stop_of(exc)`` is that line for whatever ended the run (None: nothing to say); ``report_not_written``
the one for a report that could not be written, which only the import knows the folders of.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import NamedTuple

from hrimport.errors import (
    AuthenticationError,
    HrimportError,
    ServiceError,
    StateNotWritten,
    unexpected_error,
)
from hrimport.hidden import hide_secrets
from hrimport.interrupts import Terminated
from hrimport.listing import one_line
from hrimport.report.history import BUG_NEXT

__all__ = ["Stop", "report_not_written", "stop_of"]

_AGAIN = "run the import again: nothing is sent twice, and its report accounts for every row"
_FREE_SPACE = "free space on that disk (delete files nobody needs there, or ask IT for more room)"
#: errno of a disk that is full (ENOSPC), or of a quota used up (EDQUOT), which a person sees alike
_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


class Stop(NamedTuple):
    """A journal's last line: why the run stopped, and what to do."""

    why: str
    next: str


def stop_of(exc: BaseException) -> Stop | None:
    """The ``stopped`` line for a run that ``exc`` ended after rows were done; None for what says nothing."""
    if isinstance(exc, KeyboardInterrupt):
        return Stop("the run was stopped by Ctrl-C (SIGINT) before its report was written", _AGAIN)
    if isinstance(exc, Terminated):
        return Stop("the run was stopped by SIGTERM (the machine shutting down, or systemctl stop) before its "
                    "report was written", _AGAIN)
    if isinstance(exc, StateNotWritten):
        return _state_not_written(exc)
    if isinstance(exc, AuthenticationError):
        return Stop(f"the platform stopped accepting hrimport's token (its key to the platform) during the run, so "
                    f"the rows after were not sent ({_said(exc)})",
                    "have the token checked (it may have expired or been revoked), then run the import again: "
                    "nothing is sent twice")
    if isinstance(exc, ServiceError):
        return Stop(f"the platform could not be used any more during the run, so the rows after were not sent "
                    f"({_said(exc)})", "run the import again once the platform is back: nothing is sent twice")
    if isinstance(exc, HrimportError):
        return Stop(f"the run stopped: {_said(exc)}", "fix what it names, then run the import again: nothing is sent "
                    "twice")
    if isinstance(exc, Exception):
        return Stop(unexpected_error(exc), BUG_NEXT)
    return None  # SystemExit, GeneratorExit: not a stop of the run's own


def report_not_written(folder: Path, exc: OSError, kept: Path | None) -> Stop:
    """The ``stopped`` line of a run whose report could not be written into ``folder`` after its rows were sent;
    ``kept``: where its outcomes are kept in the state folder (None: not even there)."""
    if exc.errno in _FULL:
        why = (f"the disk holding the report folder {folder} is full, so the report could not be written after the "
               "rows were sent")
        fix = _FREE_SPACE
    else:
        why = (f"the report could not be written to {folder} after the rows were sent "
               f"({one_line(exc.strerror or str(exc), None)})")
        fix = "fix that folder (ask IT)"
    if kept is None:
        return Stop(why, f"{fix}, then {_AGAIN}")
    return Stop(why, f"{fix}, then write the report with: hrimport report {kept} --output {folder} (the run's "
                     "outcomes are kept in that file)")


def _state_not_written(exc: StateNotWritten) -> Stop:
    folder = exc.path.parent if exc.path is not None else None
    where = f"hrimport's state folder {folder}" if folder is not None else "hrimport's state folder"
    if "full" in exc.reason:  # SQLite's SQLITE_FULL: "database or disk is full"
        why = f"the disk holding {where} is full"
        fix = _FREE_SPACE
    else:
        why = f"{where} could not be written ({one_line(exc.reason or str(exc), None)})"
        fix = "fix that folder (ask IT)"
    return Stop(f"{why}, so the run stopped sending (a row it cannot remember as sent would be sent twice)",
                f"{fix}, then run the import again: the rows not sent are sent then, and nothing is sent twice")


def _said(exc: BaseException) -> str:
    return one_line(hide_secrets(str(exc)), None)
