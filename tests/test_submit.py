"""The bulk staff submitter over real HTTP: every record sent ends with exactly one outcome."""

from __future__ import annotations

import gc
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrimport.errors import AuthenticationError, RequestRejected, ServiceUnavailableError
from hrimport.outcomes import Outcome, RowOutcome
from hrimport.service.client import RetryPolicy, ServiceClient, open_client
from hrimport.service.staff import FirstSends, StaffRecord, submit_staff

TOKEN = "demo-customer-99"
BULK = "/api/bulk_add_edit_staff"


pytestmark = pytest.mark.usefixtures("instant_retries")


@pytest.fixture
def client(sandbox: Any) -> Iterator[ServiceClient]:
    with open_client(sandbox.base_url, TOKEN) as c:
        yield c


def record(row: int, *, bad: str | None = None, prefix: str = "") -> StaffRecord:
    """A staff record as the mapper makes it; ``bad`` names a way to make the service reject it."""
    external_id = f"{prefix}{uuid.uuid4().hex[:10]}"
    payload: dict[str, Any] = {
        "customer_system_id": external_id,
        "customer_system_id_type": "Workday",
        "name": f"Person {row}",
        "system_email": f"p{row}@example.com",
        "country": "SG",
        "job_title": "Clerk",
        "job_start_date": "2022-07-01",
        "staff_type": "EOR",
    }
    if bad == "staff_type":
        payload["staff_type"] = "Contractor"
    elif bad == "missing_name":
        del payload["name"]
    elif bad == "intern":
        payload.update(is_intern=True, is_manager=True)
    elif bad == "date":
        payload["job_start_date"] = "2022-02-30"
    return StaffRecord(row, external_id, payload.get("name", ""), payload)


def bulk_log(sandbox: Any) -> list[dict[str, Any]]:
    return [r for r in sandbox.requests() if r["path"].endswith(BULK)]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------------------------- the sandbox


def test_adds_then_updates(client: ServiceClient, sandbox: Any) -> None:
    records = [record(row) for row in range(2, 252)]
    steps: list[int] = []

    first = submit_staff(client, "99", records, progress=steps.append)
    second = submit_staff(client, "99", records, batch_size=100)

    assert [o.outcome for o in first.outcomes] == [Outcome.ADDED] * 250
    assert [o.outcome for o in second.outcomes] == [Outcome.UPDATED] * 250
    assert [o.row for o in first.outcomes] == [r.row for r in records]
    assert [o.external_id for o in first.outcomes] == [r.external_id for r in records]
    assert (first.batches, first.requests) == (3, 3)
    assert sum(steps) == 250
    assert [r["elements"] for r in bulk_log(sandbox)] == [100, 100, 50] * 2


def test_another_customers_records_are_permission_denied(client: ServiceClient) -> None:
    records = [record(row) for row in range(2, 5)]

    result = submit_staff(client, "100", records)

    assert result.counts() == {"permission_denied": 3}
    assert {p.code for o in result.outcomes for p in o.problems} == {"permission-denied"}


def test_one_bad_row_does_not_sink_its_batch(client: ServiceClient, sandbox: Any) -> None:
    records = [record(row, bad="staff_type" if row == 44 else None) for row in range(2, 102)]

    result = submit_staff(client, "99", records, batch_size=100)

    assert result.counts() == {"added": 99, "rejected": 1}
    (bad,) = [o for o in result.outcomes if o.outcome is Outcome.REJECTED]
    assert bad.row == 44
    assert [(p.code, p.field) for p in bad.problems] == [("service-rejected", "staff_type")]
    # the service named the element by its index: no halving; the row named went alone first (refused again, it
    # is the bad one: the spec shows no error details, so what an index counts from is not known), then the 99
    assert [(r["status"], r["elements"]) for r in bulk_log(sandbox)] == [(400, 100), (400, 1), (200, 99)]


def test_once_an_index_is_shown_to_count_from_zero_the_rows_it_names_are_rejected_at_once(
    client: ServiceClient, sandbox: Any
) -> None:
    # batch 1's bad row is its first element: an index 0 shows how the service counts, for the whole run
    records = [record(row, bad="staff_type" if row in (2, 15, 27) else None) for row in range(2, 32)]

    result = submit_staff(client, "99", records, batch_size=10)

    assert {o.row for o in result.outcomes if o.outcome is Outcome.REJECTED} == {2, 15, 27}
    assert result.counts() == {"added": 27, "rejected": 3}
    assert [(r["status"], r["elements"]) for r in bulk_log(sandbox)] == [
        (400, 10), (200, 9), (400, 10), (200, 9), (400, 10), (200, 9)]


