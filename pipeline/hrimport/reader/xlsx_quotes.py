"""An XLSX part whose attributes are written in single quotes (``<row r='3' hidden='1'>``), or with spaces or line
breaks around them, read as one written as Excel writes it (``<row r="3" hidden="1">``).

XML lets a writer quote an attribute with ``'`` as well as ``"``, and put any white space around ``=`` and
between attributes; the workbook libraries read either. What the reader finds in a part's bytes itself (the
rows and columns a sheet hides, its merged header, a zero-padded id's style, a cell's reference, its real
extent) is looked for as Excel writes it, in byte searches kept that way on purpose: they run over every byte
of a 100,000-row sheet. In a part written otherwise none of it was found, and a hidden row was sent without a
word. So such a workbook is copied once, its tags written as Excel writes them (``xlsx_prefixes``), and
everything reads the copy; the workbooks written as Excel writes them (nearly all) are not copied.

Whether a part is so written is seen in its first bytes (``written_otherwise``): a writer quotes every
attribute alike, and the root, its ``<dimension>`` and first row come first.
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from hrimport.reader.extent import holds_match

# A start tag, an attribute's value holding any character but its own quote ('<' never, '>' may be there).
_START_TAG = re.compile(rb"""<[A-Za-z_][\w.:-]*(?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*/?>""")
_ATTRIBUTE = re.compile(rb"""\s+([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
# what a start tag written as Excel writes it never holds: a quote after '=' other than '"', white space around
# '=', a tab or a line break (``<row\n r="3">``: the searches for ``<row `` and `` r="`` miss it)
_OTHERWISE = re.compile(rb"""=\s*'|\s=|=\s|[\t\r\n]""")
# A value in double quotes, as Excel writes every one: what it holds (a sheet named 'Staff = 2026', a number format
# '0" = n"', a filter's value) is no sign of how its tag is written, and is left out of the look (``written_otherwise``)
_DOUBLE_QUOTED = re.compile(rb'"[^"]*"')
# A start tag holding one of those (its attributes before as Excel writes them, any after): the tags a
# part written otherwise holds after ``_SINGLE_QUOTED`` has requoted what it could.
_PLAIN = rb' [\w.:-]+="[^"]*"'
_ANY = rb"""\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*')"""
_ODD = rb"""(?:\s+[\w.:-]+(?:\s*=\s*'[^']*'|(?:\s+=\s*|=\s+)"[^"]*")|\s*[\t\r\n]\s*[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))"""
_ODD_TAG = re.compile(rb"<[A-Za-z_][\w.:-]*(?:" + _PLAIN + rb")*" + _ODD + rb"(?:" + _ANY + rb")*\s*/?>")
# A value in single quotes holding no '"', requoted in one substitution in RE2 (a sheet of 100,000 rows in
# 2 s, where a Python function for each tag took 20); safe where no text between tags, nor a value in double
# quotes, holds ``='``. Then only the tags that may still be written otherwise go through ``_ODD_TAG``.
_SINGLE_QUOTED = r"""='([^'"<]*)'"""
_HOLDING_IT = rb""">[^<]*='|="[^"<]*='"""
_MAY_BE_ODD = rb"""<[A-Za-z_][^<>]*(?:=\s*'|\s=|=\s|[\t\r\n])"""


def written_otherwise(head: bytes) -> bool:
    """Whether a start tag in ``head`` (a part's first bytes) is written otherwise than Excel writes it; the values
    it quotes as Excel does are not looked at."""
    return any(_OTHERWISE.search(_DOUBLE_QUOTED.sub(b'""', tag.group())) for tag in _START_TAG.finditer(head))


def as_excel_writes(xml: bytes) -> bytes:
    """``xml`` (whole tags: cut before a ``<``) with each start tag's attributes written as Excel writes them,
    `` name="value"`` (a ``"`` in a value written ``&quot;``); text between tags as it is."""
    if not holds_match(_HOLDING_IT, xml):
        whole = pa.array([xml], type=pa.large_binary())
        xml = pc.replace_substring_regex(whole, pattern=_SINGLE_QUOTED, replacement=r'="\1"')[0].as_py()
    if holds_match(_MAY_BE_ODD, xml):
        xml = _ODD_TAG.sub(_tag_as_excel_writes, xml)
    return xml


def _tag_as_excel_writes(tag: re.Match[bytes]) -> bytes:
    written = tag.group()
    name = written[1:].split(None, 1)[0].rstrip(b"/>")
    attributes = b"".join(
        b" " + m.group(1) + b'="' + (m.group(2) if m.group(3) is None else m.group(3).replace(b'"', b"&quot;")) + b'"'
        for m in _ATTRIBUTE.finditer(written, 1 + len(name)))
    return b"<" + name + attributes + (b"/>" if written.endswith(b"/>") else b">")


__all__ = ["as_excel_writes", "written_otherwise"]
