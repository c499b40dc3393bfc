"""HR staff see how every value was read: a country name made a code, a month-first date with the value that
proves the order, a value map, a trimmed id, an Excel date cell, a number format, a formula's last value.

A real workbook (openpyxl; xlsxwriter where a formula needs its saved result) is imported into the sandbox
over HTTP; the same entries must appear in summary.json, outcomes.jsonl, report.xlsx's ``Values`` sheet and
report.html (rendered by headless Chromium), and survive ``hrimport report`` rendering the run again.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest
import xlsxwriter
from openpyxl import Workbook, load_workbook

from hrimport.config import load_config
from hrimport.mapper import map_records
from hrimport.reader import read_spreadsheet
from tests.headless_chromium import run_chromium
from tests.staff_files import HEADER, as_calculated, person, write_config, write_csv
from tests.test_staff_import import hrimport, latest_run

pytestmark = pytest.mark.usefixtures("instant_retries")

PASSPORT = "X1234567"


def _config(tmp_path: Path) -> Path:
    """The staff config of these tests, month-first, with a value map and a passport column (masked)."""
    extra = '\n[staff.values.staff_type]\n"Full-Time" = "Payroll"\n'
    config = write_config(tmp_path / "staff.toml", date_order="month-first", extra=extra)
    text = config.read_text().replace('"Move Date" = "new_country_effective_date"',
                                      '"Move Date" = "new_country_effective_date"\n"Passport" = "passport_number"')
    config.write_text(text)
    return config


def _workbook(path: Path) -> Path:
    """Three people as an HR system's XLSX holds them: ids stored as numbers shown through ``000000`` (one
    typed as text with a space before it), birth dates as date cells, hire dates typed month-first."""
    header = [*HEADER, "Passport"]
    rows = [
        person(1, **{"Employee ID": 123, "Country": "Malaysia", "Hire Date": "01/06/2020",
                     "Staff Type": "Full-Time", "Birth Date": dt.datetime(1990, 5, 17), "Passport": f" {PASSPORT}"}),
        person(2, **{"Employee ID": " 000124", "Country": "MY", "Hire Date": "07/15/2015",
                     "Staff Type": "Payroll", "Birth Date": dt.datetime(1991, 1, 2), "Passport": "Y7654321"}),
        person(3, **{"Employee ID": 125, "Country": "Malaysia", "Hire Date": "02/03/2019",
                     "Staff Type": "full-time", "Birth Date": dt.datetime(1992, 3, 4), "Passport": ""}),
    ]
    wb = Workbook()
    ws = wb.active
    ws.title = "Staff"
    ws.append(header)
    for row in rows:
        ws.append([row.get(h, "") for h in header])
    for cell in ws["A"][1:]:
        cell.number_format = "000000"  # applies to the numbers; the text id keeps its space
    for cell in ws["I"][1:]:
        cell.number_format = "yyyy-mm-dd"
    wb.save(path)
    return path


def _import(tmp_path: Path, sandbox, source: Path, config: Path) -> tuple[Path, dict[str, Any]]:
    result = hrimport("staff", "import", str(config), str(source), "--report-dir", str(tmp_path / "reports"),
                      base_url=sandbox.base_url)
    assert result.exit_code == 0, result.output
    summary = latest_run(tmp_path)
    return summary.parent, json.loads(summary.read_text())


def _change(column: str, field: str, kind: str, rule: str, rows: int, *examples: tuple[int, str, str, int]) -> dict:
    return {"field": field, "column": column, "kind": kind, "rule": rule, "rows": rows,
            "examples": [{"row": row, "read": read, "sent": sent, "rows": n} for row, read, sent, n in examples]}


EXPECTED = [
    _change("Employee ID", "customer_system_id", "number-format", "number format 000000", 2,
            (2, "123", "000123", 1), (4, "125", "000125", 1)),
    _change("Employee ID", "customer_system_id", "trimmed", "spaces before and after a value are never sent", 1,
            (3, " 000124", "000124", 1)),
    _change("(config constant customer_system_id_type)", "customer_system_id_type", "constant",
            "the config's constant for customer_system_id_type", 3, (2, "", "TestHRIS", 3)),
    _change("Country", "country", "country-name", "the name's ISO code (schemas/countries.toml)", 2,
            (2, "Malaysia", "MY", 2)),
    _change("Hire Date", "job_start_date", "date-day-month",
            "month-first, proven by 07/15/2015 on row 3, as the config's date_order says", 3,
            (2, "01/06/2020", "2020-01-06", 1), (3, "07/15/2015", "2015-07-15", 1), (4, "02/03/2019", "2019-02-03", 1)),
    _change("Staff Type", "staff_type", "value-map", "the config's value map for staff_type, matched ignoring case", 2,
            (2, "Full-Time", "Payroll", 1), (4, "full-time", "Payroll", 1)),
    _change("Birth Date", "birthdate", "excel-date-cell", "a date cell: read as YYYY-MM-DD, whatever the day/month order",
            3, (2, "1990-05-17", "1990-05-17", 1), (3, "1991-01-02", "1991-01-02", 1), (4, "1992-03-04", "1992-03-04", 1)),
    # the passport number is masked: its count and rule, never its values
    _change("Passport", "passport_number", "trimmed", "spaces before and after a value are never sent", 1),
]


def test_every_way_a_value_was_read_is_in_the_summary_the_outcomes_and_both_reports(
    tmp_path: Path, sandbox, engine: str
) -> None:
    folder, summary = _import(tmp_path, sandbox, _workbook(tmp_path / "staff.xlsx"), _config(tmp_path))

    stored = {s["customer_system_id"]: s for s in sandbox.staff(99)}
    assert set(stored) == {"000123", "000124", "000125"}
    assert (stored["000123"]["country"], stored["000123"]["job_start_date"], stored["000123"]["staff_type"],
            stored["000123"]["birthdate"]) == ("MY", "2020-01-06", "Payroll", "1990-05-17")

    assert summary["values_read"] == EXPECTED
    run, *rows = (json.loads(line) for line in (folder / "outcomes.jsonl").read_text().splitlines())
    assert run["values_read"] == EXPECTED
    assert {r["row"]: r["changed_values"] for r in rows} == {
        2: {"country": ["Country", "Malaysia", "MY"], "job_start_date": ["Hire Date", "01/06/2020", "2020-01-06"],
            "staff_type": ["Staff Type", "Full-Time", "Payroll"]},
        3: {"customer_system_id": ["Employee ID", " 000124", "000124"],
            "job_start_date": ["Hire Date", "07/15/2015", "2015-07-15"]},
        4: {"country": ["Country", "Malaysia", "MY"], "job_start_date": ["Hire Date", "02/03/2019", "2019-02-03"],
            "staff_type": ["Staff Type", "full-time", "Payroll"]},
    }

    values = list(load_workbook(folder / "report.xlsx")["Values"].iter_rows(values_only=True))
    assert values[0] == ("Column", "Field", "What was done", "Rows", "Examples", "Why")
    assert values[1:] == [
        ("Employee ID", "customer_system_id", "Number format applied", 2,
         "123 → 000123 (row 2); 125 → 000125 (row 4)", "number format 000000"),
        ("Employee ID", "customer_system_id", "Spaces trimmed", 1, "' 000124' → 000124 (row 3)",
         "spaces before and after a value are never sent"),
        ("(config constant customer_system_id_type)", "customer_system_id_type", "Constant in the config", 3,
         "(empty) → TestHRIS (row 2, 3 rows)", "the config's constant for customer_system_id_type"),
        ("Country", "country", "Country name", 2, "Malaysia → MY (row 2, 2 rows)",
         "the name's ISO code (schemas/countries.toml)"),
        ("Hire Date", "job_start_date", "Day/month date read in the column's order", 3,
         "01/06/2020 → 2020-01-06 (row 2); 07/15/2015 → 2015-07-15 (row 3); 02/03/2019 → 2019-02-03 (row 4)",
         "month-first, proven by 07/15/2015 on row 3, as the config's date_order says"),
        ("Staff Type", "staff_type", "Value map in the config", 2,
         "Full-Time → Payroll (row 2); full-time → Payroll (row 4)",
         "the config's value map for staff_type, matched ignoring case"),
        ("Birth Date", "birthdate", "Excel date cell", 3, "1990-05-17 (row 2); 1991-01-02 (row 3); 1992-03-04 (row 4)",
         "a date cell: read as YYYY-MM-DD, whatever the day/month order"),
        ("Passport", "passport_number", "Spaces trimmed", 1, "values masked",
         "spaces before and after a value are never sent"),
    ]

    dom = run_chromium(folder / "report.html", tmp_path, "--dump-dom")
    assert "<h2>How values were read</h2>" in dom
    lines = [_texts(r"<td\b[^>]*>(.*?)</td>", tr)
             for tr in re.findall(r'<tr class="value-change".*?</tr>', dom, re.DOTALL)]
    assert [tuple(line) for line in lines] == [(*v[:3], str(v[3]), *v[4:]) for v in values[1:]]
    first_row = re.search(r'<tr data-outcome="added" id="row-2"><td class="num">2</td>.*?</tr>', dom, re.DOTALL)
    assert first_row is not None
    assert _texts(r"<li>(.*?)</li>", first_row.group(0)) == [
        "Country: Malaysia → MY", "Hire Date: 01/06/2020 → 2020-01-06", "Staff Type: Full-Time → Payroll"]
    assert PASSPORT not in _report_text(folder)


def _report_text(folder: Path) -> str:
    """Everything a person reads in a run's report: report.html, summary.json and every cell of report.xlsx."""
    workbook = load_workbook(folder / "report.xlsx")
    cells = [str(v) for ws in workbook.worksheets for row in ws.iter_rows(values_only=True) for v in row]
    return "\n".join([(folder / "report.html").read_text(), (folder / "summary.json").read_text(), *cells])


