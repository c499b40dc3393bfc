"""An XLSX whose parts name SpreadsheetML's namespace with a prefix, read as one written without it.

XML lets a writer spell the sheet's elements ``<x:row>``, ``<x:c r="A2" s="1">`` instead of ``<row>``, ``<c>``:
Microsoft's Open XML SDK does, and so do the HR and payroll systems built on it. The workbook libraries read
such a file, but what they lose and the reader finds in the parts' XML itself (a number's zero-padded format,
an error cell, a formula saved without its result, a sheet's real extent) is looked for as ``<c ...>``: in a
prefixed file none of it was found, and an id ``000123`` shown through the format ``000000`` was sent as
``123``. So such a workbook is copied once with the prefix taken off, and everything reads the copy.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path
from typing import IO

from hrimport.errors import InputFileError

_MAIN = b"http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_PREFIXED = re.compile(rb'\sxmlns:([A-Za-z_][\w.-]*)="' + re.escape(_MAIN) + b'"')
_DEFAULT = re.compile(rb'\sxmlns="')
#: The parts whose elements the reader or the libraries look at: the workbook, styles, shared strings, sheets.
_PARTS = re.compile(r"xl/(?:workbook|styles|sharedStrings|worksheets/[^/]+)\.xml")
_HEAD = 4096  # a part's root element, with its namespace declarations, is in its first bytes
_CHUNK = 1 << 20


def prefixed_parts(path: Path) -> dict[str, bytes]:
    """The parts of the workbook at ``path`` that name SpreadsheetML's namespace with a prefix, and the prefix."""
    found = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if _PARTS.fullmatch(name):
                with archive.open(name) as part:
                    declared = _PREFIXED.search(part.read(_HEAD))
                if declared:
                    found[name] = declared.group(1)
    return found


def unprefixed_xlsx(path: Path, prefixes: dict[str, bytes], target: Path) -> Path:
    """A copy of the workbook at ``path`` whose parts ``prefixes`` (``prefixed_parts``) name SpreadsheetML's
    namespace as the default one, their elements without the prefix; a megabyte of a part at a time."""
    with zipfile.ZipFile(path) as original, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED,
                                                            compresslevel=1) as copy:
        for info in original.infolist():
            prefix = prefixes.get(info.filename)
            with original.open(info) as read, copy.open(info.filename, "w", force_zip64=True) as write:
                if prefix is None:
                    shutil.copyfileobj(read, write, _CHUNK)
                else:
                    _copy_without_prefix(path, info.filename, read, write, prefix)
    return target


def _copy_without_prefix(path: Path, name: str, read: IO[bytes], write: IO[bytes], prefix: bytes) -> None:
    tag = re.compile(rb"<(/?)" + re.escape(prefix) + rb":")
    declaration = b"xmlns:" + prefix + b'="' + _MAIN + b'"'
    data = read.read(_CHUNK)
    root_start = data[: data.find(b">", data.find(declaration)) + 1]
    if _DEFAULT.search(root_start):  # the prefix cannot become the default: another namespace has it
        raise InputFileError(
            f"{path}: its part {name} is written in a form the reader cannot check (two namespaces for its "
            "elements); open it in Excel and save it again"
        )
    data = data.replace(declaration, b'xmlns="' + _MAIN + b'"', 1)
    while data:
        # '<' is never literal in XML text or attribute values: every '<x:' and '</x:' is an element's tag.
        # The text from the last '<' on waits for the next megabyte, so that no tag is cut in two.
        more = read.read(_CHUNK)
        cut = data.rfind(b"<") if more else len(data)
        if cut <= 0:
            cut = len(data)
        write.write(tag.sub(rb"<\1", data[:cut]))
        data = data[cut:] + more
