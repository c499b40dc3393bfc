"""A big leave history is read and checked in chunks, its valid rows kept compactly (issue 17): HR must not be
able to tell.

The same file imported as one chunk and as chunks of 7 rows, each into a fresh sandbox of its own, gives
the same outcome on every row, in the same words, and the same report files: a dry run, the first import
and the run again that finds everything in the ledger. What only the whole file shows is still found: two
rows of one person far apart (in different chunks) that overlap.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hrimport.config import load_config
from hrimport.imports import import_file
from tests.test_chunks import CLOCK, workbook_cells
from tests.test_timeoff_import import HEADER, TOKEN, add_staff, write_config

pytestmark = pytest.mark.usefixtures("instant_retries")

PEOPLE = [("000101", "MY"), ("000106", "SG"), ("000110", "SG")]


def leave_rows() -> list[list[str]]:
    """40 rows of three people, each a weekday a week apart, and what a real history holds spread over the
    file: two rows of one person 30 rows apart that overlap, an unknown leave type, a bad half-day marker,
    half days, an end before the start, a figure the service counts otherwise, a person the service does
    not know, and a sick leave on a public holiday (12 February 2024 in Malaysia)."""
    def day(n: int, later: int = 0) -> str:
        return (dt.date(2024, 1, 1) + dt.timedelta(days=7 * (n // 3) + n % 3 + later)).strftime("%d/%m/%Y")

    rows = []
    for n in range(40):
        person, country = PEOPLE[n % 3]
        rows.append([person, ["Annual Leave", "AL", "病假", "年休"][n % 4], day(n), day(n), "", "", country,
                     "trip" if n % 2 else "", "Approved" if n % 3 else "Pending"])
    rows[2][3] = day(2, later=2)
    rows[32][0], rows[32][2:4] = rows[2][0], [day(2, later=1)] * 2  # overlaps row 2, 30 rows later
    rows[5][1] = "Holidayz"
    rows[8][4] = "maybe"
    rows[11][4] = "AM"
    rows[14][3:5] = [day(14, later=1), "PM"]
    rows[17][2] = day(17, later=2)  # ends before it starts
    rows[20][5] = "9"  # the service counts 1
    rows[23][5] = "1"
    rows[26][0] = "999999"
    return rows


def run_steps(tmp_path: Path, start_sandbox: Callable[..., Any], chunk_rows: int | None, name: str,
              source: Path) -> tuple[Any, dict[str, Path]]:
    """Dry run, import, and import again of ``source`` into a fresh sandbox; the sandbox and each step's
    report folder."""
    folder = tmp_path / name
    folder.mkdir()
    sandbox = start_sandbox(folder / "sandbox.db")
    add_staff(sandbox, PEOPLE)
    config = load_config(write_config(folder))
    reports = {}
    for step, dry_run in (("dry", True), ("first", False), ("again", False)):
        reports[step] = folder / step
        import_file(config, source, dry_run=dry_run, base_url=sandbox.base_url, concurrency=1,
                    report_folder=reports[step], chunk_rows=chunk_rows)
        # the two sandboxes answer on two ports: the one thing that differs
        for path in reports[step].iterdir():
            if path.suffix in (".jsonl", ".json", ".csv", ".html"):
                path.write_text(path.read_text(encoding="utf-8").replace(sandbox.base_url, "BASE"), encoding="utf-8")
    return sandbox, reports


#: When a record was imported, as the ledger says it (``Already imported on ...``): a clock.
MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d")


def unclocked(cells: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [tuple(MOMENT.sub("WHEN", v) if isinstance(v, str) else v for v in row) for row in cells]


def records(folder: Path, name: str = "outcomes.jsonl") -> list[dict[str, Any]]:
    found = [json.loads(line) for line in (folder / name).read_text(encoding="utf-8").splitlines()]
    for record in found:
        for key in CLOCK:
            record.pop(key, None)
        if isinstance(record.get("message"), str):
            record["message"] = MOMENT.sub("WHEN", record["message"])
    return found


def test_a_leave_history_in_chunks_reports_exactly_what_one_chunk_reports(
        tmp_path: Path, start_sandbox: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HRIMPORT_TOKEN", TOKEN)
    source = tmp_path / "leave.csv"
    with open(source, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([HEADER, *leave_rows()])
    whole_sandbox, whole = run_steps(tmp_path, start_sandbox, None, "whole", source)
    chunked_sandbox, chunked = run_steps(tmp_path, start_sandbox, 7, "chunked", source)

    # the platform got the same requests, byte for byte, and holds the same records
    assert chunked_sandbox.bodies == whole_sandbox.bodies
    assert stored_time_off(chunked_sandbox) == stored_time_off(whole_sandbox)
    assert len(stored_time_off(chunked_sandbox)) == 34

    for step in ("dry", "first", "again"):
        assert records(chunked[step]) == records(whole[step]), step
        summaries = [json.loads((run[step] / "summary.json").read_text(encoding="utf-8")) for run in (whole, chunked)]
        for data in summaries:
            for key in (*CLOCK, "service_host"):  # and the port of each sandbox
                data.pop(key, None)
        assert summaries[1] == summaries[0], step
        assert (chunked[step] / "to_fix.csv").read_bytes() == (whole[step] / "to_fix.csv").read_bytes(), step
        book, whole_book = workbook_cells(chunked[step] / "report.xlsx"), workbook_cells(whole[step] / "report.xlsx")
        for sheet in ("Rows", "Problems", "Values"):
            assert unclocked(book[sheet]) == unclocked(whole_book[sheet]), (step, sheet)

    rows = {r["row"]: r for r in records(chunked["first"]) if r["record"] == "row"}
    assert [p["code"] for p in rows[4]["problems"]] == [p["code"] for p in rows[34]["problems"]] == ["overlaps-in-file"]
    assert "overlaps row 34 (2024-01-04..2024-01-04)" in rows[4]["message"]
    assert rows[7]["problems"][0]["code"] == "unknown-leave-type"
    assert rows[10]["problems"][0]["code"] == "not-a-half-day-marker"
    assert rows[13]["details"]["half_days"] == "half day"
    assert rows[16]["details"]["half_days"] == "start"
    assert rows[22]["outcome"] == "added" and rows[22]["problems"][0]["code"] == "total-days-differs"
    assert rows[28]["outcome"] == "rejected"
    # sick leave on the Chinese New Year holiday in Malaysia: no working day, sent with the service's 0 and a warning
    assert rows[20]["outcome"] == "added" and rows[20]["problems"][0]["code"] == "no-leave-days"
    assert rows[20]["details"]["total_days"] == "0"
    again = {r["row"]: r["outcome"] for r in records(chunked["again"]) if r["record"] == "row"}
    added = [row for row, r in rows.items() if r["outcome"] == "added"]
    assert len(added) == 34 and all(again[row] == "already_imported" for row in added)


def stored_time_off(sandbox: Any) -> list[dict[str, Any]]:
    """The time-off records the sandbox stores, without the clock (when each was stored)."""
    return [{k: v for k, v in record.items() if k not in ("created_at", "updated_at")} for record in sandbox.time_off()]
