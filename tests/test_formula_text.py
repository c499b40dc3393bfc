"""HR imports values a spreadsheet would run as a formula (the platform, over HTTP to the sandbox).

A job title ``=Manager`` or a site ``@Home Office`` is a plain string to the platform's interface, which sets
no rule against it, so refusing the row would be a rule of ours (principle 2): such values are sent exactly
as written, each with a ``formula-like-text`` warning the report shows, and the config's ``[source]
formula_text = "reject"`` holds such rows back instead. The danger, CSV injection, is for whoever writes the
value into a spreadsheet: every file we write shows it as text, never as a formula, and a ``to_fix`` file
imported again gives back exactly the value.
"""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import xlsxwriter
from markupsafe import escape

from tests.report_samples import sheet_lines
from tests.staff_files import HEADER, person, write_config, write_csv
from tests.test_staff_import import latest_run, run_import

pytestmark = pytest.mark.usefixtures("instant_retries")

CLICK = '=HYPERLINK("http://evil.example","<b>Click</b>")'  # a formula, and HTML for the report page


def month(tmp_path: Path) -> Path:
    """Four people: rows 3, 4 and 5 hold values that start like a formula, in a field and in custom data."""
    rows = [person(1), person(2, Title="=Manager"), person(3, **{"Cost Centre": "@Home Office"}),
            person(4, Name=CLICK)]
    return write_csv(tmp_path / "staff.csv", rows)


def sent_elements(sandbox: Any) -> dict[str, dict[str, Any]]:
    """The staff records the sandbox received over HTTP, by external id, as it parsed them off the wire."""
    bodies = [json.loads(body) for body in sandbox.bodies]
    return {e["customer_system_id"]: e for body in bodies for e in body.get("bulk_staff_data", [])}


def stored(sandbox: Any) -> dict[str, dict[str, Any]]:
    return {s["customer_system_id"]: s for s in sandbox.staff(99)}


def string_cells(path: Path, value: str) -> list[openpyxl.cell.cell.Cell]:
    """Every cell of the workbook at ``path`` whose value is ``value``."""
    book = openpyxl.load_workbook(path)
    return [c for sheet in book.worksheets for row in sheet.iter_rows() for c in row if c.value == value]


def reimport_sends_the_title_as_written(tmp_path: Path, sandbox: Any, corrected: Path) -> dict[str, Any]:
    """Import the corrected to_fix file: person 2's title =Manager reaches the platform exactly, with its
    warning; the run's summary."""
    sandbox.clear_requests()
    result, summary = run_import(tmp_path, sandbox, corrected)
    assert result.exit_code == 0, result.output
    assert sent_elements(sandbox)["000002"]["job_title"] == "=Manager"
    assert stored(sandbox)["000002"]["job_title"] == "=Manager"
    assert summary["warnings"] == {"formula-like-text": 1}
    return summary


def no_formula_in(path: Path) -> bool:
    """True when no sheet of the workbook at ``path`` holds a formula (``<f>`` in its XML)."""
    with zipfile.ZipFile(path) as zf:
        return not any(b"<f>" in zf.read(n) or b"<f " in zf.read(n) for n in zf.namelist()
                       if n.startswith("xl/worksheets/"))


def write_staff_xlsx(path: Path, rows: list[dict[str, str]]) -> Path:
    """The export as an .xlsx with every cell a string cell, as HR systems export text (xlsxwriter's
    ``write_string``: its ``write`` would make =Manager a formula)."""
    workbook = xlsxwriter.Workbook(str(path))
    sheet = workbook.add_worksheet("Staff")
    for col, name in enumerate(HEADER):
        sheet.write_string(0, col, name)
    for r, row in enumerate(rows, start=1):
        for col, name in enumerate(HEADER):
            if row.get(name):
                sheet.write_string(r, col, row[name])
    workbook.close()
    return path


