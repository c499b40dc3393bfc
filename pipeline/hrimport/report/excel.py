"""``report.xlsx``: the ``Summary``, ``Rows``, ``Problems`` and ``Values`` sheets of a run (issue 4).

Written with xlsxwriter in ``constant_memory`` mode: rows stream to disk in order, so 100,000 rows stay fast
and small, and one walk of the rows writes both the Rows and the Problems sheets (each sheet streams to its
own file); their rows go out whole (``streamed_sheet``). That mode cannot ``autofit``, so column widths are
measured while writing. The ``Rows`` sheet is
narrow on purpose (LIBRARIES.md: 100k x 40 cells take ~55 s); the full original columns of the rows needing
attention are in ``to_fix``. Every text goes through ``write_string`` (never ``write``, which turns ``=...``
into a formula); formula-like texts also get the quote-prefix style (see ``cells``).
"""

from __future__ import annotations

from pathlib import Path

import xlsxwriter
from xlsxwriter.worksheet import Worksheet

from hrimport.outcomes import Outcome, RowOutcome, RunResult
from hrimport.report.cells import mask_value
from hrimport.report.digest import RowsDigest, digest_rows
from hrimport.report.explain import explain
from hrimport.report.provenance import change_lines
from hrimport.report.scratch import partial_workbook, xlsxwriter_file, xlsxwriter_options
from hrimport.report.streamed_sheet import Cell, StreamedSheet
from hrimport.report.view import (
    GONE_HEADERS,
    GONE_SHEET,
    OUTCOME_COLOURS,
    RowMasking,
    detail_label,
    run_facts,
)
from hrimport.to_fix_format import FORMULA_TRIGGERS

_MAX_WIDTH = 80  # characters: longer messages wrap in Excel's formula bar rather than widen the sheet
_MESSAGE_WIDTH = 60  # characters: the Rows sheet's message column, wrapped, so the sheet prints one page wide
_FONT = {"font_name": "Calibri", "font_size": 11}


class _Widths:
    """Tracks the widest text per column, since ``autofit`` does not work in constant_memory mode."""

    def __init__(self, headers: list[str]) -> None:
        self.widths = [len(h) + 4 for h in headers]  # room for the autofilter button

    def apply(self, ws: Worksheet) -> None:
        for col, width in enumerate(self.widths):
            ws.set_column(col, col, min(width + 1, _MAX_WIDTH))


class _Formats:
    """The workbook's cell formats, made once (xlsxwriter wants formats shared, not made per cell)."""

    def __init__(self, wb: xlsxwriter.Workbook) -> None:
        self.header = wb.add_format({**_FONT, "bold": True, "bg_color": "#1F2A37", "font_color": "#FFFFFF"})
        self.text = wb.add_format(_FONT)
        self.quoted = wb.add_format({**_FONT, "quote_prefix": True})
        self.title = wb.add_format({**_FONT, "bold": True, "font_size": 16})
        self.verdict = wb.add_format({**_FONT, "bold": True, "font_size": 12})
        self.label = wb.add_format({**_FONT, "bold": True, "font_color": "#4A5560"})
        self.section = wb.add_format({**_FONT, "bold": True, "font_size": 12, "bottom": 1})
        self.number = wb.add_format({**_FONT, "num_format": "#,##0"})
        self.outcome = {
            o: wb.add_format({**_FONT, "bg_color": bg, "font_color": fg})
            for o, (bg, fg) in OUTCOME_COLOURS.items()
        }


def _printable(ws: Worksheet, *, repeat_header: bool) -> Worksheet:
    """Landscape, the header row on every printed page (the report gets forwarded and printed); the
    Summary also one page wide (the Rows sheet sets its own fit). Long messages spill past the Problems
    sheet, so it keeps its size."""
    ws.set_landscape()
    if repeat_header:
        ws.repeat_rows(0)
    else:
        ws.fit_to_pages(1, 0)
    return ws


