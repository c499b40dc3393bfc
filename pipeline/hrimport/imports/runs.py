"""What the staff and time-off imports share when they compose their stages: reading, mapping and
validating the source as the config says, and closing a run into a ``RunResult`` in which every source row
has exactly one outcome."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from hrimport import __version__
from hrimport.config import FieldMapping, ImportConfig
from hrimport.errors import ConfigError
from hrimport.gc_pause import paused_gc
from hrimport.mapper import MappedTable, MappingState, map_records
from hrimport.normalize.trail import changed_cells
from hrimport.outcomes import Outcome, OutcomeRows, Problem, RowOutcome, RunInfo, RunResult, SourceInfo
from hrimport.private_files import anonymous_file
from hrimport.provenance import ValueChange, is_masked, without_masked
from hrimport.reader import SourceTable, read_spreadsheet, read_spreadsheet_chunks
from hrimport.reader.summary_rows import TOTALS_OR_FOOTER_ROW, as_skipped
from hrimport.service.connection import Target
from hrimport.stages import announce
from hrimport.validate import KeyIds, RepeatedRow, config_value_problem, validate_records


def read_source(config: ImportConfig, path: Path, expected_headers: list[str]) -> SourceTable:
    """Read the export as the config's [source] section says."""
    src = config.source
    return read_spreadsheet(
        path,
        sheet=src.sheet,
        header_row=src.header_row,
        expected_headers=expected_headers,
        encoding=src.encoding,
        delimiter=src.delimiter,
        max_unpacked_mb=src.max_unpacked_mb,
    )


def read_map_validate(
    config: ImportConfig, path: Path, mapping: FieldMapping
) -> tuple[SourceTable, MappedTable, dict[int, list[Problem]], dict[str, float]]:
    """Read the export, map it with ``mapping`` and validate every row: no network. Returns the stages'
    data and their seconds. The cyclic garbage collector waits meanwhile (``paused_gc``)."""
    timings: dict[str, float] = {}
    with paused_gc():
        t = time.perf_counter()
        announce(f"Reading {path.name}")
        table = read_source(config, path, mapping.source_columns)
        timings["read"] = time.perf_counter() - t
        announce(f"Validating {len(table.frame):,} rows")
        t = time.perf_counter()
        mapped = map_records(table, mapping, date_order=config.source.date_order,
                             formula_text=config.source.formula_text, mask=config.report.mask)
        timings["map"] = time.perf_counter() - t
        t = time.perf_counter()
        problems = validate_records(mapped, email_check=mapping.email_check, strict_checks=mapping.strict_checks)
        refuse_config_values(config, mapping, mapped, problems)
        timings["validate"] = time.perf_counter() - t
    return table, mapped, problems, timings


def held_back(config: ImportConfig, row: int, external_id: str, name: str, found: list[Problem],
              details: dict[str, str] | None = None) -> RowOutcome:
    """The outcome of a row our checks hold back for the problems ``found``: invalid, needing attention; or,
    when it is a totals row or a footer line (its problem alone, ``keep_alone``) and the config's [source]
    totals_or_footer_rows says "skip", skipped, its problem a warning saying so (the report still names it)."""
    if (config.source.totals_or_footer_rows == "skip" and len(found) == 1
            and found[0].code == TOTALS_OR_FOOTER_ROW):
        skipped = as_skipped(found[0])
        return RowOutcome(row, external_id, name, Outcome.SKIPPED, (skipped,), skipped.message, details or {})
    return RowOutcome(row, external_id, name, Outcome.INVALID, tuple(found), " ".join(p.message for p in found),
                      details or {})


def refuse_config_values(config: ImportConfig, mapping: FieldMapping, mapped: MappedTable,
                         problems: dict[int, list[Problem]]) -> None:
    """A constant or default of the config that the checks refuse is a ``ConfigError`` in one line: left to
    the rows, every row it fills would be blamed on its own empty cell (and marked in to_fix)."""
    found = config_value_problem(mapped, problems, mapping.constants, mapping.defaults)
    if found is None:
        return
    table, problem = found
    section = "staff" if mapping is config.staff else "timeoff"
    value = (mapping.constants if table == "constants" else mapping.defaults)[str(problem.field)]
    reason = problem.message.split(": ", 1)[-1]  # past "Row 2, column 'Country'": the value's own fault
    raise ConfigError(f"{config.path.name} [{section}.{table}] {problem.field} = {value!r} cannot be sent "
                      f"({problem.code}): {reason} Correct it in the config.")


#: Rows read, mapped and validated at a time (issue 17): memory holds one chunk's tables, not the file's.
#: A chunk of a 40-column export costs ~4 KB a row at its peak (the cells as read, as fields, as checked):
#: 20,000 rows keep a validation near 350 MB, and smaller chunks cost time (5,000: +40%).
CHUNK_ROWS = 20000


