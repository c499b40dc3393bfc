"""The run log: the ``pipeline`` package's INFO lines go to the run folder's ``run.log``, secrets hidden.

The log is the whole story of an unattended run (stderr gets one line per step); the token and the SMTP
password are replaced by ``<hidden>`` in every line, and the CLI's stderr still gets only what it got before.

It is also what the next run reads of a run that left no ``run.json`` (``logged_end``): whether its steps were
done (``STEPS_DONE``) and its e-mail went (``EMAILED``) or failed (``NOT_EMAILED``), or its last line was cut (a
power cut, a full disk).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from hrimport.errors import ConfigError, HrimportError
from hrimport.hidden import hide_secrets, remember_secret
from hrimport.interrupts import Terminated
from hrimport.jobs.jobfile import Job
from hrimport.listing import one_line
from hrimport.private_files import open_private

__all__ = ["EMAILED", "NOT_EMAILED", "NOT_EMAILED_TO_ALL", "RUN_LOG", "SAID", "STEPS_DONE", "LoggedEnd",
           "RunLogNotMade", "logged_end", "run_log"]

# the name run.log lines have always carried (%(name)s), kept through the split into modules
log = logging.getLogger("hrimport.jobs")

RUN_LOG = "run.log"

#: ``log.info(STEPS_DONE, job, verdict, exit code, its meaning)``: the run's steps are done, before its run.json and
#: its e-mail
STEPS_DONE = "job %s finished: %s (exit %d: %s)"
#: ``log.info(EMAILED, recipients, seconds)``: the run's e-mail went
EMAILED = "e-mailed the verdict to %s in %.1f s"
#: ``log.error(NOT_EMAILED, why)``: the run's e-mail could not be sent (the server down, a refused login...)
NOT_EMAILED = "e-mail not sent: %s"
#: ``log.error(NOT_EMAILED_TO_ALL, why)``: the server refused some recipients and took the e-mail for the others
NOT_EMAILED_TO_ALL = "e-mail not sent to every recipient: %s"


class _Redact(logging.Filter):
    """Replace any secret (the token, the SMTP password) that might reach a log line, and keep each record one
    line (a file name holding a line break must not start a line of its own that reads like another record)."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = one_line(hide_secrets(record.getMessage(), self.secrets), None), None
        if record.exc_info and not record.exc_text:  # a traceback (an unexpected error): its lines kept, no secret
            record.exc_text = hide_secrets(logging.Formatter().formatException(record.exc_info), self.secrets)
        return True


#: ``log.error(..., extra=SAID)``: a line run.log keeps that the run also says on stderr in its own words (a
#: step's line, "Error: e-mail not sent: ..."), so that cron's log gets it once
SAID = {"said": True}


class _LogFile(logging.StreamHandler):  # type: ignore[type-arg]
    """``run.log``'s handler: a disk that fills up ends the log quietly. logging's default prints
    "--- Logging error ---" and a traceback on stderr for every line after (cron's log); the lines still go
    to stderr as ever, and the run's own error says what could not be written.

    A log that stops for a write error is left with its last line cut (``logged_end``'s ``cut``), never whole:
    a whole log that stops mid-run is what a kill leaves (the next run says it "sent no e-mail"), where this run
    goes on without its log, and may send its e-mail. A disk that fills up mid-line cuts it itself; one that
    fills up exactly at a line's end leaves it whole, so its line break is taken off (shortening a file needs
    no room on the disk)."""

    def __init__(self, stream: IO[str], path: Path) -> None:
        super().__init__(stream)
        self.path = path

    def handleError(self, record: logging.LogRecord) -> None:
        self.setLevel(logging.CRITICAL + 1)  # nothing more is tried
        if not isinstance(sys.exc_info()[1], OSError):
            return
        try:
            self.stream.close()  # the bytes the disk did not take are dropped: none may land after the cut
        except OSError:
            pass
        self.stream = None  # flush() skips a handler with no stream
        _cut_last_line(self.path)


