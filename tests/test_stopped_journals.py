"""A run stopped for a reason hrimport knows ends its journal saying why, so that the history tells HR.

The story: an import is stopped after rows were sent and before its report (the platform refuses the token
half way, exit 4; SIGTERM as the report is written, exit 143). Its folder has only its journal, outcomes.jsonl,
which `hrimport runs`, its --json and index.html read: they said "stopped before it finished (or is still
sending)", which tells HR nothing they can act on. Now the journal's last line says why and what to do, and the
history says it. A disk that refuses that line too leaves the journal as it was: nothing false is said. The full
disks of the state and report folders, on a real small disk, are in tests/test_state_not_written.py.
"""

from __future__ import annotations

import html
import json
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, NoReturn

import pytest
from click.testing import CliRunner, Result

from hrimport import report as report_package
from hrimport.cli import main
from tests.staff_files import person, write_config, write_csv

pytestmark = pytest.mark.usefixtures("instant_retries")

TOKEN = "demo-customer-99"
BULK = "/api/bulk_add_edit_staff"


def hrimport(*args: str, base_url: str = "") -> Result:
    return CliRunner().invoke(main, list(args), env={"HRIMPORT_TOKEN": TOKEN, "HRIMPORT_BASE_URL": base_url},
                              catch_exceptions=False)


@pytest.fixture
def three_people(tmp_path: Path, sandbox: Any) -> list[str]:
    """``staff import`` of three people (ids unique to the test), one per request, to the served sandbox."""
    prefix = uuid.uuid4().hex[:4]
    config = write_config(tmp_path / "staff.toml")
    data = write_csv(tmp_path / "staff.csv", [person(n, **{"Employee ID": f"{prefix}{n}"}) for n in (1, 2, 3)])
    return ["staff", "import", str(config), str(data), "--batch-size", "1", "--report-dir", str(tmp_path / "reports")]


def the_journal(tmp_path: Path) -> Path:
    [journal] = (tmp_path / "reports").glob("*/*/outcomes.jsonl")
    return journal


def history_says(journal: Path) -> str:
    """What `hrimport runs --json` says of the run whose journal this is; index.html says the same."""
    runs = hrimport("runs", str(journal.parent.parent), "--json")
    assert runs.exit_code == 0, runs.output
    [line] = json.loads(runs.stdout)["runs"]
    assert line["file"] == "staff.csv"
    return str(line["problem"])


def test_a_token_refused_half_way_ends_the_journal_saying_so(
        tmp_path: Path, sandbox: Any, three_people: list[str]) -> None:
    # the platform answers the first request, then refuses the token (a real HTTP 401 from the sandbox)
    sandbox.set_faults(rules=[{"path": BULK, "status": 401, "skip": 1, "count": 10}])

    result = hrimport(*three_people, base_url=sandbox.base_url)

    assert result.exit_code == 4, result.output
    journal = the_journal(tmp_path)
    *rows, last = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [r["record"] for r in rows] == ["journal", "row"]
    refused = "the service refused the token (HTTP 401: Injected fault): check the token in $HRIMPORT_TOKEN"
    assert result.stderr == f"Error: {refused}\n"
    why = (f"the platform stopped accepting hrimport's token (its key to the platform) during the run, so the rows "
           f"after were not sent ({refused})")
    next_step = ("have the token checked (it may have expired or been revoked), then run the import again: nothing "
                 "is sent twice")
    assert last == {"record": "stopped", "why": why, "next": next_step}
    said = (f"no report: {why}; the 1 rows the service answered are in its journal, outcomes.jsonl; {next_step}")
    assert history_says(journal) == said
    assert "or is still sending" not in said

    sandbox.clear_faults()
    again = hrimport(*three_people, base_url=sandbox.base_url)  # the token is good again: the rest is sent
    assert again.exit_code == 0, again.output
    page = (journal.parent.parent / "index.html").read_text(encoding="utf-8")
    assert html.escape(said, quote=False).replace("'", "&#39;") in page  # the page keeps saying it


