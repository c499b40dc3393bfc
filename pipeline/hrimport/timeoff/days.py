"""Total days of a time-off record: HR's figure, the calculation endpoint's count, and what is sent.

The calculation endpoint (spec, endpoint 4) takes a country, two dates and the half-day flags, but no
leave type: it counts working days. Each distinct ``(country, start, end, half start, half end)`` is asked
once per run, however many rows share it.

HR's figure is the company's truth (issue 12): companies observe holidays the public calendar lacks, count
sick leave in working days, and so on. ``[timeoff] total_days`` says what is sent (``TotalsPolicy``):

- ``file`` (default): a row's own figure is sent; when the service counts differently the row carries the
  warning ``total-days-differs`` with both figures. A row without a figure gets the service's count.
- ``service``: the service's count is sent, with the same warning when the file said otherwise.
- ``strict``: a row whose figure differs is not sent (``total-days-mismatch``).

A period in which the service counts no working day is sent with the file's figure when there is one (with
the warning unless the file says 0 too; ``strict`` flags a figure other than 0). When there is none it is
sent with the service's 0, the interface stating no rule against a record of 0 days (the published example
books a weekend), with the warning ``no-leave-days`` saying what to check (wrong dates, or leave counted every
day); ``strict`` holds it back (``no-leave-days``, an error). The leave-type dictionary's ``Calendar`` basis
(sick leave counted every day, api-notes) is not in the interface, so it never refuses a row: it only explains
a difference.

A row whose half-day cell could not be read (``TimeOffRow.halves_read`` False) reaches here only with a figure
under ``file``: the time-off record carries no half days (spec, endpoint 5), so it is sent with that figure,
and the calculation, whose count follows the half days, is not asked for it (its warning was given as it was
read: ``hrimport.timeoff.rows.unread_halves``). Under ``service`` and ``strict``, or without a figure, such a
row is held back before it comes here.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Literal, Protocol

from hrimport.errors import RequestRejected, RetriesExhausted, ServiceUnavailableError, untraced
from hrimport.outcomes import Outcome, Problem, RowOutcome

if TYPE_CHECKING:
    from hrimport.timeoff.rows import TimeOffRow  # rows.py imports DayKey from here

__all__ = [
    "TOTALS_POLICIES", "DayCalculator", "DayKey", "DaysClient", "TotalsPolicy", "TotalsSettler", "calendar_days",
    "format_days", "parse_days", "settle_totals",
]

TotalsPolicy = Literal["file", "service", "strict"]
#: ``[timeoff] total_days``: what is sent when the file's figure and the service's count differ.
TOTALS_POLICIES: tuple[TotalsPolicy, ...] = ("file", "service", "strict")


class DaysClient(Protocol):
    """What the calculator needs of ``hrimport.service.client.ServiceClient``."""

    def calculate_total_days(self, country: str, start: str, end: str, half_start: bool = False,
                             half_end: bool = False) -> float | int: ...


@dataclass(frozen=True)
class DayKey:
    """One distinct question for the calculation endpoint."""

    country: str
    start: str  # YYYY-MM-DD
    end: str
    half_start: bool
    half_end: bool

    def describe(self) -> str:
        """``2024-03-04..2024-03-06 in SG, half start``"""
        halves = [name for name, on in (("half start", self.half_start), ("half end", self.half_end)) if on]
        return f"{self.start}..{self.end} in {self.country}" + (f", {' and '.join(halves)}" if halves else "")


def calendar_days(key: DayKey) -> Decimal:
    """Days of the period counted every day (a ``Calendar``-basis type), less 0.5 per half end (0.5 for one
    half day): only used to explain a difference to the service's count."""
    start, end = dt.date.fromisoformat(key.start), dt.date.fromisoformat(key.end)
    total = Decimal((end - start).days + 1)
    if start == end:
        return Decimal("0.5") if key.half_start or key.half_end else total
    return total - Decimal("0.5") * (int(key.half_start) + int(key.half_end))


def parse_days(text: str) -> Decimal | None:
    """A day figure written in a sheet (``2``, ``2.0``, ``3.5``), or None."""
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() else None


def format_days(days: Decimal) -> str:
    """``2`` for whole days, ``3.5`` otherwise: what ``total_days`` is sent as (a string, spec endpoint 5)."""
    return str(days.to_integral_value()) if days == days.to_integral_value() else format(days.normalize(), "f")


class DayCalculator:
    """Answers ``DayKey`` questions, asking the service once per key (thread-safe)."""

    def __init__(self, client: DaysClient) -> None:
        self.client = client
        self.asked = 0
        self._answers: dict[DayKey, Decimal] = {}
        self._lock = threading.Lock()

    def days(self, key: DayKey) -> Decimal:
        """The service's count for ``key``; raises the client's errors (``RequestRejected``,
        ``RetriesExhausted``...)."""
        with self._lock:
            if key in self._answers:
                return self._answers[key]
        answer = self.client.calculate_total_days(key.country, key.start, key.end, key.half_start, key.half_end)
        value = Decimal(str(answer))
        with self._lock:
            if key not in self._answers:
                self.asked += 1
                self._answers[key] = value
        return value


