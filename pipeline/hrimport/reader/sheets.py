"""Which sheet of a workbook to read: by name or position, else the first visible sheet of cells.

A workbook's first sheet is not always the table: exports hide lookup lists in front of it and put chart
sheets first. With no ``sheet`` set the first sheet that is visible and holds cells is read, and when
sheets before it were skipped the reader says so (``SourceInfo.sheet_note``) instead of choosing silently.
"""

from __future__ import annotations

import posixpath
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple
from xml.etree import ElementTree

from hrimport.errors import InputFileError
from hrimport.listing import SHOWN, quoted, shorten, some
from hrimport.reader.grid import normalize_header

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG = "{http://schemas.openxmlformats.org/package/2006/relationships}"


@dataclass(frozen=True)
class Sheet:
    """One sheet as the workbook lists it."""

    name: str
    visible: bool = True
    kind: str = "worksheet"  # worksheet | chart | dialog | macro
    part: str | None = None  # XLSX: the archive member holding its cells


@dataclass(frozen=True)
class SheetChoice:
    index: int
    note: str | None = None  # why this sheet and not the first one, when sheets were skipped


def xlsx_sheets(archive: zipfile.ZipFile) -> list[Sheet]:
    """The sheets ``xl/workbook.xml`` lists, in order, with their visibility, kind and archive member."""
    workbook, rels = _workbook_relationships(archive)
    root = ElementTree.fromstring(archive.read(workbook))
    sheets = []
    for element in root.iterfind(f"{_MAIN}sheets/{_MAIN}sheet"):
        target, kind = rels.get(element.get(f"{_REL}id", ""), (None, ""))
        sheets.append(
            Sheet(
                name=element.get("name", ""),
                visible=element.get("state", "visible") == "visible",
                kind={"chartsheet": "chart", "dialogsheet": "dialog", "macrosheet": "macro"}.get(
                    kind.rsplit("/", 1)[-1], "worksheet"
                ),
                part=target,
            )
        )
    return sheets


def xlsx_shared_strings(archive: zipfile.ZipFile) -> str | None:
    """The archive member holding the workbook's shared strings table, if it has one."""
    _, rels = _workbook_relationships(archive)
    return next((target for target, kind in rels.values() if kind.endswith("/sharedStrings")), None)


class WorkbookSettings(NamedTuple):
    """Two settings of an XLSX's ``xl/workbook.xml`` that change what its cells' values mean."""

    #: 1904 when the workbook counts its dates from 1904-01-01 (Mac Excel's date system, ``<workbookPr
    #: date1904="1"/>``), else 1900
    date_system: int
    #: whether it asks the program opening it to calculate every formula again (``<calcPr
    #: fullCalcOnLoad="1"/>``), as programs that write formulas without calculating them do (xlsxwriter,
    #: openpyxl): the value saved with a formula is then a stand-in (xlsxwriter's 0) or whatever the program was
    #: told, not a result. The standard has the program that calculates the workbook on opening clear the mark;
    #: LibreOffice drops it, whether it calculated or not (7.4, by default, does not)
    asks_recalculation: bool


def xlsx_workbook_settings(archive: zipfile.ZipFile) -> WorkbookSettings:
    """The date system and the recalculation mark of the workbook in ``archive``, from one read of its part."""
    workbook, _ = _workbook_relationships(archive)
    root = ElementTree.fromstring(archive.read(workbook))
    properties, calculation = root.find(f"{_MAIN}workbookPr"), root.find(f"{_MAIN}calcPr")
    return WorkbookSettings(
        1904 if properties is not None and properties.get("date1904") in ("1", "true") else 1900,
        calculation is not None and calculation.get("fullCalcOnLoad", "0").strip() in ("1", "true"),
    )


def _workbook_relationships(archive: zipfile.ZipFile) -> tuple[str, dict[str, tuple[str, str]]]:
    """The workbook part (``xl/workbook.xml`` unless the package says otherwise) and its relationships."""
    root_rels = _relationships(archive, "_rels/.rels", "")
    workbook = next((t for t, kind in root_rels.values() if kind.endswith("/officeDocument")), "xl/workbook.xml")
    folder = posixpath.dirname(workbook)
    return workbook, _relationships(
        archive, posixpath.join(folder, "_rels", posixpath.basename(workbook) + ".rels"), folder
    )


def _relationships(archive: zipfile.ZipFile, member: str, folder: str) -> dict[str, tuple[str, str]]:
    """Relationship id -> (archive member it targets, relationship type)."""
    try:
        root = ElementTree.fromstring(archive.read(member))
    except KeyError:
        return {}
    found = {}
    for rel in root.iterfind(f"{_PKG}Relationship"):
        target = rel.get("Target", "")
        member_path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(
            posixpath.join(folder, target)
        )
        found[rel.get("Id", "")] = (member_path, rel.get("Type", ""))
    return found


def choose_sheet(path: Path, sheets: list[Sheet], sheet: str | int | None) -> SheetChoice:
    """The sheet to read: ``sheet`` by name (exact, then ignoring case) or 0-based position, else the
    first visible sheet of cells."""
    names = [s.name for s in sheets]
    listed = quoted(names, quote=lambda n: f"'{n}'")
    if not sheets:
        raise InputFileError(f"{path} is empty (it has no sheets); export the data again")
    if sheet is None:
        index = next((i for i, s in enumerate(sheets) if s.visible and s.kind == "worksheet"), None)
        if index is None:
            raise InputFileError(
                f"{path} has no visible sheet of cells (its sheets are: {listed}); unhide the sheet to "
                "read in Excel, or name it with the 'sheet' setting"
            )
        note = None
        if index:
            skipped = some([f"'{shorten(s.name)}' ({_why_skipped(s)})" for s in sheets[:min(index, SHOWN)]], index)
            note = (
                f"Read sheet '{sheets[index].name}', the first visible sheet of cells; skipped {skipped}. "
                "Set 'sheet' to read another one."
            )
        return SheetChoice(index, note)
    if isinstance(sheet, int):
        if not 0 <= sheet < len(sheets):
            raise InputFileError(
                f"{path} has no sheet number {sheet} (counting from 0); its sheets are: {listed}"
            )
        index = sheet
    else:
        matches = [i for i, n in enumerate(names) if n == sheet] or [
            i for i, n in enumerate(names) if normalize_header(n) == normalize_header(sheet)
        ]
        if not matches:
            raise InputFileError(f"{path} has no sheet '{sheet}'; its sheets are: {listed}")
        index = matches[0]
    if sheets[index].kind != "worksheet":
        raise InputFileError(
            f"{path}: sheet '{sheets[index].name}' is a {sheets[index].kind} sheet, not a table of cells; "
            f"its sheets are: {listed}"
        )
    return SheetChoice(index)


def _why_skipped(sheet: Sheet) -> str:
    if sheet.kind != "worksheet":
        return f"a {sheet.kind} sheet"
    return "hidden"
