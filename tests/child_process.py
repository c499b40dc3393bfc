"""Run the ``hrimport`` command in a child process and measure what it cost: peak memory and time.

A memory ceiling can only be measured in a process of its own (the test process already holds pandas,
the fixtures and every earlier test's garbage). Its peak is read from /proc as it runs (``_peak_mb``), and
it is reaped with ``os.wait4`` so children of other tests never count. A child still running at
``timeout`` is killed, so a command that would hang (a named pipe read forever) fails the test instead of
stalling the suite; so is a child whose peak memory passes ``ceiling_mb``, so a regression fails fast
instead of taking the machine's memory.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Finished:
    """What a user of the command sees (exit code, output), and what it cost."""

    exit_code: int
    stdout: str
    stderr: str
    peak_mb: float
    seconds: float

    @property
    def lines(self) -> list[str]:
        """The non-empty lines of stdout and stderr together."""
        return [line for line in (self.stdout + self.stderr).splitlines() if line.strip()]


class TimedOut(AssertionError):
    """The command was still running at its deadline (it was killed)."""


class TooMuchMemory(AssertionError):
    """The command's memory passed its ceiling (it was killed)."""


def _peak_mb(pid: int) -> float:
    """The peak resident memory of a running ``hrimport`` so far (0 if it has just ended, or has not yet
    become hrimport).

    Until the child has replaced itself with ``python -m hrimport`` it is a copy of this (test) process,
    whose memory is not the command's; and the kernel carries that copy's peak into the child's
    ``ru_maxrss`` across exec. So the peak is read from /proc, only once the command line is hrimport's.
    """
    try:
        if b"hrimport" not in Path(f"/proc/{pid}/cmdline").read_bytes():
            return 0.0
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    kib = next((line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")), "0")
    return int(kib) / 1024


def run_hrimport(*args: str | Path, cwd: Path, timeout: float = 120, ceiling_mb: float | None = None) -> Finished:
    """``python -m hrimport ARGS`` in ``cwd``; its exit code, output, peak RSS in MB and seconds.

    Raises ``TimedOut`` past ``timeout`` seconds and ``TooMuchMemory`` past ``ceiling_mb``."""
    out, err = cwd / ".child-stdout", cwd / ".child-stderr"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("HRIMPORT_BASE_URL", None)
    t0 = time.monotonic()
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "hrimport", *map(str, args)], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)
    command = f"hrimport {' '.join(map(str, args))}"
    peak = 0.0
    while True:
        pid, status, _ = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        failure: AssertionError | None = None
        if time.monotonic() - t0 > timeout:
            failure = TimedOut(f"{command} still ran after {timeout} s")
        elif (peak := max(peak, _peak_mb(proc.pid))) > (ceiling_mb or float("inf")):
            failure = TooMuchMemory(f"{command} used {peak:.0f} MB, more than {ceiling_mb:.0f} MB")
        if failure is not None:
            os.kill(proc.pid, signal.SIGKILL)
            os.wait4(proc.pid, 0)
            proc.returncode = -signal.SIGKILL  # reaped here, not by Popen
            raise failure
        time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    seconds = time.monotonic() - t0
    finished = Finished(
        exit_code=proc.returncode,
        stdout=out.read_text(encoding="utf-8", errors="replace"),
        stderr=err.read_text(encoding="utf-8", errors="replace"),
        peak_mb=peak,  # sampled every 20 ms: not ru_maxrss, which holds the pre-exec copy's peak
        seconds=seconds,
    )
    if ceiling_mb is not None and finished.peak_mb > ceiling_mb:
        raise TooMuchMemory(f"{command} used {finished.peak_mb:.0f} MB, more than {ceiling_mb:.0f} MB")
    return finished


@contextmanager
def reaped(process: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """``process`` killed and waited for if it still runs when the block ends (a test failed, or timed out,
    before it ended it): no child outlives its test."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