def _put(ws: Worksheet, fmt: _Formats, row: int, col: int, text: str, widths: _Widths | None = None) -> None:
    """Write ``text`` as a string cell; formula-like texts get the quote prefix; empty texts are skipped."""
    if not text:
        return
    ws.write_string(row, col, text, fmt.quoted if text.startswith(FORMULA_TRIGGERS) else None)
    if widths is not None and len(text) > widths.widths[col]:
        widths.widths[col] = len(text)


def _summary_sheet(wb: xlsxwriter.Workbook, fmt: _Formats, result: RunResult, digest: RowsDigest) -> None:
    ws = _printable(wb.add_worksheet("Summary"), repeat_header=False)
    ws.set_column(0, 0, 24)
    ws.set_column(1, 1, 70)
    ws.set_column(2, 2, 12)
    kind = "Time off" if result.info.kind == "timeoff" else "Staff"
    ws.write_string(0, 0, f"{kind} import report: {result.info.job}", fmt.title)
    ws.write_string(1, 0, digest.verdict + ".", fmt.verdict)
    r = 3
    ws.write_string(r, 0, "Outcome", fmt.section)
    ws.write_string(r, 1, "", fmt.section)
    ws.write_string(r, 2, "Rows", fmt.section)
    for value, count in digest.counts.items():
        outcome = Outcome(value)
        if not count and outcome not in (Outcome.ADDED, Outcome.UPDATED, Outcome.INVALID):
            continue  # zero counts of rare outcomes are noise for the reader
        r += 1
        ws.write_string(r, 0, outcome.label, fmt.outcome[outcome])
        ws.write_string(r, 1, "imported" if outcome.is_success else "needs attention" if outcome.needs_attention
                        else "no record, skipped as the config says", fmt.text)
        ws.write_number(r, 2, count, fmt.number)
    r += 1
    ws.write_string(r, 0, "Rows read", fmt.label)
    ws.write_number(r, 2, digest.total, fmt.number)
    groups = digest.attention_codes
    if groups:
        r += 2
        ws.write_string(r, 0, "Problem", fmt.section)
        ws.write_string(r, 1, "How to fix", fmt.section)
        ws.write_string(r, 2, "Rows", fmt.section)
        for code, count in sorted(groups.items(), key=lambda kv: (-kv[1], kv[0])):
            r += 1
            _put(ws, fmt, r, 0, code)
            _put(ws, fmt, r, 1, explain(code).fix)
            ws.write_number(r, 2, count, fmt.number)
    r += 2
    ws.write_string(r, 0, "Run", fmt.section)
    ws.write_string(r, 1, "", fmt.section)
    for label, value in run_facts(result.info):
        r += 1
        ws.write_string(r, 0, label, fmt.label)
        _put(ws, fmt, r, 1, value)
    for note in result.info.notes:
        r += 1
        ws.write_string(r, 0, "Note", fmt.label)
        _put(ws, fmt, r, 1, note)
    if result.gone:
        r += 1
        ws.write_string(r, 0, "No longer in the export", fmt.label)
        _put(ws, fmt, r, 1, f"{len(result.gone):,} leave imported before, listed in the sheet '{GONE_SHEET}'")


def _gone_sheet(wb: xlsxwriter.Workbook, fmt: _Formats, result: RunResult) -> None:
    """Every leave imported before that the export no longer lists (``RunResult.gone``), one line each, streamed
    (a ledger may hold 100,000 records): report.html lists the first few hundred."""
    ws = _printable(wb.add_worksheet(GONE_SHEET), repeat_header=True)
    widths = _Widths(list(GONE_HEADERS))
    for col, h in enumerate(GONE_HEADERS):
        ws.write_string(0, col, h, fmt.header)
    r = 0
    for r, leave in enumerate(result.gone, start=1):
        for col, text in enumerate((leave.external_id, leave.name, leave.leave_type, leave.start_date,
                                    leave.end_date, leave.total_days)):
            _put(ws, fmt, r, col, text, widths)
        if leave.record_id is not None:
            ws.write_number(r, 6, leave.record_id)
        _put(ws, fmt, r, 7, leave.imported_at, widths)
        _put(ws, fmt, r, 8, leave.source_file, widths)
        ws.write_number(r, 9, leave.source_row)
    widths.apply(ws)
    ws.freeze_panes(1, 0)
    ws.autofilter(0, 0, max(r, 1), len(GONE_HEADERS) - 1)