def test_values_that_start_like_a_formula_are_imported_exactly_as_written_with_a_warning_each(
    tmp_path: Path, sandbox: Any
) -> None:
    result, summary = run_import(tmp_path, sandbox, month(tmp_path))

    assert result.exit_code == 0, result.output
    assert "4 of 4 rows imported (3 with warnings)." in result.output
    assert ("Warning: Row 3, column 'Title': '=Manager' looks like a spreadsheet formula; kept as written "
            "(formula_text = \"reject\" in the config's [source] would hold the row back).") in result.output
    assert "Warning: Row 4, column 'Cost Centre': '@Home Office' looks like a spreadsheet" in result.output
    # what went over the wire, and what the platform holds: exactly the file's text
    sent = sent_elements(sandbox)
    assert sent["000002"]["job_title"] == "=Manager"
    assert sent["000003"]["customer_data_type"] == [{"name": "Cost Center", "value": "@Home Office"}]
    assert sent["000004"]["name"] == CLICK
    people = stored(sandbox)
    assert (people["000002"]["job_title"], people["000004"]["name"]) == ("=Manager", CLICK)
    assert people["000003"]["customer_data_type"] == [{"name": "Cost Center", "value": "@Home Office"}]
    assert summary["exit_code"] == 0 and summary["counts"]["added"] == 4
    assert summary["problems"] == {} and summary["warnings"] == {"formula-like-text": 3}
    assert "to_fix.xlsx" not in summary["files"] and "to_fix.csv" not in summary["files"]  # nothing to fix

    folder = latest_run(tmp_path).parent
    header, *lines = sheet_lines(folder / "report.xlsx", "Problems")
    at = [header.index(name) for name in ("Row", "Column", "Value", "Code", "Severity")]
    assert [tuple(line[i] for i in at) for line in lines] == [
        (3, "Title", "=Manager", "formula-like-text", "warning"),
        (4, "Cost Centre", "@Home Office", "formula-like-text", "warning"),
        (5, "Name", CLICK, "formula-like-text", "warning"),
    ]
    # our own spreadsheet shows the values as text: string cells, quote-prefixed, no formula anywhere
    for value in ("=Manager", "@Home Office", CLICK):
        cells = string_cells(folder / "report.xlsx", value)
        assert cells and all(c.data_type == "s" and c.quotePrefix for c in cells), value
    assert no_formula_in(folder / "report.xlsx")
    html = (folder / "report.html").read_text(encoding="utf-8")
    warnings = html.split('<section id="warnings">')[1].split("</section>")[0]
    assert 'id="warning-formula-like-text"' in warnings
    assert 'data-row="3"' in warnings and 'data-row="5"' in warnings and 'data-row="2"' not in warnings
    assert str(escape(CLICK)) in warnings and "<b>Click</b>" not in html  # escaped, never markup
    assert 'id="code-formula-like-text"' not in html  # not among the rows needing attention


def test_with_formula_text_reject_those_rows_are_held_back_to_fix(tmp_path: Path, sandbox: Any) -> None:
    config = write_config(tmp_path / "staff.toml", formula_text="reject")

    result, summary = run_import(tmp_path, sandbox, month(tmp_path), config=config)

    assert result.exit_code == 1, result.output
    assert "1 of 4 rows imported; 3 need attention." in result.output
    assert ("Row 3, column 'Title': '=Manager' looks like a spreadsheet formula, so it is not sent "
            "(formula_text = \"reject\"); remove the leading character, or set formula_text in the config's "
            "[source] to \"warn\" to send it as written or \"strip\" to send it without.") in result.output
    assert set(sent_elements(sandbox)) == {"000001"} and set(stored(sandbox)) == {"000001"}
    assert summary["counts"]["invalid"] == 3
    assert summary["problems"] == {"formula-like-text": 3} and summary["warnings"] == {}

    folder = latest_run(tmp_path).parent
    header, *lines = sheet_lines(folder / "report.xlsx", "Problems")
    assert {line[header.index("Severity")] for line in lines} == {"error"}
    assert 'id="code-formula-like-text"' in (folder / "report.html").read_text(encoding="utf-8")
    fix = openpyxl.load_workbook(folder / "to_fix.xlsx").active
    title = fix.cell(2, HEADER.index("Title") + 1)
    assert (title.value, title.data_type, title.quotePrefix) == ("=Manager", "s", True)
    assert title.comment is not None and "looks like a spreadsheet formula" in title.comment.text


