"""Faults on demand and the request log, over real HTTP."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import pytest

from hrimport.sandbox.faults import FaultSettings

BULK = "/api/bulk_add_edit_staff"
DAYS = "/api/calculate-total-days"
DAYS_BODY = {"country": "MY", "start_date": "2024-06-10", "end_date": "2024-06-14"}


def element(system_id: str = "E1") -> dict[str, Any]:
    return {
        "customer_system_id": system_id,
        "customer_system_id_type": "BambooHR",
        "name": "Aisha Rahman",
        "system_email": "aisha@acme.example",
        "country": "MY",
        "job_title": "Analyst",
        "job_start_date": "2023-03-01",
        "staff_type": "Payroll",
    }


def bulk(sandbox: Any, *ids: str) -> httpx.Response:
    body = {"customer_id": "99", "bulk_staff_data": [element(i) for i in ids or ("E1",)]}
    return sandbox.http.post(BULK, json=body, headers=sandbox.auth())


def calc(sandbox: Any) -> httpx.Response:
    return sandbox.http.post(DAYS, json=DAYS_BODY, headers=sandbox.auth())


def test_next_two_bulk_requests_answer_503_then_the_service_recovers(sandbox: Any) -> None:
    sandbox.set_faults(rules=[{"path": BULK, "status": 503, "count": 2}])
    assert calc(sandbox).status_code == 200  # another path is untouched
    assert [bulk(sandbox).status_code for _ in range(3)] == [503, 503, 200]
    assert sandbox.staff(99)[0]["customer_system_id"] == "E1"  # faulted requests stored nothing, once
    assert len(sandbox.staff(99)) == 1
    log = [(r["path"].rsplit("/", 1)[1], r["status"], r["fault"], r["elements"]) for r in sandbox.requests()]
    assert log == [
        ("calculate-total-days", 200, None, None),
        ("bulk_add_edit_staff", 503, "rule", 1),  # faulted requests are logged with their elements too
        ("bulk_add_edit_staff", 503, "rule", 1),
        ("bulk_add_edit_staff", 200, None, 1),
    ]


def test_rules_run_in_order_with_skip_and_method(sandbox: Any) -> None:
    sandbox.set_faults(
        rules=[
            {"path": BULK, "status": 500, "count": 1, "skip": 1},
            {"path": BULK, "status": 429, "retry_after": 7, "count": 1},
            {"method": "GET", "status": 502, "count": 5},
        ]
    )
    responses = [bulk(sandbox) for _ in range(4)]
    assert [r.status_code for r in responses] == [200, 500, 429, 200]
    assert responses[2].headers["Retry-After"] == "7"
    remaining = sandbox.get_faults()["rules"]
    assert [(r["count"], r["skip"]) for r in remaining] == [(0, 0), (0, 0), (5, 0)]


def test_a_rule_names_an_endpoint_in_either_spelling_and_acts_at_both_of_its_addresses(sandbox: Any) -> None:
    # The README writes /api/bulk_add_edit_staff; the platform's material also spells it with hyphens
    sandbox.set_faults(rules=[{"path": "bulk_add_edit_staff", "status": 503, "count": 2},
                              {"path": "/api/add-edit-staff", "status": 502, "count": 1}])
    body = {"customer_id": "99", "bulk_staff_data": [element()]}
    hyphened = sandbox.http.post("/api/bulk-add-edit-staff", json=body, headers=sandbox.auth())
    assert (hyphened.status_code, bulk(sandbox).status_code, bulk(sandbox).status_code) == (503, 503, 200)
    single = {"customer_id": 99, **element("E2")}
    assert sandbox.http.post("/api/add_edit_staff", json=single, headers=sandbox.auth()).status_code == 502
    assert [r["status"] for r in sandbox.requests()] == [503, 503, 200, 502]


def test_a_rule_naming_the_single_staff_endpoint_leaves_bulk_alone(sandbox: Any) -> None:
    sandbox.set_faults(rules=[{"path": "add_edit_staff", "status": 503, "count": 1}])
    assert bulk(sandbox).status_code == 200  # bulk_add_edit_staff ends in "add_edit_staff" but is another endpoint
    single = {"customer_id": 99, **element("E2")}
    assert sandbox.http.post("/api/add-edit-staff", json=single, headers=sandbox.auth()).status_code == 503


UNKNOWN_ENDPOINT = ("is not an endpoint of the sandbox; give one of /vendor/get_customer, /api/add_edit_staff, "
                    "/api/bulk_add_edit_staff, /api/calculate-total-days, /api/apply-ee-time-off (or its end, e.g. "
                    "bulk_add_edit_staff; - and _ alike)")


@pytest.mark.parametrize(("path", "message"), [
    ("/api/bulk_add_staff", f"'/api/bulk_add_staff' {UNKNOWN_ENDPOINT}"),  # a word missing: it would never act
    ("staff", f"'staff' {UNKNOWN_ENDPOINT}"),  # ends two endpoints' names, but is neither
    ("/sandbox/bulk_add_edit_staff", f"'/sandbox/bulk_add_edit_staff' {UNKNOWN_ENDPOINT}"),
    ("/", "'/' names no endpoint; leave path out to match every endpoint"),
])
def test_a_rule_naming_no_endpoint_is_refused_with_the_known_ones(sandbox: Any, path: str, message: str) -> None:
    sandbox.set_faults(rules=[{"path": BULK, "status": 503, "count": 1}])
    response = sandbox.http.post(sandbox.root_url + "/_admin/faults", json={"rules": [{"path": path, "status": 503}]})
    assert response.status_code == 422
    (problem,) = response.json()["detail"]
    assert (problem["loc"], problem["msg"]) == (["body", "rules", 0, "path"], f"Value error, {message}")
    assert [r["path"] for r in sandbox.get_faults()["rules"]] == [BULK]  # the settings in force are kept


def test_every_endpoint_the_sandbox_serves_may_be_named_in_a_rule(sandbox: Any) -> None:
    from hrimport.sandbox.faults import API_PREFIX, ENDPOINTS, path_segments

    health = sandbox.http.get(sandbox.root_url + "/").text  # lists every route, both spellings included
    served = set(re.findall(r"<code>[A-Z, ]+ (/sandbox/[^<]+)</code>", health))
    assert "/sandbox/api/bulk-add-edit-staff" in served
    assert {path_segments(p) for p in served} == {path_segments(API_PREFIX + e) for e in ENDPOINTS}


@pytest.mark.parametrize("statuses", [[600], [200, 503], [302], []])
def test_error_statuses_must_be_http_errors(sandbox: Any, statuses: list[int]) -> None:
    response = sandbox.http.post(sandbox.root_url + "/_admin/faults", json={"error_rate": 1, "error_statuses": statuses})
    assert response.status_code == 422
    assert calc(sandbox).status_code == 200  # no fault in force


def test_a_429_rule_sends_retry_after_one_second_by_default(sandbox: Any) -> None:
    sandbox.set_faults(rules=[{"status": 429}])
    response = calc(sandbox)
    assert response.status_code == 429 and response.headers["Retry-After"] == "1"
    assert response.json()["error"] == "Too many requests"


def test_rate_limit_answers_429_with_retry_after(sandbox: Any) -> None:
    sandbox.set_faults(rate_limit=3, retry_after=2)
    statuses = [calc(sandbox).status_code for _ in range(5)]
    assert statuses[:3] == [200, 200, 200] and statuses[3:] == [429, 429]
    assert calc(sandbox).headers.get("Retry-After") == "2"
    assert sum(r["fault"] == "rate_limit" for r in sandbox.requests()) == 3


def test_latency_is_added(sandbox: Any) -> None:
    sandbox.set_faults(latency=0.3)
    started = time.monotonic()
    assert calc(sandbox).status_code == 200
    assert time.monotonic() - started >= 0.3


def test_dropped_connection_happens_after_the_change_is_stored(sandbox: Any) -> None:
    sandbox.set_faults(rules=[{"path": BULK, "drop": True}])
    with pytest.raises(httpx.RemoteProtocolError):
        bulk(sandbox)
    assert len(sandbox.staff(99)) == 1  # stored although the caller saw no answer
    retry = bulk(sandbox)
    assert retry.json()["result"][0]["message"] == "Update Successfully"  # a retry updates, never duplicates
    assert len(sandbox.staff(99)) == 1
    assert [r["fault"] for r in sandbox.requests()] == ["drop", None]


def test_error_rate_draws_from_the_configured_statuses_reproducibly(sandbox: Any) -> None:
    sandbox.set_faults(error_rate=0.5, error_statuses=[500, 503], seed=7)
    first = [calc(sandbox).status_code for _ in range(12)]
    sandbox.set_faults(error_rate=0.5, error_statuses=[500, 503], seed=7)
    second = [calc(sandbox).status_code for _ in range(12)]
    assert first == second
    assert set(first) == {200, 500, 503}


def test_every_request_fails_at_error_rate_one_until_faults_are_cleared(sandbox: Any) -> None:
    sandbox.set_faults(error_rate=1.0, error_statuses=[502])
    assert calc(sandbox).status_code == 502
    sandbox.clear_faults()
    assert calc(sandbox).status_code == 200
    assert sandbox.get_faults() == FaultSettings().model_dump()


def test_faults_given_at_start(tmp_path: Any, start_sandbox: Any) -> None:
    server = start_sandbox(tmp_path / "faulty.db", FaultSettings.from_spec("error_rate=1,statuses=503"))
    assert calc(server).status_code == 503
    assert server.http.get(server.root_url + "/").status_code == 200  # the health page is never faulted


def test_faults_survive_a_restart_of_the_fixture(sandbox: Any) -> None:
    sandbox.set_faults(rules=[{"path": DAYS, "status": 503, "count": 2}])
    assert calc(sandbox).status_code == 503
    sandbox.restart()
    assert [calc(sandbox).status_code for _ in range(2)] == [503, 200]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "error_rate=0.2,latency=0.05,statuses=500/503",
            {"error_rate": 0.2, "latency": 0.05, "error_statuses": [500, 503]},
        ),
        (
            "rate-limit=5, retry_after=3, drop_rate=0.1, seed=4",
            {"rate_limit": 5, "retry_after": 3, "drop_rate": 0.1, "seed": 4},
        ),
        (
            '{"rules": [{"path": "/api/add_edit_staff", "status": 503, "count": 2}]}',
            {"rules": [{"path": "/api/add_edit_staff", "status": 503, "count": 2}]},
        ),
    ],
)
def test_fault_spec_of_the_command_line(spec: str, expected: dict[str, Any]) -> None:
    settings = FaultSettings.from_spec(spec).model_dump(exclude_defaults=True)
    rules = settings.pop("rules", None)
    assert {k: v for k, v in expected.items() if k != "rules"} == settings
    if rules is not None:
        assert [{k: r[k] for k in ("path", "status", "count")} for r in rules] == expected["rules"]


@pytest.mark.parametrize("spec", ["error_rate=2", "bogus=1", "latency"])
def test_bad_fault_spec_is_refused(spec: str) -> None:
    with pytest.raises(ValueError):
        FaultSettings.from_spec(spec)


def test_bad_fault_settings_at_run_time_are_422(sandbox: Any) -> None:
    response = sandbox.http.post(sandbox.root_url + "/_admin/faults", json={"error_rate": 5})
    assert response.status_code == 422


def test_request_log_records_time_method_path_status_and_elements(sandbox: Any) -> None:
    before = time.time()
    bulk(sandbox, "E1", "E2", "E3")
    calc(sandbox)
    sandbox.http.get("/api/no-such-endpoint")
    sandbox.staff()  # admin routes and the health page are not logged
    log = sandbox.requests()
    assert [(r["method"], r["path"], r["status"], r["elements"]) for r in log] == [
        ("POST", "/sandbox/api/bulk_add_edit_staff", 200, 3),
        ("POST", "/sandbox/api/calculate-total-days", 200, None),
        ("GET", "/sandbox/api/no-such-endpoint", 404, None),
    ]
    assert all(before - 1 <= r["time"] <= time.time() for r in log)
    sandbox.clear_requests()
    assert sandbox.requests() == []


def test_a_caller_that_hangs_up_mid_request_is_logged_as_499_without_an_error(
    sandbox: Any, caplog: pytest.LogCaptureFixture
) -> None:
    import socket

    with socket.create_connection(("127.0.0.1", sandbox.port)) as conn:
        conn.sendall(
            b"POST /sandbox/api/bulk_add_edit_staff HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer demo-customer-99\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"customer_id\": \"99\", "
        )
        time.sleep(0.2)  # the endpoint is now waiting for the rest of the body
    deadline = time.monotonic() + 5
    while not sandbox.requests() and time.monotonic() < deadline:
        time.sleep(0.05)
    (entry,) = sandbox.requests()
    assert entry["status"] == 499
    assert "Exception in ASGI application" not in caplog.text


@pytest.mark.parametrize("status", [500, 502, 504])
def test_an_after_rule_stores_the_change_then_answers_its_status(sandbox: Any, status: int) -> None:
    sandbox.set_faults(rules=[{"path": BULK, "status": status, "after": True}])
    response = bulk(sandbox)
    assert response.status_code == status
    assert response.json() == {"error": {500: "Internal server error", 502: "Bad gateway",
                                         504: "Gateway timeout"}[status], "fault": "injected"}
    [person] = sandbox.staff(99)  # stored, although the answer says the request failed
    assert person["customer_system_id"] == "E1"
    assert [(r["status"], r["fault"], r["elements"]) for r in sandbox.requests()] == [(status, "rule", 1)]
    assert bulk(sandbox).status_code == 200  # the rule's count is spent


def test_an_after_rule_with_a_delay_stalls_the_answer_of_a_stored_change(sandbox: Any) -> None:
    sandbox.set_faults(rules=[{"path": BULK, "delay": 2, "after": True}])
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        sandbox.http.post(BULK, json={"customer_id": "99", "bulk_staff_data": [element()]},
                          headers=sandbox.auth(), timeout=httpx.Timeout(5, read=0.3))
    assert time.monotonic() - started < 1.5
    assert len(sandbox.staff(99)) == 1  # stored before the stall began
    deadline = time.monotonic() + 5
    while not sandbox.requests() and time.monotonic() < deadline:
        time.sleep(0.05)
    # the caller gave up during the stall: logged as hanging up, nothing answered
    assert [(r["status"], r["fault"]) for r in sandbox.requests()] == [(499, "rule")]


def test_an_after_rule_with_a_short_delay_answers_the_endpoint_s_own_answer_late(sandbox: Any) -> None:
    sandbox.set_faults(rules=[{"path": BULK, "delay": 0.3, "after": True}])
    started = time.monotonic()
    response = bulk(sandbox)
    assert time.monotonic() - started >= 0.3
    assert response.json()["result"][0]["message"] == "Add Successfully"
    assert [(r["status"], r["fault"]) for r in sandbox.requests()] == [(200, "rule")]

