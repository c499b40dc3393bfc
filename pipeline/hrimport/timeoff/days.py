"""Total days of a time-off record: asked of the calculation endpoint once per distinct period.

The calculation endpoint (spec, endpoint 4) takes a country, two dates and the half-day flags, but no
leave type, so it counts *working* days. A ``Calendar``-basis leave type (sick, maternity and
hospitalisation leave, ``schemas/leave_types.toml``) counts every day, which needs no calendar at all: for
those the figure is counted here, with the endpoint's half-day rule (a half end takes 0.5 off; one day
with any half is 0.5). Each distinct ``(country, start, end, half start, half end)`` is asked once per run,
however many rows share it.
"""

from __future__ import annotations

import datetime as dt
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Literal, Protocol

from hrimport.errors import RequestRejected, RetriesExhausted, ServiceUnavailableError
from hrimport.outcomes import Outcome, Problem, RowOutcome

if TYPE_CHECKING:
    from hrimport.timeoff.rows import TimeOffRow  # rows.py imports DayKey from here

__all__ = ["DayCalculator", "DayKey", "DaysClient", "calendar_days", "format_days", "parse_days"]


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
    """Days of a Calendar-basis record: every day counts, less 0.5 per half end (0.5 for one half day)."""
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

    def days(self, key: DayKey, basis: Literal["Working", "Calendar"]) -> Decimal:
        """The total for ``key``; raises the client's errors (``RequestRejected``, ``RetriesExhausted``...)."""
        if basis == "Calendar":
            return calendar_days(key)
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


def settle_totals(pending: list[TimeOffRow], client: DaysClient, workers: int, outcomes: dict[int, RowOutcome],
                   notes: list[str]) -> list[TimeOffRow]:
    """The totals rules: fill or check each row's ``total_days`` against the calculation, putting an outcome
    in ``outcomes`` for each row that cannot be sent and a line in ``notes``; returns the rows still to send.

    Each distinct period of a Working-basis type is asked once (in parallel); Calendar-basis types are
    counted locally (``hrimport.timeoff.days``).
    """
    calculator = DayCalculator(client)
    working = list(dict.fromkeys(r.day_key for r in pending if r.match.leave_type.basis == "Working"))
    answers: dict[DayKey, Decimal | Exception] = {}

    def ask(key: DayKey) -> tuple[DayKey, Decimal | Exception]:
        try:
            return key, calculator.days(key, "Working")
        except (RequestRejected, RetriesExhausted) as exc:  # a per-row problem; 401 and the like propagate
            return key, exc

    if working:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hrimport-days") as pool:
            answers.update(pool.map(ask, working))
    unreachable = [a for a in answers.values() if isinstance(a, RetriesExhausted) and a.unreachable]
    if unreachable and len(unreachable) == len(answers):
        raise ServiceUnavailableError(str(unreachable[0]))

    still: list[TimeOffRow] = []
    filled = 0
    for r in pending:
        key = r.day_key
        answer = answers[key] if r.match.leave_type.basis == "Working" else calculator.days(key, "Calendar")
        if isinstance(answer, Exception):
            outcome, code = ((Outcome.FAILED, answer.code) if isinstance(answer, RetriesExhausted)
                             else (Outcome.REJECTED, "service-rejected"))
            reason = answer.reasons if isinstance(answer, RequestRejected) else str(answer)
            text = f"Row {r.row}: the service could not calculate the days of {key.describe()}: {reason}."
            outcomes[r.pos] = RowOutcome(r.row, r.external_id, "", outcome, (Problem(code, text, r.row),), text,
                                         r.details())
            continue
        given = parse_days(r.total_given) if r.total_given else None
        if answer == 0:
            # every day of the period is a weekend day or public holiday: nothing to book, and the
            # service refuses a record of zero days
            text = (f"Row {r.row}: {key.describe()} holds no working day (weekends and public holidays of "
                    f"{key.country}), so there is no leave to book; not sent.")
            problem = Problem("no-leave-days", text, r.row, None, "start_date", r.start)
            outcomes[r.pos] = RowOutcome(r.row, r.external_id, "", Outcome.INVALID, (problem,), text, r.details())
            continue
        if given is None:
            r.total_days = format_days(answer)
            filled += 1
        elif given != answer:
            basis = ("the service counts" if r.match.leave_type.basis == "Working"
                     else f"{r.match.leave_type.en} counts every day, so it is")
            text = (f"Row {r.row}: total_days is {r.total_given} but {basis} {format_days(answer)} for "
                    f"{key.describe()}; not sent (correct the figure, or mark the half days).")
            problem = Problem("total-days-mismatch", text, r.row, None, "total_days", r.total_given)
            outcomes[r.pos] = RowOutcome(r.row, r.external_id, "", Outcome.INVALID, (problem,), text, r.details())
            continue
        else:
            r.total_days = format_days(given)
        still.append(r)
    if pending:
        notes.append(f"total_days filled from the calculation for {filled} row(s); {calculator.asked} distinct "
                     "period(s) asked of the calculation endpoint.")
    return still
