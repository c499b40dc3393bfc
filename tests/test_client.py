"""The service client against the real sandbox over HTTP: answers, error translation, retries, secrecy."""

from __future__ import annotations

import datetime as dt
import logging
import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import stamina

from hrimport.errors import (
    AccessDenied,
    AuthenticationError,
    Conflict,
    RequestRejected,
    RetriesExhausted,
    ServiceUnavailableError,
)
from hrimport.service.client import (
    RetryPolicy,
    ServiceClient,
    normalise_user,
    open_client,
    retry_after_seconds,
)

TOKEN = "demo-customer-99"
BULK = "/api/bulk_add_edit_staff"


pytestmark = pytest.mark.usefixtures("instant_retries")


@pytest.fixture
def client(sandbox: Any) -> Iterator[ServiceClient]:
    with open_client(sandbox.base_url, TOKEN, token_source="HRIMPORT_TOKEN") as c:
        yield c


def staff(external_id: str | None = None, **fields: Any) -> dict[str, Any]:
    """A valid bulk element (spec "Staff input fields": the required ones)."""
    record = {
        "customer_system_id": external_id or uuid.uuid4().hex[:12],
        "customer_system_id_type": "BambooHR",
        "name": "Ada Lovelace",
        "system_email": "ada@example.com",
        "country": "MY",
        "job_title": "Analyst",
        "job_start_date": "2021-03-01",
        "staff_type": "Payroll",
    }
    record.update(fields)
    return record


def annual_leave(external_id: str, start: str, end: str, total_days: str) -> dict[str, Any]:
    """A time-off body for Malaysian annual leave (spec: "Add time-off record")."""
    return {
        "customer_id": 99, "customer_system_id": external_id, "leave_type": "Annual Leave", "lang": "EN",
        "country": "MY", "start_date": start, "end_date": end, "total_days": total_days,
    }


def api_calls(sandbox: Any, path: str) -> list[dict[str, Any]]:
    """The sandbox's request log entries for one endpoint, oldest first."""
    return [r for r in sandbox.requests() if r["path"].endswith(path)]


