"""A report rendered again over an earlier one and killed half way leaves the earlier files whole.

HR renders last month's run into a folder of theirs (``hrimport report RUN --output FOLDER``). Each test kills
that render with a real SIGKILL in a child process while it writes one file (report.html, summary.json,
outcomes.jsonl, to_fix.csv), at a moment chosen by wrapping the function that hands the file its text: the earlier file
is still there byte for byte, beside a ``<name>.partial`` named for what it holds, and the next render
removes that ``.partial`` and writes the file whole.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import xlsxwriter

import hrimport.jobs.run as job_runs
from hrimport.config import load_config
from hrimport.imports import import_file
from hrimport.init import init_config
from hrimport.outcomes import read_outcomes
from hrimport.private_files import written_whole
from hrimport.report.scratch import partial_workbook
from tests.staff_files import person, write_config, write_csv
from tests.test_no_copy_left import killed_in
from tests.test_report_no_copy_left import rendered_in_a_shared_folder
from tests.test_run_job import JobFolder, run_cli
from tests.test_staff_import import hrimport

#: ``hrimport report OUTCOMES --output FOLDER`` (argv 1, 2), killed while writing report.html: once the page's
#: parts handed to the file pass 16,000 characters (its writer's buffer has gone to the disk at least once).
KILLED_WRITING_THE_PAGE = """
import os, signal, sys
import hrimport.report.html as html

page_parts = html.page_parts

def parts(*args, **options):
    written = 0
    for part in page_parts(*args, **options):
        yield part
        written += len(part)
        if written > 16_000:
            os.kill(os.getpid(), signal.SIGKILL)

html.page_parts = parts
from hrimport.cli import main
main(["report", sys.argv[1], "--output", sys.argv[2]])
"""

def killed_at_call(module: str, function: str, calls: int) -> str:
    """The same render, killed at the ``calls``-th call of ``module.function`` (a function handing one file its
    text), before that call returns."""
    return f"""
import os, signal, sys
import {module} as target

wrapped = target.{function}
calls = 0

def {function}(*args, **options):
    global calls
    calls += 1
    if calls >= {calls}:
        os.kill(os.getpid(), signal.SIGKILL)
    return wrapped(*args, **options)

target.{function} = {function}
from hrimport.cli import main
main(["report", sys.argv[1], "--output", sys.argv[2]])
"""


#: Killed once summary.json is open, while its text is made.
KILLED_WRITING_THE_SUMMARY = killed_at_call("hrimport.report.summary", "summary_json", 1)
#: Killed while outcomes.jsonl is written: at its 21st row's line.
KILLED_WRITING_THE_OUTCOMES = killed_at_call("hrimport.outcomes", "row_line", 21)
#: Killed while to_fix.csv is written: at the 31st cell made safe for it.
KILLED_WRITING_TO_FIX = killed_at_call("hrimport.report.fix_file", "csv_safe", 31)

EVERY_FILE = ["notes.txt", "outcomes.jsonl", "report.html", "report.xlsx", "summary.json", "to_fix.csv",
              "to_fix.xlsx"]


@pytest.mark.parametrize(("name", "script"), [
    ("report.html", KILLED_WRITING_THE_PAGE),
    ("summary.json", KILLED_WRITING_THE_SUMMARY),
    ("outcomes.jsonl", KILLED_WRITING_THE_OUTCOMES),
    ("to_fix.csv", KILLED_WRITING_TO_FIX),
])
def test_a_render_over_an_earlier_report_killed_while_writing_a_file_leaves_the_earlier_file_whole(
        tmp_path: Path, name: str, script: str) -> None:
    # rows 5 and 6 to fix: their addresses are refused
    rows = [person(n, Email=f"person{n}-at-acme") if n in (5, 6) else person(n) for n in range(1, 41)]
    code, outcomes, shared = rendered_in_a_shared_folder(tmp_path, rows, email_check="strict")
    assert code == 1
    before = (shared / name).read_bytes()
    assert len(before) > 16_000 or name != "report.html"  # the page is long enough to be killed half way

    assert killed_in(tmp_path, script, outcomes, shared) == []

    # the file that was there, whole; what was being written beside it, named for what it is, private
    assert (shared / name).read_bytes() == before
    assert sorted(p.name for p in shared.iterdir()) == sorted([*EVERY_FILE, f"{name}.partial"])
    partial = shared / f"{name}.partial"
    assert partial.stat().st_mode & 0o777 == 0o600
    assert partial.read_bytes() != before

    again = hrimport("report", str(outcomes), "--output", str(shared))

    assert again.exit_code == 0, again.output
    assert sorted(p.name for p in shared.iterdir()) == EVERY_FILE  # the .partial removed
    assert {(shared / n).stat().st_mode & 0o777 for n in EVERY_FILE if n != "notes.txt"} == {0o600}
    # whole: every row of the export is in the outcomes and the summary, and the page ends
    assert len(read_outcomes(shared / "outcomes.jsonl").rows) == 40
    assert json.loads((shared / "summary.json").read_text())["rows_read"] == 40
    assert (shared / "report.html").read_text().rstrip().endswith("</html>")
    assert [line.split(",")[0] for line in (shared / "to_fix.csv").read_text("utf-8-sig").splitlines()[1:]] == [
        "000005", "000006"]  # the two rows to fix, whole


def test_a_partial_outcomes_file_is_refused_as_a_run_with_one_line(tmp_path: Path) -> None:
    source = write_csv(tmp_path / "staff.csv", [person(n) for n in range(1, 41)])
    run = import_file(load_config(write_config(tmp_path / "staff.toml")), source, dry_run=True,
                      report_folder=tmp_path / "run")
    outcomes = tmp_path / "run" / "outcomes.jsonl"
    cut = outcomes.with_name("outcomes.jsonl.partial")  # what a render killed half way leaves: 20 rows of 40
    cut.write_text("".join(outcomes.read_text().splitlines(keepends=True)[:21]))
    assert run.exit_code == 0

    refused = hrimport("report", str(cut), "--output", str(tmp_path / "shared"))

    assert refused.exit_code == 2
    assert refused.output.strip().splitlines() == [
        (f"Error: {cut} is a file a killed write left half written, not a run's outcomes: give outcomes.jsonl "
         "beside it")]
    assert not (tmp_path / "shared").exists()


class FolderSyncs:
    """A spy on ``os.fsync`` (a power cut cannot be caused in a test; what survives one is what was synced): for
    each folder synced, the names it held at that moment. A rename is in its folder, not in the file: a name
    listed at a sync of its folder is there after a power cut, and one renamed in after the last sync may not
    be (the old file, or none, comes back)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.listed: list[tuple[int, set[str]]] = []  # (the folder's inode, its names) at each sync of a folder
        real = os.fsync

        def fsync(fd: int) -> None:
            real(fd)
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                self.listed.append((os.fstat(fd).st_ino, set(os.listdir(fd))))

        monkeypatch.setattr(os, "fsync", fsync)

    def synced(self, folder: Path) -> set[str]:
        """The names ``folder`` held at one of its syncs or another."""
        return {name for ino, names in self.listed if ino == folder.stat().st_ino for name in names}


