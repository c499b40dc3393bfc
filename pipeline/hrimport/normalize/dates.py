"""Dates in the forms spreadsheets hold, rewritten as ``YYYY-MM-DD``; anything else left as written.

``01/06/2020`` is 1 June or 6 January depending on the country the export comes from, so the order is
decided **per column, from all its values**, never per cell: a column holding ``13/01/2020`` proves
day-first, one holding ``01/13/2020`` proves month-first (``decide_date_order``). A configured or default
order that a column's own values contradict stops the import (``DateOrderConflict``); a cell that cannot be
read in its column's order, or has a two-digit year, is left as written and named by ``date_cell_problems``.

Example::

    order = decide_date_order("Hire Date", pd.Series(["07/15/2015", "01/06/2020"]), configured=None)
    # raises DateOrderConflict: the column proves month-first, the default is day-first
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from hrimport.normalize.values import MEMO_VALUES, RE2_SPACES, ValueMemo, per_value

DateOrder = Literal["day-first", "month-first"]
DEFAULT_DATE_ORDER: DateOrder = "day-first"

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
_TIME = r"(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
_YMD = re.compile(rf"(\d{{4}})-(\d{{1,2}})-(\d{{1,2}}){_TIME}|(\d{{4}})[/.](\d{{1,2}})[/.](\d{{1,2}})")
_CHINESE_DATE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日?")
_NUMERIC_DMY = re.compile(r"(\d{1,2})([/.\-])(\d{1,2})\2(\d{4})")
_DAY_MONTH_NAME = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?[\s\-]+([A-Za-z]{3,9})\.?,?[\s\-]+(\d{4})")
_MONTH_NAME_DAY = re.compile(r"([A-Za-z]{3,9})\.?[\s\-]+(\d{1,2})(?:st|nd|rd|th)?,?[\s\-]+(\d{4})")
_SERIAL = re.compile(r"(\d{5})(?:\.\d+)?")
# Excel serial numbers taken as dates: 10000 (1927-05-18) to 73050 (2099-12-31); five digits only, so a
# year ("2020") or a small count is never read as a date.
_SERIAL_RANGE = (10_000, 73_050)
#: Day 0 of each of Excel's date systems: 1900 (serial 1 = 1900-01-01 after Excel's 1900 leap-year bug) and
#: 1904 (Mac Excel's, kept by workbooks made there: serial 0 = 1904-01-01).
EXCEL_EPOCHS = {1900: dt.date(1899, 12, 30), 1904: dt.date(1904, 1, 1)}


def _iso(year: int, month: int, day: int) -> str | None:
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None  # "2021-02-30": not a real date, left for the validator to say so


def _parse_date(value: str, day_first: bool, date_system: int = 1900) -> str | None:
    """``YYYY-MM-DD`` for a date in a usual spreadsheet form, or None when it is not one (or not real).
    ``date_system``: the workbook's (1900 or 1904), which says what day an Excel serial number is."""
    text = value.strip()
    if match := _YMD.fullmatch(text):
        y, m, d = (int(g) for g in (match.groups()[:3] if match.group(1) else match.groups()[3:]))
        return _iso(y, m, d)
    if match := _CHINESE_DATE.fullmatch(text):
        return _iso(*(int(g) for g in match.groups()))
    if match := _NUMERIC_DMY.fullmatch(text):
        first, second, year = int(match.group(1)), int(match.group(3)), int(match.group(4))
        # Always the column's order: 13/05/2021 in a month-first column is not a date, never a swap.
        return _iso(year, second, first) if day_first else _iso(year, first, second)
    if match := _DAY_MONTH_NAME.fullmatch(text):
        month = _MONTHS.get(match.group(2).lower())
        return _iso(int(match.group(3)), month, int(match.group(1))) if month else None
    if match := _MONTH_NAME_DAY.fullmatch(text):
        month = _MONTHS.get(match.group(1).lower())
        return _iso(int(match.group(3)), month, int(match.group(2))) if month else None
    if match := _SERIAL.fullmatch(text):
        serial = int(match.group(1))
        if _SERIAL_RANGE[0] <= serial <= _SERIAL_RANGE[1]:
            return (EXCEL_EPOCHS[date_system] + dt.timedelta(days=serial)).isoformat()
    return None


def normalize_date(s: pd.Series, day_first: bool, known: Mapping[str, str] | None = None,
                   memo: ValueMemo | None = None, date_system: int = 1900) -> pd.Series:
    """``YYYY-MM-DD`` from ISO dates and date-times, 31/01/2020 or 01/31/2020 (``day_first`` is the
    column's order, applied to every cell), 31.01.2020, 31-01-2020, 2020/1/31, 2020年1月31日, Excel serial
    numbers, "31 Jan 2020" and "Jan 31, 2020". Impossible dates such as 2021-02-30, and dates that do not
    fit the order, are left unchanged. ``known``: values already read (``read_date_column``'s, for the
    whole column at once), looked up instead of parsed. ``date_system``: the workbook's (``_parse_date``)."""
    known = known or {}
    return per_value(s, lambda value: known.get(value) or _parse_date(value, day_first, date_system), memo)


