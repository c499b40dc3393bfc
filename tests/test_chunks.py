"""A big export is read, mapped and validated in chunks (issue 17): HR must not be able to tell.

The same file imported as one chunk and as many small ones gives the same outcome on every row, the same
problems in the same words, the same notes and record of how values were read, and the same report files.
What only the whole file shows is still found: an external id repeated far apart, and a date column whose
order only a late row proves (or contradicts).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import load_workbook

from hrimport import normalize, reader
from hrimport.config import ImportConfig, load_config
from hrimport.errors import InputFileError
from hrimport.imports import import_file
from hrimport.normalize import dates, values
from hrimport.outcomes import RunResult
from hrimport.reader import xlsx_piece_strings, xlsx_pieces, xlsx_stream
from tests.staff_files import HEADER, as_calculated, person, write_config, write_csv

FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: Fields that say when and how fast a run ran, not what it did.
CLOCK = {"started_at", "finished_at", "duration_s", "timings"}
#: A moment in a report's text (when the platform accepted a person, in the plan): a clock too.
MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d")


def varied_rows() -> list[dict[str, str]]:
    """60 people, with what a real export holds spread over the file: dates either order reads first and
    the one that proves day-first late, an id repeated 45 rows apart, country names, spaces to trim, an
    e-mail our pattern doubts (a warning: the row is sent), an impossible date and a two-digit year."""
    rows = [person(n, **{"Hire Date": f"0{1 + n % 9}/0{1 + n % 8}/2020"}) for n in range(1, 61)]
    rows[2]["Country"] = "Malaysia"
    rows[3]["Title"] = "  Senior Analyst "
    rows[4]["Employee ID"] = rows[49]["Employee ID"]  # the same person twice, far apart
    rows[11]["Hire Date"] = "01/02/20"
    rows[19]["Email"] = "not-an-email"
    rows[32]["Hire Date"] = "2020-02-30"
    rows[44]["Hire Date"] = "25/03/2021"  # the only value that shows the order: day-first
    rows[50]["Country"] = "Singapore"
    rows[51]["Gender"] = "f"
    return rows


def run_dry(tmp_path: Path, source: Path, config: Path, chunk_rows: int | None, name: str) -> Path:
    folder = tmp_path / name
    run = import_file(load_config(config), source, dry_run=True, report_folder=folder, chunk_rows=chunk_rows)
    assert run.report is not None
    return folder


def outcomes(folder: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in (folder / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()]
    for record in records:
        for key in CLOCK:
            record.pop(key, None)
    return records


def workbook_cells(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    book = load_workbook(path, read_only=True)
    sheets = {ws.title: [tuple(r) for r in ws.iter_rows(values_only=True)] for ws in book.worksheets}
    book.close()
    return sheets


@pytest.fixture(params=["cut", "streamed"])
def streamed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Each test twice: the file read whole and cut in chunks, and the file streamed a chunk at a time
    (what a text file above ``STREAM_BYTES`` gets; these files are small, so the threshold goes down)."""
    if request.param == "streamed":
        monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    return bool(request.param == "streamed")


def assert_same_reports(whole: Path, chunked: Path) -> None:
    assert outcomes(chunked) == outcomes(whole)
    summary = {f: json.loads((f / "summary.json").read_text(encoding="utf-8")) for f in (whole, chunked)}
    for data in summary.values():
        for key in CLOCK:
            data.pop(key, None)
            data.get("run", {}).pop(key, None)
    assert summary[chunked] == summary[whole]
    if (whole / "to_fix.csv").exists():
        assert (chunked / "to_fix.csv").read_bytes() == (whole / "to_fix.csv").read_bytes()
    else:  # a workbook's rows to fix go back in a workbook
        assert workbook_cells(chunked / "to_fix.xlsx") == workbook_cells(whole / "to_fix.xlsx")
    whole_cells, chunked_cells = workbook_cells(whole / "report.xlsx"), workbook_cells(chunked / "report.xlsx")
    for sheet in ("Rows", "Problems", "Values"):
        assert chunked_cells[sheet] == whole_cells[sheet], sheet


def same_dry_run_whole_and_in_chunks(tmp_path: Path, rows: list[dict[str, str]], chunk_rows: int) -> Path:
    """A dry run of ``rows`` read whole and in chunks of ``chunk_rows``: the reports are the same; the chunked
    run's report folder."""
    config = write_config(tmp_path / "staff.toml", date_order=None)
    source = write_csv(tmp_path / "staff.csv", rows)
    with pytest.MonkeyPatch.context() as whole_read:
        whole_read.setattr(reader, "STREAM_BYTES", 1 << 40)
        whole = run_dry(tmp_path, source, config, None, "whole")
    chunked = run_dry(tmp_path, source, config, chunk_rows, "chunked")
    assert_same_reports(whole, chunked)
    return chunked


