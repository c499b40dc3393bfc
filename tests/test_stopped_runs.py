"""A run killed after rows were sent and before its report: the next run's report tells what it did.

The story: the monthly import is killed (a reboot, the OOM killer) after some batches were sent. That run has
no report, only its journal; the state folder remembers what it sent, so the next run of the same file would
read those rows ``unchanged`` (or ``updated``, sending every row), and the new hires it added would be added in
no report. Here the next report lists them as added, naming the stopped run, and a third run says nothing of it.
A time-off import killed so: the ledger holds the leave it sent, which the next run would read
``already_imported`` and no report would count as added this month; here it is told as added in the same way.

Real processes killed with SIGKILL while the sandbox holds a batch (a rule: 503 after 20 s, nothing stored), real
HTTP to the sandbox on 127.0.0.1, real report folders.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from hrimport.outcomes import read_outcomes
from hrimport.state.ledger import open_ledger
from tests.child_process import reaped
from tests.staff_files import person, write_config, write_csv
from tests.test_run_job import LEAVE_CONFIG, LEAVE_HEADER, TIME_OFF, JobFolder, hrimport, run_cli
from tests.test_timeoff_import import add_staff

pytestmark = pytest.mark.usefixtures("instant_retries")

HELD = 10.0  # seconds the sandbox holds the batch the run is killed in (then 503: nothing stored)


def hold_batch_after(sandbox: Any, batches: int, path: str = "/api/bulk_add_edit_staff") -> None:
    """The sandbox answers ``batches`` requests to ``path`` (bulk staff; a time-off record each), then holds the
    next one (and stores nothing of it)."""
    sandbox.set_faults(rules=[{"path": path, "skip": batches, "count": 1, "status": 503, "delay": HELD}])


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
        # the run sends the held batch once it has written the answer before it: killed only once that batch is
        # surely with the sandbox (held for HELD seconds), else it would never be sent and the hold would wait for
        # the next run's (a race a loaded machine lost, one run in many)
        time.sleep(1.5)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=10)
        assert process.returncode == -signal.SIGKILL
    deadline = time.monotonic() + HELD + 10
    while not any(r["status"] == 503 for r in sandbox.requests()):  # the held request answered (to nobody)
        assert time.monotonic() < deadline
        time.sleep(0.05)
    [journal] = set(reports.rglob("outcomes.jsonl")) - before
    assert not (journal.parent / "summary.json").exists()
    return journal


def told_once_only(command: list[str], reports: Path, outcome: str) -> None:
    """Run ``hrimport COMMAND`` a third time: the stopped run is older than the last reported run now, so nothing
    of it is told, and every row reads ``outcome``."""
    time.sleep(1.1)
    third = run_cli(*command)
    assert third.exit_code == 0, third.output
    folder, summary = newest_summary(reports)
    assert summary["stopped_runs"] == []
    assert {found for found, _ in outcomes_of(folder).values()} == {outcome}
    assert "stopped" not in summary["verdict"]


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
                                        "added": 2, "updated": 2, "repeats": 0}]
    assert summary["verdict"] == (f"11 of 11 rows imported; 2 added and 2 updated by the run of "
                                  f"{shown_at(journal)}, which stopped before its report")
    assert any(note.startswith(f"4 rows were sent by the run of {shown_at(journal)} that stopped before its report "
                               f"(2 added, 2 updated; its journal: {journal})") for note in summary["notes"])

    told_once_only(command, reports, "updated")


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


def test_a_trial_on_a_sandbox_killed_half_way_is_never_told_by_an_import_to_production(
        tmp_path: Path, sandbox: Any, start_sandbox: Any) -> None:
    # the state folder keeps what each service accepted apart: a trial on a sandbox never makes production skip a
    # row; nor may its journal tell production's rows as its own, nor a production report end what it tells
    production = start_sandbox(tmp_path / "production.db")  # stands in for production: another base URL
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    reports = tmp_path / "reports"
    november = write_csv(tmp_path / "staff_2026-11.csv", [person(n) for n in range(201, 207)])
    trial = ["staff", "import", str(config), str(november), "--report-dir", str(reports), "--batch-size", "2"]
    to_production = [*trial, "--base-url", production.base_url]
    hold_batch_after(sandbox, 1)
    trial_journal = killed_after(sandbox, trial, reports, 2)  # 201 and 202 added on the sandbox
    sandbox.clear_faults()
    hold_batch_after(production, 1)
    time.sleep(1.1)
    production_journal = killed_after(production, to_production, reports, 2)  # and on production
    production.clear_faults()
    first_lines = [json.loads(j.read_text(encoding="utf-8").splitlines()[0]) for j in (trial_journal,
                                                                                        production_journal)]
    assert [(line["service"], line["customer_id"]) for line in first_lines] == [
        (sandbox.base_url, "99"), (production.base_url, "99")]

    time.sleep(1.1)
    again = run_cli(*to_production)

    assert again.exit_code == 0, again.output
    folder, summary = newest_summary(reports)
    told = f"by the run of {shown_at(production_journal)}, which stopped before its report (its journal: "
    assert outcomes_of(folder) == {
        "000201": ("added", f"Added {told}{production_journal})."),
        "000202": ("added", f"Added {told}{production_journal})."),
        **{f"{n:06d}": ("added", "Add Successfully") for n in range(203, 207)},
    }
    assert [run["journal"] for run in summary["stopped_runs"]] == [str(production_journal)]

    time.sleep(1.1)
    on_the_sandbox = run_cli(*trial)  # production's report does not end what the sandbox's next import tells

    assert on_the_sandbox.exit_code == 0, on_the_sandbox.output
    folder, summary = newest_summary(reports)
    told = f"by the run of {shown_at(trial_journal)}, which stopped before its report (its journal: "
    assert outcomes_of(folder) == {
        "000201": ("added", f"Added {told}{trial_journal})."),
        "000202": ("added", f"Added {told}{trial_journal})."),
        **{f"{n:06d}": ("added", "Add Successfully") for n in range(203, 207)},
    }
    assert [(run["journal"], run["added"]) for run in summary["stopped_runs"]] == [(str(trial_journal), 2)]


def test_a_journal_that_names_no_service_is_not_told(tmp_path: Path) -> None:
    # a journal written before journals named their service: which service it sent to cannot be known, and a row
    # told as added by a run that did not add it is worse than one added in no report (its journal lists it)
    from hrimport.imports.stopped_runs import stopped_runs
    from hrimport.service.connection import Target

    job_folder = tmp_path / "reports" / "test-staff"
    old, current = job_folder / "2026-11-25_090000", job_folder / "2026-11-25_093000"
    for folder in (old, current):
        folder.mkdir(parents=True)
    (old / "outcomes.jsonl").write_bytes(
        b'{"record": "journal", "kind": "staff", "job": "test-staff", "source": "staff.csv", "started_at": '
        b'"2026-11-25T09:00:00+00:00"}\n'
        b'{"record": "row", "row": 2, "external_id": "000201", "name": "Person 201", "outcome": "added", "problems": '
        b'[], "message": "Add Successfully", "details": {}, "source": null, "changed_values": {}}\n')
    production = Target(None, "99", "https://api.example.com/v1", "https://api.example.com/v1")

    assert stopped_runs(job_folder, "staff", current, production) == []


def test_a_run_still_sending_is_not_told_as_stopped(tmp_path: Path) -> None:
    from hrimport.imports.stopped_runs import stopped_runs
    from hrimport.outcomes import OutcomeJournal
    from hrimport.service.connection import Target
    from hrimport.service.urls import EMBEDDED_SANDBOX

    job_folder = tmp_path / "reports" / "test-staff"
    sending, stopped, current = (job_folder / name for name in ("2026-11-25_090000", "2026-11-25_091500",
                                                                 "2026-11-25_093000"))
    for folder in (sending, stopped, current):
        folder.mkdir(parents=True)
    sandbox = Target(None, "99", EMBEDDED_SANDBOX, "embedded-sandbox:/srv/hr/.hrimport/sandbox.db")
    running = OutcomeJournal(sending / "outcomes.jsonl", kind="staff", job="test-staff", source=Path("staff.csv"),
                             started_at="2026-11-25T09:00:00+00:00", service=sandbox.keyed_as,
                             customer_id="99")  # open: its run is still sending
    OutcomeJournal(stopped / "outcomes.jsonl", kind="staff", job="test-staff", source=Path("staff.csv"),
                   started_at="2026-11-25T09:15:00+00:00", service=sandbox.keyed_as,
                   customer_id="99").close()  # killed: its file closed by the kernel
    try:
        assert [run.journal.parent.name for run in stopped_runs(job_folder, "staff", current, sandbox)] == [
            stopped.name]
        assert stopped_runs(job_folder, "timeoff", current, sandbox) == []
    finally:
        running.close()
    assert len(stopped_runs(job_folder, "staff", current, sandbox)) == 2


# ------------------------------------------------------------------------------------------------- time off


def leave(ext: str, start: str, end: str, leave_type: str = "Annual Leave") -> dict[str, str]:
    """A leave row of the export (dates day-first, as the config says)."""
    return {"Employee ID": ext, "Leave Type": leave_type, "From": start, "To": end, "Country": "MY",
            "Status": "Approved"}


def record_ids(sandbox: Any, prefix: str) -> dict[str, int]:
    """The id of the time-off record the sandbox holds for each of this test's people (one leave each)."""
    return {t["customer_system_id"]: t["id"] for t in sandbox.time_off(99)
            if str(t["customer_system_id"]).startswith(prefix)}


