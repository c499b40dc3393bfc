"""Answers the interface allows that our sandbox never gives by itself: each row still gets one honest outcome.

The spec's "Errors" part shows its error bodies ({"error": "Invalid request"}; {"code": "ERROR_FATAL",
"message": "Access Denied", "payload": ""}) but no status: "HTTP status codes of error responses: not
shown". A platform may answer them with HTTP 200. And "Values of `message` for this endpoint [time off]:
not shown". The sandbox's ``body`` fault rule gives these answers for real over HTTP, before the endpoint
runs (nothing stored) or, with ``after``, once it has stored the change.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hrimport.errors import AccessDenied
from hrimport.outcomes import Outcome
from hrimport.service.client import ServiceClient, open_client
from hrimport.service.staff import submit_staff
from tests.test_submit import record
from tests.test_timeoff_import import add_staff, run_import, write_config, write_xlsx

TOKEN = "demo-customer-99"
TIME_OFF = "/api/apply-ee-time-off"
BULK = "/api/bulk_add_edit_staff"
INVALID = {"error": "Invalid request"}
ACCESS_DENIED = {"code": "ERROR_FATAL", "message": "Access Denied", "payload": ""}

pytestmark = pytest.mark.usefixtures("instant_retries")


@pytest.fixture
def client(sandbox: Any) -> Iterator[ServiceClient]:
    with open_client(sandbox.base_url, TOKEN) as c:
        yield c


def posts(sandbox: Any, endpoint: str) -> list[int]:
    return [r["status"] for r in sandbox.requests() if r["path"].endswith(endpoint)]


# ---------------------------------------------------------------------------------------- the sandbox


def test_a_rule_with_a_body_answers_it_as_given_and_stores_nothing_unless_after(sandbox: Any) -> None:
    sandbox.set_faults(rules=[{"path": "calculate-total-days", "body": INVALID, "count": 1},
                              {"path": "calculate-total-days", "status": 403, "body": ACCESS_DENIED, "count": 1}])
    days = {"country": "MY", "start_date": "2024-03-04", "end_date": "2024-03-08",
            "is_half_start_date": False, "is_half_end_date": False}
    answers = [sandbox.http.post("/api/calculate-total-days", json=days, headers=sandbox.auth()) for _ in range(3)]
    assert [(a.status_code, a.json()) for a in answers] == [(200, INVALID), (403, ACCESS_DENIED), (200, {"totaldays": 5})]
    assert [r["fault"] for r in sandbox.requests()] == ["rule", "rule", None]


def test_a_success_status_without_a_body_is_refused(sandbox: Any) -> None:
    response = sandbox.http.post(sandbox.root_url + "/_admin/faults", json={"rules": [{"status": 200}]})
    assert response.status_code == 422
    assert "status 200 is not an HTTP error; a rule answers a success only with its own body" in response.text


# ------------------------------------------------------------------------------------------- time off


def test_time_off_answered_200_with_the_spec_s_error_body_is_rejected_not_added(
    tmp_path: Path, sandbox: Any, leave_file: tuple[Path, Path]
) -> None:
    config, source = leave_file
    sandbox.set_faults(rules=[{"path": TIME_OFF, "body": INVALID, "count": 1}])
    result, run = run_import(tmp_path, sandbox, source, config)
    assert result.exit_code == 1, result.output
    (row,) = run.rows
    assert (row.outcome.value, row.problem_codes) == ("rejected", ["service-rejected"])
    assert row.message == "Row 2: the service refused it: Invalid request."
    assert sandbox.time_off(99) == []
    # nothing was stored and nothing is remembered as stored: the next run sends it and it is added
    result, again = run_import(tmp_path, sandbox, source, config)
    assert result.exit_code == 0, result.output
    assert [r.outcome.value for r in again.rows] == ["added"]
    assert len(sandbox.time_off(99)) == 1
    assert posts(sandbox, TIME_OFF) == [200, 200]


@pytest.mark.parametrize("after", [False, True], ids=["not-stored", "stored"])
def test_time_off_answered_200_without_its_record_is_failed_and_settled_by_the_next_run(
    tmp_path: Path, sandbox: Any, leave_file: tuple[Path, Path], after: bool
) -> None:
    config, source = leave_file
    sandbox.set_faults(rules=[{"path": TIME_OFF, "body": {"message": "leave could not be applied"},
                               "after": after, "count": 1}])
    result, run = run_import(tmp_path, sandbox, source, config)
    assert result.exit_code == 1, result.output
    (row,) = run.rows
    assert (row.outcome.value, row.problem_codes) == ("failed", ["unexpected-answer"])
    assert row.message == (
        "Row 2: the service answered POST /api/apply-ee-time-off without the time-off record it adds "
        "(message 'leave could not be applied'). Whether it stored it is not known: the next run finds it "
        "or sends it, never a second record.")
    assert len(sandbox.time_off(99)) == (1 if after else 0)
    result, again = run_import(tmp_path, sandbox, source, config)
    assert result.exit_code == 0, result.output
    # stored or not, the row is added once, in this report: the failed run's report did not tell it added
    assert [r.outcome.value for r in again.rows] == ["added"]
    assert len(sandbox.time_off(99)) == 1  # never a second record
    assert posts(sandbox, TIME_OFF) == [200, 409 if after else 200]


# ---------------------------------------------------------------------------------------------- staff


def test_a_batch_answered_200_with_the_spec_s_error_body_is_rejected_row_by_row(
    client: ServiceClient, sandbox: Any
) -> None:
    """Three rows answered {"error": "Invalid request"} in an HTTP 200, then one of them again alone: the
    batch is split as for a 400 without details, the row refused alone is rejected with the service's word,
    the others are added."""
    records = [record(row) for row in (2, 3, 4)]
    sandbox.set_faults(rules=[{"path": BULK, "body": INVALID, "count": 2}])
    result = submit_staff(client, "99", records, batch_size=3)
    outcomes = {o.row: (o.outcome, o.problem_codes, o.message) for o in result.outcomes}
    assert outcomes[2] == (Outcome.REJECTED, ["service-rejected"],
                           "Row 2: the service rejected the record: Invalid request")
    assert (outcomes[3][0], outcomes[4][0]) == (Outcome.ADDED, Outcome.ADDED)
    assert sorted(s["customer_system_id"] for s in sandbox.staff(99)) == sorted(
        r.external_id for r in records[1:])
    assert [r["elements"] for r in sandbox.requests()] == [3, 1, 2]


def test_the_vendor_listing_answered_200_with_access_denied_is_access_denied(
    client: ServiceClient, sandbox: Any
) -> None:
    sandbox.set_faults(rules=[{"path": "get_customer", "body": ACCESS_DENIED, "count": 1}])
    with pytest.raises(AccessDenied) as refused:
        client.get_customers()
    assert str(refused.value) == "the service rejected GET /vendor/get_customer (HTTP 200: Access Denied)"


# ------------------------------------------------------------------------- time off: days read back


@pytest.mark.parametrize(("days", "stored", "warned"), [("4.5", 4, True), ("5", 5, False)])
def test_a_platform_holding_whole_days_only_is_told_as_a_warning_on_the_row(
    tmp_path: Path, sandbox: Any, days: str, stored: int, warned: bool
) -> None:
    """The spec types the time-off record's total_days integer (the request's is a string): a platform may hold
    4 for HR's 4.5. The row is imported, and its report says what the platform holds."""
    add_staff(sandbox, [("000101", "MY")])
    source = write_xlsx(tmp_path / "leave.xlsx", [
        ["000101", "Annual Leave", dt.date(2024, 3, 4), dt.date(2024, 3, 8), "", days, "MY", "", ""]])
    sandbox.set_alterations(whole_days=True)
    result, run = run_import(tmp_path, sandbox, source, write_config(tmp_path))
    assert result.exit_code == 0, result.output  # imported: a warning only
    (row,) = run.rows
    assert row.outcome is Outcome.ADDED
    assert [r["total_days"] for r in sandbox.time_off(99)] == [stored]
    altered = [(p.code, p.severity, p.field, p.message) for p in row.problems if p.code == "platform-altered"]
    assert altered == ([("platform-altered", "warning", "total_days",
                         "Row 2: the platform altered total_days: sent '4.5', stored 4")] if warned else [])


