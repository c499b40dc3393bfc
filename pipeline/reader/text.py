"""Delimited text files (CSV, TSV, .txt) as columns of text: encoding, delimiter, parsing.

Exports come in whatever encoding and delimiter the HR system's locale uses (GBK, Windows-1252,
semicolons); both are detected rather than asked for, and the body is parsed by pyarrow, with pandas'
C engine as the fallback for ragged rows.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import charset_normalizer
import numpy as np
import pandas as pd

from pipeline.errors import InputFileError
from pipeline.outcomes import SourceInfo
from pipeline.reader.grid import (
    HEADER_SCAN_ROWS,
    SourceTable,
    _checked_header_index,
    _find_header,
    _table_below_header,
    _trim_trailing,
    normalize_header,
)
from pipeline.reader.sniff import _utf16_without_bom

_UTF8 = {"utf-8", "utf8", "utf-8-sig", "utf8-sig"}
#: Bytes of a text file handed to charset-normalizer (it is slow on whole files and needs no more).
ENCODING_SAMPLE = 64 * 1024
DELIMITERS = (",", ";", "\t", "|")
_CHINESE_ENCODINGS = {"gb2312", "gbk", "gb18030", "hz", "cp936"}
_CJK_ENCODINGS = _CHINESE_ENCODINGS | {
    "cp949",
    "euc_kr",
    "johab",
    "shift_jis",
    "cp932",
    "euc_jp",
    "iso2022_jp",
}
_NON_WESTERN_SINGLE_BYTE = {"cp1251", "koi8_r", "koi8_u", "iso8859_5", "mac_cyrillic", "cp1253", "iso8859_7"}


@dataclass
class _TextGrid:
    """A delimited text file decoded: its text, encoding and delimiter."""

    text: str
    encoding: str
    delimiter: str
    raw: bytes | None = None  # the file's own bytes when they already are UTF-8: pyarrow reads them as is

    @classmethod
    def load(
        cls, path: Path, fmt: str, data: bytes, encoding: str | None, delimiter: str | None
    ) -> _TextGrid:
        if encoding is None:
            encoding, text = _detect_and_decode(data)
        else:
            try:
                text = data.decode(encoding)
            except LookupError:
                raise InputFileError(
                    f"{path}: unknown encoding '{encoding}'; use e.g. utf-8, gb18030 or cp1252"
                ) from None
            except UnicodeDecodeError as exc:
                raise InputFileError(
                    f"{path} is not valid {encoding} text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                    "check the encoding set for this file"
                ) from None
        raw = data.removeprefix(codecs.BOM_UTF8) if encoding.replace("_", "-").lower() in _UTF8 else None
        text = text.removeprefix("\ufeff")
        if "\n" not in text[:ENCODING_SAMPLE] and "\r" in text[:ENCODING_SAMPLE]:
            text = text.replace("\r", "\n")  # classic Mac line ends: one newline convention downstream
            raw = None
        if delimiter is None:
            delimiter = _sniff_delimiter(text[:ENCODING_SAMPLE], "\t" if fmt == "tsv" else ",")
        return cls(text, encoding, delimiter, raw)


def _detect_and_decode(data: bytes) -> tuple[str, str]:
    """The encoding of a text file and its decoded text (BOM first, then UTF-8, then charset-normalizer)."""
    for bom, name in (
        (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16: the UTF-32-LE BOM starts with the UTF-16-LE one
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return name, data.decode(name, errors="replace")
    sample = data[:ENCODING_SAMPLE]
    if _utf16_without_bom(sample):
        name = "utf-16-le" if sample[1::2].count(0) > sample[0::2].count(0) else "utf-16-be"
        return name, data.decode(name, errors="replace")
    try:
        return "utf-8", data.decode("utf-8")
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    # The first non-UTF-8 byte is what matters: sample around it (a long ASCII head says nothing).
    start = max(0, first_bad - ENCODING_SAMPLE // 2)
    window = data[start : start + ENCODING_SAMPLE]
    best = charset_normalizer.from_bytes(window).best()
    guess = best.encoding if best is not None else ""
    for name in _encoding_preferences(guess):
        try:
            return name, data.decode(name)
        except UnicodeDecodeError:
            continue
    return "latin-1", data.decode("latin-1")  # every byte is a Latin-1 character: never fails


def _encoding_preferences(guess: str) -> list[str]:
    """Encodings to try, best first, given charset-normalizer's guess.

    charset-normalizer often names an exotic cousin on short samples (cp775 for Windows-1252 text, cp949
    for a few GBK characters), so guesses are folded onto the encodings HR exports really use.
    """
    if guess in _CJK_ENCODINGS or guess.startswith("gb"):
        return ["gb18030", guess, "cp1252"] if guess not in _CHINESE_ENCODINGS else ["gb18030", "cp1252"]
    if guess in ("big5", "big5hkscs", "cp950"):
        return ["big5hkscs", "gb18030", "cp1252"]
    if guess in _NON_WESTERN_SINGLE_BYTE:
        return [guess, "cp1252"]
    return ["cp1252"]


def _sniff_delimiter(sample: str, default: str) -> str:
    """The delimiter giving the most rows with the same field count (more fields breaks a tie)."""
    lines = sample.split("\n")
    if len(lines) > 1:
        lines = lines[:-1]  # the sample may end mid-line
    lines = [line for line in lines[:200] if line.strip()]
    best: tuple[int, int, int] = (0, 0, 0)
    chosen = default
    for rank, delimiter in enumerate(sorted(DELIMITERS, key=lambda d: d != default)):
        counts: dict[int, int] = {}
        for row in csv.reader(lines, delimiter=delimiter):
            counts[len(row)] = counts.get(len(row), 0) + 1
        fields, rows = max(
            ((f, n) for f, n in counts.items() if f > 1), key=lambda t: (t[1], t[0]), default=(0, 0)
        )
        score = (rows, fields, -rank)
        if fields > 1 and score > best:
            best, chosen = score, delimiter
    return chosen


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` one by one, without copying the whole text (as ``io.StringIO`` would)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start : end + 1]
        start = end + 1


def _build_from_text(
    path: Path, info: SourceInfo, grid: _TextGrid, header_row: int | None, expected: Iterable[str]
) -> SourceTable:
    text = grid.text
    # The top of the file, parsed record by record, with the physical line each record ends on.
    top: list[list[str]] = []
    line_ends: list[int] = []
    reader = csv.reader(_lines(text), delimiter=grid.delimiter)
    scan = max(HEADER_SCAN_ROWS, header_row or 0)
    try:
        for record in reader:
            top.append(record)
            line_ends.append(reader.line_num)
            if len(top) > scan:
                break
    except csv.Error as exc:
        raise InputFileError(f"{path}: cannot be read as delimited text ({exc}); check the file") from None
    more = len(top) > scan
    top = top[:scan]
    index = _checked_header_index(path, header_row, top, len(top) + (1 if more else 0))
    if index is None:
        index = _find_header(top, {normalize_header(h) for h in expected})
    if index is None:
        raise InputFileError(f"{path} is empty; export the data again")
    # Hand pandas the text from the header on: titles above it have other field counts.
    lines_before = line_ends[index - 1] if index else 0
    offset = 0
    for _ in range(lines_before):
        offset = text.index("\n", offset) + 1
    if grid.raw is not None:  # UTF-8 already: cut the bytes rather than encode the text again
        body = grid.raw[len(text[:offset].encode("utf-8")) :]
    else:
        body = text[offset:].encode("utf-8")
    del grid.text, grid.raw, text
    frame = _parse_csv(path, body, grid.delimiter, index + 1, len(top[index]))
    del body
    return _table_below_header(path, info, frame, index, 0, top[:index])


def _parse_csv(path: Path, body: bytes, delimiter: str, header_row: int, header_width: int) -> pd.DataFrame:
    """All records from the header on as text, pyarrow first, the C engine for ragged rows.

    Rows shorter than the header are padded with empty cells. Rows longer than the header are fine while
    the extra cells are empty (a trailing delimiter); a value beyond the header is an error, since it
    usually means an unquoted delimiter shifted the row's values into the wrong columns.
    """
    options = {
        "sep": delimiter,
        "header": None,
        "dtype": str,
        "keep_default_na": False,
        "skip_blank_lines": False,
    }
    try:
        return pd.read_csv(io.BytesIO(body), engine="pyarrow", **options).fillna("")  # type: ignore[call-overload]
    except (pd.errors.ParserError, ValueError):
        pass  # pyarrow refuses rows whose field count differs from the header's
    width: int | None = None
    for _ in range(20):  # each retry widens to the longest row seen so far
        try:
            names = list(range(width)) if width else None
            frame = pd.read_csv(io.BytesIO(body), engine="c", names=names, **options)  # type: ignore[call-overload]
            break
        except pd.errors.ParserError as exc:
            match = re.search(r"Expected \d+ fields in line \d+, saw (\d+)", str(exc))
            if not match:
                raise InputFileError(
                    f"{path}: cannot be read as delimited text ({exc}); check the file"
                ) from None
            width = int(match.group(1))
    else:
        raise InputFileError(
            f"{path}: rows have too many different lengths to be read as a table; check the file"
        )
    frame = frame.fillna("")
    for extra in frame.columns[header_width:]:
        filled = np.flatnonzero((frame[extra] != "").to_numpy())
        if len(filled):
            row = int(filled[0])
            cells = len(_trim_trailing([str(c) for c in frame.iloc[row].tolist()]))
            shown = "tab" if delimiter == "\t" else f"'{delimiter}'"
            raise InputFileError(
                f"{path}: row {header_row + row} has {cells} cells but the header row has {header_width}; "
                f"put quotes around values that contain {shown}"
            )
    return frame[frame.columns[:header_width]]
