"""HR imports people whose e-mail addresses our pattern doubts (the platform, over HTTP to the sandbox).

The platform's interface types every e-mail field as a plain string and publishes no format for it, so
name@example.com is our own rule (principle 2): ``ann@intranet`` (a real internal address) and
``jane.doe@`` are sent exactly as written, each with a ``not-an-email`` warning the report shows; the
config's ``[staff] email_check = "strict"`` holds such rows back instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from hrimport.config import load_config
from hrimport.errors import ConfigError
from tests.report_samples import sheet_lines
from tests.staff_files import person, write_config, write_csv
from tests.test_run_job import JobFolder, run_cli
from tests.test_staff_import import hrimport, latest_run, run_import

pytestmark = pytest.mark.usefixtures("instant_retries")

DOUBTED = {"000002": "ann@intranet", "000003": "jane.doe@"}


def month(tmp_path: Path) -> Path:
    """Three people: rows 3 and 4 hold the addresses the pattern doubts."""
    return write_csv(tmp_path / "staff.csv", [person(1), person(2, Email="ann@intranet"),
                                              person(3, Email="jane.doe@")])


def stored_emails(sandbox: Any) -> dict[str, str]:
    return {s["customer_system_id"]: s["system_email"] for s in sandbox.staff(99)
            if s["customer_system_id"] in ("000001", *DOUBTED)}


def test_internal_and_odd_addresses_are_imported_as_written_with_a_warning_each(tmp_path: Path, sandbox: Any) -> None:
    result, summary = run_import(tmp_path, sandbox, month(tmp_path))

    assert result.exit_code == 0, result.output
    assert "3 of 3 rows imported (2 with warnings)." in result.output
    assert ("Warning: Row 3, column 'Email': 'ann@intranet' does not look like an e-mail address (no dot after "
            "the @); kept as written.") in result.output
    assert ("Warning: Row 4, column 'Email': 'jane.doe@' does not look like an e-mail address (nothing after "
            "the @); kept as written.") in result.output
    # the platform holds exactly the strings the file gave, and sent them back as written: no platform-altered
    assert stored_emails(sandbox) == {"000001": "person1@acme.example", **DOUBTED}
    sent = [json.loads(body) for body in sandbox.bodies]
    assert [e["system_email"] for body in sent for e in body["bulk_staff_data"]] == [
        "person1@acme.example", "ann@intranet", "jane.doe@"]
    assert summary["exit_code"] == 0 and summary["counts"]["added"] == 3
    assert summary["problems"] == {} and summary["warnings"] == {"not-an-email": 2}
    assert "to_fix.xlsx" not in summary["files"] and "to_fix.csv" not in summary["files"]  # nothing to fix

    folder = latest_run(tmp_path).parent
    header, *lines = sheet_lines(folder / "report.xlsx", "Problems")
    at = {name: header.index(name) for name in ("Row", "Column", "Value", "Code", "Severity")}
    assert [tuple(line[i] for i in at.values()) for line in lines] == [
        (3, "Email", "ann@intranet", "not-an-email", "warning"),
        (4, "Email", "jane.doe@", "not-an-email", "warning"),
    ]
    html = (folder / "report.html").read_text(encoding="utf-8")
    warnings = html.split('<section id="warnings">')[1].split("</section>")[0]
    assert 'id="warning-not-an-email"' in warnings
    assert 'data-row="3"' in warnings and 'data-row="4"' in warnings and 'data-row="2"' not in warnings
    assert "ann@intranet" in warnings and "nothing after the @" in warnings
    assert 'id="code-not-an-email"' not in html  # not among the rows needing attention


def test_an_address_carrying_an_invisible_character_is_sent_as_written_with_a_warning_naming_it(
    tmp_path: Path, sandbox: Any
) -> None:
    """An address pasted from a web page, a chat or Outlook may carry a character nobody sees (a zero-width
    space, a direction mark, a soft hyphen): the sheet shows ann@acme.example, the platform would hold another
    login. It is sent as written (the platform sets no rule), and the warning names the character."""
    pasted = {"000002": "\u200bann@acme.example", "000003": "\u202abob@acme.example\u202c",
              "000004": "carl@acme\u00ad.example"}
    rows = [person(1), *(person(int(ext), Email=email) for ext, email in pasted.items())]

    result, summary = run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", rows))

    assert result.exit_code == 0, result.output
    assert "4 of 4 rows imported (3 with warnings)." in result.output
    assert ("Warning: Row 3, column 'Email': '\\u200bann@acme.example' does not look like an e-mail address (an "
            "invisible character, U+200B, in it); kept as written.") in result.output
    assert ("Warning: Row 4, column 'Email': '\\u202abob@acme.example\\u202c' does not look like an e-mail address "
            "(an invisible character, U+202A, in it); kept as written.") in result.output
    assert ("Warning: Row 5, column 'Email': 'carl@acme\\xad.example' does not look like an e-mail address (an "
            "invisible character, U+00AD, in it); kept as written.") in result.output
    assert summary["warnings"] == {"not-an-email": 3}
    emails = {s["customer_system_id"]: s["system_email"] for s in sandbox.staff(99)}
    assert {ext: emails[ext] for ext in pasted} == pasted


def test_a_dry_run_would_send_them_as_written_and_stores_nothing(tmp_path: Path, sandbox: Any) -> None:
    result, summary = run_import(tmp_path, sandbox, month(tmp_path), extra_args=("--dry-run",))

    assert result.exit_code == 0, result.output
    assert "3 of 3 rows checked (2 with warnings)." in result.output
    assert summary["counts"]["valid"] == 3 and summary["warnings"] == {"not-an-email": 2}
    payloads = (latest_run(tmp_path).parent / "payloads.jsonl").read_text(encoding="utf-8").splitlines()
    elements = [e for line in payloads for e in json.loads(line)["bulk_staff_data"]]
    assert {e["customer_system_id"]: e["system_email"] for e in elements if e["customer_system_id"] in DOUBTED} == DOUBTED
    assert stored_emails(sandbox) == {}


def test_with_email_check_strict_those_rows_are_held_back_to_fix(tmp_path: Path, sandbox: Any) -> None:
    config = write_config(tmp_path / "staff.toml", email_check="strict")

    result, summary = run_import(tmp_path, sandbox, month(tmp_path), config=config)

    assert result.exit_code == 1, result.output
    assert "1 of 3 rows imported; 2 need attention." in result.output
    assert ("Row 3, column 'Email': 'ann@intranet' is not an e-mail address (no dot after the @; expected "
            'name@example.com); not sent (email_check = "strict").') in result.output
    assert stored_emails(sandbox) == {"000001": "person1@acme.example"}  # neither was sent
    assert summary["counts"]["added"] == 1 and summary["counts"]["invalid"] == 2
    assert summary["problems"] == {"not-an-email": 2} and summary["warnings"] == {}

    folder = latest_run(tmp_path).parent
    header, *lines = sheet_lines(folder / "report.xlsx", "Problems")
    assert {(line[header.index("Row")], line[header.index("Severity")]) for line in lines} == {(3, "error"),
                                                                                              (4, "error")}
    assert 'id="code-not-an-email"' in (folder / "report.html").read_text(encoding="utf-8")
    fix = openpyxl.load_workbook(folder / "to_fix.xlsx").active
    assert [[c.value for c in row][:3] for row in fix.iter_rows(min_row=2)] == [
        ["000002", "Person 2", "ann@intranet"], ["000003", "Person 3", "jane.doe@"]]
    assert fix["C2"].comment is not None and "no dot after the @" in fix["C2"].comment.text


def test_a_row_held_back_for_another_reason_goes_to_to_fix_with_its_email_warning_unmarked(
    tmp_path: Path, sandbox: Any
) -> None:
    rows = [person(1), person(2, Email="ann@intranet", Country="Atlantis")]

    result, summary = run_import(tmp_path, sandbox, write_csv(tmp_path / "staff.csv", rows))

    assert result.exit_code == 1, result.output
    assert summary["problems"] == {"unknown-country": 1} and summary["warnings"] == {"not-an-email": 1}
    fix = openpyxl.load_workbook(latest_run(tmp_path).parent / "to_fix.xlsx").active
    header = [c.value for c in fix[1]]
    assert fix.max_row == 2 and fix.cell(2, 1).value == "000002"
    # the country is what stops the row: its cell is marked; the e-mail, a warning, is only said
    assert fix.cell(2, header.index("Country") + 1).comment is not None
    assert fix.cell(2, header.index("Email") + 1).comment is None
    problem = fix.cell(2, header.index("Problem") + 1).value
    assert "'Atlantis' is not a country" in problem and "'ann@intranet' does not look like an e-mail" in problem


def test_a_monthly_run_imports_them_and_exits_0(tmp_path: Path, sandbox: Any) -> None:
    job = JobFolder(tmp_path / "job", sandbox)
    job.export("2024-05", job.people(3, **{"2": {"Email": "ann@intranet"}, "3": {"Email": "jane.doe@"}}))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    step = job.last_run()["steps"][0]
    assert step["counts"]["added"] == 3
    emails = {s["customer_system_id"]: s["system_email"] for s in sandbox.staff(99)}
    assert (emails[job.ext(2)], emails[job.ext(3)]) == ("ann@intranet", "jane.doe@")
    summary = json.loads(next(job.runs()[-1].glob("staff/summary.json")).read_text())
    assert summary["warnings"] == {"not-an-email": 2}


def test_an_email_check_other_than_warn_or_strict_is_one_line_and_exit_2(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml", email_check="lenient")
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert str(caught.value) == 'staff.toml [staff] email_check must be "warn" or "strict", not \'lenient\''
    result = hrimport("staff", "validate", str(config), str(write_csv(tmp_path / "staff.csv", [person(1)])))
    assert result.exit_code == 2
    assert result.output == "Error: " + str(caught.value) + "\n"
