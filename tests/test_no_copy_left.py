"""A process killed outright leaves no copy of the HR data in the temporary folder.

A month's import is killed by more than Ctrl-C: the OOM killer on a vendor's busy machine, ``kill -9`` from an
operator, a container stopped. Nothing runs after SIGKILL, so whatever the run keeps in files on the way
(every cell of the export, to report the rows the platform refuses; pieces of a big sheet for fastexcel; a
workbook's copy with its blank tail cut off) must be in files without a name, or it stays in ``/tmp`` for
anyone who later gets that folder. Each test runs the real code in a child process whose ``TMPDIR`` is a
folder of its own, kills it with a real SIGKILL at a moment the files are in use, and looks in that folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from hrimport.private_files import ScratchFiles
from tests.staff_files import write_config, write_csv
from tests.test_chunks import varied_rows, write_staff_workbook
from tests.test_reader_extent import write_staff

#: Each script kills its own process with SIGKILL at the moment named in its test (nothing runs after it).
IMPORT_KILLED_WHILE_SENDING = """
import os, signal, sys
from pathlib import Path
from hrimport.config import load_config
from hrimport.imports import import_file

def killed(done, total):  # the first batch answered, the others still to send
    os.kill(os.getpid(), signal.SIGKILL)

import_file(load_config(Path(sys.argv[1])), Path(sys.argv[2]), base_url=sys.argv[3], batch_size=10,
            progress=killed)
"""

SHEET_KILLED_MID_READ = """
import os, signal, sys
from pathlib import Path
from hrimport import reader

reader.STREAM_BYTES = 0  # a big workbook is read a piece of its sheet at a time: this small one too
chunks, streamed = reader.read_spreadsheet_chunks(Path(sys.argv[1]), chunk_rows=25,
                                                  expected_headers=["Employee ID"])
assert streamed
for chunk in chunks:  # the first chunk read, the next pieces written for fastexcel
    os.kill(os.getpid(), signal.SIGKILL)
"""

COPY_KILLED_WHILE_READ = """
import os, signal, sys
from pathlib import Path
from hrimport import reader
from hrimport.reader import workbook

def killed(path, source, *rest):  # the trimmed copy made, fastexcel about to read it
    assert source != path
    os.kill(os.getpid(), signal.SIGKILL)

workbook._fastexcel_grid = killed
reader.read_spreadsheet(Path(sys.argv[1]))
"""


def killed_in(folder: Path, script: str, *args: str | Path, **env: str) -> list[str]:
    """Run ``script`` with ``args`` in a child process whose temporary folder is ``folder / "tmp"``; it must
    die of SIGKILL. What it left in that folder."""
    scratch = folder / "tmp"
    scratch.mkdir()
    child = subprocess.run([sys.executable, "-c", script, *map(str, args)], check=False, cwd=folder,
                           capture_output=True, text=True, timeout=120,
                           env={**os.environ, "TMPDIR": str(scratch), **env})
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    return sorted(str(path.relative_to(scratch)) for path in scratch.rglob("*"))


def test_an_import_killed_while_sending_leaves_no_copy_of_the_export(tmp_path: Path, sandbox: Any) -> None:
    rows = varied_rows()
    config = write_config(tmp_path / "staff.toml", date_order=None)
    source = write_csv(tmp_path / "staff.csv", rows)

    left = killed_in(tmp_path, IMPORT_KILLED_WHILE_SENDING, config, source, sandbox.base_url,
                     HRIMPORT_TOKEN="demo-customer-99")

    assert left == []
    # killed in the middle of sending: the first batch's outcomes were being given while the second was
    # in flight; the other batches were never sent
    assert [r["elements"] for r in sandbox.requests()] == [10, 10]
    assert len(sandbox.staff(99)) == 20 < len(rows)


def test_a_big_sheet_killed_mid_read_leaves_no_piece_of_it(tmp_path: Path) -> None:
    source = write_staff_workbook(tmp_path / "staff.xlsx", varied_rows() * 2, inline_strings=False)
    assert killed_in(tmp_path, SHEET_KILLED_MID_READ, source) == []


def test_a_workbook_killed_while_its_trimmed_copy_is_read_leaves_no_copy(tmp_path: Path) -> None:
    from hrimport.reader.extent import TAIL_CELLS

    source = write_staff(tmp_path / "tailed.xlsx", tail=TAIL_CELLS // 5 + 1)  # a blank tail to cut off first
    assert killed_in(tmp_path, COPY_KILLED_WHILE_READ, source) == []


def test_scratch_files_are_anonymous_here_and_a_private_folder_where_the_system_has_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    with ScratchFiles(["piece-0.xlsx", "piece-1.xlsx"]) as scratch:
        for n, path in enumerate(scratch.paths):
            path.write_bytes(b"cells %d" % n)
        assert [path.read_bytes() for path in scratch.paths] == [b"cells 0", b"cells 1"]
        assert list(tmp_path.iterdir()) == []  # nothing named anywhere
    assert not any(path.exists() for path in scratch.paths)

    # macOS, Windows, a kernel without memfd: caused here by taking the call away (it cannot fail for real)
    monkeypatch.delattr(os, "memfd_create")
    with ScratchFiles(["piece-0.xlsx"]) as scratch:
        scratch.paths[0].write_bytes(b"cells")
        folder = scratch.paths[0].parent
        assert folder.parent == tmp_path and folder.name.startswith("hrimport-")
        assert folder.stat().st_mode & 0o777 == 0o700
    assert list(tmp_path.iterdir()) == []


#: A spool holding a few rows in its buffer when the disk stops taking bytes, dropped as a run ends.
SPOOL_DROPPED_ON_A_FULL_DISK = """
from hrimport.stores import Spool
spool = Spool()
spool.put([{"Employee ID": f"{n:06d}", "Name": "Aisha Rahman"} for n in range(10)])
del spool
print("dropped")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as Linux has it")
def test_a_temporary_file_the_full_disk_refuses_is_dropped_without_a_traceback_on_stderr(tmp_path: Path) -> None:
    # the kernel's limit on how big a process may write a file (64 bytes here: the temporary folder's probe
    # passes) refuses the buffered bytes as a full disk would when the file is closed; cron's log must not get "Exception ignored in: <finalize object>" and a
    # traceback for a file that was to be thrown away
    import resource

    def no_room() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

    done = subprocess.run([sys.executable, "-c", SPOOL_DROPPED_ON_A_FULL_DISK], capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(tmp_path)}, preexec_fn=no_room, timeout=60, check=False)

    assert (done.returncode, done.stdout, done.stderr) == (0, "dropped\n", "")
