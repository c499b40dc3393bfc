"""``to_fix.xlsx`` / ``to_fix.csv``: the rows not imported, in the source's own layout, ready to correct.

Issue 4: HR staff correct these rows in place and re-run the same import command, with the same config, on
this file. So the file repeats the source's layout: its title rows (preamble) above the header, the header
on the same row number, the source headers in their order, each row's original cells, and one ``Problem``
column appended (``FIX_COLUMN``, which the mapper ignores on re-import). An Excel source gives an xlsx with
the same sheet name; a CSV or TSV source gives a CSV with the same delimiter, UTF-8 with a BOM so Excel
reads it as UTF-8.

Values are kept in full (no masking: the file is for re-import). Formula-like cells stay their exact text
in xlsx (string cells with the quote-prefix style) and get a leading ``'`` in CSV: the round trip's
contract (``FIX_COLUMN``, the formula triggers) is ``hrimport.to_fix_format``, shared with the mapper.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import xlsxwriter

from hrimport.outcomes import RowOutcome, SourceInfo
from hrimport.private_files import open_private
from hrimport.to_fix_format import FIX_COLUMN, FORMULA_TRIGGERS, csv_safe

CSV_FORMATS = frozenset({"csv", "tsv", "txt"})
_MAX_WIDTH = 60


def fix_file_name(source: SourceInfo) -> str:
    """``to_fix.csv`` for a CSV/TSV source, else ``to_fix.xlsx``."""
    return "to_fix.csv" if source.format.lower() in CSV_FORMATS else "to_fix.xlsx"


def problem_text(row: RowOutcome) -> str:
    """What goes in the ``Problem`` column: the row's problem messages, else its own message."""
    messages = list(dict.fromkeys(p.message for p in row.problems))
    if not messages:
        messages = [row.message or row.outcome.label]
    return "; ".join(messages)


def _layout(source: SourceInfo, rows: Sequence[RowOutcome]) -> tuple[list[str], list[list[str]]]:
    """The headers to write and the blank-padded title rows above them.

    The header goes on the source's own header row (``header_row``) so the import config's header setting
    still fits. A ``Problem`` column the source already had (a re-run of a fix file) is replaced, not doubled.
    """
    headers = list(source.headers)
    if not headers:  # reader gave no headers: fall back to the cells' own names, in first-seen order
        seen: dict[str, None] = {}
        for row in rows:
            seen.update(dict.fromkeys(row.source or {}))
        headers = list(seen)
    headers = [h for h in headers if h != FIX_COLUMN]
    preamble = [list(line) for line in source.preamble]
    while len(preamble) < source.header_row - 1:
        preamble.append([])
    return headers, preamble


def _cells(row: RowOutcome, headers: list[str]) -> list[str]:
    source = row.source or {}
    return [source.get(h, "") or "" for h in headers] + [problem_text(row)]


def write_fix_csv(source: SourceInfo, rows: Sequence[RowOutcome], path: Path) -> Path:
    """Write the rows as CSV with the source's delimiter, UTF-8 with BOM, mode 0600."""
    headers, preamble = _layout(source, rows)
    delimiter = source.delimiter or ("\t" if source.format.lower() == "tsv" else ",")
    with open_private(path, "w", encoding="utf-8-sig", newline="") as fh:
        writer = csv.writer(fh, delimiter=delimiter, lineterminator="\r\n")
        for line in preamble:
            writer.writerow([csv_safe(v) for v in line])
        writer.writerow([csv_safe(h) for h in [*headers, FIX_COLUMN]])
        for row in rows:
            writer.writerow([csv_safe(v) for v in _cells(row, headers)])
    return path


def write_fix_xlsx(source: SourceInfo, rows: Sequence[RowOutcome], path: Path) -> Path:
    """Write the rows as xlsx on a sheet named like the source's, every cell a string cell, mode 0600."""
    headers, preamble = _layout(source, rows)
    with open_private(path, "wb") as fh:
        wb = xlsxwriter.Workbook(fh, {"constant_memory": True, "strings_to_numbers": False})
        quoted = wb.add_format({"quote_prefix": True})
        bold = wb.add_format({"bold": True})
        problem = wb.add_format({"bg_color": "#FBE2DE", "font_color": "#8E1420", "text_wrap": False})
        problem_head = wb.add_format({"bold": True, "bg_color": "#F9D7D9", "font_color": "#8E1420"})
        ws = wb.add_worksheet(source.sheet or "Sheet1")
        widths = [len(h) + 2 for h in headers] + [len(FIX_COLUMN) + 2]

        def put(r: int, c: int, text: str, fmt: object = None) -> None:
            if not text:
                return
            ws.write_string(r, c, text, quoted if text.startswith(FORMULA_TRIGGERS) else fmt)

        r = 0
        for line in preamble:
            for c, text in enumerate(line):
                put(r, c, text)
            r += 1
        header_at = r
        for c, text in enumerate(headers):
            put(r, c, text, bold)
        ws.write_string(r, len(headers), FIX_COLUMN, problem_head)
        last = len(headers)
        for row in rows:
            r += 1
            cells = _cells(row, headers)
            for c, text in enumerate(cells[:last]):
                if text:
                    put(r, c, text)
                    widths[c] = max(widths[c], len(text))
            put(r, last, cells[last], problem)
            widths[last] = max(widths[last], len(cells[last]))
        for c, width in enumerate(widths):
            ws.set_column(c, c, min(width + 1, _MAX_WIDTH))
        ws.freeze_panes(header_at + 1, 0)
        wb.close()
    return path


def write_fix_file(source: SourceInfo, rows: Sequence[RowOutcome], folder: Path) -> Path:
    """Write ``to_fix.csv`` or ``to_fix.xlsx`` into ``folder`` and return its path."""
    path = folder / fix_file_name(source)
    if path.suffix == ".csv":
        return write_fix_csv(source, rows, path)
    return write_fix_xlsx(source, rows, path)
