"""A time-off POST the platform stored, answered with a failure: never retried, never doubled, healed.

The time-off endpoint is not idempotent. When the platform stores a record and then its answer is a 500,
a 502 or a 504 (a gateway timing out), or no answer comes within the client's read timeout, the record
exists although the client saw a failure. Repeating the POST could add it twice, so the client must not
retry it; the next run must find it (the ledger's ``sending`` entry and the service's 409 naming the same
record) and report the row ``added`` (the failed run's report told it failed, so this one tells it added),
never a second record or an overlap for HR to fix; the run after reads it ``already_imported``.

The sandbox's ``after`` fault rule causes this for real over HTTP: the endpoint runs, then the rule's
status replaces the answer, or the answer is held back beyond the client's read timeout.
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from hrimport.config import load_config
from hrimport.imports.timeoff import import_timeoff
from hrimport.outcomes import RunResult
from hrimport.service.client import open_client
from hrimport.service.connection import Target, service_host
from tests.test_timeoff_import import hrimport, run_import, write_xlsx

TOKEN = "demo-customer-99"
ENDPOINT = "/api/apply-ee-time-off"
# Retries without their waits, each policy's number of tries kept: a wrong retry shows as a second request.
pytestmark = pytest.mark.usefixtures("instant_retries")


def cli_import(tmp_path: Path, sandbox: Any, config: Path, source: Path) -> tuple[Result, RunResult]:
    return run_import(tmp_path, sandbox, source, config)


def posts(sandbox: Any) -> list[int]:
    """The statuses of the time-off POSTs the sandbox received, in order."""
    return [r["status"] for r in sandbox.requests() if r["path"].endswith(ENDPOINT)]


def assert_heals_on_the_next_run(tmp_path: Path, sandbox: Any, config: Path, source: Path,
                                 first: int) -> None:
    """Exactly one record is stored; the next run reports the row added by that send and adds nothing."""
    [record] = sandbox.time_off(99)
    assert (record["customer_system_id"], record["start_date"], record["end_date"]) == (
        "000101", "2024-03-04", "2024-03-08")
    result, again = cli_import(tmp_path, sandbox, config, source)
    assert result.exit_code == 0, result.output
    (row,) = again.rows
    assert row.outcome.value == "added"
    assert row.message.startswith(f"Added as time-off record {record['id']}: sent on ")
    assert {k: n for k, n in again.counts().items() if n} == {"added": 1}
    assert sandbox.time_off(99) == [record]  # never a second record
    assert posts(sandbox) == [first, 409]  # the second run's one POST found the lost one


@pytest.mark.parametrize("status", [500, 502, 504])
def test_a_post_stored_then_answered_an_error_is_not_retried_and_heals(
    tmp_path: Path, sandbox: Any, leave_file: tuple[Path, Path], status: int
) -> None:
    config, source = leave_file
    sandbox.set_faults(rules=[{"path": ENDPOINT, "status": status, "after": True, "count": 1}])
    result, run = cli_import(tmp_path, sandbox, config, source)
    assert result.exit_code == 1, result.output
    (row,) = run.rows
    assert (row.outcome.value, row.problem_codes) == ("failed", [f"http-{status}"])
    assert posts(sandbox) == [status]  # sent once: a repeat could have added the record twice
    assert_heals_on_the_next_run(tmp_path, sandbox, config, source, status)


def test_a_post_stored_then_stalled_beyond_the_read_timeout_is_not_retried_and_heals(
    tmp_path: Path, sandbox: Any, leave_file: tuple[Path, Path]
) -> None:
    config, source = leave_file
    sandbox.set_faults(rules=[{"path": ENDPOINT, "delay": 3, "after": True, "count": 1}])
    # The real import and client, with a read timeout short enough for a test (the CLI's is 30 s).
    with open_client(sandbox.base_url, TOKEN, timeout=0.5) as client:
        host = service_host(sandbox.base_url)
        run = import_timeoff(load_config(config), source, Target(client, "99", host, host))
    (row,) = run.rows
    assert (row.outcome.value, row.problem_codes) == ("failed", ["timeout"])
    assert run.exit_code == 1  # rows need attention; the service is not taken as lost
    deadline = time.monotonic() + 5
    while not posts(sandbox) and time.monotonic() < deadline:  # logged once the client has hung up
        time.sleep(0.05)
    assert posts(sandbox) == [499]  # sent once, the client gave up waiting; never sent again
    assert_heals_on_the_next_run(tmp_path, sandbox, config, source, 499)


def test_a_leave_type_hrimport_does_not_know_stored_then_answered_an_error_heals_too(
    tmp_path: Path, sandbox: Any, leave_file: tuple[Path, Path]
) -> None:
    """A type the list of leave types lacks is sent as written (a warning): the platform's 409 naming the lost
    record by that name proves it is the row's own, as a known type's does."""
    config, _ = leave_file
    added = hrimport(["sandbox", "add-leave-type", "--db", str(sandbox.db_path), "Volunteer Leave", "志愿假"])
    assert added.exit_code == 0, added.output
    source = write_xlsx(tmp_path / "volunteer.xlsx", [
        ["000101", "Volunteer Leave", dt.date(2024, 3, 4), dt.date(2024, 3, 8), "", "", "MY", "", ""]])
    sandbox.set_faults(rules=[{"path": ENDPOINT, "status": 502, "after": True, "count": 1}])
    result, run = cli_import(tmp_path, sandbox, config, source)
    assert result.exit_code == 1, result.output
    assert [p.code for p in run.rows[0].problems] == ["http-502", "unknown-leave-type"]
    assert_heals_on_the_next_run(tmp_path, sandbox, config, source, 502)


def test_a_record_with_a_region_code_found_by_the_next_run_is_not_told_the_doubt_the_platform_answered(
    tmp_path: Path, sandbox: Any, leave_file: tuple[Path, Path]
) -> None:
    """Stored, its answer lost: the next run finds it (the service's 409) and reports it added by that send,
    without the region-code warning its first send carried (the platform took the code)."""
    config, _ = leave_file
    source = write_xlsx(tmp_path / "region.xlsx", [
        ["000101", "Annual Leave", dt.date(2024, 3, 4), dt.date(2024, 3, 8), "", "", "US-CA", "", ""]])
    sandbox.set_faults(rules=[{"path": ENDPOINT, "status": 502, "after": True, "count": 1}])
    _, run = cli_import(tmp_path, sandbox, config, source)
    (row,) = run.rows
    assert (row.outcome.value, row.problem_codes) == ("failed", ["http-502", "region-code"])

    result, again = cli_import(tmp_path, sandbox, config, source)

    assert result.exit_code == 0, result.output
    (row,) = again.rows
    assert (row.outcome.value, row.problem_codes) == ("added", [])
    assert posts(sandbox) == [502, 409]


def test_a_record_found_by_the_next_run_is_not_told_it_is_sent_with_a_figure_and_shows_the_days_it_holds(
    tmp_path: Path, sandbox: Any, leave_file: tuple[Path, Path]
) -> None:
    """HR's 4.5 days where the service counts 5: the first run sends 4.5 and says so (total-days-differs), its
    answer lost. The next run, under total_days = "service", finds the record (the service's 409): the row is
    added by that send, not added again, and shows the 4.5 the record holds, without a warning saying it is sent
    with a figure, as the same row found by the ledger reads."""
    config, _ = leave_file
    source = write_xlsx(tmp_path / "differs.xlsx", [
        ["000101", "Annual Leave", dt.date(2024, 3, 4), dt.date(2024, 3, 8), "", "4.5", "MY", "", ""]])
    sandbox.set_faults(rules=[{"path": ENDPOINT, "status": 502, "after": True, "count": 1}])
    _, run = cli_import(tmp_path, sandbox, config, source)
    (row,) = run.rows
    assert (row.outcome.value, row.problem_codes) == ("failed", ["http-502", "total-days-differs"])
    config.write_text(config.read_text(encoding="utf-8").replace("[timeoff]\n", '[timeoff]\ntotal_days = "service"\n'),
                      encoding="utf-8")

    result, again = cli_import(tmp_path, sandbox, config, source)

    assert result.exit_code == 0, result.output
    (row,) = again.rows
    assert (row.outcome.value, row.problem_codes, row.details["total_days"]) == ("added", [], "4.5")
    assert "Warning:" not in result.output
    assert [r["total_days"] for r in sandbox.time_off(99)] == [4.5]
    assert posts(sandbox) == [502, 409]
