"""What a column's values say about the field its header names: confirmed, contradicted, or silent.

Each check reuses the import's own normalisers, so ``init`` and the import never disagree about a value:
e-mail-shaped values, dates (and the order they prove, ``date_order_evidence``), countries
(``normalize_country``), yes/no and gender words (``schemas/value_words.toml``; yes/no words alone are no text
field's value), numbers, leave types, and the values of an enumerated field that no built-in normaliser
understands (they get a value map to fill in).
A header is contradicted only when most of a column's distinct values cannot be the field's kind: a column
headed "Email" holding names is left unmapped, with the reason, rather than sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from hrimport.fields import Field, staff_fields
from hrimport.normalize import normalize_for_field
from hrimport.normalize.countries import alpha2_codes
from hrimport.normalize.dates import DateOrder, date_order_evidence
from hrimport.normalize.words import normalize_boolean
from hrimport.timeoff.leave_types import match_leave_type

EMAIL_SHAPE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)$")
#: An enumerated column with more distinct values than this is not a list of choices.
MAX_CHOICES = 20
#: How many distinct values a column's checks look at (memory and time bounded whatever the file).
SAMPLE = 5000


@dataclass(frozen=True)
class Evidence:
    """The values' verdict on one column read as one field."""

    contradicts: str | None = None  # why the values cannot be this field (the column is left unmapped)
    confirms: str = ""  # what the values showed, for the preview and the config's comment
    date_order: DateOrder | None = None  # the order the column's dates prove
    date_example: str = ""  # a value proving it
    date_either: str = ""  # without a proof, a value that reads as another day in each order (01/06/2020)
    date_both: str = ""  # the dates show both orders (a typo somewhere): a value of each, in words
    unknown: tuple[str, ...] = ()  # enumerated values no normaliser understands: a value map to fill in


def distinct_values(values: pd.Series) -> list[str]:
    """The column's distinct non-empty values, trimmed, in the order they first appear (at most ``SAMPLE``)."""
    stripped = values.fillna("").astype("str").str.strip()
    return [v for v in pd.unique(stripped[stripped != ""])[:SAMPLE].tolist()]


def _share(values: list[str], fits: list[bool]) -> float:
    return sum(fits) / len(values) if values else 1.0


def looks_like_emails(values: list[str]) -> bool:
    """Every distinct value (and at least one) is shaped like an e-mail address."""
    return bool(values) and all(EMAIL_SHAPE.match(v) for v in values)


def check_column(values: pd.Series, field: Field, *, kind: str) -> Evidence:
    """Check ``values`` (one column of text cells) against ``field``; ``kind`` is staff or timeoff."""
    distinct = distinct_values(values)
    if not distinct:
        return Evidence(confirms="empty column")
    series = pd.Series(distinct, dtype="str")
    n = len(distinct)
    emails = [bool(EMAIL_SHAPE.match(v)) for v in distinct]
    if field.kind == "email":
        if _share(distinct, emails) < 0.5:
            return Evidence(contradicts=f"its values are not e-mail addresses (e.g. '{distinct[0]}')")
        return Evidence(confirms="e-mail addresses")
    if field.kind not in ("text", "custom_data") and all(emails):
        return Evidence(contradicts=f"its values are e-mail addresses (e.g. '{distinct[0]}'), not {field.kind}s")
    if kind == "staff" and field.kind == "text" and all(v in ("true", "false") for v in normalize_boolean(series)):
        # A German "Führungskraft" column is the manager's name in one export and "is a manager: ja/nein" in
        # another: its values say which. Yes/no words are no name, title or place, so "nein" is never sent as one.
        return Evidence(contradicts=f"its values are yes/no words (e.g. '{distinct[0]}'): map it by hand to the "
                                    f"yes/no field it means ({', '.join(_yes_no_fields())})")
    if field.kind == "date":
        return _dates(series, distinct, field)
    if field.kind in ("country", "boolean", "number", "integer"):
        normalised = normalize_for_field(series, field, day_first=True).tolist()
        fits = [_fits(field.kind, v) for v in normalised]
        if _share(distinct, fits) < 0.5:
            what = {"country": "countries", "boolean": "yes/no values", "number": "numbers",
                    "integer": "numbers"}[field.kind]
            bad = next(v for v, ok in zip(distinct, fits) if not ok)
            return Evidence(contradicts=f"its values are not {what} (e.g. '{bad}')")
        return Evidence(confirms={"country": "countries", "boolean": "yes/no values"}.get(field.kind, "numbers"))
    if field.kind == "enum":
        normalised = normalize_for_field(series, field, day_first=True).tolist()
        unknown = tuple(v for v, new in zip(distinct, normalised) if new not in field.choices)
        if len(unknown) > MAX_CHOICES:
            return Evidence(contradicts=f"it holds {n} different values; {field.name} takes one of "
                                        f"{', '.join(field.choices)}")
        return Evidence(confirms=_understood(n, len(unknown)), unknown=unknown)
    if field.kind == "leave_type":
        unknown = tuple(v for v in distinct if match_leave_type(v) is None)
        if len(unknown) > MAX_CHOICES:
            return Evidence(contradicts=f"it holds {len(unknown)} values that are not leave types")
        return Evidence(confirms=_understood(n, len(unknown)), unknown=unknown)
    if field.key and kind == "staff":
        return _ids(values)
    return Evidence()


def _yes_no_fields() -> list[str]:
    return [f.name for f in staff_fields() if f.kind == "boolean"]


def _understood(n: int, unknown: int) -> str:
    if not unknown:
        return f"all {n} values understood"
    return f"{unknown} of {n} values to map below"


def _fits(kind: str, value: str) -> bool:
    if kind == "country":
        return value in alpha2_codes()
    if kind == "boolean":
        return value in ("true", "false")
    return bool(_NUMBER.match(value))


def _dates(series: pd.Series, distinct: list[str], field: Field) -> Evidence:
    either = [
        bool(_ISO_DATE.match(a)) or bool(_ISO_DATE.match(b))
        for a, b in zip(normalize_for_field(series, field, day_first=True).tolist(),
                        normalize_for_field(series, field, day_first=False).tolist())
    ]
    if _share(distinct, either) < 0.5:
        bad = next(v for v, ok in zip(distinct, either) if not ok)
        return Evidence(contradicts=f"its values are not dates (e.g. '{bad}')")
    proof = date_order_evidence(series)
    order = proof.proves()
    if order is None:
        if proof.day_first and proof.month_first:  # each order has its own value: the import needs the setting
            both = f"'{proof.day_first[0]}' reads only day-first, '{proof.month_first[0]}' only month-first"
            return Evidence(confirms=f"dates in both orders ({both})", date_both=both)
        return Evidence(confirms="dates", date_either=proof.either[0] if proof.either else "")
    example = (proof.day_first if order == "day-first" else proof.month_first)[0]
    return Evidence(confirms=f"dates, {order} ('{example}')", date_order=order, date_example=example)


def _ids(values: pd.Series) -> Evidence:
    cells = values.fillna("").astype("str").str.strip()
    cells = cells[cells != ""]
    repeated = int(cells.duplicated().sum())
    zeros = bool(cells.str.match(r"^0\d").any())
    said = ["unique" if not repeated else f"{repeated} repeated"]
    if zeros:
        said.append("leading zeros kept")
    return Evidence(confirms=", ".join(said))
