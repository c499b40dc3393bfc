"""What a file really is, whatever its name says: content checks, ZIP members, password protection.

Exports arrive as web pages named .xls, workbooks renamed .csv, truncated downloads and encrypted
workbooks. Looking at the bytes before any parser runs turns a parser's cryptic failure into one line
that says what the file is and how to fix it.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from pathlib import Path

from hrimport.config import DEFAULT_MAX_UNPACKED_MB
from hrimport.errors import InputFileError
from hrimport.reader.encoding import unicode_bom, unicode_without_bom

_TEXT_FORMATS = {"csv", "tsv"}
MB = 1_000_000

_ZIP_MAGIC = b"PK\x03\x04"
_EMPTY_ZIP_MAGIC = b"PK\x05\x06"
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# An encrypted OOXML workbook is an OLE2 compound file holding these streams (MS-OFFCRYPTO 2.3.4.4).
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")


def password_protected(path: Path) -> InputFileError:
    """The one message for an encrypted workbook, found by its bytes here or by the reader's library."""
    if path.suffix.lower() == ".ods":
        return InputFileError(
            f"{path} is password-protected; remove the password in LibreOffice "
            "(File > Save As, with 'Save with password' unticked) and save it again"
        )
    return InputFileError(
        f"{path} is password-protected; remove the password in Excel "
        "(File > Info > Protect Workbook > Encrypt with Password) and save it again"
    )


def _check_content(path: Path, fmt: str, data: bytes, max_unpacked_mb: int = DEFAULT_MAX_UNPACKED_MB) -> None:
    """Raise when the bytes are not the format the extension says, the workbook is encrypted, or it
    would unpack to more than ``max_unpacked_mb`` megabytes."""
    head = data[:8]
    if head.startswith(_OLE2_MAGIC) and data.find(_ENCRYPTED_STREAM) >= 0:
        raise password_protected(path)
    actual = _sniff_kind(data)
    wanted = {"csv": "text", "tsv": "text", "xls": "ole2"}.get(fmt, "zip")
    if actual == wanted:
        if actual == "zip":
            _check_zip_members(path, fmt, data, max_unpacked_mb)
        return
    described = {
        "zip": ("an XLSX workbook", "rename it to .xlsx"),
        "ole2": ("an Excel 97-2003 workbook", "rename it to .xls"),
        "html": ("a web page (HTML)", "open it in Excel and save it as .xlsx, or export CSV from the system"),
        "xml": ("an XML Spreadsheet 2003 file", "open it in Excel and save it as .xlsx"),
        "xml-other": ("an XML file", "export the data as CSV or Excel instead"),
        "text": ("a text (CSV) file", "rename it to .csv"),
        "pdf": ("a PDF document", "export the data as CSV or Excel instead"),
        "binary": ("a binary file that is not a spreadsheet", "export the data as CSV or Excel again"),
    }
    looks_like, fix = described[actual]
    if actual == "zip" and fmt in _TEXT_FORMATS:
        looks_like, fix = "an Excel or OpenDocument workbook (ZIP)", "rename it to .xlsx (or .ods)"
    if wanted == "zip" and actual == "binary" and head[:2] == b"PK":
        # A ZIP signature with a broken body: a truncated download rather than the wrong format.
        raise InputFileError(f"{path} is damaged or incomplete; download or export it again")
    raise InputFileError(f"{path} is not really {_FORMAT_NAMES[fmt]}: it looks like {looks_like}; {fix}")


_FORMAT_NAMES = {
    "csv": "a CSV file",
    "tsv": "a TSV file",
    "xlsx": "an XLSX workbook",
    "xlsm": "an XLSM workbook",
    "xls": "an Excel 97-2003 (.xls) workbook",
    "ods": "an OpenDocument spreadsheet",
}