def test_a_masked_date_column_shows_how_it_was_read_but_never_a_date(tmp_path: Path, sandbox) -> None:
    config = write_config(tmp_path / "staff.toml", date_order="month-first")
    config.write_text(config.read_text().replace('job = "test-staff"', 'job = "test-staff"\nmask = ["birthdate"]'))
    rows = [person(1, **{"Birth Date": "01/06/1990"}), person(2, **{"Birth Date": "07/15/1991"})]
    folder, summary = _import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", rows), config)
    assert [c for c in summary["values_read"] if c["field"] == "birthdate"] == [
        _change("Birth Date", "birthdate", "date-day-month",
                "month-first, proven by the value on row 3, as the config's date_order says", 2)]
    text = _report_text(folder)
    assert "Birth Date" in text and "proven by the value on row 3" in text
    for date in ("01/06/1990", "07/15/1991", "1990-01-06", "1991-07-15"):
        assert date not in text, date


def _texts(pattern: str, html: str) -> list[str]:
    """The text of each match of ``pattern``'s group in ``html``, tags removed, spaces collapsed, unescaped."""
    return [" ".join(unescape(re.sub(r"<[^>]+>", "", found)).split()) for found in re.findall(pattern, html, re.DOTALL)]


def test_the_values_read_survive_rendering_the_report_again(tmp_path: Path, sandbox) -> None:
    folder, summary = _import(tmp_path, sandbox, _workbook(tmp_path / "staff.xlsx"), _config(tmp_path))
    again = hrimport("report", str(folder / "outcomes.jsonl"), "--output", str(tmp_path / "again"))
    assert again.exit_code == 0, again.output
    assert json.loads((tmp_path / "again" / "summary.json").read_text())["values_read"] == summary["values_read"]
    sheets = [list(load_workbook(f / "report.xlsx")["Values"].iter_rows(values_only=True))
              for f in (folder, tmp_path / "again")]
    assert sheets[0] == sheets[1] and len(sheets[1]) == 1 + len(EXPECTED)
    page = (tmp_path / "again" / "report.html").read_text()
    assert page.count('<tr class="value-change"') == len(EXPECTED)
    assert page.count('<ul class="read-as"') == 3