@dataclass(frozen=True)
class LeaveJob:
    """A time-off import of this test's own people in Malaysia (``prefix``: their external ids', as the sandbox is
    shared), its config and report folder."""

    prefix: str
    ids: list[str]
    config: Path
    reports: Path

    def command(self, source: Path) -> list[str]:
        """The import of ``source``, one leave in flight at a time (so that a held answer stops the run there)."""
        return ["timeoff", "import", str(self.config), str(source), "--report-dir", str(self.reports),
                "--concurrency", "1"]


def leave_job(tmp_path: Path, sandbox: Any, people: int) -> LeaveJob:
    """``people`` new people on the sandbox, and the config importing their leave."""
    prefix = uuid.uuid4().hex[:4]
    ids = [f"{prefix}{n:05d}" for n in range(1, people + 1)]
    add_staff(sandbox, [(ext, "MY") for ext in ids])
    config = tmp_path / "leave.toml"
    config.write_text(LEAVE_CONFIG.format(base_url=sandbox.base_url), encoding="utf-8")
    return LeaveJob(prefix, ids, config, tmp_path / "reports")


def one_day_each(tmp_path: Path, job: LeaveJob) -> Path:
    """November's export: a day's leave for each person, on days of their own."""
    return write_csv(tmp_path / "leave_2026-11.csv",
                     [leave(ext, f"{n + 11}/03/2024", f"{n + 11}/03/2024") for n, ext in enumerate(job.ids)],
                     LEAVE_HEADER)


