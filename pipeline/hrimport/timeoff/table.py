"""The valid rows of a time-off file, kept as compact columns for the stages that need the whole file
(issue 17: a million rows in flat memory).

The overlap check needs every valid row of a person, and the total days and the posting come after it:
each valid row is kept until then, not as a ``TimeOffRow`` (~1.5 KB with its strings) but as a few numbers
(~40 bytes): its row number, its external id and name in Arrow arrays, and its leave type, country, dates,
day figures and decision as codes into their distinct values (``Codes``: a file has a few thousand dates,
not a million). ``LeaveTable.rows`` makes ``TimeOffRow``s again for the rows being worked on, the same as
those made from the file; ``detail_columns`` gives the report's time-off columns of many rows without a
dict each; ``overlaps`` is ``hrimport.timeoff.rows.find_overlaps`` on the people whose rows clash.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from hrimport.outcomes import Problem
from hrimport.stores import Positional, TextColumn
from hrimport.timeoff.leave_types import Lang, LeaveTypeMatch
from hrimport.timeoff.rows import TimeOffRow, find_overlaps

__all__ = ["CodedTexts", "Codes", "LeaveTable"]

Ints = npt.NDArray[np.int64]

#: ``TimeOffRow.details()["half_days"]`` by the code ``half_start + 2 * half_end``, and 4 for a one-day record.
HALF_DAYS = ("", "start", "end", "start, end", "half day")


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
        return int(self.codes([text])[0])


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
        self.names = TextColumn()
        self.notes = TextColumn()
        self._pieces: list[dict[str, np.ndarray]] = []
        self._columns: dict[str, np.ndarray] = {}
        self.total_days = np.empty(0, dtype=np.int32)  # the figure sent or settled, as a code; -1: not yet known
        self.imported = np.empty(0, dtype=bool)  # the ledger holds it: named by an overlap, never flagged

    def __len__(self) -> int:
        return len(self.ids)

    def extend(self, rows: list[TimeOffRow], names: list[str]) -> None:
        """Add rows (after those added before), each with its name for the report."""
        kinds = []
        for r in rows:
            key = (r.match.written, r.lang)
            kind = self._kind_index.get(key)
            if kind is None:
                kind = self._kind_index[key] = len(self.kinds)
                self.kinds.append((r.match, r.lang))
            kinds.append(kind)
        codes = self.texts.codes
        self._pieces.append({
            "row": np.array([r.row for r in rows], dtype=np.int64),
            "kind": np.array(kinds, dtype=np.int32),
            "country": codes(r.country for r in rows),
            "start": codes(r.start for r in rows),
            "end": codes(r.end for r in rows),
            "half": np.array([r.half_start + 2 * r.half_end for r in rows], dtype=np.int8),
            "given": codes(r.total_given for r in rows),
            "decision": codes(r.decision for r in rows),
        })
        self.ids.extend(r.external_id for r in rows)
        self.names.extend(names)
        if self.keep_notes:
            self.notes.extend(r.notes for r in rows)

    def close(self) -> None:
        """Join the chunks' columns: every row is in."""
        self._columns = {name: np.concatenate([p[name] for p in self._pieces]) if self._pieces
                         else np.empty(0, dtype=np.int64) for name in
                         ("row", "kind", "country", "start", "end", "half", "given", "decision")}
        self._pieces = []
        self.total_days = np.full(len(self), -1, dtype=np.int32)
        self.imported = np.zeros(len(self), dtype=bool)

    def column(self, name: str) -> np.ndarray:
        """One of the kept columns of every row: ``row`` (numbers), ``given`` (the file's day figure, a code
        into ``texts.values``), ...; see ``close``."""
        return self._columns[name]

    def rows(self, positions: Sequence[int] | Ints) -> list[TimeOffRow]:
        """The rows at ``positions`` as ``TimeOffRow``s, ``total_days`` set where it is known."""
        c, values = self._columns, self.texts.values
        at = np.asarray(positions, dtype=np.int64).tolist()
        ids = [self.ids[i] for i in at]
        notes = [self.notes[i] for i in at] if self.keep_notes else [""] * len(at)
        out = []
        for pos, external_id, note in zip(at, ids, notes):
            match, lang = self.kinds[c["kind"][pos]]
            half, sent = int(c["half"][pos]), int(self.total_days[pos])
            out.append(TimeOffRow(
                pos=pos, row=int(c["row"][pos]), external_id=external_id, match=match, lang=lang,
                country=values[c["country"][pos]], start=values[c["start"][pos]], end=values[c["end"][pos]],
                half_start=bool(half & 1), half_end=bool(half & 2), total_given=values[c["given"][pos]],
                notes=note, decision=values[c["decision"][pos]], total_days=values[sent] if sent >= 0 else "",
            ))
        return out

    def detail_columns(self, positions: Ints) -> dict[str, Sequence[str]]:
        """``TimeOffRow.details()`` of the rows at ``positions``, as one column per key."""
        c, values = self._columns, self.texts.values
        names = [match.send_name(lang) for match, lang in self.kinds]
        start, end = c["start"][positions], c["end"][positions]
        half = c["half"][positions].astype(np.int32)
        half[(half > 0) & (start == end)] = 4  # a one-day record: "half day"
        sent = self.total_days[positions]
        shown = np.where(sent >= 0, sent, c["given"][positions])
        return {
            "leave_type": CodedTexts(c["kind"][positions], names),
            "start_date": CodedTexts(start, values),
            "end_date": CodedTexts(end, values),
            "half_days": CodedTexts(half, HALF_DAYS),
            "total_days": CodedTexts(shown.astype(np.int32), values),
        }

    def overlaps(self) -> dict[int, list[Problem]]:
        """``find_overlaps`` of every row, imported ones named and not flagged: the same problems, found by
        comparing the rows of only the people with two periods that touch."""
        if len(self) < 2:
            return {}
        import pyarrow.compute as pc

        c = self._columns
        person = np.asarray(pc.dictionary_encode(self.ids.as_arrow()).combine_chunks().indices, dtype=np.int64)
        # dates compared as the texts find_overlaps compares: by their rank among the file's sorted texts
        ranks = np.empty(len(self.texts.values), dtype=np.int64)
        ranks[np.argsort(np.array(self.texts.values, dtype=object), kind="stable")] = np.arange(len(ranks))
        start, end = ranks[c["start"]], ranks[c["end"]]
        order = np.lexsort((c["row"], end, start, person))
        p, s, e = person[order], start[order], end[order]
        # sorted by start within a person, a row clashes with an earlier one when it starts by the latest
        # end before it: that end, per person, is the running maximum of (person, end) as one number
        span = len(ranks) + 1
        latest = np.maximum.accumulate(p * span + e)
        clashes = (p[1:] == p[:-1]) & (latest[:-1] - p[1:] * span >= s[1:])
        if not clashes.any():
            return {}
        positions = np.flatnonzero(np.isin(person, np.unique(p[1:][clashes])))
        rows = self.rows(positions)
        return find_overlaps(rows, {r.pos for r in rows if self.imported[r.pos]})