def test_an_outcomes_file_from_before_provenance_still_renders(tmp_path: Path, sandbox) -> None:
    folder, _ = _import(tmp_path, sandbox, _workbook(tmp_path / "staff.xlsx"), _config(tmp_path))
    records = [json.loads(line) for line in (folder / "outcomes.jsonl").read_text().splitlines()]
    for record in records:
        record.pop("values_read", None)
        record.pop("changed_values", None)
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps(r) + "\n" for r in records))
    again = hrimport("report", str(old), "--output", str(tmp_path / "again"))
    assert again.exit_code == 0, again.output
    assert "3 of 3 rows imported." in again.output
    assert json.loads((tmp_path / "again" / "summary.json").read_text())["values_read"] == []
    assert 'id="values-read"' not in (tmp_path / "again" / "report.html").read_text()


def test_a_formula_cell_is_read_as_its_last_calculated_value(tmp_path: Path, sandbox, engine: str) -> None:
    # openpyxl cannot save a formula's result; xlsxwriter saves the one it is given, as Excel saves it once
    # it has calculated the formula (as_calculated)
    path = tmp_path / "staff.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("Staff")
    ws.write_row(0, 0, HEADER)
    for r, row in enumerate([person(1), person(2)], start=1):
        ws.write_row(r, 0, [row[h] for h in HEADER])
    ws.write_formula(1, HEADER.index("Title"), '=UPPER("analyst")', None, "ANALYST")
    wb.close()
    _, summary = _import(tmp_path, sandbox, as_calculated(path), write_config(tmp_path / "staff.toml"))
    assert {s["customer_system_id"]: s["job_title"] for s in sandbox.staff(99)} == {
        "000001": "ANALYST", "000002": "Analyst"}
    assert [c for c in summary["values_read"] if c["column"] == "Title"] == [
        _change("Title", "job_title", "formula-value", "a formula: the value it last calculated, saved with the file", 1,
                (2, '=UPPER("analyst")', "ANALYST", 1))]


