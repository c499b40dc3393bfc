"""Hostile files: every kind of file an unattended monthly run may be handed, through the real command.

Each kind is a real file, written here by a real writer (csv, xlsxwriter, openpyxl, odfpy, xlwt,
msoffcrypto's encryption, zipfile) or as real bytes, and checked with ``hrimport staff validate CONFIG
FILE`` run as a user runs it, in a child process whose peak memory is measured (``tests.child_process``).
A file that cannot be read as asked is refused with exactly one line on stderr naming the problem and how
to fix it, exit 2; a file that can be read gives each row its outcome. Never a traceback, never a line
longer than a person reads, and memory under a ceiling whatever the file.

The exact wording of each refusal is pinned by the reader's own tests (``test_reader*.py``); here every
kind is held to the contract. The children run a few at a time: about a minute on an idle 2-core machine,
most of it each child importing hrimport.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import random
import re
import struct
import zipfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import xlsxwriter
import xlwt
from msoffcrypto.format.ooxml import OOXMLFile
from odf.opendocument import OpenDocumentSpreadsheet
from odf.table import Table, TableCell, TableRow
from odf.text import P
from openpyxl.utils import get_column_letter

from tests.child_process import Finished, run_hrimport
from tests.staff_files import HEADER, person, write_config, write_csv
from tests.test_reader import SPREADSHEET_2003, STRICT_NAMESPACES

# The first test waits for every kind's child: the whole suite's time, bounded here.
pytestmark = [pytest.mark.hostile, pytest.mark.timeout(600)]

#: A run reading a small file peaks at ~200 MB (pandas, pyarrow and the readers imported).
SMALL_RUN_MB = 400
#: The longest line a person should have to read in a terminal or a cron mail.
LONGEST_LINE = 500
#: Children at a time: the machine has two cores, and each child spends its first second importing.
PARALLEL = 3

ROWS = [person(1), person(2)]


# ------------------------------------------------------------------------------------------ file builders


def write_bytes(data: bytes) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_bytes(data)

    return write


def csv_text(rows: list[dict[str, str]] = ROWS, header: list[str] = HEADER) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header, extrasaction="ignore", lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def write_text(text: str, encoding: str = "utf-8") -> Callable[[Path], None]:
    return write_bytes(text.encode(encoding))


def xlsx_bytes(build: Callable[[xlsxwriter.Workbook, Any], None] | None = None,
               rows: list[dict[str, str]] = ROWS) -> bytes:
    """A staff workbook by xlsxwriter; ``build(workbook, sheet)`` adds to it before it is closed."""
    buffer = io.BytesIO()
    workbook = xlsxwriter.Workbook(buffer, {"in_memory": True})
    sheet = workbook.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER, workbook.add_format({"bold": True}))  # cell style 1, used by styled_tail
    for r, row in enumerate(rows, start=1):
        sheet.write_row(r, 0, [row[h] for h in HEADER])
    if build is not None:
        build(workbook, sheet)
    workbook.close()
    return buffer.getvalue()


def write_xlsx(build: Callable[[xlsxwriter.Workbook, Any], None] | None = None,
               rows: list[dict[str, str]] = ROWS) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_bytes(xlsx_bytes(build, rows))

    return write


def write_openpyxl(rows: list[dict[str, str]]) -> Callable[[Path], None]:
    """The staff export by openpyxl, the other writer HR scripts use."""

    def write(path: Path) -> None:
        workbook = openpyxl.Workbook()
        sheet = workbook.active
        assert sheet is not None
        sheet.title = "Staff"
        sheet.append(HEADER)
        for row in rows:
            sheet.append([row[h] for h in HEADER])
        workbook.save(path)

    return write


def with_parts(base: bytes, changes: dict[str, Callable[[bytes], bytes] | bytes | None]) -> bytes:
    """The workbook ``base`` with archive members replaced or added (bytes), changed (a function of the
    old bytes) or removed (None)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            change = changes.get(name, source.read(name))
            if callable(change):
                change = change(source.read(name))
            if change is not None:
                target.writestr(name, change)
        for name, change in changes.items():
            if isinstance(change, bytes) and name not in source.namelist():
                target.writestr(name, change)
    return out.getvalue()


SHEET = "xl/worksheets/sheet1.xml"


def sheet_with_doctype(doctype: bytes, cell_text: bytes) -> Callable[[bytes], bytes]:
    """A sheet part with a DOCTYPE declaring entities, and a cell B2 (the name) holding ``cell_text``."""

    def change(xml: bytes) -> bytes:
        head, body = xml.split(b"?>", 1)
        body = re.sub(rb'<c r="B2"[^>]*>.*?</c>', b'<c r="B2" t="inlineStr"><is><t>' + cell_text + b"</t></is></c>",
                      body, count=1)
        return head + b"?>" + doctype + body

    return change


LAUGHS = b"".join(
    b'<!ENTITY l%d "%s">' % (i, b"ha" * 10 if i == 0 else b"&l%d;" % (i - 1) * 10) for i in range(10)
)


def billion_laughs(root: bytes) -> bytes:
    return b"<!DOCTYPE " + root + b" [" + LAUGHS + b"]>"


def write_xxe(path: Path) -> None:
    secret = path.with_name("secret.txt")
    secret.write_text("SECRET-FROM-XXE")
    doctype = b'<!DOCTYPE worksheet [<!ENTITY xxe SYSTEM "' + secret.as_uri().encode() + b'">]>'
    path.write_bytes(with_parts(xlsx_bytes(), {SHEET: sheet_with_doctype(doctype, b"&xxe;")}))


def write_xxe_in_workbook_part(path: Path) -> None:
    secret = path.with_name("secret.txt")
    secret.write_text("SECRET-FROM-XXE")
    doctype = b'<!DOCTYPE workbook [<!ENTITY xxe SYSTEM "' + secret.as_uri().encode() + b'">]>'

    def change(xml: bytes) -> bytes:
        head, body = xml.split(b"?>", 1)
        return head + b"?>" + doctype + body.replace(b'name="Staff"', b'name="&xxe;"')

    path.write_bytes(with_parts(xlsx_bytes(), {"xl/workbook.xml": change}))


def write_billion_laughs_in_shared_strings(path: Path) -> None:
    def change(xml: bytes) -> bytes:
        head, body = xml.split(b"?>", 1)
        return head + b"?>" + billion_laughs(b"sst") + body.replace(b"<t>Person 1</t>", b"<t>&l9;</t>", 1)

    path.write_bytes(with_parts(xlsx_bytes(), {"xl/sharedStrings.xml": change}))


