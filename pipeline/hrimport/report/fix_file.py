"""``to_fix.xlsx`` (and ``to_fix.csv``): the rows not imported, in the source's own layout, ready to correct.

Issue 4: HR staff correct these rows in place and re-run the same import command, with the same config, on
this file. So the file repeats the source's layout: its title rows (preamble) above the header, the header
on the same row number, the source headers in their order, each row's original cells, and one ``Problem``
column appended (``FIX_COLUMN``, which the mapper ignores on re-import) that names each row's original row.
Issue 16: each cell a problem names is filled red with a comment holding the problem (``fix_marks``).

Which file, by source:

* an XLSX/XLSM source still there, unchanged, and small enough: ``to_fix.xlsx`` made from the workbook
  itself (``fix_workbook``): date cells stay dates, number formats, widths and styles stay;
* a larger workbook, or one that is gone or changed since the run (``hrimport report`` later), or an XLS or
  ODS source: ``to_fix.xlsx`` written here from the cells the run kept, every cell a string cell, on a
  sheet named like the source's (xlsxwriter: ~10 us a cell), in the source's date system (a serial number
  means the same day), behind empty hidden sheets named like those before it in the source (the config's
  ``sheet``, a name or a position, still names it; with none, it is the first visible sheet);
* a CSV or TSV source: ``to_fix.xlsx`` written here (the file to open in Excel: its cells are typed text,
  so ``+65 8123 4567`` and ``000123`` show exactly, where Excel opening a CSV turns the first into a
  formula and the second into 123) and ``to_fix.csv`` beside it, for systems that need CSV: the source's
  delimiter, UTF-8 with a BOM so Excel reads it as UTF-8. ``to_fix.xlsx`` holds each cell as the import read
  it (``text_cell_as_read``: Excel's ``="000123"`` as ``000123``), ``to_fix.csv`` as the source had it.

A cell that held no value to send (an error, a formula without its result) is written as one holding none
(``fix_values``), so that importing ``to_fix`` again flags it rather than sending a stand-in.

Values are kept in full (no masking: the file is for re-import). Formula-like cells stay their exact text
in xlsx (string cells with the quote-prefix style) and get a leading ``'`` in CSV: the round trip's
contract (``FIX_COLUMN``, the formula triggers) is ``hrimport.to_fix_format``, shared with the mapper.
"""

from __future__ import annotations

import csv
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import xlsxwriter
from xlsxwriter.format import Format

from hrimport.outcomes import RowOutcome, SourceInfo
from hrimport.private_files import written_whole
from hrimport.report.fix_marks import (
    BAD_CELL_FILL,
    PROBLEM_FILL,
    PROBLEM_FONT,
    bad_cells,
    comment_size,
    header_key,
    problem_text,
)
from hrimport.report.fix_values import no_value_cells
from hrimport.report.scratch import partial_workbook, xlsxwriter_file, xlsxwriter_options
from hrimport.report.streamed_sheet import Cell, ErrorText, FormulaText, StreamedSheet
from hrimport.to_fix_format import (
    EXCEL_DAY_ZERO,
    FIX_COLUMN,
    FORMULA_TRIGGERS,
    csv_safe,
    day_month_date,
    text_cell_as_read,
)

log = logging.getLogger(__name__)

CSV_FORMATS = frozenset({"csv", "tsv", "txt"})
FIX_XLSX = "to_fix.xlsx"
FIX_CSV = "to_fix.csv"
_MAX_WIDTH = 60
_NOT_IN_SHEET_NAME = re.compile(r"[\[\]:*?/\\]")


@dataclass(frozen=True)
class FixFiles:
    """The ``to_fix`` files of a run: ``xlsx``, the one HR opens in Excel, and for a CSV/TSV source ``csv``,
    the same rows for systems that need CSV."""

    xlsx: Path
    csv: Path | None = None