def test_a_row_held_back_for_another_reason_keeps_its_value_through_to_fix_csv_and_back(
    tmp_path: Path, sandbox: Any
) -> None:
    rows = [person(1), person(2, Title="=Manager", Country="Atlantis")]
    result, summary = run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", rows))
    assert result.exit_code == 1, result.output
    assert summary["problems"] == {"unknown-country": 1} and summary["warnings"] == {"formula-like-text": 1}

    folder = latest_run(tmp_path).parent
    # to_fix.csv: a spreadsheet opening it must not run the value, so it carries the ' guard
    raw = (folder / "to_fix.csv").read_text(encoding="utf-8-sig")
    assert "'=Manager" in raw
    # to_fix.xlsx: a string cell, quote-prefixed; the warning says itself in the Problem column, unmarked
    fix = openpyxl.load_workbook(folder / "to_fix.xlsx").active
    header = [c.value for c in fix[1]]
    title = fix.cell(2, header.index("Title") + 1)
    assert (title.value, title.data_type, title.quotePrefix, title.comment) == ("=Manager", "s", True, None)
    assert "'=Manager' looks like a spreadsheet formula" in fix.cell(2, header.index("Problem") + 1).value
    assert no_formula_in(folder / "to_fix.xlsx")

    # HR corrects the country in to_fix.csv and imports it again: the title reaches the platform unchanged
    with open(folder / "to_fix.csv", encoding="utf-8-sig", newline="") as fh:
        fix_rows = list(csv.DictReader(fh))
    assert fix_rows[0]["Title"] == "'=Manager"
    fix_rows[0]["Country"] = "SG"
    corrected = tmp_path / "corrected.csv"
    with open(corrected, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(fix_rows[0]))
        writer.writeheader()
        writer.writerows(fix_rows)
    summary = reimport_sends_the_title_as_written(tmp_path, sandbox, corrected)
    removed = [e for e in summary["values_read"] if e["kind"] == "apostrophe-removed"]
    assert [(e["column"], [(x["read"], x["sent"]) for x in e["examples"]]) for e in removed] == [
        ("Title", [("'=Manager", "=Manager")])]


def test_a_row_held_back_from_a_workbook_keeps_its_value_through_to_fix_xlsx_and_back(
    tmp_path: Path, sandbox: Any
) -> None:
    rows = [person(1), person(2, Title="=Manager", Country="Atlantis")]
    result, _ = run_import(tmp_path, sandbox, write_staff_xlsx(tmp_path / "staff.xlsx", rows))
    assert result.exit_code == 1, result.output

    # to_fix.xlsx is the export itself cut down to the row to fix (openpyxl): the value stays a text cell
    fix_path = latest_run(tmp_path).parent / "to_fix.xlsx"
    book = openpyxl.load_workbook(fix_path)
    sheet = book["Staff"]
    header = [c.value for c in sheet[1]]
    title = sheet.cell(2, header.index("Title") + 1)
    assert (title.value, title.data_type, title.quotePrefix) == ("=Manager", "s", True)
    assert no_formula_in(fix_path)

    # HR corrects the country in Excel (here openpyxl), saves and imports the file again
    sheet.cell(2, header.index("Country") + 1).value = "SG"
    corrected = tmp_path / "corrected.xlsx"
    book.save(corrected)
    reimport_sends_the_title_as_written(tmp_path, sandbox, corrected)


