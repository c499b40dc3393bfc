"""Where the workbook writers write: in ``<name>.partial``, a folder beside the workbook, renamed over it when done.

xlsxwriter (``constant_memory``) streams each sheet's rows to a file until the workbook is closed, and both it
and openpyxl write each part of the package (a whole sheet's XML) to a file before zipping it. Those files
are named (``mkstemp``: ``tmpk2j4_x9a``, ``openpyxl.abc123``), by default in ``$TMPDIR``, and hold what the
workbook does: ``to_fix`` every cell of the rows to fix, unmasked. A run killed outright while writing its
report (``kill -9``, the OOM killer, a container stopped) would leave them there for anyone who later gets that
folder. In the folder of the workbook they write (the run's report folder: 0700, the files 0600 as ``mkstemp``
makes them) they are where the same data is anyway, and they go with that folder.

They are not loose in it: ``hrimport report ... --output FOLDER`` writes into a folder of the user's, where a
``tmpk2j4_x9a`` left by a kill would say nothing of what it is. The workbook and its passing files are written
in ``report.xlsx.partial/`` (private), as ``run.json`` is written as ``run.json.partial``: once whole, the
workbook is renamed over ``report.xlsx`` and the folder removed. A kill leaves that folder, named for what it
holds, and the ``report.xlsx`` there was before (never a cut one); the next write of the workbook removes it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hrimport.private_files import (
    PARTIAL,
    make_private_folder,
    open_private,
    partial_path,
    remove_partial,
    replace_durably,
    sync_file,
)

__all__ = ["PARTIAL", "partial_workbook", "temporary_files_in", "xlsxwriter_file", "xlsxwriter_options"]

@contextmanager
def partial_workbook(path: Path) -> Iterator[Path]:
    """The path to write the workbook ``path`` at: ``path.name`` in ``<path>.partial/``, where its writer's
    passing files go too (``xlsxwriter_options``, ``temporary_files_in``). When the block ends without an
    error the workbook is flushed to the disk and renamed over ``path`` (``replace_durably``); the folder is
    removed either way (one a killed write left is removed first)."""
    scratch = partial_path(path)
    remove_partial(scratch)
    make_private_folder(scratch)
    try:
        writing = scratch / path.name
        yield writing
        sync_file(writing)  # its writer closed it unsynced: its bytes reach the disk before the rename does
        replace_durably(writing, path)
    finally:
        remove_partial(scratch)


@contextmanager
def xlsxwriter_file(writing: Path) -> Iterator[Any]:
    """The file (0600) an ``xlsxwriter.Workbook`` writes ``writing`` through. A workbook whose zip cannot be
    written (a full disk) is raised as the ``OSError`` it is, where xlsxwriter raises ``FileCreateError``, no
    ``OSError``, which the run's one line for a report not written would miss (a traceback, and exit 1); and
    the half-made zip is let go without another write: collected once the file is closed, it would write its
    end there and print "Exception ignored" and a traceback on stderr (cron's log)."""
    from xlsxwriter.exceptions import FileCreateError

    with open_private(writing, "wb") as fh:
        target = _LetGoFile(fh)
        try:
            yield target
        except FileCreateError as exc:
            target.let_go()
            cause = exc.args[0] if exc.args and isinstance(exc.args[0], OSError) else None
            if cause is None:
                raise
            raise OSError(cause.errno, cause.strerror, cause.filename) from None


class _LetGoFile:
    """``fh`` for a zip writer, until ``let_go``: then every write and seek does nothing."""

    def __init__(self, fh: Any) -> None:
        self._fh = fh
        self._let_go = False

    def let_go(self) -> None:
        self._let_go = True

    def write(self, data: bytes) -> int:
        return len(data) if self._let_go else int(self._fh.write(data))

    def tell(self) -> int:
        return 0 if self._let_go else int(self._fh.tell())

    def seek(self, offset: int, whence: int = 0) -> int:
        return 0 if self._let_go else int(self._fh.seek(offset, whence))

    def flush(self) -> None:
        if not self._let_go:
            self._fh.flush()


def xlsxwriter_options(path: Path, **options: Any) -> dict[str, Any]:
    """``options`` for an ``xlsxwriter.Workbook`` writing ``path``, its passing files beside it (``tmpdir``)."""
    return {**options, "tmpdir": str(path.parent)}


@contextmanager
def temporary_files_in(folder: Path) -> Iterator[None]:
    """``tempfile``'s default folder is ``folder`` for the block: openpyxl names its files there (it takes no
    folder of its own). The setting is the process's; a report is written by one thread at a time, and any
    other file made meanwhile would only land in the same private folder."""
    before = tempfile.tempdir
    tempfile.tempdir = str(folder)
    try:
        yield
    finally:
        tempfile.tempdir = before
