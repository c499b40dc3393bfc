"""hrimport's exceptions, and the exit code each one ends a command with.

Bad rows are never exceptions (they are ``Problem`` values, see ``hrimport.outcomes``); these are for a
bad command line, config or file, a job already running, or a service that cannot be used. The one
exception about rows, ``RequestRejected``, is the service's answer to a request; the submitters catch it
and make it the rows' outcome::

    HrimportError
    ├── UsageError               exit 2  a bad option or argument
    ├── ConfigError              exit 2  the import or job config is wrong
    ├── InputFileError           exit 2  the spreadsheet cannot be read as asked
    ├── JobLockedError           exit 3  another run of the same job holds its lock
    ├── ReportNotWritten         exit 6  rows were sent but the report folder could not be written
    ├── StateNotWritten          exit 6  the state folder could not be written mid-run (a full disk)
    ├── RequestRejected          exit 1  the service refused a request for what it says (HTTP 4xx
    │   │                                but 401); normally caught and made the row's outcome
    │   ├── AccessDenied                 403: the token's user may not do this
    │   └── Conflict                     409: clashes with a record the service holds
    └── ServiceError             exit 4  the service cannot be used
        ├── AuthenticationError          401: the token is missing, wrong or expired
        ├── ServiceUnavailableError      still unreachable or failing
        │   └── RetriesExhausted         ... after the retries (``code``: http-503, timeout...)
        └── UnexpectedAnswer             an answer the spec does not describe (a wrong base URL?)

Any other exception is one nobody foresaw (a bug of ours, a library's error never met): the CLI and
``hrimport run`` end it as ``unexpected_error`` says, exit 70 (``EXIT_UNEXPECTED``), never exit 1, which is
"some rows need attention" and counts as a finished run.

``hrimport.service.client`` is the one place where httpx's exceptions and the service's error answers
become these.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from hrimport.hidden import hide_secrets
from hrimport.listing import one_line


class HrimportError(Exception):
    """Base class; ``exit_code`` is what the CLI exits with."""

    exit_code = 2


class UsageError(HrimportError):
    exit_code = 2


class ConfigError(HrimportError):
    exit_code = 2


class InputFileError(HrimportError):
    exit_code = 2


class JobLockedError(HrimportError):
    exit_code = 3


class ReportNotWritten(HrimportError):
    """The run sent its rows, but its report could not be written (a full disk, an unwritable folder).

    Its own exit code: not "rows need attention" (1), which on-call would send to HR without a report.
    What the service accepted is in the state folder, so the next run does not send it again.
    """

    exit_code = 6


class StateNotWritten(HrimportError):
    """The state folder (what the service accepted, the time-off ledger) could not be written mid-run: a full
    disk. The run stops sending: a row the state cannot remember would be sent again by the next run, and a
    time-off record never goes out without its ledger entry. Exit 6, as for the report: a full disk or folder
    to see to, never "rows need attention" (1). ``path`` is the file that could not be written, ``reason``
    SQLite's words (``database or disk is full``), for the run's journal (``hrimport.imports.stops``)."""

    exit_code = 6

    def __init__(self, message: str, *, path: Path | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


class ServiceError(HrimportError):
    exit_code = 4


class AuthenticationError(ServiceError):
    pass


class ServiceUnavailableError(ServiceError):
    pass


# ------------------------------------------------------------------------- what the service's answers say
# Raised by ``hrimport.service.client``, the one place where httpx's exceptions and the service's error
# answers become hrimport's.


class RequestRejected(HrimportError):
    """The service refused a request because of what it says (HTTP 4xx other than 401): bad data, not a
    failing service.

    A per-row answer: the submitters catch it and make it the row's outcome. Only a rejection no caller
    expected reaches the command line, and then the rows sent need attention (exit 1).

    ``details`` is the service's list of ``{"index", "field", "reason"}`` entries when it gave one (the bulk
    endpoint names each bad element by its ``index`` in ``bulk_staff_data``), else ``[]``.
    """

    exit_code = 1

    def __init__(
        self,
        status: int,
        error: str,
        details: list[dict[str, Any]] | None = None,
        body: Any = None,
        *,
        method: str = "",
        path: str = "",
    ) -> None:
        self.status = status
        self.error = error
        self.details = list(details or [])
        self.body = body
        self.method = method
        self.path = path
        super().__init__(self._text())

    def _text(self) -> str:
        text = f"the service rejected {self.method} {self.path} (HTTP {self.status}"
        text += f": {self.error})" if self.error else ")"
        if self.details:
            shown = "; ".join(_describe_detail(d) for d in self.details[:5])
            more = f" (and {len(self.details) - 5} more)" if len(self.details) > 5 else ""
            text += f": {shown}{more}"
        return text

    @property
    def reasons(self) -> str:
        """The service's reasons in one line, for a report."""
        if self.details:
            return "; ".join(_describe_detail(d) for d in self.details)
        return self.error or f"HTTP {self.status}"