def settle_totals(pending: list[TimeOffRow], client: DaysClient, *, workers: int, policy: TotalsPolicy,
                  sources: dict[str, str], outcomes: dict[int, RowOutcome], notes: list[str]) -> list[TimeOffRow]:
    """Settle each row's ``total_days`` as ``policy`` says (module docstring); returns the rows to send.

    A row that cannot be sent gets its outcome in ``outcomes``; a row sent with a doubt carries it in
    ``TimeOffRow.warnings``; ``notes`` gets the run's line about the calculation. ``sources`` (field ->
    source column) lets a problem name the cell to fix. Each distinct period is
    asked once, in parallel. Raises ``ServiceUnavailableError`` when not one calculation could connect.
    """
    settler = TotalsSettler(client, workers=workers, policy=policy, sources=sources)
    still = settler.settle(pending, outcomes)
    settler.finish(notes)
    return still


class TotalsSettler:
    """``settle_totals`` of a run's rows given a batch at a time (issue 17: the rows of a million-row file
    are never all ``TimeOffRow``s at once), with the same outcomes and note: each distinct period asked
    once per run, the counts for the note over every batch. ``finish`` once every batch is settled, before
    any row is sent: it raises ``ServiceUnavailableError`` when not one calculation could connect, and
    adds the note."""

    def __init__(self, client: DaysClient, *, workers: int, policy: TotalsPolicy, sources: dict[str, str],
                 progress: Callable[[int], None] | None = None) -> None:
        self.calculator = DayCalculator(client)
        self.workers, self.policy, self.sources = workers, policy, sources
        self.progress = progress  # called with the rows whose count just came (a period answered: all its rows)
        # every distinct period's answer, refusals included: a period is asked once however many batches hold it
        self.answers: dict[DayKey, Decimal | RequestRejected | RetriesExhausted] = {}
        self.rows = self.filled = self.differs = 0
        self.unchecked = 0  # rows sent with their figure unchecked: a half-day cell could not be read

    def settle(self, pending: list[TimeOffRow], outcomes: dict[int, RowOutcome]) -> list[TimeOffRow]:
        """Settle the ``total_days`` of a batch of rows; returns those to send (``settle_totals``)."""
        calculator, answers, policy = self.calculator, self.answers, self.policy

        def ask(key: DayKey) -> tuple[DayKey, Decimal | RequestRejected | RetriesExhausted]:
            try:
                return key, calculator.days(key)
            except (RequestRejected, RetriesExhausted) as exc:  # a per-row problem; 401 and the like propagate
                return key, untraced(exc)  # kept to the run's end: not with the frames of the request

        rows_of = Counter(r.day_key for r in pending if r.halves_read)
        keys = [key for key in rows_of if key not in answers]
        if self.progress is not None:
            self.progress(len(pending) - sum(rows_of[key] for key in keys))  # nothing to ask for these
        if keys:
            with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="hrimport-days") as pool:
                for key, answer in pool.map(ask, keys):
                    answers[key] = answer
                    if self.progress is not None:
                        self.progress(rows_of[key])
        self.rows += len(pending)
        still: list[TimeOffRow] = []
        for r in pending:
            given = parse_days(r.total_given) if r.total_given else None
            if not r.halves_read:
                # the half days the count needs are not known: the file's figure goes as it is (module docstring)
                if given is None or policy != "file":
                    raise ValueError(f"row {r.row}: half days not read, to be held back before the total days")
                r.total_days = format_days(given)
                self.unchecked += 1
                still.append(r)
                continue
            answer = answers[r.day_key]
            problem = _settle(r, answer, given, policy, self.sources)
            if problem is None or problem.is_warning:
                if problem is not None:
                    r.warnings.append(problem)
                    self.differs += problem.code == "total-days-differs"
                self.filled += given is None
                still.append(r)
                continue
            outcome = (Outcome.INVALID if problem.code in ("total-days-mismatch", "no-leave-days")
                       else Outcome.NOT_SENT if problem.code == "not-sent"
                       else Outcome.FAILED if isinstance(answer, RetriesExhausted) else Outcome.REJECTED)
            outcomes[r.pos] = RowOutcome(r.row, r.external_id, "", outcome, (problem,), problem.message, r.details())
        return still

    def finish(self, notes: list[str]) -> None:
        """Raise ``ServiceUnavailableError`` if not one calculation could connect; else add the run's note."""
        unreachable = [a for a in self.answers.values() if isinstance(a, RetriesExhausted) and a.unreachable]
        if unreachable and len(unreachable) == len(self.answers):
            raise ServiceUnavailableError(str(unreachable[0]))
        said = []  # only what happened: "total_days filled ... for 0 row(s)" told HR nothing
        if self.calculator.asked:
            said.append(f"{self.calculator.asked:,} distinct period(s) asked of the calculation endpoint.")
        if self.filled:
            said.append(f"total_days filled from the calculation for {self.filled:,} row(s) without a figure.")
        # "keep" and "take", not "sent": counted before sending, also in a dry run, which sends nothing
        if self.differs:
            kept = "take the service's count" if self.policy == "service" else "keep the file's figure"
            said.append(f"{self.differs:,} row(s) {kept} where the two differ (total-days-differs).")
        if self.unchecked:
            said.append(f"{self.unchecked:,} row(s) keep the file's figure unchecked, a half-day cell not read "
                        "(not-a-half-day-marker, ambiguous-half-day).")
        if said:
            notes.append(" ".join(said))


