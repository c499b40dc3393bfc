"""Masked fields stay hidden in report.html and report.xlsx however short their values, after a real import.

README ("Reports"): the fields ``[report] mask`` names are shown as ``•••••1234`` in report.html and
report.xlsx, and ``to_fix`` keeps full values since it is meant for re-import. A value of six characters or
fewer is hidden whole (showing its last four would show most or all of it). These tests run a real staff
import over HTTP against the sandbox and look for each raw value in every byte of report.html, every cell
of report.xlsx (read with openpyxl) and every XML part of the .xlsx archive (sheet names, strings, metadata).
"""

from __future__ import annotations

import csv
import zipfile
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from click.testing import CliRunner, Result

from hrimport.cli import main
from hrimport.report.cells import MASK
from tests.staff_files import HEADER, person, write_config, write_csv

TOKEN = "demo-customer-99"
PASSPORT_HEADER = "Passport No."
# Short sensitive values (3 to 6 characters), each unlike anything else a report holds.
SHORT_PASSPORTS = {1: "PQ7XK", 2: "W9Z", 3: "JX4K2Y", 5: "HV8RTW"}
SHORT_BAD_BIRTHDATES = {4: "zz-7q", 5: "V3/Q"}  # masked too here; not dates, so quoted by their problems

pytestmark = pytest.mark.usefixtures("instant_retries")


def masked_config(path: Path) -> Path:
    config = write_config(path, extra='\n[report]\nmask = ["passport_number", "birthdate"]\n')
    text = config.read_text(encoding="utf-8")
    # the extra [report] table replaces the one write_config wrote (a TOML table is given once)
    text = text.replace('[report]\njob = "test-staff"\n', "", 1).replace(
        '[report]\nmask', '[report]\njob = "test-staff"\nmask', 1)
    text = text.replace('"Move Date" = "new_country_effective_date"',
                        f'"Move Date" = "new_country_effective_date"\n"{PASSPORT_HEADER}" = "passport_number"', 1)
    config.write_text(text, encoding="utf-8")
    return config


def rows() -> list[dict[str, str]]:
    people = []
    for n in range(1, 6):
        changes = {PASSPORT_HEADER: SHORT_PASSPORTS.get(n, ""), "Birth Date": SHORT_BAD_BIRTHDATES.get(n, "")}
        if n == 3:
            changes["Country"] = "Atlantis"  # invalid for another reason: its passport goes to to_fix
        people.append(person(n, **changes))
    return people


def run_import(tmp_path: Path, sandbox: Any, source: Path, config: Path, reports: str) -> tuple[Result, Path]:
    result = CliRunner().invoke(
        main, ["staff", "import", str(config), str(source), "--report-dir", str(tmp_path / reports)],
        env={"HRIMPORT_TOKEN": TOKEN, "HRIMPORT_BASE_URL": sandbox.base_url}, catch_exceptions=False)
    assert "Traceback" not in result.output
    folder = next(line for line in result.stdout.splitlines() if line.startswith("Report folder: "))
    return result, Path(folder.removeprefix("Report folder: "))


def xlsx_cells(path: Path) -> list[str]:
    wb = openpyxl.load_workbook(path, read_only=True)
    try:
        return [str(value) for ws in wb.worksheets for row in ws.iter_rows(values_only=True)
                for value in row if value is not None]
    finally:
        wb.close()


def xlsx_parts(path: Path) -> bytes:
    with zipfile.ZipFile(path) as archive:
        return b"".join(archive.read(name) for name in archive.namelist())


def assert_hidden_in_report(folder: Path, secrets: list[str]) -> None:
    html = (folder / "report.html").read_bytes()
    cells = xlsx_cells(folder / "report.xlsx")
    parts = xlsx_parts(folder / "report.xlsx")
    for secret in secrets:
        assert 3 <= len(secret) <= 6
        assert secret.encode() not in html, f"{secret!r} is in report.html"
        assert not [c for c in cells if secret in c], f"{secret!r} is in a cell of report.xlsx"
        assert secret.encode() not in parts, f"{secret!r} is in report.xlsx's archive"


def test_short_masked_values_are_in_no_byte_of_report_html_or_report_xlsx(tmp_path: Path, sandbox: Any) -> None:
    config = masked_config(tmp_path / "staff.toml")
    source = write_csv(tmp_path / "staff.csv", rows(), [*HEADER, PASSPORT_HEADER])
    result, folder = run_import(tmp_path, sandbox, source, config, "reports")
    assert result.exit_code == 1, result.output
    assert "2 of 5 rows imported; 3 need attention." in result.output
    stored = {s["customer_system_id"]: s["passport_number"] for s in sandbox.staff(99)}
    assert stored == {"000001": "PQ7XK", "000002": "W9Z"}  # sent in full: masking is the report's only

    assert_hidden_in_report(folder, [*SHORT_PASSPORTS.values(), *SHORT_BAD_BIRTHDATES.values()])
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert MASK in html  # shown masked, not left out: HR sees that a value was there
    problems = [row for row in openpyxl.load_workbook(folder / "report.xlsx")["Problems"].iter_rows(
        values_only=True)]
    assert [row[3] for row in problems if row[1] == "000004"] == [MASK]  # the bad birth date, hidden whole

    # to_fix keeps full values for re-import (README): the rows needing attention, as HR wrote them
    with open(folder / "to_fix.csv", newline="", encoding="utf-8-sig") as fh:
        to_fix = {r["Employee ID"]: r for r in csv.DictReader(fh)}
    assert {k: (r[PASSPORT_HEADER], r["Birth Date"]) for k, r in to_fix.items()} == {
        "000003": ("JX4K2Y", ""), "000004": ("", "zz-7q"), "000005": ("HV8RTW", "V3/Q")}