def test_batches_the_service_rejects_are_let_go_once_their_rows_have_their_outcomes(
    client: ServiceClient, sandbox: Any
) -> None:
    # A month the platform refuses every row (a custom field not set up there): each rejected batch's error was
    # kept with its traceback, whose frames hold it again, so its request body and answer (~300 KB a batch)
    # stayed until a full collection, which a long run hardly ever makes: 100,000 rows held 400 MB more.
    records = [record(row, bad="staff_type") for row in range(2, 42)]
    collecting = gc.isenabled()
    gc.collect()
    gc.disable()  # as in a long run: no collection frees a cycle left behind
    try:
        result = submit_staff(client, "99", records, batch_size=10)
        left = [o for o in gc.get_objects() if isinstance(o, RequestRejected)]
    finally:
        if collecting:
            gc.enable()

    assert result.counts() == {"rejected": 40}
    assert [r["status"] for r in bulk_log(sandbox)] == [400] * 4
    assert left == []


def test_a_batch_over_the_services_limit_is_halved(client: ServiceClient, sandbox: Any) -> None:
    # the sandbox takes at most 1,000 elements and says so without an index: the halving path, for real
    records = [record(row) for row in range(2, 1502)]

    result = submit_staff(client, "99", records, batch_size=1500)

    assert result.counts() == {"added": 1500}
    assert [(r["status"], r["elements"]) for r in bulk_log(sandbox)] == [(400, 1500), (200, 750), (200, 750)]


def test_every_bad_row_is_named_with_every_reason(client: ServiceClient) -> None:
    kinds = [None, "missing_name", None, "intern", "date", None, "staff_type"]
    records = [record(row, bad=kind) for row, kind in enumerate(kinds, start=2)]

    result = submit_staff(client, "99", records, batch_size=10)

    assert [o.outcome.value for o in result.outcomes] == [
        "added", "rejected", "added", "rejected", "rejected", "added", "rejected",
    ]  # fmt: skip
    fields = [{p.field for p in o.problems} for o in result.outcomes if o.outcome is Outcome.REJECTED]
    assert fields[0] == {"name"}
    assert fields[2] == {"job_start_date"}
    assert fields[3] == {"staff_type"}
    assert all(o.message.startswith(f"Row {o.row}: ") for o in result.outcomes if o.problems)


def test_retries_503_then_429_and_accounts_for_every_row(client: ServiceClient, sandbox: Any) -> None:
    sandbox.set_faults(
        rules=[
            {"path": BULK, "status": 503, "count": 2},
            {"path": BULK, "status": 429, "retry_after": 1, "count": 2},
        ]
    )
    records = [record(row) for row in range(2, 252)]

    result = submit_staff(client, "99", records, batch_size=100)

    assert [r["status"] for r in bulk_log(sandbox)] == [503, 503, 429, 429, 200, 200, 200]
    assert Counter(o.row for o in result.outcomes) == Counter(r.row for r in records)  # once each
    assert result.counts() == {"added": 250}
    assert result.requests == 3  # retries happen inside the client, below the batch


def test_a_batch_still_failing_after_retries_fails_alone(sandbox: Any) -> None:
    sandbox.set_faults(rules=[{"path": BULK, "status": 503, "count": 3}])
    records = [record(row) for row in range(2, 252)]

    with open_client(sandbox.base_url, TOKEN, retry=RetryPolicy(attempts=3)) as c:
        result = submit_staff(c, "99", records, batch_size=100)

    assert result.counts() == {"failed": 100, "added": 150}
    failed = [o for o in result.outcomes if o.outcome is Outcome.FAILED]
    assert [o.row for o in failed] == list(range(2, 102))
    assert {p.code for o in failed for p in o.problems} == {"http-503"}
    assert "HTTP 503" in failed[0].message and "after 3 attempts" in failed[0].message