@dataclass(frozen=True)
class DateOrderEvidence:
    """What a column's distinct values say about its order: values only day-first can read (13/01/2020),
    values only month-first can read (01/13/2020), and values either order reads (01/06/2020)."""

    day_first: tuple[str, ...]
    month_first: tuple[str, ...]
    either: tuple[str, ...]

    def proves(self) -> DateOrder | None:
        """The order the values prove, when they prove exactly one."""
        if self.day_first and not self.month_first:
            return "day-first"
        if self.month_first and not self.day_first:
            return "month-first"
        return None


# 01/06/2020 and 01/06/20 (a year of two digits is a problem of its own), and 5 Mar 19. RE2 (pyarrow) has
# no back-references: both separators are captured and compared. \p{Nd} and the spaces are Python's \d
# and what str.strip() removes.
_SPACE = rf"[{RE2_SPACES}]*"
_DAY_MONTH_YEAR_RE2 = (
    rf"^{_SPACE}(?P<a>\p{{Nd}}{{1,2}})(?P<s1>[/.\-])(?P<b>\p{{Nd}}{{1,2}})(?P<s2>[/.\-])"
    rf"(?P<y>\p{{Nd}}{{4}}|\p{{Nd}}{{2}}){_SPACE}$"
)
_SHORT_YEAR_MONTH_NAME = r"^\s*\d{1,2}[\s\-]+[A-Za-z]{3,9}\.?,?[\s\-]+\d{2}\s*$"


@dataclass(frozen=True)
class _NumericDates:
    """The distinct values of a column, and those written day/month/year in digits with their first two
    numbers: read once per column, for both its order and its cells' problems (``read_date_column``).
    Arrays, not lists: a column of 25,000 distinct dates is looked at in a few vectorised passes."""

    distinct: pa.Array  # every distinct value of the column
    values: np.ndarray  # the day/month/year ones (str)
    first: np.ndarray
    second: np.ndarray
    year: np.ndarray
    short_year: np.ndarray  # bool

    @classmethod
    def of(cls, column: pd.Series) -> _NumericDates:
        return cls.of_distinct(pd.unique(column.fillna("")))

    @classmethod
    def of_distinct(cls, values: Sequence[str] | np.ndarray | pd.api.extensions.ExtensionArray) -> _NumericDates:
        """``of`` a column's distinct values (or some of them)."""
        distinct = pa.array(values, type=pa.string())
        parts = pc.extract_regex(distinct, _DAY_MONTH_YEAR_RE2)
        same_separator = pc.equal(pc.struct_field(parts, "s1"), pc.struct_field(parts, "s2"))
        keep = pc.fill_null(pc.and_(pc.is_valid(parts), same_separator), False)
        found = pc.filter(parts, keep)
        return cls(
            distinct,
            np.array(pc.filter(distinct, keep).to_pylist(), dtype=object),
            _numbers(pc.struct_field(found, "a")),
            _numbers(pc.struct_field(found, "b")),
            _numbers(pc.struct_field(found, "y")),
            pc.equal(pc.utf8_length(pc.struct_field(found, "y")), 2).to_numpy(zero_copy_only=False),
        )

    def iso_dates(self, day_first: bool) -> dict[str, str]:
        """The values with a four-digit year that are real dates in the order given, as ``YYYY-MM-DD``:
        ``_parse_date``'s answer for them, worked out for the whole column at once."""
        full = ~self.short_year
        day, month = (self.first, self.second) if day_first else (self.second, self.first)
        dates = pd.to_datetime(
            pd.DataFrame({"year": self.year[full], "month": month[full], "day": day[full]}), errors="coerce"
        )
        real = dates.notna().to_numpy()
        return dict(zip(self.values[full][real].tolist(), dates[real].dt.strftime("%Y-%m-%d").tolist()))

    def with_four_digit_years(self, mask: np.ndarray) -> list[str]:
        """The values with a four-digit year where ``mask`` (over ``values``) holds, stripped."""
        return [str(v).strip() for v in self.values[mask & ~self.short_year]]


def _numbers(digits: pa.Array) -> np.ndarray:
    """Digit strings as numbers: in Arrow when they are ASCII, else by Python (``int("١٣")`` is 13)."""
    try:
        numbers: np.ndarray = pc.cast(digits, pa.int64()).to_numpy(zero_copy_only=False)
        return numbers
    except pa.ArrowInvalid:
        return np.array([int(d) for d in digits.to_pylist()], dtype=np.int64)


