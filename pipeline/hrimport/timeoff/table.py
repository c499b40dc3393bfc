"""The valid rows of a time-off file, kept as compact columns for the stages that need the whole file
(issue 17: a million rows in flat memory).

The overlap check needs every valid row of a person, and the total days and the posting come after it:
each valid row is kept until then, not as a ``TimeOffRow`` (~1.5 KB with its strings) but as a few numbers
(~75 bytes): its row number, its external id and name in Arrow arrays, its leave type, country, dates,
day figures and decision as codes into their distinct values (``Codes``: a file has a few thousand dates,
not a million), and a 16-byte digest of the values it sends. ``LeaveTable.rows`` makes ``TimeOffRow``s again
for the rows being worked on, the same as those made from the file; ``detail_columns`` gives the report's
time-off columns of many rows without a dict each; ``repeats`` finds the leaves listed twice (by their
digests), and ``overlaps`` is ``hrimport.timeoff.rows.find_overlaps`` on the people whose other rows clash.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from hrimport.outcomes import Problem
from hrimport.state.ledger import LedgerKey
from hrimport.stores import Positional, TextColumn
from hrimport.timeoff.leave_types import Lang, LeaveTypeMatch
from hrimport.timeoff.rows import HALVES_NOT_READ, TimeOffRow, find_overlaps

__all__ = ["HALVES_UNREAD", "CodedTexts", "Codes", "LeaveTable", "TakenTexts", "ValidRows"]

Ints = npt.NDArray[np.int64]

#: ``TimeOffRow.details()["half_days"]`` by the code ``half_start + 2 * half_end``, 4 for a one-day record, and 5
#: for a row whose half-day cell could not be read (kept as ``HALVES_UNREAD``).
HALF_DAYS = ("", "start", "end", "start, end", "half day", HALVES_NOT_READ)

#: The ``half`` code of a row whose half-day cell could not be read (``TimeOffRow.halves_read`` False).
HALVES_UNREAD = -1


class Codes:
    """Texts as codes into their distinct values, first seen first (``values``)."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._index: dict[str, int] = {}

    def codes(self, texts: Iterable[str]) -> npt.NDArray[np.int32]:
        index, values = self._index, self.values
        out = []
        for text in texts:
            code = index.get(text)
            if code is None:
                code = index[text] = len(values)
                values.append(text)
            out.append(code)
        return np.array(out, dtype=np.int32)

    def code(self, text: str) -> int:
        code = self._index.get(text)
        if code is None:
            code = self._index[text] = len(self.values)
            self.values.append(text)
        return code


class CodedTexts(Positional[str]):
    """A column of texts given as codes into ``values``: a ``Sequence[str]`` made a string only as read."""

    def __init__(self, codes: npt.NDArray[np.int32], values: Sequence[str]) -> None:
        self._codes = codes
        self._values = values

    def __len__(self) -> int:
        return len(self._codes)

    def _at(self, index: int) -> str:
        return self._values[int(self._codes[index])]

    def tolist(self) -> list[str]:
        values = self._values
        return [values[c] for c in self._codes.tolist()]


@dataclass
class ValidRows:
    """A chunk's valid rows as columns, for ``LeaveTable.extend``: what a ``TimeOffRow`` is made of, and
    each row's name for the report."""

    rows: list[int] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    matches: list[LeaveTypeMatch] = field(default_factory=list)
    langs: list[Lang] = field(default_factory=list)
    countries: list[str] = field(default_factory=list)
    starts: list[str] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)
    halves: list[int] = field(default_factory=list)  # half start + 2 * half end, or HALVES_UNREAD
    given: list[str] = field(default_factory=list)
    # the figure as its cell writes it ("4,5") where it is not ``given`` (4.5), else "" (none given: all "")
    given_written: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    # each row's digest of the values it sends (``hrimport.validate.sent_digests``): two uint64 a row
    sent: list[np.ndarray] = field(default_factory=list)


class TakenTexts(Positional[str]):
    """The texts of ``column`` at ``positions``, taken only when read; where ``column`` holds "", the text
    of ``fallback`` (a name that is its row's external id is kept once, as the id)."""

    def __init__(self, column: TextColumn, positions: npt.NDArray[np.int32], fallback: TextColumn | None = None) -> None:
        self._column, self._positions, self._fallback = column, positions, fallback

    def __len__(self) -> int:
        return len(self._positions)

    def _at(self, index: int) -> str:
        pos = int(self._positions[index])
        text = self._column[pos]
        return text or (self._fallback[pos] if self._fallback is not None else "")

    def tolist(self) -> list[str]:
        texts: list[str] = self._column.as_arrow().take(self._positions).to_pylist()
        if self._fallback is not None:
            backs: list[str] = self._fallback.as_arrow().take(self._positions).to_pylist()
            texts = [text or back for text, back in zip(texts, backs)]
        return texts


