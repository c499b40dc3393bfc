"""Staff on the platform: the request body of each valid row, and the bulk endpoint's batches.

``build_payloads`` turns the mapped rows that passed validation into the staff input records the
service takes (spec "Staff input fields"); ``submit_staff`` sends them in batches and gives one
``RowOutcome`` per record sent. Issue 3, "Submitter":

- records go in batches of ``batch_size`` (default 100) to ``POST /api/bulk_add_edit_staff`` through a
  ``ServiceClient`` (which retries 429/5xx, timeouts and connection errors, honouring ``Retry-After``);
- a batch rejected whole (HTTP 400) is split to isolate the bad rows: the elements the service names in
  ``details[].index`` are marked ``rejected`` with its reasons and the others are sent again; without
  usable indices the batch is halved, down to single rows, so one bad row never sinks its batch. The spec
  shows no error details, so until an answer names element 0 (an index counts from 0, as the sandbox's
  do), the rows named are first sent on their own: a service counting otherwise would have rows that were
  fine rejected in the bad rows' place. One that names rows it then takes, or an element past the end, has
  its indices set aside for the run (halving instead, said in the run's notes);
- results are matched to rows by external id (``user.customer_system_id``), by position only for a result
  that names none; a row sent without a result gets ``failed`` with the code ``no-result``;
- a batch still failing after the retries gets ``failed`` (codes ``http-503``, ``connect-failed``,
  ``timeout``...) and the run goes on, except when the service is wholly unreachable: then
  ``ServiceUnavailableError`` is raised (exit 4);
- a 401 raises ``AuthenticationError`` at once: nothing is half-reported;
- an answer lost in transit: a record created by a request whose answer never arrived is answered
  "updated" when it is sent again (by the client's retry, or by the next run). When the state folder has
  never seen the service accept that person (``FirstSends``), the row is reported ``added``;
- read after write (issue 15): each accepted row's sent fields are compared with the ``user`` record the
  service answered with; a field stored otherwise is a ``platform-altered`` warning on the row
  (``hrimport.service.readback``);
- the client as cheap as it can be (issue 17): each row sent is encoded to JSON once (``element_json``),
  and with one batch in flight (the default), this side's own work on the batch answered before it
  (outcomes, read-back, journal, the state folder, progress) and the encoding of the next are done while the
  service works on it. The run's journal is written before the state folder remembers the rows (``_done``):
  a row the state folder holds is always named by a journal, so that the next run can tell what a run
  killed before its report added (``hrimport.imports.stopped_runs``); a run killed at any moment leaves at
  most two batches unremembered (the one answered, the one in flight), which the next run sends again.
  Each row's record is asked for once per send and goes with its part; the usual answer (a result per
  row, in the order sent) is matched by one comparison, and its read-back told for the whole batch at
  once (``ReadBack.unaltered_many``), a row looked at alone only when its answer is not plainly as sent.
"""

from __future__ import annotations

import gc
import json
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any, Protocol

from hrimport.errors import (
    AccessDenied,
    AuthenticationError,
    RequestRejected,
    RetriesExhausted,
    ServiceError,
    untraced,
)
from hrimport.fields import by_name
from hrimport.gc_pause import paused_gc
from hrimport.mapper import MappedTable
from hrimport.outcomes import Outcome, Problem, RowOutcome
from hrimport.service.answers import refused_for_content, staff_outcome
from hrimport.service.readback import ReadBack, compared_fields

__all__ = [
    "BulkStaffClient",
    "FirstSends",
    "StaffRecord",
    "SubmitResult",
    "build_elements",
    "build_payloads",
    "bulk_bodies",
    "element_json",
    "payload_keys",
    "submit_staff",
]

@dataclass(frozen=True)
class StaffRecord:
    """One valid row ready to send: its source row number, external id, name and staff input fields.

    ``sent_json``, when set, is the element's JSON as it is sent (``element_json``): on the records an
    import keeps for sending (``hrimport.imports.records``, which holds them as that text), and on those
    ``submit_staff`` hands to ``on_accepted``, so that neither the request nor the state folder, whose
    fingerprint is the same text when the payload names its external id, encodes the payload again.
    ``compared``, when set: the fields the service's answer is checked against (``ReadBack.unaltered``) and
    their ``"field":value`` JSON texts as the element holds them, so the usual answer is checked without
    the payload.
    """

    row: int
    external_id: str
    name: str
    payload: Mapping[str, Any]
    sent_json: str | None = field(default=None, repr=False, compare=False)
    compared: tuple[tuple[str, ...], str] | None = field(default=None, repr=False, compare=False)