def _sniff_kind(data: bytes) -> str:
    """Classify bytes as zip | ole2 | html | xml | xml-other | pdf | text | binary by their first bytes."""
    if data.startswith((_ZIP_MAGIC, _EMPTY_ZIP_MAGIC)):
        return "zip"
    if data.startswith(_OLE2_MAGIC):
        return "ole2"
    if data.startswith(b"%PDF"):
        return "pdf"
    start = data[:4096]
    if (bom := unicode_bom(start)) is not None:
        mark, _, codec = bom
        start = start[len(mark) :].decode(codec, errors="ignore").encode("utf-8")
    else:
        wide = unicode_without_bom(start)
        if wide is not None:
            start = start.decode(wide, errors="ignore").encode("utf-8")
    lowered = start.lstrip().lower()
    # XML Spreadsheet 2003 first: its <Table> element is no web page's table
    if lowered.startswith((b"<?xml", b"<workbook")) and _SPREADSHEET_ML in start:
        return "xml"
    if _starts_like_a_web_page(lowered):
        return "html"
    if lowered.startswith(b"<?xml"):
        return "xml-other"
    if lowered.startswith(b"<") and (b"<td" in lowered or b"<tr" in lowered):
        return "html"
    if len(start.translate(None, _TEXT_BYTES)) * 100 > len(start):
        return "binary"
    return "text"


_SPREADSHEET_ML = b"urn:schemas-microsoft-com:office:spreadsheet"
# What may come before a web page's first element (an XML declaration, comments), and the elements it may
# start with: payroll systems save "Excel" files as a <meta> line or kilobytes of <style> before the table.
_PROLOG = re.compile(rb"(?:\s+|<\?.*?\?>|<!--.*?-->)*", re.DOTALL)
_HTML_ELEMENT = re.compile(rb"<(?:!doctype\s+html|html|head|meta|title|style|link|script|body|table|tr|td|th)[\s>/]")


def _starts_like_a_web_page(lowered: bytes) -> bool:
    prolog = _PROLOG.match(lowered)
    return bool(_HTML_ELEMENT.match(lowered, prolog.end() if prolog else 0)) or b"<table" in lowered[:1024]


# Bytes that text holds: all but DEL and the C0 controls other than tab, line ends and page breaks. More
# than 1% of others at the top is binary (random bytes have about 10%); a stray zero byte in a cell of a
# text file is not, and is flagged on its row (``reader.grid``).
_TEXT_BYTES = bytes(b for b in range(256) if b >= 32 and b != 127 or b in b"\t\n\r\f\v")


_ODF_MANIFEST = "META-INF/manifest.xml"
# Excel's "Strict Open XML Spreadsheet" writes ISO 29500 Strict's namespaces, which the reading libraries
# do not know: they found no sheet in it and called the workbook empty.
_STRICT_SPREADSHEET_ML = b"http://purl.oclc.org/ooxml/spreadsheetml/main"


# What zipfile raises for a member it cannot unpack: a broken archive, a deflate stream with flipped bits
# (zlib.error), a member marked encrypted (RuntimeError: no workbook program encrypts that way), packed by a
# method it does not know (NotImplementedError), or said to be bzip2 and not (OSError).
_UNPACKING_FAILED = (zipfile.BadZipFile, EOFError, ValueError, zlib.error, RuntimeError, NotImplementedError, OSError)


