"""Dates in the forms spreadsheets hold, rewritten as ``YYYY-MM-DD``; anything else left as written."""

from __future__ import annotations

import datetime as dt
import re

import pandas as pd

from pipeline.normalize.values import per_value

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
_EXCEL_EPOCH = dt.date(1899, 12, 30)  # serial 1 = 1900-01-01 after Excel's 1900 leap-year bug


def _iso(year: int, month: int, day: int) -> str | None:
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None  # "2021-02-30": not a real date, left for the validator to say so


def _parse_date(value: str, day_first: bool) -> str | None:
    """``YYYY-MM-DD`` for a date in a usual spreadsheet form, or None when it is not one (or not real)."""
    text = value.strip()
    if match := _YMD.fullmatch(text):
        y, m, d = (int(g) for g in (match.groups()[:3] if match.group(1) else match.groups()[3:]))
        return _iso(y, m, d)
    if match := _CHINESE_DATE.fullmatch(text):
        return _iso(*(int(g) for g in match.groups()))
    if match := _NUMERIC_DMY.fullmatch(text):
        first, second, year = int(match.group(1)), int(match.group(3)), int(match.group(4))
        # 13/01/2020 and 01/13/2020 can only be read one way; only both-12-or-less follows day_first.
        if first > 12 >= second or (day_first and not second > 12 >= first):
            return _iso(year, second, first)
        return _iso(year, first, second)
    if match := _DAY_MONTH_NAME.fullmatch(text):
        month = _MONTHS.get(match.group(2).lower())
        return _iso(int(match.group(3)), month, int(match.group(1))) if month else None
    if match := _MONTH_NAME_DAY.fullmatch(text):
        month = _MONTHS.get(match.group(1).lower())
        return _iso(int(match.group(3)), month, int(match.group(2))) if month else None
    if match := _SERIAL.fullmatch(text):
        serial = int(match.group(1))
        if _SERIAL_RANGE[0] <= serial <= _SERIAL_RANGE[1]:
            return (_EXCEL_EPOCH + dt.timedelta(days=serial)).isoformat()
    return None


def normalize_date(s: pd.Series, day_first: bool) -> pd.Series:
    """``YYYY-MM-DD`` from ISO dates and date-times, 31/01/2020 or 01/31/2020 (``day_first`` decides
    when both readings are possible), 31.01.2020, 31-01-2020, 2020/1/31, 2020年1月31日, Excel serial
    numbers, "31 Jan 2020" and "Jan 31, 2020". Impossible dates such as 2021-02-30 are left unchanged."""
    return per_value(s, lambda value: _parse_date(value, day_first))