@pytest.mark.parametrize("chunk_rows", [1, 7, 50])
def test_a_file_read_in_chunks_reports_exactly_what_a_whole_read_reports(tmp_path: Path, chunk_rows: int,
                                                                         streamed: bool) -> None:
    chunked = same_dry_run_whole_and_in_chunks(tmp_path, varied_rows(), chunk_rows)

    # and what the rows say is what the whole file shows, not what one chunk shows
    rows = {r["row"]: r for r in outcomes(chunked) if r["record"] == "row"}
    assert [p["code"] for p in rows[6]["problems"]] == ["duplicate-id"]
    assert "also on row 51" in rows[6]["problems"][0]["message"]
    assert [p["code"] for p in rows[51]["problems"]] == ["duplicate-id"]
    assert rows[13]["problems"][0]["code"] == "two-digit-year"
    assert rows[34]["problems"][0]["code"] == "not-a-date"
    assert (rows[21]["outcome"], [(p["code"], p["severity"]) for p in rows[21]["problems"]]) == (
        "valid", [("not-an-email", "warning")])
    run = outcomes(chunked)[0]
    hire = [c for c in run["values_read"] if c["field"] == "job_start_date" and c["kind"] == "date-day-month"]
    assert hire[0]["rule"] == "day-first, proven by 25/03/2021 on row 46"
    assert sum(c["rows"] for c in hire) == 58  # every day/month date but the two-digit year and the ISO one
    assert not any("the default" in note for note in run["notes"])


def test_validate_in_chunks_counts_and_lists_the_same_rows(tmp_path: Path, streamed: bool) -> None:
    config = load_config(write_config(tmp_path / "staff.toml", date_order=None))
    source = write_csv(tmp_path / "staff.csv", varied_rows())
    whole = import_file(config, source, validate_only=True).result
    chunked = import_file(config, source, validate_only=True, chunk_rows=4).result

    assert list(chunked.rows) == list(whole.rows)
    assert chunked.counts() == whole.counts() == {**{k: 0 for k in whole.counts()}, "valid": 56, "invalid": 4}
    assert chunked.verdict() == whole.verdict() == "56 of 60 rows checked (1 with warnings); 4 need attention"
    assert chunked.info.values_read == whole.info.values_read
    assert chunked.info.notes == whole.info.notes


def rows_with_repeats() -> list[dict[str, str]]:
    """``varied_rows`` and, far below, people listed again: one exactly (twice), one with a title of its own."""
    rows = varied_rows()
    rows += [dict(rows[2]), person(8, **{"Hire Date": rows[7]["Hire Date"], "Title": "Lead"}), dict(rows[2])]
    return rows


@pytest.mark.parametrize("chunk_rows", [1, 7, 50])
def test_rows_repeated_far_apart_are_found_in_chunks_as_in_a_whole_read(tmp_path: Path, chunk_rows: int,
                                                                         streamed: bool) -> None:
    chunked = same_dry_run_whole_and_in_chunks(tmp_path, rows_with_repeats(), chunk_rows)

    rows = {r["row"]: r for r in outcomes(chunked) if r["record"] == "row"}
    assert len(rows) == 63
    assert [(row, rows[row]["outcome"], [p["code"] for p in rows[row]["problems"]]) for row in (4, 62, 64)] == [
        (4, "valid", []), (62, "valid", ["duplicate-row"]), (64, "valid", ["duplicate-row"])]
    assert [(row, rows[row]["outcome"], [p["code"] for p in rows[row]["problems"]]) for row in (9, 63)] == [
        (9, "invalid", ["duplicate-id"]), (63, "invalid", ["duplicate-id"])]
    payloads = (chunked / "payloads.jsonl").read_text(encoding="utf-8")
    assert payloads.count('"customer_system_id":"000003"') == 1 and '"000008"' not in payloads


def test_validate_in_chunks_finds_the_same_repeated_rows(tmp_path: Path, streamed: bool) -> None:
    config = load_config(write_config(tmp_path / "staff.toml", date_order=None))
    source = write_csv(tmp_path / "staff.csv", rows_with_repeats())
    whole = import_file(config, source, validate_only=True).result
    chunked = import_file(config, source, validate_only=True, chunk_rows=4).result

    assert list(chunked.rows) == list(whole.rows)
    assert chunked.verdict() == whole.verdict() == "57 of 63 rows checked (3 with warnings); 6 need attention"
    assert chunked.info.notes == whole.info.notes


@pytest.mark.parametrize("name", ["staff_errors.xls", "staff_errors.ods"])
def test_a_cell_showing_an_error_is_flagged_in_chunks_as_in_a_whole_read(tmp_path: Path, name: str) -> None:
    """LibreOffice's save of a lookup that found nothing (tests/fixtures/SOURCES.md): the error cells of an
    XLS or ODS are found by what reads the whole file, and each chunk's rows keep theirs."""
    config = load_config(write_config(tmp_path / "staff.toml", extra='\n[staff.defaults]\ncountry = "SG"\n'))
    for chunk_rows in (None, 1):
        rows = import_file(config, FIXTURES / name, validate_only=True, chunk_rows=chunk_rows).result.rows
        assert [(r.row, r.outcome, [(p.code, p.column, p.value) for p in r.problems]) for r in rows] == [
            (2, "valid", []),
            (3, "invalid", [("error-value", "Country", "#N/A"), ("error-value", "Cost Centre", "#DIV/0!")])]


