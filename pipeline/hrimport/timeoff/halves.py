"""Half-day markers in a sheet -> the calculation endpoint's ``is_half_start_date`` / ``is_half_end_date``.

The config names up to three columns (``[timeoff]`` keys, each a source column name):

- ``half_start``: whether the first day is a half day;
- ``half_end``: whether the last day is a half day;
- ``half_day``: one column for the whole record, as many HR systems export it. On a one-day record any
  half marker makes it half a day. On a longer record ``PM``/``Second Half``/``下午`` means the leave
  starts at noon (half start) and ``AM``/``First Half``/``上午`` that it ends at noon (half end); a bare
  "yes" cannot say which end is meant and is a problem (``ambiguous-half-day``).

A cell may hold a yes/no value (``yes``, ``true``, ``1``, ``Y``, ``是``, ``ja``; ``no``, ``false``, ``0``, ``nein``, empty,
``Full Day``, ``全天``) or a marker (``AM``, ``PM``, ``First Half``, ``Second Half``, ``Morning``,
``Afternoon``, ``上午``, ``下午``, ``上半天``, ``下半天``). In ``half_start``/``half_end`` any marker
means "that day is a half day". Anything else is a problem (``not-a-half-day-marker``).

    >>> parse_half("Second Half")
    <Half.SECOND: 'second'>
    >>> halves_for(start_cell="", end_cell="", day_cell="PM", one_day=False)
    (True, False)
"""

from __future__ import annotations

import unicodedata
from enum import StrEnum

from hrimport.normalize.words import value_words


class Half(StrEnum):
    """What one cell says about half days."""

    NONE = "none"  # a full day (or nothing said)
    HALF = "half"  # a half day, which half unsaid
    FIRST = "first"  # the first half (morning)
    SECOND = "second"  # the second half (afternoon)


_VALUES: dict[str, Half] = {}
for _half, _words in {
    Half.NONE: ("", "no", "n", "false", "f", "0", "full", "full day", "fullday", "whole day", "否", "全天", "全日"),
    Half.HALF: ("yes", "y", "true", "t", "1", "half", "half day", "halfday", "0.5", "是", "半天", "半日"),
    Half.FIRST: ("am", "a.m.", "morning", "first half", "1st half", "first", "上午", "上半天", "上半日"),
    Half.SECOND: ("pm", "p.m.", "afternoon", "second half", "2nd half", "second", "下午", "下半天", "下半日"),
}.items():
    for _word in _words:
        _VALUES[_word] = _half

#: The markers a message lists as accepted.
ACCEPTED = "yes/no, AM/PM, First Half/Second Half, 上午/下午"


class HalfDayError(ValueError):
    """A cell that says nothing usable about half days; ``code`` is the problem code."""

    def __init__(self, code: str, message: str, which: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.which = which  # the config key of the column at fault: half_start, half_end or half_day


def parse_half(value: str) -> Half | None:
    """What a cell says, or None when it is not a half-day value at all. A yes/no word of any language of
    ``schemas/value_words.toml`` (``ja``/``nein``, ``oui``/``non``, ``ya``/``tidak``) says yes or no, as the
    staff import reads it."""
    text = " ".join(unicodedata.normalize("NFKC", value).split()).casefold()
    found = _VALUES.get(text)
    if found is None:
        said = value_words().boolean.get(text)
        found = None if said is None else Half.HALF if said == "true" else Half.NONE
    return found


def halves_for(*, start_cell: str, end_cell: str, day_cell: str, one_day: bool) -> tuple[bool, bool]:
    """``(is_half_start_date, is_half_end_date)`` from a row's three cells ("" for a column not configured).

    Raises ``HalfDayError`` for a value that is not a half-day value, or a bare "half" on a longer record.
    """
    start = _parsed(start_cell, "half_start")
    end = _parsed(end_cell, "half_end")
    day = _parsed(day_cell, "half_day")
    half_start = start is not Half.NONE
    half_end = end is not Half.NONE
    if day is not Half.NONE:
        if one_day:
            half_start = True
        elif day is Half.SECOND:
            half_start = True  # off from noon on the first day
        elif day is Half.FIRST:
            half_end = True  # back at noon on the last day
        else:
            raise HalfDayError(
                "ambiguous-half-day",
                f"'{day_cell}' marks a half day on a record of several days without saying which end: "
                "write AM (ends at noon) or PM (starts at noon), or use the half_start/half_end columns",
                "half_day",
            )
    return half_start, half_end


def _parsed(cell: str, which: str) -> Half:
    half = parse_half(cell)
    if half is None:
        raise HalfDayError("not-a-half-day-marker", f"'{cell}' is not a half-day value (use {ACCEPTED})", which)
    return half


__all__ = ["ACCEPTED", "Half", "HalfDayError", "halves_for", "parse_half"]