def test_a_timeoff_import_killed_half_way_has_its_leave_told_as_added_by_the_next_import(
        tmp_path: Path, sandbox: Any) -> None:
    job = leave_job(tmp_path, sandbox, 6)
    prefix, ids, config, reports = job.prefix, job.ids, job.config, job.reports
    october = [leave(ids[0], "04/03/2024", "05/03/2024"), leave(ids[1], "04/03/2024", "05/03/2024")]
    first = run_cli("timeoff", "import", str(config), str(write_csv(tmp_path / "leave_2026-10.csv", october,
                                                                     LEAVE_HEADER)), "--report-dir", str(reports))
    assert first.exit_code == 0, first.output
    # November's cumulative export: October's two leaves, four new ones (one written in Chinese)
    november = write_csv(tmp_path / "leave_2026-11.csv", [
        *october, leave(ids[2], "06/03/2024", "06/03/2024", "年假"), leave(ids[3], "07/03/2024", "07/03/2024",
                                                                           "Sick Leave"),
        leave(ids[4], "11/03/2024", "11/03/2024"), leave(ids[5], "12/03/2024", "12/03/2024")], LEAVE_HEADER)
    command = job.command(november)
    hold_batch_after(sandbox, 2, TIME_OFF)
    time.sleep(1.1)  # a run folder of its own second

    journal = killed_after(sandbox, command, reports, 2)  # two leaves answered: the third person's and the fourth's

    sandbox.clear_faults()
    stored = record_ids(sandbox, prefix)
    assert set(stored) == set(ids[:4])
    time.sleep(1.1)
    rerun = run_cli(*command)
    assert rerun.exit_code == 0, rerun.output
    folder, summary = newest_summary(reports)
    stored = record_ids(sandbox, prefix)
    told = f"by the run of {shown_at(journal)}, which stopped before its report (its journal: {journal})."
    outcomes = outcomes_of(folder)
    assert {ext: outcome for ext, (outcome, _) in outcomes.items()} == {
        ids[0]: "already_imported", ids[1]: "already_imported",
        ids[2]: "added", ids[3]: "added", ids[4]: "added", ids[5]: "added"}
    assert all(outcomes[ext][1].startswith("Already imported on ") for ext in ids[:2])  # October's: not told
    assert {ext: outcomes[ext][1] for ext in ids[2:]} == {
        ids[2]: f"Added as time-off record {stored[ids[2]]} {told}",
        ids[3]: f"Added as time-off record {stored[ids[3]]} {told}",
        ids[4]: f"Added as time-off record {stored[ids[4]]}.",
        ids[5]: f"Added as time-off record {stored[ids[5]]}.",
    }
    assert counted(summary) == {"added": 4, "already_imported": 2}
    first_line = json.loads(journal.read_text(encoding="utf-8").splitlines()[0])
    assert summary["stopped_runs"] == [{"started_at": first_line["started_at"], "journal": str(journal), "rows": 2,
                                        "added": 2, "updated": 0, "repeats": 0}]
    assert summary["verdict"] == (f"6 of 6 rows imported; 2 added by the run of {shown_at(journal)}, which stopped "
                                  "before its report")
    assert (f"2 rows were sent by the run of {shown_at(journal)} that stopped before its report (2 added; its "
            f"journal: {journal}): this report lists them as added, as that run's service answered them, where they "
            "would read already imported, so that no leave it added goes untold.") in summary["notes"]
    assert len(sandbox.time_off(99)) == len({t["id"] for t in sandbox.time_off(99)})
    assert sorted(stored) == ids  # each leave once

    told_once_only(command, reports, "already_imported")


