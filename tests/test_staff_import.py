"""An HR operations person imports this month's staff export into the platform (the sandbox, over HTTP)."""

from __future__ import annotations

import csv
import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openpyxl import Workbook

from hrimport import reader
from hrimport.cli import main
from hrimport.reader import workbook
from hrimport.sandbox.store import Store
from hrimport.service.connection import service_host
from hrimport.state.store import StateStore
from tests.report_samples import sheet_lines
from tests.staff_files import (
    HEADER,
    person,
    workbook_of_1904,
    write_config,
    write_csv,
    write_formulas_workbook,
)

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TOKEN = "demo-customer-99"


pytestmark = pytest.mark.usefixtures("instant_retries")


def hrimport(*args: str, token: str = TOKEN, base_url: str | None = None) -> Result:
    env = {"HRIMPORT_TOKEN": token, "HRIMPORT_BASE_URL": base_url or ""}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def run_import(tmp_path: Path, sandbox, rows, *, config: Path | None = None, token: str = TOKEN,
               extra_args: tuple[str, ...] = ()) -> tuple[Result, dict]:
    config = config or write_config(tmp_path / "staff.toml")
    data = rows if isinstance(rows, Path) else write_csv(tmp_path / "staff.csv", rows)
    result = hrimport("staff", "import", str(config), str(data), "--report-dir", str(tmp_path / "reports"),
                      *extra_args, token=token, base_url=sandbox.base_url)
    summaries = sorted((tmp_path / "reports").glob("*/*/summary.json"))
    summary = json.loads(summaries[-1].read_text()) if summaries else {}
    return result, summary


def outcomes_of(summary_path: Path) -> dict[str, str]:
    """external id -> outcome, from the run's outcomes.jsonl"""
    lines = (summary_path.parent / "outcomes.jsonl").read_text().splitlines()[1:]
    return {row["external_id"]: row["outcome"] for row in map(json.loads, lines)}


def latest_run(tmp_path: Path) -> Path:
    return max((tmp_path / "reports").glob("*/*/summary.json"))


def outcome_of(tmp_path: Path, external_id: str) -> dict:
    """The latest run's outcomes.jsonl line of the row with ``external_id``: its outcome, problems, message."""
    lines = (latest_run(tmp_path).parent / "outcomes.jsonl").read_text().splitlines()[1:]
    return next(row for row in map(json.loads, lines) if row["external_id"] == external_id)


def test_good_rows_are_added_then_updated_and_bad_rows_are_reported(tmp_path: Path, sandbox) -> None:
    rows = [person(1), person(2), person(3, **{"Hire Date": "2021-02-30"}), person(4)]
    result, summary = run_import(tmp_path, sandbox, rows)
    assert result.exit_code == 1, result.output
    assert "3 of 4 rows imported; 1 needs attention." in result.output
    assert "Rows read: 4 = 3 added + 1 invalid" in result.output
    assert "Report: " in result.output and "report.html" in result.output
    stored = {s["customer_system_id"]: s for s in sandbox.staff(99)}
    assert set(stored) == {"000001", "000002", "000004"}
    assert stored["000001"]["name"] == "Person 1"
    assert summary["counts"]["added"] == 3 and summary["counts"]["invalid"] == 1

    rows[0]["Title"] = "Senior Analyst"
    result, _ = run_import(tmp_path, sandbox, rows)
    assert "Rows read: 4 = 3 updated + 1 invalid" in result.output
    assert {s["customer_system_id"]: s["job_title"] for s in sandbox.staff(99)}["000001"] == "Senior Analyst"
    assert len(sandbox.staff(99)) == 3  # updated in place, never duplicated


def test_every_row_is_sent_once_in_bulk_batches(tmp_path: Path, sandbox) -> None:
    rows = [person(n) for n in range(1, 251)]
    result, _ = run_import(tmp_path, sandbox, rows, extra_args=("--batch-size", "100"))
    assert result.exit_code == 0, result.output
    bulk = [r for r in sandbox.requests() if r["path"].endswith("bulk_add_edit_staff")]
    assert [r["elements"] for r in bulk] == [100, 100, 50]
    assert len(sandbox.staff(99)) == 250


def test_a_company_the_token_may_not_act_for_gets_permission_denied(tmp_path: Path, sandbox) -> None:
    config = write_config(tmp_path / "staff.toml", customer_id=100)
    result, summary = run_import(tmp_path, sandbox, [person(1), person(2)], config=config)
    assert result.exit_code == 1
    assert summary["counts"]["permission_denied"] == 2
    assert sandbox.staff(100) == []


def test_a_row_the_service_refuses_is_rejected_with_its_reason_and_its_batch_goes_on(tmp_path: Path, sandbox) -> None:
    # "Shoe Size" is not a company data type of customer 99: the service refuses that row only
    extra = '\n[staff.values.staff_type]\n"x" = "Payroll"\n'
    config = write_config(tmp_path / "staff.toml", extra=extra)
    text = config.read_text().replace('"Cost Centre" = "Cost Center"', '"Cost Centre" = "Cost Center"\n"Shoe Size" = "Shoe Size"')
    config.write_text(text)
    rows = [person(1, **{"Shoe Size": ""}), person(2), person(3, **{"Shoe Size": ""})]
    result, _summary = run_import(tmp_path, sandbox, rows, config=config)
    assert result.exit_code == 1
    assert outcomes_of(latest_run(tmp_path)) == {"000001": "added", "000002": "rejected", "000003": "added"}
    fix = (latest_run(tmp_path).parent / "to_fix.csv").read_text(encoding="utf-8-sig")
    assert "Shoe Size" in fix.splitlines()[-1]


def test_a_refusal_every_row_shares_is_said_once_so_the_other_problems_still_show(tmp_path: Path, sandbox) -> None:
    """The config sends "Shoe Size", which the company has not configured: the service refuses every row for
    it. A cron log gets one line for those 12 rows, not 12 lines of one sentence above the problems HR must
    fix in the file (at 20,000 rows, the 200 lines said would all have been that sentence)."""
    config = write_config(tmp_path / "staff.toml")
    config.write_text(config.read_text().replace('"Cost Centre" = "Cost Center"',
                                                 '"Cost Centre" = "Cost Center"\n"Shoe Size" = "Shoe Size"'))
    rows = [person(n) for n in range(1, 13)]
    rows += [person(13, **{"Hire Date": "2021-02-30"}), person(14, Country="Narnia"),
             person(15, **{"Hire Date": "2021-02-30"})]

    result, summary = run_import(tmp_path, sandbox, rows, config=config)

    assert result.exit_code == 1, result.output
    assert summary["counts"]["rejected"] == 12 and summary["counts"]["invalid"] == 3
    said = result.output[:result.output.index("Read: ")].splitlines()
    assert said == [
        ("Rows 2, 3, 4, 5, 6 and 7 more: the service rejected 'customer_data_type': 'Shoe Size' not configured for "
        "customer 99 (configured: Cost Center, Division, Employee Number, Grade)"),
        ("Rows 14 and 16, column 'Hire Date': '2021-02-30' is not a real date (expected a real calendar date, such as "
        "2020-01-31, or an Excel date cell)."),
        ("Row 15, column 'Country': 'Narnia' is not a country we recognise (use an ISO code such as SG, MY or CN, or "
        "the country's name in English or another common language, spelt in full)."),
    ]