class AccessDenied(RequestRejected):
    """HTTP 403: the token's user may not do this (spec "Errors": the vendor listing answers
    ``{"code": "ERROR_FATAL", "message": "Access Denied"}`` to a user without vendor portal access)."""


class Conflict(RequestRejected):
    """HTTP 409: the request clashes with what the service holds (a time-off period overlapping a stored
    record, api-notes "Time off"); ``body`` is the service's answer. Catch it before ``RequestRejected``."""


class RetriesExhausted(ServiceUnavailableError):
    """Still failing after the retries (or failing in a way that must not be retried).

    ``code`` is a stable problem code: ``http-503``, ``connect-failed`` (nothing listens or the host cannot
    be reached), ``timeout``, ``transport-failed``. ``unreachable`` is true when no connection could be made
    at all, so the request never reached the service. ``service_lost`` is true when this failure ended the
    run's use of the service (``ServiceClient`` then answers every later call at once with the code
    ``not-sent``): the run stops sending and exits 4.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str,
        attempts: int,
        status: int | None = None,
        request_id: str | None = None,
        unreachable: bool = False,
        service_lost: bool = False,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.attempts = attempts
        self.status = status
        self.request_id = request_id
        self.unreachable = unreachable
        self.service_lost = service_lost


class UnexpectedAnswer(ServiceError):
    """A 2xx (or 3xx) answer that is not what the spec describes: the base URL is probably wrong."""


def _describe_detail(detail: Any) -> str:
    """One service ``details`` entry as ``field: reason`` (the index is the caller's business)."""
    if not isinstance(detail, dict):
        return str(detail)
    field_name = detail.get("field")
    reason = detail.get("reason") or detail.get("message") or ""
    return f"{field_name}: {reason}" if field_name else str(reason)


EXIT_OK = 0
EXIT_ROWS_NEED_ATTENTION = 1
EXIT_INPUT = 2
EXIT_LOCKED = 3
EXIT_SERVICE = 4
EXIT_HELD = 5  # the drift guard held the run: nothing sent (hrimport.changes.guards)
EXIT_REPORT = 6
#: hrimport stopped on an exception nobody foresaw: a bug (sysexits' EX_SOFTWARE, "internal software error").
#: Not 1, which Python exits with on a traceback: 1 is "some rows need attention", a finished run (systemd's
#: SuccessExitStatus=1 in the README)
EXIT_UNEXPECTED = 70
#: Stopped by a signal: the shell's convention, 128 + the signal's number (SIGINT 2, SIGTERM 15).
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


def unexpected_error(exc: BaseException) -> str:
    """``hrimport stopped on an unexpected error (TypeError: ...)``: an exception nobody foresaw, in one line,
    any secret this process read (the token) hidden from its text, which a library may have filled with anything."""
    said = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return f"hrimport stopped on an unexpected error ({one_line(hide_secrets(said))})"


_JOURNAL_ATTRIBUTE = "hrimport_journal"


def name_journal(exc: BaseException, journal: Path) -> None:
    """Tell whoever ends ``exc`` in one line (the CLI's error boundary) that the run it stopped left its journal
    in ``journal``, ended by why (``hrimport.outcomes.OutcomeJournal.stopped``): only the import knows where
    its dated report folder is."""
    try:
        setattr(exc, _JOURNAL_ATTRIBUTE, journal)
    except (AttributeError, TypeError):  # an exception type that takes no attribute: its line names no journal
        pass


def journal_named(exc: BaseException) -> Path | None:
    """The journal ``name_journal`` put on ``exc``, or None."""
    journal = getattr(exc, _JOURNAL_ATTRIBUTE, None)
    return journal if isinstance(journal, Path) else None


E = TypeVar("E", bound=BaseException)


def untraced(exc: E) -> E:
    """``exc``, and the exceptions it was raised from, without their tracebacks: for an error kept as data
    (a request's answer), not raised. A traceback's frames (an HTTP client's, its retry loop's state) hold
    the exception again, a reference cycle only a full collection frees: a run of rejected batches kept
    each one's request body and answer, ~300 KB a batch, to its end."""
    seen: set[int] = set()
    chained: list[BaseException | None] = [exc]
    while chained:
        current = chained.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        current.__traceback__ = None
        chained += [current.__cause__, current.__context__]
    return exc