def test_a_timeoff_import_killed_once_the_platform_stored_a_leave_and_before_its_answer_has_it_told_added_next(
        tmp_path: Path, sandbox: Any) -> None:
    """Killed while the platform had stored the third leave and held back its answer: the ledger keeps that leave as
    sent, no journal names it. The next import sends it again, the service's 409 names the record the lost send
    stored, and the row reads added (the one report that tells it), not already imported, never a second record."""
    job = leave_job(tmp_path, sandbox, 3)
    prefix, ids, reports = job.prefix, job.ids, job.reports
    command = job.command(one_day_each(tmp_path, job))
    # the third leave is stored, then its answer held back HELD seconds: the run is killed while it waits
    sandbox.set_faults(rules=[{"path": TIME_OFF, "skip": 2, "count": 1, "delay": HELD, "after": True}])
    with reaped(hrimport(*command)) as process:
        deadline = time.monotonic() + HELD - 2
        while len(record_ids(sandbox, prefix)) < 3 or journal_rows(reports) < 2:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the platform did not store the third leave"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=10)
        assert process.returncode == -signal.SIGKILL
    deadline = time.monotonic() + HELD + 10
    while 499 not in posts(sandbox):  # the held answer given up: the run that waited for it is gone
        assert time.monotonic() < deadline
        time.sleep(0.05)
    [journal] = reports.rglob("outcomes.jsonl")
    assert not (journal.parent / "summary.json").exists()
    with open_ledger(tmp_path / ".hrimport") as ledger:
        kept = {e.key.external_id: e for e in ledger.entries()}
    assert {ext: e.status for ext, e in kept.items()} == {ids[0]: "stored", ids[1]: "stored", ids[2]: "sending"}
    sent_on = datetime.fromisoformat(kept[ids[2]].accepted_at).strftime("%Y-%m-%d %H:%M")
    sandbox.clear_faults()
    time.sleep(1.1)

    rerun = run_cli(*command)

    assert rerun.exit_code == 0, rerun.output
    folder, summary = newest_summary(reports)
    stored = record_ids(sandbox, prefix)
    told = f"by the run of {shown_at(journal)}, which stopped before its report (its journal: {journal})."
    assert outcomes_of(folder) == {
        ids[0]: ("added", f"Added as time-off record {stored[ids[0]]} {told}"),
        ids[1]: ("added", f"Added as time-off record {stored[ids[1]]} {told}"),
        ids[2]: ("added", (f"Added as time-off record {stored[ids[2]]}: sent on {sent_on} (from leave_2026-11.csv "
                           "row 4) by a run that never received the service's answer; the service holds it, so no "
                           "second record was added.")),
    }
    assert counted(summary) == {"added": 3}
    assert summary["verdict"] == (f"3 of 3 rows imported; 2 added by the run of {shown_at(journal)}, which stopped "
                                  "before its report")
    assert [(run["rows"], run["added"]) for run in summary["stopped_runs"]] == [(2, 2)]
    assert posts(sandbox) == [200, 200, 499, 409]  # the third leave sent again once, found, not added again
    assert sorted(stored) == ids and len(sandbox.time_off(99)) == len({t["id"] for t in sandbox.time_off(99)})
    with open_ledger(tmp_path / ".hrimport") as ledger:
        assert {e.key.external_id: (e.status, e.record_id) for e in ledger.entries()} == {
            ext: ("stored", stored[ext]) for ext in ids}

    told_once_only(command, reports, "already_imported")