def test_a_month_of_one_mistake_lists_its_first_rows_in_the_page_and_says_where_the_others_are(
    tmp_path: Path, sandbox
) -> None:
    """1,200 rows with a country nobody recognises: report.html (which HR opens on a phone, or gets by e-mail)
    lists the first 500 under that problem, counts all 1,200, and says the rest are in to_fix.xlsx and
    report.xlsx, which hold every one. A warning's list stops alike (here at the config's limit of 2)."""
    rows = [person(n, Country="Atlantis") for n in range(1, 1201)]
    rows += [person(n, Email=f"person{n}@acme") for n in range(1201, 1205)]  # imported, with a warning

    result, summary = run_import(tmp_path, sandbox, rows)

    assert result.exit_code == 1, result.output
    assert summary["problems"] == {"unknown-country": 1200} and summary["warnings"] == {"not-an-email": 4}
    folder = latest_run(tmp_path).parent
    page = (folder / "report.html").read_text(encoding="utf-8")
    group = page[page.index('id="code-unknown-country"'):page.index('id="warnings"')]
    assert group.count('class="problem-row"') == 500
    assert '<span class="meta">1,200 rows</span>' in group
    assert re.sub(r"\s+", " ", group).count(
        "This page lists the first 500 of these rows; the other 700 are in <b>to_fix.xlsx</b> (as every row to fix "
        "is) and in <b>report.xlsx</b> (sheet Problems, code unknown-country).") == 1
    assert [line[4] for line in sheet_lines(folder / "report.xlsx", "Problems")[1:]].count("unknown-country") == 1200
    assert len(sheet_lines(folder / "to_fix.xlsx", "Sheet1")) == 1 + 1200
    assert page.count('class="warning-row"') == 4  # under the limit: every one

    config = write_config(tmp_path / "staff.toml")
    config.write_text(config.read_text().replace("[report]\n", "[report]\nhtml_problem_limit = 2\n"))
    result, summary = run_import(tmp_path, sandbox, rows, config=config)

    page = (latest_run(tmp_path).parent / "report.html").read_text(encoding="utf-8")
    assert (page.count('class="problem-row"'), page.count('class="warning-row"')) == (2, 2)
    assert re.sub(r"\s+", " ", page).count(
        "This page lists the first 2 of these rows; the other 2 are in <b>report.xlsx</b> (sheet Problems, code "
        "not-an-email).") == 1
    assert summary["problems"] == {"unknown-country": 1200}  # the figures stay whole


def test_the_log_stops_at_200_lines_and_counts_the_problems_it_did_not_say(tmp_path: Path) -> None:
    rows = [person(n, Country=f"Narnia {n}") for n in range(1, 204)]  # 203 different problems
    rows += [person(n, Country="Narnia") for n in range(204, 209)]  # one problem on 5 rows
    config, data = write_config(tmp_path / "staff.toml"), write_csv(tmp_path / "staff.csv", rows)

    result = hrimport("staff", "validate", str(config), str(data))

    said = result.output[:result.output.index("Read: ")].splitlines()
    assert len(said) == 201 and said[0].startswith("Row 2, column 'Country': 'Narnia 1' is not a country")
    assert said[199].startswith("Row 201, column 'Country': 'Narnia 200' is not")
    assert said[200] == "... and 8 more (see the report)"  # rows 202-204 and the five of 'Narnia'


def test_a_totals_line_under_the_table_is_flagged_on_its_row_and_the_people_above_are_imported(
        tmp_path: Path, sandbox) -> None:
    """An HR report ends with a count under the last person ('Total employees: 3' in the Name column, no
    employee id), told in one line as a totals row (tests/test_summary_rows.py); an Excel-minded export keeps an
    id's zeros as ="000004", which is formula-like text. A problem in the external id column stopped the whole
    command with a traceback (exit 1) instead."""
    path = tmp_path / "staff.xlsx"
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(HEADER)
    for row in [person(1), person(2), person(4, **{"Employee ID": '="000004"'})]:
        sheet.append([row[h] for h in HEADER])
    sheet.append([None, "Total employees: 3"])
    book.save(path)

    result, summary = run_import(tmp_path, sandbox, path)

    assert result.exit_code == 1, result.output
    assert sorted(s["customer_system_id"] for s in sandbox.staff(99)) == ["000001", "000002"]
    assert [line for line in result.output.splitlines() if line.startswith("Row 5")] == [
        ("Row 5 looks like a totals row, not a record: it holds only 'Total employees: 3' (Name), and 6 of the 7 "
        "required columns are empty. It is never sent: delete it from the export, or leave it (nothing else to do).")]
    # the id of row 4 is a formula saved without its result (openpyxl): said once, not also "the cell is empty"
    assert [line for line in result.output.splitlines() if "Row 4" in line] == [
        ("Row 4, column 'Employee ID': the cell holds the formula =\"000004\", saved without its result by a program "
        "that does not calculate; open the file in Excel or LibreOffice and save it.")]
    assert (summary["counts"]["added"], summary["counts"]["invalid"]) == (2, 2)


def test_the_import_rides_out_a_busy_service(tmp_path: Path, sandbox) -> None:
    sandbox.set_faults(rules=[
        {"path": "/api/bulk_add_edit_staff", "status": 503, "count": 2},
        {"path": "/api/bulk_add_edit_staff", "status": 429, "retry_after": 1, "count": 1},
    ])
    result, summary = run_import(tmp_path, sandbox, [person(n) for n in range(1, 6)])
    assert result.exit_code == 0, result.output
    statuses = [r["status"] for r in sandbox.requests() if r["path"].endswith("bulk_add_edit_staff")]
    assert statuses == [503, 503, 429, 200]
    assert summary["counts"]["added"] == 5


def test_a_service_that_stays_down_fails_the_rows_not_the_run(tmp_path: Path, sandbox) -> None:
    sandbox.set_faults(rules=[{"path": "/api/bulk_add_edit_staff", "status": 503, "count": 100}])
    # the first batch reaches the service (a 503 is an answer), so its rows fail and are reported
    result, summary = run_import(tmp_path, sandbox, [person(1), person(2)])
    assert result.exit_code == 1
    assert summary["counts"]["failed"] == 2
    assert "http-503" in (latest_run(tmp_path).parent / "report.html").read_text()


def test_people_created_by_a_send_whose_answer_was_lost_are_reported_added(tmp_path: Path, sandbox) -> None:
    sandbox.set_faults(rules=[{"path": "/api/bulk_add_edit_staff", "drop": True, "count": 1}])
    # the service stores the batch, the answer is lost, the client sends it again: "Update Successfully"
    result, summary = run_import(tmp_path, sandbox, [person(1), person(2)])
    assert result.exit_code == 0, result.output
    assert summary["counts"]["added"] == 2 and summary["counts"]["updated"] == 0
    assert outcomes_of(latest_run(tmp_path)) == {"000001": "added", "000002": "added"}
    lines = (latest_run(tmp_path).parent / "outcomes.jsonl").read_text().splitlines()
    assert json.loads(lines[1])["message"] == ("Added: the service answered 'Update Successfully' because an "
                                               "earlier send created the record and its answer was lost.")
    assert len(sandbox.staff(99)) == 2

    # people the service accepted before are updates, whatever happens to the answers
    sandbox.set_faults(rules=[{"path": "/api/bulk_add_edit_staff", "drop": True, "count": 1}])
    result, summary = run_import(tmp_path, sandbox, [person(1, Title="Lead"), person(2, Title="Lead")])
    assert summary["counts"]["updated"] == 2 and summary["counts"]["added"] == 0