def test_the_sandbox_stores_half_days_as_sent_unless_told_to_hold_whole_days(sandbox: Any) -> None:
    add_staff(sandbox, [("000101", "MY")])
    body = {"customer_id": 99, "customer_system_id": "000101", "leave_type": "Annual Leave", "lang": "EN",
            "country": "MY", "start_date": "2024-03-04", "end_date": "2024-03-08", "total_days": "4.5"}
    first = sandbox.http.post(TIME_OFF, json=body, headers=sandbox.auth())
    sandbox.set_alterations(whole_days=True)
    second = sandbox.http.post(TIME_OFF, json={**body, "start_date": "2024-04-01", "end_date": "2024-04-05"},
                               headers=sandbox.auth())
    assert [a.json()["time_off_data"]["total_days"] for a in (first, second)] == [4.5, 4]


def test_a_resend_of_a_lost_answer_refused_in_other_words_than_an_overlap_says_it_may_be_held(
    tmp_path: Path, sandbox: Any, leave_file: tuple[Path, Path]
) -> None:
    """Stored, then answered 500: the next run sends it again. A platform that answers the overlap with its
    generic {"error": "Invalid request"} (the spec shows no overlap error) does not make the row an ordinary
    refusal for HR to fix: it says the record may be held, keeps it as sent, and the run after finds it."""
    config, source = leave_file
    sandbox.set_faults(rules=[{"path": TIME_OFF, "status": 500, "after": True, "count": 1}])
    result, run = run_import(tmp_path, sandbox, source, config)
    assert [r.outcome.value for r in run.rows] == ["failed"]
    sandbox.set_faults(rules=[{"path": TIME_OFF, "status": 400, "body": INVALID, "count": 1}])
    result, again = run_import(tmp_path, sandbox, source, config)
    assert result.exit_code == 1, result.output
    (row,) = again.rows
    assert (row.outcome.value, row.problem_codes) == ("rejected", ["service-rejected"])
    assert row.message.startswith("Row 2: the service refused it: Invalid request. It was sent on ")
    assert row.message.endswith(
        " (from leave.xlsx row 2) and that answer was lost, so the platform may hold it already: check it there; "
        "the next run sends it again and reports it added when the platform says it holds it.")
    result, third = run_import(tmp_path, sandbox, source, config)
    assert result.exit_code == 0, result.output
    assert [r.outcome.value for r in third.rows] == ["added"]  # told added by no report before
    assert len(sandbox.time_off(99)) == 1
    assert posts(sandbox, TIME_OFF) == [500, 400, 409]