def _settle(r: TimeOffRow, answer: Decimal | RequestRejected | RetriesExhausted, given: Decimal | None,
            policy: TotalsPolicy, sources: dict[str, str]) -> Problem | None:
    """Set ``r.total_days`` when the row can be sent; the problem (an error: not sent) or warning, if any."""
    key = r.day_key
    column = sources.get("total_days")
    if isinstance(answer, RetriesExhausted) and answer.code == "not-sent":
        return Problem("not-sent", f"Row {r.row}: {answer}.", r.row)
    if not isinstance(answer, Decimal):
        reason = answer.reasons if isinstance(answer, RequestRejected) else str(answer)
        if given is not None and policy == "file" and not (isinstance(answer, RetriesExhausted)
                                                            and answer.service_lost):
            # the count only checks HR's figure: the record can still be sent as HR wrote it
            r.total_days = format_days(given)
            return Problem("total-days-unchecked",
                           f"Row {r.row}: total_days {r.given_shown} could not be checked: the service could not "
                           f"calculate the days of {key.describe()} ({reason}); the file's figure is kept.",
                           r.row, column, "total_days", r.given_shown, severity="warning")
        code = answer.code if isinstance(answer, RetriesExhausted) else "service-rejected"
        return Problem(code, f"Row {r.row}: the service could not calculate the days of {key.describe()}: "
                             f"{reason}.", r.row)
    if given is None:
        if answer == 0:
            # "likely wrong dates" is our guess, not the interface's rule: a warning, unless the policy is strict
            counted = (f"Row {r.row}: the service counts no working day in {key.describe()} (weekends and public "
                       f"holidays of {key.country}), and the file gives no number of days")
            check = (f"check the dates, and if the leave is counted every day, write its days in the total_days "
                     f"column{_calendar_hint(r, None)}")
            place = (r.row, column or sources.get("start_date"), "total_days" if column else "start_date",
                     "" if column else r.start)
            if policy == "strict":
                return Problem("no-leave-days", f"{counted}; not sent (total_days = \"strict\"): {check}.", *place)
            r.total_days = format_days(answer)
            return Problem("no-leave-days", f"{counted}; the service's 0 is used: {check}.", *place,
                           severity="warning")
        r.total_days = format_days(answer)
        return None
    if given == answer:  # a 0 too, on a weekend: the file and the service agree, and a zero-day record is sent
        r.total_days = format_days(given)
        return None
    counted = (f"the service counts no working day in {key.describe()} (weekends and public holidays of "
               f"{key.country})" if answer == 0 else f"the service counts {format_days(answer)} for {key.describe()}")
    figures = f"Row {r.row}: total_days is {r.given_shown} in the file but {counted}{_calendar_hint(r, given)}"
    if policy == "strict":
        code = "no-leave-days" if answer == 0 else "total-days-mismatch"
        return Problem(code, f"{figures}; not sent (total_days = \"strict\": correct the figure, or mark the half "
                             "days).", r.row, column, "total_days", r.given_shown)
    if policy == "service" and answer != 0:
        r.total_days = format_days(answer)
        sent = f"the service's {format_days(answer)} is used (total_days = \"service\")"
    else:
        r.total_days = format_days(given)
        sent = f"the file's {r.given_shown} is kept"
    # "kept" and "used", not "sent": the same words are true of a row a dry run checks, of one the run stops
    # before sending (not_sent), and of one whose send fails
    return Problem("total-days-differs", f"{figures}; {sent}.", r.row, column, "total_days", r.given_shown,
                   severity="warning")


def _calendar_hint(r: TimeOffRow, given: Decimal | None) -> str:
    """Why the figures may differ, when the leave-type dictionary counts this type every day."""
    lt = r.match.leave_type
    if lt.basis != "Calendar":
        return ""
    every_day = calendar_days(r.day_key)
    if given is None:
        return f" ({lt.en} is often counted every day: {format_days(every_day)} calendar day(s))"
    if given == every_day:
        return f" ({lt.en} is often counted every day, which makes {format_days(every_day)}, the file's figure)"
    return ""