def test_short_masked_values_stay_hidden_when_a_row_is_updated(tmp_path: Path, sandbox: Any) -> None:
    config = masked_config(tmp_path / "staff.toml")
    people = [person(1, **{PASSPORT_HEADER: "PQ7XK"}), person(2, **{PASSPORT_HEADER: "W9Z"})]
    header = [*HEADER, PASSPORT_HEADER]
    run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", people, header), config, "first")
    people[0][PASSPORT_HEADER] = "KM2RD"  # a new passport: the row is updated, the old and new values hidden
    result, folder = run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", people, header), config,
                                "second")
    assert result.exit_code == 0, result.output
    assert {s["customer_system_id"]: s["passport_number"] for s in sandbox.staff(99)}["000001"] == "KM2RD"
    assert_hidden_in_report(folder, ["PQ7XK", "W9Z", "KM2RD"])


@pytest.mark.parametrize("command", ["validate", "import --dry-run"])
def test_masked_values_quoted_by_problems_are_masked_on_the_terminal_too(tmp_path: Path, command: str) -> None:
    """The problems a command prints (to a terminal, a cron mail, a CI log) mask what the report masks."""
    config = masked_config(tmp_path / "staff.toml")
    source = write_csv(tmp_path / "staff.csv", rows(), [*HEADER, PASSPORT_HEADER])
    report = ["--report-dir", str(tmp_path / "reports")] if "import" in command else []
    result = CliRunner().invoke(main, ["staff", *command.split(), str(config), str(source), *report],
                                catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "Birth Date" in result.output and MASK in result.output  # the problems are printed, masked
    for secret in SHORT_BAD_BIRTHDATES.values():
        assert secret not in result.output, f"{secret!r} printed"


def test_a_misspelt_field_in_the_mask_stops_the_import_before_a_passport_reaches_a_report(
    tmp_path: Path, sandbox: Any
) -> None:
    # "passport_numbr" masks nothing: the passports would be shown in full in report.html and report.xlsx
    config = masked_config(tmp_path / "staff.toml")
    config.write_text(config.read_text(encoding="utf-8").replace('"passport_number", "birthdate"',
                                                                 '"passport_numbr", "birthdate"'))
    source = write_csv(tmp_path / "staff.csv", rows(), [*HEADER, PASSPORT_HEADER])
    result = CliRunner().invoke(
        main, ["staff", "import", str(config), str(source), "--report-dir", str(tmp_path / "reports")],
        env={"HRIMPORT_TOKEN": TOKEN, "HRIMPORT_BASE_URL": sandbox.base_url}, catch_exceptions=False)

    assert result.exit_code == 2, result.output
    assert result.output == ("Error: staff.toml [report] mask: 'passport_numbr' is not a field, nor a column or "
                             "data type this config names (did you mean passport_number?)\n")
    assert sandbox.staff(99) == [] and not (tmp_path / "reports").exists()


def test_the_mask_may_name_a_column_or_a_data_type_the_config_names(tmp_path: Path, sandbox: Any) -> None:
    config = masked_config(tmp_path / "staff.toml")
    config.write_text(config.read_text(encoding="utf-8").replace('"passport_number", "birthdate"',
                                                                 '"Passport No.", "cost center"'))
    source = write_csv(tmp_path / "staff.csv", rows(), [*HEADER, PASSPORT_HEADER])
    result, folder = run_import(tmp_path, sandbox, source, config, "reports")
    assert result.exit_code == 1, result.output
    assert_hidden_in_report(folder, [*SHORT_PASSPORTS.values()])


def test_two_passport_columns_that_disagree_are_told_with_both_values_masked(tmp_path: Path, sandbox: Any) -> None:
    """A field two columns fill, whose values differ on a row, gets a warning naming both values: masked."""
    config = masked_config(tmp_path / "staff.toml")
    config.write_text(config.read_text(encoding="utf-8").replace(
        f'"{PASSPORT_HEADER}" = "passport_number"',
        f'"{PASSPORT_HEADER}" = "passport_number"\n"Old Passport" = "passport_number"'), encoding="utf-8")
    people = [person(1, **{PASSPORT_HEADER: "PQ7XK", "Old Passport": "W9Z"})]
    source = write_csv(tmp_path / "staff.csv", people, [*HEADER, PASSPORT_HEADER, "Old Passport"])
    result, folder = run_import(tmp_path, sandbox, source, config, "reports")

    assert result.exit_code == 0, result.output
    assert {s["customer_system_id"]: s["passport_number"] for s in sandbox.staff(99)} == {"000001": "PQ7XK"}
    warning = next(line for line in result.output.splitlines() if line.startswith("Warning: Row 2: columns"))
    assert warning == (f"Warning: Row 2: columns '{PASSPORT_HEADER}' and 'Old Passport' both give passport_number, "
                       f"with different values: '{MASK}' (from '{PASSPORT_HEADER}', the first in the config's order "
                       f"with a value) is the one used, '{MASK}' (from 'Old Passport') is not.")
    assert_hidden_in_report(folder, ["PQ7XK", "W9Z"])
    assert "PQ7XK" not in (folder / "outcomes.jsonl").read_text(encoding="utf-8")