class StoredPayload(Mapping[str, Any]):
    """A payload kept as its JSON text (or what reads it) and decoded when first read: most are only sent,
    remembered and compared by fingerprint, which take the text as it is. ``keys``: the order to give its keys (the
    text's may be sorted), each key the payload holds among them; ``element_of``: the external id whose
    element (``element_json``) the text is, if it is (then it is the state folder's fingerprint text too);
    ``known``: the values of a few keys, read without decoding: those of ``known_keys`` that it lacks, it
    does not hold.

    >>> from hrimport.state.store import fingerprint
    >>> stored = StoredPayload('{"customer_system_id":"E1","name":"Ann"}', element_of="E1")
    >>> fingerprint("E1", stored) == fingerprint("E1", {"name": "Ann"}), dict(stored)
    (True, {'customer_system_id': 'E1', 'name': 'Ann'})
    """

    __slots__ = ("_keys", "_known", "_known_keys", "_text", "_value", "element_of")

    def __init__(self, text: str | Callable[[], str], keys: Sequence[str] | None = None, *,
                 element_of: str | None = None, known: Mapping[str, Any] | None = None,
                 known_keys: Collection[str] = ()) -> None:
        self._text = text  # or what reads it, when first needed
        self.element_of = element_of
        self._keys = keys
        self._known = known or {}
        self._known_keys = known_keys
        self._value: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        if not isinstance(self._text, str):
            self._text = self._text()
        return self._text

    def _decoded(self) -> dict[str, Any]:
        if self._value is None:
            value: dict[str, Any] = json.loads(self.text)
            if self._keys is not None:
                value = {k: value[k] for k in self._keys if k in value}
            self._value = value
        return self._value

    def __getitem__(self, key: str) -> Any:
        if key in self._known_keys and self._value is None:
            return self._known[key]  # KeyError for a known absent key, as the payload would raise
        return self._decoded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())

    def __repr__(self) -> str:
        return repr(self._decoded())


#: The keys of an element's payload kept as its text (``hrimport.imports.records``) that the submitter and the
#: state folder read: its external id and name are known without decoding it, and it never holds customer_id.
ELEMENT_KNOWN_KEYS = frozenset({"customer_system_id", "name", "customer_id"})


def payload_keys(mapped: MappedTable) -> tuple[str, ...]:
    """The keys ``build_payloads`` gives ``mapped``'s payloads, in the order each payload holds those it has:
    its fields in the table's order, then the ones it adds."""
    specs = by_name(mapped.fields)
    wanted = [c for c in mapped.frame.columns if not specs[c].envelope]
    return tuple(dict.fromkeys([*wanted, "is_employee", "customer_data_type"]))


def build_payloads(mapped: MappedTable, positions: list[int]) -> list[dict[str, Any]]:
    """The service's JSON body for each row at ``positions`` (valid rows): empty fields are not sent."""
    with paused_gc():  # a dozen containers a row, none in a cycle: no full collection may walk them all
        return _build_payloads(mapped, positions)


def _build_payloads(mapped: MappedTable, positions: list[int]) -> list[dict[str, Any]]:
    specs = by_name(mapped.fields)
    wanted = [c for c in mapped.frame.columns if not specs[c].envelope]
    frame = mapped.frame.iloc[positions]
    # Column by column, then one dict per row: DataFrame.to_dict("records") boxes every cell one by one,
    # 6 s of a 100,000-row import's 16.
    columns = []
    for name in wanted:
        values = frame[name].tolist()
        if specs[name].type == "boolean":
            values = ["" if v == "" else v == "true" for v in values]
        columns.append(values)
    custom = mapped.custom.iloc[positions] if len(mapped.custom.columns) else None
    custom_names = list(custom.columns) if custom is not None else []
    # Row by row over tuples (zip), never cell by cell through indices: this loop runs for every row sent.
    custom_rows = zip(*(custom[name].tolist() for name in custom_names)) if custom is not None else None
    payloads = []
    for row in zip(*columns) if wanted else ((),) * len(positions):
        # "" in row: a C-level scan, so that a fully filled row (the usual one) is zipped into its dict as is
        payload = {k: v for k, v in zip(wanted, row) if v != ""} if "" in row else dict(zip(wanted, row))
        if payload.get("is_intern") is True and "is_employee" not in payload:
            # the platform defaults is_employee to true, which an intern cannot be (spec: is_intern rule)
            payload["is_employee"] = False
        if custom_rows is not None:
            entries = [{"name": name, "value": value} for name, value in zip(custom_names, next(custom_rows))
                       if value != ""]
            if entries:
                payload["customer_data_type"] = entries
        payloads.append(payload)
    return payloads


@dataclass(frozen=True)
class Element:
    """A row's element as ``build_elements`` makes it: its JSON (``element_json``), the order its payload
    holds its keys in, and what the service's answer is checked against (``StaffRecord.compared``)."""

    text: str
    keys: tuple[str, ...]
    compared: tuple[tuple[str, ...], str]


