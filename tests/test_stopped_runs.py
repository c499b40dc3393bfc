"""A run killed after rows were sent and before its report: the next run's report tells what it did.

The story: the monthly import is killed (a reboot, the OOM killer) after some batches were sent. That run has
no report, only its journal; the state folder remembers what it sent, so the next run of the same file would
read those rows ``unchanged`` (or ``updated``, sending every row), and the new hires it added would be added in
no report. Here the next report lists them as added, naming the stopped run, and a third run says nothing of it.

Real processes killed with SIGKILL while the sandbox holds a batch (a rule: 503 after 20 s, nothing stored), real
HTTP to the sandbox on 127.0.0.1, real report folders.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from hrimport.outcomes import read_outcomes
from tests.child_process import reaped
from tests.staff_files import person, write_config, write_csv
from tests.test_run_job import JobFolder, hrimport, run_cli

pytestmark = pytest.mark.usefixtures("instant_retries")

HELD = 10.0  # seconds the sandbox holds the batch the run is killed in (then 503: nothing stored)


def hold_batch_after(sandbox: Any, batches: int) -> None:
    """The sandbox answers ``batches`` bulk requests, then holds the next one (and stores nothing of it)."""
    sandbox.set_faults(rules=[{"path": "/api/bulk_add_edit_staff", "skip": batches, "count": 1, "status": 503,
                               "delay": HELD}])


def journal_rows(folder: Path) -> int:
    journals = list(folder.rglob("outcomes.jsonl"))
    return sum(path.read_bytes().count(b'{"record": "row"') for path in journals)


def killed_after(sandbox: Any, command: list[str], reports: Path, rows: int) -> Path:
    """Run ``hrimport COMMAND`` as a real process, SIGKILL it once its journal holds ``rows`` rows (the batches
    answered before the held one); the folder it left."""
    before = set(reports.rglob("outcomes.jsonl")) if reports.exists() else set()
    with reaped(hrimport(*command)) as process:
        deadline = time.monotonic() + HELD - 2
        while journal_rows(reports) - sum(p.read_bytes().count(b'{"record": "row"') for p in before) < rows:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the run did not reach the held batch"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=10)
        assert process.returncode == -signal.SIGKILL
    deadline = time.monotonic() + HELD + 10
    while not any(r["status"] == 503 for r in sandbox.requests()):  # the held batch answered (to nobody)
        assert time.monotonic() < deadline
        time.sleep(0.05)
    [journal] = set(reports.rglob("outcomes.jsonl")) - before
    assert not (journal.parent / "summary.json").exists()
    return journal


def outcomes_of(folder: Path) -> dict[str, tuple[str, str]]:
    """Each row's external id -> (outcome, message), as the report folder's outcomes.jsonl holds them."""
    return {o.external_id: (o.outcome.value, o.message) for o in read_outcomes(folder / "outcomes.jsonl").rows}


def counted(summary: dict[str, Any]) -> dict[str, int]:
    return {outcome: n for outcome, n in summary["counts"].items() if n}


def newest_summary(reports: Path) -> tuple[Path, dict[str, Any]]:
    path = max(reports.rglob("summary.json"), key=lambda p: p.stat().st_mtime_ns)
    return path.parent, json.loads(path.read_text(encoding="utf-8"))


def shown_at(journal: Path) -> str:
    """When the stopped run began, to the minute, as its journal's first line says."""
    from datetime import datetime

    first = json.loads(journal.read_text(encoding="utf-8").splitlines()[0])
    return datetime.fromisoformat(first["started_at"]).astimezone().strftime("%Y-%m-%d %H:%M")