def closed_port() -> int:
    """A port nothing listens on: bound, then released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------------------------------- answers


def test_single_add_then_update_reads_the_passport_issue_date_typo(client: ServiceClient) -> None:
    record = staff(customer_id=99, passport_number="K1234567", passport_issue_date="2019-05-04")

    added = client.add_edit_staff(record)
    updated = client.add_edit_staff({**record, "job_title": "Senior Analyst"})

    assert added["message"].lower() == "add successfully"
    assert updated["message"].lower() == "update successfully"
    # the single endpoint spells the key as the spec's sample does; the client reads it as the real name
    assert updated["user"]["passport_issue_date"] == "2019-05-04"
    assert "passpost_issue_date" not in updated["user"]
    assert updated["user"]["job_title"] == "Senior Analyst"


def test_bulk_adds_then_updates(client: ServiceClient, sandbox: Any) -> None:
    records = [staff(f"B-{uuid.uuid4().hex[:8]}") for _ in range(3)]

    first = client.bulk_add_edit_staff("99", records)
    second = client.bulk_add_edit_staff(99, records)

    assert [r["message"] for r in first] == ["Add Successfully"] * 3
    assert [r["message"] for r in second] == ["Update Successfully"] * 3
    assert [r["user"]["customer_system_id"] for r in second] == [r["customer_system_id"] for r in records]
    stored = {s["customer_system_id"] for s in sandbox.staff(99)}
    assert {r["customer_system_id"] for r in records} <= stored


def test_bulk_for_another_customer_is_permission_denied(client: ServiceClient) -> None:
    results = client.bulk_add_edit_staff("100", [staff()])

    assert [r["message"] for r in results] == ["Permission Denied"]


def test_a_customer_id_inside_bulk_elements_is_not_sent(client: ServiceClient) -> None:
    # spec: "Each element holds the staff input fields except customer_id"
    results = client.bulk_add_edit_staff("99", [staff(customer_id=99)])

    assert results[0]["message"] == "Add Successfully"


def test_bad_bulk_element_is_request_rejected_with_its_index(client: ServiceClient, sandbox: Any) -> None:
    records = [staff(), staff(staff_type="Contractor"), staff()]

    with pytest.raises(RequestRejected) as caught:
        client.bulk_add_edit_staff("99", records)

    assert caught.value.status == 400
    assert caught.value.error == "Invalid request"
    assert [(d["index"], d["field"]) for d in caught.value.details] == [(1, "staff_type")]
    assert len(api_calls(sandbox, BULK)) == 1  # a 400 is never retried


def test_vendor_lists_its_customers(sandbox: Any) -> None:
    with open_client(sandbox.base_url, "demo-vendor") as vendor:
        answer = vendor.get_customers()

    assert {"id", "name", "logo", "customer_list"} <= answer.keys()
    assert all({"id", "name", "is_active"} <= c.keys() for c in answer["customer_list"])


def test_vendor_listing_without_portal_access_is_access_denied(sandbox: Any) -> None:
    with (
        open_client(sandbox.base_url, "demo-vendor-noportal") as vendor,
        pytest.raises(AccessDenied) as caught,
    ):
        vendor.get_customers()

    assert caught.value.status == 403
    assert caught.value.error == "Access Denied"
    assert caught.value.body == {"code": "ERROR_FATAL", "message": "Access Denied", "payload": ""}


def test_calculates_leave_days_with_half_days(client: ServiceClient) -> None:
    # Monday 2024-03-04 to Wednesday 2024-03-06 in Malaysia: three working days, the last one half
    full = client.calculate_total_days("MY", "2024-03-04", "2024-03-06")
    half = client.calculate_total_days("MY", dt.date(2024, 3, 4), dt.date(2024, 3, 6), half_end=True)

    assert full == 3
    assert half == 2.5


def test_time_off_overlapping_a_stored_record_is_a_conflict(client: ServiceClient) -> None:
    person = staff(customer_id=99)
    client.add_edit_staff(person)
    body = annual_leave(person["customer_system_id"], "2024-03-04", "2024-03-05", "2")

    answer = client.apply_time_off(body)
    with pytest.raises(Conflict) as caught:
        client.apply_time_off(body)

    assert answer["time_off_data"]["total_days"] == 2
    assert caught.value.status == 409
    assert isinstance(caught.value, RequestRejected)  # a refusal of the data, not a failing service


def test_time_off_for_unknown_staff_is_rejected_with_a_reason(client: ServiceClient) -> None:
    body = annual_leave("nobody-" + uuid.uuid4().hex, "2024-03-04", "2024-03-04", "1")

    with pytest.raises(RequestRejected) as caught:
        client.apply_time_off(body)

    assert caught.value.status in (400, 404)
    assert caught.value.reasons


# ------------------------------------------------------------------------------------------ failures


def test_wrong_token_is_an_authentication_error_at_once(sandbox: Any) -> None:
    c = open_client(sandbox.base_url, "not-a-real-token-123", token_source="HRIMPORT_TOKEN")
    with c, pytest.raises(AuthenticationError) as caught:
        c.bulk_add_edit_staff("99", [staff()])

    assert str(caught.value) == (
        "the service refused the token (HTTP 401: Invalid request): check the token in $HRIMPORT_TOKEN"
    )
    assert "not-a-real-token-123" not in str(caught.value)
    assert len(api_calls(sandbox, BULK)) == 1  # never retried


@pytest.mark.parametrize("token", ["", "   ", "two words", "naïve-token"])
def test_unsendable_token_is_refused_without_quoting_it(token: str) -> None:
    with pytest.raises(AuthenticationError) as caught:
        open_client("http://127.0.0.1:9/sandbox", token)

    assert token.strip() == "" or token not in str(caught.value)


def test_retries_503_then_429_and_succeeds(client: ServiceClient, sandbox: Any) -> None:
    sandbox.set_faults(
        rules=[
            {"path": BULK, "status": 503, "count": 2},
            {"path": BULK, "status": 429, "retry_after": 1, "count": 2},
        ]
    )

    results = client.bulk_add_edit_staff("99", [staff()])

    assert results[0]["message"] == "Add Successfully"
    assert [r["status"] for r in api_calls(sandbox, BULK)] == [503, 503, 429, 429, 200]


def test_honours_retry_after(sandbox: Any) -> None:
    """Timed: the one test where stamina really waits."""
    sandbox.set_faults(rules=[{"path": BULK, "status": 429, "retry_after": 1, "count": 1}])
    policy = RetryPolicy(wait_initial=0.01, wait_jitter=0.0)
    with stamina.set_testing(False), open_client(sandbox.base_url, TOKEN, retry=policy) as c:
        started = time.monotonic()
        c.bulk_add_edit_staff("99", [staff()])
        waited = time.monotonic() - started

    assert waited >= 0.95  # Retry-After: 1, not the 0.01 s backoff
    assert [r["status"] for r in api_calls(sandbox, BULK)] == [429, 200]


def test_caps_a_long_retry_after(sandbox: Any) -> None:
    sandbox.set_faults(rules=[{"path": BULK, "status": 429, "retry_after": 3600, "count": 1}])
    policy = RetryPolicy(retry_after_max=0.2)
    with stamina.set_testing(False), open_client(sandbox.base_url, TOKEN, retry=policy) as c:
        started = time.monotonic()
        c.bulk_add_edit_staff("99", [staff()])

    assert time.monotonic() - started < 5


def test_still_503_after_the_attempts_is_service_unavailable(sandbox: Any) -> None:
    sandbox.set_faults(rules=[{"path": BULK, "status": 503, "count": 50}])
    c = open_client(sandbox.base_url, TOKEN, retry=RetryPolicy(attempts=3))
    with c, pytest.raises(ServiceUnavailableError) as caught:
        c.bulk_add_edit_staff("99", [staff()])

    assert isinstance(caught.value, RetriesExhausted)
    assert caught.value.code == "http-503"
    assert caught.value.attempts == 3
    assert "after 3 attempts" in str(caught.value)
    assert [r["status"] for r in api_calls(sandbox, BULK)] == [503, 503, 503]


def test_500_is_retried_for_upserts(client: ServiceClient, sandbox: Any) -> None:
    # api-notes: "500 (retry, then quote a request id)"; the upsert is keyed by external id, so repeatable
    sandbox.set_faults(rules=[{"path": BULK, "status": 500, "count": 1}])

    client.bulk_add_edit_staff("99", [staff()])

    assert [r["status"] for r in api_calls(sandbox, BULK)] == [500, 200]


def test_dropped_connection_is_retried_for_upserts(client: ServiceClient, sandbox: Any) -> None:
    sandbox.set_faults(rules=[{"path": BULK, "drop": True, "count": 1}])
    record = staff()

    results = client.bulk_add_edit_staff("99", [record])

    # the dropped attempt was stored by the sandbox, so the repeat is an update: no duplicate
    assert results[0]["message"] == "Update Successfully"
    assert len(api_calls(sandbox, BULK)) == 2


def test_time_off_is_not_repeated_after_a_dropped_connection(client: ServiceClient, sandbox: Any) -> None:
    """apply-ee-time-off is not idempotent (issue 5): a request that may have been processed is never
    sent twice."""
    person = staff(customer_id=99)
    client.add_edit_staff(person)
    sandbox.set_faults(rules=[{"path": "/api/apply-ee-time-off", "drop": True, "count": 1}])
    body = annual_leave(person["customer_system_id"], "2024-04-01", "2024-04-01", "1")

    with pytest.raises(RetriesExhausted) as caught:
        client.apply_time_off(body)

    assert caught.value.code == "transport-failed"
    assert len(api_calls(sandbox, "/api/apply-ee-time-off")) == 1


def test_time_off_is_retried_when_refused_unprocessed(client: ServiceClient, sandbox: Any) -> None:
    person = staff(customer_id=99)
    client.add_edit_staff(person)
    sandbox.set_faults(rules=[{"path": "/api/apply-ee-time-off", "status": 503, "count": 1}])
    body = annual_leave(person["customer_system_id"], "2024-05-06", "2024-05-06", "1")

    client.apply_time_off(body)

    assert [r["status"] for r in api_calls(sandbox, "/api/apply-ee-time-off")] == [503, 200]


def test_closed_port_is_service_unavailable() -> None:
    c = open_client(f"http://127.0.0.1:{closed_port()}/sandbox", TOKEN, retry=RetryPolicy(attempts=2))
    with c, pytest.raises(ServiceUnavailableError) as caught:
        c.get_customers()

    assert isinstance(caught.value, RetriesExhausted)
    assert caught.value.code == "connect-failed"
    assert caught.value.unreachable
    assert "cannot connect to the service" in str(caught.value)


def test_a_service_lost_mid_run_answers_every_later_call_at_once(sandbox: Any) -> None:
    c = open_client(sandbox.base_url, TOKEN, retry=RetryPolicy(attempts=3))
    with c:
        assert c.calculate_total_days("SG", "2024-03-04", "2024-03-08") == 5
        sandbox.stop()
        with pytest.raises(RetriesExhausted) as first:
            c.calculate_total_days("SG", "2024-03-11", "2024-03-15")
        assert (first.value.code, first.value.attempts, first.value.service_lost) == ("connect-failed", 3, True)
        assert c.lost is first.value

        sandbox.start()  # back, but this run has given up on it: nothing more is sent
        sandbox.clear_requests()
        with pytest.raises(RetriesExhausted) as later:
            c.apply_time_off(annual_leave("E1", "2024-04-01", "2024-04-01", "1"))
    assert (later.value.code, later.value.attempts, later.value.service_lost) == ("not-sent", 0, True)
    assert sandbox.requests() == []


def test_one_dropped_time_off_answer_does_not_end_the_run(client: ServiceClient, sandbox: Any) -> None:
    person = staff(customer_id=99)
    client.add_edit_staff(person)
    sandbox.set_faults(rules=[{"path": "/api/apply-ee-time-off", "drop": True, "count": 1}])
    with pytest.raises(RetriesExhausted) as caught:
        client.apply_time_off(annual_leave(person["customer_system_id"], "2024-04-01", "2024-04-01", "1"))
    assert not caught.value.service_lost and client.lost is None
    client.apply_time_off(annual_leave(person["customer_system_id"], "2024-04-08", "2024-04-08", "1"))


def test_the_token_never_shows(sandbox: Any, caplog: pytest.LogCaptureFixture) -> None:
    secret = "demo-customer-99"
    caplog.set_level(logging.DEBUG)
    sandbox.set_faults(rules=[{"path": BULK, "status": 503, "count": 10}])
    with open_client(sandbox.base_url, secret, retry=RetryPolicy(attempts=2)) as c:
        texts = [repr(c), repr(c.http), repr(c.http.headers)]
        with pytest.raises(RetriesExhausted) as caught:
            c.bulk_add_edit_staff("99", [staff()])
        texts.append(str(caught.value))
    with (
        open_client(sandbox.base_url, "wrong-" + secret) as wrong,
        pytest.raises(AuthenticationError) as denied,
    ):
        wrong.get_customers()
    texts.append(str(denied.value))

    assert not [t for t in texts + [caplog.text] if secret in t]


def test_a_token_written_into_the_base_url_is_not_shown_by_the_client(sandbox: Any) -> None:
    """Some platforms hand out URLs with the key in them; a client printed (a log, a debugger) hides it."""
    secret = "s3cr3t-key"
    with open_client(f"{sandbox.base_url}?api_key={secret}", "demo-customer-99") as client:
        shown = repr(client)
    assert secret not in shown and shown.startswith(f"<ServiceClient {sandbox.base_url}")


# ------------------------------------------------------------------------------------------ helpers


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("2", 2.0),
        (" 0 ", 0.0),
        ("1.5", 1.5),
        ("-3", 0.0),
        ("Wed, 21 Oct 2015 07:28:10 GMT", 10.0),
        ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),  # in the past: no wait
        ("soon", None),
        ("", None),
        (None, None),
        ("inf", None),
    ],
)
def test_retry_after_seconds(header: str | None, expected: float | None) -> None:
    now = dt.datetime(2015, 10, 21, 7, 28, 0, tzinfo=dt.UTC)

    assert retry_after_seconds(header, now=now) == expected


def test_normalise_user_prefers_the_real_key() -> None:
    assert normalise_user({"passpost_issue_date": "2020-01-02"}) == {"passport_issue_date": "2020-01-02"}
    assert normalise_user({"passport_issue_date": "2020-01-02", "passpost_issue_date": ""}) == {
        "passport_issue_date": "2020-01-02"
    }
    assert normalise_user({"passport_issue_date": ""}) == {"passport_issue_date": ""}


def test_persistent_500_quotes_the_request_id() -> None:
    """The sandbox sends no request id, so a mock transport stands in for a service that does."""

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, headers={"X-Request-Id": "req-42"}, json={"error": "Internal error"})

    with (
        open_client(
            "http://service.test/x",
            TOKEN,
            retry=RetryPolicy(attempts=2),
            transport=httpx.MockTransport(answer),
        ) as c,
        pytest.raises(RetriesExhausted) as caught,
    ):
        c.calculate_total_days("MY", "2024-01-01", "2024-01-02")

    assert caught.value.request_id == "req-42"
    assert str(caught.value) == (
        "the service answered POST /api/calculate-total-days with HTTP 500 (Internal error) after 2 attempts; "
        "quote request id req-42 to its support"
    )