def test_a_wrong_token_stops_everything_at_once(sandbox: Any) -> None:
    records = [record(row) for row in range(2, 252)]
    steps: list[int] = []

    with open_client(sandbox.base_url, "demo-customer-nope") as c, pytest.raises(AuthenticationError):
        submit_staff(c, "99", records, batch_size=100, progress=steps.append)

    assert len(bulk_log(sandbox)) == 1
    assert steps == []  # nothing half-reported


def test_an_unreachable_service_raises_service_unavailable() -> None:
    records = [record(row) for row in range(2, 12)]
    policy = RetryPolicy(attempts=2)

    c = open_client(f"http://127.0.0.1:{closed_port()}/sandbox", TOKEN, retry=policy)
    with c, pytest.raises(ServiceUnavailableError, match="cannot connect to the service"):
        submit_staff(c, "99", records, batch_size=5)


def test_no_records_sends_nothing(client: ServiceClient, sandbox: Any) -> None:
    result = submit_staff(client, "99", [])

    assert (result.outcomes, result.requests) == ([], 0)
    assert bulk_log(sandbox) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kinds=st.lists(
        st.sampled_from([None, None, None, "staff_type", "missing_name", "intern", "date"]), max_size=40
    ),
    batch_size=st.integers(min_value=1, max_value=15),
    concurrency=st.integers(min_value=1, max_value=4),
)
def test_rows_in_equal_rows_out(client: ServiceClient, kinds: list[str | None], batch_size: int,
                                concurrency: int) -> None:
    records = [record(row, bad=kind) for row, kind in enumerate(kinds, start=2)]

    result = submit_staff(client, "99", records, batch_size=batch_size, concurrency=concurrency)

    assert [o.row for o in result.outcomes] == [r.row for r in records]  # each exactly once, in order
    expected = [Outcome.ADDED if kind is None else Outcome.REJECTED for kind in kinds]
    assert [o.outcome for o in result.outcomes] == expected


def test_batches_in_flight_together_when_asked_store_every_row_once(client: ServiceClient, sandbox: Any) -> None:
    # slow answers, and some dropped after the service stored the batch: the client repeats those
    sandbox.set_faults(latency=0.2, rules=[{"path": BULK, "drop": True, "count": 2, "skip": 3}])
    records = [record(row, bad="staff_type" if row == 17 else None) for row in range(2, 122)]
    journal: list[int] = []

    result = submit_staff(client, "99", records, batch_size=10, concurrency=3,
                          on_outcomes=lambda rows: journal.extend(o.row for o in rows),
                          # as the state folder says of people never sent before: a repeat that finds them
                          # stored was the lost answer's doing, so they count as added
                          on_sending=lambda batch: FirstSends(never_accepted=frozenset(r.external_id
                                                                                       for r in batch)))

    assert [o.row for o in result.outcomes] == [r.row for r in records]  # each once, in input order
    assert result.counts() == {"added": 119, "rejected": 1}
    assert sorted(journal) == [r.row for r in records]
    stored = Counter(s["customer_system_id"] for s in sandbox.staff(99))
    assert all(stored[r.external_id] == 1 for r in records if r.row != 17)
    log = bulk_log(sandbox)
    spans = [(r["time"], r["time"] + r["duration_ms"] / 1000) for r in log]
    most = max(sum(1 for start, end in spans if start <= t < end) for t, _ in spans)
    assert most >= 2  # requests really were in flight together
    assert len([r for r in log if r["fault"] == "drop"]) == 2


def test_a_wrong_token_stops_concurrent_batches_too(sandbox: Any) -> None:
    with open_client(sandbox.base_url, "not-a-token") as c, pytest.raises(AuthenticationError):
        submit_staff(c, "99", [record(row) for row in range(2, 42)], batch_size=5, concurrency=4)


def test_batches_answered_together_with_the_refused_token_reach_the_journal_before_the_run_stops(
    client: ServiceClient, sandbox: Any
) -> None:
    """Three batches in flight: the first is stored and answered; while its rows are being told, the service
    refuses the token of the second (the token revoked mid-run) and stores the third, so the submitter finds
    both answered at once. The third is told in the journal before the 401 stops the run, as a batch still
    in flight is."""
    sandbox.set_faults(rules=[{"path": BULK, "count": 1, "after": True, "delay": 0.2},
                              {"path": BULK, "count": 1, "status": 401, "delay": 0.5},
                              {"path": BULK, "count": 1, "after": True, "delay": 0.5}])
    records = [record(row) for row in range(2, 22)]
    journal: list[int] = []

    def told(rows: list[RowOutcome]) -> None:
        if not journal:  # the first batch's rows: both others are answered meanwhile
            time.sleep(1.0)
        journal.extend(o.row for o in rows)

    with pytest.raises(AuthenticationError):
        submit_staff(client, "99", records, batch_size=5, concurrency=3, on_outcomes=told)

    stored = {s["customer_system_id"] for s in sandbox.staff(99)}
    assert len(stored) in (10, 15)  # the first and third, and the fourth batch if it went out meanwhile
    assert sorted(journal) == sorted(r.row for r in records if r.external_id in stored)