def test_a_person_created_in_a_run_that_never_saw_the_answer_is_added_by_the_next(tmp_path: Path,
                                                                                  sandbox) -> None:
    # every attempt is stored and dropped: the run fails the row, though the service holds the person
    sandbox.set_faults(rules=[{"path": "/api/bulk_add_edit_staff", "drop": True, "count": 5}])
    result, summary = run_import(tmp_path, sandbox, [person(1)])
    assert summary["counts"]["failed"] == 1 and len(sandbox.staff(99)) == 1

    result, summary = run_import(tmp_path, sandbox, [person(1), person(2)])
    assert result.exit_code == 0, result.output
    assert outcomes_of(latest_run(tmp_path)) == {"000001": "added", "000002": "added"}


def test_a_wrong_token_stops_at_once_with_one_line_and_exit_4(tmp_path: Path, sandbox) -> None:
    result, summary = run_import(tmp_path, sandbox, [person(1)], token="wrong-token")
    assert result.exit_code == 4
    assert result.output.startswith("Error: the service refused the token (HTTP 401")
    assert "$HRIMPORT_TOKEN" in result.output and "wrong-token" not in result.output
    assert summary == {}  # nothing half-reported
    assert sandbox.staff(99) == []


def test_an_unreachable_service_is_exit_4(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    data = write_csv(tmp_path / "staff.csv", [person(1)])
    result = hrimport("staff", "import", str(config), str(data), base_url="http://127.0.0.1:9/sandbox")
    assert result.exit_code == 4
    *retries, error = result.output.splitlines()
    assert error.startswith("Error: "), error
    assert "check the base URL" in error
    assert all(line.startswith("hrimport: service busy or unreachable") for line in retries)  # no traceback


def test_a_dry_run_sends_nothing(tmp_path: Path, sandbox) -> None:
    result, summary = run_import(tmp_path, sandbox, [person(1), person(2, Country="??")], extra_args=("--dry-run",))
    assert result.exit_code == 1
    assert summary["counts"]["valid"] == 1 and summary["counts"]["invalid"] == 1
    assert sandbox.requests() == []


def test_a_dry_runs_payloads_are_byte_for_byte_the_bodies_the_import_then_sends(tmp_path: Path, sandbox) -> None:
    # what an operator reviews in payloads.jsonl is what goes on the wire: not a re-encoding of it
    rows = [person(n) for n in range(1, 13)]
    rows[2].update({"Name": "Zoë \"Q\" Ng", "Title": "Ingénieure\u2028RH", "Is Manager": "yes"})
    rows[5].update({"Country": "??"})  # invalid: in neither
    rows[7].update({"Birth Date": "1990-02-28", "Cost Centre": "李-7"})
    dry, _ = run_import(tmp_path, sandbox, rows, extra_args=("--dry-run", "--batch-size", "5"))
    assert dry.exit_code == 1 and sandbox.bodies == []
    payloads = (latest_run(tmp_path).parent / "payloads.jsonl").read_bytes()

    sent, summary = run_import(tmp_path, sandbox, rows, extra_args=("--batch-size", "5"))

    assert sent.exit_code == 1 and summary["counts"]["added"] == 11
    assert payloads.splitlines() == sandbox.bodies
    assert [len(json.loads(body)["bulk_staff_data"]) for body in sandbox.bodies] == [5, 5, 1]
    assert "Zoë \\\"Q\\\" Ng".encode() in sandbox.bodies[0] and "李-7".encode() in sandbox.bodies[1]


def _xlsx(path: Path, rows: list[dict[str, str]]) -> Path:
    wb = Workbook()
    ws = wb.active
    ws.append(["Staff export"])  # a title row above the header, as HR systems write
    ws.append(HEADER)
    for row in rows:
        ws.append([row[h] for h in HEADER])
    wb.save(path)
    return path


def _frame(rows: list[dict[str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=HEADER, dtype="str")


@pytest.mark.parametrize(
    ("writer", "name"),
    [
        pytest.param(lambda p, rows: _xlsx(p.with_suffix(".xlsx"), rows), "José Müller", id="xlsx-openpyxl"),
        pytest.param(lambda p, rows: (_frame(rows).to_excel(p.with_suffix(".ods"), index=False, engine="odf"),
                                      p.with_suffix(".ods"))[1], "王芳", id="ods-odf"),
        pytest.param(lambda p, rows: write_csv(p.with_suffix(".csv"), rows, encoding="utf-16"), "José Müller 王芳", id="csv-utf16"),
        pytest.param(lambda p, rows: write_csv(p.with_suffix(".csv"), rows, encoding="utf-8-sig"), "Zoë 王芳", id="csv-utf8-bom"),
        pytest.param(lambda p, rows: (_frame(rows).to_csv(p.with_suffix(".tsv"), sep="\t", index=False),
                                      p.with_suffix(".tsv"))[1], "Zoë", id="tsv"),
    ],
)
def test_each_format_and_encoding_imports_the_same_people(tmp_path: Path, sandbox, writer, name: str) -> None:
    rows = [person(1, Name=name), person(2, **{"Employee ID": "000042"})]
    path = writer(tmp_path / "export", rows)
    result, _ = run_import(tmp_path, sandbox, path)
    assert result.exit_code == 0, result.output
    names = {s["customer_system_id"]: s["name"] for s in sandbox.staff(99)}
    assert names == {"000001": name, "000042": "Person 2"}


def shipped_config(tmp_path: Path, name: str) -> Path:
    """A sample config copied beside the test's files: its state folder (.hrimport) is made beside it."""
    copy = tmp_path / name
    copy.write_bytes((SAMPLES / name).read_bytes())
    return copy


def test_the_shipped_samples_import_with_their_bad_rows_reported(tmp_path: Path, sandbox) -> None:
    result, _ = run_import(tmp_path, sandbox, SAMPLES / "bamboohr_staff.csv",
                           config=shipped_config(tmp_path, "bamboohr_staff.toml"))
    assert result.exit_code == 1, result.output
    outcomes = outcomes_of(latest_run(tmp_path))
    assert outcomes["000101"] == "added" and outcomes["000107"] == "invalid" and outcomes["000108"] == "invalid"
    assert "Ignored columns (neither mapped nor packed as custom data): 'Department', 'Shirt Size'" in result.output
    stored = {s["customer_system_id"]: s for s in sandbox.staff(99)}
    assert stored["000101"]["gender"] == "Female" and stored["000101"]["job_start_date"] == "2020-01-06"
    assert stored["000103"]["country"] == "SG" and stored["000103"]["nationality"] == "IN"

    result, _summary = run_import(tmp_path, sandbox, SAMPLES / "workday_staff.xlsx",
                                  config=shipped_config(tmp_path, "workday_staff.toml"))
    outcomes = outcomes_of(latest_run(tmp_path))
    assert outcomes == {"000201": "added", "000202": "added", "000203": "added", "000204": "added",
                        "000205": "added", "000206": "invalid", "000207": "invalid"}
    stored = {s["customer_system_id"]: s for s in sandbox.staff(99)}
    assert stored["000201"]["country"] == "CN" and stored["000201"]["gender"] == "Female"
    assert stored["000204"]["ec_type"] == "Fixed-term" and stored["000203"]["job_start_date"] == "2016-05-03"


def test_the_fix_file_reimports_cleanly_once_corrected(tmp_path: Path, sandbox) -> None:
    rows = [person(1), person(2, Email="nope"), person(3, Country="Atlantis", Name='=HYPERLINK("x")')]
    config = write_config(tmp_path / "staff.toml", email_check="strict")  # a doubted e-mail is a row to fix
    config.write_text(config.read_text().replace("[source]\n", '[source]\nformula_text = "strip"\n'))
    result, _ = run_import(tmp_path, sandbox, rows, config=config)
    fix_path = latest_run(tmp_path).parent / "to_fix.csv"
    with open(fix_path, encoding="utf-8-sig", newline="") as fh:
        fix_rows = list(csv.DictReader(fh))
    assert [r["Employee ID"] for r in fix_rows] == ["000002", "000003"]
    assert "not an e-mail address" in fix_rows[0]["Problem"]
    fix_rows[0]["Email"] = "person2@acme.example"
    fix_rows[1]["Country"] = "SG"
    corrected = tmp_path / "corrected.csv"
    with open(corrected, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(fix_rows[0]))
        writer.writeheader()
        writer.writerows(fix_rows)
    result, summary = run_import(tmp_path, sandbox, corrected, config=config)
    assert result.exit_code == 0, result.output
    assert summary["counts"]["added"] == 2
    names = {s["customer_system_id"]: s["name"] for s in sandbox.staff(99)}
    # the fix file's ' guard is undone on reading, then formula_text = "strip" removes the = itself
    assert names["000003"] == 'HYPERLINK("x")'


def test_the_token_is_in_no_output_and_no_report_file(tmp_path: Path, sandbox) -> None:
    result, _ = run_import(tmp_path, sandbox, [person(1), person(2, Country="Atlantis")])
    assert TOKEN not in result.output
    for path in (tmp_path / "reports").rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["good", "odd-email", "bad-date", "dup", "denied-type"]), min_size=1, max_size=30))