def date_order_evidence(values: pd.Series | _NumericDates) -> DateOrderEvidence:
    numeric = values if isinstance(values, _NumericDates) else _NumericDates.of(values)
    first, second = numeric.first, numeric.second
    day_first = (first > 12) & (second >= 1) & (second <= 12)
    month_first = (second > 12) & (first >= 1) & (first <= 12)
    # 05/05/2020 reads the same in both orders: it depends on neither
    either = (first >= 1) & (first <= 12) & (second >= 1) & (second <= 12) & (first != second)
    return DateOrderEvidence(
        tuple(numeric.with_four_digit_years(day_first)),
        tuple(numeric.with_four_digit_years(month_first)),
        tuple(numeric.with_four_digit_years(either)),
    )


class DateOrderConflict(ValueError):
    """A column's own values prove the other order than the one configured (or the default)."""


class DateOrderUnknown(DateOrderConflict):
    """No order is configured, and a column's values do not prove one: some read either way (01/06/2020)
    and none shows the order (``column`` and ``either``, one of them, are set), or some show each order."""

    def __init__(self, message: str, column: str = "", either: str = "") -> None:
        super().__init__(message)
        self.column = column
        self.either = either


_MONTH_NAMES = ("", "January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")


def either_way(value: str) -> str:
    """Both readings of a day/month date such as 01/06/2020: "'01/06/2020' is 1 June or January 6"."""
    first, second = (int(part) for part in re.split(r"[/.\-]", value.strip())[:2])
    return f"'{value}' is {first} {_MONTH_NAMES[second]} or {_MONTH_NAMES[first]} {second}"


@dataclass(frozen=True)
class ColumnDateOrder:
    """The order a date column is read in, and why: ``config`` (date_order set and not contradicted),
    ``values`` (no setting; the values prove the default), ``unneeded`` (no setting, and no value depends on
    the order: 05/05/2020 reads the same either way). A column with no setting whose values prove no order
    is no ``ColumnDateOrder``: ``decide_date_order`` refuses it (``DateOrderUnknown``)."""

    column: str
    order: DateOrder
    basis: Literal["config", "values", "unneeded"]
    proof: str = ""  # a value only this order reads (13/01/2020 day-first), when the column holds one

    @property
    def day_first(self) -> bool:
        return self.order == "day-first"

    def rule(self, proof_row: int | None = None) -> str:
        """Why the column's day/month dates were read in this order, for the report: "month-first, proven
        by 07/15/2015 on row 12"."""
        proven = f"proven by {self.proof}" + (f" on row {proof_row}" if proof_row is not None else "")
        if self.basis == "values":
            return f"{self.order}, {proven}"
        if self.basis == "config":
            return f"{self.order}, {proven}, as the config's date_order says" if self.proof else (
                f"{self.order}, as the config's date_order says")
        return "the same day in either order (its day and month are alike)"


def decide_date_order(
    column: str, values: pd.Series | _NumericDates | DateOrderEvidence, configured: DateOrder | None
) -> ColumnDateOrder:
    """The order to read ``column`` in; raises ``DateOrderConflict`` (one line) when its values prove the
    other order than ``configured`` (or the default when nothing is configured). A column whose values
    prove both orders is read in the configured or default order, and the cells that do not fit it are
    problems on their rows."""
    evidence = values if isinstance(values, DateOrderEvidence) else date_order_evidence(values)
    order = configured or DEFAULT_DATE_ORDER
    proven = evidence.proves()
    if proven is not None and proven != order:
        shown = evidence.month_first if proven == "month-first" else evidence.day_first
        examples = " and ".join(f"'{v}'" for v in shown[:2])
        setting = (f'the config\'s date_order is "{order}"' if configured
                   else f"dates are read {order} unless the config's date_order says otherwise")
        raise DateOrderConflict(
            f"column '{column}' holds {proven} dates ({examples}) but {setting}; set date_order = "
            f'"{proven}" in [source] if the whole column is {proven}, or correct those dates'
        )
    proofs = evidence.month_first if proven == "month-first" else evidence.day_first
    proof = proofs[0] if proven is not None else ""
    if configured:
        return ColumnDateOrder(column, order, "config", proof=proof)
    if proven is not None:
        return ColumnDateOrder(column, order, "values", proof=proof)
    if evidence.day_first and evidence.month_first:  # a typo somewhere, and which order is right is not known
        raise DateOrderUnknown(
            f"column '{column}' holds day-first dates ('{evidence.day_first[0]}') and month-first dates "
            f"('{evidence.month_first[0]}'); set date_order = \"day-first\" or \"month-first\" in [source] to "
            "the order your HR system writes, and the dates that do not fit it are held back on their rows")
    if evidence.either:  # principle 1: a date order is never guessed
        raise DateOrderUnknown(
            f"column '{column}' has no date that shows whether it is day-first or month-first "
            f"({either_way(evidence.either[0])}); set date_order = \"day-first\" or \"month-first\" in [source] "
            "to the order your HR system writes", column, evidence.either[0])
    return ColumnDateOrder(column, order, "unneeded")