def test_a_staff_import_killed_half_way_has_its_new_hires_told_as_added_by_the_next_import(
        tmp_path: Path, sandbox: Any) -> None:
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    reports = tmp_path / "reports"
    october = write_csv(tmp_path / "staff_2026-10.csv", [person(n) for n in range(1, 9)])
    assert run_cli("staff", "import", str(config), str(october), "--report-dir", str(reports)).exit_code == 0
    # November: two new hires at the top, person 1 changed, one more new hire at the bottom
    november = write_csv(tmp_path / "staff_2026-11.csv", [person(101), person(102), person(1, Title="Director"),
                                                          *[person(n) for n in range(2, 9)], person(103)])
    command = ["staff", "import", str(config), str(november), "--report-dir", str(reports), "--batch-size", "2"]
    hold_batch_after(sandbox, 2)
    time.sleep(1.1)  # a run folder of its own second

    journal = killed_after(sandbox, command, reports, 4)  # two batches answered: 101, 102, 1 and 2

    sandbox.clear_faults()
    assert {s["customer_system_id"] for s in sandbox.staff(99)} >= {"000101", "000102"}
    time.sleep(1.1)
    rerun = run_cli(*command)
    assert rerun.exit_code == 0, rerun.output
    folder, summary = newest_summary(reports)
    told = f"by the run of {shown_at(journal)}, which stopped before its report (its journal: {journal})."
    assert outcomes_of(folder) == {
        "000101": ("added", f"Added {told}"),
        "000102": ("added", f"Added {told}"),
        "000001": ("updated", f"Updated {told}"),
        "000002": ("updated", f"Updated {told}"),  # sent again by the stopped run, which imports every row
        **{f"{n:06d}": ("updated", "Update Successfully") for n in range(3, 9)},
        "000103": ("added", "Add Successfully"),
    }
    assert counted(summary) == {"added": 3, "updated": 8}
    first = json.loads(journal.read_text(encoding="utf-8").splitlines()[0])
    assert summary["stopped_runs"] == [{"started_at": first["started_at"], "journal": str(journal), "rows": 4,
                                        "added": 2, "updated": 2}]
    assert summary["verdict"] == (f"11 of 11 rows imported; 2 added and 2 updated by the run of "
                                  f"{shown_at(journal)}, which stopped before its report")
    assert any(note.startswith(f"4 rows were sent by the run of {shown_at(journal)} that stopped before its report "
                               f"(2 added, 2 updated; its journal: {journal})") for note in summary["notes"])

    time.sleep(1.1)
    third = run_cli(*command)  # that run is older than the last reported run now: told once only
    assert third.exit_code == 0, third.output
    folder, summary = newest_summary(reports)
    assert summary["stopped_runs"] == []
    assert {outcome for outcome, _ in outcomes_of(folder).values()} == {"updated"}
    assert "stopped" not in summary["verdict"]


def test_a_monthly_run_killed_half_way_has_its_new_hires_told_as_added_by_the_next_run(
        tmp_path: Path, sandbox: Any) -> None:
    job = JobFolder(tmp_path / "job", sandbox, batch_size=2)
    job.export("2026-10", [person(n, **{"Employee ID": job.ext(n)}) for n in range(1, 9)])
    assert run_cli("run", str(job.job)).exit_code == 0
    rows = [person(n, **{"Employee ID": job.ext(n)}) for n in (101, 102)]
    rows += [person(1, **{"Employee ID": job.ext(1), "Title": "Director"})]
    rows += [person(n, **{"Employee ID": job.ext(n)}) for n in range(2, 9)]
    rows += [person(103, **{"Employee ID": job.ext(103)})]
    job.export("2026-11", rows)
    reports = job.root / "reports"
    hold_batch_after(sandbox, 1)
    time.sleep(1.1)

    # the cron run sends only what changed: 101 and 102 in the first batch, answered; 1 and 103 held, then killed
    journal = killed_after(sandbox, ["run", str(job.job)], reports, 2)

    sandbox.clear_faults()
    time.sleep(1.1)
    rerun = run_cli("run", str(job.job))
    assert rerun.exit_code == 0, rerun.output
    folder, summary = newest_summary(reports)
    told = f"by the run of {shown_at(journal)}, which stopped before its report (its journal: {journal})."
    unchanged = "Same as the last import the service accepted; not sent again."
    assert outcomes_of(folder) == {
        job.ext(101): ("added", f"Added {told}"),
        job.ext(102): ("added", f"Added {told}"),
        job.ext(1): ("updated", "Update Successfully"),
        **{job.ext(n): ("unchanged", unchanged) for n in range(2, 9)},
        job.ext(103): ("added", "Add Successfully"),
    }
    assert counted(summary) == {"added": 3, "updated": 1, "unchanged": 7}
    assert [run["rows"] for run in summary["stopped_runs"]] == [2]
    run_json = json.loads((folder.parent / "run.json").read_text(encoding="utf-8"))
    assert run_json["verdict"] == (f"everything imported; 2 rows added by the run of {shown_at(journal)}, which "
                                   "stopped before its report (see the report)")

    time.sleep(1.1)
    third = run_cli("run", str(job.job), "--full")  # the same file again: nothing of the stopped run is told
    assert third.exit_code == 0, third.output
    _, summary = newest_summary(reports)
    assert summary["stopped_runs"] == []


