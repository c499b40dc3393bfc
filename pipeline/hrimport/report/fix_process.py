"""The process that writes a big run's ``to_fix`` while the run writes its other report files.

``hrimport.report.writer`` starts it as ``python -m hrimport.report.fix_process JOB``: ``JOB`` is a file in the
run's private folder holding a ``FixJob``, written whole before the process starts, and the rows go by another
such file (``PickledRows``), a piece at a time. The process writes ``to_fix``, then its answer, ``(True, the
files)`` or ``(False, the error)``, as a file beside them, whole or not at all.

Not a ``multiprocessing`` process: a spawned one reads what it is to do from a pipe the run writes after
starting it, and a run killed in that moment (``kill -9``, the OOM killer) left it a pickle cut short, whose
``EOFError`` traceback ("Ran out of input") landed in cron's log after the run was gone. Here everything it
needs is on the disk before it starts.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hrimport.outcomes import RowOutcome, SourceInfo
from hrimport.private_files import written_whole

#: How often the process looks whether the run's process is still there.
PARENT_CHECK_SECONDS = 0.5


@dataclass(frozen=True)
class FixJob:
    """What the process needs: the run's process id, the source, the rows to fix and the run's folder, and the
    file to answer in."""

    parent: int
    source: SourceInfo
    rows: Sequence[RowOutcome]
    folder: Path
    answer: Path
    date_orders: dict[str, str]  # the columns whose day/month dates the run read in a known order -> that order


def answer_of(path: Path) -> tuple[bool, object] | None:
    """The answer the process left in ``path`` (``(True, files)`` or ``(False, error)``); None when there is
    none (it ended without one: the OOM killer, a crash)."""
    try:
        with open(path, "rb") as fh:
            answer: tuple[bool, object] = pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError):
        return None
    return answer


def main(argv: Sequence[str]) -> int:
    with open(argv[0], "rb") as fh:
        job: FixJob = pickle.load(fh)
    _end_with_run(job.parent)
    from hrimport.report.fix_file import write_fix_files  # after the watch: the writers take a moment to load

    answer: tuple[bool, object]
    try:
        answer = (True, write_fix_files(job.source, job.rows, job.folder, job.date_orders))
    except Exception as exc:  # noqa: BLE001 (handed to the run, which reports it as it would its own error)
        answer = (False, exc)
    with written_whole(job.answer, "wb") as out:  # the run finds it whole or not at all
        try:
            pickle.dump(answer, out, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 (an error that cannot be pickled goes as its text)
            out.seek(0)
            out.truncate()
            pickle.dump((False, RuntimeError(f"{type(answer[1]).__name__}: {answer[1]}")), out)
    return 0


def _end_with_run(parent: int) -> None:
    """End this process when the run (``parent``) ends, however it ends.

    A run killed outright (``kill -9``, the OOM killer, which picks the run: it holds the rows) tells nobody:
    this process would go on writing to_fix into the dead run's folder for nobody (a process pool's worker
    then stayed, ~60 MB, until the machine restarted). Its own parent changes when the run dies (the orphan
    is given to init), so it looks every ``PARENT_CHECK_SECONDS``.

    A terminal sends Ctrl-C to both processes: the run says it in one line (exit 130); this one ends at once,
    as the signal's default does, rather than print a KeyboardInterrupt traceback under it. It was started
    with SIGINT held back (``hrimport.report.writer``), so a Ctrl-C while it was starting ends it here too.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):  # not on Windows, where nothing was held back
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(1)  # nothing to clean up that the run would want: what it wrote is in the run's private folder

    if os.getppid() != parent:  # the run ended before this process could look
        os._exit(1)
    threading.Thread(target=watch, name="hrimport-end-with-run", daemon=True).start()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
