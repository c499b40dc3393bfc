"""Time off on the platform: each row's request body, and posting with bounded concurrency.

One ``RowOutcome`` per record; the ledger is written as we go (``request_body`` is spec endpoint 5).

A thread pool of ``concurrency`` workers (default 4) shares the one ``ServiceClient`` (its httpx pool is
thread-safe). Each worker posts one record and, when the service accepts it, writes it to the ledger at
once, before taking the next. The service's answers become outcomes (``hrimport.service.answers`` reads
what each refusal means):

- 2xx -> ``added`` (the message names the record id);
- 409 -> ``overlaps_existing`` (``overlaps-existing``): the service holds an overlapping record;
- 404, or a 400 naming ``customer_system_id`` -> ``rejected`` (``unknown-staff``);
- a 400 naming ``total_days`` -> ``rejected`` (``total-days-mismatch``); ``leave_type`` ->
  ``unknown-leave-type``; any other 4xx -> ``service-rejected`` (403: ``permission-denied``);
- still failing after the client's retries -> ``failed`` with the client's code (``http-503``,
  ``timeout``...). Once the service is lost (``ServiceClient.lost``), every row not yet posted is
  ``failed`` with ``not-sent`` at once rather than each waiting out its own retries.

A 401 (``AuthenticationError``) or an answer that shows a wrong base URL stops the run: it is raised after
the workers in flight finish (what they added is in the ledger).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any, Protocol

from hrimport.errors import RequestRejected, RetriesExhausted
from hrimport.outcomes import Outcome, Problem, RowOutcome
from hrimport.service.answers import timeoff_refusal
from hrimport.state.ledger import Ledger, LedgerKey
from hrimport.timeoff.rows import TimeOffRow

__all__ = ["TimeOffClient", "post_time_off", "request_body"]


class TimeOffClient(Protocol):
    """What posting needs of ``hrimport.service.client.ServiceClient``."""

    def apply_time_off(self, body: dict[str, Any]) -> dict[str, Any]: ...


def request_body(customer_id: str, r: TimeOffRow) -> dict[str, Any]:
    """The time-off endpoint's body for one row (spec endpoint 5; ``customer_id`` an integer there)."""
    body: dict[str, Any] = {
        "customer_id": int(customer_id),
        "customer_system_id": r.external_id,
        "leave_type": r.leave_type_name,
        "lang": r.lang,
        "country": r.country,
        "start_date": r.start,
        "end_date": r.end,
        "total_days": r.total_days,
    }
    if r.notes:
        body["notes"] = r.notes
    if r.decision:
        body["decision"] = r.decision
    return body


def post_time_off(
    client: TimeOffClient,
    rows: list[TimeOffRow],
    *,
    customer_id: str,
    ledger: Ledger | None,
    ledger_key: Callable[[TimeOffRow], LedgerKey],
    source_file: str,
    concurrency: int = 4,
    progress: Callable[[int], None] | None = None,
) -> list[RowOutcome]:
    """Post every row (``total_days`` already set); one outcome per row, in any order."""

    def send(r: TimeOffRow) -> RowOutcome:
        try:
            answer = client.apply_time_off(request_body(customer_id, r))
        except RequestRejected as exc:
            return _rejected(r, exc)
        except RetriesExhausted as exc:
            if exc.code == "not-sent":
                return _outcome(r, Outcome.FAILED, exc.code, f"{exc}.")
            return _outcome(r, Outcome.FAILED, exc.code,
                            f"{exc}. If the record did reach the service, running the import again is answered "
                            "'overlaps', never a second record.")
        raw = answer.get("time_off_data")
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        record_id = data.get("id") if isinstance(data.get("id"), int) else None
        if ledger is not None:
            ledger.remember(ledger_key(r), record_id=record_id, total_days=r.total_days,
                            source_file=source_file, source_row=r.row)
        what = f"time-off record {record_id}" if record_id is not None else "a time-off record"
        return RowOutcome(r.row, r.external_id, "", Outcome.ADDED, tuple(r.warnings), f"Added as {what}.",
                          r.details())

    outcomes: list[RowOutcome] = []
    if not rows:
        return outcomes
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="hrimport-timeoff") as pool:
        futures: set[Future[RowOutcome]] = {pool.submit(send, r) for r in rows}
        while futures:
            done, futures = wait(futures, return_when=FIRST_EXCEPTION)
            for future in done:
                exc = future.exception()
                if exc is not None:
                    # 401 or a wrong base URL: nothing more can succeed; let the workers in flight finish
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise exc
                outcomes.append(future.result())
                if progress:
                    progress(1)
    return outcomes


def _outcome(r: TimeOffRow, outcome: Outcome, code: str, message: str) -> RowOutcome:
    text = f"Row {r.row}: {message}"
    return RowOutcome(r.row, r.external_id, "", outcome, (Problem(code, text, r.row), *r.warnings), text,
                      r.details())


def _rejected(r: TimeOffRow, exc: RequestRejected) -> RowOutcome:
    reasons = exc.reasons
    code = timeoff_refusal(exc)
    if code == "overlaps-existing":
        return _outcome(r, Outcome.OVERLAPS_EXISTING, code,
                        f"the service already holds time off for '{r.external_id}' overlapping "
                        f"{r.start}..{r.end} ({reasons}); not added again.")
    if code == "unknown-staff":
        return _outcome(r, Outcome.REJECTED, code, f"the service does not know staff '{r.external_id}' ({reasons}).")
    if code == "total-days-mismatch":
        return _outcome(r, Outcome.REJECTED, code, f"the service refused total_days {r.total_days}: {reasons}.")
    if code == "unknown-leave-type":
        return _outcome(r, Outcome.REJECTED, code,
                        f"the service refused leave type '{r.leave_type_name}': {reasons}.")
    # permission-denied, service-rejected
    return _outcome(r, Outcome.REJECTED, code, f"the service refused it: {reasons}.")