def read_date_column(
    column: str, values: pd.Series, configured: DateOrder | None
) -> tuple[ColumnDateOrder, dict[str, str], dict[str, str]]:
    """``decide_date_order``, ``date_cell_problems`` and the day/month/year values read as ISO dates
    (for ``normalize_date``) of one column, its values looked at once."""
    numeric = _NumericDates.of(values)
    order = decide_date_order(column, numeric, configured)
    return order, date_cell_problems(values, order.day_first, numeric), numeric.iso_dates(order.day_first)


class ColumnDateReading:
    """One date column read chunk by chunk (issue 17), as exactly as ``read_date_column`` reads it whole.

    Every chunk is read in the configured order, or the default: no value ever changes the order, it can
    only prove it or contradict it. So each chunk's dates and cell problems are final as soon as it is
    read, and only the column's verdict waits for its last chunk: ``order()`` merges what the chunks'
    distinct values showed (in the order they were met, as a whole-column read meets them) and raises
    ``DateOrderConflict`` when the whole column proves the other order.
    """

    def __init__(self, column: str, configured: DateOrder | None) -> None:
        self.column = column
        self.configured = configured
        self.day_first = (configured or DEFAULT_DATE_ORDER) == "day-first"
        # up to two values of each kind, first met first: the conflict names two, the order one
        self._seen: dict[str, list[str]] = {"day-first": [], "month-first": [], "either": []}
        self.proof_row: int | None = None  # the row of the first value proving the order read
        # the distinct values of the chunks so far, what they read as and their problems: a value met
        # again (the same dates come back in every chunk) says nothing new (up to MEMO_VALUES of them)
        self._met: set[str] = set()
        self._problems: dict[str, str] = {}
        self._dates: dict[str, str] = {}

    def read(self, values: pd.Series, row_numbers: list[int]) -> tuple[dict[str, str], dict[str, str]]:
        """The cell problems (``date_cell_problems``) and the day/month/year values as ISO dates of one chunk
        (and of the values met in the chunks before it)."""
        met = self._met
        distinct = [v for v in pd.unique(values.fillna("")).tolist() if v not in met]
        numeric = _NumericDates.of_distinct(distinct)
        evidence = date_order_evidence(numeric)
        order = (self.configured or DEFAULT_DATE_ORDER)
        for kind, found in (("day-first", evidence.day_first), ("month-first", evidence.month_first),
                            ("either", evidence.either)):
            kept = self._seen[kind]
            if len(kept) < 2:
                if kind == order and not kept and found:
                    hits = np.flatnonzero((values == found[0]).to_numpy())
                    self.proof_row = row_numbers[int(hits[0])] if len(hits) else None
                for value in found:
                    if len(kept) == 2:
                        break
                    if value not in kept:
                        kept.append(value)
        problems, dates = date_cell_problems(values, self.day_first, numeric), numeric.iso_dates(self.day_first)
        if len(self._met) + len(distinct) > MEMO_VALUES:
            return {**self._problems, **problems}, {**self._dates, **dates}
        met.update(distinct)
        self._problems.update(problems)
        self._dates.update(dates)
        return self._problems, self._dates

    def order(self) -> ColumnDateOrder:
        """The column's order and why, once every chunk is read; ``DateOrderConflict`` as
        ``decide_date_order`` raises it."""
        evidence = DateOrderEvidence(*(tuple(self._seen[k]) for k in ("day-first", "month-first", "either")))
        return decide_date_order(self.column, evidence, self.configured)


def date_cell_problems(values: pd.Series, day_first: bool, numeric: _NumericDates | None = None) -> dict[str, str]:
    """Distinct values that are not read as dates for a reason worth its own problem, -> the problem code:
    ``two-digit-year`` (01/06/20, 5 Mar 19), ``date-order-mismatch`` (13/05/2021 in a month-first column)."""
    numeric = numeric or _NumericDates.of(values)
    found = dict.fromkeys(numeric.values[numeric.short_year].tolist(), "two-digit-year")
    day, month = (numeric.first, numeric.second) if day_first else (numeric.second, numeric.first)
    mismatch = (month > 12) & (day >= 1) & (day <= 12) & ~numeric.short_year
    found.update(dict.fromkeys(numeric.values[mismatch].tolist(), "date-order-mismatch"))
    short_named = pc.filter(numeric.distinct, pc.match_substring_regex(numeric.distinct, _SHORT_YEAR_MONTH_NAME))
    found.update(dict.fromkeys(short_named.to_pylist(), "two-digit-year"))
    return found