def test_rows_in_equal_outcomes_out(tmp_path_factory, sandbox, kinds: list[str]) -> None:
    tmp_path = tmp_path_factory.mktemp("run")
    rows = []
    for n, kind in enumerate(kinds, start=1):
        changes = {"odd-email": {"Email": "x@"}, "bad-date": {"Hire Date": "2021-02-30"},  # odd-email: a warning
                   "dup": {"Employee ID": "999999"}}.get(kind, {})
        rows.append(person(n, **changes))
    result, summary = run_import(tmp_path, sandbox, rows, extra_args=("--batch-size", "7"))
    assert result.exit_code in (0, 1), result.output
    assert sum(summary["counts"].values()) == len(rows) == summary["rows_read"]
    lines = (latest_run(tmp_path).parent / "outcomes.jsonl").read_text().splitlines()[1:]
    assert sorted(json.loads(line)["row"] for line in lines) == list(range(2, len(rows) + 2))


def _run_on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run ``hrimport`` with stderr on a real pseudo-terminal; return what the terminal showed."""
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "hrimport", *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=slave, env={**os.environ, **env})
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed: the process has ended
            break
        if not chunk:
            break
        shown += chunk
    proc.communicate(timeout=120)
    os.close(master)
    return shown.decode(errors="replace")


def test_a_progress_bar_is_drawn_on_a_terminal_only(tmp_path: Path, sandbox) -> None:
    config = write_config(tmp_path / "staff.toml")
    data = write_csv(tmp_path / "staff.csv", [person(n) for n in range(1, 1201)])
    args = ["staff", "import", str(config), str(data), "--batch-size", "300", "--report-dir", str(tmp_path / "r"),
            "--base-url", sandbox.base_url]
    terminal = _run_on_a_terminal(args, {"HRIMPORT_TOKEN": TOKEN})
    assert "Sending" in terminal and "100%" in terminal
    assert "1,200/1,200" in terminal  # counted as every other line counts rows

    piped = hrimport(*args)
    assert piped.exit_code == 0
    assert "Sending" not in piped.stderr and "%" not in piped.stderr


def test_the_report_of_a_real_run_accounts_for_every_row_and_shows_each_problem(tmp_path: Path, sandbox) -> None:
    rows = [person(1), person(2, Email="nope"), person(3, Country="Atlantis", **{"Hire Date": "2021-02-30"}),
            person(4), person(5, Name="")]
    result, summary = run_import(tmp_path, sandbox, rows)
    folder = latest_run(tmp_path).parent
    assert summary["rows_read"] == 5 == sum(summary["counts"].values())
    assert summary["counts"]["added"] == 3 and summary["counts"]["invalid"] == 2  # "nope" sent, with a warning
    assert summary["exit_code"] == result.exit_code == 1

    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "3 of 5 rows imported (1 with warnings); 2 need attention" in html
    for code in ("not-an-email", "unknown-country", "not-a-date", "missing-value"):
        assert code in html, code

    header, *lines = sheet_lines(folder / "report.xlsx", "Problems")
    row_at, code_at, severity_at = header.index("Row"), header.index("Code"), header.index("Severity")
    found = {(line[row_at], line[code_at], line[severity_at]) for line in lines}
    assert found == {(3, "not-an-email", "warning"), (4, "unknown-country", "error"), (4, "not-a-date", "error"),
                     (6, "missing-value", "error")}
    assert [r[0] for r in sheet_lines(folder / "report.xlsx", "Rows")[1:]] == [2, 3, 4, 5, 6]


def test_a_report_is_rendered_again_from_the_runs_saved_outcomes(tmp_path: Path, sandbox) -> None:
    run_import(tmp_path, sandbox, [person(1), person(2, Country="Atlantis")])
    outcomes = latest_run(tmp_path).parent / "outcomes.jsonl"
    again = hrimport("report", str(outcomes), "--output", str(tmp_path / "again"))
    assert again.exit_code == 0, again.output  # rendering worked; the run's own status is in summary.json
    assert "1 of 2 rows imported; 1 needs attention." in again.output
    assert f"Report: {tmp_path / 'again' / 'report.html'}" in again.output
    assert json.loads((tmp_path / "again" / "summary.json").read_text())["counts"] == \
        json.loads(latest_run(tmp_path).read_text())["counts"]
    assert (tmp_path / "again" / "to_fix.csv").exists()

    (tmp_path / "junk.jsonl").write_text("this is not a run\n")
    bad = hrimport("report", str(tmp_path / "junk.jsonl"))
    assert bad.exit_code == 2
    assert bad.output.startswith("Error: ") and bad.output.count("\n") == 1


def test_a_cell_with_unreadable_characters_is_never_sent_and_one_in_an_unsent_column_is_a_warning(
    tmp_path: Path, sandbox
) -> None:
    # U+FFFD is what a program puts where bytes were not text: whatever the cell said is lost, so a mapped
    # cell holding it is not sent; in a column nothing is sent from it only earns a warning.
    rows = [person(1, Name="Jos\ufffd Garc\ufffda"), person(2, **{"Shoe Size": "4\ufffd"}), person(3)]
    result, summary = run_import(tmp_path, sandbox, _xlsx(tmp_path / "staff.xlsx", rows))
    assert result.exit_code == 1, result.output
    assert ("Row 3, column 'Name': holds bytes that are not text (shown as \ufffd: 'Jos\ufffd Garc\ufffda'); "
            "retype the value in the HR system or the file.") in result.output
    assert "Warning: Row 4, column 'Shoe Size': holds bytes that are not text" in result.output
    assert {s["customer_system_id"] for s in sandbox.staff(99)} == {"000002", "000003"}
    assert summary["problems"] == {"bad-encoding": 1} and summary["warnings"] == {"bad-encoding": 1}
    html = (latest_run(tmp_path).parent / "report.html").read_text()
    warnings = html.split('<section id="warnings">')[1].split("</section>")[0]
    assert 'data-row="4"' in warnings and 'data-row="3"' not in warnings


def test_an_import_remembers_what_the_platform_accepted_and_a_dry_run_nothing(tmp_path: Path, sandbox) -> None:
    rows = [person(1), person(2, Country="Atlantis")]
    result, _ = run_import(tmp_path, sandbox, rows, extra_args=("--dry-run",))
    assert result.exit_code == 1, result.output
    assert not (tmp_path / ".hrimport" / "state.db").exists()

    result, _ = run_import(tmp_path, sandbox, rows)
    assert result.exit_code == 1, result.output
    # the state folder beside the config: what `hrimport run` compares the next month's file with
    with StateStore.open(tmp_path / ".hrimport") as state:
        remembered = state.fingerprints(service_host(sandbox.base_url), "99", ["000001", "000002"])
    assert list(remembered) == ["000001"]


def test_a_state_folder_that_cannot_be_made_still_sends_the_rows_and_says_so(tmp_path: Path, sandbox) -> None:
    (tmp_path / "blocker").write_text("a file where the state folder's parent should be")
    config = write_config(tmp_path / "staff.toml")
    config.write_text('state_dir = "blocker/.hrimport"\n' + config.read_text(encoding="utf-8"), encoding="utf-8")
    result, summary = run_import(tmp_path, sandbox, [person(1)], config=config)
    assert result.exit_code == 0, result.output
    assert {s["customer_system_id"] for s in sandbox.staff(99)} == {"000001"}
    note = next(line for line in result.output.splitlines() if line.startswith("Note: What the service accepts"))
    assert "cannot create the state folder" in note and "Set state_dir" in note
    assert any("is not remembered" in n for n in summary["notes"])


def test_concurrency_puts_several_batches_in_flight_and_each_person_is_stored_once(tmp_path: Path, sandbox) -> None:
    sandbox.set_faults(latency=0.2)
    rows = [person(n) for n in range(1, 61)]
    result, summary = run_import(tmp_path, sandbox, rows, extra_args=("--batch-size", "5", "--concurrency", "3"))
    sandbox.clear_faults()

    assert result.exit_code == 0, result.output
    assert summary["counts"]["added"] == 60
    stored = Counter(s["customer_system_id"] for s in sandbox.staff(99))
    assert [stored[p["Employee ID"]] for p in rows] == [1] * 60
    spans = [(r["time"], r["time"] + r["duration_ms"] / 1000) for r in sandbox.requests()
             if r["path"].endswith("bulk_add_edit_staff")]
    assert len(spans) == 12
    assert max(sum(1 for start, end in spans if start <= t < end) for t, _ in spans) >= 2


def test_a_cell_excel_shows_as_an_error_is_never_sent_as_empty_or_as_the_default(
        tmp_path: Path, sandbox, engine: str) -> None:
    """A VLOOKUP that found nothing shows #N/A in Excel; the reading libraries hand it over as an empty cell,
    which sent the config's default country (SG) for a person whose country the sheet does not give, and
    dropped the cost centre (#DIV/0!) without a word."""
    import xlsxwriter

    path = tmp_path / "staff.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    for r, row in enumerate([person(1, Country="MY"), person(2, Country="")], start=1):
        sheet.write_row(r, 0, [row[h] for h in HEADER])
    sheet.write_formula(2, HEADER.index("Country"), '=VLOOKUP("Berlin",Sites!A:B,2,FALSE)', None, "#N/A")
    sheet.write_formula(2, HEADER.index("Cost Centre"), "=1/0", None, "#DIV/0!")
    sheet.write_formula(2, HEADER.index("Shoe Size"), "=NA()", None, "#N/A")  # a column not sent
    book.close()
    config = write_config(tmp_path / "staff.toml", extra='\n[staff.defaults]\ncountry = "SG"\n')

    result, summary = run_import(tmp_path, sandbox, path, config=config)

    assert result.exit_code == 1, result.output
    assert [(s["customer_system_id"], s["country"]) for s in sandbox.staff(99)] == [("000001", "MY")]
    second = outcome_of(tmp_path, "000002")
    assert second["outcome"] == "invalid"
    assert [(p["code"], p["column"], p["value"], p["severity"]) for p in second["problems"]] == [
        ("error-value", "Country", "#N/A", "error"), ("error-value", "Cost Centre", "#DIV/0!", "error")]
    assert summary["problems"] == {"error-value": 2}


def test_a_formula_saved_without_its_result_is_never_sent_as_empty_or_as_the_default(
        tmp_path: Path, sandbox, engine: str) -> None:
    """openpyxl, as any program that writes formulas without calculating them, saves a formula cell with no
    result: the reading libraries hand it over as an empty cell, which sent the config's default country
    (SG) for a person whose country Excel would look up, and no cost centre, without a word."""
    book = Workbook()
    sheet = book.active
    sheet.title = "Staff"
    sheet.append(HEADER)
    sheet.append([person(1, Country="MY")[h] for h in HEADER])
    formulas = {"Country": "=VLOOKUP(H3,Sites!A:B,2,FALSE)", "Cost Centre": '="CC-"&"2"', "Shoe Size": "=37+1"}
    sheet.append([formulas.get(h, value) for h, value in person(2).items()])
    book.create_sheet("Sites").append(["Female", "SG"])
    path = tmp_path / "staff.xlsx"
    book.save(path)
    config = write_config(tmp_path / "staff.toml", extra='\n[staff.defaults]\ncountry = "SG"\n')

    result, summary = run_import(tmp_path, sandbox, path, config=config)

    assert result.exit_code == 1, result.output
    assert [(s["customer_system_id"], s["country"]) for s in sandbox.staff(99)] == [("000001", "MY")]
    second = outcome_of(tmp_path, "000002")
    assert (second["row"], second["outcome"]) == (3, "invalid")
    assert [(p["code"], p["column"], p["value"]) for p in second["problems"]] == [
        ("formula-not-calculated", "Country", "=VLOOKUP(H3,Sites!A:B,2,FALSE)"),
        ("formula-not-calculated", "Cost Centre", '="CC-"&"2"')]
    assert second["problems"][0]["message"] == (
        "Row 3, column 'Country': the cell holds the formula =VLOOKUP(H3,Sites!A:B,2,FALSE), saved without its "
        "result by a program that does not calculate; open the file in Excel or LibreOffice and save it.")
    assert summary["problems"] == {"formula-not-calculated": 2}


def _ods_text_cell(text: str) -> Any:
    """A text cell as LibreOffice writes it (odfpy), or an empty cell for ""."""
    from odf.table import TableCell
    from odf.text import P

    if not text:
        return TableCell()
    cell = TableCell(valuetype="string")
    cell.addElement(P(text=text))
    return cell


def test_an_ods_formula_saved_without_its_result_is_never_sent_as_empty_or_as_the_default(
        tmp_path: Path, sandbox) -> None:
    """odfpy writes an ODS formula as it is given, without calculating it: a formula cell with no value type,
    which python-calamine reads as an empty cell (and LibreOffice would calculate on opening)."""
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow

    formulas = {"Country": 'of:=IF(1;"MY";"SG")', "Cost Centre": 'of:="CC-"&"2"', "Shoe Size": "of:=37+1"}
    doc = OpenDocumentSpreadsheet()
    table = Table(name="Staff")
    for r, row in enumerate([dict(zip(HEADER, HEADER)), person(1, Country="MY"), person(2)]):
        cells = TableRow()
        for header in HEADER:
            if r == 2 and header in formulas:
                cell = TableCell(formula=formulas[header])
            else:
                cell = _ods_text_cell(row[header])
            cells.addElement(cell)
        table.addElement(cells)
    doc.spreadsheet.addElement(table)
    path = tmp_path / "staff.ods"
    doc.save(str(path))
    config = write_config(tmp_path / "staff.toml", extra='\n[staff.defaults]\ncountry = "SG"\n')

    result, summary = run_import(tmp_path, sandbox, path, config=config)

    assert result.exit_code == 1, result.output
    assert [(s["customer_system_id"], s["country"]) for s in sandbox.staff(99)] == [("000001", "MY")]
    second = outcome_of(tmp_path, "000002")
    assert [(p["code"], p["column"], p["value"]) for p in second["problems"]] == [
        ("formula-not-calculated", "Country", '=IF(1;"MY";"SG")'),
        ("formula-not-calculated", "Cost Centre", '="CC-"&"2"')]
    assert summary["problems"] == {"formula-not-calculated": 2}


def test_a_formula_calculated_to_empty_text_is_an_empty_cell(tmp_path: Path, sandbox, engine: str) -> None:
    """The same kind of file once LibreOffice calculated it (tests/fixtures/SOURCES.md): a formula whose result
    is empty text shows an empty cell, saved as such, so the config's default fills it as any empty cell."""
    config = write_config(tmp_path / "staff.toml", extra='\n[staff.defaults]\ncountry = "SG"\n')
    result, summary = run_import(tmp_path, sandbox, FIXTURES / "staff_formulas.xlsx", config=config)

    assert result.exit_code == 0, result.output
    assert [(s["customer_system_id"], s["country"]) for s in sandbox.staff(99)] == [("000001", "MY"), ("000002", "SG")]
    told = {v["kind"]: [(e["row"], e["read"], e["sent"]) for e in v["examples"]]
            for v in summary["values_read"] if v["field"] == "country"}
    assert told == {"formula-value": [(2, '=IF(1,"MY","SG")', "MY")], "default": [(3, "", "SG")]}


def test_a_formula_saved_with_a_stand_in_for_its_result_is_never_sent_as_that_stand_in(
        tmp_path: Path, sandbox, engine: str) -> None:
    """xlsxwriter, as other programs that write formulas without calculating them, saves 0 with each formula
    (or the value it is given) and asks the program opening the file to calculate them again: the reading
    libraries read that 0, which sent the cost centre 0 and the hire date 1899-12-31 where Excel shows CC-2
    and 2020-01-31. Person 3's 2 is only what the writer was told: not a result either."""
    path = write_formulas_workbook(tmp_path / "staff.xlsx")

    result, summary = run_import(tmp_path, sandbox, path)

    assert result.exit_code == 1, result.output
    assert [s["customer_system_id"] for s in sandbox.staff(99)] == ["000001"]
    second, third = outcome_of(tmp_path, "000002"), outcome_of(tmp_path, "000003")
    assert (second["row"], second["outcome"], third["outcome"]) == (3, "invalid", "invalid")
    assert [(p["code"], p["column"], p["value"]) for p in second["problems"] + third["problems"]] == [
        ("formula-not-calculated", "Hire Date", "=DATE(2020,1,31)"),
        ("formula-not-calculated", "Cost Centre", '="CC-"&"2"'),
        ("formula-not-calculated", "Cost Centre", "=1+1")]  # Shoe Size's =37+1: a column not sent
    assert third["problems"][0]["message"] == (
        "Row 4, column 'Cost Centre': the cell holds the formula =1+1, saved with the value 2 in a workbook that "
        "asks to be calculated again when opened, so that value is not a result to send; open the file in Excel "
        "and save it, or in LibreOffice choose Data > Calculate > Recalculate Hard and save it.")
    assert summary["problems"] == {"formula-not-calculated": 3}


def test_the_same_workbook_once_libreoffice_calculated_it_sends_the_results(
        tmp_path: Path, sandbox, engine: str) -> None:
    """That workbook recalculated by LibreOffice (tests/fixtures/SOURCES.md), which saves the results and no
    longer asks for a calculation: every person is sent with what Excel shows."""
    result, summary = run_import(tmp_path, sandbox, FIXTURES / "staff_recalculated.xlsx")

    assert result.exit_code == 0, result.output
    stored = {s["customer_system_id"]: (s["job_start_date"], {d["name"]: d["value"] for d in s["customer_data_type"]})
              for s in sandbox.staff(99)}
    assert stored == {"000001": ("2020-01-31", {"Cost Center": "CC-1"}), "000002": ("2020-01-31", {"Cost Center": "CC-2"}),
                      "000003": ("2020-01-31", {"Cost Center": "2"})}
    told = {(v["field"], v["kind"]): [(e["row"], e["read"], e["sent"]) for e in v["examples"]]
            for v in summary["values_read"] if v["kind"] == "formula-value"}
    assert told == {("job_start_date", "formula-value"): [(3, "=DATE(2020,1,31)", "2020-01-31")],
                    ("Cost Center", "formula-value"): [(3, '="CC-"&"2"', "CC-2"), (4, "=1+1", "2")]}


def _xls_with_errors(path: Path) -> Path:
    """The staff export as Excel 97-2003 (xlwt): row 3 shows #N/A in Country and #DIV/0! in Cost Centre, as
    a lookup pasted as values leaves them (BOOLERR records), and #N/A in Shoe Size, a column not sent."""
    import xlwt

    book = xlwt.Workbook()
    sheet = book.add_sheet("Staff")
    for c, header in enumerate(HEADER):
        sheet.write(0, c, header)
    errors = {"Country": 0x2A, "Cost Centre": 0x07, "Shoe Size": 0x2A}  # #N/A, #DIV/0! (xlwt misnames #N/A)
    for r, row in enumerate([person(1, Country="MY"), person(2)], start=1):
        for c, header in enumerate(HEADER):
            if r == 2 and header in errors:
                sheet.row(r).set_cell_error(c, errors[header])
            elif row[header]:
                sheet.write(r, c, row[header])
    book.save(str(path))
    return path


def _ods_with_errors(path: Path) -> Path:
    """The staff export as LibreOffice saves it (odfpy): row 3's Country a VLOOKUP that found nothing, its
    Cost Centre a division by zero, its Shoe Size (not sent) #N/A: formula cells whose result is an error,
    marked calcext:value-type="error" with the error as their text."""
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    errors = {"Country": ("of:=VLOOKUP(\"Berlin\";$Sites.A:B;2;0)", "#N/A"), "Cost Centre": ("of:=1/0", "#DIV/0!"),
              "Shoe Size": ("of:=NA()", "#N/A")}
    doc = OpenDocumentSpreadsheet()
    table = Table(name="Staff")
    for r, row in enumerate([dict(zip(HEADER, HEADER)), person(1, Country="MY"), person(2, Country="")]):
        cells = TableRow()
        for header in HEADER:
            if r == 2 and header in errors:
                formula, shown = errors[header]
                cell = TableCell(formula=formula, valuetype="string", stringvalue="")
                cell.setAttrNS("urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0",
                               "value-type", "error")
                cell.addElement(P(text=shown))
            else:
                cell = _ods_text_cell(row[header])
            cells.addElement(cell)
        table.addElement(cells)
    doc.spreadsheet.addElement(table)
    doc.save(str(path))
    return path


def _saved_by_libreoffice(path: Path) -> Path:
    """The same export saved by LibreOffice Calc, which calculated its formulas (tests/fixtures/SOURCES.md)."""
    return Path(shutil.copy(FIXTURES / f"staff_errors{path.suffix}", path))


@pytest.mark.parametrize(("name", "write"), [
    ("staff.xls", _xls_with_errors), ("staff.ods", _ods_with_errors),
    ("staff.xls", _saved_by_libreoffice), ("staff.ods", _saved_by_libreoffice),
], ids=["xls-xlwt", "ods-odfpy", "xls-libreoffice", "ods-libreoffice"])
def test_a_cell_an_xls_or_ods_shows_as_an_error_is_never_sent_as_the_default(
        tmp_path: Path, sandbox, name: str, write) -> None:
    """python-calamine reads an error cell of an XLS or ODS as an empty cell, as it does in an XLSX: the
    config's default country (SG) was sent for a person the sheet shows #N/A for."""
    path = write(tmp_path / name)
    config = write_config(tmp_path / "staff.toml", extra='\n[staff.defaults]\ncountry = "SG"\n')

    result, summary = run_import(tmp_path, sandbox, path, config=config)

    assert result.exit_code == 1, result.output
    assert [(s["customer_system_id"], s["country"]) for s in sandbox.staff(99)] == [("000001", "MY")]
    second = outcome_of(tmp_path, "000002")
    assert (second["row"], second["outcome"]) == (3, "invalid")
    assert [(p["code"], p["column"], p["value"]) for p in second["problems"]] == [
        ("error-value", "Country", "#N/A"), ("error-value", "Cost Centre", "#DIV/0!")]
    assert summary["problems"] == {"error-value": 2}


#: An FTE shown through 0%, a salary through #,##0.00 and a grade through 0, on rows 2-4 of the staff export.
FORMATTED = [(0.8, 1234.5678, 7), (1, 5200, 7), (0.8, 5200.5, 7)]
FORMATTED_HEADER = [*HEADER, "FTE", "Salary", "Grade"]


def _xlsx_with_formats(path: Path) -> Path:
    import xlsxwriter

    book = xlsxwriter.Workbook(str(path))
    percent, money, whole = (book.add_format({"num_format": code}) for code in ("0%", "#,##0.00", "0"))
    sheet = book.add_worksheet("Staff")
    sheet.write_row(0, 0, FORMATTED_HEADER)
    for r, numbers in enumerate(FORMATTED, start=1):
        sheet.write_row(r, 0, [person(r)[h] for h in HEADER])
        for c, (number, style) in enumerate(zip(numbers, (percent, money, whole)), start=len(HEADER)):
            sheet.write_number(r, c, number, style)
    book.close()
    return path


def _xls_with_formats(path: Path) -> Path:
    import xlwt

    book = xlwt.Workbook()
    sheet = book.add_sheet("Staff")
    styles = [xlwt.easyxf(num_format_str=code) for code in ("0%", "#,##0.00", "0")]
    for c, header in enumerate(FORMATTED_HEADER):
        sheet.write(0, c, header)
    for r, numbers in enumerate(FORMATTED, start=1):
        for c, header in enumerate(HEADER):
            sheet.write(r, c, person(r)[header])
        for c, (number, style) in enumerate(zip(numbers, styles), start=len(HEADER)):
            sheet.write(r, c, number, style)
    book.save(str(path))
    return path


def _ods_with_formats(path: Path) -> Path:
    """As LibreOffice writes them: percentage and number styles, each cell with its value and the text shown."""
    from odf.number import Number, NumberStyle, PercentageStyle
    from odf.number import Text as NumberText
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.style import Style
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    doc = OpenDocumentSpreadsheet()
    percent = PercentageStyle(name="N10")
    percent.addElement(Number(decimalplaces="0", minintegerdigits="1"))
    percent.addElement(NumberText(text="%"))
    money = NumberStyle(name="N4")
    money.addElement(Number(decimalplaces="2", minintegerdigits="1", grouping="true"))
    whole = NumberStyle(name="N1")
    whole.addElement(Number(decimalplaces="0", minintegerdigits="1"))
    for style in (percent, money, whole):
        doc.automaticstyles.addElement(style)
    for name, data_style in (("ce1", "N10"), ("ce2", "N4"), ("ce3", "N1")):
        doc.automaticstyles.addElement(Style(name=name, family="table-cell", datastylename=data_style))
    table = Table(name="Staff")
    header = TableRow()
    for text in FORMATTED_HEADER:
        header.addElement(_ods_text_cell(text))
    table.addElement(header)
    for r, (fte, salary, grade) in enumerate(FORMATTED, start=1):
        row = TableRow()
        for h in HEADER:
            row.addElement(_ods_text_cell(person(r)[h]))
        for kind, style, value, shown in (("percentage", "ce1", fte, f"{fte:.0%}"), ("float", "ce2", salary, f"{salary:,.2f}"),
                                          ("float", "ce3", grade, str(grade))):
            cell = TableCell(valuetype=kind, value=str(value), stylename=style)
            cell.addElement(P(text=shown))
            row.addElement(cell)
        table.addElement(row)
    doc.spreadsheet.addElement(table)
    doc.save(str(path))
    return path


def _formats_saved_by_libreoffice(path: Path) -> Path:
    """The xlsxwriter export converted by LibreOffice Calc (tests/fixtures/SOURCES.md)."""
    return Path(shutil.copy(FIXTURES / f"staff_formats{path.suffix}", path))


@pytest.mark.parametrize("name", ["staff.xlsx", "staff.xls", "streamed.xlsx"])
def test_serial_numbers_of_a_1904_workbook_are_its_dates_not_four_years_earlier(
        tmp_path: Path, sandbox, engine: str, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """32645 is 1993-05-18 in a workbook of the 1904 date system (what Excel shows when the cell is formatted
    as a date), and was sent as 1989-05-17: 1,462 days earlier, counted as the 1900 system counts."""
    if name.startswith("streamed"):  # a big workbook's way: this one is small, so the threshold goes down
        monkeypatch.setattr(reader, "STREAM_BYTES", 0)
    result, summary = run_import(tmp_path, sandbox, workbook_of_1904(tmp_path / name))

    assert result.exit_code == 0, result.output
    stored = {s["customer_system_id"]: (s["job_start_date"], s["birthdate"]) for s in sandbox.staff(99)}
    assert stored == {"000001": ("2020-01-31", "1993-05-18"), "000002": ("2015-07-15", "1984-02-11")}
    (serials,) = [v for v in summary["values_read"] if v["kind"] == "date-serial"]
    assert serials["rule"] == "days counted from 1904-01-01: this workbook uses Excel's 1904 date system"


@pytest.mark.parametrize(("name", "write", "fast_xlsx"), [
    ("staff.xlsx", _xlsx_with_formats, True), ("staff.xlsx", _xlsx_with_formats, False),
    ("staff.xls", _xls_with_formats, True), ("staff.ods", _ods_with_formats, True),
    ("staff.xls", _formats_saved_by_libreoffice, True), ("staff.ods", _formats_saved_by_libreoffice, True),
], ids=["xlsx-fastexcel", "xlsx-calamine", "xls-xlwt", "ods-odfpy", "xls-libreoffice", "ods-libreoffice"])
def test_a_number_shown_through_a_format_is_sent_as_stored_and_the_report_says_what_excel_shows(
        tmp_path: Path, sandbox, monkeypatch: pytest.MonkeyPatch, name: str, write, fast_xlsx: bool) -> None:
    """Excel shows 0.8 through 0% as 80% and 1234.5678 through #,##0.00 as 1,234.57: the number the cell stores
    is sent (rounding or scaling it would alter it), and "How values were read" lists each such cell with
    what Excel shows; a format that shows the number as it is read (7 through 0) is not listed."""
    monkeypatch.setattr(workbook, "FAST_XLSX", fast_xlsx)
    Store(sandbox.db_path).add_data_types(99, ["FTE", "Salary"])  # the company's own data types
    config = write_config(tmp_path / "staff.toml", extra='"FTE" = "FTE"\n"Salary" = "Salary"\n"Grade" = "Grade"\n')

    result, summary = run_import(tmp_path, sandbox, write(tmp_path / name), config=config)

    assert result.exit_code == 0, result.output
    stored = {s["customer_system_id"]: {d["name"]: d["value"] for d in s["customer_data_type"]} for s in sandbox.staff(99)}
    assert stored["000001"] == {"Cost Center": "CC-1", "FTE": "0.8", "Salary": "1234.5678", "Grade": "7"}
    assert [(stored[i]["FTE"], stored[i]["Salary"]) for i in ("000002", "000003")] == [("1", "5200"), ("0.8", "5200.5")]
    told = [(v["field"], v["rows"], v["rule"], [(e["row"], e["read"], e["sent"], e["rows"]) for e in v["examples"]])
            for v in summary["values_read"] if v["kind"] == "number-as-stored"]
    assert told == [
        ("FTE", 3, "number format 0%: the number the cell stores is sent", [(2, "80%", "0.8", 2), (3, "100%", "1", 1)]),
        ("Salary", 3, "number format #,##0.00: the number the cell stores is sent",
         [(2, "1,234.57", "1234.5678", 1), (3, "5,200.00", "5200", 1), (4, "5,200.50", "5200.5", 1)])]


def test_an_intern_sent_as_not_an_employee_is_told_in_how_values_were_read(tmp_path: Path, sandbox) -> None:
    """The sheet has no is_employee for an intern; false is sent (the platform's default, true, contradicts
    is_intern), and the report says so as it says every value sent that the sheet does not show."""
    rows = [person(1, **{"Is Intern": "Yes"}), person(2, **{"Is Intern": "No"})]
    result, summary = run_import(tmp_path, sandbox, rows)

    assert result.exit_code == 0, result.output
    stored = {s["customer_system_id"]: (s.get("is_intern"), s.get("is_employee")) for s in sandbox.staff(99)}
    assert stored["000001"] == (True, False)
    told = [v for v in summary["values_read"] if v["kind"] == "intern-not-employee"]
    assert [(v["field"], v["column"], v["rows"], [(e["row"], e["read"], e["sent"]) for e in v["examples"]])
            for v in told] == [("is_employee", "Is Intern", 1, [(2, "", "false")])]
    rows_told = [json.loads(line) for line in (latest_run(tmp_path).parent / "outcomes.jsonl").read_text().splitlines()[1:]]
    assert rows_told[0]["changed_values"]["is_employee"] == ["Is Employee", "", "false"]


def test_an_intern_with_another_role_is_told_the_columns_the_file_has(tmp_path: Path, sandbox) -> None:
    """A file without an is_employee column: the message names the columns to check, not the is_employee the
    tool fills in for interns, which no column of the file holds."""
    config = write_config(tmp_path / "staff.toml")
    config.write_text(config.read_text(encoding="utf-8").replace('"Is Employee" = "is_employee"\n', ""),
                      encoding="utf-8")
    result, _summary = run_import(tmp_path, sandbox, [person(1, **{"Is Intern": "Yes", "Is Manager": "Yes"})],
                                  config=config)

    assert result.exit_code == 1, result.output
    assert ("Row 2: an intern cannot also be a manager or an employee (check the columns 'Is Intern', "
            "'Is Manager').") in result.output
    assert sandbox.staff(99) == []


@pytest.mark.parametrize(("table", "setting", "fault"), [
    ("defaults", 'country = "Narnia"', ("[staff.defaults] country = 'Narnia' cannot be sent (unknown-country): "
                                       "'Narnia' is not a country we recognise")),
    ("constants", 'staff_type = "Permanent"', ("[staff.constants] staff_type = 'Permanent' cannot be sent "
                                              "(not-an-allowed-value): ")),
])
def test_a_config_value_the_checks_refuse_is_the_configs_mistake_not_the_rows(
        tmp_path: Path, sandbox, table: str, setting: str, fault: str) -> None:
    """A default or constant that cannot be sent was blamed on every row it filled ("Row 3, column
    'Country': 'Narnia' is not a country"), each row's own cell marked in to_fix for HR to correct, though the
    value was in the config, not the file: it is one line, exit 2, before anything is sent."""
    config = write_config(tmp_path / "staff.toml", extra=f"\n[staff.{table}]\n{setting}\n")

    result, _ = run_import(tmp_path, sandbox, [person(1), person(2, Country="")], config=config)

    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: staff.toml {fault}")
    assert result.output.rstrip().endswith("Correct it in the config.") and result.output.count("\n") == 1
    assert sandbox.staff(99) == [] and not list((tmp_path / "reports").glob("*/*/to_fix.*"))


def test_a_default_no_row_needs_and_a_valid_one_are_no_mistake(tmp_path: Path, sandbox) -> None:
    # every Country cell filled: the bad default is never used, as before; a good default fills the empty cell
    unused = write_config(tmp_path / "unused.toml", extra='\n[staff.defaults]\ncountry = "Narnia"\n')
    assert run_import(tmp_path, sandbox, [person(1), person(2)], config=unused)[0].exit_code == 0
    used = write_config(tmp_path / "used.toml", extra='\n[staff.defaults]\ncountry = "Malaysia"\n')
    result, _ = run_import(tmp_path, sandbox, [person(3, Country="")], config=used)
    assert result.exit_code == 0, result.output
    assert {s["customer_system_id"]: s["country"] for s in sandbox.staff(99)}["000003"] == "MY"


def test_a_workbook_cell_longer_than_excel_holds_holds_its_row_back_and_to_fix_shows_what_excel_would(
        tmp_path: Path, sandbox) -> None:
    """A broken writer put 40,000 characters in Person 2's name (Excel holds 32,767 in a cell, and shows none of
    a longer one): the row is held back (cell-too-long), the others are sent; to_fix.xlsx holds the row, its
    name cut to what a cell holds, and opens in Excel."""
    import io
    import zipfile

    import openpyxl

    book = Workbook()
    book.active.title = "Staff"
    book.active.append(HEADER)
    for n in (1, 2, 3):
        book.active.append([person(n)[h] for h in HEADER])
    buffer = io.BytesIO()
    book.save(buffer)
    export = tmp_path / "staff.xlsx"
    with zipfile.ZipFile(buffer) as original, zipfile.ZipFile(export, "w") as copy:
        for item in original.infolist():
            data = original.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data, found = re.subn(rb'<c r="B3"[^>]*>.*?</c>',
                                      b'<c r="B3" t="inlineStr"><is><t>' + b"N" * 40_000 + b"</t></is></c>", data)
                assert found == 1
            copy.writestr(item, data)

    result, summary = run_import(tmp_path, sandbox, export)

    assert result.exit_code == 1, result.output
    assert [e["customer_system_id"] for body in sandbox.bodies for e in json.loads(body)["bulk_staff_data"]] == [
        "000001", "000003"]
    assert summary["problems"] == {"cell-too-long": 1}
    assert ("Row 3, column 'Name': the cell holds 40,000 characters, more than a spreadsheet cell holds (32,767), "
            "so nobody can have read it in Excel; not sent: correct the cell in the HR system (a program wrote it) "
            "and export the file again.") in result.output
    to_fix = openpyxl.load_workbook(next((tmp_path / "reports").glob("*/*/to_fix.xlsx")))
    names = [row[1] for row in to_fix.worksheets[0].iter_rows(min_row=2, values_only=True)]
    assert [len(name) for name in names] == [32_767]
