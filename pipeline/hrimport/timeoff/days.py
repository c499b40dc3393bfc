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
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal, Protocol

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
