"""A run killed between its journal and its state folder: the next run's report still tells every row once.

A run writes two things for each row the service accepts: a line of its journal (``outcomes.jsonl``, which the
next run reads to tell what a run killed before its report sent: ``hrimport.imports.stopped_runs``) and the state
folder's record (staff: state.db; time off: the ledger), which makes the next run find the row ``unchanged`` or
``already_imported``. A kill between the two (a reboot, the OOM killer) must leave no row the state folder holds
that no journal names: the next run would read it unchanged, and a new hire or a leave that run added would be
added in no report. So the journal is written first, and a kill after it and before the state folder's record
leaves a row the next run sends again, which the service answers as the record it already holds, reported added
once (a person: the service's "Update Successfully"; a leave: its 409 naming the record the lost send stored).

The moment between the two lasts a few milliseconds (measured: 2 ms a batch of 100 staff, 0.2 ms a leave), too
short to land a kill from outside every time: here the import runs in a child process whose journal (or state
folder) kills the process with SIGKILL as it would write the second batch's rows (or leave), the one place this
test stands in for the real world: a fault at an instant that cannot be caused for real on demand. Real HTTP to the
sandbox on 127.0.0.1, real report folders, a real SIGKILL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.staff_files import person, write_config, write_csv
from tests.test_run_job import LEAVE_CONFIG, LEAVE_HEADER, TOKEN, run_cli
from tests.test_stopped_runs import (
    counted,
    leave,
    newest_summary,
    outcomes_of,
    record_ids,
    shown_at,
    told_once_only,
)
from tests.test_timeoff_import import add_staff

#: An import killed outright (SIGKILL: nothing runs after it) as it would write its second batch (a staff batch, a
#: leave) to the journal ("journal") or to the state folder ("state").
KILLED_AT = """
import os, signal, sys
from pathlib import Path
from hrimport.config import load_config
from hrimport.imports import import_file
from hrimport.outcomes import OutcomeJournal
from hrimport.state.ledger import Ledger
from hrimport.state.store import AcceptedStaff

config, source, base_url, reports, moment, kind = sys.argv[1:7]
owner, name = {"journal": (OutcomeJournal, "add"), "state": (AcceptedStaff if kind == "staff" else Ledger,
                                                             "remember")}[moment]
write = getattr(owner, name)
calls = []

def killed_at_the_second(self, *args, **kwargs):
    calls.append(1)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return write(self, *args, **kwargs)

setattr(owner, name, killed_at_the_second)
import_file(load_config(Path(config)), Path(source), base_url=base_url, batch_size=2, concurrency=1,
            report_dir=Path(reports))
