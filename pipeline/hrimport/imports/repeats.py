"""The rows of a staff or time-off file that repeat an earlier row exactly (``hrimport.validate.RepeatedRow``).

Such a row is not sent: the platform adds or updates people by external id, so sending a staff row after the
row it repeats would change nothing, and a leave listed twice is one leave (``LeaveTable.repeats``), which the
platform would refuse the second time as overlapping. It still has an outcome of its own (every row has exactly one): the outcome of the row
it repeats, known only once that row is settled (planned unchanged, sent, held, left unsent...).
``RepeatedRows`` keeps those outcomes as the import puts its rows together in source order (the row repeated
always comes first) and makes each repeated row's ``RowOutcome`` from its first row's: the same outcome, message
and details, the first row's problems retold for it (its errors, and the warnings the import gave it once it was
checked with the service or sent: ``total-days-differs``, ``platform-altered``...), and its ``duplicate-row``
warning. The warnings of the checks of each row's own cells are given each row by its chunk
(``ChunkKeep.attach``), after ``note``: a repeat has its own, not its first row's twice.

    >>> from hrimport.outcomes import Outcome, Problem, RowOutcome
    >>> warning = Problem("duplicate-row", "Row 7 repeats row 3: ...", 7, severity="warning")
    >>> rows = RepeatedRows({7: RepeatedRow(3, warning)}, [(7, "E1", "Ann")])
    >>> rows.note([RowOutcome(3, "E1", "Ann", Outcome.ADDED, message="Add Successfully")], [], last=5)
    >>> rows.taken(last=5)
    []
    >>> (repeat,) = rows.taken(last=9)
    >>> repeat.outcome, repeat.message, [p.code for p in repeat.problems]
    (<Outcome.ADDED: 'added'>, "Shares row 3's outcome: Add Successfully", ['duplicate-row'])
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from hrimport.outcomes import Outcome, PlainRows, Problem, RowOutcome
from hrimport.validate import RepeatedRow

__all__ = ["RepeatedRows", "shared_message"]


def shared_message(first: int, message: str) -> str:
    """The message of a row sharing row ``first``'s outcome, whose message is ``message``."""
    return f"Shares row {first}'s outcome: {message}"


@dataclass(frozen=True, slots=True)
class _Settled:
    """What a repeated row takes of the outcome of the row it repeats."""

    outcome: Outcome
    message: str
    details: dict[str, str]
    problems: tuple[Problem, ...]  # what the row was told before its chunk's checks' warnings were attached


class RepeatedRows:
    """The rows repeating an earlier one, given their outcomes as the rows they repeat are settled.

    ``note`` is told each chunk's settled rows, in source order, and ``taken`` gives the repeated rows of
    the chunk: both up to the chunk's last row, so a chunk's repeated rows are told after the rows they
    repeat (in it, or in a chunk before it)."""

    def __init__(self, repeats: Mapping[int, RepeatedRow], heads: Iterable[tuple[int, str, str]]) -> None:
        self.repeats = repeats
        self._heads = sorted(heads)  # (row, external id, name) of each repeated row, in source order
        self._taken = 0  # how many of them were taken
        self._firsts = sorted({r.first for r in repeats.values()})
        self._noted = 0  # how many of the rows repeated were looked for
        self._settled: dict[int, _Settled] = {}  # row repeated -> what its repeats take of it

    def note(self, listed: Iterable[RowOutcome], plain: Iterable[PlainRows], *, last: int) -> None:
        """Keep the outcomes of the rows repeated, up to row ``last``, among one chunk's rows: ``listed`` as
        ``RowOutcome``s, ``plain`` as ``PlainRows`` (each ascending)."""
        end = bisect.bisect_right(self._firsts, last, lo=self._noted)
        wanted = self._firsts[self._noted:end]
        self._noted = end
        if not wanted:
            return
        looked_for = set(wanted)
        for o in listed:
            if o.row in looked_for:
                self._settled[o.row] = _Settled(o.outcome, o.message, o.details, o.problems)
        groups = list(plain)
        for row in wanted:
            if row in self._settled:
                continue
            for group in groups:
                i = bisect.bisect_left(group.rows, row)
                if i < len(group.rows) and group.rows[i] == row:
                    self._settled[row] = _Settled(group.outcome, _message_at(group, i), _details_at(group, i), ())
                    break

    def taken(self, *, last: int) -> list[RowOutcome]:
        """The outcomes of the repeated rows up to row ``last`` not taken before, in source order."""
        out = []
        while self._taken < len(self._heads) and self._heads[self._taken][0] <= last:
            row, external_id, name = self._heads[self._taken]
            self._taken += 1
            repeat = self.repeats[row]
            first = self._settled.get(repeat.first)
            assert first is not None, f"row {row} repeats row {repeat.first}, which has no outcome"
            problems = (*(_retold(p, row, repeat.first) for p in first.problems), repeat.warning)
            out.append(RowOutcome(row, external_id, name, first.outcome, problems,
                                  shared_message(repeat.first, first.message), first.details))
        return out


def _retold(problem: Problem, row: int, first: int) -> Problem:
    """Row ``first``'s ``problem`` as row ``row``'s, which shares its outcome: "Row 7 (as row 3): ..."."""
    said = f"Row {first}"
    message = problem.message
    if message.startswith(said):
        message = f"Row {row} (as row {first}){message[len(said):]}"
    return replace(problem, row=row, message=message)


def _message_at(group: PlainRows, i: int) -> str:
    return group.messages[i] if group.messages is not None else group.message


def _details_at(group: PlainRows, i: int) -> dict[str, str]:
    if group.detail_columns is None:
        return group.details
    return {key: values[i] for key, values in group.detail_columns.items()}
