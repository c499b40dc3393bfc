"""The valid rows of a staff file waiting to be planned and sent, held out of memory (issue 17).

A row's request body as a Python dict costs ~4.7 KB (40 fields, its custom data a list of small dicts):
100,000 of them were 470 MB of a dry run's 1 GB, and as JSON text still 170 MB. ``PendingRecords`` writes
each body's JSON to a temporary file (unlinked from the start, readable by this process only, gone when
it ends) and makes the ``StaffRecord`` only when it is asked for: a batch being sent, the plan's
comparison of one row. Text and dict are the same data: the values are strings and booleans, and JSON
keeps the keys' order.
"""

from __future__ import annotations

import bisect
import json
import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa

from hrimport.outcomes import Outcome, OutcomesByRow, PlainRows, RowOutcome
from hrimport.private_files import anonymous_file
from hrimport.service.staff import ELEMENT_KNOWN_KEYS, Element, StaffRecord, StoredPayload, element_json
from hrimport.stores import Positional, TextColumn

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_decode = json.JSONDecoder().decode


class _Spill:
    """The temporary file of some records' payloads, shared by the records ``keeping`` selects from them:
    closed (and so gone) when the last of them is dropped."""

    def __init__(self) -> None:
        self.file = anonymous_file(self)


class RowHeads:
    """Each row's number, external id and name, kept compactly to the end of a run."""

    def __init__(self) -> None:
        self.rows = array("q")
        self.external_ids = TextColumn()
        self.names = TextColumn()

    def extend(self, rows: Iterable[int], external_ids: Iterable[str], names: Iterable[str]) -> None:
        self.rows.extend(rows)
        self.external_ids.extend(external_ids)
        self.names.extend(names)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple[int, str, str]]:
        return zip(self.rows, self.external_ids, self.names)

    def positions(self, keep: Callable[[int, str], bool]) -> list[int]:
        """The positions of the rows whose (row, external id) ``keep`` accepts."""
        return [i for i, (row, external_id) in enumerate(zip(self.rows, self.external_ids)) if keep(row, external_id)]

    def taken(self, positions: Sequence[int]) -> RowHeads:
        """The rows at ``positions`` (ascending)."""
        out = RowHeads()
        for start in range(0, len(positions), _HEADS_AT_ONCE):  # a piece at a time: no list of every row
            part = positions[start:start + _HEADS_AT_ONCE]
            out.extend((self.rows[i] for i in part), (self.external_ids[i] for i in part),
                       (self.names[i] for i in part))
        return out


#: Bytes of the records' file read at once (a few hundred payloads).
_READ_AHEAD = 1 << 20