def test_a_late_row_that_proves_the_other_date_order_stops_the_file_as_a_whole_read_does(tmp_path: Path) -> None:
    rows = varied_rows()
    rows[44]["Hire Date"] = "03/25/2021"  # month-first, and nothing in the file proves day-first
    source = write_csv(tmp_path / "staff.csv", rows)
    config = load_config(write_config(tmp_path / "staff.toml", date_order=None))
    for chunk_rows in (None, 5):
        with pytest.raises(InputFileError) as stopped:
            import_file(config, source, validate_only=True, chunk_rows=chunk_rows)
        assert str(stopped.value) == (
            "staff.csv: column 'Hire Date' holds month-first dates ('03/25/2021') but dates are read "
            "day-first unless the config's date_order says otherwise; set date_order = \"month-first\" in "
            "[source] if the whole column is month-first, or correct those dates")


def test_a_column_proving_both_orders_in_different_chunks_flags_the_cells_not_the_file(tmp_path: Path) -> None:
    rows = varied_rows()
    rows[1]["Hire Date"] = "03/25/2021"  # month-first, early; day-first is proven by row 46, late
    config = load_config(write_config(tmp_path / "staff.toml", date_order="day-first"))
    source = write_csv(tmp_path / "staff.csv", rows)
    whole = import_file(config, source, validate_only=True).result
    chunked = import_file(config, source, validate_only=True, chunk_rows=3).result
    assert list(chunked.rows) == list(whole.rows)
    mismatch = next(r for r in chunked.rows if r.row == 3)
    assert [p.code for p in mismatch.problems] == ["date-order-mismatch"]
    assert "(as the config's date_order says)" in mismatch.problems[0].message


def test_without_a_date_order_both_orders_in_different_chunks_stop_the_file_as_a_whole_read_does(
        tmp_path: Path) -> None:
    rows = varied_rows()
    rows[1]["Hire Date"] = "03/25/2021"
    config = load_config(write_config(tmp_path / "staff.toml", date_order=None))
    source = write_csv(tmp_path / "staff.csv", rows)
    refusals = []
    for chunk_rows in (None, 3):
        with pytest.raises(InputFileError) as refused:
            import_file(config, source, validate_only=True, **({"chunk_rows": chunk_rows} if chunk_rows else {}))
        refusals.append(str(refused.value))
    assert refusals[0] == refusals[1] == (
        "staff.csv: column 'Hire Date' holds day-first dates ('25/03/2021') and month-first dates ('03/25/2021'); "
        'set date_order = "day-first" or "month-first" in [source] to the order your HR system writes, and the '
        "dates that do not fit it are held back on their rows")


def test_a_to_fix_file_of_a_chunked_run_keeps_every_original_cell(tmp_path: Path, streamed: bool) -> None:
    config = write_config(tmp_path / "staff.toml", date_order=None)
    source = write_csv(tmp_path / "staff.csv", varied_rows())
    folder = run_dry(tmp_path, source, config, 2, "chunked")
    with open(folder / "to_fix.csv", encoding="utf-8-sig", newline="") as fh:
        fixed = list(csv.DictReader(fh))
    assert [r["Employee ID"] for r in fixed] == ["000050", "000012", "000033", "000050"]
    assert fixed[1]["Hire Date"] == "01/02/20"


