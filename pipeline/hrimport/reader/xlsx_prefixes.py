"""An XLSX whose parts name SpreadsheetML's namespace with a prefix, read as one written without it.

XML lets a writer spell the sheet's elements ``<x:row>``, ``<x:c r="A2" s="1">`` instead of ``<row>``, ``<c>``:
Microsoft's Open XML SDK does, and so do the HR and payroll systems built on it. The workbook libraries read
such a file, but what they lose and the reader finds in the parts' XML itself (a number's zero-padded format,
an error cell, a formula saved without its result, a sheet's real extent) is looked for as ``<c ...>``: in a
prefixed file none of it was found, and an id ``000123`` shown through the format ``000000`` was sent as
``123``. So such a workbook is copied once with the prefix taken off, and everything reads the copy.

The same copy writes the tags of a part whose attributes are quoted otherwise than Excel quotes them
(``xlsx_quotes``: ``<row r='3' hidden='1'>``) as Excel writes them.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path
from typing import IO, NamedTuple

from hrimport.errors import InputFileError
from hrimport.reader.xlsx_quotes import as_excel_writes, written_otherwise

_MAIN = b"http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_PREFIXED = re.compile(rb"""\sxmlns:([A-Za-z_][\w.-]*)\s*=\s*["']""" + re.escape(_MAIN) + b"""["']""")
_DEFAULT = re.compile(rb'\sxmlns="')
#: The parts whose elements the reader or the libraries look at: the workbook, styles, shared strings, sheets.
_PARTS = re.compile(r"xl/(?:workbook|styles|sharedStrings|worksheets/[^/]+)\.xml")
_HEAD = 4096  # a part's root element, with its namespace declarations, is in its first bytes
_CHUNK = 1 << 20


class OddPart(NamedTuple):
    """How a part is written otherwise than Excel writes it: the prefix naming SpreadsheetML's namespace (None:
    the default namespace), and whether its tags are quoted or spaced otherwise (``xlsx_quotes``)."""

    prefix: bytes | None
    quoted_otherwise: bool


def odd_parts(path: Path) -> dict[str, OddPart]:
    """The parts of the workbook at ``path`` that name SpreadsheetML's namespace with a prefix, or whose tags are
    quoted otherwise than Excel quotes them: what a copy (``readable_xlsx``) writes as Excel writes it."""
    found = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if _PARTS.fullmatch(name):
                with archive.open(name) as part:
                    head = part.read(_HEAD)
                declared, quoted = _PREFIXED.search(head), written_otherwise(head[: head.rfind(b"<")])
                if declared or quoted:
                    found[name] = OddPart(declared.group(1) if declared else None, quoted)
    return found


def readable_xlsx(path: Path, parts: dict[str, OddPart], target: Path) -> Path:
    """A copy of the workbook at ``path`` whose ``parts`` (``odd_parts``) are written as Excel writes them: their
    tags quoted as Excel quotes them, SpreadsheetML's namespace the default one, their elements without the
    prefix; a megabyte of a part at a time."""
    with zipfile.ZipFile(path) as original, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED,
                                                            compresslevel=1) as copy:
        for info in original.infolist():
            odd = parts.get(info.filename)
            with original.open(info) as read, copy.open(info.filename, "w", force_zip64=True) as write:
                if odd is None:
                    shutil.copyfileobj(read, write, _CHUNK)
                else:
                    _copy_as_excel_writes(path, info.filename, read, write, odd)
    return target


def _copy_as_excel_writes(path: Path, name: str, read: IO[bytes], write: IO[bytes], odd: OddPart) -> None:
    requote = as_excel_writes if odd.quoted_otherwise else _as_it_is
    data = read.read(_CHUNK)
    more = read.read(_CHUNK)
    # '<' is never literal in XML text or attribute values: every '<' begins a tag. The text from the last '<'
    # on waits for the next megabyte, so that no tag is cut in two.
    cut = data.rfind(b"<") if more else len(data)
    if cut <= 0:
        cut = len(data)
    head, data = requote(data[:cut]), data[cut:] + more
    unprefix = _as_it_is
    if odd.prefix is not None:
        declaration = b"xmlns:" + odd.prefix + b'="' + _MAIN + b'"'
        root_start = head[: head.find(b">", head.find(declaration)) + 1]
        if _DEFAULT.search(root_start):  # the prefix cannot become the default: another namespace has it
            raise InputFileError(
                f"{path}: its part {name} is written in a form the reader cannot check (two namespaces for its "
                "elements); open it in Excel and save it again"
            )
        head = head.replace(declaration, b'xmlns="' + _MAIN + b'"', 1)
        tag = re.compile(rb"<(/?)" + re.escape(odd.prefix) + rb":")

        def unprefix(xml: bytes) -> bytes:
            return tag.sub(rb"<\1", xml)

    write.write(unprefix(head))
    while data:
        more = read.read(_CHUNK)
        cut = data.rfind(b"<") if more else len(data)
        if cut <= 0:
            cut = len(data)
        write.write(unprefix(requote(data[:cut])))
        data = data[cut:] + more


def _as_it_is(xml: bytes) -> bytes:
    return xml