class _RowsSheet:
    """The ``Rows`` sheet: one line per source row (``add``), its widths measured as they are written."""

    def __init__(self, wb: xlsxwriter.Workbook, fmt: _Formats, keys: list[str], masking: RowMasking) -> None:
        self.keys, self.masking = keys, masking
        self.headers = ["Row", "External id", "Name", "Outcome", "Problem codes", "Message", *map(detail_label, keys)]
        ws = _printable(wb.add_worksheet("Rows", worksheet_class=StreamedSheet), repeat_header=True)
        assert isinstance(ws, StreamedSheet)
        self.ws = ws
        # Printed for a sign-off: one page wide, as many pages tall as it takes, the message column wrapped
        # within a fixed width instead of running off the page.
        ws.fit_to_pages(1, 0)
        self.wrapped = {q: wb.add_format({**_FONT, "text_wrap": True, "quote_prefix": q}) for q in (False, True)}
        self.widths = _Widths(self.headers)
        for col, h in enumerate(self.headers):
            ws.write_string(0, col, h, fmt.header)
        self.quoted, self.outcome_formats = fmt.quoted, fmt.outcome
        self.labels = {o: o.label for o in Outcome}
        self.id_width = self.name_width = self.codes_width = 0
        self.detail_widths = [0] * len(keys)
        self.detail_columns = [(i, 6 + i, key, masked)
                               for i, (key, masked) in enumerate(zip(keys, masking.masked_details(keys)))]
        # the Outcome column's cell of each outcome, made once
        self.outcome_cells: dict[Outcome, Cell] = {
            o: (3, label, self.outcome_formats[o]) for o, label in self.labels.items()
        }
        self.last = 0  # the sheet's last row written

    def add(self, row: RowOutcome) -> None:
        # This runs once per source row (100,000 in the benchmark): each row's cells are gathered and written
        # in one call (StreamedSheet), the widths kept as plain integers.
        quoted = self.quoted
        cells: list[Cell] = [(0, row.row, None)]
        ext, name = row.external_id, row.name
        if ext:
            cells.append((1, ext, quoted if ext.startswith(FORMULA_TRIGGERS) else None))
            self.id_width = max(self.id_width, len(ext))
        if name:
            cells.append((2, name, quoted if name.startswith(FORMULA_TRIGGERS) else None))
            self.name_width = max(self.name_width, len(name))
        cells.append(self.outcome_cells[row.outcome])
        if row.problems:
            codes = ", ".join(row.problem_codes)
            cells.append((4, codes, quoted if codes.startswith(FORMULA_TRIGGERS) else None))
            self.codes_width = max(self.codes_width, len(codes))
        if (row.message or row.problems) and (message := self.masking.message(row)):
            cells.append((5, message, self.wrapped[message.startswith(FORMULA_TRIGGERS)]))
        if details := row.details:
            widths = self.detail_widths
            # the keys in column order, each with its column and whether it is masked (decided once)
            for i, column, key, masked in self.detail_columns:
                if value := details.get(key):
                    if masked:
                        value = mask_value(value)
                        if not value:
                            continue
                    cells.append((column, value, quoted if value.startswith(FORMULA_TRIGGERS) else None))
                    widths[i] = max(widths[i], len(value))
        self.last += 1
        self.ws.write_cells(self.last, cells)

    def finish(self) -> None:
        w, ws = self.widths.widths, self.ws
        w[0] = max(w[0], len(f"{self.last}"))
        w[1] = max(w[1], self.id_width)
        w[2] = max(w[2], self.name_width)
        w[3] = max(len(label) for label in self.labels.values()) + 4
        w[4] = max(w[4], self.codes_width)
        w[5] = _MESSAGE_WIDTH  # wrapped: as wide as a readable line, whatever the longest message
        for i, width in enumerate(self.detail_widths, start=6):
            w[i] = max(w[i], width)
        self.widths.apply(ws)
        ws.freeze_panes(1, 0)
        ws.autofilter(0, 0, max(self.last, 1), len(self.headers) - 1)


