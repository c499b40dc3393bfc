"""Rewrite spreadsheet values in the canonical form the service expects, before validation.

Issue 3, "Normalisation before validation": trim, enumerations in canonical case, booleans, gender
synonyms, countries to ISO alpha-2, dates to ``YYYY-MM-DD``, e-mails lower-cased. Every normaliser takes
a Series of text and returns a new one in which each value it *recognises* is rewritten and every other
value is left exactly as it was: a normaliser never guesses (a misspelt country or an impossible date
stays as written, so the validator can report it with the value the person typed).

Values repeat a lot (100k rows, a few dozen countries), so the parsers run once per distinct value
(``pd.factorize``) and the results are spread back over the rows.

Example::

    normalize_country(pd.Series(["MYS", "Malaysia", "马来西亚", "Áo", "Malaysai"]))
    # -> ["MY", "MY", "MY", "AT", "Malaysai"]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation

import pandas as pd

from hrimport.fields import Field
from hrimport.normalize.countries import iso_codes, normalize_country
from hrimport.normalize.dates import normalize_date
from hrimport.normalize.values import MEMO_VALUES, ValueMemo, fold, per_value
from hrimport.normalize.words import normalize_boolean, normalize_gender, value_words
from hrimport.regions import region_code

__all__ = [
    "DECIMAL_COMMA",
    "TRIM_RULE",
    "change_kinds",
    "change_rules",
    "normalize_boolean",
    "normalize_country",
    "normalize_date",
    "normalize_email",
    "normalize_enum",
    "normalize_for_field",
    "normalize_gender",
    "normalize_number",
    "trim",
]

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)")
# A comma before one or two digits can only be a decimal comma (a thousands group has three digits), as a
# German or French Excel writes 2.5 in a CSV ("2,5"). "1,500" may be either, and stays as written (an error).
DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d{1,2}")


def trim(s: pd.Series) -> pd.Series:
    """Surrounding whitespace removed; missing values become ""."""
    return s.fillna("").str.strip()


def normalize_enum(s: pd.Series, field: Field, memo: ValueMemo | None = None) -> pd.Series:
    """Enumerated values matched ignoring case and spaces, written as the field's canonical choice."""
    return per_value(s, field.canonical_choice, memo)


def normalize_email(s: pd.Series) -> pd.Series:
    """E-mail addresses trimmed and lower-cased."""
    return s.fillna("").str.strip().str.lower()


def _canonical_number(value: str) -> str | None:
    text = value.strip()
    if DECIMAL_COMMA.fullmatch(text):
        text = text.replace(",", ".")
    if not _NUMBER.fullmatch(text):
        return None
    try:
        number = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only plain decimals
        return None
    if number == 0:
        return "0"
    return format(number.normalize(), "f")


def normalize_number(s: pd.Series, memo: ValueMemo | None = None) -> pd.Series:
    """Plain decimals written without redundant zeros: "3.50" -> "3.5", "2.0" -> "2", "007" -> "7"; a decimal
    comma as a point: "2,5" -> "2.5" (never "1,500", which may be a thousands separator)."""
    return per_value(s, _canonical_number, memo)


def normalize_for_field(
    s: pd.Series, field: Field, *, day_first: bool, dates: Mapping[str, str] | None = None,
    h_and_m: bool | None = None, memo: ValueMemo | None = None, date_system: int = 1900,
) -> pd.Series:
    """Trim, then apply the normaliser of ``field.kind`` (gender gets its built-in synonyms too).
    ``dates``: a date column's values already read as ISO dates (``read_date_column``). ``h_and_m``: for
    gender, whether the whole column holds both H and M when ``s`` is a chunk of it (``normalize_gender``).
    ``memo``: the field's values converted in earlier chunks of the file, and a place for this chunk's.
    ``date_system``: the workbook's, 1900 or 1904 (Mac Excel's), which says what day a serial number is."""
    s = trim(s)
    kind = field.kind
    if kind == "date":
        return normalize_date(s, day_first, dates, memo, date_system)
    if kind == "country":
        return normalize_country(s, memo, subdivisions=field.subdivisions)
    if kind == "email":
        return normalize_email(s)
    if kind == "boolean":
        return normalize_boolean(s, memo)
    if kind == "enum":
        if field.name == "gender":
            s = normalize_gender(s, h_and_m)
        return normalize_enum(s, field, memo)
    if kind in ("integer", "number"):
        return normalize_number(s, memo)
    return s  # text, custom data and leave types: trimmed only (leave types are matched elsewhere)


