"""Long ids and phone numbers a spreadsheet stored as numbers reach hrimport in scientific notation, their last
digits lost (a Chinese ID card's 18 digits read as 4.40301198501011e+17; Excel saves a 13-digit phone number to
CSV as 8.6138E+12). Such a value is kept as written, with a ``scientific-notation`` warning on its row naming the
column and the value, never sent without a word.

Real files: a workbook by openpyxl, CSV bytes as Excel saves them; imports into the sandbox over real HTTP.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from hrimport.config import load_config
from hrimport.imports import import_file
from tests.staff_files import HEADER, person, write_config, write_csv
from tests.test_staff_import import hrimport

pytestmark = pytest.mark.usefixtures("instant_retries")

def warned(text: str, row: int, column: str) -> str:
    return (f"Warning: Row {row}, column '{column}': '{text}' is a number in scientific notation, as a spreadsheet "
            "shows a number longer than it keeps (15 digits): an id or a phone number written so has lost its last "
            "digits; kept as written. Export the column as text, or type the number in full.")


def test_id_card_numbers_stored_as_numbers_are_sent_with_a_warning_naming_each(tmp_path: Path, sandbox: Any) -> None:
    """Two people's 18-digit numbers, which differ in their last digit, read alike: the warning says so on both."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(HEADER)
    cards = [110101199003077777, 440301198501011234, 440301198501011235]
    for n, card in enumerate(cards, start=1):
        row = person(n)
        sheet.append([card if h == "Shoe Size" else row[h] for h in HEADER])
    sheet.append([person(4)[h] for h in HEADER])  # a shoe size of 38: a short number, no warning
    source = tmp_path / "staff.xlsx"
    book.save(source)
    config = tmp_path / "staff.toml"
    config.write_text(write_config(tmp_path / "base.toml").read_text().replace(
        '"Cost Centre" = "Cost Center"', '"Cost Centre" = "Cost Center"\n"Shoe Size" = "Employee Number"'))
    result = hrimport("staff", "import", str(config), str(source), "--report-dir", str(tmp_path / "reports"),
                      base_url=sandbox.base_url)
    assert result.exit_code == 0, result.output
    assert [line for line in result.output.splitlines() if line.startswith("Warning")] == [
        warned("1.10101199003078e+17", 2, "Shoe Size"),
        warned("4.40301198501011e+17", 3, "Shoe Size").replace("Row 3", "Rows 3 and 4"),
    ]
    sent = {e["customer_system_id"]: [d["value"] for d in e["customer_data_type"] if d["name"] == "Employee Number"]
            for body in sandbox.bodies for e in json.loads(body)["bulk_staff_data"]}
    assert sent == {"000001": ["1.10101199003078e+17"], "000002": ["4.40301198501011e+17"],
                    "000003": ["4.40301198501011e+17"], "000004": ["38"]}


def test_a_phone_number_excel_saved_to_csv_in_scientific_notation_is_told(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    config.write_text(config.read_text().replace('"Gender" = "gender"', '"Gender" = "gender"\n"Shoe Size" = "phone"'))
    rows = [person(1, **{"Shoe Size": "8.6138E+12"}), person(2, **{"Shoe Size": "+65 8123 4567"}),
            person(3, **{"Employee ID": "1.23457E+11"}), person(4, **{"Shoe Size": "1E+3"})]
    run = import_file(load_config(config), write_csv(tmp_path / "staff.csv", rows), validate_only=True).result
    assert {o.row: [(p.code, p.column, p.value) for p in o.problems] for o in run.rows if o.problems} == {
        2: [("scientific-notation", "Shoe Size", "8.6138E+12")],
        4: [("scientific-notation", "Employee ID", "1.23457E+11")]}


def test_strict_checks_hold_back_a_row_whose_number_lost_its_digits(tmp_path: Path) -> None:
    """A company whose ids must be whole lists scientific-notation in [staff] strict_checks: such a row is held
    back, its line saying so; the others are valid."""
    config = write_config(tmp_path / "staff.toml")
    config.write_text(config.read_text().replace("[staff]\n", '[staff]\nstrict_checks = ["scientific-notation"]\n', 1))
    rows = [person(1), person(2, **{"Employee ID": "1.23457E+11"})]
    run = import_file(load_config(config), write_csv(tmp_path / "staff.csv", rows), validate_only=True).result
    assert [(o.row, o.outcome.value, o.problem_codes) for o in run.rows] == [
        (2, "valid", []), (3, "invalid", ["scientific-notation"])]
    assert run.rows[1].message == (
        "Row 3, column 'Employee ID': '1.23457E+11' is a number in scientific notation, as a spreadsheet shows a "
        "number longer than it keeps (15 digits): an id or a phone number written so has lost its last digits; not "
        "sent (strict_checks lists scientific-notation). Export the column as text, or type the number in full.")


def test_an_id_of_letters_and_digits_that_looks_like_an_exponent_is_no_scientific_notation(tmp_path: Path) -> None:
    """'3E4700001' and '1e50' are ids a company writes (a spreadsheet writes its exponent with a plus sign:
    3E+47): no warning."""
    config = write_config(tmp_path / "staff.toml")
    rows = [person(1, **{"Employee ID": "3E4700001"}), person(2, **{"Employee ID": "1e50"}),
            person(3, **{"Employee ID": "3E+47"})]
    run = import_file(load_config(config), write_csv(tmp_path / "staff.csv", rows), validate_only=True).result
    assert [(o.row, o.problem_codes) for o in run.rows] == [(2, []), (3, []), (4, ["scientific-notation"])]