def _check_zip_members(path: Path, fmt: str, data: bytes, max_unpacked_mb: int) -> None:
    """A ZIP must be complete, unpack to at most ``max_unpacked_mb`` MB, and hold the workbook its
    extension promises."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            _check_unpacked_size(path, archive, max_unpacked_mb)
            names = set(archive.namelist())
            mimetype = archive.read("mimetype")[:100] if "mimetype" in names else b""
            manifest = archive.read(_ODF_MANIFEST) if _ODF_MANIFEST in names else b""
            with archive.open("xl/workbook.xml") if "xl/workbook.xml" in names else io.BytesIO() as part:
                workbook_start = part.read(4096)
            _check_shared_strings_count(path, archive)
    except _UNPACKING_FAILED:
        raise InputFileError(f"{path} is damaged or incomplete; download or export it again") from None
    is_ods = b"opendocument.spreadsheet" in mimetype
    is_ooxml = "xl/workbook.xml" in names or "xl/workbook.bin" in names
    if is_ods and b"encryption-data" in manifest:  # LibreOffice's "Save with password" (ODF 1.2, 3.4)
        raise password_protected(path)
    if _STRICT_SPREADSHEET_ML in workbook_start:
        raise InputFileError(
            f"{path} is saved as a Strict Open XML Spreadsheet, which cannot be read; open it in Excel and save "
            "it as 'Excel Workbook (*.xlsx)'"
        )
    if fmt == "ods" and not is_ods:
        what = "an XLSX workbook; rename it to .xlsx" if is_ooxml else "a ZIP archive without a spreadsheet"
        raise InputFileError(f"{path} is not really an OpenDocument spreadsheet: it looks like {what}")
    if fmt in ("xlsx", "xlsm") and not is_ooxml:
        what = (
            "an OpenDocument spreadsheet; rename it to .ods"
            if is_ods
            else "a ZIP archive without a workbook (a Word document or a zipped folder?); export the data again"
        )
        raise InputFileError(f"{path} is not really {_FORMAT_NAMES[fmt]}: it looks like {what}")


def check_sheet_text(path: Path, archive_path: Path, part: str, sheet: str) -> None:
    """Refuse a sheet part saved as UTF-16 or UTF-32 text: the workbook libraries read XML as UTF-8, and
    one without a byte-order mark gave them no cell (the workbook was told as empty, with the data in it);
    with a mark they failed with a decoding error. No spreadsheet program writes a part so."""
    with zipfile.ZipFile(archive_path) as archive, archive.open(part) as read:
        head = read.read(4096)
    bom = unicode_bom(head)
    wide = (bom[2] if bom[2] != "utf-8" else None) if bom else unicode_without_bom(head)
    if wide is None:
        return
    how = "" if bom else " without a byte-order mark"
    raise InputFileError(
        f"{path}: sheet '{sheet}' is saved as {wide[:6].upper()} text{how} ({part}), which the workbook "
        "libraries cannot read (they read a workbook's XML as UTF-8); export the workbook again, or open it "
        "in a spreadsheet program and save it as .xlsx"
    )


# (read before the workbook is copied as Excel writes it: its quotes may be single, ``xlsx_quotes``)
_UNIQUE_COUNT = re.compile(rb"""<(?:\w+:)?sst\b[^>]*?\buniqueCount\s*=\s*["'](\d+)["']""")
#: The fewest bytes a shared string takes in the part (``<si/>``).
_SMALLEST_SHARED_STRING = 5


def _check_shared_strings_count(path: Path, archive: zipfile.ZipFile) -> None:
    """Refuse a table of shared strings claiming more strings than its part could hold: the library reserves
    room for as many as it claims before reading one (``uniqueCount="1000000000"`` asked for 24 GB, and the
    process aborted)."""
    for info in archive.infolist():
        if not info.filename.lower().endswith("sharedstrings.xml"):
            continue
        with archive.open(info) as part:
            claimed = _UNIQUE_COUNT.search(part.read(4096))
        if claimed and int(claimed.group(1)) > info.file_size // _SMALLEST_SHARED_STRING:
            raise InputFileError(
                f"{path} is damaged or incomplete (its table of shared strings claims {int(claimed.group(1)):,} "
                f"strings in {info.file_size:,} bytes); download or export it again"
            )


def _check_unpacked_size(path: Path, archive: zipfile.ZipFile, max_unpacked_mb: int) -> None:
    """Refuse a workbook whose parts would unpack to more than the limit, before any part is unpacked.

    A ZIP says how big each part is once unpacked; a sheet of a billion repeated bytes packs into 1 MB
    (a "ZIP bomb") and reading it took 1.2 GB. A real 100,000 x 40 export unpacks to about 250 MB.
    """
    total = sum(info.file_size for info in archive.infolist())
    if total > max_unpacked_mb * MB:
        raise InputFileError(
            f"{path} would unpack to {total / MB:,.0f} MB, more than the limit of {max_unpacked_mb:,} MB "
            "(a damaged or hostile file?); if the workbook really is that big, raise max_unpacked_mb "
            "in the config's [source] section"
        )
