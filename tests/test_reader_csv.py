"""Robust CSV: line ends of every convention, carriage returns in cells, huge fields and ragged rows.

Each is read, or becomes a problem on its own row while the other rows go on (never a traceback, never
the whole file refused for one row).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hrimport import reader
from hrimport.cli import main
from hrimport.reader import read_spreadsheet
from tests.staff_files import HEADER, person, write_config

BIG = "x" * (200 * 1024)  # over the 128 KiB Python's csv module reads by default


def record(row: dict[str, str], end: str) -> str:
    buffer = io.StringIO(newline="")
    csv.writer(buffer).writerow([row[h] for h in HEADER])  # quotes cells holding \r or \n
    return buffer.getvalue().removesuffix("\r\n") + end


def messy_export(path: Path) -> Path:
    """An export edited by hand in several programs: every line-end convention and ragged rows."""
    lines = [
        record(dict(zip(HEADER, HEADER)), "\r\n"),
        record(person(1), "\r\n"),                                      # row 2
        record(person(2, Title="Analyst\rSenior"), "\n"),               # row 3: a carriage return in a cell
        record(person(3), "\r"),                                        # row 4: a lone \r ends the line
        record(person(4, **{"Shoe Size": BIG}), "\n"),                  # row 5: a 200 KiB field
        record(person(5), "\n").replace("\n", ",Smith,Jo\n"),           # row 6: two cells beyond the header
        ",".join([f"{6:06d}", "Person 6", "person6@acme.example"]) + "\r\n",  # row 7: 3 cells of 16
        record(person(7, Title="Line one\r\nline two"), "\r\n"),        # row 8
    ]
    path.write_bytes("".join(lines).encode("utf-8"))
    return path


def test_a_messy_csv_is_read_row_by_row(tmp_path: Path) -> None:
    table = read_spreadsheet(messy_export(tmp_path / "staff.csv"))
    assert table.row_numbers == [2, 3, 4, 5, 6, 7, 8]
    assert table.frame["Employee ID"].tolist() == [f"{n:06d}" for n in range(1, 8)]
    assert table.frame["Title"].tolist() == [
        "Analyst", "Analyst\rSenior", "Analyst", "Analyst", "Analyst", "", "Line one\r\nline two"]
    assert table.frame["Shoe Size"].tolist()[3] == BIG
    assert table.frame.iloc[5].tolist() == ["000006", "Person 6", "person6@acme.example"] + [""] * 13
    assert {row: [p.code for p in found] for row, found in table.row_problems.items()} == {6: ["extra-cells"]}
    assert table.row_problems[6][0].message == (
        "Row 6 has 18 cells but the header row has 16 ('Smith', 'Jo' beyond the last column): a value "
        "holding ',' without quotes shifts the row's values; put quotes around it."
    )


def test_a_clean_file_with_mixed_line_ends_and_a_big_field_is_read_by_the_fast_path(tmp_path: Path) -> None:
    path = tmp_path / "clean.csv"
    path.write_bytes(b'ID,Note\r\n1,"a\rb"\n2,' + BIG.encode() + b"\r3,\"c\r\nd\"\r\n")
    table = read_spreadsheet(path)
    assert table.frame.to_dict("records") == [
        {"ID": "1", "Note": "a\rb"}, {"ID": "2", "Note": BIG}, {"ID": "3", "Note": "c\r\nd"}]
    assert table.row_numbers == [2, 3, 4] and table.row_problems == {}


def test_a_long_field_in_the_title_rows_does_not_stop_the_header_search(tmp_path: Path) -> None:
    path = tmp_path / "titled.csv"
    path.write_text(f"Export notes: {BIG}\nID,Name\n1,Ann\n", encoding="utf-8")
    table = read_spreadsheet(path)
    assert table.info.header_row == 2 and table.frame.to_dict("records") == [{"ID": "1", "Name": "Ann"}]


def test_quoted_cells_holding_tabs_and_line_breaks_do_not_make_tab_the_delimiter(tmp_path: Path) -> None:
    # Found by the property test: split at every tab, the quoted line breaks made more (short) rows than
    # the comma made whole ones, and the file was read as one column.
    rows = [["0", "", "\t", "\r\t"], ["0", "", "\r\t", "\r\t"]]
    buffer = io.StringIO(newline="")
    csv.writer(buffer).writerows([["ID", "Name", "Note", "Code"], *rows])
    path = tmp_path / "export.csv"
    path.write_text(buffer.getvalue(), encoding="utf-8", newline="")
    table = read_spreadsheet(path)
    assert (table.info.delimiter, table.info.headers) == (",", ["ID", "Name", "Note", "Code"])
    assert table.frame.values.tolist() == rows


def test_values_only_beyond_the_header_refuse_the_file_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "shifted.csv"
    path.write_text("ID,Name\n1,Ann\n,,Bo\n", encoding="utf-8")
    try:
        read_spreadsheet(path)
    except Exception as exc:  # noqa: BLE001 - the exact type and text are asserted
        assert type(exc).__name__ == "InputFileError"
        assert str(exc) == (
            f"{path}: row 3 has values only beyond the header's last column (3 cells, the header has 2); "
            "put quotes around values that contain ','"
        )
    else:
        raise AssertionError("the file was read")


def test_the_messy_export_imports_every_good_row_and_flags_the_ragged_ones(tmp_path: Path, sandbox) -> None:
    data = messy_export(tmp_path / "staff.csv")
    config = write_config(tmp_path / "staff.toml")
    result = CliRunner().invoke(
        main, ["staff", "import", str(config), str(data), "--report-dir", str(tmp_path / "reports")],
        env={"HRIMPORT_TOKEN": "demo-customer-99", "HRIMPORT_BASE_URL": sandbox.base_url},
    )
    assert result.exit_code == 1, result.output
    stored = {s["customer_system_id"]: s["job_title"] for s in sandbox.staff(99)}
    assert stored == {"000001": "Analyst", "000002": "Analyst\rSenior", "000003": "Analyst",
                      "000004": "Analyst", "000007": "Line one\r\nline two"}
    outcomes = [json.loads(line) for line in
                next((tmp_path / "reports").glob("*/*/outcomes.jsonl")).read_text(encoding="utf-8").splitlines()[1:]]
    flagged = {o["row"]: sorted(p["code"] for p in o.get("problems", [])) for o in outcomes
               if o["outcome"] == "invalid"}
    assert flagged == {6: ["extra-cells"], 7: ["missing-value"] * 4}  # country, title, hire date, staff type


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("first_line", "delimiter", "encoding"),
                         [("sep=;", ";", "utf-8"), ("sep=;", ";", "utf-8-sig"), ("sep=\t", "\t", "utf-8")])
def test_excels_separator_line_names_the_delimiter_and_is_not_a_row(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first_line: str, delimiter: str, encoding: str,
        streamed: bool) -> None:
    """Excel writes "sep=;" as a CSV's first line and, opening the file, takes the delimiter from it and does
    not show it: the header is row 1. It was read as a title row, so every message named the row under
    the one a person sees in Excel (Row 4 for row 3)."""
    if streamed:  # a big file's way: this one is small, so the threshold goes down
        monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter)
    writer.writerow(HEADER)
    for row in [person(1), person(2, **{"Hire Date": "2021-02-30"})]:
        writer.writerow([row[h] for h in HEADER])
    data = tmp_path / "staff.csv"
    data.write_text(first_line + "\r\n" + buffer.getvalue(), encoding=encoding)
    config = write_config(tmp_path / "staff.toml")
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Row 3, column 'Hire Date': '2021-02-30' is not a real date")
    named = "semicolon" if delimiter == ";" else "tab"
    assert f"{named}-delimited, header on row 1\n" in result.output
