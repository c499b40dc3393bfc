"""Leave-day counting with the ``holidays`` library (spec: endpoint 4, "Calculate total leave days").

A day counts when it is a working day of the country: its own weekend (Friday-Saturday in Saudi Arabia,
Friday in Iran), its public holidays, and the shifted working weekends the library knows (China's
make-up days), as ``HolidayBase.is_working_day`` decides. The endpoint takes no leave type, so it
counts working days only (a leave type's ``Calendar`` basis is the import's explanation, not a rule
here). Halves (api-notes: "Half a day is taken as 0.5"): a half start or half end takes 0.5 off when that
day counts; one counted day with either or both halves is 0.5.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal

import holidays

# The longest period one request may span (spec "Limits": not shown; a documented choice).
MAX_SPAN_DAYS = 3660


class LeaveDaysError(ValueError):
    """The period cannot be counted; ``field`` names the request field at fault."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def working_day_test(country: str, start: dt.date, end: dt.date) -> Callable[[dt.date], bool]:
    """``is_working_day`` for ``CC`` or ``CC-SUB`` (ISO 3166-2, e.g. ``US-CA``), years around the period.

    The neighbouring years are loaded too (LIBRARIES.md: cross-year edge cases). A country the library
    does not cover gets a Saturday-Sunday weekend and no public holidays (documented choice); an
    unknown subdivision of a covered country is refused.
    """
    code, _, subdivision = country.upper().partition("-")
    years = range(start.year - 1, end.year + 2)
    try:
        calendar = holidays.country_holidays(code, subdiv=subdivision or None, years=years)
    except NotImplementedError as exc:
        if subdivision and code in holidays.list_supported_countries():
            raise LeaveDaysError("country", f"{country!r}: {exc}") from None
        if subdivision:
            raise LeaveDaysError("country", f"{country!r}: subdivisions of {code} are not known") from None
        calendar = holidays.HolidayBase()
    return calendar.is_working_day


def count_leave_days(
    country: str,
    start: dt.date,
    end: dt.date,
    *,
    half_start: bool = False,
    half_end: bool = False,
) -> Decimal:
    """Working days of leave from ``start`` to ``end`` inclusive, halves included.

    >>> count_leave_days("MY", dt.date(2024, 6, 7), dt.date(2024, 6, 10))
    Decimal('2')
    """
    if end < start:
        raise LeaveDaysError("end_date", f"{end.isoformat()} is before start_date {start.isoformat()}")
    span = (end - start).days + 1
    if span > MAX_SPAN_DAYS:
        raise LeaveDaysError("end_date", f"the period spans {span} days; at most {MAX_SPAN_DAYS} are counted")
    counts = working_day_test(country, start, end)
    days = [start + dt.timedelta(n) for n in range(span)]
    total = Decimal(sum(1 for d in days if counts(d)))
    if start == end:
        if total and (half_start or half_end):
            return Decimal("0.5")
        return total
    if half_start and counts(start):
        total -= Decimal("0.5")
    if half_end and counts(end):
        total -= Decimal("0.5")
    return total


def days_json(days: Decimal) -> int | float:
    """A day count for JSON: an integer when whole (``2``), else a number (``3.5``)."""
    return int(days) if days == days.to_integral_value() else float(days)