def posts(sandbox: Any) -> list[int]:
    """The statuses of the time-off records the sandbox was sent, in order."""
    return [r["status"] for r in sandbox.requests() if r["path"].endswith(TIME_OFF)]


def test_a_monthly_run_killed_in_its_timeoff_step_has_that_leave_told_as_added_by_the_next_run(
        tmp_path: Path, sandbox: Any) -> None:
    job = JobFolder(tmp_path / "job", sandbox, timeoff=True)
    leave_config = job.root / "leave.toml"  # one record at a time: the kill lands after the second
    leave_config.write_text(leave_config.read_text().replace("[timeoff]\n", "[timeoff]\nconcurrency = 1\n", 1))
    job.export("2026-10", job.people(6))
    job.leave("2026-10", 2)
    assert run_cli("run", str(job.job)).exit_code == 0
    exports = job.root / "exports"
    november = write_csv(exports / "leave_2026-11.csv", [
        *(leave(job.ext(n), "04/03/2024", "05/03/2024") for n in (1, 2)),
        *(leave(job.ext(n), f"{n + 12}/04/2024", f"{n + 12}/04/2024") for n in range(3, 7))], LEAVE_HEADER)
    later = time.time() + 10
    os.utime(november, (later, later))  # the newest leave export
    reports = job.root / "reports"
    hold_batch_after(sandbox, 2, TIME_OFF)
    time.sleep(1.1)

    journal = killed_after(sandbox, ["run", str(job.job)], reports, 2)  # the third person's and the fourth's

    sandbox.clear_faults()
    time.sleep(1.1)
    rerun = run_cli("run", str(job.job))
    assert rerun.exit_code == 0, rerun.output
    folder, summary = newest_summary(reports)
    told = f"by the run of {shown_at(journal)}, which stopped before its report (its journal: {journal})."
    stored = record_ids(sandbox, job.prefix)
    outcomes = outcomes_of(folder)
    assert {ext: outcome for ext, (outcome, _) in outcomes.items()} == {
        job.ext(1): "already_imported", job.ext(2): "already_imported", job.ext(3): "added", job.ext(4): "added",
        job.ext(5): "added", job.ext(6): "added"}
    assert {ext: message for ext, (_, message) in outcomes.items() if ext in (job.ext(3), job.ext(5))} == {
        job.ext(3): f"Added as time-off record {stored[job.ext(3)]} {told}",
        job.ext(5): f"Added as time-off record {stored[job.ext(5)]}.",
    }
    assert [(run["rows"], run["added"]) for run in summary["stopped_runs"]] == [(2, 2)]
    run_json = json.loads((folder.parent / "run.json").read_text(encoding="utf-8"))
    assert run_json["verdict"] == (
        f"timeoff: everything imported; 2 rows added by the run of {shown_at(journal)}, which stopped before its "
        f"report (see the report); staff: no new export: the newest file matching exports/staff_*.csv "
        f"(staff_2026-10.csv) is the one imported on {job.imported_on()}")

    time.sleep(1.1)
    third = run_cli("run", str(job.job), "--full")  # the same file again: nothing of the stopped run is told
    assert third.exit_code == 0, third.output
    _, summary = newest_summary(reports)
    assert summary["kind"] == "timeoff" and summary["stopped_runs"] == []