def test_excels_way_to_keep_a_csv_cells_zeros_is_read_as_the_text_excel_shows(tmp_path: Path, sandbox) -> None:
    """An export written for Excel keeps leading zeros as ="000123": Excel shows 000123, so 000123 is the id
    sent (not a person called ="000123", with a warning), and "How values were read" shows each such cell."""
    rows = [person(1, **{"Employee ID": '="000001"', "Cost Centre": '="0042"'}), person(2),
            person(3, **{"Employee ID": '="000003"'})]
    result, summary = run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", rows))

    assert result.exit_code == 0, result.output
    assert sorted(stored(sandbox)) == ["000001", "000002", "000003"]
    assert stored(sandbox)["000001"]["customer_data_type"] == [{"name": "Cost Center", "value": "0042"}]
    told = {(e["column"], e["rows"]): [(x["row"], x["read"], x["sent"]) for x in e["examples"]]
            for e in summary["values_read"] if e["kind"] == "excel-text-formula"}
    assert told == {("Employee ID", 2): [(2, '="000001"', "000001"), (4, '="000003"', "000003")],
                    ("Cost Centre", 1): [(2, '="0042"', "0042")]}
    assert summary["warnings"] == {}


def test_the_same_text_in_a_workbooks_text_cell_is_what_excel_shows_there(tmp_path: Path, sandbox) -> None:
    """In a workbook ="0042" as a text cell (not a formula) is shown as written, so it is sent as written,
    with the formula-like-text warning."""
    path = tmp_path / "staff.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    for r, row in enumerate([person(1, **{"Cost Centre": '="0042"'})], start=1):
        for c, header in enumerate(HEADER):
            sheet.write_string(r, c, row[header])
    book.close()

    result, summary = run_import(tmp_path, sandbox, path)

    assert result.exit_code == 0, result.output
    assert stored(sandbox)["000001"]["customer_data_type"] == [{"name": "Cost Center", "value": '="0042"'}]
    assert summary["warnings"] == {"formula-like-text": 1}


# --- a ' before a formula character: a CSV's guard, a workbook's character ------------------------------------


def test_the_guard_an_hr_system_puts_before_formula_like_csv_cells_is_removed_and_told_as_a_csv_s_guard(
    tmp_path: Path, sandbox: Any
) -> None:
    # HR systems guard a CSV cell a spreadsheet would run ('+Lead, '=Manager), as OWASP advises and to_fix.csv
    # does: no to_fix file here, and "How values were read" said the ' was the one a to_fix.csv puts there
    rows = [person(1, Title="'+Lead"), person(2, Title="'=Manager")]
    result, summary = run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", rows))

    assert result.exit_code == 0, result.output
    assert [s["job_title"] for s in stored(sandbox).values()] == ["+Lead", "=Manager"]
    [removed] = [e for e in summary["values_read"] if e["kind"] == "apostrophe-removed"]
    assert (removed["rule"], removed["rows"]) == (
        ("in a text file, the ' a program writing it puts before a value a spreadsheet would run as a formula "
         "(=, +, -, @), so that none runs it: the guard, not part of the value"), 2)


def test_a_workbook_s_text_starting_with_an_apostrophe_is_sent_as_excel_shows_it(tmp_path: Path, sandbox: Any) -> None:
    # In a workbook Excel's quote prefix is a style, never a character: a ' in the text is one Excel shows ('+Lead),
    # and it was removed from every file with the reason that to_fix.csv had put it there
    rows = [person(1, Title="'+Lead")]
    result, summary = run_import(tmp_path, sandbox, write_staff_xlsx(tmp_path / "staff.xlsx", rows))

    assert result.exit_code == 0, result.output
    assert [s["job_title"] for s in stored(sandbox).values()] == ["'+Lead"]
    assert not [e for e in summary["values_read"] if e["kind"] == "apostrophe-removed"]