#: Why a value was trimmed, in the report's words (``hrimport.provenance``).
TRIM_RULE = "spaces before and after a value are never sent"
_SERIAL_DATE = re.compile(r"\d{5}(?:\.\d+)?")


def change_kinds(
    field: Field, dates: Mapping[str, str] | None = None, memo: dict[str, str] | None = None
) -> Callable[[list[str], list[str]], list[str]]:
    """What ``normalize_for_field`` did to each distinct value it changed, as a ``hrimport.provenance.KINDS``
    code, from the values before and after (``hrimport.normalize.trail.ValueTrail.compare``). ``dates``: a
    date column's day/month values (``read_date_column``). ``memo``: the codes of the field's values met in
    earlier chunks of the file (a value is always changed the same way)."""
    kind, known = field.kind, dates or {}

    def named(old: str, new: str) -> str:
        if new == old.strip():
            return "trimmed"
        text = old.strip()
        if kind == "date":
            if old in known or text in known:
                return "date-day-month"
            if _SERIAL_DATE.fullmatch(text):
                return "date-serial"
            return "date-time-dropped" if ":" in text else "date-written"
        if kind == "country":
            if field.subdivisions and region_code(text):
                return "region-code"
            code = text.isascii() and text.isalpha() and text.upper() in iso_codes()
            return "country-code" if code else "country-name"
        if kind == "enum" and field.name == "gender" and fold(text) in value_words().gender:
            return "gender-word"
        if kind in ("integer", "number") and DECIMAL_COMMA.fullmatch(text):
            return "decimal-comma"
        return _KIND_CHANGES.get(kind, "trimmed")

    def kinds(read: list[str], sent: list[str]) -> list[str]:
        if memo is None:
            return [named(old, new) for old, new in zip(read, sent)]
        found = []
        for old, new in zip(read, sent):
            code = memo.get(old)
            if code is None:
                code = named(old, new)
                if len(memo) < MEMO_VALUES:
                    memo[old] = code
            found.append(code)
        return found

    return kinds


#: Why a serial number was read as that date, in each of Excel's date systems (``EXCEL_EPOCHS``).
SERIAL_RULES = {1900: "days counted from 1899-12-30, as Excel counts them",
                1904: "days counted from 1904-01-01: this workbook uses Excel's 1904 date system"}

_KIND_CHANGES = {"email": "lower-cased", "boolean": "yes-no-word", "enum": "enum-spelling",
                 "integer": "number-written", "number": "number-written"}


def change_rules(field: Field, date_rule: str = "", date_system: int = 1900) -> Callable[[str], str]:
    """The rule behind each kind of change ``change_kinds`` names, in words for the report. ``date_rule``:
    the column's order and why (``ColumnDateOrder.rule``); ``date_system``: the workbook's."""
    rules = {
        "trimmed": TRIM_RULE,
        "date-day-month": date_rule,
        "date-serial": SERIAL_RULES[date_system],
        "date-time-dropped": "the platform takes the date alone",
        "date-written": "ISO, year first, a month name or 年月日: one reading only",
        "country-name": "the name's ISO code (schemas/countries.toml)",
        "country-code": "the ISO code's two-letter form",
        "region-code": "a region's code as ISO 3166-2 writes it, in capitals",
        "lower-cased": "e-mail addresses are sent in lower case",
        "yes-no-word": "a yes/no word (schemas/value_words.toml): true or false",
        "gender-word": "a gender word (schemas/value_words.toml): Male or Female",
        "enum-spelling": f"one of {', '.join(field.choices)}, matched ignoring case and spaces",
        "number-written": "a plain decimal, without redundant zeros",
        "decimal-comma": "a comma before one or two digits is a decimal comma (a thousands group has three)",
    }
    return lambda kind: rules.get(kind, "")