def test_a_timeoff_dry_run_after_a_killed_import_says_how_many_rows_it_sent(tmp_path: Path, sandbox: Any) -> None:
    job = leave_job(tmp_path, sandbox, 3)
    reports = job.reports
    command = job.command(one_day_each(tmp_path, job))
    hold_batch_after(sandbox, 2, TIME_OFF)
    journal = killed_after(sandbox, command, reports, 2)
    sandbox.clear_faults()
    time.sleep(1.1)

    dry = run_cli(*command, "--dry-run")

    assert dry.exit_code == 0, dry.output
    _, summary = newest_summary(reports)
    assert summary["dry_run"] is True
    assert counted(summary) == {"already_imported": 2, "valid": 1}  # a dry run's rows read as the ledger holds them
    assert (f"2 rows were sent by the run of {shown_at(journal)} that stopped before its report (2 added; its "
            f"journal: {journal}): the ledger holds them as already imported, and the import reports them as added"
            in " ".join(summary["notes"]))
    time.sleep(1.1)
    rerun = run_cli(*command)  # a dry run's report does not count: the import still tells them
    _, summary = newest_summary(reports)
    assert rerun.exit_code == 0 and counted(summary) == {"added": 3}
    assert [run["added"] for run in summary["stopped_runs"]] == [2]


def test_a_leave_listed_twice_that_a_killed_run_added_is_told_once(tmp_path: Path, sandbox: Any) -> None:
    job = leave_job(tmp_path, sandbox, 3)
    prefix, ids, reports = job.prefix, job.ids, job.reports
    trip = leave(ids[0], "11/03/2024", "12/03/2024")
    november = write_csv(tmp_path / "leave_2026-11.csv", [
        trip, leave(ids[1], "13/03/2024", "13/03/2024"), trip, leave(ids[2], "14/03/2024", "14/03/2024")],
        LEAVE_HEADER)  # rows 2 and 4: one leave listed twice
    command = job.command(november)
    hold_batch_after(sandbox, 1, TIME_OFF)
    journal = killed_after(sandbox, command, reports, 1)  # the trip added, then killed
    sandbox.clear_faults()
    time.sleep(1.1)

    rerun = run_cli(*command)

    assert rerun.exit_code == 0, rerun.output
    folder, summary = newest_summary(reports)
    record = record_ids(sandbox, prefix)[ids[0]]
    told = f"Added as time-off record {record} by the run of {shown_at(journal)}, which stopped before its report " \
           f"(its journal: {journal})."
    rows = {o.row: (o.outcome.value, o.message) for o in read_outcomes(folder / "outcomes.jsonl").rows}
    assert rows[2] == ("added", told)
    assert rows[4] == ("added", f"Shares row 2's outcome: {told}")  # the same leave: one, added by that run
    assert counted(summary) == {"added": 4}  # rows, as in any run: the repeat shares its row's outcome
    assert [(run["rows"], run["added"], run["repeats"]) for run in summary["stopped_runs"]] == [(1, 1, 1)]
    assert summary["verdict"] == (f"4 of 4 rows imported (1 with warnings); 1 added by the run of {shown_at(journal)}, "
                                  "which stopped before its report")
    assert (f"1 row was sent by the run of {shown_at(journal)} that stopped before its report (1 added; its journal: "
            f"{journal}), and 1 row listing it again shares its outcome: this report lists them as added, as that "
            "run's service answered them") in " ".join(summary["notes"])
    assert len([t for t in sandbox.time_off(99) if t["customer_system_id"] == ids[0]]) == 1
