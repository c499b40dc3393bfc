"""What happened to every row: the data every stage hands on and the reporter renders.

A run is a ``RunInfo`` (facts about the run and its source file) and one ``RowOutcome`` per source row,
each with exactly one ``Outcome``. Rows in = sum of outcomes, always (``RunResult.check_accounted``).
``write_outcomes``/``read_outcomes`` keep a run as JSON lines so a report can be rendered again later
(``hrimport report OUTCOMES.jsonl``).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import json
import os
import time
from array import array
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, NamedTuple, Self

from hrimport.errors import (
    EXIT_HELD,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_ROWS_NEED_ATTENTION,
    EXIT_SERVICE,
    EXIT_TERMINATED,
)
from hrimport.listing import quoted
from hrimport.private_files import written_whole
from hrimport.provenance import ValueChange
from hrimport.stores import Iterated, Spool, Spooled, SpooledList

try:  # POSIX: a run holds a lock on its journal while it writes it (``journal_in_use``); Windows has no flock
    import fcntl
except ImportError:  # pragma: no cover (Windows)
    fcntl = None  # type: ignore[assignment]

#: ``progress(sent, total)``: an import reports each group of records that got their outcome from the
#: service (``sent`` more of ``total`` to send), so a terminal can draw a bar.
Progress = Callable[[int, int], None]


class Outcome(StrEnum):
    """The one thing that happened to a row."""

    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"  # same payload as the service last accepted: not sent again
    ALREADY_IMPORTED = "already_imported"  # time off already in the local ledger: not sent again
    VALID = "valid"  # dry run: would be sent
    PERMISSION_DENIED = "permission_denied"
    INVALID = "invalid"  # our own checks found problems; not sent
    REJECTED = "rejected"  # the service refused it, with its reason
    OVERLAPS_EXISTING = "overlaps_existing"  # time off: the service already holds an overlapping record
    FAILED = "failed"  # transport failure after retries
    NOT_SENT = "not_sent"  # valid, but the run stopped sending first (service lost, Ctrl-C, SIGTERM)
    # no record (a totals row, a footer line) the config says to skip: not sent, and nothing to do
    SKIPPED = "skipped"

    @property
    def is_success(self) -> bool:
        return self in SUCCESS_OUTCOMES

    @property
    def needs_attention(self) -> bool:
        """Whether a person must look at the row: neither a success nor a row the config says to skip."""
        return self not in SETTLED_OUTCOMES

    @property
    def label(self) -> str:
        return self.value.replace("_", " ").capitalize()


SUCCESS_OUTCOMES = frozenset(
    {Outcome.ADDED, Outcome.UPDATED, Outcome.UNCHANGED, Outcome.ALREADY_IMPORTED, Outcome.VALID}
)
#: The outcomes that need no one's attention: the successes, and a row skipped as the config says (no record).
SETTLED_OUTCOMES = SUCCESS_OUTCOMES | {Outcome.SKIPPED}


@dataclass(frozen=True, slots=True)  # slots: a million-row run keeps tens of thousands of these
class Problem:
    """One thing wrong with one row, in words an HR person understands.

    ``code`` is a stable kebab-case identifier (``not-a-date``, ``unknown-country``...): tests assert it,
    reports group by it; ``message`` is the full sentence, naming the row, the column and the value.
    A ``warning`` does not stop the row: it is sent, and the report shows what was doubtful about it.
    """

    code: str
    message: str
    row: int | None = None
    column: str | None = None
    field: str | None = None
    value: str | None = None
    severity: Literal["error", "warning"] = "error"

    @property
    def is_warning(self) -> bool:
        return self.severity == "warning"

    def __reduce__(self) -> tuple[type[Problem], tuple[Any, ...]]:
        # pickled (the spools of ``OutcomeRows``) as its constructor's arguments: a frozen dataclass with slots
        # is otherwise restored field by field through ``dataclasses.fields``, ~10 us a problem
        return Problem, (self.code, self.message, self.row, self.column, self.field, self.value, self.severity)


@dataclass(slots=True)
class RowOutcome:
    """The outcome of one source row."""

    row: int  # source row number as a person sees it in Excel (1-based, header rows counted)
    external_id: str
    name: str
    outcome: Outcome
    problems: tuple[Problem, ...] = ()
    message: str = ""
    # extra columns a report shows for this kind of record (time off: leave type, dates, days)
    details: dict[str, str] = field(default_factory=dict)
    # the row's original cells, kept for rows needing attention so ``to_fix`` can be written
    source: dict[str, str] | None = None
    # field -> [column, value in the file, value sent] for the fields whose value sent differs from the
    # cell (provenance); kept for the rows report.html lists (``RunInfo.html_row_limit``), masked fields left out
    changed_values: dict[str, list[str]] = field(default_factory=dict)

    @property
    def problem_codes(self) -> list[str]:
        return list(dict.fromkeys(p.code for p in self.problems))

    def __reduce__(self) -> tuple[type[RowOutcome], tuple[Any, ...]]:
        # as ``Problem``'s: one call, not an attribute set for each slot
        return RowOutcome, (self.row, self.external_id, self.name, self.outcome, self.problems, self.message,
                            self.details, self.source, self.changed_values)


class GoneLeave(NamedTuple):
    """A leave imported before that a time-off export no longer lists although it covers it (its person has rows
    in the export, its dates lie within the period the export's leave spans): cancelled or moved in the HR
    system, while its record stays on the platform (``hrimport.timeoff.gone``). Not a row of the file."""

    external_id: str
    name: str  # as the export gives it; "" when it gives none but the id
    leave_type: str
    start_date: str
    end_date: str
    total_days: str
    record_id: int | None  # the platform's id of the record
    imported_at: str  # when the platform accepted it
    source_file: str  # the export it was sent from, and its row there
    source_row: int


@dataclass
class SourceInfo:
    """The file a run read."""

    path: str
    name: str
    format: str  # csv | tsv | xlsx | xlsm | xls | ods
    size: int
    sha256: str
    sheet: str | None = None
    header_row: int = 1  # Excel row number of the header (of its upper row, for a header over two rows)
    header_rows: int = 1  # 2 for a header written over two rows with merged cells (``reader.merged_header``)
    headers: list[str] = field(default_factory=list)
    # rows above the header (report titles), kept so ``to_fix`` has the source's own layout
    preamble: list[list[str]] = field(default_factory=list)
    encoding: str | None = None
    delimiter: str | None = None
    rows_read: int = 0
    # why the sheet read is not the first one (hidden or chart sheets before it), to show the person
    sheet_note: str | None = None
    # that the header the columns were read by is hidden in the workbook (``reader.hidden_rows``)
    header_note: str | None = None
    # the other visible sheets holding the table of the sheet read (``reader.other_sheets``), told to
    # ``hrimport init``; an import refuses such a workbook unless its config names the sheet
    same_table_sheets: list[str] = field(default_factory=list)
    # the headers of the columns the workbook hides (``reader.hidden_columns``): a value sent from one is told
    hidden_columns: list[str] = field(default_factory=list)
    # the workbook's date system: 1904 for one whose serial numbers count from 1904-01-01 (Mac Excel's)
    date_system: int = 1900
    # a workbook's sheets, in order (the one read among them), to name when the sheet read is not the table
    sheets: list[str] = field(default_factory=list)

    @property
    def header_place(self) -> str:
        """Where the header is, in a person's words: ``header row 4``, ``header over rows 1-2 (merged cells)``."""
        return header_place(self.header_row, self.header_rows)

    @property
    def header_told(self) -> str:
        """``header_place``, and for a header over two rows the names it was read as: ``header over rows 1-2
        (merged cells): read as 'Employee ID', 'First Name', ...`` (what the report and init say)."""
        if self.header_rows == 1:
            return self.header_place
        return f"{self.header_place}: read as {quoted(self.headers, shown=len(self.headers))}"


def header_place(header_row: int, header_rows: int = 1) -> str:
    """``header row 4``, or ``header over rows 1-2 (merged cells)`` for a header written over two rows."""
    if header_rows > 1:
        return f"header over rows {header_row}-{header_row + header_rows - 1} (merged cells)"
    return f"header row {header_row}"


@dataclass
class RunInfo:
    """Facts about one run, for the report's header and ``summary.json``."""

    kind: Literal["staff", "timeoff"]
    job: str
    source: SourceInfo
    service_url: str
    customer_id: str
    started_at: str  # ISO 8601, local time with offset
    finished_at: str = ""
    duration_s: float = 0.0
    dry_run: bool = False
    tool_version: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    ignored_columns: list[str] = field(default_factory=list)
    mask_fields: list[str] = field(default_factory=lambda: ["passport_number"])
    html_row_limit: int = 5000
    html_problem_limit: int = 500  # lines report.html lists per problem and per warning
    notes: list[str] = field(default_factory=list)  # run-level remarks (e.g. "no data rows")
    # why the run stopped sending: the service became unreachable mid-run ("" when it did not); exit 4
    service_lost: str = ""
    # the signal that stopped the run's sending ("SIGINT" or "SIGTERM"; "" when none did): exit 130 or 143
    interrupted: str = ""
    # the plan (hrimport.changes.plan ``Plan.summary()``): what the file changes; None without a state folder
    plan: dict[str, Any] | None = None
    # the drift guards that held the run (nothing sent): one sentence each; exit 5
    held: list[str] = field(default_factory=list)
    # how the values were read and changed on their way, per column (``hrimport.provenance``); the examples
    # of masked fields left out
    values_read: list[ValueChange] = field(default_factory=list)
    # time off: the leave imported before that this export no longer lists (``RunResult.gone``), counted
    no_longer_in_export: int = 0
    # the runs that stopped before their report whose rows this run tells (they would read unchanged): each with
    # its journal, when it began and its rows' counts (``hrimport.imports.stopped_runs.ToldRows.summary``)
    stopped_runs: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class PlainRows:
    """Rows of one chunk that have nothing of their own but their id and name: one outcome, message and
    details, no problems or cells kept (a valid row of a validation or a dry run). Held as arrays, not one
    ``RowOutcome`` each: a million valid rows take ~20 MB instead of ~300 MB (issue 17, flat memory).

    Rows whose message or details differ row by row (time off: each row's leave type, dates and days; "Added
    as time-off record 12.") give them as columns, one value a row: ``messages`` in place of ``message``,
    ``detail_columns`` (detail key -> each row's value, every key on every row, in the order a row's
    details list them) in place of ``details``. A row's ``RowOutcome`` is made only as it is read."""

    rows: Sequence[int]  # ascending source row numbers (an ``array('q')`` or a NumPy array)
    external_ids: Sequence[str]  # a pyarrow string array, or a list
    names: Sequence[str]
    outcome: Outcome
    message: str = ""
    details: dict[str, str] = field(default_factory=dict)  # every row's (one dict, as rows share it)
    messages: Sequence[str] | None = None  # each row's own message, when they differ
    detail_columns: dict[str, Sequence[str]] | None = None  # each row's own details, when they differ

    def __len__(self) -> int:
        return len(self.rows)

    def split(self, rows: Container[int]) -> tuple[PlainRows, list[RowOutcome]]:
        """These rows without those in ``rows``, and those as ``RowOutcome``s (to be given problems)."""
        numbers = as_list(self.rows)
        hit = [i for i, row in enumerate(numbers) if row in rows]
        if not hit:
            return self, []
        everyone = list(self.outcomes())
        taken = [everyone[i] for i in hit]
        for o in taken:
            o.details = dict(o.details)  # its own, to be changed
        keep = [i for i, row in enumerate(numbers) if row not in rows]
        kept = [everyone[i] for i in keep]
        messages = [o.message for o in kept] if self.messages is not None else None
        columns: dict[str, Sequence[str]] | None = (
            {key: [o.details[key] for o in kept] for key in self.detail_columns}
            if self.detail_columns is not None else None)
        return PlainRows([o.row for o in kept], [o.external_id for o in kept], [o.name for o in kept], self.outcome,
                         self.message, self.details, messages, columns), taken

    def outcomes(self) -> Iterator[RowOutcome]:
        ids, names = as_list(self.external_ids), as_list(self.names)
        if self.messages is None and self.detail_columns is None:
            for row, external_id, name in zip(as_list(self.rows), ids, names):
                yield RowOutcome(int(row), external_id, name, self.outcome, message=self.message, details=self.details)
            return
        messages = as_list(self.messages) if self.messages is not None else itertools.repeat(self.message)
        if not self.detail_columns:
            details: Iterable[dict[str, str]] = itertools.repeat(self.details)
        else:
            keys = tuple(self.detail_columns)
            details = (dict(zip(keys, values)) for values in zip(*(as_list(c) for c in self.detail_columns.values())))
        for row, external_id, name, message, own in zip(as_list(self.rows), ids, names, messages, details):
            yield RowOutcome(int(row), external_id, name, self.outcome, message=message, details=own)


def as_list(values: Sequence[Any]) -> list[Any]:
    """``values`` (a list, an ``array``, a NumPy or Arrow array) as a list of Python objects."""
    to_list = getattr(values, "to_pylist", None) or getattr(values, "tolist", None)
    return to_list() if to_list is not None else list(values)


#: Rows with something of their own (problems, cells, details) an ``OutcomeRows`` keeps as objects (and an
#: ``OutcomesByRow``, and each problem group of report.html its lines: ``SpooledList``s). Past
#: them, each chunk's wait pickled in a temporary file and are read back a piece at a time as they are
#: iterated: a row to fix is ~5 KB as objects (its problems, its 40 cells), and a file whose every row is
#: invalid, or that the service rejects whole, must not take memory in proportion to its rows (issue 17).
HELD_LISTED = 10_000


@dataclass(frozen=True)
class _SpooledRows:
    """One chunk's listed rows in the spool of their ``OutcomeRows``, a piece at a time."""

    pieces: tuple[Spooled, ...]
    # what the tallies of a run need, counted as the rows went in: they are not read back for them
    outcomes: Counter[Outcome]
    warned: int  # rows that are a success with a warning
    rows: array[int]  # the rows' numbers


class OutcomeRows(Iterated[RowOutcome]):
    """Every row's outcome in source order, chunk by chunk: the rows with something of their own as
    ``RowOutcome``s (past ``held`` of them, in a temporary file), the plain ones as ``PlainRows`` (made into
    ``RowOutcome``s only while iterated).

    A ``Sequence``: iterate it, ``len()`` it, slice it. The tallies a verdict needs (``counts``...) are
    worked out without making every plain row an object. The rows are its own once added: a row read
    back from the file is a new object each time, so change a row before it is added, not after."""

    def __init__(self, rows: Iterable[RowOutcome] = (), *, held: int = HELD_LISTED) -> None:
        self._segments: list[tuple[list[RowOutcome] | _SpooledRows, list[PlainRows]]] = []
        self._length = 0
        self._held = held
        self._kept = 0  # listed rows held as objects
        self._spool: Spool[RowOutcome] | None = None
        listed = list(rows)
        if listed:
            self.add(listed)

    def add(self, listed: list[RowOutcome], *plain: PlainRows | None) -> None:
        """Append one chunk's rows: ``listed`` in any order, each ``plain`` ascending (one per outcome and
        message); every row after the rows of the chunks added before."""
        listed.sort(key=lambda o: o.row)
        kept = [p for p in plain if p is not None and len(p)]
        stored: list[RowOutcome] | _SpooledRows = listed
        if listed and self._kept + len(listed) > self._held:
            stored = self._spooled(listed)
        else:
            self._kept += len(listed)
        self._segments.append((stored, kept))
        self._length += len(listed) + sum(len(p) for p in kept)

    def _spooled(self, listed: list[RowOutcome]) -> _SpooledRows:
        if self._spool is None:
            self._spool = Spool()
        spool = self._spool
        at_once = SpooledList.AT_ONCE  # rows pickled, and read back, at once
        pieces = tuple(spool.put(listed[i:i + at_once]) for i in range(0, len(listed), at_once))
        return _SpooledRows(pieces, Counter(o.outcome for o in listed), _warned(listed),
                            array("q", (o.row for o in listed)))

    def _rows_of(self, stored: list[RowOutcome] | _SpooledRows) -> Iterator[RowOutcome]:
        if isinstance(stored, list):
            yield from stored
            return
        assert self._spool is not None
        for piece in stored.pieces:
            yield from self._spool.get(piece)

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[RowOutcome]:
        for listed, plain in self._segments:
            if not plain:
                yield from self._rows_of(listed)
            else:
                yield from heapq.merge(self._rows_of(listed), *(p.outcomes() for p in plain), key=lambda o: o.row)

    def __repr__(self) -> str:
        return f"OutcomeRows({len(self)} rows)"

    def segments(self) -> Iterator[tuple[list[RowOutcome], list[PlainRows]]]:
        """Each chunk's rows as added: its listed rows and its plain ones."""
        for listed, plain in self._segments:
            yield list(self._rows_of(listed)), plain

    def listed(self) -> Iterator[RowOutcome]:
        """The rows held as ``RowOutcome``s (every row that has problems, details or cells)."""
        for listed, _ in self._segments:
            yield from self._rows_of(listed)

    def plain(self) -> Iterator[PlainRows]:
        for _, plain in self._segments:
            yield from plain

    def outcome_counts(self) -> Counter[Outcome]:
        """Rows per outcome."""
        counter: Counter[Outcome] = Counter()
        for listed, plain in self._segments:
            counter.update(listed.outcomes if isinstance(listed, _SpooledRows) else (o.outcome for o in listed))
            for rows_alike in plain:
                counter[rows_alike.outcome] += len(rows_alike)
        return counter

    def attention(self) -> int:
        """How many rows need attention: neither a success nor skipped (every such row is listed)."""
        counts = self.outcome_counts()
        return sum(n for outcome, n in counts.items() if outcome.needs_attention)

    def warned(self) -> int:
        """How many rows are a success with a warning (every such row is listed)."""
        return sum(listed.warned if isinstance(listed, _SpooledRows) else _warned(listed) for listed, _ in self._segments)

    def row_numbers(self) -> array[int]:
        """Every row's number, as a compact array (8 bytes a row)."""
        numbers = array("q")
        for listed, plain in self._segments:
            numbers.extend(listed.rows if isinstance(listed, _SpooledRows) else (o.row for o in listed))
            for rows_alike in plain:
                numbers.extend(rows_alike.rows)
        return numbers


def _warned(rows: Iterable[RowOutcome]) -> int:
    return sum(1 for o in rows if o.outcome.is_success and any(p.is_warning for p in o.problems))


class OutcomesByRow(SpooledList[RowOutcome]):
    """Rows' outcomes gathered in any order (the invalid rows chunk by chunk, the rows the service answered
    as it answers), taken back in row order a range at a time (``taken``), as the report's rows are put
    together chunk by chunk. The first ``held`` wait in memory; past them, in runs of a few thousand in a
    temporary file, each run sorted and known by its first and last row, so a file the service rejects whole
    does not hold every row's outcome in memory (issue 17)."""

    def __init__(self, held: int = HELD_LISTED) -> None:
        super().__init__(held)
        self._runs: list[tuple[int, int, Spooled]] = []  # (first row, last row, where) of each run

    def __iadd__(self, outcomes: Iterable[RowOutcome]) -> Self:
        for o in outcomes:
            self.append(o)
        return self

    def _spooled(self, items: list[RowOutcome]) -> None:
        items.sort(key=lambda o: o.row)
        self._runs.append((items[0].row, items[-1].row, self._spool_of().put(items)))

    def __iter__(self) -> Iterator[RowOutcome]:
        """Every outcome not taken, in no particular order."""
        yield from self._held
        yield from self._tail
        for _, _, where in self._runs:
            yield from self._spool_of().get(where)

    def taken(self, last: int) -> list[RowOutcome]:
        """The outcomes of rows up to ``last`` not taken before, in row order; they are let go here."""
        out = [o for o in self._held if o.row <= last] + [o for o in self._tail if o.row <= last]
        self._held = [o for o in self._held if o.row > last]
        self._tail = [o for o in self._tail if o.row > last]
        runs = []
        for first, final, where in self._runs:
            if first > last:
                runs.append((first, final, where))
                continue
            run = self._spool_of().get(where)
            cut = bisect.bisect_right(run, last, key=lambda o: o.row)
            out += run[:cut]
            if cut < len(run):  # the rest of the run, for the ranges to come
                rest = run[cut:]
                runs.append((rest[0].row, final, self._spool_of().put(rest)))
        self._runs = runs
        self._length -= len(out)
        out.sort(key=lambda o: o.row)
        return out

    def drained(self) -> Iterator[RowOutcome]:
        """Every outcome not taken, in no particular order; this store is empty after (the outcomes are let go
        as they are read)."""
        held, tail, runs = self._held, self._tail, self._runs
        self._held, self._tail, self._runs, self._length = [], [], [], 0
        spooled = (self._spool_of().get(where) for _, _, where in runs)
        return itertools.chain(held, tail, itertools.chain.from_iterable(spooled))


class AttentionRows(Iterated[RowOutcome]):
    """The rows of a run that need attention, in source order (``RunResult.need_attention``): read from
    its ``OutcomeRows`` each time they are iterated, never all held at once."""

    def __init__(self, rows: OutcomeRows) -> None:
        self._rows = rows
        self._count: int | None = None

    def __len__(self) -> int:
        if self._count is None:
            self._count = self._rows.attention()
        return self._count

    def __iter__(self) -> Iterator[RowOutcome]:
        return (o for o in self._rows.listed() if o.outcome.needs_attention)


@dataclass
class RunResult:
    """A whole run: its facts and one outcome per source row (``rows``: a list is taken as given)."""

    info: RunInfo
    rows: OutcomeRows
    # a staff dry run's request bodies, batch by batch, each the JSON text a request would carry, token-free
    # (the report's payloads.jsonl), made as they are iterated (once: the report writes them); not saved in
    # outcomes.jsonl
    payloads: Iterable[str] | None = None
    # time off: each leave imported before that this export no longer lists (``GoneLeave``), by person and date;
    # past the first few thousand they wait in a file. Not rows: every row keeps its one outcome
    gone: SpooledList[GoneLeave] = field(default_factory=lambda: SpooledList(HELD_LISTED))

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "rows" and not isinstance(value, OutcomeRows):
            value = OutcomeRows(value)  # a list of outcomes, as tests and ``read_outcomes`` give
        super().__setattr__(name, value)

    def counts(self) -> dict[str, int]:
        """Rows per outcome, every outcome listed (zero included), in ``Outcome`` order."""
        counter = self.rows.outcome_counts()
        return {o.value: counter.get(o, 0) for o in Outcome}

    @property
    def imported(self) -> int:
        counts = self.counts()
        return sum(counts[o.value] for o in SUCCESS_OUTCOMES)

    @property
    def skipped(self) -> int:
        """Rows skipped as no record (a totals row, a footer line), as the config says: nothing to do."""
        return self.rows.outcome_counts()[Outcome.SKIPPED]

    @property
    def with_warnings(self) -> int:
        """Rows imported (or found valid) with a warning: sent, but with something doubtful to look at."""
        return self.rows.warned()

    @property
    def need_attention(self) -> AttentionRows:
        """The rows not imported (invalid, rejected, failed...) and not skipped, in source order, each read when
        iterated."""
        return AttentionRows(self.rows)

    @property
    def exit_code(self) -> int:
        if self.info.interrupted:
            return EXIT_TERMINATED if self.info.interrupted == "SIGTERM" else EXIT_INTERRUPTED
        if self.info.held:
            return EXIT_HELD  # nothing was sent: a person must look at the drift first
        if self.info.service_lost:
            return EXIT_SERVICE  # rows were left unsent: on-call must look at the service, not the rows
        return EXIT_OK if not self.rows.attention() else EXIT_ROWS_NEED_ATTENTION

    def verdict(self) -> str:
        """One sentence: '1,204 of 1,230 rows imported (3 with warnings); 2 skipped (no records); 24 need
        attention'; and the rows runs stopped before their report sent, told by this run: '; 15 added and 1,985
        updated by the run of 2026-11-25 09:00, which stopped before its report'."""
        text = self._verdict()
        if self.info.stopped_runs and not self.info.dry_run and len(self.rows):
            from hrimport.imports.stopped_runs import told_verdict

            text += f"; {told_verdict(self.info.stopped_runs)}"
        return text

    def _verdict(self) -> str:
        total = len(self.rows)
        skipped = self.skipped
        attention = total - self.imported - skipped
        verb = "checked" if self.info.dry_run else "imported"
        if total == 0:
            return "No data rows were found in the file."
        if self.info.held:
            return self._held_verdict(total, attention, skipped)
        text = f"{self.imported:,} of {total:,} rows {verb}"
        warned = self.with_warnings
        if warned:
            # sent, but with something doubtful HR should look at (the report groups the warnings)
            text += f" ({warned:,} with warnings)"
        if skipped:
            text += f"; {skipped:,} skipped (no record{'s' if skipped != 1 else ''})"
        if attention:
            text += f"; {attention:,} need{'s' if attention == 1 else ''} attention"
        if self.info.interrupted:
            # the signal may land as the last answer comes in: every row then has what the service did with it
            left = any(r.outcome is Outcome.NOT_SENT for r in self.rows)
            # "to send": rows held back by our checks were never to be sent
            text += f"; the run was stopped ({self.info.interrupted}) {'before sending' if left else 'after'} every row"
            text += "" if left else " to send was sent"
        elif self.info.service_lost:
            text += "; the service became unreachable, so the run stopped sending"
        return text

    def _held_verdict(self, total: int, attention: int, skipped: int) -> str:
        """A held run leads with the hold: its rows counted as a success are only those unchanged since last
        time (nothing was sent), which "12 of 12 rows imported" beside exit 5 would misstate."""
        lead = "Would be held for review" if self.info.dry_run else "Held for review, nothing sent"
        text = f"{lead}: the file differs from last time more than the drift guard allows"
        if self.imported:
            text += f"; {self.imported:,} of {total:,} rows unchanged since last time"
        if skipped:
            text += f"; {skipped:,} skipped (no record{'s' if skipped != 1 else ''})"
        if attention:
            text += f"; {attention:,} need{'s' if attention == 1 else ''} attention"
        return text

    def check_accounted(self, rows_read: int) -> None:
        """Raise if any row read has no outcome or one row has two: a row must never be lost."""
        import numpy as np  # here: a command that only prints (``--help``) does not load it

        numbers = np.sort(np.frombuffer(self.rows.row_numbers(), dtype=np.int64))
        doubled = np.unique(numbers[1:][numbers[1:] == numbers[:-1]]).tolist()
        if len(self.rows) != rows_read or doubled:
            raise AssertionError(
                f"{rows_read} rows read but {len(self.rows)} outcomes (rows with two: {doubled[:5]})"
            )


def _json_encoder() -> Callable[[object], str]:
    """``json.dumps(value, ensure_ascii=False)`` as one call of the json module's C encoder, made once.

    ``JSONEncoder.encode`` makes a new C encoder (and a closure) on every call: a quarter of the time of
    encoding a row's record, and of a staff dry run's payloads. Where the C encoder is missing or takes other
    arguments (another Python), the text would differ, and it is not used: ``JSONEncoder.encode`` is.
    """
    reference = json.JSONEncoder(ensure_ascii=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return reference.encode
    try:
        # the arguments JSONEncoder.iterencode gives it; no circular check (None): a record is a tree of dicts
        chunks = make(None, reference.default, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)

        def encode(value: object) -> str:
            return "".join(chunks(value, 0))

        probe = {"a": [1, -2.5, None, True, "é\n\"\u2028x"], "b": {"c": float("inf")}, "d": Outcome.ADDED}
        if encode(probe) == reference.encode(probe):
            return encode
    except (TypeError, ValueError):
        pass
    return reference.encode


#: ``json.dumps(value, ensure_ascii=False)``, faster: each line of ``outcomes.jsonl`` and ``payloads.jsonl``.
encode_json = _json_encoder()


def write_outcomes(path: Path, result: RunResult, *, after_run: Sequence[dict[str, object]] = ()) -> None:
    """Save a run as JSON lines: the run record first, then ``after_run``'s records (each a dict with its own
    ``record``, which ``read_outcomes`` passes over), then one line per row.

    Written beside ``path`` and renamed over it (``written_whole``), so a kill or a disk that fills up half way
    leaves the file that was there (a run's journal, below, or an earlier render's) whole rather than a
    truncated run."""
    with written_whole(path) as fh:
        fh.write(encode_json({"record": "run", **asdict(result.info)}) + "\n")
        fh.writelines(encode_json(record) + "\n" for record in after_run)
        fh.writelines(map(row_line, result.rows))
        fh.writelines(encode_json({"record": "gone", **leave._asdict()}) + "\n" for leave in result.gone)


#: ``on_outcomes(rows)``: an import hands on the rows it sent as the service answers them (a staff batch, a
#: time-off record). Rows settled before sending (invalid, unchanged...) are not journaled: the next run finds
#: them the same way, while what the service did is known only from its answers.
OutcomesDone = Callable[[list[RowOutcome]], None]


#: A journal's lines are synced to the disk (fsync) once this many rows or seconds are written since the last
#: sync, and when it is closed: what the state folder holds (the time-off ledger syncs every record) a power cut
#: leaves no journal naming is at most the last moment's, at the cost of an fsync or two a second.
JOURNAL_SYNC_ROWS = 1_000
JOURNAL_SYNC_SECONDS = 0.5


class OutcomeJournal:
    """A run's outcomes, appended to its report folder's ``outcomes.jsonl`` as rows finish (flushed, and synced to
    the disk every ``JOURNAL_SYNC_ROWS`` rows or ``JOURNAL_SYNC_SECONDS`` and at the end).

    A run killed half way (SIGKILL, a power cut) leaves in its report folder what the service did with
    every row sent: a ``journal`` line naming the run (its kind, job, file, start, and the service and customer
    the rows went to, as the state folder keys them), then one ``row`` line per row sent, in the order the
    answers came. When the run ends, ``write_outcomes`` replaces the journal by the whole run. A run that
    hrimport itself stopped before its report (an unexpected error: a bug) ends its journal with a ``stopped``
    line saying why (``stopped``), so that ``hrimport runs`` tells it from a run killed or still sending. Writing
    the journal never stops the run: if the disk fills up, it stops writing (``error`` says why) and the run goes
    on; the report that follows then fails in its own words (exit 6) and keeps the outcomes in the state folder.
    """

    def __init__(self, path: Path, *, kind: str, job: str, source: Path, started_at: str, service: str,
                 customer_id: str) -> None:
        self.path = path
        self.error: OSError | None = None
        self.rows = 0  # rows written so far
        self.rows_whole = 0  # rows the file holds whole: as many, unless a write failed
        self._whole = 0  # the file's bytes up to its last whole line
        self._fh = None
        self._file: tuple[int, int] | None = None  # (device, inode): the journal's own file, not what replaced it
        self._unsynced = 0  # rows written since the last fsync
        self._synced_at = time.monotonic()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            self._fh = open(fd, "w", encoding="utf-8")  # noqa: SIM115 (closed by close())
            stat = os.fstat(fd)
            self._file = (stat.st_dev, stat.st_ino)
            _hold(fd)
            self._write([encode_json({"record": "journal", "kind": kind, "job": job, "source": str(source),
                                      "started_at": started_at, "service": service,
                                      "customer_id": customer_id}) + "\n"])
        except OSError as exc:
            self._stop(exc)

    def add(self, rows: list[RowOutcome]) -> None:
        """Append ``rows`` (each with its outcome) and flush them to the file."""
        if self._fh is not None and rows:
            self.rows += len(rows)
            if self._write(map(row_line, rows)):
                self.rows_whole = self.rows
                self._unsynced += len(rows)
                if (self._unsynced >= JOURNAL_SYNC_ROWS
                        or time.monotonic() - self._synced_at >= JOURNAL_SYNC_SECONDS):
                    self._sync()

    def _sync(self) -> None:
        """Put the lines written on the disk (a power cut keeps them); a disk refusing it stops the journal, as a
        write refused does."""
        assert self._fh is not None
        try:
            os.fsync(self._fh.fileno())
        except OSError as exc:
            self._stop(exc)
            return
        self._unsynced = 0
        self._synced_at = time.monotonic()

    def _write(self, lines: Iterable[str]) -> bool:
        """Append ``lines`` and flush them; whether they are in the file whole."""
        assert self._fh is not None
        try:
            self._fh.writelines(lines)
            self._fh.flush()
            self._whole = os.lseek(self._fh.fileno(), 0, os.SEEK_CUR)
        except OSError as exc:
            self._stop(exc)
            return False
        return True

    def _stop(self, exc: OSError) -> None:
        self.error = exc
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError:
                pass  # the same full disk; what was flushed stays
            self._fh = None

    def close(self) -> None:
        if self._fh is not None:
            self._sync()  # its last lines too, and a stopped line
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def stopped(self, why: str, next_step: str) -> bool:
        """End the journal with ``{"record": "stopped", "why": why, "next": next_step}`` (each one line, without
        secrets: ``hrimport.imports.stops``), open or closed, and close it; whether it was written. Not when its
        file was replaced since (by the whole run, which ``write_outcomes`` renames over it: a report stopped after
        that is told by its missing summary). A line the disk refuses (a full disk) is taken off again, so that
        the journal says nothing false: it ends as it was. A journal whose own writing failed before (the disk
        filled up as rows were answered) has its cut line taken off, and says so in the line, when the disk
        takes it."""
        whole = self._whole
        try:
            if self._fh is None:
                stat = os.stat(self.path)
                if self._file != (stat.st_dev, stat.st_ino):
                    return False
                if self.error is not None:  # the rows it lists end at its last whole line
                    os.truncate(self.path, whole)
                    why += (f"; its journal could not be written to its end either (the same disk), so it lists only "
                            f"the first {self.rows_whole:,} rows the service answered, not each")
                self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (closed below)
        except OSError:
            return False
        self.error = None
        self._write([encode_json({"record": STOPPED, "why": why, "next": next_step}) + "\n"])
        self.close()
        if self.error is None:
            return True
        try:  # the line cut where the disk was full: the journal as it was, which never read as a row's
            os.truncate(self.path, whole)
        except OSError:
            pass  # a cut last line is read as not answered all the same
        return False


def _hold(fd: int) -> None:
    """Lock a journal (its open file) for as long as its run writes it: released when the file is closed or the
    process ends, however it ends (``kill -9`` included)."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass  # a filesystem without flock: its journal reads as a stopped run's, as on Windows


def journal_in_use(fd: int) -> bool:
    """Whether the journal open as ``fd`` is still being written by its run (it holds its lock: ``_hold``): a run
    still sending, not one that stopped. Always False where there is no flock (Windows)."""
    if fcntl is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False


_ROW_FIELDS = tuple(f.name for f in fields(RowOutcome))
_PROBLEM_FIELDS = tuple(f.name for f in fields(Problem))


def _row_record(row: RowOutcome) -> dict[str, object]:
    """``{"record": "row", **asdict(row)}`` without asdict's deep copies: 3x faster on 100k rows, same JSON."""
    record: dict[str, object] = {"record": "row", **{name: getattr(row, name) for name in _ROW_FIELDS}}
    record["problems"] = [{name: getattr(p, name) for name in _PROBLEM_FIELDS} for p in row.problems]
    return record


#: A JSON string as ``encode_json`` writes it (ensure_ascii=False): the C function its encoder calls.
_encode_text = json.encoder.encode_basestring
_OUTCOME_TEXTS = {o: _encode_text(o.value) for o in Outcome}
# the few messages and details most rows share ("Add Successfully", the plan's {"plan": "new", "changes": ""}),
# each encoded once
_TEXTS_KEPT = 256
_MESSAGE_TEXTS: dict[str, str] = {}
_DETAILS_TEXTS: dict[tuple[tuple[str, str], ...], str] = {}


def row_line(row: RowOutcome) -> str:
    """A row's line of ``outcomes.jsonl``: ``encode_json(_row_record(row))`` and a newline, the same text.

    Most rows sent hold nothing but their id, name, outcome, message and a few words of ``details`` (the
    plan's): their line is put together from those texts, 2-5x faster than building the record and encoding
    it (each row sent is written twice: to the run's journal as it is answered, to ``outcomes.jsonl`` at
    the end). Any other row is encoded whole."""
    if (row.problems or row.source is not None or row.changed_values or type(row.row) is not int
            or type(row.external_id) is not str or type(row.name) is not str or type(row.message) is not str
            or row.outcome not in _OUTCOME_TEXTS):
        return encode_json(_row_record(row)) + "\n"
    try:
        details = _details_text(row.details) if row.details else "{}"
    except TypeError:  # a key or value that is not text
        return encode_json(_row_record(row)) + "\n"
    message = _MESSAGE_TEXTS.get(row.message)
    if message is None:
        message = _encode_text(row.message)
        if len(_MESSAGE_TEXTS) < _TEXTS_KEPT:
            _MESSAGE_TEXTS[row.message] = message
    return (f'{{"record": "row", "row": {row.row}, "external_id": {_encode_text(row.external_id)}, '
            f'"name": {_encode_text(row.name)}, "outcome": {_OUTCOME_TEXTS[row.outcome]}, "problems": [], '
            f'"message": {message}, "details": {details}, "source": null, "changed_values": {{}}}}\n')


def _details_text(details: dict[str, str]) -> str:
    """``details`` as ``encode_json`` writes it; TypeError unless its keys and values are text."""
    held = tuple(details.items())  # TypeError for an unhashable value
    text = _DETAILS_TEXTS.get(held)
    if text is None:
        text = "{" + ", ".join([f"{_encode_text(k)}: {_encode_text(v)}" for k, v in held]) + "}"
        if len(_DETAILS_TEXTS) < _TEXTS_KEPT:
            _DETAILS_TEXTS[held] = text
    return text


#: How a run's journal begins (``OutcomeJournal``): a first line cut as it was written still starts so, or is
#: a beginning of it.
JOURNAL_START = b'{"record": "journal"'
#: The record of the line that ends a journal of a run hrimport stopped before its report (``OutcomeJournal.stopped``)
STOPPED = "stopped"


def read_outcomes(path: Path) -> RunResult:
    """Load a run saved by ``write_outcomes``.

    ValueError, in words for a person, for a file that is not a whole run: a journal (``OutcomeJournal``: the
    run was stopped before it finished), or a file damaged in its middle. A journal's last line without its
    line break was cut as it was appended (a kill, a power cut): its row counts as not answered, as if the kill
    had come before the write; a line that is not a whole record with lines after it is damage, never skipped.
    """
    info: RunInfo | None = None
    rows: list[RowOutcome] = []
    gone: SpooledList[GoneLeave] = SpooledList(HELD_LISTED)
    journal = False
    cut = ""
    why = ""  # why hrimport stopped the run, when its journal says so
    with open(path, "rb") as fh:  # bytes: a line cut in the middle of a character is still a line
        for number, line in enumerate(fh, 1):
            if not line.endswith(b"\n") and (journal or (number == 1 and _journal_start(line))):
                cut = " (its last line cut)"
                break
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except ValueError:
                if number == 1:
                    raise
                data = None  # not a whole record: damage, below
            if not isinstance(data, dict):
                if number == 1:
                    raise TypeError("its first line is not a JSON object")
                raise _damaged(number if line.endswith(b"\n") else None, journal=journal)
            record = data.pop("record", None)
            if record == "run":
                data["source"] = SourceInfo(**data["source"])
                data["values_read"] = [ValueChange.from_dict(c) for c in data.get("values_read", [])]
                info = RunInfo(**data)
            elif record == "row":
                data["outcome"] = Outcome(data["outcome"])
                data["problems"] = tuple(Problem(**p) for p in data["problems"])
                rows.append(RowOutcome(**data))
            elif record == "gone":
                gone.append(GoneLeave(**data))
            elif record == "journal":
                journal = True
            elif record == STOPPED and journal:
                why = f" ({data['why']})" if isinstance(data.get("why"), str) else ""
    if info is None:
        if journal or cut:
            raise ValueError(f"it is the journal of a run stopped before it finished{why}{cut}: {len(rows):,} rows sent "
                             "were recorded as the service answered, and no report can be made of it; run the import "
                             "again: nothing is sent twice")
        raise ValueError(f"{path} holds no run record")
    return RunResult(info, OutcomeRows(rows), gone=gone)


def _damaged(line: int | None, *, journal: bool) -> ValueError:
    """The error for a file whose ``line`` (None: its last, cut) is not a whole record."""
    where = f"its line {line}" if line else "its last line"
    again = "; run the import again: nothing is sent twice" if journal else ""
    return ValueError(f"it is damaged: {where} is not a whole record (cut, or written over), so it cannot be read "
                      f"as a run{again}")


def _journal_start(line: bytes) -> bool:
    """Whether ``line`` is a journal's first line, whole or cut."""
    return line.startswith(JOURNAL_START) or JOURNAL_START.startswith(line)