@pytest.mark.parametrize("status", [403, 200])
def test_a_batch_refused_access_is_permission_denied_not_rows_to_correct(
    client: ServiceClient, sandbox: Any, status: int
) -> None:
    """api-notes: 403 is "missing scope or admin access"; the spec's Access Denied body may come with any status.
    The rows are fine: each is permission_denied (ask for access), never rejected for HR to correct."""
    records = [record(row) for row in (2, 3)]
    sandbox.set_faults(rules=[{"path": BULK, "status": status, "body": ACCESS_DENIED, "count": 1}])
    result = submit_staff(client, "99", records, batch_size=2)
    assert [(o.row, o.outcome, o.problem_codes, o.message) for o in result.outcomes] == [
        (row, Outcome.PERMISSION_DENIED, ["permission-denied"],
         (f"Row {row}: the service denied the import account access to staff records of customer 99 "
          f"(HTTP {status}: Access Denied)")) for row in (2, 3)]
    assert sandbox.staff(99) == []
    assert [r["elements"] for r in sandbox.requests()] == [2]  # not split: no row is at fault


def test_a_resend_of_a_lost_answer_refused_access_says_so_not_that_the_platform_may_hold_it(
    tmp_path: Path, sandbox: Any, leave_file: tuple[Path, Path]
) -> None:
    """Stored, then answered 500; sent again, answered 403: the import account lost its access. That is no
    overlap in other words, so the row says what the service said, not "the platform may hold it already:
    check it there", which would send HR to look for a record instead of asking for access."""
    config, source = leave_file
    sandbox.set_faults(rules=[{"path": TIME_OFF, "status": 500, "after": True, "count": 1}])
    run_import(tmp_path, sandbox, source, config)
    sandbox.set_faults(rules=[{"path": TIME_OFF, "status": 403, "count": 1}])
    result, again = run_import(tmp_path, sandbox, source, config)
    (row,) = again.rows
    assert (row.outcome.value, row.problem_codes) == ("rejected", ["permission-denied"]), result.output
    assert "may hold it already" not in row.message
    assert row.message.startswith("Row 2: the service refused it: ")
    assert posts(sandbox, TIME_OFF) == [500, 403]
