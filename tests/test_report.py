"""The reporter: what HR staff receive after an import (issue 4).

Each test writes a real report from a ``RunResult`` built like the stages build them
(``tests/report_samples.py``) and reads the files back the way people and programs will.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import stat
import subprocess
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import asdict, replace
from datetime import datetime
from pathlib import Path
from typing import overload

import openpyxl
import pytest
from markupsafe import escape

from hrimport.outcomes import (
    Outcome,
    OutcomeJournal,
    OutcomeRows,
    Problem,
    RowOutcome,
    RunResult,
    read_outcomes,
    write_outcomes,
)
from hrimport.report import ReportFiles, default_report_folder, explain, write_report
from hrimport.report import writer as report_writer
from hrimport.report.cells import mask_value
from hrimport.report.digest import digest_rows
from hrimport.report.excel import write_report_xlsx
from hrimport.report.explain import known_codes
from hrimport.report.history import run_order
from hrimport.report.html import write_html
from hrimport.report.view import RowMasking
from hrimport.report.writer import new_report_folder
from hrimport.to_fix_format import csv_safe, restore_csv_cell
from tests.report_samples import FORMULA, HEADERS, PASSPORT, TOKEN, XSS_NAME, sample_result


@pytest.fixture
def report(tmp_path: Path) -> ReportFiles:
    return write_report(sample_result(), tmp_path / "reports" / "monthly-staff" / "2024-05-01_090000")


def _all_text(path: Path) -> str:
    """Every byte of a report file as text; xlsx members unzipped, since their XML is compressed."""
    if path.suffix == ".xlsx":
        with zipfile.ZipFile(path) as zf:
            return "".join(zf.read(n).decode("utf-8", "replace") for n in zf.namelist())
    return path.read_text(encoding="utf-8-sig")


def _sheet_rows(path: Path, sheet: str) -> list[list[str | int | float | None]]:
    wb = openpyxl.load_workbook(path)
    return [list(r) for r in wb[sheet].iter_rows(values_only=True)]


# --- the folder ---------------------------------------------------------------------------------------------


def test_every_file_is_written_readable_by_the_owner_only(report: ReportFiles) -> None:
    names = sorted(p.name for p in report.folder.iterdir())
    assert names == ["outcomes.jsonl", "report.html", "report.xlsx", "summary.json", "to_fix.xlsx"]
    assert stat.S_IMODE(report.folder.stat().st_mode) == 0o700
    for path in report.folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name


def test_old_files_and_folders_become_private_when_written_again(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o755)
    (folder / "report.html").write_text("OLD-CONTENT-1")
    (folder / "report.html").chmod(0o644)
    files = write_report(sample_result(), folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(files.html.stat().st_mode) == 0o600
    assert "OLD-CONTENT-1" not in files.html.read_text()


def test_default_report_folder_is_job_then_start_time() -> None:
    assert default_report_folder(Path("reports"), "monthly-staff", "2024-05-01T09:00:00+02:00") == Path(
        "reports/monthly-staff/2024-05-01_090000"
    )
    assert default_report_folder(Path("r"), "../etc/x y", "2024-05-01T09:00:00").parent == Path("r/etc-x-y")


def test_imports_started_in_the_same_second_never_share_a_report_folder(tmp_path: Path) -> None:
    second = datetime(2024, 5, 1, 9, 0, 0)
    folders = [new_report_folder(tmp_path, "staff", second) for _ in range(3)]
    assert [f.name for f in folders] == ["2024-05-01_090000", "2024-05-01_090000-2", "2024-05-01_090000-3"]
    assert sorted(folders, key=run_order) == folders
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o700 for f in folders)


# --- summary.json -------------------------------------------------------------------------------------------


def test_summary_counts_add_up_to_the_rows_read(report: ReportFiles) -> None:
    summary = json.loads(report.summary.read_text())
    assert summary["rows_read"] == 10 == sum(summary["counts"].values())
    assert summary["imported"] + summary["need_attention"] == summary["rows_read"]
    assert summary["imported"] == 4
    assert summary["counts"]["invalid"] == 3
    assert summary["exit_code"] == 1
    assert summary["verdict"] == "4 of 10 rows imported; 6 need attention"
    assert summary["problems"]["not-a-date"] == 1
    assert summary["source"]["sha256"].startswith("3f5a0c1e")
    assert summary["service_host"] == "sandbox.example.com:8443"
    assert summary["timings"]["submit"] == 41.8
    assert set(summary["files"]) == {
        "report.html",
        "report.xlsx",
        "to_fix.xlsx",
        "summary.json",
        "outcomes.jsonl",
    }


# --- report.html --------------------------------------------------------------------------------------------


def test_html_shows_verdict_counts_and_run_facts(report: ReportFiles) -> None:
    page = report.html.read_text()
    assert "4 of 10 rows imported; 6 need attention." in page
    for fact in (
        "staff_export.xlsx",
        "Staff",
        "48.2 kB",
        "3f5a0c1e9b7d2a4c",
        "sandbox.example.com:8443",
        "CUST-0042",
        "hrimport 0.1.0",
        "Shoe size",
        "42.4 s",
        "2024-05-01 09:00:00",
    ):
        assert fact in page, fact
    assert "<svg" in page and 'aria-label="Rows per outcome: Added 2, Updated 1' in page


def test_html_lists_each_row_needing_attention_under_its_code_with_how_to_fix(report: ReportFiles) -> None:
    page = report.html.read_text()
    result = sample_result()
    for row in result.need_attention:
        assert f'<tr class="problem-row" data-row="{row.row}">' in page
    for code in (
        "not-a-date",
        "unknown-country",
        "not-an-email",
        "not-an-allowed-value",
        "service-rejected",
        "http-503",
        "permission-denied",
    ):
        group = re.search(rf'<div class="card group" id="code-{code}".*?</table>', page, re.DOTALL)
        assert group, code
        assert str(escape(explain(code).fix)) in group.group(0)
    # a row with two problems shows under both codes
    assert page.count('data-row="7"') == 2


def test_html_escapes_everything_from_the_spreadsheet(report: ReportFiles) -> None:
    page = report.html.read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert XSS_NAME not in page
    assert page.count("<script") == 1  # the page's own filter script only


def test_html_is_self_contained(report: ReportFiles) -> None:
    page = report.html.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page  # the CSP forbids loading anything, should a value ever get through
    assert "@media print" in page


def test_html_row_list_stops_at_the_limit_but_lists_every_row_needing_attention(tmp_path: Path) -> None:
    files = write_report(sample_result(html_row_limit=3), tmp_path / "r")
    page = files.html.read_text()
    all_rows = re.search(r'<table id="all-rows">.*?</table>', page, re.DOTALL)
    assert all_rows and all_rows.group(0).count("<tr data-outcome=") == 3
    assert "This page lists the first 3 of 10 rows" in page
    assert "the other 7 are in <b>report.xlsx</b>" in page
    assert page.count('class="problem-row"') == 7  # six rows, one of them under two codes


def test_html_row_limit_0_lists_no_row_and_says_they_are_all_in_report_xlsx(tmp_path: Path) -> None:
    page = write_report(sample_result(html_row_limit=0), tmp_path / "r").html.read_text()
    assert '<table id="all-rows">' not in page
    assert "This page lists the first 0 of 10 rows" in page and "the other 10 are in <b>report.xlsx</b>" in page
    assert "No data rows were read" not in page  # ten were
    assert page.count('class="problem-row"') == 7  # the rows needing attention are still listed


class _RowsInAFile(OutcomeRows):
    """A run's rows as a file-backed sequence would give them: iterated, counted and sliced, each walk a read
    of the whole file; never looked up by position."""

    def __init__(self, rows: Iterable[RowOutcome]) -> None:
        super().__init__(rows)
        self.walks = 0

    def __iter__(self) -> Iterator[RowOutcome]:
        self.walks += 1
        return super().__iter__()

    @overload
    def __getitem__(self, index: int) -> RowOutcome: ...
    @overload
    def __getitem__(self, index: slice) -> list[RowOutcome]: ...
    def __getitem__(self, index: int | slice) -> RowOutcome | list[RowOutcome]:
        if isinstance(index, slice):
            return super().__getitem__(index)
        raise AssertionError("a report looked a row up by position")


def test_each_report_file_reads_the_rows_once_and_writes_what_a_list_gives(tmp_path: Path) -> None:
    rows = _RowsInAFile(sample_result(html_row_limit=3).rows)
    result = RunResult(sample_result(html_row_limit=3).info, rows)
    digest = digest_rows(result)
    masking = RowMasking(result, digest)
    for write, name in ((write_html, "report.html"), (write_report_xlsx, "report.xlsx")):
        rows.walks = 0
        write(result, tmp_path / name, masking=masking, digest=digest)
        assert rows.walks == 1, name
    rows.walks = 0
    write_outcomes(tmp_path / "outcomes.jsonl", result)
    assert rows.walks == 1
    from_file = write_report(result, tmp_path / "from-file")
    from_list = write_report(sample_result(html_row_limit=3), tmp_path / "from-list")
    assert from_file.html.read_bytes() == from_list.html.read_bytes()
    for sheet in ("Summary", "Rows", "Problems"):
        assert _sheet_rows(from_file.xlsx, sheet) == _sheet_rows(from_list.xlsx, sheet)


def test_html_of_an_empty_run_says_so(tmp_path: Path) -> None:
    result = sample_result()
    files = write_report(RunResult(result.info, []), tmp_path / "r")
    page = files.html.read_text()
    assert "No data rows were found in the file." in page
    assert files.to_fix is None


# --- masking ------------------------------------------------------------------------------------------------


def test_passport_numbers_are_masked_in_html_and_report_xlsx_but_kept_in_to_fix(report: ReportFiles) -> None:
    assert mask_value(PASSPORT) == "•••••5678"
    assert PASSPORT not in _all_text(report.html)
    assert "•••••5678" in report.html.read_text()
    assert PASSPORT not in _all_text(report.xlsx)
    problems = _sheet_rows(report.xlsx, "Problems")
    assert ["•••••5678"] == [r[3] for r in problems if r[4] == "not-an-allowed-value"]
    assert report.to_fix is not None
    assert PASSPORT in [r[6] for r in _sheet_rows(report.to_fix, "Staff")]


# --- report.xlsx --------------------------------------------------------------------------------------------


def test_report_xlsx_has_summary_rows_problems_and_values_sheets(report: ReportFiles) -> None:
    wb = openpyxl.load_workbook(report.xlsx)
    assert wb.sheetnames == ["Summary", "Rows", "Problems", "Values"]
    summary = [c for row in wb["Summary"].iter_rows(values_only=True) for c in row if c is not None]
    assert "4 of 10 rows imported; 6 need attention." in summary
    assert "CUST-0042" in summary

    rows = wb["Rows"]
    header = [c.value for c in rows[1]]
    assert header[:6] == ["Row", "External id", "Name", "Outcome", "Problem codes", "Message"]
    assert "Department" in header
    assert rows.max_row == 11  # header + every source row
    assert rows.freeze_panes == "A2"
    assert rows.auto_filter.ref == f"A1:{openpyxl.utils.get_column_letter(len(header))}11"
    by_row = {r[0]: r for r in rows.iter_rows(min_row=2, values_only=True)}
    assert by_row[7][3:5] == ("Invalid", "not-a-date, unknown-country")
    assert by_row[12][5] == "The import account may not change staff in department Finance"
    # outcome cells coloured, one colour per outcome
    fills = {rows.cell(r, 4).value: rows.cell(r, 4).fill.fgColor.rgb for r in range(2, 12)}
    assert fills["Added"] == "FFDCF2E3" and fills["Failed"] == "FFF9D7D9"
    assert len(set(fills.values())) == len(fills)
    assert rows.column_dimensions["C"].width > len("Rosalind Franklin")

    problems = wb["Problems"]
    assert [c.value for c in problems[1]] == ["Row", "External id", "Column", "Value", "Code", "Message", "Severity"]
    assert problems.max_row - 1 == sum(len(r.problems) for r in sample_result().rows)
    assert problems.freeze_panes == "A2"


def test_formulas_from_the_spreadsheet_are_never_evaluated(report: ReportFiles) -> None:
    assert report.to_fix is not None
    for path, sheet in ((report.xlsx, "Problems"), (report.to_fix, "Staff")):
        wb = openpyxl.load_workbook(path)
        cells = [c for row in wb[sheet].iter_rows() for c in row if c.value == FORMULA]
        assert cells, path.name
        for cell in cells:
            assert cell.data_type == "s"  # a string cell, not a formula: the exact text, for re-import
            assert cell.quotePrefix  # and Excel keeps it text even when someone edits the cell
    assert "<f>" not in _all_text(report.xlsx) and "<f>" not in _all_text(report.to_fix)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+44 20 7946 0958", "'+44 20 7946 0958"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-12", "-12"),
        ("+3.5", "+3.5"),
        ("Ada", "Ada"),
        ("", ""),
    ],
)
def test_csv_cells_that_could_run_as_formulas_get_a_quote_that_reading_removes(
    value: str, written: str
) -> None:
    assert csv_safe(value) == written
    assert restore_csv_cell(written) == value


# --- to_fix -------------------------------------------------------------------------------------------------


def test_to_fix_xlsx_repeats_the_source_layout_with_only_rows_not_imported(report: ReportFiles) -> None:
    assert report.to_fix is not None and report.to_fix.name == "to_fix.xlsx"
    wb = openpyxl.load_workbook(report.to_fix)
    assert wb.sheetnames == ["Staff"]
    rows = _sheet_rows(report.to_fix, "Staff")
    assert rows[0][0] == "HRIS export: all staff"
    assert rows[1][0] == "Generated 2024-05-01 08:55"
    assert rows[2] == [*HEADERS, "Problem"]  # the header on the source's own header row (3)
    data = rows[3:]
    expected = sample_result().need_attention
    assert [r[0] for r in data] == [r.external_id for r in expected]
    for written, outcome in zip(data, expected, strict=True):
        assert outcome.source is not None
        assert [v or "" for v in written[:-1]] == [outcome.source[h] for h in HEADERS]
        assert written[-1]
    assert (
        data[0][-1]
        == "Original row 7: Start date '31/02/2024' is not a date; Country 'Atlantis' is not a country code"
    )
    assert data[5][-1] == "Original row 12: The import account may not change staff in department Finance"
    assert wb["Staff"].freeze_panes == "A4"


def test_to_fix_from_the_kept_cells_marks_each_bad_cell_red_with_its_problem(report: ReportFiles) -> None:
    # the sample's export is not on this machine: to_fix is written from the cells the run kept
    assert report.to_fix is not None
    ws = openpyxl.load_workbook(report.to_fix)["Staff"]
    comments = {c.coordinate: c.comment.text for row in ws.iter_rows() for c in row if c.comment}
    red = {c.coordinate for row in ws.iter_rows() for c in row if c.fill.fgColor.rgb == "FFFFC7CE"}
    # original row 7 (now 4): start date and country; row 8 (now 5): the e-mail; row 9 (now 6): the passport
    assert red == set(comments) == {"F4", "E4", "D5", "G6"}
    assert comments["F4"] == (
        "Start date '31/02/2024' is not a date\nHow to fix: Write the date as YYYY-MM-DD (for example "
        "2024-03-31) or use a real Excel date cell with a date format (such as yyyy-mm-dd); leave the cell empty "
        "if there is no date."
    )
    assert ws["D5"].value == FORMULA and ws["D5"].quotePrefix  # marked and still never a formula


@pytest.mark.parametrize(("fmt", "delimiter", "expected"), [("csv", ";", ";"), ("tsv", None, "\t")])
def test_to_fix_csv_keeps_the_delimiter_and_opens_in_excel_as_utf8(
    tmp_path: Path, fmt: str, delimiter: str | None, expected: str
) -> None:
    files = write_report(sample_result(fmt=fmt, delimiter=delimiter), tmp_path / "r")
    assert files.to_fix is not None and files.to_fix.name == "to_fix.xlsx"  # the file to open in Excel
    assert files.to_fix_csv is not None and files.to_fix_csv.name == "to_fix.csv"
    raw = files.to_fix_csv.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # the BOM tells Excel it is UTF-8
    with open(files.to_fix_csv, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh, delimiter=expected))
    assert rows[2] == [*HEADERS, "Problem"]
    cells = {c for row in rows for c in row}
    assert "'" + FORMULA in cells and FORMULA not in cells
    assert "-12" in cells  # a plain number needs no quote
    assert "Gödel" in cells
    restored = [[restore_csv_cell(c) for c in row] for row in rows[3:]]
    assert restored[1][3] == FORMULA


def test_a_fix_file_of_a_fix_file_has_one_problem_column(tmp_path: Path) -> None:
    result = sample_result()
    result.info.source.headers = [*HEADERS, "Problem"]
    files = write_report(result, tmp_path / "r")
    assert files.to_fix is not None
    assert _sheet_rows(files.to_fix, "Staff")[2] == [*HEADERS, "Problem"]


def test_no_fix_file_when_every_row_was_imported(tmp_path: Path) -> None:
    result = sample_result()
    done = RunResult(result.info, [r for r in result.rows if r.outcome.is_success])
    files = write_report(done, tmp_path / "r")
    assert files.to_fix is None
    assert not list(files.folder.glob("to_fix*"))
    assert "Every row was imported: nothing to fix." in files.html.read_text()
    assert json.loads(files.summary.read_text())["exit_code"] == 0


def test_a_big_fix_file_written_in_another_process_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inline = write_report(sample_result(), tmp_path / "inline")
    monkeypatch.setattr(report_writer, "PARALLEL_FIX_CELLS", 1)
    parallel = write_report(sample_result(), tmp_path / "parallel")
    assert inline.to_fix is not None and parallel.to_fix is not None
    assert _sheet_rows(parallel.to_fix, "Staff") == _sheet_rows(inline.to_fix, "Staff")
    assert stat.S_IMODE(parallel.to_fix.stat().st_mode) == 0o600
    # the rows went to the other process by a file in the run's folder, gone once it wrote them
    assert sorted(p.name for p in parallel.folder.iterdir()) == sorted(p.name for p in inline.folder.iterdir())


# --- re-rendering, the token, explanations ------------------------------------------------------------------


def test_rendering_again_from_outcomes_jsonl_gives_the_same_files(
    report: ReportFiles, tmp_path: Path
) -> None:
    saved = report.outcomes.read_bytes()
    again = write_report(read_outcomes(report.outcomes), tmp_path / "again", outcomes_path=report.outcomes)
    assert again.html.read_text() == report.html.read_text()
    assert again.summary.read_text() == report.summary.read_text()
    assert again.outcomes.read_bytes() == saved
    assert again.to_fix is not None and report.to_fix is not None
    for a, b, sheets in (
        (again.xlsx, report.xlsx, ("Summary", "Rows", "Problems")),
        (again.to_fix, report.to_fix, ("Staff",)),
    ):
        for sheet in sheets:
            assert _sheet_rows(a, sheet) == _sheet_rows(b, sheet)
    # rendering in place leaves the saved outcomes as they are
    write_report(read_outcomes(report.outcomes), report.folder, outcomes_path=report.outcomes)
    assert report.outcomes.read_bytes() == saved


def test_fast_outcomes_writer_matches_asdict(tmp_path: Path) -> None:
    result = sample_result()
    write_outcomes(tmp_path / "o.jsonl", result)
    lines = (tmp_path / "o.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines[0] == json.dumps({"record": "run", **asdict(result.info)}, ensure_ascii=False)
    assert lines[1:] == [json.dumps({"record": "row", **asdict(r)}, ensure_ascii=False) for r in result.rows]


ROWS_SENT = [  # rows as an import's sending leaves them, each line put together from its texts or encoded whole
    RowOutcome(2, "0000000", "Person 0", Outcome.ADDED, message="Add Successfully"),
    RowOutcome(3, "E\u2028\"1\"", "Zoë \\ 陈\n\x01", Outcome.UPDATED, message="Update Successfully",
               details={"plan": "changed", "changes": "job_title, country"}),
    RowOutcome(4, "E2", "", Outcome.ADDED, message='Added: the service answered "Update Successfully" because',
               details={"plan": "new", "changes": ""}),
    RowOutcome(5, "E3", "Bo", Outcome.ADDED, details={"days": 3, "plan": "new"}),  # not all text: encoded whole
    RowOutcome(6, "E4", "Cy", Outcome.ADDED, details={"tags": ["a"]}),  # unhashable
    RowOutcome(7, "E5", "Di", Outcome.UPDATED, details={"plan": "new"}, changed_values={"gender": ["G", "F", "Female"]}),
    RowOutcome(8, "E6", "Ed", Outcome.FAILED, (Problem("no-result", "Row 8: sent, but no result", row=8),), "Row 8"),
    RowOutcome(9, "E7", "Fa", Outcome.NOT_SENT, source={"Employee ID": "E7"}),
]


def test_each_rows_line_is_the_json_of_its_record_in_the_journal_and_the_outcomes(tmp_path: Path) -> None:
    """``outcomes.jsonl`` and the journal a run writes as the service answers hold one line per row:
    ``{"record": "row", **asdict(row)}`` as ``json.dumps`` writes it, however the line is put together."""
    expected = [json.dumps({"record": "row", **asdict(r)}, ensure_ascii=False) for r in ROWS_SENT]
    write_outcomes(tmp_path / "o.jsonl", replace(sample_result(), rows=OutcomeRows(ROWS_SENT)))
    # split at newlines only: a line may hold U+2028, which JSON leaves as it is and splitlines() splits at
    assert (tmp_path / "o.jsonl").read_text(encoding="utf-8").split("\n")[1:] == [*expected, ""]
    journal = OutcomeJournal(tmp_path / "j.jsonl", kind="staff", job="j", source=tmp_path / "s.csv", started_at="",
                             service="embedded-sandbox", customer_id="99")
    journal.add(ROWS_SENT[:3])
    journal.add(ROWS_SENT[3:])
    journal.close()
    assert (tmp_path / "j.jsonl").read_text(encoding="utf-8").split("\n")[1:] == [*expected, ""]
    assert list(read_outcomes(tmp_path / "o.jsonl").rows) == ROWS_SENT


def test_a_dry_runs_payloads_are_its_request_bodies_one_line_each_as_given(tmp_path: Path) -> None:
    bodies = ['{"customer_id":"42","bulk_staff_data":[{"name":"Zoë \\"Q\\" Ng\\n","tags":["a","李"]}]}',
              '{"customer_id":"42","bulk_staff_data":[]}']
    result = replace(sample_result(), payloads=bodies)
    files = write_report(result, tmp_path / "r")
    assert files.payloads is not None
    assert files.payloads.read_bytes() == "".join(body + "\n" for body in bodies).encode("utf-8")


def test_the_token_is_in_no_written_byte(tmp_path: Path) -> None:
    result = sample_result()
    # even a service URL carrying credentials shows only its host
    result.info.service_url = f"https://hr:{TOKEN}@sandbox.example.com/api?token={TOKEN}"
    files = write_report(result, tmp_path / "r")
    for path in files.folder.iterdir():
        if path.name == "outcomes.jsonl":
            continue  # the stages' own record, written by write_outcomes as given
        assert TOKEN not in _all_text(path), path.name
        assert TOKEN.encode() not in path.read_bytes(), path.name
    assert "sandbox.example.com" in files.html.read_text()


def test_token_never_in_a_normal_run(report: ReportFiles) -> None:
    for path in report.folder.iterdir():
        assert TOKEN not in _all_text(path), path.name


def test_every_known_code_and_server_errors_have_an_explanation() -> None:
    for code in known_codes():
        assert explain(code).fix
    assert explain("http-502") == explain("http-5xx")
    assert "some-new-code" in explain("some-new-code").title


def test_time_off_details_become_columns(tmp_path: Path) -> None:
    result = sample_result()
    result.info.kind = "timeoff"
    result.rows = [
        replace(r, details={"leave_type": "Annual", "start": "2024-05-06", "end": "2024-05-10", "days": "5"})
        for r in result.rows
    ]
    files = write_report(result, tmp_path / "r")
    header = _sheet_rows(files.xlsx, "Rows")[0]
    assert header[6:] == ["Leave type", "Start", "End", "Days"]
    page = files.html.read_text()
    assert "Time off import report" in page and "<th>Leave type</th>" in page


# --- LibreOffice --------------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) is not installed here")
def test_libreoffice_opens_both_workbooks(report: ReportFiles, tmp_path: Path) -> None:
    assert report.to_fix is not None
    out = tmp_path / "converted"
    for path in (report.xlsx, report.to_fix):
        subprocess.run(
            [
                "soffice",
                f"-env:UserInstallation=file://{tmp_path}/lo",
                "--headless",
                "--convert-to",
                "csv",
                "--outdir",
                str(out),
                str(path),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    summary = (out / "report.csv").read_text(encoding="utf-8", errors="replace")
    assert "4 of 10 rows imported" in summary  # the first sheet, Summary
    fix = (out / "to_fix.csv").read_text(encoding="utf-8", errors="replace")
    assert "HYPERLINK" in fix and "Atlantis" in fix


def test_outcome_rows_unchanged_by_rendering(report: ReportFiles) -> None:
    # the reporter renders; it never changes what the stages recorded
    result = sample_result()
    again = read_outcomes(report.outcomes)
    assert again.rows == result.rows
    assert all(isinstance(r, RowOutcome) and isinstance(r.outcome, Outcome) for r in again.rows)


# Every code a stage emits (validate, submit, client, time off): each needs its own words in the report.
def _codes_in_the_pipeline() -> list[str]:
    """Every problem code the pipeline's source writes: as a ``Problem("code", ...)``, or as a constant named in
    capitals (``HEADER_ROW_REPEATED = "header-row-repeated"``); read from the source, so a new code cannot be
    left out of this list (a hand-kept list missed held-for-review, whose rows read "Other problem")."""
    source = Path(__file__).resolve().parent.parent / "pipeline" / "hrimport"
    found: set[str] = set()
    for module in source.rglob("*.py"):
        text = module.read_text(encoding="utf-8")
        found.update(re.findall(r'Problem\(\s*(?:code=)?"([a-z0-9][a-z0-9-]+)"', text))
        found.update(re.findall(r'^[A-Z_]+ = "([a-z]+(?:-[a-z0-9]+)+)"', text, re.MULTILINE))
    not_codes = {"demo-customer-99", "demo-vendor", "embedded-sandbox", "timeoff-ledger",  # tokens, names
                 "formula-to-recalculate", "no-such-date",  # kinds of cells read, told as other codes
                 "merged-cell"}  # a kind of value read (provenance), no problem
    return sorted(found - not_codes)


#: Codes written in other ways: the service's answers turned into codes, and the outcomes' own codes.
EMITTED_CODES = sorted({
    *_codes_in_the_pipeline(), "missing-value", "not-an-email", "not-a-boolean", "not-a-number",
    "intern-with-other-role", "country-change-incomplete", "service-rejected", "no-result", "unexpected-answer",
    "connect-failed", "timeout", "transport-failed", "http-503", "total-days-mismatch", "not-a-half-day-marker",
    "ambiguous-half-day", "overlaps-existing", "unknown-staff", "two-digit-year",
})


@pytest.mark.parametrize("code", EMITTED_CODES)
def test_every_problem_code_the_pipeline_emits_is_explained_in_plain_words(code: str) -> None:
    assert not explain(code).title.startswith("Other problem"), code


def test_report_xlsx_rows_sheet_prints_one_page_wide_with_messages_wrapped(report: ReportFiles) -> None:
    rows = openpyxl.load_workbook(report.xlsx)["Rows"]
    assert rows.page_setup.orientation == "landscape"
    assert rows.sheet_properties.pageSetUpPr.fitToPage
    assert rows.page_setup.fitToWidth in (None, 1) and rows.page_setup.fitToHeight in (0, "0")
    messages = [rows.cell(r, 6) for r in range(2, rows.max_row + 1) if rows.cell(r, 6).value]
    assert messages and all(c.alignment.wrap_text for c in messages)
    longest = max(len(c.value) for c in messages)
    assert rows.column_dimensions["F"].width < longest  # wrapped in a readable width, not as wide as the text


def test_report_xlsx_prints_landscape_with_the_header_on_every_page(report: ReportFiles) -> None:
    from openpyxl import load_workbook

    wb = load_workbook(report.xlsx)
    assert all(wb[name].page_setup.orientation == "landscape" for name in ("Summary", "Rows", "Problems"))
    # the Summary fits 1 page wide (1 is Excel's default, so xlsxwriter leaves it out), as tall as needed
    summary = wb["Summary"]
    assert summary.sheet_properties.pageSetUpPr.fitToPage
    assert summary.page_setup.fitToWidth in (None, 1) and summary.page_setup.fitToHeight in (0, "0")
    assert wb["Rows"].print_title_rows == wb["Problems"].print_title_rows == "$1:$1"
