"""A run's journal whose last line a kill or a power cut cut in half, read by everything that reads it.

``hrimport run`` appends each row the service answers to its step's ``outcomes.jsonl`` (the journal) as it sends.
A kill -9 or a power cut as a line is written leaves that line cut: no line break, half a JSON object, half a
character, or a block of zeros where the disk had not written it yet. Here a real run is killed outright half
way, and its journal cut at real byte offsets; ``hrimport report`` of it, ``hrimport runs`` (and the job's
index.html, from the same lines) and the next ``hrimport run`` each read it: never a traceback, the row whose line
was cut counted as not answered (as if the kill had come before the write), a line cut in the middle of the file
refused in one line naming it, and the next run sends every row the killed one did not, none twice.
"""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path
from typing import Any

from tests.child_process import reaped
from tests.test_run_job import BULK, JobFolder, bulk_elements, hrimport, run_cli, wait_for

PEOPLE = 60
#: names with characters of two and three bytes in UTF-8, so a line can be cut inside one
NAMES = {str(n): {"Name": f"Zoë Ñúñez-{n} 山田"} for n in range(1, PEOPLE + 1)}


def killed_half_way(job: JobFolder, sandbox: Any) -> Path:
    """``hrimport run`` of the job killed outright (SIGKILL) once four of its batches were answered; the staff
    step's journal."""
    sandbox.set_faults(latency=0.2)  # each batch waits: the kill lands while the run sends
    run = hrimport("run", str(job.job))
    with reaped(run):
        wait_for(lambda: sum(1 for r in sandbox.requests() if r["path"].endswith(BULK)) >= 4, timeout=60,
                 what="four batches answered")
        run.send_signal(signal.SIGKILL)
        run.communicate(timeout=30)
    sandbox.clear_faults()
    assert run.returncode == -signal.SIGKILL
    [folder] = job.runs()
    return folder / "staff" / "outcomes.jsonl"


def reported(journal: Path) -> tuple[int, str]:
    """``hrimport report JOURNAL``: its exit code and what it says on stderr."""
    result = run_cli("report", str(journal))
    return result.exit_code, result.stderr


def listed(job: JobFolder) -> dict[str, Any]:
    """The killed run's line in ``hrimport runs --json``."""
    result = run_cli("runs", str(job.job), "--json")
    assert result.exit_code == 0, result.output
    [line] = json.loads(result.stdout)["runs"]
    return dict(line)


def test_a_journal_cut_at_its_end_reads_as_the_rows_before_the_cut_and_the_next_run_sends_each_row_once(
        tmp_path: Path, sandbox: Any) -> None:
    job = JobFolder(tmp_path / "torn", sandbox, batch_size=5)
    job.export("2024-05", job.people(PEOPLE, **NAMES))
    journal = killed_half_way(job, sandbox)
    whole = journal.read_bytes()
    lines = whole.splitlines(keepends=True)
    assert all(line.endswith(b"\n") for line in lines)  # a kill alone lands between two writes
    answered = len(lines) - 1  # the journal's first line names the run
    assert 5 <= answered < PEOPLE
    last = len(whole) - len(lines[-1])  # where the last row's line begins
    in_a_character = last + lines[-1].index("ë".encode()) + 1  # between the two bytes of ë

    cuts = {  # what the journal holds after the cut -> the rows it tells as answered
        "the last line's break": (whole[:-1], answered - 1),
        "the last line's middle": (whole[:last + 40], answered - 1),
        "inside a character": (whole[:in_a_character], answered - 1),
        "zeros after the last line (a power cut)": (whole + b"\0" * 4096, answered),
        "the first row's line": (whole[:len(lines[0]) + 12], 0),
        "the journal's own first line": (whole[:15], 0),
    }
    for what, (held, rows) in cuts.items():
        journal.write_bytes(held)

        code, said = reported(journal)

        assert code == 2, what
        assert said == (f"Error: {journal} is not a run's outcomes file (it is the journal of a run stopped before it "
                        f"finished (its last line cut): {rows} rows sent were recorded as the service answered, and "
                        "no report can be made of it; run the import again: nothing is sent twice)\n"), what
        line = listed(job)
        assert line["problem"] == (f"no report: the run was stopped before it finished (or is still sending); the "
                                   f"{rows} rows the service answered are in its journal, outcomes.jsonl; run the "
                                   "import again: nothing is sent twice"), what
        assert line["rows_read"] is None and line["exit_code"] is None

    # the last line cut in its middle, as a power cut leaves it; then the next run
    journal.write_bytes(held := whole[:last + 40])
    sandbox.clear_requests()
    again = hrimport("run", str(job.job))
    _, err = again.communicate(timeout=120)

    assert again.returncode == 0, err
    assert "Traceback" not in err
    assert job.stored() == Counter({job.ext(n): 1 for n in range(1, PEOPLE + 1)})  # each person once
    counts = job.last_run()["steps"][0]["counts"]
    assert sum(counts.values()) == PEOPLE  # every row has its outcome
    # what the killed run's batches stored was remembered at once: the rows of the journal's whole lines are told
    # as added by it (its report never came), the row of the cut line reads unchanged
    [told] = json.loads((job.runs()[-1] / "staff" / "summary.json").read_text(encoding="utf-8"))["stopped_runs"]
    assert (told["rows"], told["added"]) == (answered - 1, answered - 1) and counts["unchanged"] >= 1
    assert bulk_elements(sandbox) == PEOPLE - told["rows"] - counts["unchanged"]  # nothing sent twice
    # nothing of the next run was appended to the cut journal: it wrote its own, whole, in its own folder
    assert journal.read_bytes() == held
    new = job.runs()[-1] / "staff" / "outcomes.jsonl"
    assert new.read_bytes().endswith(b"\n") and len(new.read_bytes().splitlines()) == PEOPLE + 1


def test_a_journal_cut_in_its_middle_is_refused_in_one_line_naming_it(tmp_path: Path, sandbox: Any) -> None:
    job = JobFolder(tmp_path / "damaged", sandbox, batch_size=5)
    job.export("2024-05", job.people(PEOPLE, **NAMES))
    journal = killed_half_way(job, sandbox)
    lines = journal.read_bytes().splitlines(keepends=True)
    # the third line cut, and the lines after it written on: the fourth glued to what is left of the third
    journal.write_bytes(b"".join([*lines[:2], lines[2][:50], *lines[3:]]))

    code, said = reported(journal)

    assert code == 2
    assert said == (f"Error: {journal} is not a run's outcomes file (it is damaged: its line 3 is not a whole record "
                    "(cut, or written over), so it cannot be read as a run; run the import again: nothing is sent "
                    "twice)\n")
    assert listed(job)["problem"] == ("no report: the run was stopped before it finished, and its journal, "
                                      "outcomes.jsonl, is damaged (its line 3 is not a whole record); run the import "
                                      "again: nothing is sent twice")

    # zeros in the middle (blocks a power cut left unwritten, then lines written after them): the same
    journal.write_bytes(b"".join([*lines[:3], b"\0" * 4096, *lines[3:]]))
    code, said = reported(journal)
    assert code == 2 and "it is damaged: its line 4 is not a whole record" in said
    assert "(its line 4 is not a whole record)" in listed(job)["problem"]