class _Details(Positional[str]):
    """One time-off detail column of the rows of a ``LeaveTable`` at ``positions``, worked out as read."""

    def __init__(self, table: LeaveTable, positions: npt.NDArray[np.int32], key: str) -> None:
        self._table, self._positions, self._key = table, positions, key

    def __len__(self) -> int:
        return len(self._positions)

    def _at(self, index: int) -> str:
        codes, values = self._table.detail_codes(self._key, self._positions[index:index + 1])
        return values[int(codes[0])]

    def tolist(self) -> list[str]:
        codes, values = self._table.detail_codes(self._key, self._positions)
        return [values[c] for c in codes.tolist()]


#: The kept columns of a ``LeaveTable`` and their ``array`` type codes.
_COLUMNS = {"row": "q", "person": "q", "kind": "i", "country": "i", "start": "i", "end": "i", "half": "b",
            "given": "i", "written": "i", "decision": "i", "sent0": "Q", "sent1": "Q"}
_DTYPES = {"q": np.int64, "i": np.int32, "b": np.int8, "Q": np.uint64}


class LeaveTable:
    """The valid rows of a time-off file, in source order, each known by its position (``TimeOffRow.pos``).

    Fill it chunk by chunk (``extend``), then ``close`` it before asking for rows. ``notes`` are kept
    (``keep_notes``) only when the rows may be sent."""

    def __init__(self, *, keep_notes: bool) -> None:
        self.keep_notes = keep_notes
        self.kinds: list[tuple[LeaveTypeMatch, Lang]] = []  # a row's leave type as the sheet wrote it, its lang
        self._kind_index: dict[tuple[str, Lang], int] = {}
        self.texts = Codes()  # dates, countries, day figures and decisions
        self.ids = TextColumn()
        self.names = TextColumn()  # "" where the name is the external id (``name``)
        self.notes = TextColumn()
        # each column grown in place, chunk by chunk (realloc: no copy left behind), seen as NumPy once closed
        self._growing = {name: array(code) for name, code in _COLUMNS.items()}
        self._columns: dict[str, np.ndarray] = {}
        self.total_days = np.empty(0, dtype=np.int32)  # the figure sent or settled, as a code; -1: not yet known
        self.imported = np.empty(0, dtype=bool)  # the ledger holds it: named by an overlap, never flagged
        self.repeated = np.empty(0, dtype=bool)  # it repeats an earlier row exactly (``repeats``): never sent

    def __len__(self) -> int:
        return len(self.ids)

    def extend(self, rows: ValidRows) -> None:
        """Add a chunk's valid rows (after those added before)."""
        kinds = []
        for match, lang in zip(rows.matches, rows.langs):
            key = (match.written, lang)
            kind = self._kind_index.get(key)
            if kind is None:
                kind = self._kind_index[key] = len(self.kinds)
                self.kinds.append((match, lang))
            kinds.append(kind)
        codes, grow = self.texts.codes, self._growing
        grow["row"].extend(rows.rows)
        # the person, as a number to sort by: equal ids, equal numbers (two ids may share one: then their rows
        # are compared by id, ``overlaps``)
        grow["person"].extend(map(hash, rows.ids))
        grow["kind"].extend(kinds)
        for name, texts in (("country", rows.countries), ("start", rows.starts), ("end", rows.ends),
                            ("given", rows.given), ("written", rows.given_written or [""] * len(rows.given)),
                            ("decision", rows.decisions)):
            grow[name].frombytes(codes(texts).tobytes())
        grow["half"].extend(rows.halves)
        for sent in rows.sent:
            grow["sent0"].frombytes(np.ascontiguousarray(sent[:, 0]).tobytes())
            grow["sent1"].frombytes(np.ascontiguousarray(sent[:, 1]).tobytes())
        self.ids.extend(rows.ids)
        self.names.extend("" if name == external_id else name for external_id, name in zip(rows.ids, rows.names))
        if self.keep_notes:
            self.notes.extend(rows.notes)

    def ledger_keys(self, positions: Ints, service: str, customer_id: str) -> list[LedgerKey]:
        """The ledger's keys of the rows at ``positions`` (``hrimport.state.ledger``)."""
        c, values = self._columns, self.texts.values
        at = np.asarray(positions, dtype=np.int64)
        english = [match.leave_type.en for match, _ in self.kinds]
        return [LedgerKey(service, customer_id, external_id, english[kind], values[start], values[end])
                for external_id, kind, start, end in zip(self.ids.as_arrow().take(at).to_pylist(),
                                                          c["kind"][at].tolist(), c["start"][at].tolist(),
                                                          c["end"][at].tolist())]

    def close(self) -> None:
        """Join the chunks' columns: every row is in."""
        self._columns = {name: np.frombuffer(column, dtype=_DTYPES[_COLUMNS[name]])
                         for name, column in self._growing.items()}
        self.total_days = np.full(len(self), -1, dtype=np.int32)
        self.imported = np.zeros(len(self), dtype=bool)
        self.repeated = np.zeros(len(self), dtype=bool)

    def column(self, name: str) -> np.ndarray:
        """One of the kept columns of every row: ``row`` (numbers), ``given`` (the file's day figure, a code
        into ``texts.values``), ...; see ``close``."""
        return self._columns[name]

    def name(self, pos: int) -> str:
        """The name of the row at ``pos`` for the report."""
        return self.names[pos] or self.ids[pos]

    def rows(self, positions: Sequence[int] | Ints) -> list[TimeOffRow]:
        """The rows at ``positions`` as ``TimeOffRow``s, ``total_days`` set where it is known."""
        c, values, kinds = self._columns, self.texts.values, self.kinds
        at = np.asarray(positions, dtype=np.int64)
        if not len(at):
            return []
        ids: list[str] = self.ids.as_arrow().take(at).to_pylist()
        notes: list[str] = self.notes.as_arrow().take(at).to_pylist() if self.keep_notes else [""] * len(at)
        out = []
        for pos, row, external_id, kind, country, start, end, half, given, written, decision, sent, note in zip(
                at.tolist(), c["row"][at].tolist(), ids, c["kind"][at].tolist(), c["country"][at].tolist(),
                c["start"][at].tolist(), c["end"][at].tolist(), c["half"][at].tolist(), c["given"][at].tolist(),
                c["written"][at].tolist(), c["decision"][at].tolist(), self.total_days[at].tolist(), notes):
            match, lang = kinds[kind]
            out.append(TimeOffRow(
                pos=pos, row=row, external_id=external_id, match=match, lang=lang, country=values[country],
                start=values[start], end=values[end], half_start=half > 0 and bool(half & 1),
                half_end=half > 0 and bool(half & 2), halves_read=half != HALVES_UNREAD,
                total_given=values[given], given_written=values[written], notes=note, decision=values[decision],
                total_days=values[sent] if sent >= 0 else "",
            ))
        return out

    def detail_columns(self, positions: Ints) -> dict[str, Sequence[str]]:
        """``TimeOffRow.details()`` of the rows at ``positions``, as one column per key, each worked out as
        it is read: ~4 bytes a row kept, where dicts would be ~1 KB."""
        at = np.asarray(positions, dtype=np.int32)
        return {key: _Details(self, at, key) for key in ("leave_type", "start_date", "end_date", "half_days",
                                                          "total_days")}

    def detail_codes(self, key: str, positions: npt.NDArray[np.int32]) -> tuple[np.ndarray, Sequence[str]]:
        """The ``key`` detail of the rows at ``positions``, as codes into the texts returned with them."""
        c, values = self._columns, self.texts.values
        if key == "leave_type":
            return c["kind"][positions], [match.send_name(lang) for match, lang in self.kinds]
        if key == "start_date":
            return c["start"][positions], values
        if key == "end_date":
            return c["end"][positions], values
        if key == "half_days":
            half = c["half"][positions].astype(np.int32)
            half[(half > 0) & (c["start"][positions] == c["end"][positions])] = 4  # a one-day record: "half day"
            half[half == HALVES_UNREAD] = 5  # "not read": neither a full day nor a half claimed
            return half, HALF_DAYS
        # total_days: what is sent once known (and not ""), else the file's figure, as TimeOffRow.details()
        sent = self.total_days[positions]
        return np.where((sent >= 0) & (sent != self.texts.code("")), sent, c["given"][positions]), values

    def taken(self, positions: Ints) -> tuple[TakenTexts, TakenTexts]:
        """The external ids and names of the rows at ``positions``, taken only when read."""
        at = np.asarray(positions, dtype=np.int32)
        return TakenTexts(self.ids, at), TakenTexts(self.names, at, self.ids)

    def repeats(self) -> dict[int, int]:
        """The rows that repeat an earlier row exactly, each by its position, with the position of the first
        row it repeats (its source order's first); marks them ``repeated``.

        A row repeats another when the two send the same values (``sent_digests``, which covers the person,
        the leave type, the dates, the day figure and every other value sent) and the same half days (for a row
        whose half-day cell could not be read, the same cells: the digest holds them), and no other row of the
        person overlaps their period: the same leave listed twice. Where a third row
        overlaps it, which is right is not known, and ``overlaps`` flags every one of them."""
        if len(self) < 2:
            return {}
        c = self._columns
        # the candidates: the rows whose digest's first half another row has too (of a million rows, none
        # or a few, found by one sort); then every row of their people, compared in full
        digests = np.sort(c["sent0"])
        doubled = digests[1:][digests[1:] == digests[:-1]]
        del digests
        if not len(doubled):
            return {}
        candidates = np.isin(c["sent0"], doubled)
        at = np.flatnonzero(np.isin(c["person"], np.unique(c["person"][candidates])))
        ranks = self._date_ranks()
        person, start, end = c["person"][at], ranks[c["start"][at]], ranks[c["end"][at]]
        # the rows alike: one person, one digest, one period and the same half days, in source order
        keys = (person, c["sent0"][at], c["sent1"][at], c["half"][at], start, end)
        alike = np.lexsort((at, *reversed(keys)))  # by person, digest, half days, period, then source order
        in_order = [key[alike] for key in keys]
        new_group = np.ones(len(at), dtype=bool)
        new_group[1:] = np.logical_or.reduce([key[1:] != key[:-1] for key in in_order])
        group = np.cumsum(new_group) - 1  # each row's group, in ``alike``'s order
        size = np.bincount(group)
        firsts = alike[new_group]  # each group's first row, as an index into ``at``
        # how many rows of the person overlap each group's period: those starting by its end, less those
        # ending before its start (a row ends on or after its start); the group alone is a leave listed twice
        place = np.unique(person, return_inverse=True)[1].astype(np.int64)
        span = len(ranks) + 1
        starts, ends = np.sort(place * span + start), np.sort(place * span + end)
        base = place[firsts] * span
        overlapping = (np.searchsorted(starts, base + end[firsts], side="right")
                       - np.searchsorted(ends, base + start[firsts], side="left"))
        listed_twice = (size > 1) & (overlapping == size)
        later = np.flatnonzero(listed_twice[group] & ~new_group)  # each such group's rows but its first
        rows, repeated = at[alike[later]], at[firsts[group[later]]]
        self.repeated[rows] = True
        return dict(zip(rows.tolist(), repeated.tolist()))

    def overlaps(self) -> dict[int, list[Problem]]:
        """``find_overlaps`` of every row but those ``repeated``, imported ones named and not flagged: the same
        problems, found by comparing the rows of only the people with two periods that touch."""
        if len(self) < 2:
            return {}
        person = self._columns["person"]
        ranks = self._date_ranks()
        listed = ~self.repeated  # a row repeated is its first row's: it clashes with nothing else
        # the people a share at a time (by their number), so that the sorting's arrays stay small
        shares = max(1, len(self) // _OVERLAP_ROWS)  # a person's rows all in one share: same number
        clashing = [self._clashing(np.flatnonzero(listed & (person % shares == share)), person, ranks)
                    for share in range(shares)]
        who = np.unique(np.concatenate(clashing))
        if not len(who):
            return {}
        # the rows of those people, compared as find_overlaps compares them (by id: two ids sharing a number
        # only cost a comparison)
        rows = self.rows(np.flatnonzero(listed & np.isin(person, who)))
        return find_overlaps(rows, {r.pos for r in rows if self.imported[r.pos]})

    def _date_ranks(self) -> npt.NDArray[np.int32]:
        """Each text's rank among the file's sorted texts: dates compared as the texts find_overlaps compares."""
        ranks = np.empty(len(self.texts.values), dtype=np.int32)
        ranks[np.argsort(np.array(self.texts.values, dtype=object), kind="stable")] = np.arange(len(ranks))
        return ranks

    def _clashing(self, at: Ints, person: Ints, ranks: npt.NDArray[np.int32]) -> Ints:
        """The people, among the rows at ``at``, with two periods that touch."""
        c = self._columns
        start, end = ranks[c["start"][at]], ranks[c["end"][at]]
        order = np.lexsort((c["row"][at], end, start, person[at]))
        p, s, e = person[at][order], start[order], end[order]
        # sorted by start within a person, a row clashes with an earlier one when it starts by the latest
        # end before it: that end, per person, is the running maximum of (person's place, end) as one number
        same = p[1:] == p[:-1]
        place = np.concatenate(([0], np.cumsum(~same)))
        span = len(ranks) + 1
        latest = np.maximum.accumulate(place * span + e)
        clashes = same & (latest[:-1] - place[1:] * span >= s[1:])
        return np.unique(p[1:][clashes])


#: Rows of the people whose periods are compared at once (``LeaveTable.overlaps``).
_OVERLAP_ROWS = 100_000