@dataclass
class FileChunk:
    """One chunk of a file: its rows as read, as platform fields, and each invalid row's problems (by
    position in the chunk)."""

    table: SourceTable
    mapped: MappedTable
    problems: dict[int, list[Problem]]


@dataclass
class FileFacts:
    """What a file says once all its chunks are read: its notes, how its values were read, and by row number
    the ``duplicate-id`` problems and the rows repeating an earlier one (found only once every id is in)."""

    info: SourceInfo
    notes: list[str]
    values_read: list[ValueChange]
    duplicates: dict[int, Problem]
    repeats: dict[int, RepeatedRow]
    ignored_columns: list[str]
    field_sources: dict[str, str]
    rows: int


class StagedFile:
    """A source file read, mapped and validated chunk by chunk (``chunk_rows`` rows at a time), as the
    config says; no network. Iterate it once for its ``FileChunk``s, then ``finish()`` for its facts, or
    the ``InputFileError`` that only the whole file shows (a date column proving the other order).
    ``timings`` holds each stage's seconds, over all chunks. The cyclic garbage collector waits meanwhile
    (``paused_gc``)."""

    def __init__(self, config: ImportConfig, path: Path, mapping: FieldMapping, chunk_rows: int = CHUNK_ROWS,
                 *, stream: bool = True, h_and_m: Iterable[str] = ()) -> None:
        self.config, self.path, self.mapping = config, path, mapping
        self.chunk_rows = max(1, chunk_rows)
        self.stream = stream
        self.timings: dict[str, float] = {"read": 0.0, "map": 0.0, "validate": 0.0}
        self.state = MappingState(config.source.date_order, h_and_m)
        self.key_ids = KeyIds(mapping.fields)
        self.info: SourceInfo | None = None
        self._rows = 0
        self._last: MappedTable | None = None

    def __iter__(self) -> Iterator[FileChunk]:
        """The file's chunks; ``StreamBroken`` when a streamed file needs the whole read after all (make a
        new ``StagedFile`` with ``stream=False``), ``MappingRestart`` when the chunks so far were mapped on a
        guess a later one contradicts (make a new one with ``h_and_m`` naming its field)."""
        src = self.config.source
        with paused_gc():
            announce(f"Reading {self.path.name}")
            t = time.perf_counter()
            chunks, streamed = read_spreadsheet_chunks(
                self.path, chunk_rows=self.chunk_rows, stream=self.stream, sheet=src.sheet,
                header_row=src.header_row, expected_headers=self.mapping.source_columns, encoding=src.encoding,
                delimiter=src.delimiter, max_unpacked_mb=src.max_unpacked_mb)
            self.timings["read"] += time.perf_counter() - t
            while True:
                t = time.perf_counter()
                chunk = next(chunks, None)
                self.timings["read"] += time.perf_counter() - t
                if chunk is None:
                    return
                self.info = chunk.info
                if not self._rows:
                    # a wide file's chunks are shorter than chunk_rows (``reader.grid.rows_per_chunk``)
                    announce(f"Validating the rows, {len(chunk.frame):,} at a time" if streamed else
                             f"Validating {chunk.info.rows_read:,} rows")
                t = time.perf_counter()
                mapped = map_records(chunk, self.mapping, date_order=src.date_order, formula_text=src.formula_text,
                                     state=self.state, mask=self.config.report.mask)
                self.timings["map"] += time.perf_counter() - t
                t = time.perf_counter()
                problems = validate_records(mapped, duplicates=False, email_check=self.mapping.email_check,
                                            strict_checks=self.mapping.strict_checks)
                refuse_config_values(self.config, self.mapping, mapped, problems)
                self.key_ids.add(mapped, problems)
                self.timings["validate"] += time.perf_counter() - t
                self._rows += len(mapped)
                self._last = mapped
                yield FileChunk(chunk, mapped, problems)
                # The chunks' frames hold reference cycles (pandas' caches), which only the paused collector
                # frees: memory would grow with every chunk. The two young generations only: the caller
                # still holds the chunk just yielded, so it survives this pass into the middle generation,
                # and the next pass frees it; what outlives both (the rows kept) goes to the oldest, which
                # is never walked again here.
                del chunk, mapped, problems
                gc.collect(1)

    def finish(self) -> FileFacts:
        assert self.info is not None and self._last is not None, "finish() after reading the file"
        t = time.perf_counter()
        notes, values_read = self.state.finish(self.mapping)
        shared = self.key_ids.duplicates(self._last)
        self.timings["validate"] += time.perf_counter() - t
        if shared.repeats:
            notes.append(repeats_note(len(shared.repeats)))
        return FileFacts(self.info, [*filter(None, [self.info.sheet_note, self.info.header_note]), *notes], values_read, shared.doubled,
                         shared.repeats, self._last.ignored_columns, self._last.field_sources, self._rows)