def build_elements(mapped: MappedTable, positions: list[int]) -> list[Element] | None:
    """For each row at ``positions`` (valid rows), the JSON of the element sent for the payload
    ``build_payloads`` makes of it (``element_json``), and the order that payload holds its keys in (of
    ``payload_keys``), made straight from the columns: each column's ``"key":value`` texts in one pass, then
    each row's non-empty ones joined in key order. A fifth of the cost of making the payload and encoding
    it. None when a row's element is not its payload alone (no external id of its own, a ``customer_id``
    field) or a value is not text: then the payloads are made."""
    specs = by_name(mapped.fields)
    wanted = [c for c in mapped.frame.columns if not specs[c].envelope]
    if "customer_system_id" not in wanted or "customer_id" in wanted:
        return None
    frame = mapped.frame.iloc[positions]
    parts: dict[str, list[str]] = {}
    try:
        for name in wanted:
            values = frame[name].tolist()
            key = _encode_text(name) + ":"
            if specs[name].type == "boolean":
                parts[name] = ["" if v == "" else key + ("true" if v == "true" else "false") for v in values]
            else:
                parts[name] = ["" if v == "" else key + _encode_text(v) for v in values]
        if "" in parts["customer_system_id"]:
            return None  # a row without an external id: the element adds one (``_with_id``)
        keys = payload_keys(mapped)
        orders = [keys] * len(positions)
        if "is_intern" in parts and specs["is_intern"].type == "boolean":
            # the platform defaults is_employee to true, which an intern cannot be (spec: is_intern rule);
            # build_payloads adds it after the table's fields
            interns = parts["is_intern"]
            employee = parts.get("is_employee") or [""] * len(positions)
            intern_text = _encode_text("is_intern") + ":true"
            added = tuple(dict.fromkeys([*(k for k in wanted if k != "is_employee"), "is_employee",
                                         "customer_data_type"]))
            parts["is_employee"] = [_NOT_EMPLOYEE if e == "" and i == intern_text else e
                                    for i, e in zip(interns, employee)]
            orders = [added if e != s else k for e, s, k in zip(parts["is_employee"], employee, orders)]
        if len(mapped.custom.columns):
            custom = mapped.custom.iloc[positions]
            entries = [[f'{{"name":{_encode_text(name)},"value":{_encode_text(v)}}}' if v != "" else ""
                        for v in custom[name].tolist()] for name in custom.columns]
            packed = [",".join(filter(None, row)) for row in zip(*entries)]
            key = _encode_text("customer_data_type") + ":["
            sent = parts.get("customer_data_type") or [""] * len(positions)
            parts["customer_data_type"] = [key + p + "]" if p else s for p, s in zip(packed, sent)]
    except TypeError:  # a value that is not text (c_encode_basestring takes str only)
        return None
    columns = [parts[name] for name in sorted(parts)]  # as sort_keys orders them
    texts = ["{" + ",".join(filter(None, row)) + "}" for row in zip(*columns)]
    # the fields the answer is checked against (ReadBack), in its order: which of them each row holds
    checked = [name for name in compared_fields() if name in parts]
    helds: dict[tuple[str, ...], tuple[str, ...]] = {}
    compared = []
    for row in zip(*(parts[name] for name in checked)) if checked else ((),) * len(positions):
        held = tuple(name for name, text in zip(checked, row) if text)
        compared.append((helds.setdefault(held, held), ",".join(filter(None, row))))
    return [Element(*found) for found in zip(texts, orders, compared)]


#: A JSON string as the element's encoder writes it (ensure_ascii=False).
_encode_text = json.encoder.encode_basestring
_NOT_EMPLOYEE = _encode_text("is_employee") + ":false"


def bulk_bodies(customer_id: str | int, records: Sequence[StaffRecord], batch_size: int) -> list[str]:
    """The request bodies ``submit_staff`` sends for ``records``, batch by batch, before any split (a dry
    run's ``payloads.jsonl``): each the very text a request carries, byte for byte, not a copy made again."""
    from hrimport.service.client import ServiceClient

    return [ServiceClient.bulk_json(customer_id, [element_json(r) for r in records[start:start + batch_size]])
            .decode("utf-8") for start in range(0, len(records), batch_size)]


def element_json(record: StaffRecord) -> str:
    """The element sent for ``record`` as JSON: sorted keys, no spaces, no ``customer_id`` (sent once, at the
    top level). Every row sent is encoded once, by this: the request body is made of these texts (and a
    dry run's ``payloads.jsonl``), and the state folder's fingerprint of an accepted payload is the same text
    (``hrimport.state.store``). A record that already carries its text (``StaffRecord.sent_json``) is not encoded again."""
    if record.sent_json is not None:
        return record.sent_json
    element = _with_id(record)
    if "customer_id" in element:
        element = {k: v for k, v in element.items() if k != "customer_id"}
    return _encode_element(_as_dict(element))


#: As httpx encodes a ``json=`` body (no spaces, UTF-8 text, no NaN), with sorted keys: the state store's
#: fingerprint text of the same payload, for the JSON values a payload holds.
_encode_element = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def _as_dict(payload: Mapping[str, Any]) -> dict[str, Any]:
    """``payload`` as the json module encodes it: a dict (a ``StoredPayload`` is decoded)."""
    return payload if isinstance(payload, dict) else dict(payload)


def _with_id(record: StaffRecord) -> Mapping[str, Any]:
    """The element sent for ``record``: results are matched on ``customer_system_id``, so it is always sent."""
    payload = record.payload
    if "customer_system_id" not in payload:
        payload = {**payload, "customer_system_id": record.external_id}
    return payload


class BulkStaffClient(Protocol):
    """What the submitter needs of ``hrimport.service.client.ServiceClient``."""

    def bulk_add_edit_staff(
        self, customer_id: str | int, records: Sequence[Mapping[str, Any] | str], *,
        on_resend: Callable[[], None] | None = None, on_sent: Callable[[], None] | None = None,
    ) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class FirstSends:
    """What the state folder knows of a batch about to be sent (``hrimport.state.store``), so that a record
    created by a send whose answer was lost is reported ``added`` rather than ``updated``."""

    never_accepted: frozenset[str] = frozenset()  # external ids the service never accepted from us
    sent_before: frozenset[str] = frozenset()  # of those, sent by an earlier run that lost the answer