class PendingRecords(Positional[StaffRecord]):
    """``StaffRecord``s in source order, their payloads kept as JSON text; a ``Sequence`` (what
    ``submit_staff`` and ``bulk_bodies`` take). The records of the last batch or two asked for are made
    once (``cache_size``), since sending asks for a record several times.

    A payload is kept as the very text its element is sent as (``element_json``: sorted keys), which the
    record carries (``StaffRecord.sent_json``): sending it, remembering it and telling whether it changed
    (its fingerprint is that text's digest) encode nothing again. The payload made from it has its own key
    order back (``payload_keys``; the plan's changes and a dry run's bodies follow it). A payload that is
    not in that order, or whose element is not itself (no external id of its own), is kept as itself.
    """

    def __init__(self, cache_size: int = 2_000, spill: _Spill | None = None) -> None:
        self.heads = RowHeads()
        self._spill = spill  # the temporary file of the payloads' JSON, made with the first ones
        self._starts = array("q")  # where each payload's JSON starts in it, and its length in bytes
        self._lengths = array("q")
        # per record: its payload's key order in ``_orders`` when its text is its element's, else -1
        self._order_of = array("l")
        self._orders: list[tuple[str, ...]] = []
        # per record: the compared fields its payload holds in ``_helds`` (-1: none kept), and the length of
        # their texts, kept in the file right after its JSON (``StaffRecord.compared``)
        self._held_of = array("l")
        self._helds: list[tuple[str, ...]] = []
        self._compared_lengths = array("q")
        self._in_order: dict[tuple[int, tuple[str, ...]], bool] = {}  # (order, a payload's keys): in that order?
        self._cache: dict[int, StaffRecord] = {}
        self._cache_size = cache_size
        self._window, self._window_start = b"", 0  # the part of the file read last (``_text``)

    def extend(self, rows: Iterable[int], external_ids: Iterable[str], names: Iterable[str],
               payloads: Iterable[dict[str, Any]], keys: Sequence[str] | None = None) -> None:
        """Add records; ``keys``: the order the payloads hold their keys in (``payload_keys``), which lets
        each be kept as its element's text."""
        rows, external_ids, names = list(rows), list(external_ids), list(names)
        self.heads.extend(rows, external_ids, names)
        order = -1
        if keys is not None:
            keys = tuple(keys)
            if keys not in self._orders:
                self._orders.append(keys)
            order = self._orders.index(keys)
        texts = []
        for row, external_id, name, payload in zip(rows, external_ids, names, payloads):
            if order >= 0 and "customer_id" not in payload and payload.get("customer_system_id") == external_id \
                    and self._keeps_order(order, payload):
                texts.append(element_json(StaffRecord(row, external_id, name, payload)).encode("utf-8"))
                self._order_of.append(order)
            else:
                texts.append(_encode(payload).encode("utf-8"))
                self._order_of.append(-1)
        self._write(texts)

    def extend_elements(self, rows: Iterable[int], external_ids: Iterable[str], names: Iterable[str],
                        elements: Sequence[Element]) -> None:
        """Add records given as the elements ``build_elements`` makes of them (each naming its own external
        id, and its payload named as ``names`` says, "" for none). Each record's JSON and the texts its
        answer is checked against are kept in the file."""
        self.heads.extend(rows, external_ids, names)
        known = {keys: i for i, keys in enumerate(self._orders)}
        helds = {held: i for i, held in enumerate(self._helds)}
        texts = []
        for element in elements:
            order = known.get(element.keys)
            if order is None:
                order = known[element.keys] = len(self._orders)
                self._orders.append(element.keys)
            held, compared = element.compared
            h = helds.get(held)
            if h is None:
                h = helds[held] = len(self._helds)
                self._helds.append(held)
            self._order_of.append(order)
            self._held_of.append(h)
            text, checked = element.text.encode("utf-8"), compared.encode("utf-8")
            self._compared_lengths.append(len(checked))
            texts.append(text + checked)
        self._write(texts, len(elements))

    def _write(self, texts: list[bytes], with_compared: int = 0) -> None:
        """Append records' texts to the file; ``with_compared``: the last ``_compared_lengths`` entries
        are theirs, each text ending with that many bytes of its compared fields (``extend_elements``)."""
        if self._spill is None:
            self._spill = _Spill()
        if not with_compared:
            self._held_of.extend([-1] * len(texts))
            self._compared_lengths.extend([0] * len(texts))
        tails = self._compared_lengths[len(self._compared_lengths) - len(texts):]
        self._spill.file.seek(0, os.SEEK_END)
        start = self._spill.file.tell()
        for text, tail in zip(texts, tails):
            self._starts.append(start)
            self._lengths.append(len(text) - tail)
            start += len(text)
        self._spill.file.write(b"".join(texts))
        self._spill.file.flush()

    def _keeps_order(self, order: int, payload: dict[str, Any]) -> bool:
        """Does ``payload`` hold its keys in the order ``order`` (so that it can be made again from its
        sorted text)? Told once per set of keys: the rows of a file have a few."""
        shape = (order, tuple(payload))
        known = self._in_order.get(shape)
        if known is None:
            if len(self._in_order) > 10_000:
                self._in_order.clear()
            known = self._in_order[shape] = tuple(k for k in self._orders[order] if k in payload) == shape[1]
        return known

    def _text(self, index: int) -> str:
        """Record ``index``'s JSON."""
        return self._read(self._starts[index], self._lengths[index])

    def _compared(self, index: int) -> tuple[tuple[str, ...], str] | None:
        """What record ``index``'s answer is checked against (``StaffRecord.compared``), if kept."""
        held = self._held_of[index]
        if held < 0:
            return None
        start = self._starts[index] + self._lengths[index]
        return self._helds[held], self._read(start, self._compared_lengths[index])

    def _read(self, start: int, length: int) -> str:
        """Text of the file. Records are asked for in the order they were written: the file is read
        ``_READ_AHEAD`` bytes at a time, not with one system call per record."""
        assert self._spill is not None  # there is a payload to read
        at = start - self._window_start
        if at < 0 or at + length > len(self._window):
            self._window = os.pread(self._spill.file.fileno(), max(length, _READ_AHEAD), start)
            self._window_start, at = start, 0
        return self._window[at:at + length].decode("utf-8")

    def _payload(self, index: int, text: str | None = None) -> dict[str, Any]:
        """The payload of record ``index`` (``text``: its JSON, when already read), in its own key order."""
        payload: dict[str, Any] = _decode(self._text(index) if text is None else text)
        order = self._order_of[index]
        if order >= 0:  # its element's text, in sorted order
            payload = {k: payload[k] for k in self._orders[order] if k in payload}
        return payload

    def __len__(self) -> int:
        return len(self._starts)

    def _at(self, index: int) -> StaffRecord:
        record = self._cache.get(index)
        if record is None:
            if len(self._cache) >= self._cache_size:
                self._cache.clear()
            heads, order = self.heads, self._order_of[index]
            external_id, name = heads.external_ids[index], heads.names[index]
            if order < 0:
                record = StaffRecord(heads.rows[index], external_id, name, self._payload(index))
            else:  # its element's text: sent, remembered and checked as it is, decoded only if read
                text = self._text(index)
                known = {"customer_system_id": external_id, **({"name": name} if name else {})}
                payload = StoredPayload(text, self._orders[order], element_of=external_id, known=known,
                                        known_keys=ELEMENT_KNOWN_KEYS)
                record = StaffRecord(heads.rows[index], external_id, name, payload, text, self._compared(index))
            self._cache[index] = record
        return record

    def __iter__(self) -> Iterator[StaffRecord]:
        for i in range(len(self)):
            yield self[i]

    def payload_of_rows(self) -> Callable[[int], Mapping[str, Any] | None]:
        """A lookup of the payload of a row number (asked in ascending order, as the plan walks the file);
        None for a row not held. The payload is decoded only if read (the plan reads a changed row's), and
        its fingerprint is its text's (``StoredPayload``): the payloads never all exist at once."""
        numbers = self.heads.rows  # ascending: found by bisection, with no dict of every row
        at = 0  # where the last row asked for was found: the next is after it

        def payload(row: int) -> Mapping[str, Any] | None:
            nonlocal at
            # from the last row found when asked in order (the plan's walk), else from the start
            i = bisect.bisect_left(numbers, row, lo=at if at < len(numbers) and numbers[at] <= row else 0)
            if i == len(numbers) or numbers[i] != row:
                return None
            at = i
            order = self._order_of[i]
            if order < 0:
                return self._payload(i)
            return StoredPayload(partial(self._text, i), self._orders[order], element_of=self.heads.external_ids[i])

        return payload

    def keeping(self, keep: Callable[[int, str], bool]) -> PendingRecords:
        """The records whose (row, external id) ``keep`` accepts, their payloads in the same file."""
        return self.taken(self.heads.positions(keep))

    def taken(self, chosen: Sequence[int]) -> PendingRecords:
        """The records at positions ``chosen`` (ascending), their payloads in the same file."""
        out = PendingRecords(self._cache_size, self._spill)
        out.heads = self.heads.taken(chosen)
        out._starts.extend(self._starts[i] for i in chosen)
        out._lengths.extend(self._lengths[i] for i in chosen)
        out._order_of.extend(self._order_of[i] for i in chosen)
        out._orders = self._orders
        out._held_of.extend(self._held_of[i] for i in chosen)
        out._helds = self._helds
        out._compared_lengths.extend(self._compared_lengths[i] for i in chosen)
        return out