"""


def killed_at(config: Path, source: Path, sandbox: Any, reports: Path, moment: str, kind: str = "staff") -> Path:
    """Import ``source`` in a child process killed as it would write its second batch to ``moment`` (the journal,
    the state folder); the journal it left."""
    before = set(reports.rglob("outcomes.jsonl"))
    child = subprocess.run([sys.executable, "-c", KILLED_AT, str(config), str(source), sandbox.base_url, str(reports),
                            moment, kind], capture_output=True, text=True, timeout=120, check=False,
                           env={**os.environ, "HRIMPORT_TOKEN": TOKEN})
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    [journal] = set(reports.rglob("outcomes.jsonl")) - before
    assert not (journal.parent / "summary.json").exists()
    return journal


@pytest.mark.parametrize("moment", ["journal", "state"])
def test_a_staff_import_killed_between_its_journal_and_its_state_folder_has_each_new_hire_told_once(
        tmp_path: Path, sandbox: Any, moment: str) -> None:
    config = write_config(tmp_path / "staff.toml", base_url=sandbox.base_url)
    reports = tmp_path / "reports"
    october = write_csv(tmp_path / "staff_2026-10.csv", [person(1)])
    assert run_cli("staff", "import", str(config), str(october), "--report-dir", str(reports)).exit_code == 0
    # November: three new hires and person 1 changed, sent in two batches (101, 102 | 103, 1), the second the last:
    # nothing else is in flight when the run is killed
    november = write_csv(tmp_path / "staff_2026-11.csv", [person(101), person(102), person(103),
                                                          person(1, Title="Director")])
    time.sleep(1.1)  # a run folder of its own second

    journal = killed_at(config, november, sandbox, reports, moment)

    stored = [s["customer_system_id"] for s in sandbox.staff(99)]
    assert {"000101", "000102", "000103"} <= set(stored)  # the service took both batches
    time.sleep(1.1)
    command = ["staff", "import", str(config), str(november), "--report-dir", str(reports), "--batch-size", "2"]
    rerun = run_cli(*command)
    assert rerun.exit_code == 0, rerun.output
    folder, summary = newest_summary(reports)
    told = f"by the run of {shown_at(journal)}, which stopped before its report (its journal: {journal})."
    assert outcomes_of(folder) == {
        "000101": ("added", f"Added {told}"),
        "000102": ("added", f"Added {told}"),
        # the state folder never remembered the second batch: sent again, the service holds it; added once
        "000103": ("added", ("Added: the service answered 'Update Successfully' because an earlier send created "
                             "the record and its answer was lost.")),
        "000001": ("updated", "Update Successfully"),
    }
    assert counted(summary) == {"added": 3, "updated": 1}
    assert [(run["journal"], run["rows"], run["added"], run["updated"]) for run in summary["stopped_runs"]] == [
        (str(journal), 2, 2, 0)]
    stored = [s["customer_system_id"] for s in sandbox.staff(99)]
    assert len(stored) == len(set(stored))  # nobody twice

    told_once_only(command, reports, "updated")  # a staff import sends every row


@pytest.mark.parametrize("moment", ["journal", "state"])
def test_a_timeoff_import_killed_between_its_journal_and_its_ledger_has_each_leave_told_once(
        tmp_path: Path, sandbox: Any, moment: str) -> None:
    prefix = uuid.uuid4().hex[:4]  # external ids of this test's own (the sandbox is shared)
    ids = [f"{prefix}{n:05d}" for n in range(1, 3)]
    add_staff(sandbox, [(ext, "MY") for ext in ids])
    config = tmp_path / "leave.toml"
    config.write_text(LEAVE_CONFIG.format(base_url=sandbox.base_url), encoding="utf-8")
    reports = tmp_path / "reports"
    # the second leave the last: nothing else is in flight when the run is killed
    source = write_csv(tmp_path / "leave_2026-11.csv", [
        leave(ids[0], "04/03/2024", "05/03/2024"), leave(ids[1], "06/03/2024", "06/03/2024", "年假")], LEAVE_HEADER)

    journal = killed_at(config, source, sandbox, reports, moment, "timeoff")

    assert set(record_ids(sandbox, prefix)) == set(ids)  # the service took both leaves
    time.sleep(1.1)
    command = ["timeoff", "import", str(config), str(source), "--report-dir", str(reports), "--concurrency", "1"]
    rerun = run_cli(*command)
    assert rerun.exit_code == 0, rerun.output
    folder, summary = newest_summary(reports)
    stored = record_ids(sandbox, prefix)
    told = f"by the run of {shown_at(journal)}, which stopped before its report (its journal: {journal})."
    outcomes = outcomes_of(folder)
    assert outcomes[ids[0]] == ("added", f"Added as time-off record {stored[ids[0]]} {told}")
    if moment == "state":  # its journal names the second leave: the service's answer to it was kept there
        assert outcomes[ids[1]] == ("added", f"Added as time-off record {stored[ids[1]]} {told}")
        assert counted(summary) == {"added": 2}
    else:  # killed before its journal named it: its answer is lost with the run, as one lost in transit, and the
        # leave that run added is told added here, the one report that can (the ledger kept it as sent)
        outcome, message = outcomes[ids[1]]
        assert (outcome, message.split(": sent on ")[0]) == ("added", f"Added as time-off record {stored[ids[1]]}")
        assert message.endswith(f"(from {source.name} row 3) by a run that never received the service's answer; the "
                                "service holds it, so no second record was added.")
        assert counted(summary) == {"added": 2}
    told_rows = 2 if moment == "state" else 1
    assert [(run["journal"], run["rows"], run["added"]) for run in summary["stopped_runs"]] == [
        (str(journal), told_rows, told_rows)]
    assert (f"{told_rows} row{'s were' if told_rows == 2 else ' was'} sent by the run of {shown_at(journal)} that "
            f"stopped before its report ({told_rows} added; its journal: {journal})") in " ".join(summary["notes"])
    assert len(sandbox.time_off(99)) == len({t["id"] for t in sandbox.time_off(99)})
    assert sorted(stored) == ids  # each leave once

    told_once_only(command, reports, "already_imported")