@dataclass
class SubmitResult:
    """What happened to the records sent: one outcome each, plus counts and timings."""

    outcomes: list[RowOutcome]
    requests: int = 0  # bulk requests made (a split batch counts once per part); retries not counted
    batches: int = 0  # batches of ``batch_size`` the records were cut into
    splits: int = 0  # times a rejected batch was divided
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)  # run-level remarks (e.g. results naming no sent row)

    def counts(self) -> dict[str, int]:
        """Rows per outcome (only the outcomes that occurred)."""
        return dict(Counter(o.outcome.value for o in self.outcomes))


def submit_staff(
    client: BulkStaffClient,
    customer_id: str | int,
    records: Sequence[StaffRecord],
    *,
    batch_size: int = 100,
    progress: Callable[[int], None] | None = None,
    on_accepted: Callable[[list[StaffRecord]], None] | None = None,
    on_sending: Callable[[list[StaffRecord]], FirstSends] | None = None,
    on_outcomes: Callable[[list[RowOutcome]], None] | None = None,
    readback: ReadBack | None = None,
    concurrency: int = 1,
    collect: Callable[[list[RowOutcome]], None] | None = None,
) -> SubmitResult:
    """Send ``records`` in bulk batches; return exactly one ``RowOutcome`` per record, in input order, or
    hand them to ``collect`` as they are settled (then ``SubmitResult.outcomes`` is empty: a big import keeps
    them its own compact way, ``hrimport.imports.records.SentRows``).

    ``progress`` is called with the number of records that just got their outcome (an increment, as a
    progress bar's ``update`` takes). ``on_accepted`` is called after each answer with the records the
    service added or updated in it, once ``on_outcomes`` has them, so state can follow the service batch by
    batch and never hold a row the journal does not name; ``on_sending`` before
    each batch, to record the intent and say which records are first sends; ``on_outcomes`` with the rows
    that just got their outcome (the run's journal). ``readback`` words the warnings of fields the service
    stored otherwise than sent (default: ``ReadBack()``, the spec's sensitive fields masked).
    ``concurrency`` batches are in flight at once (default 1: the platform's limits are not shown); the
    answers are handled one at a time in this thread, so the callbacks and the state need no locks. Raises
    ``AuthenticationError`` on a 401 and ``ServiceUnavailableError`` when no request could reach the
    service at all, once the requests in flight have been answered and recorded.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    # as given, not copied into a list: an import's records make their payloads as they are asked for
    # (``hrimport.imports.records``), and a list of them all would hold every payload at once
    run = _Run(client, customer_id, records, progress, on_accepted, on_sending, readback or ReadBack(),
               on_outcomes, collect)
    started = time.perf_counter()
    batches = (list(range(start, min(start + batch_size, len(run.records))))
               for start in range(0, len(run.records), batch_size))
    # Full collections would walk every object the run holds (each row's payload, outcome...) again and
    # again as outcomes pile up: the collector waits, and ``_done`` frees each batch's own cycles.
    with paused_gc():
        run.send_all(batches, concurrency)
    outcomes = [run.outcomes[i] for i in range(len(run.records)) if i in run.outcomes] if collect is None else []
    # rows in = rows out (issue 3, "Outcomes"): a record without an outcome would be a bug here
    if run.settled_count != len(run.records):
        raise AssertionError(f"{len(run.records)} records sent but {run.settled_count} outcomes")
    return SubmitResult(
        outcomes=outcomes,
        requests=run.requests,
        batches=run.batches,
        splits=run.splits,
        seconds=round(time.perf_counter() - started, 3),
        notes=run.notes,
    )


@dataclass
class _Sent:
    """One part as the service answered it: its results, or the error the client raised."""

    part: list[int]
    first: FirstSends
    texts: list[str]  # each row's element as sent (``element_json``)
    records: list[StaffRecord]  # each row's record (``records[part[k]]``), asked for once
    results: list[dict[str, Any]] | None = None
    error: ServiceError | RequestRejected | None = None
    resent: bool = False  # the client repeated the request after an attempt the service may have processed


class _Run:
    """The state of one submission: records, outcomes so far, counters."""

    def __init__(
        self,
        client: BulkStaffClient,
        customer_id: str | int,
        records: Sequence[StaffRecord],
        progress: Callable[[int], None] | None,
        on_accepted: Callable[[list[StaffRecord]], None] | None,
        on_sending: Callable[[list[StaffRecord]], FirstSends] | None,
        readback: ReadBack,
        on_outcomes: Callable[[list[RowOutcome]], None] | None = None,
        collect: Callable[[list[RowOutcome]], None] | None = None,
    ) -> None:
        self.client = client
        self.readback = readback
        self.on_outcomes = on_outcomes
        self.collect = collect
        self.finished: list[RowOutcome] = []  # outcomes set since the last ``_done``
        self.on_sending = on_sending
        self.customer_id = customer_id
        self.records = records
        self.progress = progress
        self.on_accepted = on_accepted
        self.outcomes: dict[int, RowOutcome] = {}  # kept here unless ``collect`` takes them
        self.settled = bytearray(len(records))  # 1 for each record with its outcome
        self.settled_count = 0
        self.requests = self.batches = self.splits = 0
        # what a refused batch's details[].index counts (``_split``): shown from 0 once it names element 0;
        # not used once it named rows the service then took, or an element past the end
        self.indices_from_zero = False
        self.indices_usable = True
        self.suspects: set[int] = set()  # rows named by an index not yet shown to count from 0
        self.reached = False  # has any request reached the service (any HTTP answer at all)?
        self.notes: list[str] = []
        # rows of the next batch, asked for and encoded ahead (``element_json``)
        self._prepared: dict[int, tuple[StaffRecord, str]] = {}

    def send_all(self, batches: Iterator[list[int]], concurrency: int) -> None:
        """Send every batch (indices into ``records``), ``concurrency`` requests at a time, splitting a batch
        while the service rejects it whole (its parts are sent before the next batch)."""
        waiting: deque[tuple[list[int], FirstSends]] = deque()  # parts of split batches, sent first
        ahead: deque[list[int]] = deque()  # the next batch, taken early to be encoded while one is in flight

        def next_part() -> _Part | None:
            split: FirstSends | None = None
            if waiting:
                part, split = waiting.popleft()
            else:
                batch = ahead.popleft() if ahead else next(batches, None)
                if batch is None:
                    return None
                self.batches += 1
                part = batch
            prepared = [self._prepared.pop(i) if i in self._prepared else self._prepare(i) for i in part]
            records = [record for record, _ in prepared]
            if split is not None:
                first = split
            else:
                first = self.on_sending(records) if self.on_sending else FirstSends()
            return part, first, [text for _, text in prepared], records

        def encode_ahead() -> None:
            if not ahead and (batch := next(batches, None)) is not None:
                ahead.append(batch)
                self._prepared.update((i, self._prepare(i)) for i in batch)

        def answered(sent: _Sent) -> Callable[[], None] | None:
            parts, settle = self._answer(sent)
            waiting.extendleft((part, sent.first) for part in reversed(parts))
            return settle

        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="hrimport-staff") as pool:
            if concurrency == 1:
                self._send_one_at_a_time(pool, next_part, answered, encode_ahead)
            else:
                self._send_several_at_a_time(pool, concurrency, next_part, answered)

    def _send_one_at_a_time(self, pool: ThreadPoolExecutor, next_part: Callable[[], _Part | None],
                            answered: Callable[[_Sent], Callable[[], None] | None],
                            encode_ahead: Callable[[], None]) -> None:
        """One request in flight at a time, and this thread's own work done while it is: the request goes
        out from the worker, and once its body is on the wire, the rows of the batch answered before it
        get their outcomes (read-back, journal, progress) and the state folder remembers them, and the next
        batch is encoded, while the service works."""
        settle: Callable[[], None] | None = None  # the outcomes of the batch answered last, still to give
        in_flight: Future[_Sent] | None = None
        try:
            while (item := next_part()) is not None:
                self.requests += 1
                on_the_wire = threading.Event()
                in_flight = pool.submit(self._request, *item, on_the_wire.set)
                # The worker needs this thread's lock on the interpreter until its request is written; a
                # request still not written by then waits for a connection or a retry.
                on_the_wire.wait(_ON_THE_WIRE)
                if settle is not None:
                    last, settle = settle, None
                    last()
                encode_ahead()
                sent = in_flight.result()
                in_flight = None
                settle = answered(sent)
            if settle is not None:
                last, settle = settle, None
                last()
        except BaseException:
            # Something stopped this thread (a 401, a service wholly unreachable, a failing callback, Ctrl-C
            # without the handler): the rows already answered get their outcomes, and the service may have
            # stored the request in flight, so its answer is recorded too, before the reason is raised.
            if settle is not None:
                settle()
            if in_flight is not None:
                self._record_in_flight([in_flight])
            raise

    def _send_several_at_a_time(self, pool: ThreadPoolExecutor, concurrency: int,
                                next_part: Callable[[], _Part | None],
                                answered: Callable[[_Sent], Callable[[], None] | None]) -> None:
        in_flight: set[Future[_Sent]] = set()
        answered_unread: list[Future[_Sent]] = []  # found answered together, not yet handled
        try:
            while True:
                while len(in_flight) < concurrency and (item := next_part()) is not None:
                    self.requests += 1
                    in_flight.add(pool.submit(self._request, *item))
                if not in_flight:
                    return
                done, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                answered_unread = list(done)
                while answered_unread:
                    if (settle := answered(answered_unread.pop().result())) is not None:
                        settle()
        except BaseException:
            # A 401, or a service wholly unreachable: send nothing more, but record the answers of the
            # requests answered beside it and of those still in flight (the service may have stored them)
            # before stopping.
            self._record_in_flight([*answered_unread, *in_flight])
            raise

    def _record_in_flight(self, in_flight: Iterable[Future[_Sent]]) -> None:
        """Record the answers of requests still in flight when the run stops (their errors are not raised:
        the run is already stopping for its own reason)."""
        for future in in_flight:
            if future.exception() is not None:  # no answer at all (waits for it): nothing to record
                continue
            try:
                _, settle = self._answer(future.result())
                if settle is not None:
                    settle()
            except (ServiceError, RetriesExhausted):
                pass

    def _prepare(self, index: int) -> tuple[StaffRecord, str]:
        """Record ``index`` and its element's JSON (``element_json``): asked for once per send."""
        record = self.records[index]
        return record, element_json(record)

    def _request(self, part: list[int], first: FirstSends, texts: list[str], records: list[StaffRecord],
                 on_sent: Callable[[], None] | None = None) -> _Sent:
        """Send one part (``texts``: its rows' elements); the answer or the service's error, as data. Only
        the HTTP request: it runs in a worker thread, while the answer is handled in the submitting one
        (``_answer``). ``on_sent`` is called once the request's body is on the wire, and when the request
        is over whatever happened."""
        resent: list[bool] = []
        try:
            results = self.client.bulk_add_edit_staff(self.customer_id, texts, on_resend=partial(resent.append, True),
                                                      on_sent=on_sent)
        except (ServiceError, RequestRejected) as exc:  # RetriesExhausted and AuthenticationError included
            return _Sent(part, first, texts, records, error=untraced(exc), resent=bool(resent))
        finally:
            if on_sent is not None:
                on_sent()
        return _Sent(part, first, texts, records, results=results, resent=bool(resent))

    def _answer(self, sent: _Sent) -> tuple[list[list[int]], Callable[[], None] | None]:
        """Give the rows of one answered part their outcomes; returns the parts still to send (a split),
        and for an accepted part, what gives its rows their outcomes (``_settle``): what the service
        accepted is remembered here, the outcomes may wait until the next request is on its way."""
        part, exc = sent.part, sent.error
        if isinstance(exc, AuthenticationError):
            raise exc  # a wrong token stops everything at once (issue 3)
        if isinstance(exc, RequestRejected):
            self.reached = True
            return self._split(part, exc), None
        if isinstance(exc, RetriesExhausted):
            if exc.unreachable and not self.reached:
                # Nothing has ever reached the service and this batch could not connect through all
                # its retries: the service is wholly unreachable. Raise now rather than let every
                # other batch wait out the same retries (the CLI exits 4).
                raise exc
            self.reached = self.reached or not exc.unreachable
            if exc.code == "not-sent":
                self._fail(part, exc.code, f"{exc}.", Outcome.NOT_SENT)
            else:
                self._fail(part, exc.code, f"not imported: {exc}")
            return [], None
        if exc is not None:  # an answer the spec does not describe
            self.reached = True
            self._fail(part, "unexpected-answer", f"not imported: {exc}")
            return [], None
        self.reached = True
        # records a lost answer may have created: every first send of a repeated request, and those
        # an earlier run sent without an answer
        created = sent.first.never_accepted if sent.resent else sent.first.sent_before
        return [], self._match(part, sent.records, sent.results or [], created, sent.texts)

    # ------------------------------------------------------------------------------------------ outcomes

    def _set(self, index: int, outcome: RowOutcome) -> None:
        if self.settled[index]:  # each row gets exactly one outcome
            raise AssertionError(f"row {outcome.row} got a second outcome")
        self.settled[index] = 1
        self.settled_count += 1
        if self.collect is None:
            self.outcomes[index] = outcome
        self.finished.append(outcome)

    def _done(self, count: int, accepted: list[StaffRecord] | None = None) -> None:
        """Hand on the rows that just got their outcomes (``count`` of them): to the run's journal first, then,
        of those the service accepted (``accepted``), to the state folder (``on_accepted``), then to progress.
        The journal comes first: a run killed between the two leaves rows the state folder does not hold yet,
        which the next run sends again (the staff endpoint creates or updates; one it added is reported added,
        its send recorded in ``staff_sending``), where the other order left rows the state folder held that no
        journal named, which the next run read unchanged: a new hire added in no report."""
        if self.on_outcomes is not None and self.finished:
            self.on_outcomes(self.finished)
        if self.on_accepted is not None and accepted:  # before progress: whoever watches it sees the state written
            self.on_accepted(accepted)
        if self.collect is not None and self.finished:
            self.collect(self.finished)
        self.finished = []
        if self.progress is not None and count:
            self.progress(count)
        # Each request leaves a few reference cycles (httpx's request, stamina's retry context): freed here,
        # by a collection of the youngest objects only, those made since the last batch.
        gc.collect(0)

    @staticmethod
    def _outcome(
        record: StaffRecord, outcome: Outcome, message: str, problems: tuple[Problem, ...] = ()
    ) -> RowOutcome:
        return RowOutcome(record.row, record.external_id, record.name, outcome, problems, message)

    def _fail(self, part: list[int], code: str, reason: str, outcome: Outcome = Outcome.FAILED) -> None:
        for i in part:
            record = self.records[i]
            problem = Problem(code, f"Row {record.row}: {reason}", row=record.row)
            self._set(i, self._outcome(record, outcome, problem.message, (problem,)))
        self._done(len(part))

    def _reject(self, index: int, reasons: list[tuple[str | None, str]], code: str) -> None:
        """Mark one row ``rejected`` with the service's reasons, one ``Problem`` per (field, reason)."""
        record = self.records[index]
        row = record.row
        problems = tuple(
            Problem(
                code,
                f"Row {row}: the service rejected {f'{name!r}' if name else 'the record'}: {reason}",
                row=row,
                field=name,
            )
            for name, reason in reasons
        )
        self._set(
            index, self._outcome(record, Outcome.REJECTED, " ".join(p.message for p in problems), problems)
        )

    # --------------------------------------------------------------------------------------- splitting

    def _split(self, part: list[int], exc: RequestRejected) -> list[list[int]]:
        """Decide what a batch rejected whole becomes; return the parts still to send."""
        # a 400, or the spec's error body in a 200, is the service refusing the data (its status is not shown)
        if isinstance(exc, AccessDenied):
            # 403 (api-notes: "missing scope or admin access"), or the spec's ERROR_FATAL "Access Denied": the
            # import account may not write, whatever the rows hold; what the spec's "Permission Denied" says
            for i in part:
                record = self.records[i]
                problem = Problem(
                    "permission-denied",
                    f"Row {record.row}: the service denied the import account access to staff records of customer "
                    f"{self.customer_id} (HTTP {exc.status}: {exc.reasons})",
                    row=record.row,
                )
                self._set(i, self._outcome(record, Outcome.PERMISSION_DENIED, problem.message, (problem,)))
            self._done(len(part))
            return []
        code = "service-rejected" if exc.status == 400 or 200 <= exc.status < 300 else f"http-{exc.status}"
        if not refused_for_content(exc.status):
            # a refusal of the batch as a whole (404, 409...): every row carries the service's reason
            for i in part:
                self._reject(i, [(None, exc.reasons)], code)
            self._done(len(part))
            return []
        named: dict[int, list[tuple[str | None, str]]] = defaultdict(list)
        for detail in exc.details:
            position = _index_of(detail)
            if position is not None and 0 <= position < len(part):
                named[position].append(_field_reason(detail, exc.error))
            elif position is not None and position >= len(part):
                self._indices_wrong("named an element past the end of the batch it refused")
        if 0 in named:
            self.indices_from_zero = True  # only a count from 0 names the first element 0
        if named and self.indices_usable:
            suspects = [part[position] for position in sorted(named)]
            if not self.indices_from_zero and len(part) > 1:
                # The spec shows no error details: that an index counts from 0 is the sandbox's choice. Until an
                # answer shows it, the rows named go on their own: refused again, they are the bad ones; taken,
                # the indices named rows that were fine (``_settle``), and are no longer used.
                self.suspects.update(suspects)
                rest = [i for position, i in enumerate(part) if position not in named]
                self.splits += 1
                return [suspects, rest] if rest else [suspects]
            for position, reasons in named.items():
                self._reject(part[position], reasons, code)
            self._done(len(named))
            rest = [i for position, i in enumerate(part) if position not in named]
            if rest:
                self.splits += 1
            return [rest] if rest else []
        if len(part) == 1:
            # one row and no usable index: the reasons are about it
            reasons = [_field_reason(d, exc.error) for d in exc.details]
            self._reject(part[0], reasons or [(None, exc.error or f"HTTP {exc.status}")], code)
            self._done(1)
            return []
        # no details naming elements: halve until the bad rows stand alone
        self.splits += 1
        middle = len(part) // 2
        return [part[:middle], part[middle:]]

    def _indices_wrong(self, why: str) -> None:
        """The service's ``details[].index`` did not name the elements it refused, counted from 0: from now on
        a refused batch is halved to find its bad rows, as when it names none."""
        if self.indices_usable and not self.indices_from_zero:
            self.indices_usable = False
            self.notes.append(f"the service's error details {why}: their element numbers were not used to find "
                              "the rows it refused, which were found by sending the batch in halves")

    # ---------------------------------------------------------------------------------------- matching

    def _match(self, part: list[int], records: list[StaffRecord], results: list[dict[str, Any]],
               created: frozenset[str], texts: list[str]) -> Callable[[], None]:
        """Find each row's result in a batch's answer, by external id (position as a fallback only for
        results that name no external id), and remember the rows the service accepted (``on_accepted``);
        returns what gives the rows their outcomes (``_settle``). ``records`` and ``texts``: each row's
        record and element as sent."""
        ids = [_sent_id(record) for record in records]
        try:  # the usual answer: each result in its row's place (a result naming "" would be given it too)
            in_order = len(results) == len(ids) and [result["user"]["customer_system_id"] for result in results] == ids
        except (KeyError, TypeError):  # a result without a user record, or not a JSON object
            in_order = False
        found: list[dict[str, Any] | None] = list(results) if in_order else self._find(ids, results)
        outcomes = [None if result is None else _staff_outcome(_message(result)) for result in found]
        return partial(self._settle, part, records, found, outcomes, created, texts)

    def _find(self, ids: list[str], results: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
        """Each row's result (None: none) by its external id (``ids``, in the rows' order), the first row
        of an id taking its first result; a result naming no external id goes to the row in its place when
        the answer has one result per row and that row has none."""
        by_id: dict[str, deque[int]] = defaultdict(deque)
        for position, sent_id in enumerate(ids):
            by_id[sent_id].append(position)
        found: list[dict[str, Any] | None] = [None] * len(ids)
        anonymous: list[tuple[int, dict[str, Any]]] = []
        strangers: list[str] = []
        for position, result in enumerate(results):
            if not isinstance(result, dict):
                continue
            ext = _result_id(result)
            if ext is None:
                anonymous.append((position, result))
            elif by_id.get(ext):
                found[by_id[ext].popleft()] = result
            else:
                strangers.append(ext)
        if anonymous and len(results) == len(ids):
            # e.g. a "Permission Denied" without a user record: trust the position if that row is free
            for position, result in anonymous:
                if found[position] is None:
                    found[position] = result
        if strangers:
            self.notes.append(
                f"the service returned results for external ids that were not sent: {', '.join(strangers[:5])}"
            )
        return found

    def _settle(self, part: list[int], records: list[StaffRecord], found: list[dict[str, Any] | None],
                outcomes: list[Outcome | None], created: frozenset[str], texts: list[str]) -> None:
        """Give each row of an answered batch the outcome of its result (``_match``), then remember the rows
        the service accepted (``on_accepted``, after the journal: ``_done``). An "updated" row in ``created``
        was created by a send whose answer was lost: it is reported ``added``."""
        # accepted rows: did the service store what was sent? (its answer holds the stored record) All the
        # batch's rows told at once, without their payloads, when they hold the texts to compare with
        checked = [(k, compared, result.get("user"))
                   for k, (record, result, outcome) in enumerate(zip(records, found, outcomes))
                   if outcome in _ACCEPTED and (compared := record.compared) is not None and result is not None]
        same = self.readback.unaltered_many([compared for _, compared, _ in checked], [user for _, _, user in checked])
        unaltered = {k for (k, _, _), yes in zip(checked, same) if yes}
        if self.suspects and not self.suspects.isdisjoint(part):
            if any(outcome in _ACCEPTED for i, outcome in zip(part, outcomes) if i in self.suspects):
                self._indices_wrong("named rows it then took when sent on their own")
            self.suspects.difference_update(part)
        for k, (i, record, result, outcome) in enumerate(zip(part, records, found, outcomes)):
            if result is None:
                problem = Problem(
                    "no-result", f"Row {record.row}: sent, but the service's answer holds no result for it",
                    row=record.row,
                )
                self._set(i, self._outcome(record, Outcome.FAILED, problem.message, (problem,)))
                continue
            row_outcome = self._from_result(record, result, outcome, k in unaltered)
            if row_outcome.outcome is Outcome.UPDATED and record.external_id in created:
                row_outcome.outcome = Outcome.ADDED
                row_outcome.message = (f"Added: the service answered {row_outcome.message!r} because an earlier "
                                       "send created the record and its answer was lost.")
            self._set(i, row_outcome)
        self._done(len(part), [_as_sent(record, text) for record, text, outcome in zip(records, texts, outcomes)
                               if outcome in _ACCEPTED])

    def _from_result(self, record: StaffRecord, result: dict[str, Any], outcome: Outcome | None,
                     unaltered: bool) -> RowOutcome:
        """The outcome of a row's result (``outcome``: what its message says); ``unaltered``: its answer is
        known to hold every field as sent."""
        message = _message(result)
        row = record.row
        if outcome is None:
            problem = Problem(
                "unexpected-message",
                f"Row {row}: the service answered {message!r}, which is not known",
                row=row,
            )
            return self._outcome(record, Outcome.FAILED, problem.message, (problem,))
        if outcome is Outcome.PERMISSION_DENIED:
            problem = Problem(
                "permission-denied",
                f"Row {row}: the service denied permission to add or update this staff record "
                f"for customer {self.customer_id}",
                row=row,
            )
            return self._outcome(record, outcome, problem.message, (problem,))
        # accepted: what the service stored otherwise than sent, when that is not known to be nothing
        altered = () if unaltered else self.readback.warnings(row, _with_id(record), result.get("user"))
        return self._outcome(record, outcome, message, altered)


_ACCEPTED = (Outcome.ADDED, Outcome.UPDATED)


#: Seconds the submitting thread leaves a request to get on the wire before doing its own work beside it
#: (``_send_one_at_a_time``); a request is written in about a millisecond when a connection is free.
_ON_THE_WIRE = 0.25

#: A part ready to send: its rows (indices into the records), what the state folder knows of them, each
#: row's element as JSON, and each row's record.
_Part = tuple[list[int], FirstSends, list[str], list[StaffRecord]]


def _message(result: dict[str, Any]) -> str:
    return str(result.get("message") or "")


#: ``staff_outcome``, each message read once: a run's answers say a handful of them again and again.
_staff_outcome = lru_cache(maxsize=256)(staff_outcome)


def _sent_id(record: StaffRecord) -> str:
    """The external id ``record``'s element names, as text (its results name it)."""
    payload = record.payload
    if isinstance(payload, StoredPayload) and payload.element_of is not None:
        return payload.element_of  # the text is that id's element: it names it, told without reading it
    return str(_with_id(record)["customer_system_id"])


def _result_id(result: Any) -> str | None:
    """The external id a result's ``user`` names, as text; None when it names none (or is no result)."""
    user = result.get("user") if isinstance(result, dict) else None
    ext = user.get("customer_system_id") if isinstance(user, dict) else None
    return None if ext is None or ext == "" else str(ext)


def _as_sent(record: StaffRecord, text: str) -> StaffRecord:
    if record.sent_json == text:  # a record kept as its element's text (``hrimport.imports.records``)
        return record
    return StaffRecord(record.row, record.external_id, record.name, record.payload, text)


def _index_of(detail: Any) -> int | None:
    """The element index a ``details`` entry names, if any (an integer, or tolerated as digits)."""
    index = detail.get("index") if isinstance(detail, dict) else None
    if isinstance(index, str) and index.strip().isdigit():
        return int(index)
    return index if isinstance(index, int) and not isinstance(index, bool) else None


def _field_reason(detail: Any, default: str) -> tuple[str | None, str]:
    """A service ``details`` entry as (field, reason)."""
    if not isinstance(detail, dict):
        return None, str(detail)
    name = detail.get("field")
    reason = detail.get("reason") or detail.get("message") or default
    return (str(name) if name else None), str(reason)