def _cut_last_line(path: Path) -> None:
    """Take the line break off the end of ``path``, if it ends with one."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        if size:
            os.lseek(fd, size - 1, os.SEEK_SET)
            if os.read(fd, 1) == b"\n":
                os.ftruncate(fd, size - 1)
    except OSError:
        pass  # the log stays as the disk left it
    finally:
        os.close(fd)


class _HandOn(logging.Handler):
    """Give the parent loggers (the CLI's stderr line) only what they got before the run log lowered the
    level to INFO: the run's INFO lines belong in run.log, not on stderr; nor do the lines the run says itself
    (but under ``--debug`` the traceback of an unexpected error, which its line does not hold)."""

    def __init__(self, logger: logging.Logger, level: int) -> None:
        super().__init__(level)
        self.parent = logger.parent

    def emit(self, record: logging.LogRecord) -> None:
        # under --debug (this handler at DEBUG) an unexpected error's traceback goes to stderr too, above its line
        debug_traceback = record.exc_info is not None and self.level <= logging.DEBUG
        if self.parent is not None and (debug_traceback or not getattr(record, "said", False)):
            self.parent.handle(record)


class RunLogNotMade(ConfigError):
    """The run's run.log cannot be created (a full disk, a folder hrimport may not write): the run does not start."""


@contextmanager
def run_log(path: Path, job: Job) -> Iterator[list[str]]:
    """Log the ``pipeline`` package to the run's ``run.log``; yields the list of secrets to keep out of it."""
    secrets: list[str] = []
    if job.notify and job.notify.password_env:
        secrets.append(os.environ.get(job.notify.password_env, ""))
        remember_secret(secrets[-1])  # and out of the one line of an error nobody foresaw
    try:
        stream = open_private(path, "w")  # 0600: the log names files and people's rows
    except OSError as exc:
        raise RunLogNotMade(f"cannot create the run's log {path}: {exc.strerror or exc}; free space there, or set "
                            f"report_dir in {job.path.name} to a folder hrimport may write") from None
    handler = _LogFile(stream, path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    redact = _Redact(secrets)
    handler.addFilter(redact)
    package = logging.getLogger("hrimport")
    level, propagate = package.level, package.propagate
    hand_on = _HandOn(package, package.getEffectiveLevel())
    hand_on.addFilter(redact)
    package.setLevel(min(logging.INFO, package.getEffectiveLevel()))
    package.propagate = False
    package.addHandler(handler)
    package.addHandler(hand_on)
    try:
        yield secrets
    except KeyboardInterrupt:  # a person's Ctrl-C outside the sending: no error, and no traceback on the terminal
        log.info("the run was stopped by Ctrl-C (SIGINT)")
        raise
    except Terminated:  # SIGTERM there (systemctl stop): the same
        log.info("the run was stopped by SIGTERM")
        raise
    except HrimportError as exc:  # said in one line, as on stderr (the state database cannot be opened...)
        log.error("the run stopped: %s", exc)
        raise
    except BaseException:
        log.exception("the run stopped on an unexpected error")
        raise
    finally:
        package.removeHandler(hand_on)
        package.removeHandler(handler)
        package.setLevel(level)
        package.propagate = propagate
        handler.close()
        try:
            stream.close()  # a StreamHandler never closes its stream
        except OSError:
            pass  # a full disk: what could be written is there; the run's own error says the rest


@dataclass(frozen=True)
class LoggedEnd:
    """How far a run went, as its run.log says."""

    verdict: str | None  # the verdict its steps ended with (``STEPS_DONE``); None: the log does not say they ended
    exit_code: int | None
    emailed: bool  # its e-mail went (``EMAILED``), to every recipient or to some (``NOT_EMAILED_TO_ALL``)
    cut: bool  # its last line has no line break: the log stopped mid-write (the machine stopped, a full disk)
    email_error: str | None = None  # why its e-mail could not be sent (``NOT_EMAILED``), as the log says


def logged_end(path: Path) -> LoggedEnd | None:
    """What ``path`` (a run's run.log) says of the run's end; None when it cannot be read. A last line cut as it
    was written says nothing (as if the log had stopped before it), but that it was cut."""
    # each line is "TIME LEVEL hrimport.jobs: MESSAGE" (run_log's format); the messages as the run writes them
    done, emailed = f" {log.name}: job ", f" {log.name}: {EMAILED.split('%s', 1)[0]}"
    not_emailed, to_some = (f" {log.name}: {said.split('%s', 1)[0]}" for said in (NOT_EMAILED, NOT_EMAILED_TO_ALL))
    verdict: str | None = None
    exit_code: int | None = None
    email_error: str | None = None
    sent = cut = False
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                if not raw.endswith(b"\n"):
                    cut = True
                    break
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                if done in line and " finished: " in line:
                    said = line.split(" finished: ", 1)[1]
                    head, found, rest = said.rpartition(" (exit ")  # the meaning after it holds none
                    verdict = head if found else said
                    code = rest.split(":", 1)[0] if found else ""
                    exit_code = int(code) if code.isdigit() else None
                elif emailed in line or to_some in line:  # those the server took have it
                    sent = True
                elif not_emailed in line:
                    email_error = line.split(not_emailed, 1)[1]
    except OSError:
        return None
    return LoggedEnd(verdict, exit_code, sent, cut, email_error)
