"""Text a spreadsheet program would run as a formula: sent as written with a warning, unless the config says.

A value starting with ``=`` or ``@`` (or a tab or carriage return, the other OWASP triggers), or with ``+``
or ``-`` followed by anything but a phone number or a signed number, becomes a formula the moment someone
opens it in a spreadsheet (``=HYPERLINK(...)``, ``-2+3``, ``@SUM(A1)``). The config's
``[source] formula_text`` says what to do:

- ``"warn"`` (the default): the value is sent exactly as written, and the row carries a
  ``formula-like-text`` warning naming the column and the value.
- ``"reject"`` (the strict setting): the row gets a ``formula-like-text`` problem naming the column; not sent.
- ``"strip"``: the value is sent without its leading trigger characters, and the row carries a
  ``formula-like-text-stripped`` warning showing the value sent.

Why a warning and not a refusal (principle 2): the platform's interface says nothing against such values
(``=Manager``, ``@Home Office`` are plain strings to it), so refusing HR's row for them would be a rule of
ours. The danger, CSV injection, lies with whoever writes the value into a spreadsheet later, and the
guard belongs there: we escape every spreadsheet we write ourselves (``hrimport.report.cells``: string cells
with Excel's quote prefix, a leading ``'`` in CSV that the import removes again), and the platform's own
exports are the platform's to escape. The warning shows the doubt; ``"reject"`` is there for a company that
wants it. The message says "kept as written", not "sent": it is also read in a dry run and in ``to_fix``.

Phone numbers (``+65 8123 4567``, ``+1 (555) 123-4567``), signed numbers (``-3.5``) and placeholders made of
dashes alone (``-``, ``--``) are never formula-like.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa

from hrimport.config import DEFAULT_FORMULA_TEXT
from hrimport.outcomes import Problem
from hrimport.to_fix_format import FORMULA_TRIGGERS

if TYPE_CHECKING:
    from hrimport.mapper import MappedTable
    from hrimport.normalize.trail import ValueTrail

# After a leading + or -: digits with the punctuation of phone numbers and numbers (spaces, brackets, dots,
# commas, slashes, percent, signs), then an optional exponent (1e-10) or phone extension (x12, ext. 12).
_HARMLESS_SIGNED = re.compile(r"[+-][0-9\s().,/%+\-]*(?:(?<=[0-9])[eE][+-]?[0-9]+)?(?:\s*(?:x|ext\.?)\s*[0-9]+)?")
_LEADING = "".join(FORMULA_TRIGGERS) + " "
_IS_TRIGGER = np.zeros(256, dtype=bool)  # byte -> whether a value starting with it starts like a formula
_IS_TRIGGER[list("".join(FORMULA_TRIGGERS).encode("ascii"))] = True
# A character a harmless +/- value may hold only in an exponent or an extension, or never: a value without
# one is harmless for certain. = and @ are outside this set, so every value starting with them is looked at.
_NOT_PLAIN_SIGNED = r"[^0-9 ().,/%+\-]"


def is_formula_like(value: str) -> bool:
    """True when a spreadsheet opening ``value`` would run it as a formula (see the module docstring)."""
    if not value.startswith(FORMULA_TRIGGERS):
        return False
    return not (value[0] in "+-" and _HARMLESS_SIGNED.fullmatch(value))


def strip_formula(value: str) -> str:
    """``value`` without its leading trigger characters: ``=SUM(A1)`` -> ``SUM(A1)``, ``=-cmd`` -> ``cmd``."""
    return value.lstrip(_LEADING)


def _starts_with_trigger(values: pd.Series) -> np.ndarray:
    """For each value, whether it starts with one of ``FORMULA_TRIGGERS``.

    Read from the first byte of each value in the Arrow buffers: four times faster than ``str.startswith``
    over a file's 30 columns, and exact because every trigger is one ASCII character, which in UTF-8 no
    other character's first byte can equal.
    """
    array = pa.array(values.array)  # the Series' own Arrow data, not a copy, for pandas text columns
    parts = [np.zeros(0, dtype=bool)]
    for chunk in array.chunks if isinstance(array, pa.ChunkedArray) else [array]:
        if not pa.types.is_large_string(chunk.type):
            chunk = chunk.cast(pa.large_string())
        _, offsets_buffer, data_buffer = chunk.buffers()
        data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
        if len(chunk) == 0 or len(data) == 0:
            parts.append(np.zeros(len(chunk), dtype=bool))
            continue
        offsets = np.frombuffer(offsets_buffer, dtype=np.int64)[chunk.offset : chunk.offset + len(chunk) + 1]
        starts = offsets[:-1]
        first = data[np.minimum(starts, len(data) - 1)]  # an empty last value points past the end
        parts.append(_IS_TRIGGER[first] & (offsets[1:] > starts))
    return np.concatenate(parts)


def formula_like_positions(values: pd.Series) -> Iterator[tuple[int, str]]:
    """(position, value) of each formula-like value in ``values``.

    Fast for 100k rows: one vectorised prefix test per column, then one vectorised test that sets aside
    the +/- values made only of digits and phone punctuation (a column of phone numbers); only what is
    left (a few values) meets ``is_formula_like``.
    """
    starts = _starts_with_trigger(values)
    if not starts.any():
        return
    where = np.flatnonzero(starts)
    suspects = values.iloc[where]
    closer = suspects.str.contains(_NOT_PLAIN_SIGNED).to_numpy()
    verdicts: dict[str, bool] = {}
    for position, value in zip(where[closer], suspects[closer].tolist()):
        if verdicts.setdefault(value, is_formula_like(value)):
            yield int(position), value


def guard_formula_text(
    mapped: MappedTable, mode: str = DEFAULT_FORMULA_TEXT, trail: ValueTrail | None = None
) -> None:
    """Flag every formula-like value about to be sent (mapped fields and custom data, after normalisation):
    a warning on its row (``warn``), a problem that holds the row back (``reject``), or a warning and the
    value stripped (``strip``), each value stripped recorded in ``trail``."""
    for frame, sources, is_field in ((mapped.frame, mapped.field_sources, True),
                                     (mapped.custom, mapped.custom_sources, False)):
        for name in frame.columns:
            found = list(formula_like_positions(frame[name]))
            if not found:
                continue
            column = sources.get(name, name)
            stripped = {}
            for position, value in found:
                row = mapped.row_numbers[position]
                field = name if is_field else None
                if mode == "strip":
                    sent = stripped[position] = strip_formula(value)
                    message = (f"Row {row}, column '{column}': '{value}' looks like a spreadsheet formula; "
                               f"read as '{sent}' (formula_text = \"strip\").")
                    problem = Problem("formula-like-text-stripped", message, row, column, field, value,
                                      severity="warning")
                elif mode == "reject":
                    message = (f"Row {row}, column '{column}': '{value}' looks like a spreadsheet formula, "
                               "so it is not sent (formula_text = \"reject\"); remove the leading character, "
                               "or set formula_text in the config's [source] to \"warn\" to send it as "
                               "written or \"strip\" to send it without.")
                    problem = Problem("formula-like-text", message, row, column, field, value)
                else:
                    message = (f"Row {row}, column '{column}': '{value}' looks like a spreadsheet formula; "
                               "kept as written (formula_text = \"reject\" in the config's [source] would "
                               "hold the row back).")
                    problem = Problem("formula-like-text", message, row, column, field, value,
                                      severity="warning")
                mapped.add_problem(position, problem)
            if stripped:
                values = frame[name].copy()
                values.iloc[list(stripped)] = list(stripped.values())
                if trail is not None:
                    trail.compare(name, column, frame[name], values, "formula-text-stripped",
                                  'formula_text = "strip" in the config\'s [source]')
                frame[name] = values