def repeats_note(count: int, kind: Literal["staff", "timeoff"] = "staff") -> str:
    """The run's note of the ``count`` rows that repeat an earlier row exactly (``RepeatedRow``): in a staff
    file, a person listed twice; in a time-off file, a leave."""
    rows = f"{count:,} row repeats an earlier row" if count == 1 else f"{count:,} rows repeat an earlier row"
    if kind == "timeoff":
        return (f"{rows} exactly (the same external id, leave type, dates and half days, and the same value in "
                "every field sent): each leave is sent once, with its first row, and a repeated row shares its "
                "outcome (duplicate-row).")
    return (f"{rows} exactly (the same external id and the same value in every field sent): each person is sent "
            "once, with their first row, and a repeated row shares its outcome (duplicate-row).")


def finish_run(
    kind: Literal["staff", "timeoff"],
    config: ImportConfig,
    target: Target,
    table: SourceTable,
    mapped: MappedTable,
    outcomes: Iterable[RowOutcome],
    *,
    started: datetime,
    t0: float,
    timings: dict[str, float],
    dry_run: bool,
    notes: list[str] | None = None,
) -> RunResult:
    """The run's ``RunResult`` of a file read whole: outcomes in source order, the original cells kept on
    every row needing attention (for ``to_fix``), how the values were read (the mapper's record, and the
    values that changed in each row report.html lists), and a check that no row was lost or counted twice."""
    rows = sorted(outcomes, key=lambda o: o.row)
    attach_chunk(rows, table, mapped, config.report.mask, config.report.html_row_limit)
    return close_run(kind, config, target, table.info, OutcomeRows(rows),
                     notes=[*filter(None, [table.info.sheet_note, table.info.header_note]), *mapped.notes, *(notes or [])],
                     ignored_columns=mapped.ignored_columns, values_read=mapped.values_read, started=started,
                     t0=t0, timings=timings, dry_run=dry_run, rows_read=len(mapped))


def attach_chunk(rows: list[RowOutcome], table: SourceTable, mapped: MappedTable, mask: Iterable[str],
                 html_rows: int, offset: int = 0, *, cells: bool = True) -> None:
    """Give the outcomes of one chunk's rows (``rows``, in source order) what the chunk knows of them
    (``ChunkKeep``)."""
    ChunkKeep.of(table, mapped, mask, html_rows, offset).attach(rows, cells=cells)


@dataclass
class ChunkKeep:
    """What one chunk knows of its rows that their outcomes, known later, carry: the original cells (for
    the rows needing attention: ``to_fix``), the mapper's warnings, and the values that changed on the way
    (for the rows report.html lists). The chunk's mapped table is not kept: only what these need."""

    table: SourceTable | SpilledCells
    warnings: dict[int, list[Problem]]  # by Excel row number
    changed: dict[int, dict[str, list[str]]]  # by Excel row number: field -> [column, read, sent]

    @classmethod
    def of(cls, table: SourceTable, mapped: MappedTable, mask: Iterable[str], html_rows: int,
           offset: int = 0, *, spill: bool = False) -> ChunkKeep:
        """The keep of a chunk starting at row ``offset`` of the file, whose first ``html_rows`` rows
        report.html lists; with ``spill`` its cells wait in a temporary file, not in memory."""
        numbers = mapped.row_numbers
        warnings = {numbers[pos]: found for pos, found in mapped.warnings.items()}
        changed: dict[int, dict[str, list[str]]] = {}
        if offset < html_rows:
            mask = tuple(mask)
            for pos, cells in enumerate(changed_cells(mapped.read, mapped.frame, mapped.field_sources,
                                                      html_rows - offset)):
                kept = {name: cell for name, cell in cells.items() if not is_masked(mask, name, cell[0])}
                if kept:
                    changed[numbers[pos]] = kept
        return cls(SpilledCells(table) if spill else table, warnings, changed)

    def attach(self, rows: list[RowOutcome], *, cells: bool = True) -> None:
        """Give each of ``rows`` (this chunk's, in source order) its warnings, its changed values and, when
        it needs attention and ``cells``, its original cells."""
        needing = [o for o in rows if o.outcome.needs_attention] if cells else []
        if needing:
            position = {row: pos for pos, row in enumerate(self.table.row_numbers)}
            headers, values = _cells_at(self.table, [position[o.row] for o in needing])
            for o, row in zip(needing, values):
                o.source = dict(zip(headers, row))
        for o in rows:
            warnings = self.warnings.get(o.row)
            if warnings:
                o.problems = (*o.problems, *warnings)
            changed = self.changed.get(o.row)
            if changed:
                o.changed_values = changed