class _ProblemsSheet:
    """The ``Problems`` sheet: one line per problem of each row (``add``)."""

    def __init__(self, wb: xlsxwriter.Workbook, fmt: _Formats, masking: RowMasking) -> None:
        self.headers = ["Row", "External id", "Column", "Value", "Code", "Message", "Severity"]
        self.masking, self.quoted = masking, fmt.quoted
        ws = _printable(wb.add_worksheet("Problems", worksheet_class=StreamedSheet), repeat_header=True)
        assert isinstance(ws, StreamedSheet)
        self.ws = ws
        self.widths = _Widths(self.headers)
        for col, h in enumerate(self.headers):
            ws.write_string(0, col, h, fmt.header)
        self.last = 0

    def add(self, row: RowOutcome) -> None:
        w, quoted = self.widths.widths, self.quoted
        for p in row.problems:
            value, message = self.masking.problem(row, p)
            cells: list[Cell] = [(0, p.row if p.row is not None else row.row, None)]
            for col, text in enumerate((row.external_id, p.column or "", value, p.code, message, p.severity), 1):
                if text:
                    cells.append((col, text, quoted if text.startswith(FORMULA_TRIGGERS) else None))
                    w[col] = max(w[col], len(text))
            self.last += 1
            self.ws.write_cells(self.last, cells)

    def finish(self) -> None:
        self.widths.apply(self.ws)
        self.ws.freeze_panes(1, 0)
        self.ws.autofilter(0, 0, max(self.last, 1), len(self.headers) - 1)


def _values_sheet(wb: xlsxwriter.Workbook, fmt: _Formats, result: RunResult) -> None:
    """How the values were read: one line per column and kind of change, with its rows, examples and rule."""
    headers = ["Column", "Field", "What was done", "Rows", "Examples", "Why"]
    ws = _printable(wb.add_worksheet("Values"), repeat_header=True)
    widths = _Widths(headers)
    for col, h in enumerate(headers):
        ws.write_string(0, col, h, fmt.header)
    lines = change_lines(result)
    for r, line in enumerate(lines, start=1):
        _put(ws, fmt, r, 0, line.column, widths)
        _put(ws, fmt, r, 1, line.field, widths)
        _put(ws, fmt, r, 2, line.label, widths)
        ws.write_number(r, 3, line.rows, fmt.number)
        _put(ws, fmt, r, 4, line.examples_text, widths)
        _put(ws, fmt, r, 5, line.rule, widths)
    widths.apply(ws)
    ws.freeze_panes(1, 0)
    ws.autofilter(0, 0, max(len(lines), 1), len(headers) - 1)


def write_report_xlsx(
    result: RunResult, path: Path, *, masking: RowMasking | None = None, digest: RowsDigest | None = None
) -> Path:
    """Write ``report.xlsx`` (mode 0600) and return its path: one walk of the rows writes both the Rows and
    the Problems sheets (each sheet streams to its own file)."""
    digest = digest or digest_rows(result)
    masking = masking or RowMasking(result, digest)
    with partial_workbook(path) as writing, xlsxwriter_file(writing) as fh:
        options = xlsxwriter_options(writing, constant_memory=True, strings_to_numbers=False,
                                     strings_to_formulas=False)
        wb = xlsxwriter.Workbook(fh, options)
        fmt = _Formats(wb)
        _summary_sheet(wb, fmt, result, digest)
        if result.gone:
            _gone_sheet(wb, fmt, result)
        rows_sheet = _RowsSheet(wb, fmt, digest.detail_keys, masking)
        problems_sheet = _ProblemsSheet(wb, fmt, masking)
        for row in result.rows:
            rows_sheet.add(row)
            if row.problems:
                problems_sheet.add(row)
        rows_sheet.finish()
        problems_sheet.finish()
        _values_sheet(wb, fmt, result)
        wb.set_properties({"title": f"hrimport report: {result.info.job}", "author": "hrimport"})
        wb.close()
    return path
