"""Files and folders readable by their owner only, and names that are safe as one path segment.

Reports, run folders, run logs and the state folder hold personal data (issue 4), so every folder hrimport
makes is 0700 and every file 0600. Modes are set explicitly (``fchmod``/``chmod``) so neither the umask
nor an older file's mode decides them. On Windows a mode can only make a file read-only; folders there
inherit their parent's access list, which is the user's profile for the default folders.

Files that hold HR data for a while and that nobody is to read after the run are never named in the
temporary folder, where a process killed outright (SIGKILL, the OOM killer) would leave them: spools are
``tempfile.TemporaryFile``s (no name from the start), and the files another library must open by name
are ``ScratchFiles``.

Job and step names come from job files and become folder and file names (``reports/<job>/``,
``STATE_DIR/<job>.lock``), so ``safe_segment`` is the one rule that keeps such a name inside its folder.

A report's files and ``run.json`` are written whole or not at all (``written_whole``): beside their place as
``<name>.partial``, renamed over the file once complete and flushed. A kill mid-write (SIGKILL, the OOM killer,
a full disk) leaves the file that was there, whole, and a ``.partial`` named for what it holds, which the next
write of that file removes; no reader takes a ``.partial`` for a report (they open files by their names).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from types import TracebackType
from typing import IO, AnyStr, Literal, Self, overload

__all__ = ["FILE_MODE", "FOLDER_MODE", "PARTIAL", "ScratchFiles", "anonymous_file", "make_folder_durably", "make_private_file",
           "make_private_folder", "open_private", "partial_path", "remove_partial", "replace_durably", "safe_segment",
           "sync_file", "sync_folder", "written_whole"]

FOLDER_MODE = 0o700
FILE_MODE = 0o600

#: The ending of what a file (or a workbook's folder) is written as beside its place: ``report.html.partial``.
PARTIAL = ".partial"

_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9._-]+")


def safe_segment(name: str, fallback: str, *, joiner: str = "-") -> str:
    """``name`` as one safe path segment (a job or step name becomes a folder or file name): letters, digits,
    ``.``, ``_`` and ``-`` only, each run of other characters replaced by ``joiner``, leading and trailing
    dots and joiners dropped (no ``..``, no hidden file); ``fallback`` when nothing is left.

    >>> safe_segment("../pay roll/2024", "job")
    'pay-roll-2024'
    >>> safe_segment("../pay roll/2024", "job", joiner="_")
    'pay_roll_2024'
    """
    return _UNSAFE_RUN.sub(joiner, name).strip("." + joiner) or fallback


def make_private_folder(folder: Path) -> Path:
    """Create ``folder`` (and missing parents) with mode 0700, each synced into its parent (``make_folder_durably``);
    an existing folder is set to 0700 too."""
    missing = []
    current = folder
    while not current.exists():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            make_folder_durably(path)
        except FileExistsError:  # another process made it meanwhile: fine, it is chmod-ed below if ours
            pass
    os.chmod(folder, FOLDER_MODE)
    return folder


def make_folder_durably(folder: Path) -> None:
    """``folder.mkdir(mode=0o700)`` (its parent must exist), then the parent synced to the disk, as
    ``replace_durably`` does for a rename: a run's folder holds its journal and run.json, which a power cut must
    not take away with a folder name the disk never got. Raises ``FileExistsError`` when it exists."""
    folder.mkdir(mode=FOLDER_MODE)
    sync_folder(folder.parent)


def make_private_file(path: Path, *, keep_existing_mode: bool = False) -> Path:
    """Create ``path`` empty with mode 0600 when missing, or set an existing file to 0600; never truncates.

    For files another library then opens by name (a SQLite database), so they are private from their
    first byte on. ``keep_existing_mode``: an existing file keeps its mode (a file the user chose, perhaps
    shared with a group on purpose).
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | (os.O_EXCL if keep_existing_mode else 0), FILE_MODE)
    except FileExistsError:
        return path
    try:
        _set_private_mode(fd, path)
    finally:
        os.close(fd)
    return path