# ---------------------------------------------------------------- a service that names no bad element
#
# The sandbox always lists each bad element with its index (its documented choice), so it cannot show
# the submitter halving a batch, nor results missing or out of order. This small real server can: a
# batch holding any element named "BAD..." is refused whole with a bare 400 {"error": "Invalid request"},
# as the spec's only published error body is; otherwise it answers the way `mode` says.


class ScriptedBulk:
    """State of the stand-in bulk endpoint: how it answers, and the batches it received."""

    def __init__(self) -> None:
        self.mode = "plain"  # plain | reversed | drop-last | stranger | indexed-from-1
        self.batches: list[list[str]] = []


def scripted_app(state: ScriptedBulk) -> FastAPI:
    app = FastAPI()

    @app.post("/svc/api/bulk_add_edit_staff")
    async def bulk(request: Request) -> Any:
        elements = (await request.json())["bulk_staff_data"]
        state.batches.append([e["name"] for e in elements])
        if any(e["name"].startswith("BAD") for e in elements):
            details = ([{"index": n + 1, "field": "name", "reason": "is not a name"}
                        for n, e in enumerate(elements) if e["name"].startswith("BAD")]
                       if state.mode == "indexed-from-1" else [])
            return JSONResponse({"error": "Invalid request", **({"details": details} if details else {})},
                                status_code=400)
        results = [
            {
                "user": {"customer_system_id": e["customer_system_id"], "name": e["name"]},
                "message": "Update Successfully"
                if e["customer_system_id"].startswith("U")
                else "Add Successfully",
                "id": n,
            }
            for n, e in enumerate(elements)
        ]
        if state.mode == "reversed":
            results.reverse()
        elif state.mode == "drop-last":
            results = results[:-1]
        elif state.mode == "stranger":  # the last result names someone who was not sent
            results[-1]["user"]["customer_system_id"] = "X" + results[-1]["user"]["customer_system_id"]
        return {"result": results}

    return app


@pytest.fixture(scope="module")
def scripted() -> Iterator[tuple[str, ScriptedBulk]]:
    """The stand-in service on a real port (uvicorn in a thread); yields its base URL and state."""
    state = ScriptedBulk()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(scripted_app(state), log_level="warning", lifespan="off", ws="none")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the scripted service did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/svc", state
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture
def scripted_service(scripted: tuple[str, ScriptedBulk]) -> Iterator[tuple[ServiceClient, ScriptedBulk]]:
    url, state = scripted
    state.mode, state.batches = "plain", []
    with open_client(url, TOKEN) as c:
        yield c, state


def named(row: int, name: str, external_id: str | None = None) -> StaffRecord:
    ext = external_id or f"A{row}"
    return StaffRecord(row, ext, name, {"customer_system_id": ext, "name": name})


def test_without_details_a_rejected_batch_is_halved_down_to_the_bad_rows(
    scripted_service: tuple[ServiceClient, ScriptedBulk],
) -> None:
    client, state = scripted_service
    bad_rows = {7, 8, 19}
    records = [named(row, "BAD" if row in bad_rows else f"ok {row}") for row in range(2, 22)]

    result = submit_staff(client, "99", records, batch_size=20)

    assert {o.row for o in result.outcomes if o.outcome is Outcome.REJECTED} == bad_rows
    assert result.counts() == {"added": 17, "rejected": 3}
    rejected = [o for o in result.outcomes if o.outcome is Outcome.REJECTED]
    assert {p.message for o in rejected for p in o.problems} == {
        f"Row {row}: the service rejected the record: Invalid request" for row in bad_rows
    }
    # each bad row was finally sent on its own; no good row was sent with a bad one and then given up on
    assert state.batches.count(["BAD"]) == 3
    assert result.splits > 0 and result.requests == len(state.batches)


