"""Create report folders and files readable by their owner only (issue 4: reports hold personal data).

Modes are set explicitly (``fchmod``/``chmod``) so neither the umask nor an older file's mode decides them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Literal, overload

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def make_private_folder(folder: Path) -> Path:
    """Create ``folder`` (and missing parents) with mode 0700; an existing folder is set to 0700 too."""
    missing = []
    current = folder
    while not current.exists():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=FOLDER_MODE)
        except FileExistsError:  # another process made it meanwhile: fine, it is chmod-ed below if ours
            pass
    os.chmod(folder, FOLDER_MODE)
    return folder


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
        os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    if mode == "wb":
        return open(fd, "wb")
    return open(fd, "w", encoding=encoding, newline=newline)
