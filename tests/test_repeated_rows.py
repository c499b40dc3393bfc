"""An export that lists a person twice: a row repeated exactly is sent once and shares the outcome of the row it
repeats; rows sharing an external id that differ in any value sent are all held back (``duplicate-id``).

Real imports into the sandbox over HTTP, from CSV files written by the csv module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from hrimport.config import load_config
from hrimport.imports import import_file
from tests.staff_files import HEADER, person, write_config, write_csv
from tests.test_staff_import import hrimport, latest_run

pytestmark = pytest.mark.usefixtures("instant_retries")

REPEAT_OF_ROW_2 = ("Row 4 repeats row 2: the same external id '000001' ('Employee ID') and the same value in every "
                   "field sent, so the person is sent once, with row 2, and this row shares its outcome.")


def staff_command(tmp_path: Path, sandbox: Any, command: str, rows: list[dict[str, str]], *args: str,
                  name: str = "staff.csv") -> Result:
    config = tmp_path / "staff.toml"
    if not config.exists():
        write_config(config)
    data = write_csv(tmp_path / name, rows)
    reports = ("--report-dir", str(tmp_path / "reports")) if command != "validate" else ()
    return hrimport("staff", command, str(config), str(data), *reports, *args, base_url=sandbox.base_url)


def run_month(tmp_path: Path, sandbox: Any, rows: list[dict[str, str]], name: str) -> Any:
    """A month's file imported as ``hrimport run`` imports it: the people unchanged since the platform last
    accepted them (the state folder beside the config) are not sent again."""
    config = tmp_path / "staff.toml"
    if not config.exists():
        write_config(config)
    return import_file(load_config(config), write_csv(tmp_path / name, rows), base_url=sandbox.base_url,
                       report_folder=tmp_path / "reports" / name, skip_unchanged=True).result


def row_lines(folder: Path) -> list[dict[str, Any]]:
    """The run's outcomes.jsonl, one line per row."""
    lines = (folder / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()
    return [record for record in map(json.loads, lines) if record["record"] == "row"]


def sent_elements(sandbox: Any) -> list[dict[str, Any]]:
    """Every staff element the sandbox received, in the order it received them."""
    return [element for body in sandbox.bodies for element in json.loads(body)["bulk_staff_data"]]


def codes(row: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(p["code"], p["severity"], p["row"]) for p in row["problems"]]


def test_a_row_the_export_repeated_is_sent_once_and_both_rows_are_imported(tmp_path: Path, sandbox: Any) -> None:
    # row 4 writes the country by name, row 2 by code: what is sent is the same, so the rows are the same person
    rows = [person(1), person(2), person(1, Country="Malaysia"), person(3)]
    result = staff_command(tmp_path, sandbox, "import", rows)

    assert result.exit_code == 0, result.output  # a warning, not a row needing attention
    assert "4 of 4 rows imported (1 with warnings)." in result.output
    assert f"Warning: {REPEAT_OF_ROW_2}" in result.output
    elements = sent_elements(sandbox)
    assert [e["customer_system_id"] for e in elements] == ["000001", "000002", "000003"]
    assert elements[0] == {
        "customer_system_id": "000001", "customer_system_id_type": "TestHRIS", "name": "Person 1",
        "system_email": "person1@acme.example", "country": "MY", "job_title": "Analyst",
        "job_start_date": "2020-01-31", "staff_type": "Payroll", "gender": "Female",
        "customer_data_type": [{"name": "Cost Center", "value": "CC-1"}],
    }
    assert sorted(s["customer_system_id"] for s in sandbox.staff(99)) == ["000001", "000002", "000003"]

    folder = latest_run(tmp_path).parent
    lines = row_lines(folder)
    assert [(r["row"], r["external_id"], r["outcome"]) for r in lines] == [
        (2, "000001", "added"), (3, "000002", "added"), (4, "000001", "added"), (5, "000003", "added")]
    assert codes(lines[0]) == [] and codes(lines[2]) == [("duplicate-row", "warning", 4)]
    assert lines[2]["problems"][0]["message"] == REPEAT_OF_ROW_2
    assert lines[2]["message"] == f"Shares row 2's outcome: {lines[0]['message']}"
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert (summary["counts"]["added"], summary["imported"], summary["exit_code"]) == (4, 4, 0)
    assert summary["warnings"] == {"duplicate-row": 1}
    assert any("1 row repeats an earlier row exactly" in note and "sent once" in note for note in summary["notes"])
    assert "Row repeated" in (folder / "report.html").read_text(encoding="utf-8")


def test_a_repeat_is_told_what_the_platform_did_to_the_row_it_repeats(tmp_path: Path, sandbox: Any) -> None:
    # the platform cuts the title of person 1 as it stores row 2: row 4, the same person again and not sent,
    # says so too, as the report's reader of row 4 would otherwise think its title stored whole
    sandbox.set_alterations(truncate_text=8)
    rows = [person(1, Title="Payroll Analyst"), person(2, Title="CFO"),
            person(1, Title="Payroll Analyst", Country="Malaysia")]
    result = staff_command(tmp_path, sandbox, "import", rows)

    assert result.exit_code == 0, result.output
    assert "3 of 3 rows imported (2 with warnings)." in result.output
    assert [e["customer_system_id"] for e in sent_elements(sandbox)] == ["000001", "000002"]
    lines = row_lines(latest_run(tmp_path).parent)
    altered = "the platform altered job_title (cut to 8 characters): sent 'Payroll Analyst', stored 'Payroll '"
    assert [(r["row"], r["outcome"], codes(r)) for r in lines] == [
        (2, "added", [("platform-altered", "warning", 2)]), (3, "added", []),
        (4, "added", [("platform-altered", "warning", 4), ("duplicate-row", "warning", 4)])]
    assert lines[0]["problems"][0]["message"] == f"Row 2, column 'Title': {altered}"
    assert lines[2]["problems"][0]["message"] == f"Row 4 (as row 2), column 'Title': {altered}"
    assert lines[2]["problems"][1]["message"] == REPEAT_OF_ROW_2
    assert f"Warning: Row 4 (as row 2), column 'Title': {altered}" in result.output


@pytest.mark.parametrize(("change", "column"), [
    ({"Title": "Senior Analyst"}, "Title"),
    ({"Cost Centre": "CC-2"}, "Cost Centre"),  # custom data is sent too
    ({"Hire Date": "2021-02-30"}, "Hire Date"),  # the repeat itself is invalid: nothing to send for it
])
def test_rows_sharing_an_id_that_differ_in_anything_sent_are_all_held_back(
        tmp_path: Path, sandbox: Any, change: dict[str, str], column: str) -> None:
    rows = [person(1), person(2), person(1, **change)]
    result = staff_command(tmp_path, sandbox, "import", rows)

    assert result.exit_code == 1, result.output
    assert [e["customer_system_id"] for e in sent_elements(sandbox)] == ["000002"]
    lines = row_lines(latest_run(tmp_path).parent)
    assert [r["outcome"] for r in lines] == ["invalid", "added", "invalid"]
    assert [c for c, _, _ in codes(lines[0])] == ["duplicate-id"]
    assert "duplicate-id" in [c for c, _, _ in codes(lines[2])]
    assert "duplicate-row" not in result.output


def test_a_column_sent_nowhere_does_not_make_two_rows_differ(tmp_path: Path, sandbox: Any) -> None:
    # 'Shoe Size' is neither mapped nor packed: the platform would receive the same person twice
    rows = [person(1, **{"Shoe Size": "38"}), person(2), person(1, **{"Shoe Size": "41"})]
    result = staff_command(tmp_path, sandbox, "validate", rows)

    assert result.exit_code == 0, result.output
    assert f"Warning: {REPEAT_OF_ROW_2}" in result.output
    assert "3 of 3 rows checked (1 with warnings)." in result.output


def test_a_person_listed_three_times_is_sent_once_and_every_row_has_one_outcome(tmp_path: Path, sandbox: Any) -> None:
    rows = [person(1), person(1), person(2), person(1)]
    result = staff_command(tmp_path, sandbox, "import", rows, "--dry-run")

    assert result.exit_code == 0, result.output
    folder = latest_run(tmp_path).parent
    lines = row_lines(folder)
    assert [(r["row"], r["outcome"], codes(r)) for r in lines] == [
        (2, "valid", []), (3, "valid", [("duplicate-row", "warning", 3)]), (4, "valid", []),
        (5, "valid", [("duplicate-row", "warning", 5)])]
    assert all("repeats row 2:" in r["problems"][0]["message"] for r in (lines[1], lines[3]))
    payloads = [json.loads(line) for line in (folder / "payloads.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [e["customer_system_id"] for body in payloads for e in body["bulk_staff_data"]] == ["000001", "000002"]
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["counts"]["valid"] == 4 and summary["warnings"] == {"duplicate-row": 2}
    run = json.loads((folder / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert run["plan"]["counts"]["new"] == 2  # two people, each planned once


def test_a_repeat_of_a_row_the_platform_refuses_is_refused_with_it(tmp_path: Path, sandbox: Any) -> None:
    config = write_config(tmp_path / "staff.toml")
    # "Shoe Size" is not a company data type of customer 99: the service refuses a row that sends it
    config.write_text(config.read_text().replace('"Cost Centre" = "Cost Center"',
                                                 '"Cost Centre" = "Cost Center"\n"Shoe Size" = "Shoe Size"'))
    rows = [person(1, **{"Shoe Size": ""}), person(2), person(1, **{"Shoe Size": ""}), person(2)]
    result = staff_command(tmp_path, sandbox, "import", rows)

    assert result.exit_code == 1, result.output
    lines = row_lines(latest_run(tmp_path).parent)
    assert [(r["row"], r["outcome"]) for r in lines] == [(2, "added"), (3, "rejected"), (4, "added"), (5, "rejected")]
    assert [c for c, _, _ in codes(lines[3])] == [lines[1]["problems"][0]["code"], "duplicate-row"]
    assert lines[3]["problems"][0]["message"].startswith("Row 5 (as row 3): ")
    assert lines[3]["source"]["Employee ID"] == "000002"  # in to_fix, as the row it repeats
    fix = (latest_run(tmp_path).parent / "to_fix.csv").read_text(encoding="utf-8-sig").splitlines()
    assert len(fix) == 3  # the header, rows 3 and 5
    # the repeat (row 5) never reached the platform: the batch of rows 2 and 3, refused, went again without row 3,
    # and row 3, named by the refusal, once more on its own (which showed how the service numbers elements)
    assert sorted(e["customer_system_id"] for e in sent_elements(sandbox)) == ["000001", "000001", "000002", "000002"]


def test_the_same_file_again_leaves_both_rows_unchanged_and_sends_nothing(
        tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HRIMPORT_TOKEN", "demo-customer-99")
    rows = [person(1), person(2), person(1)]
    assert run_month(tmp_path, sandbox, rows, "october.csv").exit_code == 0
    sandbox.clear_requests()

    again = run_month(tmp_path, sandbox, rows, "november.csv")
    assert again.exit_code == 0
    assert sandbox.bodies == []
    lines = row_lines(tmp_path / "reports" / "november.csv")
    assert [(r["row"], r["outcome"]) for r in lines] == [(2, "unchanged"), (3, "unchanged"), (4, "unchanged")]
    assert codes(lines[2]) == [("duplicate-row", "warning", 4)]
    assert again.info.plan is not None and again.info.plan["counts"]["unchanged"] == 2


def test_a_changed_person_listed_five_times_is_one_change_to_the_plan_and_the_drift_guard(
        tmp_path: Path, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HRIMPORT_TOKEN", "demo-customer-99")
    october = [person(n) for n in range(1, 11)]
    assert run_month(tmp_path, sandbox, october, "october.csv").exit_code == 0
    sandbox.clear_requests()
    # one person in ten changes (the guard holds over 30%): counted five times, it would be 5 of 14
    changed = person(1, Title="Lead")
    november = [changed, *october[1:], *(dict(changed) for _ in range(4))]

    result = run_month(tmp_path, sandbox, november, "november.csv")
    assert result.exit_code == 0 and not result.info.held
    assert result.counts()["updated"] == 5 and result.counts()["unchanged"] == 9
    assert result.info.plan is not None
    assert result.info.plan["counts"] == {"new": 0, "changed": 1, "unchanged": 9, "invalid": 0, "missing": 0}
    assert result.info.plan["fields"] == {"job_title": 1}
    assert [e["customer_system_id"] for e in sent_elements(sandbox)] == ["000001"]
    assert {s["customer_system_id"]: s["job_title"] for s in sandbox.staff(99)}["000001"] == "Lead"


@pytest.mark.parametrize("chunk_rows", [1, 7])
def test_a_repeat_far_down_a_file_read_in_chunks_is_sent_once_as_in_a_whole_read(
        tmp_path: Path, start_sandbox: Any, monkeypatch: pytest.MonkeyPatch, chunk_rows: int) -> None:
    """The repeat 25 rows later, in another chunk, is found and shares its row's outcome, whatever the cut."""
    monkeypatch.setenv("HRIMPORT_TOKEN", "demo-customer-99")
    rows = [person(n) for n in range(1, 31)]
    rows[27] = dict(rows[2])  # person 3 again, exactly
    rows[28] = person(5, Title="Lead")  # person 5 again, otherwise
    source = write_csv(tmp_path / "staff.csv", rows, HEADER)

    def imported(name: str, chunk: int | None) -> tuple[Any, list[dict[str, Any]]]:
        server = start_sandbox(tmp_path / f"{name}.db")
        config = load_config(write_config(tmp_path / f"{name}.toml"))
        run = import_file(config, source, base_url=server.base_url, report_folder=tmp_path / name, chunk_rows=chunk,
                          batch_size=8)
        assert run.result.exit_code == 1
        return server, row_lines(tmp_path / name)

    whole_server, whole = imported("whole", None)
    chunked_server, chunked = imported("chunked", chunk_rows)

    assert chunked_server.bodies == whole_server.bodies
    assert [e["customer_system_id"] for e in sent_elements(chunked_server)].count("000003") == 1
    assert "000005" not in [e["customer_system_id"] for e in sent_elements(chunked_server)]
    assert chunked == whole
    by_row = {r["row"]: r for r in chunked}
    assert len(chunked) == 30
    assert (by_row[4]["outcome"], by_row[29]["outcome"]) == ("added", "added")
    assert codes(by_row[29]) == [("duplicate-row", "warning", 29)]
    assert "repeats row 4:" in by_row[29]["problems"][0]["message"]
    assert [(by_row[r]["outcome"], codes(by_row[r])) for r in (6, 30)] == [
        ("invalid", [("duplicate-id", "error", 6)]), ("invalid", [("duplicate-id", "error", 30)])]
