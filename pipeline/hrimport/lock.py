"""One run of a job at a time: an ``fcntl.flock`` on a lock file in the job's state folder.

The kernel releases a ``flock`` when its process ends however it ends (``kill -9`` included), so a lock is
never left behind by a crashed run and there is nothing to clean up by hand. The file stays in place
between runs (removing it would let two runs lock two different files); it holds the pid and start time of
the run that holds it, for the message the second run prints.

Example::

    with job_lock(Path(".hrimport"), "monthly-staff"):
        ...   # a second run of "monthly-staff" now raises JobLockedError (exit 3)
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from hrimport.errors import ConfigError, JobLockedError

__all__ = ["job_lock", "lock_path"]


def lock_path(state_dir: Path, job: str) -> Path:
    """The lock file of a job: ``STATE_DIR/JOB.lock`` (the name reduced to safe characters)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", job).strip("._") or "job"
    return state_dir / f"{safe}.lock"


@contextmanager
def job_lock(state_dir: Path, job: str) -> Iterator[Path]:
    """Hold the job's lock for the ``with`` block; raise ``JobLockedError`` at once if another process has it."""
    path = lock_path(state_dir, job)
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        # O_RDWR without O_TRUNC: the holder's pid must stay readable until we own the lock
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise ConfigError(f"cannot create the lock file {path}: {exc.strerror}; check the job's state folder") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise JobLockedError(_locked_message(job, path, _read_holder(fd))) from None
        os.ftruncate(fd, 0)
        started = datetime.now().astimezone().isoformat(timespec="seconds")
        os.pwrite(fd, f"pid={os.getpid()}\nstarted={started}\n".encode(), 0)
        yield path
    finally:
        # closing the descriptor releases the lock (the kernel does the same if we are killed)
        os.close(fd)


def _read_holder(fd: int) -> dict[str, str]:
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace")
    except OSError:
        return {}
    holder = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            holder[key.strip()] = value.strip()
    return holder


def _locked_message(job: str, path: Path, holder: dict[str, str]) -> str:
    pid = holder.get("pid")
    who = f"pid {pid}" if pid else "another process (pid not yet written)"
    since = f", started {holder['started']}" if holder.get("started") else ""
    return (
        f"job {job!r} is already running ({who}{since}; lock {path}). This run did nothing: wait for that "
        f"run to finish, or end it (kill {pid or 'PID'}) if it is stuck; the lock is released when it ends"
    )
