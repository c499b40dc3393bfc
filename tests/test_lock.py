"""The per-job lock: a second process is refused at once; a killed holder leaves nothing behind."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrimport.errors import JobLockedError
from hrimport.state.lock import job_lock, lock_path

HOLDER = """
import sys, time
from pathlib import Path
from hrimport.state.lock import job_lock
with job_lock(Path(sys.argv[1]), sys.argv[2]):
    print("locked", flush=True)
    sys.stdin.readline()   # hold the lock until the test says so (or kills us)
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock of job 'monthly' in ``tmp_path / 'state'``."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "state"), "monthly"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "locked"
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()


def test_a_second_run_is_refused_at_once_naming_the_holder(holder: subprocess.Popen[str], tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(JobLockedError) as caught, job_lock(tmp_path / "state", "monthly"):
        pass
    assert time.monotonic() - started < 1  # refused, not waited
    assert caught.value.exit_code == 3
    message = str(caught.value)
    assert f"pid {holder.pid}" in message
    assert "'monthly' is already running" in message
    assert "started 20" in message  # the holder's start time


def test_a_lock_held_by_a_killed_process_is_free_at_once(holder: subprocess.Popen[str], tmp_path: Path) -> None:
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    with job_lock(tmp_path / "state", "monthly") as path:
        assert f"pid={os.getpid()}" in path.read_text()


def test_another_job_is_not_blocked(holder: subprocess.Popen[str], tmp_path: Path) -> None:
    with job_lock(tmp_path / "state", "weekly"):
        pass


def test_the_lock_is_released_when_the_holder_finishes(holder: subprocess.Popen[str], tmp_path: Path) -> None:
    assert holder.stdin is not None
    holder.stdin.write("done\n")
    holder.stdin.flush()
    holder.wait(timeout=10)
    with job_lock(tmp_path / "state", "monthly"):
        pass
    assert lock_path(tmp_path / "state", "monthly").exists()  # kept between runs, by design


def test_runs_one_after_the_other_in_one_process(tmp_path: Path) -> None:
    for _ in range(3):
        # flock is per open file: even this process is refused a second time
        with job_lock(tmp_path, "monthly"), pytest.raises(JobLockedError), job_lock(tmp_path, "monthly"):
            pass


def test_a_job_name_becomes_one_safe_file_name(tmp_path: Path) -> None:
    assert lock_path(tmp_path, "../pay roll/2024").parent == tmp_path
    assert lock_path(tmp_path, "../pay roll/2024").name == "pay_roll_2024.lock"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_the_lock_file_is_private_and_names_its_holder(tmp_path: Path) -> None:
    with job_lock(tmp_path / "state", "monthly") as path:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        text = path.read_text()
    assert f"pid={os.getpid()}\n" in text and f"host={socket.gethostname()}\n" in text and "started=20" in text