def test_a_service_counting_its_error_details_from_1_has_no_good_row_rejected_in_a_bad_rows_place(
    scripted_service: tuple[ServiceClient, ScriptedBulk],
) -> None:
    # The spec shows no error details; the sandbox numbers a refused element from 0. A platform numbering from 1
    # named the row after each bad one: that good row was rejected with the bad row's reason, and the bad row,
    # sent again with the rest, named the next good one, and so on down the batch.
    client, state = scripted_service
    state.mode = "indexed-from-1"
    bad_rows = {7, 8, 19}
    records = [named(row, "BAD" if row in bad_rows else f"ok {row}") for row in range(2, 22)]

    result = submit_staff(client, "99", records, batch_size=20)

    assert {o.row for o in result.outcomes if o.outcome is Outcome.REJECTED} == bad_rows
    assert result.counts() == {"added": 17, "rejected": 3}
    assert result.notes == [
        ("the service's error details named rows it then took when sent on their own: their element numbers were "
         "not used to find the rows it refused, which were found by sending the batch in halves")]
    # the rows the first answer named (elements 6, 7 and 18 counted from 0) went on their own; refused again, the
    # row that answer named went alone and was taken: the indices were set aside, and the batch halved
    assert state.batches[1:4] == [["BAD", "ok 9", "ok 20"], ["ok 9"], ["BAD", "ok 20"]]


def test_results_are_matched_by_external_id_not_position(
    scripted_service: tuple[ServiceClient, ScriptedBulk],
) -> None:
    client, state = scripted_service
    state.mode = "reversed"
    records = [
        named(row, f"p{row}", external_id=("U" if row % 3 == 0 else "A") + str(row)) for row in range(2, 12)
    ]

    result = submit_staff(client, "99", records, batch_size=10)

    expected = [Outcome.UPDATED if row % 3 == 0 else Outcome.ADDED for row in range(2, 12)]
    assert [o.outcome for o in result.outcomes] == expected


def test_a_sent_row_without_a_result_is_failed_no_result(
    scripted_service: tuple[ServiceClient, ScriptedBulk],
) -> None:
    client, state = scripted_service
    state.mode = "drop-last"
    records = [named(row, f"p{row}") for row in range(2, 9)]

    result = submit_staff(client, "99", records, batch_size=4)

    failed = {o.row: o.problem_codes for o in result.outcomes if o.outcome is Outcome.FAILED}
    assert failed == {5: ["no-result"], 8: ["no-result"]}
    assert result.counts() == {"added": 5, "failed": 2}


def test_an_answer_in_another_order_gives_every_row_the_outcome_an_answer_in_order_gives(
    scripted_service: tuple[ServiceClient, ScriptedBulk],
) -> None:
    """The usual answer, one result per row in the order sent, is matched in one step; any other order
    is matched by external id: the outcomes are the same, row for row."""
    client, state = scripted_service
    records = [named(row, f"p{row}", external_id=("U" if row % 3 == 0 else "A") + str(row)) for row in range(2, 40)]
    outcomes = {}
    for mode in ("plain", "reversed"):
        state.mode = mode
        outcomes[mode] = submit_staff(client, "99", records, batch_size=7).outcomes
    assert outcomes["plain"] == outcomes["reversed"]
    assert [o.outcome for o in outcomes["plain"]] == [
        Outcome.UPDATED if row % 3 == 0 else Outcome.ADDED for row in range(2, 40)]


def test_rows_handed_on_as_settled_are_every_row_once_and_a_stranger_in_the_answer_is_noted(
    scripted_service: tuple[ServiceClient, ScriptedBulk],
) -> None:
    # a result naming an external id that was not sent: the run says so (its report's notes), and the row
    # it stood for has no result
    client, state = scripted_service
    state.mode = "stranger"
    records = [named(row, f"p{row}") for row in range(2, 9)]
    collected: list[list[int]] = []

    result = submit_staff(client, "99", records, batch_size=4, collect=lambda rows: collected.append([o.row for o in rows]))

    assert result.outcomes == [] and sorted(row for rows in collected for row in rows) == list(range(2, 9))
    assert result.notes == ["the service returned results for external ids that were not sent: XA5",
                            "the service returned results for external ids that were not sent: XA8"]