def _cells_at(table: SourceTable | SpilledCells, positions: list[int]) -> tuple[list[str], list[tuple[str, ...]]]:
    """The headers, and the cells of the rows at ``positions``."""
    if isinstance(table, SpilledCells):
        return table.headers, table.rows_at(positions)
    headers = list(table.frame.columns)
    # Column by column: a frame row lookup per row costs ~0.2 ms, 20 s for 100,000 rows needing attention.
    columns = [table.frame[h].iloc[positions].tolist() for h in headers]
    return headers, list(zip(*columns))


class SpilledCells:
    """A chunk's cells as read, in a temporary Arrow file until the rows needing attention are known: a staff
    import keeps every chunk's cells to the end, for the rows the service refuses (~700 bytes a row in
    memory: 70 MB of 100,000). The file has no name from the start (closed when this is dropped): every cell
    of the export is in these files, and a process killed outright (SIGKILL, the OOM killer) mid-import must
    not leave a copy of them in the temporary folder."""

    def __init__(self, table: SourceTable) -> None:
        import pyarrow as pa

        self.headers = [str(h) for h in table.frame.columns]
        self.row_numbers = table.row_numbers
        self._file = anonymous_file(self)  # closed with this object
        cells = pa.table({h: pa.array(table.frame[h].tolist(), type=pa.string()) for h in self.headers})
        with pa.ipc.new_file(self._file, cells.schema) as writer:
            writer.write_table(cells)

    def rows_at(self, positions: list[int]) -> list[tuple[str, ...]]:
        import pyarrow as pa

        self._file.seek(0)
        # the bytes are read here and handed over as a buffer: given the Python file itself, pyarrow reads it
        # on its IO threads (RandomAccessFile::ReadAsync), and the thread that lets go of the last such read
        # takes the GIL to free it; at the end of a run, as the interpreter was finalising, that thread was made
        # to exit inside C++ and the process aborted ("terminate called without an active exception", exit
        # 134 after the run's output), about one `timeoff validate` in 35 of a workbook with rows to fix
        taken = pa.ipc.open_file(pa.BufferReader(self._file.read())).read_all().take(positions)
        columns = [taken.column(h).to_pylist() for h in self.headers]
        return list(zip(*columns))


def close_run(
    kind: Literal["staff", "timeoff"],
    config: ImportConfig,
    target: Target,
    source: SourceInfo,
    rows: OutcomeRows,
    *,
    notes: list[str],
    ignored_columns: list[str],
    values_read: list[ValueChange],
    started: datetime,
    t0: float,
    timings: dict[str, float],
    dry_run: bool,
    rows_read: int,
) -> RunResult:
    """The ``RunResult`` of a run whose every row has its outcome (``rows``, in source order): its facts,
    why it stopped sending if it did, and a check that no row was lost or counted twice."""
    lost = target.client.lost if target.client is not None else None
    halted = target.client.halted if target.client is not None else None
    run_notes = list(notes)
    unsent = rows.outcome_counts()[Outcome.NOT_SENT]
    if halted is not None:
        run_notes.append(f"The run was stopped ({halted}): the requests in flight finished, {unsent:,} row(s) were "
                         "not sent. Run the import again to send them: nothing is sent twice.")
    elif lost is not None:
        run_notes.append(f"The service became unreachable during the run ({lost}); the run stopped sending, "
                         f"{unsent:,} row(s) were not sent. Run the import again once the service is reachable: "
                         "nothing is sent twice.")
    info = RunInfo(
        kind=kind,
        job=config.report.job,
        source=source,
        service_url=target.service_url,
        customer_id=target.customer_id,
        started_at=started.isoformat(timespec="seconds"),
        finished_at=datetime.now().astimezone().isoformat(timespec="seconds"),
        duration_s=round(time.perf_counter() - t0, 3),
        dry_run=dry_run,
        tool_version=__version__,
        timings={k: round(v, 3) for k, v in timings.items()},
        ignored_columns=ignored_columns,
        mask_fields=list(config.report.mask),
        html_row_limit=config.report.html_row_limit,
        html_problem_limit=config.report.html_problem_limit,
        notes=run_notes,
        service_lost=str(lost) if lost is not None else "",
        interrupted=halted or "",
        values_read=without_masked(values_read, config.report.mask),
    )
    result = RunResult(info, rows)
    result.check_accounted(rows_read)
    return result