def test_a_dry_run_after_a_killed_import_says_how_many_rows_it_sent(tmp_path: Path, sandbox: Any) -> None:
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    reports = tmp_path / "reports"
    october = write_csv(tmp_path / "staff_2026-10.csv", [person(n) for n in range(1, 5)])
    assert run_cli("staff", "import", str(config), str(october), "--report-dir", str(reports)).exit_code == 0
    november = write_csv(tmp_path / "staff_2026-11.csv", [person(101), person(102), *[person(n) for n in range(1, 5)]])
    command = ["staff", "import", str(config), str(november), "--report-dir", str(reports), "--batch-size", "2"]
    hold_batch_after(sandbox, 1)
    time.sleep(1.1)
    journal = killed_after(sandbox, command, reports, 2)
    sandbox.clear_faults()
    time.sleep(1.1)

    plan = run_cli("staff", "plan", str(config), str(november), "--report-dir", str(reports))

    assert plan.exit_code == 0, plan.output
    assert (f"Note: 2 rows were sent by the run of {shown_at(journal)} that stopped before its report (2 added, 0 "
            f"updated; its journal: {journal}): the plan finds them unchanged") in plan.output
    time.sleep(1.1)
    rerun = run_cli(*command)  # a dry run's report does not count: the import still tells them
    _, summary = newest_summary(reports)
    assert rerun.exit_code == 0 and [run["added"] for run in summary["stopped_runs"]] == [2]


def test_a_run_still_sending_is_not_told_as_stopped(tmp_path: Path) -> None:
    from hrimport.imports.stopped_runs import stopped_runs
    from hrimport.outcomes import OutcomeJournal

    job_folder = tmp_path / "reports" / "test-staff"
    sending, stopped, current = (job_folder / name for name in ("2026-11-25_090000", "2026-11-25_091500",
                                                                 "2026-11-25_093000"))
    for folder in (sending, stopped, current):
        folder.mkdir(parents=True)
    running = OutcomeJournal(sending / "outcomes.jsonl", kind="staff", job="test-staff", source=Path("staff.csv"),
                             started_at="2026-11-25T09:00:00+00:00")  # open: its run is still sending
    OutcomeJournal(stopped / "outcomes.jsonl", kind="staff", job="test-staff", source=Path("staff.csv"),
                   started_at="2026-11-25T09:15:00+00:00").close()  # killed: its file closed by the kernel
    try:
        assert [run.journal.parent.name for run in stopped_runs(job_folder, "staff", current)] == [stopped.name]
        assert stopped_runs(job_folder, "timeoff", current) == []
    finally:
        running.close()
    assert len(stopped_runs(job_folder, "staff", current)) == 2