def test_every_file_renamed_into_place_is_followed_by_a_sync_of_its_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    syncs = FolderSyncs(monkeypatch)
    rows = [person(n, Email="person5-at-acme") if n == 5 else person(n) for n in range(1, 11)]
    source = write_csv(tmp_path / "staff.csv", rows)

    run = import_file(load_config(write_config(tmp_path / "staff.toml", email_check="strict")), source,
                      dry_run=True, report_folder=tmp_path / "run")

    assert run.exit_code == 1  # row 5 to fix: to_fix.csv and to_fix.xlsx are written too
    written = {p.name for p in (tmp_path / "run").iterdir()}
    assert written == {"outcomes.jsonl", "payloads.jsonl", "report.html", "report.xlsx", "summary.json", "to_fix.csv",
                       "to_fix.xlsx"}
    assert syncs.synced(tmp_path / "run") >= written


def test_each_way_of_renaming_a_file_into_place_syncs_its_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # each writer alone in its folder: the sync seen is its own
    syncs = FolderSyncs(monkeypatch)
    for name in ("text", "bytes", "workbook"):
        (tmp_path / name).mkdir()
    source = write_csv(tmp_path / "staff.csv", [person(n) for n in range(1, 4)])

    with written_whole(tmp_path / "text" / "run.json") as fh:
        fh.write("{}")
    with written_whole(tmp_path / "bytes" / "answer.pickle", "wb") as out:  # fix_process's answer
        out.write(b"\x80\x05N.")
    with partial_workbook(tmp_path / "workbook" / "report.xlsx") as writing:
        xlsxwriter.Workbook(str(writing)).close()
    init_config(source, output=tmp_path / "config" / "staff.toml")

    assert "run.json" in syncs.synced(tmp_path / "text")
    assert "answer.pickle" in syncs.synced(tmp_path / "bytes")
    assert (tmp_path / "bytes" / "answer.pickle").read_bytes() == b"\x80\x05N."
    assert "report.xlsx" in syncs.synced(tmp_path / "workbook")
    assert "staff.toml" in syncs.synced(tmp_path / "config")


def test_every_folder_a_run_writes_in_is_synced_into_its_parent_before_a_row_is_answered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: Any) -> None:
    # a power cut after the first batch must not take away the folder holding the run's journal (outcomes.jsonl,
    # what the service did with each row sent) or the state folder: each folder is named in its parent at a sync
    # of that parent by the time the service answers the first row, as a file renamed into place is
    syncs = FolderSyncs(monkeypatch)
    job = JobFolder(tmp_path / "job", sandbox)
    job.export("2024-05", job.people(3))
    reports = job.root / "reports"
    on_disk_at_first_answer: list[set[str]] = []

    def step_import(*args: Any, progress: Any, **options: Any) -> Any:
        def answered(done: int, total: int) -> None:
            if not on_disk_at_first_answer:
                [run] = job.runs()
                on_disk_at_first_answer.append({f"{where.name}/{name}" for where in (job.root, reports,
                                                                                     reports / "monthly", run)
                                                for name in syncs.synced(where)})
            progress(done, total)
        return import_file(*args, progress=answered, **options)

    monkeypatch.setattr(job_runs, "import_file", step_import)

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    [run] = job.runs()
    [synced] = on_disk_at_first_answer
    assert {"job/reports", "job/state", "reports/monthly", f"monthly/{run.name}", f"{run.name}/staff"} <= synced
