"""Time off on the platform: each row's request body, and posting with bounded concurrency.

One ``RowOutcome`` per record; the ledger is written as we go (``request_body`` is spec endpoint 5).

A thread pool of ``concurrency`` workers (default 4) shares the one ``ServiceClient`` (its httpx pool is
thread-safe). Each worker writes the record to the ledger as ``sending`` before it posts it; the record is
written ``stored`` once the service accepted it and the run's journal names it (``on_outcomes``), by the thread
that hands the outcomes on (``hrimport.state.ledger``): a leave the ledger holds is always named by a journal,
so that the next run tells a leave that a run killed before its report added (``hrimport.imports.stopped_runs``),
where a kill between the two left a leave the ledger held that no journal named, read ``already_imported`` and
added in no report. The service's answers become outcomes (``hrimport.service.answers`` reads what each
refusal means):

- 2xx -> ``added`` (the message names the record id), with a ``platform-altered`` warning when the record
  answered holds other total days than were sent (the spec types them integer there: 4.5 may come back 4); a 2xx without ``time_off_data`` -> ``failed``
  (``unexpected-answer``), its ledger entry left ``sending`` for the next run to settle; the spec's error
  body in a 2xx is a refusal, as below (the client raises it);
- 409 -> ``overlaps_existing`` (``overlaps-existing``): the service holds an overlapping record; but when
  an earlier run sent this record and lost the answer (the ledger keeps it ``sending`` for this service and
  customer), and the 409 names a record of the same leave type and dates, that record is this one, added by
  that send and told by no report (its run failed the row, or was killed before its answer or its report) ->
  ``added``, naming the record and when it was sent, as a staff import tells a person an earlier send created;
  told as that run's when it stopped before its report and its journal names the leave as added (it was killed
  after the journal line, before the ledger's: ``stopped``);
- 404, or a 400 naming ``customer_system_id`` -> ``rejected`` (``unknown-staff``);
- a 400 naming ``total_days`` -> ``rejected`` (``total-days-mismatch``); ``leave_type`` ->
  ``unknown-leave-type``; any other 4xx -> ``service-rejected`` (403: ``permission-denied``);
- still failing after the client's retries -> ``failed`` with the client's code (``http-503``,
  ``timeout``...). Once the service is lost or the run is stopped (``ServiceClient.lost``, ``halted``),
  every row not yet posted is ``not_sent`` at once rather than each waiting out its own retries.

A 401 (``AuthenticationError``), an answer that shows a wrong base URL or a ledger that cannot be written
stops the run: it is raised after the workers in flight finish (what they added is in the ledger, and in the
run's journal through ``on_outcomes``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from hrimport.errors import RequestRejected, RetriesExhausted
from hrimport.outcomes import Outcome, Problem, RowOutcome
from hrimport.service.answers import timeoff_refusal
from hrimport.state.ledger import Ledger, LedgerEntry, LedgerKey
from hrimport.timeoff.leave_types import match_leave_type
from hrimport.timeoff.rows import TimeOffRow

if TYPE_CHECKING:
    from hrimport.imports.stopped_runs import StoppedRun, ToldRows

#: ``sent_by(key, sent_at)``: the run stopped before its report whose journal names the leave the ledger keeps as
#: ``key``, sent at ``sent_at``, and its outcome there (``hrimport.imports.stopped_runs.StoppedSends.sent_by``)
SentBy = Callable[[LedgerKey, str], "tuple[StoppedRun, Outcome] | None"]

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
    unanswered: dict[LedgerKey, LedgerEntry] | None = None,
    source_file: str,
    concurrency: int = 4,
    progress: Callable[[int], None] | None = None,
    on_outcomes: Callable[[list[RowOutcome]], None] | None = None,
    stopped: SentBy | None = None,
    told: ToldRows | None = None,
    found: set[int] | None = None,
) -> list[RowOutcome]:
    """Post every row (``total_days`` already set); one outcome per row, in any order.

    ``unanswered`` holds the ledger's ``sending`` entries of earlier runs (sent, answer lost): an overlap
    with that very record is reported ``added`` by that send (``hrimport.state.ledger``), its row number put in
    ``found``, or ``added`` as the run's that stopped before its report (``hrimport.imports.stopped_runs``) whose
    journal names it (``stopped``), counted in ``told``. ``on_outcomes`` gets each row as it gets its outcome (the
    run's journal), before the ledger records it stored; ``progress`` its count.
    """
    earlier = unanswered or {}

    def send(r: TimeOffRow) -> _Posted:
        key = ledger_key(r)
        body = request_body(customer_id, r)
        if ledger is not None:
            ledger.sending(key, body=body, total_days=r.total_days, source_file=source_file, source_row=r.row)
        try:
            answer = client.apply_time_off(body)
        except RequestRejected as exc:
            lost = earlier.get(key)
            record_id = _own_record(exc, r) if lost is not None else None
            if lost is not None and record_id is not None and ledger is not None:
                stored = _Stored(key, record_id, lost.total_days, r.row)
                # the record is the one the earlier run sent: its days are those it was sent with, and this
                # run's total-days warnings ("the service's 5 is used") told what this run was sending, which
                # the platform did not take; the row reads as one the ledger knows (its warnings about the data
                # itself are attached with the chunk's)
                r.total_days = lost.total_days
                sent_by = stopped(key, lost.accepted_at) if stopped is not None else None
                if sent_by is not None:  # a run stopped before its report added it: its journal says so
                    run, outcome = sent_by
                    return _Posted(RowOutcome(r.row, r.external_id, "", outcome, (),
                                              run.told(outcome, f"time-off record {record_id}"), r.details()),
                                   stored, run)
                # added by that send, told by no report (its run failed it, or was killed before its report):
                # this report is the one that tells it added, as a staff import tells a person created so
                return _Posted(RowOutcome(
                    r.row, r.external_id, "", Outcome.ADDED, (),
                    f"Added as time-off record {record_id}: sent on {_shown_at(lost.accepted_at)} (from "
                    f"{lost.source_file} row {lost.source_row}) by a run that never received the service's answer; "
                    "the service holds it, so no second record was added.", r.details()), stored, lost_found=True)
            if ledger is not None and lost is None:
                ledger.forget_sending(key)
            return _Posted(_rejected(r, exc, lost))
        except RetriesExhausted as exc:
            if exc.code == "not-sent":
                if ledger is not None and key not in earlier:
                    ledger.forget_sending(key)
                return _Posted(_outcome(r, Outcome.NOT_SENT, exc.code, f"{exc}."))
            if exc.unreachable:  # no connection was made: the record cannot have reached the service
                return _Posted(_outcome(r, Outcome.FAILED, exc.code, f"{exc}. Not sent: the next run sends it."))
            return _Posted(_outcome(r, Outcome.FAILED, exc.code,
                                    f"{exc}. If the record did reach the service, the next run finds it and reports "
                                    "it added, never a second record."))
        raw = answer.get("time_off_data")
        if not isinstance(raw, dict) or not raw:
            # a 200 without the record the spec says it answers (its messages are "not shown"): stored or
            # not, nobody can tell, so the ledger keeps the row as sent without an answer, which the next
            # run settles (the service's 409 naming this record, or a send that adds it)
            said = answer.get("message")
            message = f" (message {str(said)!r})" if said else ""
            return _Posted(_outcome(r, Outcome.FAILED, "unexpected-answer",
                                    "the service answered POST /api/apply-ee-time-off without the time-off record it "
                                    f"adds{message}. Whether it stored it is not known: the next run finds it or "
                                    "sends it, never a second record."))
        data: dict[str, Any] = raw
        record_id = data.get("id") if isinstance(data.get("id"), int) else None
        what = f"time-off record {record_id}" if record_id is not None else "a time-off record"
        return _Posted(RowOutcome(r.row, r.external_id, "", Outcome.ADDED, (*r.warnings, *_days_altered(r, data)),
                                  f"Added as {what}.", r.details()),
                       _Stored(key, record_id, r.total_days, r.row) if ledger is not None else None)

    outcomes: list[RowOutcome] = []
    if not rows:
        return outcomes

    handed_on: set[Future[_Posted]] = set()
    unwritten: list[Exception] = []  # why the ledger could not be written (a full disk): the run stops

    def finished(done: Iterable[Future[_Posted]]) -> None:
        for future in done:
            if future not in handed_on and not future.cancelled() and future.exception() is None:
                handed_on.add(future)
                posted = future.result()
                outcomes.append(posted.outcome)
                if on_outcomes:
                    on_outcomes(outcomes[-1:])
                if posted.stored is not None and ledger is not None and not unwritten:  # once the journal names it
                    stored = posted.stored
                    try:
                        ledger.remember(stored.key, record_id=stored.record_id, total_days=stored.total_days,
                                        source_file=source_file, source_row=stored.source_row)
                    except Exception as exc:  # noqa: BLE001 (raised below, once the rows answered are handed on)
                        unwritten.append(exc)
                if posted.told_by is not None and told is not None:
                    told.count(posted.told_by, posted.outcome.outcome, posted.outcome.row)
                if posted.lost_found and found is not None:
                    found.add(posted.outcome.row)
                if progress:
                    progress(1)

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="hrimport-timeoff") as pool:
        futures: set[Future[_Posted]] = {pool.submit(send, r) for r in rows}
        # each record as it is answered: the journal and the progress follow the sending (a wait for the first
        # exception returns only once every record is done when none fails, so a run killed half way left an
        # empty journal beside hundreds of records stored)
        for future in as_completed(futures):
            stop = future.exception()
            if stop is None:
                finished([future])
                stop = unwritten[0] if unwritten else None
            if stop is not None:
                # 401, a wrong base URL, a state folder that cannot be written: nothing more can succeed. The
                # workers in flight finish, and every record answered, before or after, reaches the run's
                # journal before the stop is raised: the stopped run's journal lists each row sent
                pool.shutdown(wait=True, cancel_futures=True)
                finished(futures)
                raise stop
    return outcomes


class _Stored(NamedTuple):
    """A record the service stored, for the ledger to remember once the run's journal names it."""

    key: LedgerKey
    record_id: int | None
    total_days: str
    source_row: int


class _Posted(NamedTuple):
    """A row's outcome as a worker found it; what the ledger is to remember of it (None: nothing), the run
    stopped before its report it is told as sent by (``post_time_off``'s ``stopped``), counted in its thread, and
    whether it is a record an earlier run's send stored, its answer lost (``post_time_off``'s ``found``)."""

    outcome: RowOutcome
    stored: _Stored | None = None
    told_by: StoppedRun | None = None
    lost_found: bool = False


def _shown_at(accepted_at: str) -> str:
    """When the ledger says a record was sent, as a person reads it (``2026-11-25 09:00``)."""
    try:
        return datetime.fromisoformat(accepted_at).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return accepted_at


def _outcome(r: TimeOffRow, outcome: Outcome, code: str, message: str) -> RowOutcome:
    text = f"Row {r.row}: {message}"
    return RowOutcome(r.row, r.external_id, "", outcome, (Problem(code, text, r.row), *r.warnings), text,
                      r.details())


def _days_altered(r: TimeOffRow, data: dict[str, Any]) -> tuple[Problem, ...]:
    """A ``platform-altered`` warning when the record the service answered holds other total days than were
    sent: the spec types the record's ``total_days`` integer (the request's is a string such as "4.5"), so a
    platform may hold half a day less, or more, and say nothing. No warning when it answers no figure."""
    stored = data.get("total_days")
    if isinstance(stored, bool) or not isinstance(stored, int | float | str):
        return ()
    try:
        same = Decimal(str(stored).strip()) == Decimal(r.total_days)
    except InvalidOperation:
        same = False
    if same:
        return ()
    message = (f"Row {r.row}: the platform altered total_days: sent {r.total_days!r}, stored "
               f"{json.dumps(stored, ensure_ascii=False)}")
    return (Problem("platform-altered", message, row=r.row, field="total_days", value=r.total_days,
                    severity="warning"),)


def _own_record(exc: RequestRejected, r: TimeOffRow) -> int | None:
    """The id of the stored record an overlap names when it is this row's own record (same leave type and
    dates: the service only compares one person's records), else None. An answer that names no record, or
    not its type and dates, proves nothing."""
    if timeoff_refusal(exc) != "overlaps-existing":
        return None
    for clash in exc.details:
        if not isinstance(clash, dict) or not isinstance(clash.get("id"), int):
            continue
        named = str(clash.get("leave_type") or "")
        match = match_leave_type(named)
        # a type the list lacks, sent as written (hrimport.timeoff.leave_types), is its name
        same_type = (match.leave_type.en == r.match.leave_type.en if match is not None and r.match.listed
                     else named.strip() == r.leave_type_name)
        if same_type and clash.get("start_date") == r.start and clash.get("end_date") == r.end:
            return int(clash["id"])
    return None


def _rejected(r: TimeOffRow, exc: RequestRejected, lost: LedgerEntry | None = None) -> RowOutcome:
    reasons = exc.reasons
    code = timeoff_refusal(exc)
    if lost is not None and code == "service-rejected":
        # the spec shows no status or body for an overlap: a platform refusing this row for the record its lost
        # answer stored may say it in its generic words ("Invalid request"), and the ledger keeps the row as
        # sent. A refusal that says more (access denied, an unknown person or leave type) is told as such
        return _outcome(r, Outcome.REJECTED, code,
                        f"the service refused it: {reasons}. It was sent on {lost.accepted_at} (from "
                        f"{lost.source_file} row {lost.source_row}) and that answer was lost, so the platform may "
                        "hold it already: check it there; the next run sends it again and reports it added "
                        "when the platform says it holds it.")
    if code == "overlaps-existing":
        earlier = (f" It was sent on {lost.accepted_at} and that answer was lost, but the service's answer does not "
                   "show that the overlapping record is that one: check it on the platform."
                   if lost is not None else "")
        return _outcome(r, Outcome.OVERLAPS_EXISTING, code,
                        f"the service already holds time off for '{r.external_id}' overlapping "
                        f"{r.start}..{r.end} ({reasons}); not added.{earlier}")
    if code == "unknown-staff":
        return _outcome(r, Outcome.REJECTED, code, f"the service does not know staff '{r.external_id}' ({reasons}).")
    if code == "total-days-mismatch":
        return _outcome(r, Outcome.REJECTED, code, f"the service refused total_days {r.total_days}: {reasons}.")
    if code == "unknown-leave-type":
        return _outcome(r, Outcome.REJECTED, code,
                        f"the service refused leave type '{r.leave_type_name}': {reasons}.")
    # permission-denied, service-rejected
    return _outcome(r, Outcome.REJECTED, code, f"the service refused it: {reasons}.")