@pytest.mark.parametrize("late", ["ragged", "not-utf8", "blank-tail", "nul"])
def test_a_streamed_file_that_needs_the_whole_read_after_all_is_read_whole(tmp_path: Path, late: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """What only a whole read handles, found after chunks were already read: a row with a cell too many, a
    byte that is not UTF-8, blank lines at the end. The import starts again from a whole read: the rows
    come out as a whole read gives them, once each. A zero byte the chunk flags itself."""
    rows = varied_rows()
    source = write_csv(tmp_path / "staff.csv", rows)
    data = source.read_bytes()
    if late == "ragged":
        data = data.replace(b"Person 58,", b"Person 58,extra,", 1)
    elif late == "not-utf8":  # UTF-8 but for one byte of another encoding, late in the file
        for n in (3, 4, 7):
            data = data.replace(f"Person {n},".encode(), f"Zoë {n},".encode())
        data = data.replace(b"Person 58", "Zoë 58".encode("cp1252"))
    elif late == "blank-tail":
        data += b"\r\n\r\n"
    else:  # a zero byte: text to pyarrow, a cell to flag to us, in whichever chunk it comes
        data = data.replace(b"Person 58", b"Person\x0058")
    source.write_bytes(data)
    config = load_config(write_config(tmp_path / "staff.toml", date_order=None))
    whole = import_file(config, source, validate_only=True).result
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    chunked = import_file(config, source, validate_only=True, chunk_rows=5).result
    assert list(chunked.rows) == list(whole.rows)
    assert chunked.info.source == whole.info.source
    row = next(r for r in chunked.rows if r.row == 59)
    assert row.name == {"ragged": "Person 58", "not-utf8": "Zo\ufffd 58", "blank-tail": "Person 58",
                        "nul": "Person\x0058"}[late]
    assert [p.code for p in row.problems][:1] == {"ragged": ["extra-cells"], "not-utf8": ["bad-encoding"],
                                                  "blank-tail": [], "nul": ["bad-encoding"]}[late]


def test_a_spanish_h_and_m_in_different_chunks_are_left_as_written_as_a_whole_read_leaves_them(
        tmp_path: Path, streamed: bool) -> None:
    """Spanish forms write Hombre/Mujer as H/M. A whole read of a column holding both leaves both as written
    (M could be Male or Mujer): a file sorted by gender, whose first chunks hold only H, must not have its
    later M read as Male."""
    rows = varied_rows()
    for n, row in enumerate(rows):
        row["Gender"] = "H" if n < 40 else "M"
    config = load_config(write_config(tmp_path / "staff.toml", date_order=None))
    source = write_csv(tmp_path / "staff.csv", rows)
    whole = import_file(config, source, validate_only=True).result
    chunked = import_file(config, source, validate_only=True, chunk_rows=7).result

    assert list(chunked.rows) == list(whole.rows)
    assert chunked.info.values_read == whole.info.values_read
    late = next(r for r in chunked.rows if r.row == 50)
    assert [(p.code, p.field) for p in late.problems] == [("not-an-allowed-value", "gender")]


def test_values_past_the_memo_of_values_met_are_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each chunk's dates, countries and yes/no words are converted once and remembered for the next chunks,
    up to ``MEMO_VALUES`` values a column: a column with more (free text in a date column) is read the
    same, only more slowly."""
    config = load_config(write_config(tmp_path / "staff.toml", date_order=None))
    source = write_csv(tmp_path / "staff.csv", varied_rows())
    whole = import_file(config, source, validate_only=True).result
    for module in (values, dates, normalize):
        monkeypatch.setattr(module, "MEMO_VALUES", 3)
    chunked = import_file(config, source, validate_only=True, chunk_rows=4).result
    assert list(chunked.rows) == list(whole.rows)
    assert chunked.info.values_read == whole.info.values_read


def write_staff_workbook(path: Path, rows: list[dict[str, str]], *, inline_strings: bool,
                         late_extra: bool = False, first_column: int = 0) -> Path:
    """``rows`` as an export from an HR system's Excel writer, with what a real workbook holds: a title and
    a run date above the header (on row 4), ids as numbers shown through ``000000``, date cells, a
    formula with its result (``as_calculated``), TRUE cells and a text cell reading "true", a number
    fastexcel would round, rows left out and a row of spaces in the middle, and a tail of blank cells under
    the table. ``inline_strings``:
    xlsxwriter's constant_memory mode (strings in the cells, as big exports are written) rather than a
    shared strings table (as Excel writes). ``late_extra``: a value far right of the header, late.
    ``first_column``: the table's first column (0: A)."""
    import xlsxwriter  # the tests' real writer of workbooks

    book = xlsxwriter.Workbook(str(path), {"constant_memory": inline_strings})
    sheet = book.add_worksheet("Staff")
    padded, date = book.add_format({"num_format": "000000"}), book.add_format({"num_format": "dd/mm/yyyy"})
    left = first_column
    sheet.write_string(0, left, "Staff export")
    sheet.write_string(1, left, "Run date: 2026-11-01")
    sheet.write_row(3, left, HEADER)
    at = 4
    for n, row in enumerate(rows):
        if n in (10, 30):
            at += 2  # rows the writer leaves out: blank rows in Excel
        if n == 20:
            sheet.write_row(at, left, ["  "] * 3)  # a row of spaces: blank
            at += 1
        for c, header in enumerate(HEADER, start=left):
            value = row[header]
            if header == "Employee ID" and n % 3 == 0:
                sheet.write_number(at, c, int(value), padded)
            elif header == "Hire Date" and n % 4 == 1 and len(value) == 10:
                day, month, year = (int(part) for part in value.split("/"))
                sheet.write_datetime(at, c, dt.datetime(year, month, day), date)
            elif header == "Cost Centre" and n % 5 == 0:
                sheet.write_formula(at, c, '="CC-"&"1"', None, "CC-1")
            elif header == "Shoe Size":
                sheet.write_number(at, c, 1.0000000001 if n == 17 else 38)
            elif header == "Is Manager" and n % 6 == 0:
                sheet.write_boolean(at, c, True)
            elif header == "Is Manager" and n == 13:
                sheet.write_string(at, c, "true")
            elif value:
                sheet.write_string(at, c, value)
        if late_extra and n == len(rows) - 5:
            sheet.write_string(at, left + len(HEADER) + 2, "a note nobody named")
        at += 1
    for tail in range(at, at + 12):
        sheet.write_row(tail, left, [" "] * 4)
    book.close()
    return as_calculated(path)


@pytest.mark.parametrize(("chunk_rows", "piece_rows", "inline_strings", "first_column"), [
    (1, 1, False, 0), (7, 3, False, 0), (50, 4, False, 0), (1, 1, True, 0), (7, 3, True, 0), (50, 4, True, 0),
    (7, 3, False, 2),  # the table from column C
])
def test_a_workbook_read_in_chunks_reports_exactly_what_a_whole_read_reports(
        tmp_path: Path, chunk_rows: int, piece_rows: int, inline_strings: bool, first_column: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A big workbook is read a piece of its sheet at a time (``xlsx_stream``): these small ones are too,
    by the thresholds going down, and every report is what the whole read gives."""
    config = write_config(tmp_path / "staff.toml", date_order=None)
    source = write_staff_workbook(tmp_path / "staff.xlsx", varied_rows(), inline_strings=inline_strings,
                                  first_column=first_column)
    with pytest.MonkeyPatch.context() as whole_read:
        whole_read.setattr(reader, "STREAM_BYTES", 1 << 40)
        whole = run_dry(tmp_path, source, config, None, "whole")
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    monkeypatch.setattr(xlsx_stream, "PIECE_ROWS", piece_rows)
    monkeypatch.setattr(xlsx_pieces, "SHARED_STRINGS_SHARE", 0)  # pieces that small, shared strings or not
    chunks, streamed = reader.read_spreadsheet_chunks(source, chunk_rows=chunk_rows,
                                                      expected_headers=["Employee ID", "Name"])
    assert streamed
    # cut where the whole read's table is cut: chunk_rows rows each, the rest last
    assert [len(chunk.frame) for chunk in chunks] == [chunk_rows] * (60 // chunk_rows) + [60 % chunk_rows] * bool(
        60 % chunk_rows)
    chunked = run_dry(tmp_path, source, config, chunk_rows, "chunked")
    assert_same_reports(whole, chunked)

    run = outcomes(chunked)[0]
    assert run["source"]["header_row"] == 4
    rows = {r["row"]: r for r in outcomes(chunked) if r["record"] == "row"}
    assert rows[5]["external_id"] == "000001"  # a number shown through 000000, on the first data row
    assert rows[5 + 60 + 4]["external_id"] == "000060"  # the last row: two gaps and a row of spaces above
    kinds = {c["kind"] for c in run["values_read"]}
    assert {"number-format", "excel-date-cell", "formula-value"} <= kinds


def validated_whole_and_streamed(config: ImportConfig, source: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> tuple[RunResult, RunResult]:
    """``staff validate`` of a small workbook read whole, then streamed in pieces of 3 rows cut in chunks of 2
    (the thresholds going down, as for a big one)."""
    with pytest.MonkeyPatch.context() as whole_read:
        whole_read.setattr(reader, "STREAM_BYTES", 1 << 40)
        whole = import_file(config, source, validate_only=True).result
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    monkeypatch.setattr(xlsx_stream, "PIECE_ROWS", 3)
    assert reader.read_spreadsheet_chunks(source, chunk_rows=2, expected_headers=HEADER)[1]  # streamed
    return whole, import_file(config, source, validate_only=True, chunk_rows=2).result


def test_formulas_saved_without_their_results_are_flagged_in_a_streamed_read_as_in_a_whole_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """openpyxl writes formulas without calculating them: in pieces of 3 rows past the 31 the header is
    looked for in, cut in chunks of 2, each such cell in a column sent is still flagged on its own row."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Staff"
    sheet.append(HEADER)
    for n in range(1, 41):
        row = person(n)
        if n in (4, 37):
            row.update({"Country": '=IF(1,"MY","SG")', "Shoe Size": "=37+1"})
        if n == 37:
            row["Cost Centre"] = '="CC-"&"2"'
        sheet.append([row[h] for h in HEADER])
    source = tmp_path / "staff.xlsx"
    book.save(source)
    config = load_config(write_config(tmp_path / "staff.toml", extra='\n[staff.defaults]\ncountry = "SG"\n'))
    whole, chunked = validated_whole_and_streamed(config, source, monkeypatch)

    flagged = [(r.row, [(p.code, p.column, p.value) for p in r.problems]) for r in chunked.rows if r.problems]
    assert flagged == [(5, [("formula-not-calculated", "Country", '=IF(1,"MY","SG")')]),
                       (38, [("formula-not-calculated", "Country", '=IF(1,"MY","SG")'),
                             ("formula-not-calculated", "Cost Centre", '="CC-"&"2"')])]
    assert list(chunked.rows) == list(whole.rows)


def test_formulas_saved_with_stand_ins_for_their_results_are_flagged_in_a_streamed_read_as_in_a_whole_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """xlsxwriter saves 0 with each formula and asks for them to be calculated when the file is opened: in
    pieces of 3 rows, cut in chunks of 2, each such cell in a column sent is flagged on its own row, whatever
    value was saved with it; the formulas of a column not sent flag nothing."""
    import xlsxwriter  # the tests' real writer of workbooks

    source = tmp_path / "staff.xlsx"
    book = xlsxwriter.Workbook(str(source))
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    for n in range(1, 41):
        sheet.write_row(n, 0, [person(n)[h] for h in HEADER])
        sheet.write_formula(n, HEADER.index("Shoe Size"), "=37+1")
    sheet.write_formula(4, HEADER.index("Cost Centre"), '="CC-"&"4"')
    sheet.write_formula(37, HEADER.index("Cost Centre"), "=1+1", None, 2)
    sheet.write_formula(37, HEADER.index("Country"), '=IF(1,"MY","SG")', None, "MY")
    book.close()
    config = load_config(write_config(tmp_path / "staff.toml"))
    whole, chunked = validated_whole_and_streamed(config, source, monkeypatch)

    flagged = [(r.row, [(p.code, p.column, p.value) for p in r.problems]) for r in chunked.rows if r.problems]
    assert flagged == [(5, [("formula-not-calculated", "Cost Centre", '="CC-"&"4"')]),
                       (38, [("formula-not-calculated", "Country", '=IF(1,"MY","SG")'),
                             ("formula-not-calculated", "Cost Centre", "=1+1")])]
    assert list(chunked.rows) == list(whole.rows)


def test_numbers_shown_through_a_format_are_told_alike_in_a_streamed_read_and_a_whole_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Salaries shown through #,##0.00 and hours through 0%, sent as stored: in pieces of 3 rows, cut in
    chunks of 2, "How values were read" counts and shows them as the whole read does."""
    import xlsxwriter  # the tests' real writer of workbooks

    source = tmp_path / "staff.xlsx"
    book = xlsxwriter.Workbook(str(source))
    sheet = book.add_worksheet("Staff")
    money, percent = book.add_format({"num_format": "#,##0.00"}), book.add_format({"num_format": "0%"})
    sheet.write_row(0, 0, [*HEADER, "Salary", "Hours"])
    for n in range(1, 41):
        sheet.write_row(n, 0, [person(n)[h] for h in HEADER])
        sheet.write_number(n, len(HEADER), 3000 + n * 12.5, money)
        sheet.write_number(n, len(HEADER) + 1, 1 if n % 4 else 0.5, percent)
    book.close()
    config = load_config(write_config(tmp_path / "staff.toml", extra='"Salary" = "Salary"\n"Hours" = "Hours"\n'))
    whole, chunked = validated_whole_and_streamed(config, source, monkeypatch)

    assert chunked.info.values_read == whole.info.values_read
    told = [(v.field, v.rows, [(e.row, e.read, e.sent, e.rows) for e in v.examples])
            for v in chunked.info.values_read if v.kind == "number-as-stored"]
    assert told == [("Salary", 40, [(2, "3,012.50", "3012.5", 1), (3, "3,025.00", "3025", 1), (4, "3,037.50", "3037.5", 1)]),
                    ("Hours", 40, [(2, "100%", "1", 30), (5, "50%", "0.5", 10)])]


def write_shared_strings_workbook(path: Path) -> Path:
    """60 people as Excel writes them: every text in the shared strings table, with what such a table
    holds: rich text runs, a Japanese name with its phonetic guide, names with spaces kept around them
    (``xml:space="preserve"``), characters written as entities, and strings every piece uses."""
    import xlsxwriter  # the tests' real writer of workbooks

    book = xlsxwriter.Workbook(str(path))  # not constant_memory: a shared strings table
    sheet = book.add_worksheet("Staff")
    bold = book.add_format({"bold": True})
    sheet.write_row(0, 0, ["Employee ID", "Name", "Email", "Country", "Title"])
    for n in range(1, 61):
        sheet.write_string(n, 0, f"{n:06d}")
        if n % 7 == 0:
            sheet.write_rich_string(n, 1, "Ann ", bold, f"Lee {n}", " Jr")
        elif n % 7 == 1:
            sheet.write_string(n, 1, f"  Spaced {n} ")
        elif n % 7 == 2:
            sheet.write_string(n, 1, f"O'Brien & <Sons> \"{n}\"")
        else:
            sheet.write_string(n, 1, f"Person {n}")
        sheet.write_string(n, 2, f"p{n}@acme.example")
        sheet.write_string(n, 3, "東京" if n % 5 == 0 else "SG")  # in every piece
        sheet.write_string(n, 4, "Analyst")
    book.close()
    with zipfile.ZipFile(path) as original:
        parts = {name: original.read(name) for name in original.namelist()}
    table = parts["xl/sharedStrings.xml"]
    assert table.count("<si><t>東京</t></si>".encode()) == 1
    parts["xl/sharedStrings.xml"] = table.replace(  # the phonetic guide Excel keeps for a Japanese name
        "<si><t>東京</t></si>".encode(),
        '<si><t>東京</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh><phoneticPr fontId="1"/></si>'.encode())
    with zipfile.ZipFile(path, "w") as rewritten:
        for name, data in parts.items():
            rewritten.writestr(name, data)
    return path


@pytest.mark.parametrize("form", ["as Excel writes it", "a table entry without text", "cells of another form"])
def test_a_workbook_of_shared_strings_streamed_reads_every_string_as_a_whole_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    """Each piece of a streamed sheet gets a shared strings table of its own, holding only the strings its
    cells use (calamine would parse the whole table for every piece): every string reads as in the whole
    read, rich text, phonetic guide, spaces and entities included. A table or cells in a form the cutting
    does not know go whole with every piece, as before, and read the same."""
    source = write_shared_strings_workbook(tmp_path / "staff.xlsx")
    if form != "as Excel writes it":
        with zipfile.ZipFile(source) as original:
            parts = {name: original.read(name) for name in original.namelist()}
        if form == "a table entry without text":  # calamine skips it: positions would not be its indexes
            parts["xl/sharedStrings.xml"] = parts["xl/sharedStrings.xml"].replace(b"</sst>", b"<si><t/></si></sst>")
        else:  # valid XML, but not the t="s"><v> the pieces are renumbered by
            parts["xl/worksheets/sheet1.xml"] = parts["xl/worksheets/sheet1.xml"].replace(b't="s">', b't="s" >')
        with zipfile.ZipFile(source, "w") as rewritten:
            for name, data in parts.items():
                rewritten.writestr(name, data)
    whole = reader.read_spreadsheet(source, expected_headers=["Employee ID"])
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    monkeypatch.setattr(xlsx_stream, "PIECE_ROWS", 4)
    cut: list[bool] = []
    original_cut = xlsx_piece_strings.SharedStrings.cut

    def cut_and_tell(strings: xlsx_piece_strings.SharedStrings, rows: bytes) -> Any:
        result = original_cut(strings, rows)
        cut.append(result is not None)
        return result

    monkeypatch.setattr(xlsx_piece_strings.SharedStrings, "cut", cut_and_tell)
    chunks, streamed = reader.read_spreadsheet_chunks(source, chunk_rows=7, expected_headers=["Employee ID"])
    chunks = list(chunks)
    assert streamed
    assert pd.concat([c.frame for c in chunks], ignore_index=True).equals(whole.frame.reset_index(drop=True))
    assert [n for c in chunks for n in c.row_numbers] == whole.row_numbers
    names = whole.frame["Name"].tolist()
    assert names[6] == "Ann Lee 7 Jr" and names[7] == "  Spaced 8 " and names[8] == "O'Brien & <Sons> \"9\""
    assert whole.frame["Country"].tolist()[4] == "東京"  # without its phonetic guide
    # the pieces had tables of their own, or (another form) the whole table
    assert cut == {"as Excel writes it": [True] * len(cut), "cells of another form": [False] * len(cut),
                   "a table entry without text": []}[form]
    assert len(cut) > 5 or form == "a table entry without text"


def test_a_workbook_with_a_late_value_outside_the_header_is_read_whole_after_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A value in a column without a header, in a late chunk: the whole read lists that column (as
    "Column S"), which the first chunk could not know; the import reads the file whole again."""
    config = write_config(tmp_path / "staff.toml", date_order=None)
    source = write_staff_workbook(tmp_path / "staff.xlsx", varied_rows(), inline_strings=True, late_extra=True)
    with pytest.MonkeyPatch.context() as whole_read:
        whole_read.setattr(reader, "STREAM_BYTES", 1 << 40)
        whole = run_dry(tmp_path, source, config, None, "whole")
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    monkeypatch.setattr(xlsx_stream, "PIECE_ROWS", 4)
    chunks, _ = reader.read_spreadsheet_chunks(source, chunk_rows=5, expected_headers=["Employee ID"])
    with pytest.raises(reader.StreamBroken):
        list(chunks)
    chunked = run_dry(tmp_path, source, config, 5, "chunked")
    assert_same_reports(whole, chunked)
    assert "Column S" in outcomes(chunked)[0]["source"]["headers"]


def test_a_workbook_read_in_chunks_refuses_a_value_far_outside_its_table_as_a_whole_read_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pieces of such a sheet are small, but a whole read would lay out 400,000 rows: the chunked read
    refuses the file too, in the same words, before the import has its last chunk."""
    config = load_config(write_config(tmp_path / "staff.toml", date_order=None))
    source = write_staff_workbook(tmp_path / "staff.xlsx", varied_rows(), inline_strings=False)
    with zipfile.ZipFile(source) as original:  # a zero typed far away, as openpyxl or Excel would save it
        parts = {name: original.read(name) for name in original.namelist()}
    sheet = parts["xl/worksheets/sheet1.xml"]
    parts["xl/worksheets/sheet1.xml"] = sheet.replace(
        b"</sheetData>", b'<row r="400000"><c r="AD400000"><v>0</v></c></row></sheetData>')
    with zipfile.ZipFile(source, "w") as rewritten:
        for name, data in parts.items():
            rewritten.writestr(name, data)
    with pytest.raises(InputFileError) as whole:
        import_file(config, source, validate_only=True)
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    monkeypatch.setattr(xlsx_stream, "PIECE_ROWS", 4)
    with pytest.raises(InputFileError) as chunked:  # as soon as the sheet's extent is known
        import_file(config, source, validate_only=True, chunk_rows=5)
    assert str(chunked.value) == str(whole.value)
    assert "has cells far outside its table (at AD400000)" in str(whole.value)


def test_a_workbook_with_a_long_blank_tail_read_in_chunks_reports_what_a_whole_read_reports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A column "cleared" far below the table: the whole read cuts the blank rows off before reading;
    the chunked read stops there too once the sheet's extent is known, and drops what it read of them."""
    import xlsxwriter  # the tests' real writer of workbooks

    config = write_config(tmp_path / "staff.toml", date_order=None)
    source = tmp_path / "staff.xlsx"
    book = xlsxwriter.Workbook(str(source), {"constant_memory": True})
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    rows = varied_rows()
    for r, row in enumerate(rows, start=1):
        sheet.write_row(r, 0, [row[h] for h in HEADER])
    for r in range(len(rows) + 1, 300_000):
        sheet.write_string(r, 3, " ")  # 300,000 rows x 4 columns: a grid of 1,200,000 cells for 60 rows
    book.close()
    with pytest.MonkeyPatch.context() as whole_read:
        whole_read.setattr(reader, "STREAM_BYTES", 1 << 40)
        whole = run_dry(tmp_path, source, config, None, "whole")
    monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    chunks, streamed = reader.read_spreadsheet_chunks(source, chunk_rows=25, expected_headers=["Employee ID"])
    assert streamed
    assert [len(chunk.frame) for chunk in chunks] == [25, 25, 10]
    assert_same_reports(whole, run_dry(tmp_path, source, config, 25, "chunked"))


def test_an_import_in_chunks_sends_no_gender_it_guessed_from_h_and_m(tmp_path: Path, sandbox: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox receives the rows a whole read would send, with the values it would send: the F rows as
    Female, and none of the H or M rows (left as written, so invalid), however the file is cut."""
    monkeypatch.setenv("HRIMPORT_TOKEN", "demo-customer-99")
    rows = varied_rows()
    for n, row in enumerate(rows):
        row["Gender"] = "H" if n < 30 else "M" if n < 50 else "F"
    config = load_config(write_config(tmp_path / "staff.toml", date_order=None))
    source = write_csv(tmp_path / "staff.csv", rows)
    run = import_file(config, source, base_url=sandbox.base_url, report_folder=tmp_path / "report", chunk_rows=7)

    stored = {s["customer_system_id"]: s["gender"] for s in sandbox.staff(99)}
    assert stored == {f"{n:06d}": "Female" for n in range(51, 61)}
    assert run.result.counts()["added"] == 10


def test_an_import_in_chunks_sends_stores_and_reports_what_a_whole_read_does(
        tmp_path: Path, start_sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two months imported into two fresh sandboxes, the file read whole into one and streamed in chunks of 7
    into the other: the platform receives the same requests, byte for byte, and stores the same people, and
    HR reads the same reports. The months hold what a chunk must not change: rows invalid only in the light
    of the whole file, rows the platform refuses (their batch split and sent again), and a second month with
    people unchanged (not sent again), changed, new and gone."""
    monkeypatch.setenv("HRIMPORT_TOKEN", "demo-customer-99")
    first = varied_rows()
    for n, row in enumerate(first):
        row["Shoe Size"] = "38" if n in (8, 23, 40) else ""  # not a data type of customer 99: refused
    second = [dict(row) for row in first if row["Employee ID"] not in ("000017", "000060")]  # two gone
    second[9]["Title"] = "Team Lead"
    second[30]["Email"] = "person32@acme-group.example"
    second.append(person(61, **{"Shoe Size": ""}))

    def months(name: str, chunk_rows: int | None) -> tuple[Any, list[Path]]:
        folder = tmp_path / name
        folder.mkdir()
        server = start_sandbox(folder / "sandbox.db")
        config_path = write_config(folder / "staff.toml", date_order=None)  # its state folder beside it
        config_path.write_text(config_path.read_text(encoding="utf-8").replace(
            '"Cost Centre" = "Cost Center"', '"Cost Centre" = "Cost Center"\n"Shoe Size" = "Shoe Size"'),
            encoding="utf-8")
        config = load_config(config_path)
        reports = []
        for month, rows in (("first", first), ("second", second)):
            source = write_csv(tmp_path / f"{month}.csv", rows)  # one file, read both ways
            reports.append(folder / month)
            with pytest.MonkeyPatch.context() as reading:
                reading.setattr(reader, "STREAM_BYTES", 1 << 40 if chunk_rows is None else 0)
                run = import_file(config, source, base_url=server.base_url, report_folder=reports[-1],
                                  chunk_rows=chunk_rows, batch_size=8, skip_unchanged=True)
            assert run.report is not None
            for path in reports[-1].iterdir():  # the two sandboxes answer on two ports: the one thing that differs
                if path.suffix in (".jsonl", ".json", ".csv", ".html"):
                    text = path.read_text(encoding="utf-8").replace(server.base_url, "BASE")
                    text = MOMENT.sub("WHEN", text.replace(f"127.0.0.1:{server.port}", "HOST"))
                    path.write_text(text, encoding="utf-8")
        return server, reports

    whole_server, whole = months("whole", None)
    chunked_server, chunked = months("chunked", 7)

    assert chunked_server.bodies == whole_server.bodies
    assert [(r["path"], r["status"], r["elements"]) for r in chunked_server.requests()] == [
        (r["path"], r["status"], r["elements"]) for r in whole_server.requests()]
    assert stored_people(chunked_server) == stored_people(whole_server)
    # each batch holding a refused row was refused whole first, then sent again without it; the first row named
    # also went alone, refused again as element 0, which showed how the service numbers them (tests/test_submit.py)
    assert [r["status"] for r in chunked_server.requests()].count(400) == 5
    for month_whole, month_chunked in zip(whole, chunked):
        assert_same_reports(month_whole, month_chunked)

    # what each month did, so that two runs alike in doing nothing could not pass
    firsts = {r["row"]: r["outcome"] for r in outcomes(chunked[0]) if r["record"] == "row"}
    assert [firsts[row] for row in (6, 10, 13, 21, 25, 34, 42, 51)] == [
        "invalid", "rejected", "invalid", "added", "rejected", "invalid", "rejected", "invalid"]
    assert list(firsts.values()).count("added") == 53
    seconds = {r["row"]: r["outcome"] for r in outcomes(chunked[1]) if r["record"] == "row"}
    assert (seconds[11], seconds[32], seconds[60]) == ("updated", "updated", "added")
    assert list(seconds.values()).count("unchanged") == 49  # the doubted e-mail's row too
    stored = {s["customer_system_id"]: s for s in stored_people(chunked_server)}
    assert stored["000010"]["job_title"] == "Team Lead" and stored["000061"]["name"] == "Person 61"


def stored_people(server: Any) -> list[dict[str, Any]]:
    """What the sandbox stores of customer 99's people, without the clock (when each was stored)."""
    return [{k: v for k, v in person.items() if k not in ("created_at", "updated_at")} for person in server.staff(99)]