def test_each_normaliser_names_what_it_did_to_a_value(tmp_path: Path) -> None:
    rows = [
        person(1, Email="Person1@ACME.example", Country="MYS", Gender="M",
               **{"Is Manager": "Yes", "Staff Type": "payroll", "Hire Date": "43836",
                  "Birth Date": "1990-05-17 08:30:00", "Move Date": "31 Jan 2021"}),
        person(2, Title="'=SUM(A1)", Country=""),  # a to_fix.csv cell: its guard, then the formula stripped
    ]
    config = load_config(write_config(tmp_path / "staff.toml", extra='\n[staff.defaults]\ncountry = "SG"\n'))
    assert config.staff is not None
    table = read_spreadsheet(write_csv(tmp_path / "staff.csv", rows), expected_headers=config.staff.source_columns)
    mapped = map_records(table, config.staff, date_order="day-first", formula_text="strip")
    found = {(c.column, c.kind): [(e.row, e.read, e.sent) for e in c.examples] for c in mapped.values_read}
    expected = {
        ("Email", "lower-cased"): [(2, "Person1@ACME.example", "person1@acme.example")],
        ("Country", "country-code"): [(2, "MYS", "MY")],
        ("Country", "default"): [(3, "", "SG")],
        ("Gender", "gender-word"): [(2, "M", "Male")],
        ("Is Manager", "yes-no-word"): [(2, "Yes", "true")],
        ("Staff Type", "enum-spelling"): [(2, "payroll", "Payroll")],
        ("Hire Date", "date-serial"): [(2, "43836", "2020-01-06")],
        ("Birth Date", "date-time-dropped"): [(2, "1990-05-17 08:30:00", "1990-05-17")],
        ("Move Date", "date-written"): [(2, "31 Jan 2021", "2021-01-31")],
        ("Title", "apostrophe-removed"): [(3, "'=SUM(A1)", "=SUM(A1)")],
        ("Title", "formula-text-stripped"): [(3, "=SUM(A1)", "SUM(A1)")],
    }
    assert {key: found.get(key) for key in expected} == expected
    assert mapped.frame["job_title"].tolist() == ["Analyst", "SUM(A1)"]