def test_sigterm_as_the_report_is_written_ends_the_journal_saying_so(
        tmp_path: Path, sandbox: Any, three_people: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # The signal is real (the CLI's own handler meets it); only its moment is chosen: as the report is written.
    def sigterm(*_args: Any, **_kwargs: Any) -> NoReturn:
        signal.raise_signal(signal.SIGTERM)
        raise AssertionError("SIGTERM did not stop the command")

    monkeypatch.setattr(report_package, "write_report", sigterm)

    result = hrimport(*three_people, base_url=sandbox.base_url)

    assert result.exit_code == 143, result.output
    journal = the_journal(tmp_path)
    last = json.loads(journal.read_text().splitlines()[-1])
    why = ("the run was stopped by SIGTERM (the machine shutting down, or systemctl stop) before its report was "
           "written")
    next_step = "run the import again: nothing is sent twice, and its report accounts for every row"
    assert last == {"record": "stopped", "why": why, "next": next_step}
    assert history_says(journal) == (
        f"no report: {why}; the 3 rows the service answered are in its journal, outcomes.jsonl; {next_step}")


#: A journal of two rows, ended by a stopped line once no file may grow past its size and a few bytes
#: (RLIMIT_FSIZE: the kernel refuses the bytes past it with EFBIG, as a full disk refuses them; Python ignores
#: SIGXFSZ); then a journal whose own row could not be written whole, ended once the limit is lifted. argv: folder
JOURNAL_ON_A_FULL_DISK = """
import os, resource, sys
from pathlib import Path
from hrimport.outcomes import Outcome, OutcomeJournal, RowOutcome

folder = Path(sys.argv[1])
def rows(first):
    return [RowOutcome(n, f"E{n}", f"Person {n}", Outcome.ADDED, message="Add Successfully") for n in (first, first + 1)]

full = OutcomeJournal(folder / "full.jsonl", kind="staff", job="monthly", source=Path("staff.csv"),
                      started_at="2024-06-01T06:15:00+00:00", service="embedded-sandbox", customer_id="99")
full.add(rows(2))
full.close()
size = (folder / "full.jsonl").stat().st_size
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 10, resource.RLIM_INFINITY))
print(full.stopped("the disk holding the report folder is full", "free space"))

cut = OutcomeJournal(folder / "cut.jsonl", kind="staff", job="monthly", source=Path("staff.csv"),
                     started_at="2024-06-01T06:15:00+00:00", service="embedded-sandbox", customer_id="99")
cut.add(rows(2))
resource.setrlimit(resource.RLIMIT_FSIZE, ((folder / "cut.jsonl").stat().st_size + 10, resource.RLIM_INFINITY))
cut.add(rows(4))  # cut after 10 bytes: the disk is full
print(type(cut.error).__name__, cut.error.strerror if cut.error else "")
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))  # room again
print(cut.stopped("the disk holding the report folder is full", "free space"))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as Linux has it")
def test_a_stopped_line_the_disk_refuses_leaves_the_journal_as_it_was(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", JOURNAL_ON_A_FULL_DISK, str(tmp_path)], capture_output=True,
                          text=True, timeout=60, check=False)

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == ["False", "OSError File too large", "True"]
    # refused: the journal ends with its two rows, whole, as before the line was tried (not a cut line after them)
    full = (tmp_path / "full.jsonl").read_text().splitlines(keepends=True)
    assert [json.loads(line)["record"] for line in full] == ["journal", "row", "row"]
    assert full[-1].endswith("}\n")
    assert hrimport("report", str(tmp_path / "full.jsonl")).stderr.startswith(
        "Error: ")  # a journal: no report, and not called damaged
    assert "damaged" not in hrimport("report", str(tmp_path / "full.jsonl")).stderr
    # a journal cut where its disk filled up: the cut row taken off, and the line says it lists only the rows before
    *lines, last = [json.loads(line) for line in (tmp_path / "cut.jsonl").read_text().splitlines()]
    assert [line["row"] for line in lines if line["record"] == "row"] == [2, 3]
    assert last == {"record": "stopped", "next": "free space", "why": (
        "the disk holding the report folder is full; its journal could not be written to its end either (the same "
        "disk), so it lists only the first 2 rows the service answered, not each")}