def fix_csv_name(source: SourceInfo) -> str | None:
    """``to_fix.csv`` when a run of ``source`` writes it beside ``to_fix.xlsx`` (a CSV or TSV source)."""
    return FIX_CSV if source.format.lower() in CSV_FORMATS else None


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
    """Write the rows as CSV with the source's delimiter, UTF-8 with BOM, mode 0600, whole or not at all
    (``written_whole``)."""
    headers, preamble = _layout(source, rows)
    delimiter = source.delimiter or ("\t" if source.format.lower() == "tsv" else ",")
    with written_whole(path, encoding="utf-8-sig", newline="") as fh:
        writer = csv.writer(fh, delimiter=delimiter, lineterminator="\r\n")
        for line in preamble:
            writer.writerow([csv_safe(v) for v in line])
        writer.writerow([csv_safe(h) for h in [*headers, FIX_COLUMN]])
        for row in rows:
            writer.writerow([csv_safe(v) for v in _cells(row, headers)])
    return path


def write_fix_xlsx(source: SourceInfo, rows: Sequence[RowOutcome], path: Path,
                   date_orders: Mapping[str, str] | None = None) -> Path:
    """Write the rows as xlsx on a sheet named like the source's, every cell a string cell, each bad cell
    red with its problem in a comment; mode 0600. ``date_orders``: the columns whose day/month dates the run
    read in a known order (``date_orders_read``) -> that order: such a date is a date cell shown as written
    (``day_month_date``)."""
    headers, preamble = _layout(source, rows)
    ordered = {header_key(column): order for column, order in (date_orders or {}).items()}
    date_columns = {c: ordered[header_key(h)] for c, h in enumerate(headers) if header_key(h) in ordered}
    day_zero = EXCEL_DAY_ZERO.get(source.date_system, EXCEL_DAY_ZERO[1900])
    # a text file's cells as the import reads them: in a workbook, ="000123" is text, sent as written
    as_read = text_cell_as_read if source.format.lower() in CSV_FORMATS else None
    with partial_workbook(path) as writing, xlsxwriter_file(writing) as fh:
        wb = xlsxwriter.Workbook(fh, xlsxwriter_options(writing, constant_memory=True, strings_to_numbers=False,
                                                        date_1904=source.date_system == 1904))
        # a cell is marked bad or not, and quoted (formula-like text) or not: one format per pair, and none
        # for most cells (a format costs xlsxwriter time on each of 100,000s of cells)
        red = {"bg_color": f"#{BAD_CELL_FILL}"}
        formats: dict[tuple[bool, bool], Format | None] = {
            (False, False): None,
            (False, True): wb.add_format({"quote_prefix": True}),
            (True, False): wb.add_format(red),
            (True, True): wb.add_format({**red, "quote_prefix": True}),
        }
        date_formats: dict[tuple[str, bool], Format] = {}  # a date's number format, marked bad or not

        def date_cell(text: str, order: str, bad: bool) -> tuple[int, Format] | None:
            """A day/month date as Excel's serial number and the format showing it as ``text`` writes it."""
            read = day_month_date(text, order)
            if read is None:
                return None
            date, number_format = read
            if (number_format, bad) not in date_formats:
                date_formats[number_format, bad] = wb.add_format(
                    {"num_format": number_format, **(red if bad else {})})
            return (date - day_zero).days, date_formats[number_format, bad]

        bold = wb.add_format({"bold": True})
        problem = wb.add_format({"bg_color": f"#{PROBLEM_FILL}", "font_color": f"#{PROBLEM_FONT}"})
        problem_head = wb.add_format({"bold": True, "bg_color": "#F9D7D9", "font_color": f"#{PROBLEM_FONT}"})
        _sheets_before(wb, source)
        ws = wb.add_worksheet(source.sheet or "Sheet1", worksheet_class=StreamedSheet)
        assert isinstance(ws, StreamedSheet)
        ws.activate()
        ws.set_first_sheet()  # the first tab shown: the sheets before it are hidden
        widths = [len(h) + 2 for h in headers] + [len(FIX_COLUMN) + 2]
        column_of = {h: c for c, h in enumerate(headers)}

        def put(r: int, c: int, text: str, *, bad: bool = False) -> None:
            if text or bad:
                ws.write_string(r, c, text, formats[bad, text.startswith(FORMULA_TRIGGERS)])

        r = 0
        for line in preamble:
            for c, text in enumerate(line):
                put(r, c, text)
            r += 1
        header_at = r
        for c, text in enumerate(headers):
            ws.write_string(r, c, text, formats[False, True] if text.startswith(FORMULA_TRIGGERS) else bold)
        ws.write_string(r, len(headers), FIX_COLUMN, problem_head)
        last = len(headers)
        for row in rows:
            r += 1
            texts = _cells(row, headers)
            if as_read is not None:
                texts[:last] = [as_read(text) for text in texts[:last]]
            marked = {column_of[h]: comment for h, comment in bad_cells(row, headers).items()}
            no_value = {column_of[h]: cell for h, cell in no_value_cells(row, headers, source.format).items()}
            # the row's cells in one call (StreamedSheet: 200,000 cells for 5,000 rows to fix cost 2 s cell by cell)
            cells: list[Cell] = []
            for c, text in enumerate(texts[:last]):
                if c in no_value:
                    nothing = no_value[c]
                    value = FormulaText(nothing.formula) if nothing.formula else ErrorText(nothing.error)
                    cells.append((c, value, formats[c in marked, False]))
                elif c in date_columns and (date := date_cell(text, date_columns[c], c in marked)) is not None:
                    cells.append((c, *date))
                    widths[c] = max(widths[c], len(text))
                elif text:
                    cells.append((c, text, formats[c in marked, text.startswith(FORMULA_TRIGGERS)]))
                    widths[c] = max(widths[c], len(text))
                elif c in marked:  # an empty cell a problem names (a missing value): marked all the same
                    cells.append((c, text, formats[True, False]))
            cells.append((last, texts[last], problem))
            ws.write_cells(r, cells)
            for c, comment in marked.items():
                width, height = comment_size(comment)
                ws.write_comment(r, c, comment, {"author": "hrimport", "width": width, "height": height})
            widths[last] = max(widths[last], len(texts[last]))
        for c, width in enumerate(widths):
            ws.set_column(c, c, min(width + 1, _MAX_WIDTH))
        ws.freeze_panes(header_at + 1, 0)
        wb.close()
    return path


