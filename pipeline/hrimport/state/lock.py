"""One run of a job at a time: an operating-system lock on a lock file in the state folder.

The lock is the kernel's, taken through filelock (``flock`` on Linux and macOS, ``LockFileEx`` on
Windows), so it is released when its process ends however it ends (``kill -9`` included): a crashed run
never leaves a lock behind and there is nothing to clean up by hand. Never a "soft" lock (a file whose mere
existence is the lock), which a killed run would leave behind: filelock's fallback to one, on a filesystem
without ``flock``, is turned off, and such a state folder is refused with a ``ConfigError``.

The file stays in place between runs (removing it would let two runs lock two different files). Once the
lock is taken it holds the pid, host and start time of the run that holds it, for the message the second
run prints. Those details start after the file's first byte: on Windows the lock is a byte-range lock on
byte 0, which no other process may read.

Example::

    with job_lock(Path(".hrimport"), "monthly-staff"):
        ...   # a second run of "monthly-staff" now raises JobLockedError (exit 3)
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from filelock import BaseFileLock, Timeout, UnixFileLock, WindowsFileLock

from hrimport.errors import ConfigError, JobLockedError
from hrimport.private_files import FILE_MODE, safe_segment
from hrimport.state.db import make_state_folder

__all__ = ["job_lock", "lock_path"]

# The native lock of this system by name: filelock's FileLock alias would be a soft lock where flock is missing.
_NativeLock: type[BaseFileLock] = WindowsFileLock if sys.platform == "win32" else UnixFileLock
_FIRST_LINE = "hrimport lock\n"  # byte 0 is the one Windows locks; the holder's details follow it
_HOLDER_OFFSET = 1


def lock_path(state_dir: Path, job: str) -> Path:
    """The lock file of a job: ``STATE_DIR/JOB.lock`` (the name reduced to safe characters)."""
    return state_dir / f"{safe_segment(job, 'job', joiner='_')}.lock"


@contextmanager
def job_lock(state_dir: Path, job: str, *, running: str | None = None) -> Iterator[Path]:
    """Hold the job's lock for the ``with`` block; raise ``JobLockedError`` at once if another process has it.

    The lock belongs to this call, not to the process: a second ``job_lock`` of the same job in the same
    process is refused too. ``running``: what the refusal says is running, when not a job of that name
    (the time-off ledger's lock: "a time-off import using this state folder's ledger").
    """
    path = lock_path(state_dir, job)
    make_state_folder(state_dir)
    lock = _NativeLock(
        path, mode=FILE_MODE, blocking=False,  # one attempt: a second run is refused, never queued
        fallback_to_soft=False, preserve_lock_file=True, on_acquired=_write_holder,
    )
    try:
        lock.acquire()
    except Timeout:  # held by another process (or another job_lock of this one)
        raise JobLockedError(_locked_message(running or f"job {job!r}", path, _read_holder(path))) from None
    except OSError as exc:
        raise ConfigError(f"cannot create the lock file {path}: {exc.strerror or exc}; check the job's state "
                          "folder") from None
    try:
        yield path
    finally:
        lock.release()  # the kernel does the same if we are killed


def _write_holder(fd: int) -> None:
    """Called by filelock with the lock file's descriptor, once the lock is ours."""
    started = datetime.now().astimezone().isoformat(timespec="seconds")
    text = f"{_FIRST_LINE}pid={os.getpid()}\nhost={socket.gethostname()}\nstarted={started}\n"
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, text.encode())


def _read_holder(path: Path) -> dict[str, str]:
    try:
        with open(path, "rb") as fh:
            fh.seek(_HOLDER_OFFSET)
            text = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return {}
    holder = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            holder[key.strip()] = value.strip()
    return holder


def _locked_message(running: str, path: Path, holder: dict[str, str]) -> str:
    pid = holder.get("pid")
    who = f"pid {pid}" if pid else "another process (pid not yet written)"
    host = holder.get("host")
    if pid and host and host != socket.gethostname():  # a state folder on a shared drive: kill works there only
        who += f" on {host}"
    since = f", started {holder['started']}" if holder.get("started") else ""
    return (
        f"{running} is already running ({who}{since}; lock {path}). This run did nothing: wait for that "
        f"run to finish, or end it (kill {pid or 'PID'}) if it is stuck; the lock is released when it ends"
    )
