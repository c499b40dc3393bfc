"""Where the workbook writers keep their passing files: beside the workbook, in the run's private folder.

xlsxwriter (``constant_memory``) streams each sheet's rows to a file until the workbook is closed, and both it
and openpyxl write each part of the package (a whole sheet's XML) to a file before zipping it. Those files
are named (``mkstemp``), by default in ``$TMPDIR``, and hold what the workbook does: ``to_fix`` every cell of
the rows to fix, unmasked. A run killed outright while writing its report (``kill -9``, the OOM killer, a
container stopped) would leave them there for anyone who later gets that folder. In the folder of the
workbook they write (the run's report folder: 0700, the files 0600 as ``mkstemp`` makes them) they are where
the same data is anyway, and they go with that folder.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["temporary_files_in", "xlsxwriter_options"]


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