@overload
def open_private(
    path: Path, mode: Literal["w"], *, encoding: str = ..., newline: str | None = ...
) -> IO[str]: ...
@overload
def open_private(path: Path, mode: Literal["wb"]) -> IO[bytes]: ...
def open_private(
    path: Path, mode: Literal["w", "wb"], *, encoding: str = "utf-8", newline: str | None = None
) -> IO[str] | IO[bytes]:
    """Open ``path`` for writing, truncated, with mode 0600 whatever the umask or the old file's mode."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        _set_private_mode(fd, path)
    except BaseException:
        os.close(fd)
        raise
    if mode == "wb":
        return open(fd, "wb")
    return open(fd, "w", encoding=encoding, newline=newline)


def anonymous_file(owner: object) -> IO[bytes]:
    """A ``tempfile.TemporaryFile`` (no name from the start) closed, and so gone, when ``owner`` is dropped.
    Closing flushes what its buffer still holds, which a full disk refuses: that error is dropped with the file,
    where a finalizer's would print "Exception ignored" and a traceback on stderr (cron's log) as the run ends."""
    file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by the finalizer)
    weakref.finalize(owner, _close_quietly, file)
    return file


def _close_quietly(file: IO[bytes]) -> None:
    try:
        file.close()
    except OSError:
        pass  # the bytes the disk did not take were to be thrown away with the file


def partial_path(path: Path) -> Path:
    """Where ``path`` is written before it is whole: ``<name>.partial`` beside it."""
    return path.with_name(path.name + PARTIAL)


def remove_partial(partial: Path) -> None:
    """``partial`` and what it holds, if there: a folder (a workbook's), a file, or a link of that name (only
    itself, never what it points to)."""
    if partial.is_dir() and not partial.is_symlink():
        shutil.rmtree(partial, ignore_errors=True)
    else:
        partial.unlink(missing_ok=True)


@overload
def written_whole(
    path: Path, mode: Literal["w"] = ..., *, encoding: str = ..., newline: str | None = ...
) -> AbstractContextManager[IO[str]]: ...
@overload
def written_whole(path: Path, mode: Literal["wb"]) -> AbstractContextManager[IO[bytes]]: ...
def written_whole(
    path: Path, mode: Literal["w", "wb"] = "w", *, encoding: str = "utf-8", newline: str | None = None
) -> AbstractContextManager[IO[str]] | AbstractContextManager[IO[bytes]]:
    """A file to write ``path``'s content in, text (``"w"``) or bytes (``"wb"``): ``<name>.partial`` beside it
    (mode 0600; one a killed write left is removed first), flushed to the disk and renamed over ``path``
    (``replace_durably``) when the block ends without an error, removed when it ends with one. ``path`` is
    never seen cut: it is the file that was there until the new one is whole."""
    if mode == "wb":
        return _written_whole(path, lambda partial: open_private(partial, "wb"))
    return _written_whole(path, lambda partial: open_private(partial, "w", encoding=encoding, newline=newline))


@contextmanager
def _written_whole(path: Path, opened: Callable[[Path], IO[AnyStr]]) -> Iterator[IO[AnyStr]]:
    partial = partial_path(path)
    remove_partial(partial)
    try:
        with opened(partial) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())  # the rename must not reach the disk before the bytes it names (a power cut)
        replace_durably(partial, path)
    except BaseException:  # a full disk, an error, Ctrl-C: no cut file left beside the others
        partial.unlink(missing_ok=True)
        raise


def replace_durably(source: Path, path: Path) -> None:
    """``os.replace(source, path)``, then the folder holding ``path`` synced to the disk, so that once this
    returns a power cut cannot take the rename back (the old file, or none, would be found after it). Where a
    folder cannot be opened (Windows) or its file system does not sync folders, the rename is left to it.
    ``source``'s bytes must be on the disk already (``written_whole``'s fsync, ``sync_file``)."""
    os.replace(source, path)
    sync_folder(path.parent)


def sync_folder(folder: Path) -> None:
    """Flush ``folder``'s names (a file renamed or a folder made in it) to the disk. Where a folder cannot be
    opened (Windows) or its file system does not sync folders, they are left to it."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # a folder cannot be opened as a file here: nothing more can be asked of the system
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):  # a file system that syncs no folders
            raise  # the disk failing (EIO): said as any write that failed
    finally:
        os.close(fd)


def sync_file(path: Path) -> None:
    """Flush ``path``'s bytes to the disk (a file another library wrote and closed, before it is renamed)."""
    fd = os.open(path, os.O_RDWR)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _set_private_mode(fd: int, path: Path) -> None:
    # os.fchmod exists on Windows only from Python 3.13; there chmod by name does the same (the read-only flag)
    if hasattr(os, "fchmod"):
        os.fchmod(fd, FILE_MODE)
    else:
        os.chmod(path, FILE_MODE)


class ScratchFiles:
    """Files another library opens by name (fastexcel reads only paths) that hold HR data for a moment: a
    piece of a sheet, a workbook's trimmed copy. Where the system has anonymous files in memory (Linux's
    ``memfd``, named ``/proc/self/fd/N`` while open), they are those, so a process killed outright leaves no
    copy behind; elsewhere, files in a temporary folder only their owner can open. ``paths``: one per name
    given; all gone on ``close``.
    """

    def __init__(self, names: Sequence[str]) -> None:
        self._fds: list[int] = []
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        try:
            for name in names:
                self._fds.append(os.memfd_create(f"hrimport-{name}", os.MFD_CLOEXEC))
            self.paths = [Path(f"/proc/self/fd/{fd}") for fd in self._fds]
            if all(path.exists() for path in self.paths):
                return
        except (AttributeError, OSError):  # not Linux, or a kernel without memfd
            pass
        self._close_fds()
        self._folder = tempfile.TemporaryDirectory(prefix="hrimport-")
        self.paths = [Path(self._folder.name) / name for name in names]

    def close(self) -> None:
        self._close_fds()
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def _close_fds(self) -> None:
        while self._fds:
            os.close(self._fds.pop())

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
