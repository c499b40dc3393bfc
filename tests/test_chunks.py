"""A big export is read, mapped and validated in chunks (issue 17): HR must not be able to tell.

The same file imported as one chunk and as many small ones gives the same outcome on every row, the same
problems in the same words, the same notes and record of how values were read, and the same report files.
What only the whole file shows is still found: an external id repeated far apart, and a date column whose
order only a late row proves (or contradicts).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook

from hrimport import normalize, reader
from hrimport.config import load_config
from hrimport.errors import InputFileError
from hrimport.imports import import_file
from hrimport.normalize import dates, values
from tests.staff_files import person, write_config, write_csv

#: Fields that say when and how fast a run ran, not what it did.
CLOCK = {"started_at", "finished_at", "duration_s", "timings"}


def varied_rows() -> list[dict[str, str]]:
    """60 people, with what a real export holds spread over the file: dates either order reads first and
    the one that proves day-first late, an id repeated 45 rows apart, country names, spaces to trim, a
    bad e-mail, an impossible date and a two-digit year."""
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


@pytest.mark.parametrize("chunk_rows", [1, 7, 50])
def test_a_file_read_in_chunks_reports_exactly_what_a_whole_read_reports(tmp_path: Path, chunk_rows: int,
                                                                         streamed: bool) -> None:
    config = write_config(tmp_path / "staff.toml", date_order=None)
    source = write_csv(tmp_path / "staff.csv", varied_rows())
    with pytest.MonkeyPatch.context() as whole_read:
        whole_read.setattr(reader, "STREAM_BYTES", 1 << 40)
        whole = run_dry(tmp_path, source, config, None, "whole")
    chunked = run_dry(tmp_path, source, config, chunk_rows, "chunked")

    assert outcomes(chunked) == outcomes(whole)
    summary = {f: json.loads((f / "summary.json").read_text(encoding="utf-8")) for f in (whole, chunked)}
    for data in summary.values():
        for key in CLOCK:
            data.pop(key, None)
            data.get("run", {}).pop(key, None)
    assert summary[chunked] == summary[whole]
    assert (chunked / "to_fix.csv").read_bytes() == (whole / "to_fix.csv").read_bytes()
    whole_cells, chunked_cells = workbook_cells(whole / "report.xlsx"), workbook_cells(chunked / "report.xlsx")
    for sheet in ("Rows", "Problems", "Values"):
        assert chunked_cells[sheet] == whole_cells[sheet], sheet

    # and what the rows say is what the whole file shows, not what one chunk shows
    rows = {r["row"]: r for r in outcomes(chunked) if r["record"] == "row"}
    assert [p["code"] for p in rows[6]["problems"]] == ["duplicate-id"]
    assert "also on row 51" in rows[6]["problems"][0]["message"]
    assert [p["code"] for p in rows[51]["problems"]] == ["duplicate-id"]
    assert rows[13]["problems"][0]["code"] == "two-digit-year"
    assert rows[34]["problems"][0]["code"] == "not-a-date"
    assert rows[21]["problems"][0]["code"] == "not-an-email"
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
    assert chunked.counts() == whole.counts() == {**{k: 0 for k in whole.counts()}, "valid": 55, "invalid": 5}
    assert chunked.verdict() == whole.verdict() == "55 of 60 rows checked; 5 need attention"
    assert chunked.info.values_read == whole.info.values_read
    assert chunked.info.notes == whole.info.notes


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
    config = load_config(write_config(tmp_path / "staff.toml", date_order=None))
    source = write_csv(tmp_path / "staff.csv", rows)
    whole = import_file(config, source, validate_only=True).result
    chunked = import_file(config, source, validate_only=True, chunk_rows=3).result
    assert list(chunked.rows) == list(whole.rows)
    mismatch = next(r for r in chunked.rows if r.row == 3)
    assert [p.code for p in mismatch.problems] == ["date-order-mismatch"]
    assert "(the default)" in mismatch.problems[0].message


def test_a_to_fix_file_of_a_chunked_run_keeps_every_original_cell(tmp_path: Path, streamed: bool) -> None:
    config = write_config(tmp_path / "staff.toml", date_order=None)
    source = write_csv(tmp_path / "staff.csv", varied_rows())
    folder = run_dry(tmp_path, source, config, 2, "chunked")
    with open(folder / "to_fix.csv", encoding="utf-8-sig", newline="") as fh:
        fixed = list(csv.DictReader(fh))
    assert [r["Employee ID"] for r in fixed] == ["000050", "000012", "000020", "000033", "000050"]
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