def _sheets_before(wb: xlsxwriter.Workbook, source: SourceInfo) -> None:
    """Empty hidden sheets named like those before ``source``'s in its workbook, so that the config's ``sheet``
    names the same sheet in ``to_fix``; none when a name is one Excel does not take (an ODS may hold one)."""
    before = source.sheets[:source.sheets.index(source.sheet)] if source.sheet in source.sheets else []
    if not before or not _excel_sheet_names([*before, source.sheet or ""]):
        return
    for name in before:
        wb.add_worksheet(name).hide()


def _excel_sheet_names(names: list[str]) -> bool:
    """Whether Excel (and xlsxwriter) take ``names`` for a workbook's sheets: at most 31 UTF-16 units, none of
    ``[]:*?/\\``, no ``'`` at either end, no two alike ignoring case."""
    return len({name.lower() for name in names}) == len(names) and all(
        0 < len(name.encode("utf-16-le")) <= 62 and not _NOT_IN_SHEET_NAME.search(name) and name[0] != "'" != name[-1]
        for name in names)


def write_fix_files(source: SourceInfo, rows: Sequence[RowOutcome], folder: Path,
                    date_orders: Mapping[str, str] | None = None) -> FixFiles:
    """Write ``to_fix.xlsx`` (and ``to_fix.csv`` for a CSV/TSV source) into ``folder``. ``date_orders``: the
    columns whose day/month dates the run read in a known order -> that order (``write_fix_xlsx``)."""
    xlsx = folder / FIX_XLSX
    csv_name = fix_csv_name(source)
    if csv_name is not None:
        return FixFiles(write_fix_xlsx(source, rows, xlsx, date_orders),
                        write_fix_csv(source, rows, folder / csv_name))
    # openpyxl (0.2 s to import, numpy with it) only for a workbook source: the process that writes a big
    # to_fix of a CSV file starts without it
    from hrimport.report.fix_workbook import source_workbook, write_fix_from_workbook

    workbook = source_workbook(source)
    if workbook is not None:
        try:
            return FixFiles(write_fix_from_workbook(workbook, source, rows, xlsx, date_orders))
        except Exception:  # whatever openpyxl cannot take in a file the reader took: the fast path works
            log.debug("to_fix from %s with openpyxl failed; writing it from the run's cells", source.path,
                      exc_info=True)
    return FixFiles(write_fix_xlsx(source, rows, xlsx, date_orders))