def batches_of(records: Sequence[StaffRecord], size: int) -> Iterator[Sequence[StaffRecord]]:
    """``records`` ``size`` at a time."""
    for start in range(0, len(records), size):
        yield records[start:start + size]


class SentRows:
    """The outcomes of the rows sent, as the service settles them, kept compactly (issue 17, flat memory).

    Most rows sent come back with an outcome and a message alike (added, "Add Successfully") and nothing
    of their own: those are kept as row numbers, ids and names, one group per outcome and message
    (``alike``); a row with problems (a rejection, a read-back warning) stays a ``RowOutcome`` (``listed``).
    100,000 rows added are ~4 MB here, ~45 MB as objects."""

    #: Groups of (outcome, message) at most: a service wording each answer its own way keeps its rows listed.
    MAX_GROUPS = 64

    def __init__(self, listed: list[RowOutcome] | OutcomesByRow | None = None) -> None:
        # the rows with something of their own: a run's ``OutcomesByRow`` (which may hold its invalid rows too),
        # which keeps them out of memory past a few thousand (a file the service rejects whole)
        self.listed = listed if listed is not None else []
        self._listed = 0  # how many of them are this one's
        self._groups: dict[tuple[Outcome, str], tuple[RowHeads, list[int], list[str], list[str]]] = {}

    def add(self, rows: Iterable[RowOutcome]) -> None:
        for o in rows:
            group = None
            if not (o.problems or o.details or o.source is not None or o.changed_values):
                group = self._groups.get((o.outcome, o.message))
                if group is None and len(self._groups) < self.MAX_GROUPS:
                    group = self._groups[o.outcome, o.message] = (RowHeads(), [], [], [])
            if group is None:
                self.listed.append(o)
                self._listed += 1
                continue
            _, numbers, ids, names = group
            numbers.append(o.row)
            ids.append(o.external_id)
            names.append(o.name)
            if len(numbers) >= _HEADS_AT_ONCE:
                _flush(group)

    def __len__(self) -> int:
        return self._listed + sum(len(g[0]) + len(g[1]) for g in self._groups.values())

    def alike(self) -> list[PlainRows]:
        """Each group's rows, in ascending row order (answers may come in another: several requests in flight)."""
        out = []
        for (outcome, message), group in self._groups.items():
            _flush(group)
            heads = group[0]
            rows, ids, names = heads.rows, heads.external_ids.as_arrow(), heads.names.as_arrow()
            numbers = np.frombuffer(rows, dtype=np.int64)
            if len(numbers) > 1 and not bool((numbers[1:] > numbers[:-1]).all()):
                import pyarrow.compute as pc

                order = np.argsort(numbers, kind="stable")
                pool = pa.system_memory_pool()  # kept to the end (``TextColumn``)
                rows = array("q", numbers[order].tobytes())
                ids = pc.take(ids, order, memory_pool=pool)
                names = pc.take(names, order, memory_pool=pool)
            out.append(PlainRows(rows, ids, names, outcome, message))
        return out


#: Rows a ``SentRows`` group gathers before it stores them as arrays.
_HEADS_AT_ONCE = 2_000


def _flush(group: tuple[RowHeads, list[int], list[str], list[str]]) -> None:
    heads, numbers, ids, names = group
    if numbers:
        heads.extend(numbers, ids, names)
        numbers.clear()
        ids.clear()
        names.clear()