def write_external_links(path: Path) -> None:
    """A workbook whose names come from another workbook, as Excel saves it: the formula refers to
    external book [1], whose part (and the cached values) are in ``xl/externalLinks``."""

    def build(workbook: xlsxwriter.Workbook, sheet: Any) -> None:
        sheet.write_formula("B2", "='C:\\HR\\[names.xlsx]Sheet1'!$A$1", None, "Person 1")

    link = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            b'<externalLink xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
            b'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
            b'<externalBook r:id="rId1"><sheetNames><sheetName val="Sheet1"/></sheetNames><sheetDataSet>'
            b'<sheetData sheetId="0"><row r="1"><cell r="A1" t="str"><v>Person 1</v></cell></row></sheetData>'
            b"</sheetDataSet></externalBook></externalLink>")
    link_rels = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                 b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                 b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                 b'relationships/externalLinkPath" Target="file:///C:/HR/names.xlsx" TargetMode="External"/>'
                 b"</Relationships>")
    path.write_bytes(with_parts(xlsx_bytes(build), {
        "xl/externalLinks/externalLink1.xml": link,
        "xl/externalLinks/_rels/externalLink1.xml.rels": link_rels,
        "xl/workbook.xml": lambda xml: xml.replace(
            b"</sheets>", b'</sheets><externalReferences><externalReference r:id="rId99"/></externalReferences>'
        ).replace(b' fullCalcOnLoad="1"', b""),  # calculated: xlsxwriter's request to calculate again dropped
        "xl/_rels/workbook.xml.rels": lambda xml: xml.replace(
            b"</Relationships>",
            b'<Relationship Id="rId99" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            b'externalLink" Target="externalLinks/externalLink1.xml"/></Relationships>'),
        "[Content_Types].xml": lambda xml: xml.replace(
            b"</Types>",
            b'<Override PartName="/xl/externalLinks/externalLink1.xml" ContentType="application/'
            b'vnd.openxmlformats-officedocument.spreadsheetml.externalLink+xml"/></Types>'),
        SHEET: lambda xml: xml.replace(b"<f>'C:\\HR\\[names.xlsx]Sheet1'!$A$1</f>", b"<f>[1]Sheet1!$A$1</f>"),
    }))


def write_encrypted(path: Path) -> None:
    plain = path.with_name("plain.xlsx")
    plain.write_bytes(xlsx_bytes())
    with open(plain, "rb") as source, open(path, "wb") as target:
        OOXMLFile(source).encrypt("secret", target)


def web_page(rows: list[dict[str, str]] = ROWS) -> str:
    """The staff table as a payroll system saves "Excel": a <meta> line and kilobytes of styles, then the table."""
    styles = "".join(f'.xl{n} {{mso-number-format:"\\@";}}\n' for n in range(60, 160))
    cells = ["".join(f"<td>{value}</td>" for value in values) for values in [HEADER, *([r[h] for h in HEADER] for r in rows)]]
    return ('<meta http-equiv="Content-Type" content="text/html; charset=utf-8">\n<style>\n' + styles + "</style>\n"
            + "<table>" + "".join(f"<tr>{row}</tr>" for row in cells) + "</table>")


def write_strict_open_xml(path: Path) -> None:
    def strict(xml: bytes) -> bytes:
        for usual, iso in STRICT_NAMESPACES.items():
            xml = xml.replace(usual, iso)
        return xml

    with zipfile.ZipFile(io.BytesIO(xlsx_bytes())) as source:
        names = source.namelist()
    path.write_bytes(with_parts(xlsx_bytes(), dict.fromkeys(names, strict)))


def ods_bytes(rows: list[list[str]], tail: Callable[[Table], None] | None = None) -> bytes:
    doc = OpenDocumentSpreadsheet()
    table = Table(name="Staff")
    for values in rows:
        row = TableRow()
        for value in values:
            cell = TableCell(valuetype="string")
            cell.addElement(P(text=value))
            row.addElement(cell)
        table.addElement(row)
    if tail is not None:
        tail(table)
    doc.spreadsheet.addElement(table)
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()


STAFF_ODS_ROWS = [HEADER, *([row[h] for h in HEADER] for row in ROWS)]


def write_ods(tail: Callable[[Table], None] | None = None) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_bytes(ods_bytes(STAFF_ODS_ROWS, tail))

    return write


def repeated_rows(times: int, cells: int, text: str | None = None) -> Callable[[Table], None]:
    """What LibreOffice writes under a formatted or filled area: one row element repeated ``times``."""

    def add(table: Table) -> None:
        row = TableRow(numberrowsrepeated=times)
        cell = TableCell(numbercolumnsrepeated=cells, **({"valuetype": "string"} if text is not None else {}))
        if text is not None:
            cell.addElement(P(text=text))
        row.addElement(cell)
        table.addElement(row)

    return add


def stray_ods_cell(rows_down: int, columns_right: int) -> Callable[[Table], None]:
    def add(table: Table) -> None:
        table.addElement(TableRow(numberrowsrepeated=rows_down))
        row = TableRow()
        row.addElement(TableCell(numbercolumnsrepeated=columns_right))
        cell = TableCell(valuetype="string")
        cell.addElement(P(text="x"))
        row.addElement(cell)
        table.addElement(row)

    return add


def staff_xls_book(stray: tuple[int, int] | None = None) -> xlwt.Workbook:
    """The staff export as an Excel 97-2003 workbook (xlwt), with a stray ``x`` at (row, column) if given."""
    workbook = xlwt.Workbook()
    sheet = workbook.add_sheet("Staff")
    for i, row in enumerate([dict(zip(HEADER, HEADER)), *ROWS]):
        for j, name in enumerate(HEADER):
            sheet.write(i, j, row[name])
    if stray is not None:
        sheet.write(*stray, "x")
    return workbook


def write_xls(stray: tuple[int, int] | None = None) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        staff_xls_book(stray).save(str(path))  # whatever the name says

    return write


def write_xls_macro_sheet_with_a_cell_at(row: int, column: int) -> Callable[[Path], None]:
    """The staff .xls and a second sheet, 'Macros', made a macro sheet (its BOUNDSHEET's type 1: xlrd leaves
    such a sheet out, the other library reads it), with a cell at A1 and one at (``row``, ``column``), 0-based."""

    def write(path: Path) -> None:
        workbook = staff_xls_book()
        macros = workbook.add_sheet("Macros")
        macros.write(0, 0, "=macro")
        macros.write(0, 1, "moved")
        data = bytearray(workbook.get_biff_data())
        boundsheet = data.find(b"\x06\x00Macros") - 10  # BOUNDSHEET: type, size, BOF offset, visible, kind
        assert struct.unpack_from("<H", data, boundsheet)[0] == 0x0085
        data[boundsheet + 9] = 1
        cell = data.rfind(b"\xfd\x00\x0a\x00\x00\x00\x01\x00")  # the LABELSST at B1, the last cell record
        struct.pack_into("<HH", data, cell + 4, row, column)
        workbook.save(str(path))
        whole = path.read_bytes()
        original = workbook.get_biff_data()
        path.write_bytes(whole.replace(original, bytes(data), 1))

    return write


def write_xls_formatted_far_away(path: Path) -> None:
    """The staff .xls with a formatted empty cell (a BLANK record: a format, no value) at IV65536."""
    workbook = staff_xls_book()
    workbook.get_sheet(0).write(65_535, 255, None, xlwt.easyxf("pattern: pattern solid, fore_colour yellow"))
    workbook.save(str(path))


def xls_patched(patch: Callable[[bytearray], None]) -> Callable[[Path], None]:
    """The staff .xls by xlwt, its bytes changed by ``patch``."""

    def write(path: Path) -> None:
        write_xls()(path)
        data = bytearray(path.read_bytes())
        patch(data)
        path.write_bytes(bytes(data))

    return write


def directory_sector_chained_to_itself(data: bytearray) -> None:
    """The compound document's allocation table sends the directory's sector on to itself: a chain that
    never ends (a reader that follows it unchecked grows a list of sectors until memory runs out)."""
    directory, first_table_sector = struct.unpack_from("<I", data, 0x30)[0], struct.unpack_from("<I", data, 0x4C)[0]
    struct.pack_into("<I", data, 512 * (first_table_sector + 1) + 4 * directory, directory)


def cut_at_sector(sectors: int) -> Callable[[bytearray], None]:
    """A download cut after ``sectors`` sectors of 512 bytes (the header's included)."""

    def cut(data: bytearray) -> None:
        del data[512 * sectors :]

    return cut


def sheet_dimensions(rows: int) -> Callable[[bytearray], None]:
    """The sheet's DIMENSIONS record (BIFF8: first row, last row + 1, first column, last column + 1) claims
    ``rows`` rows."""

    def claim(data: bytearray) -> None:
        at = data.find(b"\x00\x02\x0e\x00")  # the record's type and length
        struct.pack_into("<I", data, at + 8, rows)

    return claim


def bytes_past_the_last_sector(data: bytearray) -> None:
    """100 bytes after the last sector (a copy tool's padding): the workbook is whole, and reads."""
    data += bytes(100)


def last_cell_moved_to(row: int, column: int) -> Callable[[bytearray], None]:
    """The sheet's last cell record (the shoe size of row 3, a LABELSST) says it is at (``row``, ``column``),
    0-based, as flipped bits in its row and column fields do; the DIMENSIONS record still says A1:P3."""

    def move(data: bytearray) -> None:
        at = data.rfind(b"\xfd\x00\x0a\x00")  # LABELSST's type and length
        assert struct.unpack_from("<HH", data, at + 4) == (2, 15)
        struct.pack_into("<HH", data, at + 4, row, column)

    return move


SECTOR, SHORT_SECTOR = 512, 64
FREE, END_OF_CHAIN, TABLE_SECTOR = -1, -2, -3


def compound_document_in_short_sectors(stream: bytes, short_chain: list[int] | None = None) -> bytes:
    """A compound document (OLE2) whose one stream, 'Workbook', is under 4,096 bytes and so lives in short
    sectors of 64 bytes, as some writers save a small workbook (xlwt pads its stream to whole sectors).
    Sectors: 0 the allocation table, 1 the directory, 2 the short sectors' table, 3... the short sectors.
    ``short_chain`` replaces the short sectors' table (each entry the next sector of the chain)."""
    short_sectors = -(-len(stream) // SHORT_SECTOR)
    container = stream.ljust(-(-len(stream) // SECTOR) * SECTOR, b"\0")
    container_sectors = len(container) // SECTOR
    table = [TABLE_SECTOR, END_OF_CHAIN, END_OF_CHAIN, *range(4, 3 + container_sectors), END_OF_CHAIN]
    short_table = short_chain or [*range(1, short_sectors), END_OF_CHAIN]

    def entry(name: str, kind: int, child: int, first_sector: int, size: int) -> bytes:
        utf16 = (name + "\0").encode("utf-16-le") if name else b""
        return (utf16.ljust(64, b"\0") + struct.pack("<HBBiii", len(utf16), kind, 1, -1, -1, child) + bytes(36)
                + struct.pack("<iiI", first_sector, size, 0))

    directory = (entry("Root Entry", 5, 1, 3, short_sectors * SHORT_SECTOR) + entry("Workbook", 2, -1, 0, len(stream))
                 + entry("", 0, -1, -1, 0) * 2)
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(16)
              + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6) + bytes(10)  # version, byte order, sector sizes
              + struct.pack("<8i", 1, 1, 0, 4096, 2, 1, END_OF_CHAIN, 0)  # tables, directory, 4 KB and under short
              + struct.pack("<109i", 0, *[FREE] * 108))
    return (header + struct.pack("<128i", *table, *[FREE] * (128 - len(table))) + directory
            + struct.pack("<128i", *short_table, *[FREE] * (128 - len(short_table))) + container)


def write_xls_in_short_sectors(short_chain: Callable[[int], list[int]] | None = None) -> Callable[[Path], None]:
    """The staff .xls with its workbook stream (2 KB) in short sectors; ``short_chain(sectors)`` gives the
    short sectors' table instead of the chain 0, 1, ..., end."""

    def write(path: Path) -> None:
        stream = staff_xls_book().get_biff_data()
        chain = short_chain(-(-len(stream) // SHORT_SECTOR)) if short_chain else None
        path.write_bytes(compound_document_in_short_sectors(stream, chain))

    return write


def back_to_the_first(sectors: int) -> list[int]:
    """The last short sector chained back to the first: a chain that never ends."""
    return [*range(1, sectors), 0]


def says_nothing_else(done: Finished) -> None:
    """Nothing but the command's own lines: no library's warning (xlrd's ``WARNING *** file size ...``)."""
    assert not any(line.startswith("WARNING") for line in done.lines), done.lines


def write_zip_bomb(path: Path, unpacked_mb: int = 600) -> None:
    """A real workbook whose sheet holds ``unpacked_mb`` MB of spaces between its rows (XML allows them):
    it packs into about 1/1000 of that, as a ZIP bomb does."""
    with zipfile.ZipFile(io.BytesIO(xlsx_bytes())) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bomb:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename != SHEET:
                bomb.writestr(info.filename, data)
                continue
            head, tail = data.split(b"<sheetData>")
            with bomb.open(info.filename, "w", force_zip64=True) as part:
                part.write(head + b"<sheetData>")
                spaces = b" " * 1_000_000
                for _ in range(unpacked_mb):
                    part.write(spaces)
                part.write(tail)


def write_blank_csv_tail(rows: list[dict[str, str]]) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        write_csv(path, rows)
        with open(path, "a", newline="") as fh:
            fh.write("\r\n" * 1_000_000 + ",,, ,\n" * 1000 + "\n" * 1_000_000)

    return write


def write_zip_of_text(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("staff.csv", csv_text())


def with_entry_header(base: bytes, name: str, *, flags: int = 0, method: int | None = None) -> bytes:
    """The archive ``base`` with the headers of its member ``name`` (central directory and local) changed as
    another ZIP tool may write them: general-purpose ``flags`` bits set (bit 0: encrypted), or the number of
    another compression ``method`` (99: AES, which Python's zipfile cannot unpack)."""
    data = bytearray(base)
    with zipfile.ZipFile(io.BytesIO(base)) as archive:
        info = archive.getinfo(name)
    entry = data.find(b"PK\x01\x02")  # the first central directory entry
    while data[entry + 46 : entry + 46 + struct.unpack_from("<H", data, entry + 28)[0]] != name.encode():
        entry = data.find(b"PK\x01\x02", entry + 4)  # the next one, until the one naming the member
    for flags_at, method_at in ((entry + 8, entry + 10), (info.header_offset + 6, info.header_offset + 8)):
        struct.pack_into("<H", data, flags_at, struct.unpack_from("<H", data, flags_at)[0] | flags)
        if method is not None:
            struct.pack_into("<H", data, method_at, method)
    return bytes(data)


def with_broken_deflate(base: bytes, name: str) -> bytes:
    """The archive ``base`` whose member ``name`` starts with a deflate block of a type that does not exist
    (the reserved type 3): bits flipped in a download, which zlib refuses to unpack."""
    data = bytearray(base)
    with zipfile.ZipFile(io.BytesIO(base)) as archive:
        info = archive.getinfo(name)
    name_length, extra_length = struct.unpack_from("<HH", data, info.header_offset + 26)
    data[info.header_offset + 30 + name_length + extra_length] = 0xFF
    return bytes(data)


def write_truncated(full: Callable[[Path], None], keep: float) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        full(path)
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * keep)])

    return write






def sheet_rows(rows: list[list[str]], first_row: int = 1) -> tuple[bytes, list[str]]:
    """Rows of text cells as a sheet's XML, and the shared strings table they index (xlsxwriter is too
    slow to write a million cells in a test)."""
    strings: dict[str, int] = {}
    xml = []
    for r, row in enumerate(rows, start=first_row):
        cells = "".join(f'<c r="{get_column_letter(j + 1)}{r}" t="s"><v>{strings.setdefault(value, len(strings))}</v></c>'
                        for j, value in enumerate(row) if value)
        xml.append(f'<row r="{r}">{cells}</row>')
    return "".join(xml).encode(), list(strings)


def shared_strings_part(strings: list[str]) -> bytes:
    entries = "".join(f"<si><t>{text}</t></si>" for text in strings)
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="http://schemas.openxmlformats.org/'
            f'spreadsheetml/2006/main" count="{len(strings)}" uniqueCount="{len(strings)}">{entries}</sst>').encode()


def staff_sheet(rows: list[dict[str, str]], tail: bytes = b"", strings: Sequence[str] = ()) -> Callable[[Path], None]:
    """The staff workbook with ``rows`` written straight into its XML, then the rows ``tail`` (whose
    shared strings ``strings`` come after the table's)."""

    def write(path: Path) -> None:
        body, table_strings = sheet_rows([HEADER, *([row[h] for h in HEADER] for row in rows)])
        path.write_bytes(with_parts(xlsx_bytes(), {
            SHEET: lambda xml: re.sub(rb"<sheetData>.*</sheetData>", lambda _: b"<sheetData>" + body
                                      + tail.replace(b"{base}", str(len(table_strings)).encode()) + b"</sheetData>",
                                      xml, flags=re.DOTALL),
            "xl/sharedStrings.xml": shared_strings_part([*table_strings, *strings]),
        }))

    return write


def text_tail(rows_to: int, column: str = "A", text: str = "") -> tuple[bytes, list[str]]:
    """Cells holding ``text`` (empty by default) in ``column`` from row 4 down to row ``rows_to``: an
    export that 'clears' a column by writing "" all the way down."""
    rows = b"".join(b'<row r="%d"><c r="%s%d" t="s"><v>{base}</v></c></row>' % (r, column.encode(), r)
                    for r in range(4, rows_to + 1))
    return rows, [text]


def styled_tail(rows_to: int) -> bytes:
    """Formatted empty cells in column AN down to row ``rows_to`` (a format dragged down a column)."""
    return b"".join(b'<row r="%d"><c r="AN%d" s="1"/></row>' % (r, r) for r in range(4, rows_to + 1))


def write_wide(columns: int, data: bool) -> Callable[[Path], None]:
    """The staff columns, then ``columns`` more (named, with a value on each row when ``data``)."""

    def write(path: Path) -> None:
        workbook = xlsxwriter.Workbook(str(path), {"constant_memory": True})
        sheet = workbook.add_worksheet("Staff")
        extra = [f"Extra column {j}" for j in range(columns)]
        sheet.write_row(0, 0, HEADER + extra)
        for r, row in enumerate(ROWS, start=1):
            sheet.write_row(r, 0, [row[h] for h in HEADER] + (["x"] * columns if data else []))
        workbook.close()

    return write


def write_wide_csv(columns: int) -> Callable[[Path], None]:
    """The staff CSV with ``columns`` more columns, each named and holding a value on each row."""

    def write(path: Path) -> None:
        extra = {f"Extra column {j}": "x" for j in range(columns)}
        write_csv(path, [{**row, **extra} for row in ROWS], header=[*HEADER, *extra])

    return write


def write_far_cell(row: int, column: int, text: str) -> Callable[[Path], None]:
    def build(workbook: xlsxwriter.Workbook, sheet: Any) -> None:
        sheet.write_string(row, column, text)

    return write_xlsx(build)


def write_sheet_in_utf_16(mark: bytes = b"") -> Callable[[Path], None]:
    """The staff workbook by openpyxl (whose parts have no XML declaration), its sheet saved again in UTF-16
    after the byte-order ``mark`` (none by default)."""

    def write(path: Path) -> None:
        write_openpyxl(ROWS)(path)
        path.write_bytes(with_parts(path.read_bytes(), {SHEET: lambda xml: mark + xml.decode().encode("utf-16-le")}))

    return write


def cell_out_of_order(ref: bytes) -> Callable[[Path], None]:
    """The staff workbook with a cell ``x`` at ``ref`` written amid row 2, before its own cells: out of the
    order a spreadsheet program writes (a damaged or hostile file)."""
    stray = b'<c r="' + ref + b'" t="inlineStr"><is><t>x</t></is></c>'
    return write_bytes(with_parts(xlsx_bytes(), {SHEET: lambda xml: xml.replace(b'<c r="A2"', stray + b'<c r="A2"', 1)}))


def streamed_out_of_order(stray: bytes, before: bytes) -> Callable[[Path], None]:
    """A staff workbook of 2,100 rows, then 150,000 rows of a number, and a picture of 9 MB (over
    ``STREAM_BYTES``: its sheet is read a piece at a time), with the XML ``stray`` written before ``before``
    (a cell amid row 5, a row above row 5), in the first piece. The rows make the sheet's extent take a while
    to find, as a big export's do: the first piece is read before it is known."""

    def write(path: Path) -> None:
        numbers = b"".join(b'<row r="%d"><c r="A%d"><v>1</v></c></row>' % (r, r) for r in range(2102, 152_102))
        staff_sheet([person(n) for n in range(1, 2101)], tail=numbers)(path)
        path.write_bytes(with_parts(path.read_bytes(), {
            SHEET: lambda xml: xml.replace(before, stray + before, 1),
            "xl/media/image1.png": random.Random(5).randbytes(9_000_000),  # does not pack smaller
        }))

    return write


ROW_FAR_BELOW = b'<row r="1048576"><c t="inlineStr"><is><t>x</t></is></c></row>'


def shared_strings_claiming(count: int, quote: bytes = b'"') -> Callable[[Path], None]:
    """The staff workbook whose table of shared strings says it holds ``count`` strings (``uniqueCount`` in
    ``quote``: XML's single quotes are as valid)."""
    return write_bytes(with_parts(xlsx_bytes(), {"xl/sharedStrings.xml": lambda xml: re.sub(
        rb'uniqueCount="\d+"', b"uniqueCount=%s%d%s" % (quote, count, quote), xml)}))


def with_dimension(write: Callable[[Path], None], ref: bytes) -> Callable[[Path], None]:
    """The workbook ``write`` makes, its sheet declaring the dimension ``ref`` (e.g. A1:AN1048576)."""

    def write_declared(path: Path) -> None:
        write(path)
        path.write_bytes(with_parts(path.read_bytes(), {
            SHEET: lambda xml: re.sub(rb'<dimension ref="[^"]*"/>', b'<dimension ref="' + ref + b'"/>', xml)}))

    return write_declared


def write_huge_cell_csv(path: Path) -> None:
    write_csv(path, [person(1, Title="Analyst " * 1_250_000), person(2)])


def write_huge_cell_xlsx_of(text: bytes, times: int, cell: str) -> Callable[[Path], None]:
    """The staff workbook whose ``cell`` holds ``text`` ``times`` over: more than Excel allows (32,767
    characters), as a broken writer may produce."""
    def write(path: Path) -> None:
        path.write_bytes(with_parts(xlsx_bytes(), {
            SHEET: lambda xml: re.sub(rb'<c r="' + cell.encode() + rb'"[^>]*>.*?</c>', b'<c r="' + cell.encode()
                                      + b'" t="inlineStr"><is><t>' + text * times + b"</t></is></c>", xml, count=1)}))

    return write


write_huge_cell_xlsx = write_huge_cell_xlsx_of(b"Analyst ", 1_250_000, "E2")  # 10 MB of job title


def write_ragged(path: Path) -> None:
    text = csv_text([person(1), person(2), person(3)])
    lines = text.split("\r\n")
    lines[2] = lines[2].replace("Analyst", "Analyst, Senior")  # a comma without quotes: one cell too many
    path.write_text("\r\n".join(lines), encoding="utf-8")


def write_long_cell_in_a_code_page(path: Path) -> None:
    """A cp1252 export (one accented name) whose job title is a million letters without a delimiter."""
    write_csv(path, [person(1, Name="José Müller"), person(2, Title="x" * 1_000_000)], encoding="cp1252")


def write_long_word_beside_an_accented_one(path: Path) -> None:
    """A cp1252 export whose job title is an accented word, a space, and a million letters: the detector's
    sample is the words holding non-ASCII bytes, looked for in that very cell."""
    write_csv(path, [person(1, Name="José Müller"), person(2, Title="Técnico " + "x" * 1_000_000)],
              encoding="cp1252")


def write_bad_byte_before_a_long_line(path: Path) -> None:
    """A UTF-8 export with one row pasted from a cp1252 program (its é one byte, not UTF-8) whose job title
    is a million letters."""
    text = csv_text([person(1, Name="Zoë Ångström"), person(2, Name="José", Title="x" * 1_000_000), person(3)])
    path.write_bytes(text.encode().replace("José".encode(), "José".encode("cp1252")))


def write_nul_bytes(at_row: int) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        rows = [person(n) for n in range(1, at_row + 2)]
        rows[at_row - 2]["Name"] = "Person\x00 with a NUL"
        write_csv(path, rows)

    return write


def write_unclosed_quote(path: Path) -> None:
    text = csv_text([person(1), person(2), person(3)])
    path.write_text(text.replace("Person 2", '"Person 2', 1), encoding="utf-8")


def write_garbage(path: Path) -> None:
    path.write_bytes(random.Random(13).randbytes(64 * 1024))


def write_out_of_range_date(path: Path) -> None:
    def build(workbook: xlsxwriter.Workbook, sheet: Any) -> None:
        date = workbook.add_format({"num_format": "yyyy-mm-dd"})
        sheet.write_number(1, 5, 1e10, date)  # a hire date 27 million years on
        sheet.write_number(2, 5, -5, date)  # before Excel's day 0

    write_xlsx(build)(path)


def write_error_cells(path: Path) -> None:
    def build(workbook: xlsxwriter.Workbook, sheet: Any) -> None:
        sheet.write_formula(1, 1, "=1/0", None, "#DIV/0!")
        sheet.write_formula(2, 4, "=#REF!", None, "#REF!")

    write_xlsx(build)(path)


def write_one_id(rows: int) -> Callable[[Path], None]:
    """``rows`` people sharing one external id: the wrong column mapped as the id."""

    def write(path: Path) -> None:
        write_csv(path, [person(1, Name=f"Person {i}") for i in range(rows)])

    return write


def make_pipe(path: Path) -> None:
    os.mkfifo(path)


def make_dev_zero_link(path: Path) -> None:
    path.symlink_to("/dev/zero")


def make_folder(path: Path) -> None:
    path.mkdir()


# --------------------------------------------------------------------------------------------- the kinds


@dataclass(frozen=True)
class Kind:
    """One hostile file: how it is written, what the command must end with, and what it may cost.

    ``says`` is a piece of the one error line (exit 2) or of the output (a file that is read)."""

    id: str
    name: str
    write: Callable[[Path], None]
    exit_code: int
    says: str
    ceiling_mb: int = SMALL_RUN_MB
    timeout: float = 60
    check: Callable[[Finished], None] | None = None


def refused(id: str, name: str, write: Callable[[Path], None], says: str, **more: object) -> Kind:
    return Kind(id, name, write, 2, says, **more)  # type: ignore[arg-type]


def never_echoes_the_secret(done: Finished) -> None:
    assert "SECRET-FROM-XXE" not in done.stdout + done.stderr


def counts_the_other_names(done: Finished) -> None:
    assert done.stderr.rstrip().endswith("and 9,995 more)")


def the_duplicate_line_counts_the_others(done: Finished) -> None:
    assert done.lines[0] == ("Row 2, column 'Employee ID': external id '000001' appears more than once in this "
                             "file (also on row 3 and 99,998 other rows); each person must appear once.")
    assert "0 of 100,000 rows checked; 100,000 need attention." in done.stdout


KINDS = [
    # ------------------------------------------------------------------------------ nothing to read
    refused("empty-csv", "staff.csv", write_bytes(b""), "staff.csv is empty; export the data again"),
    refused("empty-xlsx", "staff.xlsx", write_bytes(b""), "staff.xlsx is empty"),
    refused("header-only-csv", "staff.csv", write_text(csv_text([])), "has a header row (row 1) but no data rows"),
    refused("header-only-xlsx", "staff.xlsx", write_openpyxl([]), "has a header row (row 1) but no data rows"),
    refused("header-only-then-blank-lines-csv", "staff.csv", write_blank_csv_tail([]),
            "has a header row (row 1) but no data rows"),
    # -------------------------------------------------------------------- not what the name says
    refused("binary-garbage-csv", "staff.csv", write_garbage, "a binary file that is not a spreadsheet"),
    refused("binary-garbage-xlsx", "staff.xlsx", write_garbage, "is not really an XLSX workbook"),
    refused("xlsx-named-csv", "staff.csv", write_bytes(xlsx_bytes()), "rename it to .xlsx"),
    refused("csv-named-xlsx", "staff.xlsx", write_text(csv_text()), "rename it to .csv"),
    refused("ods-named-xlsx", "staff.xlsx", write_bytes(ods_bytes(STAFF_ODS_ROWS)), "rename it to .ods"),
    refused("xls-named-xlsx", "staff.xlsx", write_xls(), "rename it to .xls"),
    refused("web-page-named-xls", "staff.xls", write_text(web_page()), "it looks like a web page (HTML)"),
    refused("xml-spreadsheet-2003-named-xls", "staff.xls", write_text(SPREADSHEET_2003),
            "it looks like an XML Spreadsheet 2003 file; open it in Excel and save it as .xlsx"),
    refused("strict-open-xml-xlsx", "staff.xlsx", write_strict_open_xml, "is saved as a Strict Open XML Spreadsheet"),
    refused("pdf-named-xlsx", "staff.xlsx", write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n"),
            "a PDF document"),
    refused("zip-named-xlsx", "staff.xlsx", write_zip_of_text, "a ZIP archive without a workbook"),
    # ----------------------------------------------------------------------- damaged or locked
    refused("truncated-xlsx", "staff.xlsx", write_truncated(write_xlsx(), 0.5), "is damaged or incomplete"),
    refused("truncated-ods", "staff.ods", write_truncated(write_ods(), 0.6), "is damaged or incomplete"),
    refused("broken-sheet-xml", "staff.xlsx",
            write_bytes(with_parts(xlsx_bytes(), {SHEET: lambda xml: xml.replace(b"</sheetData>", b"")})),
            "is damaged or incomplete"),
    refused("workbook-part-marked-encrypted", "staff.xlsx",
            write_bytes(with_entry_header(xlsx_bytes(), "xl/workbook.xml", flags=1)), "is damaged or incomplete"),
    refused("workbook-part-in-an-unknown-compression", "staff.xlsx",
            write_bytes(with_entry_header(xlsx_bytes(), "xl/workbook.xml", method=99)), "is damaged or incomplete"),
    refused("workbook-part-said-to-be-bzip2", "staff.xlsx",
            write_bytes(with_entry_header(xlsx_bytes(), "xl/workbook.xml", method=12)), "is damaged or incomplete"),
    refused("manifest-part-with-broken-deflate-ods", "staff.ods",
            write_bytes(with_broken_deflate(ods_bytes(STAFF_ODS_ROWS), "META-INF/manifest.xml")),
            "is damaged or incomplete"),
    refused("xls-sector-chain-that-never-ends", "staff.xls", xls_patched(directory_sector_chained_to_itself),
            "staff.xls is damaged or incomplete (directory corruption"),
    refused("xls-cut-inside-its-directory", "staff.xls", xls_patched(cut_at_sector(9)), "is damaged or incomplete"),
    refused("xls-sheet-claiming-a-million-rows", "staff.xls", xls_patched(sheet_dimensions(1_048_576)),
            "sheet 'Staff' declares 1,048,576 rows x 16 columns, more than an .xls holds (65,536 x 256)"),
    # xlrd followed the chain for ever, appending sectors until the memory ran out
    refused("xls-short-sector-chain-that-never-ends", "staff.xls", write_xls_in_short_sectors(back_to_the_first),
            "staff.xls is damaged or incomplete (the chain of short sectors holding its workbook stream loops or "
            "breaks at sector 0); download or export it again"),
    # xlrd leaves a macro sheet out, and calamine asked for 135 GB for its cell
    refused("xls-macro-sheet-with-a-cell-in-column-65001", "staff.xls",
            write_xls_macro_sheet_with_a_cell_at(65_000, 65_000),
            "staff.xls is damaged or incomplete (sheet 'Macros' has a cell in column 65,001, past IV, the last "
            "column an .xls holds)"),
    # calamine asked for 135 GB (65,001 x 65,001 cells) and aborted the process
    refused("xls-cell-in-column-65001", "staff.xls", xls_patched(last_cell_moved_to(65_000, 65_000)),
            "staff.xls is damaged or incomplete (sheet 'Staff' has a cell in column 65,001, past IV, the last "
            "column an .xls holds); download or export it again"),
    # the libraries found no cell in it (the workbook was told as empty), with a mark a decoding error; calamine
    # logs a warning of its own for it ("'worksheet' not a valid worksheet"): not a second line
    refused("sheet-part-in-utf-16-without-a-mark", "staff.xlsx", write_sheet_in_utf_16(),
            "staff.xlsx: sheet 'Staff' is saved as UTF-16 text without a byte-order mark (xl/worksheets/sheet1.xml), "
            "which the workbook libraries cannot read"),
    refused("sheet-part-in-utf-16-with-a-mark", "staff.xlsx", write_sheet_in_utf_16(codecs.BOM_UTF16_LE),
            "staff.xlsx: sheet 'Staff' is saved as UTF-16 text (xl/worksheets/sheet1.xml), which the workbook "
            "libraries cannot read"),
    refused("sheet-part-missing", "staff.xlsx", write_bytes(with_parts(xlsx_bytes(), {SHEET: None})),
            "is damaged or incomplete"),
    refused("password-protected-xlsx", "staff.xlsx", write_encrypted, "is password-protected; remove the password"),
    # ------------------------------------------------------------------ hostile XML inside a workbook
    refused("billion-laughs-in-sheet", "staff.xlsx",
            write_bytes(with_parts(xlsx_bytes(), {SHEET: sheet_with_doctype(billion_laughs(b"worksheet"), b"&l9;")})),
            "is damaged or incomplete"),
    refused("billion-laughs-in-shared-strings", "staff.xlsx", write_billion_laughs_in_shared_strings,
            "is damaged or incomplete"),
    refused("xxe-in-sheet", "staff.xlsx", write_xxe, "is damaged or incomplete", check=never_echoes_the_secret),
    refused("xxe-in-workbook-part", "staff.xlsx", write_xxe_in_workbook_part, "is damaged or incomplete",
            check=never_echoes_the_secret),
    # ------------------------------------------------------------------------- not a regular file
    refused("folder", "staff.csv", make_folder, "staff.csv is a folder, not a file"),
    refused("link-to-dev-zero", "staff.csv", make_dev_zero_link, "staff.csv links to /dev/zero, a device"),
    refused("named-pipe", "staff.csv", make_pipe, "staff.csv is a named pipe; it must be a regular file"),
    # ----------------------------------------------------------------------------- a bad header
    refused("duplicate-headers", "staff.csv", write_text(csv_text(header=[*HEADER[:-1], "Name"])),
            "has duplicate column names: 'Name' (columns B and P)"),
    refused("header-of-10000-names", "staff.csv",
            write_text(",".join(f"Column number {j} of a very wide export" for j in range(10_000)) + "\nx\n"),
            "staff.csv: column(s) 'Employee ID', 'Name', 'Email', 'Country', 'Title' and 10 more named in the "
            "config are not in the file (header row 1 has 'Column number 0 of a very wide export'",
            check=counts_the_other_names),
    refused("one-name-across-10000-columns", "staff.csv",
            write_text(",".join(HEADER + [f"Extra {j % 20}" for j in range(10_000)]) + "\n"
                       + ",".join(person(1).values()) + "\n"),
            "'Extra 0' (columns Q, AK, BE, BY, CS and 495 more); "),
    # --------------------------------------------------------------------------- resource bombs
    refused("zip-bomb", "staff.xlsx", write_zip_bomb,
            "staff.xlsx would unpack to 600 MB, more than the limit of 500 MB (a damaged or hostile file?); "
            "if the workbook really is that big, raise max_unpacked_mb in the config's [source] section"),
    refused("stray-cell-far-corner-xlsx", "staff.xlsx", write_far_cell(1_048_575, 16_383, "x"), "XFD1048576"),
    refused("stray-cell-far-corner-amid-a-row-xlsx", "staff.xlsx", cell_out_of_order(b"XFD1048576"),
            "sheet 'Staff' has cells far outside its table (at XFD1048576)"),
    # a streamed piece was laid out down to the cell before the sheet's extent was known (800 MB; aborted
    # under a 2 GB limit)
    refused("stray-cell-far-below-amid-a-streamed-piece-xlsx", "staff.xlsx",
            streamed_out_of_order(b'<c r="A1048576" t="inlineStr"><is><t>x</t></is></c>', b'<c r="A5"'),
            "sheet 'Staff' has cells far outside its table (at P1 and A1048576): read, they would make a grid of "
            "1,048,576 rows x 16 columns"),
    # a row numbered far below amid the rows, its cell without a reference: laid out in that row all the same
    # (the process aborted, whole or streamed)
    refused("stray-row-far-below-amid-a-streamed-piece-xlsx", "staff.xlsx",
            streamed_out_of_order(ROW_FAR_BELOW, b'<row r="5"'),
            "sheet 'Staff' has cells far outside its table (at P1 and A1048576): read, they would make a grid of "
            "1,048,576 rows x 16 columns"),
    refused("stray-row-far-below-amid-the-rows-xlsx", "staff.xlsx",
            write_bytes(with_parts(xlsx_bytes(), {SHEET: lambda xml: xml.replace(b'<row r="3"', ROW_FAR_BELOW
                                                                                 + b'<row r="3"', 1)})),
            "sheet 'Staff' has cells far outside its table (at P1 and A1048576): read, they would make a grid of "
            "1,048,576 rows x 16 columns"),
    refused("cell-beyond-the-last-column-excel-has-xlsx", "staff.xlsx", cell_out_of_order(b"ZZZZZZ2"),
            "sheet 'Staff' has cells far outside its table (at ZZZZZZ2 and P3)"),
    refused("shared-strings-claiming-a-billion-xlsx", "staff.xlsx", shared_strings_claiming(1_000_000_000),
            "is damaged or incomplete (its table of shared strings claims 1,000,000,000 strings in"),
    refused("shared-strings-claiming-a-billion-in-single-quotes-xlsx", "staff.xlsx",
            shared_strings_claiming(1_000_000_000, b"'"),
            "is damaged or incomplete (its table of shared strings claims 1,000,000,000 strings in"),
    refused("stray-cell-far-corner-ods", "staff.ods", write_ods(stray_ods_cell(1_048_570, 1023)),
            "sheet 'Staff' has cells far outside its table (at AMJ1048574)"),
    # found in the cell records before calamine lays out the grid: the memory of a small file
    refused("stray-cell-far-away-xls", "staff.xls", write_xls((39_999, 199)),
            "sheet 'Staff' has cells far outside its table (at GR40000)"),
    # 16 million cells: calamine aborted the process under a 2 GB limit
    refused("xls-cell-at-the-last-column-of-row-65001", "staff.xls", xls_patched(last_cell_moved_to(65_000, 255)),
            "staff.xls: sheet 'Staff' has cells far outside its table (at IV65001): read, they would make a grid "
            "of 65,001 rows x 256 columns"),
    refused("a-row-of-values-repeated-a-million-times-ods", "staff.ods", write_ods(repeated_rows(1_048_573, 16, "x")),
            "sheet 'Staff' repeats rows or cells holding values into 16,777,216 cells, from 49 written in the file"),
    refused("a-run-of-two-billion-spaces-ods", "staff.ods", write_bytes(with_parts(ods_bytes(STAFF_ODS_ROWS), {
        "content.xml": lambda xml: xml.replace(b"<text:p>Analyst</text:p>",
                                               b'<text:p>Analyst<text:s text:c="2147483647"/></text:p>', 1)})),
        "its cells' text holds runs of spaces adding up to more than 10,000,000"),
    refused("blank-text-tail-ods", "staff.ods", write_ods(repeated_rows(1_048_573, 40, " ")),
            "has cells holding only spaces or empty text down to row 1,048,576, far below its last value (row 3)"),
    # ---------------------------------------------------------------- read, each row its outcome
    Kind("old-xls", "staff.xls", write_xls(), 0, "2 of 2 rows checked."),
    Kind("xls-with-bytes-past-its-last-sector", "staff.xls", xls_patched(bytes_past_the_last_sector), 0,
         "2 of 2 rows checked.", check=says_nothing_else),
    Kind("xls-in-short-sectors", "staff.xls", write_xls_in_short_sectors(), 0, "2 of 2 rows checked."),
    # a format holds no value: the library lays nothing out for it
    Kind("formatted-empty-cell-far-away-xls", "staff.xls", write_xls_formatted_far_away, 0, "2 of 2 rows checked."),
    # the encoding is looked for in a time that follows the file's size, however long its cells
    refused("a-million-letter-cell-in-a-code-page-csv", "staff.csv", write_long_cell_in_a_code_page,
            "cannot tell which encoding this text is in", timeout=30),
    refused("a-million-letter-word-beside-an-accented-one-in-a-code-page-csv", "staff.csv",
            write_long_word_beside_an_accented_one, "cannot tell which encoding this text is in", timeout=30),
    Kind("a-bad-byte-before-a-million-letters-csv", "staff.csv", write_bad_byte_before_a_long_line, 1,
         "Row 3, column 'Name'", timeout=30),
    Kind("utf16-without-bom", "staff.csv", write_text(csv_text(), "utf-16-le"), 0, "2 of 2 rows checked."),
    Kind("external-links", "staff.xlsx", write_external_links, 0, "2 of 2 rows checked."),
    Kind("ragged-rows", "staff.csv", write_ragged, 1, "Row 3 has 17 cells but the header row has 16"),
    # person 3's line read as the end of person 2's name: a person without an outcome, so the file is refused
    refused("unclosed-quote", "staff.csv", write_unclosed_quote,
            "staff.csv: row 3, column 'Name': a value opening with a quote (\") runs over 2 lines of the file, to its "
            "end, and one of them reads as a row of the table ('000003,Person 3,person3@acme.example,MY,…'), which "
            "would be lost inside that one cell: a stray quote in the export; remove it, or write it as two quotes "
            "(\"\") if it belongs to the value, and export again"),
    # the columns a staff export needs, then 100,000 more: 0.9 MB that took 36 s and 1.6 GB to read
    refused("a-hundred-thousand-columns-csv", "staff.csv",
            write_text(csv_text([person(1), person(2)], HEADER + [f"Extra {i}" for i in range(100_000)])),
            "its header (row 1) has 100,016 columns, more than a spreadsheet holds (16,384, Excel's and "
            "LibreOffice's limit), so it is not an export of a table; check the file", ceiling_mb=250, timeout=20),
    Kind("a-million-cells-in-one-row", "staff.csv",
         write_text(csv_text([person(1), person(2), person(3)]).rstrip() + ",x" * 1_000_000 + "\r\n"), 1,
         "Row 4 has 1,000,016 cells but the header row has 16 ('x', 'x', 'x', ... beyond the last column)"),
    Kind("nul-byte-in-a-cell-near-the-top", "staff.csv", write_nul_bytes(2), 1,
         "Row 2, column 'Name': holds a zero byte (NUL), which is not text ('Person<NUL> with a NUL')"),
    Kind("nul-byte-in-a-cell-further-down", "staff.csv", write_nul_bytes(300), 1,
         "Row 300, column 'Name': holds a zero byte (NUL)"),
    # 10 MB of job title: read and checked like any other (the platform sets no length), in bounded memory
    Kind("huge-cell-csv", "staff.csv", write_huge_cell_csv, 0, "2 of 2 rows checked.", ceiling_mb=500),
    # 10 MB of job title in a workbook (its last space is not read): more than a cell of Excel holds (32,767
    # characters), so nobody read it
    Kind("huge-cell-xlsx", "staff.xlsx", write_huge_cell_xlsx, 1,
         "Row 2, column 'Title': the cell holds 9,999,999 characters, more than a spreadsheet cell holds (32,767), "
         "so nobody can have read it in Excel; not sent", ceiling_mb=500),
    # a 100 MB name packed into 100 KB: its row held back as above, where the read took 20 s and 2.2 GB (the header's
    # search split it into 25 million words; the sheet's pass added each 4 MB read to all before it)
    Kind("hundred-megabyte-name-xlsx", "staff.xlsx", write_huge_cell_xlsx_of(b"Ann ", 25_000_000, "B2"), 1,
         "Row 2, column 'Name': the cell holds 99,999,999 characters", ceiling_mb=700),
    # a value or a name holding a line break, or 10 MB, is still one line of at most 500 characters
    refused("a-terminal-escape-in-the-header-named-by-the-error-csv", "staff.csv",
            write_text(csv_text(header=[h if h != "Hire Date" else "Hire Date\x1b[8m (original)" for h in HEADER])),
            "'Hire Date' is missing and the file has 'Hire Date\\x1b[8m (original)': did the export change?"),
    Kind("a-line-break-in-a-date-cell-csv", "staff.csv",
         write_text(csv_text([person(1, **{"Hire Date": "2020-01-31\r\n2020-02-01"}), person(2)])), 1,
         "Row 2, column 'Hire Date': '2020-01-31\\r\\n2020-02-01' is not a real date"),
    Kind("a-10-mb-cell-in-a-date-column-csv", "staff.csv",
         write_text(csv_text([person(1, **{"Hire Date": "31/01/2020 " * 1_000_000}), person(2)])), 1,
         "Row 2, column 'Hire Date': '31/01/2020 31/01/2020", ceiling_mb=600),
    Kind("dates-out-of-range", "staff.xlsx", write_out_of_range_date, 1, "Row 2"),
    Kind("error-cells", "staff.xlsx", write_error_cells, 1, "Row 2"),
    Kind("10000-columns-of-data", "staff.xlsx", write_wide(10_000, data=True), 0, "2 of 2 rows checked."),
    # a time that follows the columns: each column was looked up for a repeated header row on its own; as wide
    # as a spreadsheet goes (16,384 columns), and a text file wider is refused (a-hundred-thousand-columns-csv)
    Kind("16000-columns-of-data-csv", "staff.csv", write_wide_csv(16_000), 0, "2 of 2 rows checked.", timeout=40,
         ceiling_mb=800),
    # six texts of each row its own (id, name, e-mail, title, cost centre, shoe size): 400,016 shared strings
    Kind("400000-shared-strings", "staff.xlsx",
         staff_sheet([person(n, Title=f"Title {n}", **{"Cost Centre": f"CC-{n}", "Shoe Size": f"S{n}"})
                      for n in range(1, 66_667)]), 0, "66,666 of 66,666 rows checked.", ceiling_mb=700),
    Kind("100000-rows-one-external-id", "staff.csv", write_one_id(100_000), 1, "99,998 other rows",
         ceiling_mb=800, timeout=90, check=the_duplicate_line_counts_the_others),
    Kind("blank-lines-under-the-data-csv", "staff.csv", write_blank_csv_tail([person(1)]), 0, "1 of 1 rows checked."),
    Kind("styled-blank-tail-xlsx", "staff.xlsx",
         with_dimension(staff_sheet(ROWS, styled_tail(1_048_576)), b"A1:AN1048576"), 0, "2 of 2 rows checked."),
    Kind("empty-text-tail-xlsx", "staff.xlsx", staff_sheet(ROWS, *text_tail(1_000_000)), 0, "2 of 2 rows checked."),
    Kind("space-tail-in-40-columns-xlsx", "staff.xlsx", staff_sheet(ROWS, *text_tail(100_000, "AN", " ")), 0,
         "2 of 2 rows checked."),
    Kind("blank-cell-far-corner-xlsx", "staff.xlsx", write_far_cell(1_048_575, 16_383, " "), 0,
         "2 of 2 rows checked."),
    Kind("empty-rows-tail-ods", "staff.ods", write_ods(repeated_rows(1_048_573, 1024)), 0, "2 of 2 rows checked."),
]


# ------------------------------------------------------------------------------------------ running them


def run_kind(kind: Kind, folder: Path) -> Finished | AssertionError:
    folder.mkdir()
    write_config(folder / "staff.toml")
    kind.write(folder / kind.name)
    try:
        return run_hrimport("staff", "validate", "staff.toml", kind.name, cwd=folder, ceiling_mb=kind.ceiling_mb,
                            timeout=kind.timeout)
    except AssertionError as failure:  # killed past its ceiling or deadline: the kind's test reports it
        return failure


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """Every selected kind run once, a few children at a time; each kind's test then reads its outcome."""
    selected = {item.callspec.params["kind"].id for item in request.session.items
                if hasattr(item, "callspec") and isinstance(item.callspec.params.get("kind"), Kind)}
    root = tmp_path_factory.mktemp("hostile")
    kinds = [kind for kind in KINDS if kind.id in selected]
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        futures = {kind.id: pool.submit(run_kind, kind, root / kind.id) for kind in kinds}
        yield {kind_id: future.result() for kind_id, future in futures.items()}


def test_there_are_about_fifty_kinds_each_named_once() -> None:
    assert len(KINDS) >= 48
    assert len({kind.id for kind in KINDS}) == len(KINDS)


@pytest.mark.parametrize("kind", KINDS, ids=[kind.id for kind in KINDS])
def test_a_hostile_file_ends_as_documented(kind: Kind, outcomes: dict[str, object]) -> None:
    done = outcomes[kind.id]
    if isinstance(done, AssertionError):
        raise done
    assert isinstance(done, Finished)
    output = done.stdout + done.stderr
    assert "Traceback" not in output and "panicked" not in output, output[-2000:]
    assert done.exit_code == kind.exit_code, output[-2000:]
    assert all(len(line) <= LONGEST_LINE for line in done.lines), max(done.lines, key=len)[:1000]
    if kind.exit_code == 2:
        assert done.stdout == ""
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"Error: {kind.name}")
        assert kind.says in line
    else:
        assert kind.says in done.stdout
        assert done.stderr == ""
    if kind.check is not None:
        kind.check(done)
