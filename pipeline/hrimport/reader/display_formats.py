"""The text Excel shows for a number through a format code of decimals, thousands separators, percentages,
currencies and sections (``0%``, ``#,##0.00``, ``"RM"#,##0.00;("RM"#,##0.00)``): ``display_format`` parses a
code, ``DisplayFormat.show`` renders a number.

The reader never sends such a text: the number the cell stores is sent, and the report shows the text
beside it (``number-as-stored``). No library renders Excel's codes without a dependency tree of its own
(``ssf`` needs Babel, pytz, PyYAML, calendars...) or without dropping what HR exports use (xlsx2html maps
codes onto Babel's patterns, losing ``?`` and sections); the formats seen in HR exports are few, and those
this module does not render (dates, scientific notation, fractions, conditions) are left unlisted.

Excel's rules followed: 15 significant digits, then rounding half away from zero to the places shown;
``0`` shows a digit or 0, ``#`` a digit or nothing, ``?`` a digit or a space; a comma between integer
placeholders groups thousands, one after them divides by a thousand; each ``%`` multiplies by 100; with one
section a negative number gets a minus in front, with two or three the second section shows negatives as
written (no minus of its own) and the third shows zero; ``_x`` is a space and ``*x`` fills the column
(nothing here); ``[$€-407]`` shows ``€``; colours change no character. Decimals and thousands separators
are shown as the code writes them (``.`` and ``,``), whatever the language of the computer showing them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import cached_property

#: A colour in a format code: it changes no character shown.
COLOUR = re.compile(r"\[(?:black|blue|cyan|green|magenta|red|white|yellow|color\s*\d+)\]", re.IGNORECASE)


def code_sections(code: str) -> list[str]:
    """A format code's ``;``-separated sections, ignoring ``;`` inside quotes."""
    sections: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in code:
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            sections.append("".join(current))
            current = []
        else:
            current.append(ch)
    sections.append("".join(current))
    return sections


@dataclass(frozen=True)
class _Section:
    """One ``;``-separated section of a ``DisplayFormat``: the literals before the number (``prefix``), the
    integer part's placeholders (``0``, ``#``, ``?``) and any literals between them (``000-00-0000``), the
    fraction's placeholders, the literals after, and how the number is scaled (``%``, trailing commas)."""

    prefix: str = ""
    integer: tuple[str, ...] = ()  # each a placeholder character or a literal
    grouping: bool = False  # a comma between integer placeholders: thousands separators
    point: bool = False
    fraction: str = ""  # the placeholders after the decimal point
    suffix: str = ""
    exponent: int = 0  # the number shown is the value times 10 ** exponent (+2 a %, -3 a trailing comma)

    @cached_property
    def zeros(self) -> int:
        """The digits the integer part shows at least, when it is some ``#`` then some ``0`` (at most one with
        thousands separators: ``#,##0``); else -1, and ``_fill`` places each digit."""
        template = "".join(self.integer)
        if not _PLAIN_INTEGER.fullmatch(template) or any(len(t) != 1 for t in self.integer):
            return -1
        zeros = template.count("0")
        return zeros if zeros <= 1 or not self.grouping else -1

    def show(self, value: float, sign: str) -> str:
        if not self.integer and not self.point:  # no placeholder: the section shows its literals alone
            return (self.prefix + self.suffix).strip()
        # Excel keeps 15 significant digits, then rounds half away from zero to the places shown
        number = Decimal(f"{abs(value):.15g}").scaleb(self.exponent)
        number = number.quantize(Decimal(1).scaleb(-len(self.fraction)), rounding=ROUND_HALF_UP)
        whole, _, decimals = f"{number:f}".partition(".")
        digits = "" if whole == "0" else whole
        zeros = self.zeros
        if zeros < 0:
            integer = _fill(self.integer, digits, self.grouping)
        elif self.grouping:  # #,##0: the usual case, at C speed
            integer = f"{int(digits or 0):,}" if digits or zeros else ""
        else:
            integer = digits.rjust(zeros, "0")
        shown = list(decimals)
        for k in range(len(self.fraction) - 1, -1, -1):  # trailing zeros: # leaves them out, ? shows a space
            if self.fraction[k] == "0" or shown[k] != "0":
                break
            shown[k] = _PADDING[self.fraction[k]]
        text = f"{self.prefix}{integer}{'.' if self.point else ''}{''.join(shown)}{self.suffix}".strip()
        return sign + text


_PLACEHOLDERS = frozenset("0#?")
_PLAIN_INTEGER = re.compile(r"#*0*")
_PADDING = {"0": "0", "?": " ", "#": ""}


def _fill(template: tuple[str, ...], digits: str, grouping: bool) -> str:
    """The integer part: ``digits`` put in the ``template``'s placeholders from the right, the digits left
    over in the first; a placeholder without a digit shows its padding (``0``: 0, ``?``: a space, ``#``:
    nothing); literals as they are."""
    out: list[str] = []
    at = len(digits)
    first = next((i for i, t in enumerate(template) if t in _PLACEHOLDERS), -1)
    for i in range(len(template) - 1, -1, -1):
        item = template[i]
        if item not in _PLACEHOLDERS:
            out.append(item)
        elif i == first:
            out.append(digits[:at] or _PADDING[item])
            at = 0
        else:
            out.append(digits[at - 1] if at else _PADDING[item])
            at = max(at - 1, 0)
    text = "".join(reversed(out))
    if grouping:  # only among placeholders alone (``display_format``): group every three from the right
        body = text.lstrip(" ")
        groups = [body[max(k - 3, 0) : k] for k in range(len(body), 0, -3)]
        text = " " * (len(text) - len(body)) + ",".join(reversed(groups))
    return text


@dataclass(frozen=True)
class DisplayFormat:
    """A number format that shows a number otherwise than the value read (``number_text``) without changing
    the digits an id is made of: decimals, thousands separators, percentages, currency symbols and other
    literals, a section for negatives or zero. The number stored is what is read and sent; the report
    shows what Excel shows (``show``). ``code``: the format as the file writes it."""

    code: str
    sections: tuple[_Section, ...]

    def show(self, value: float) -> str | None:
        """The text Excel shows for ``value`` (``.`` for decimals and ``,`` for thousands, as the file writes
        the format), or None for a value that is not a number."""
        if not math.isfinite(value):
            return None
        sections = self.sections
        if len(sections) == 1:
            return sections[0].show(value, "-" if value < 0 else "")
        if value > 0 or (value == 0 and len(sections) == 2):
            return sections[0].show(value, "")
        return sections[1].show(value, "") if value < 0 else sections[2].show(value, "")


# One token of a display format: a quoted literal, an escaped character, a [bracket], the width of a
# character as a space (_x), a fill (*x: as many x as the column is wide: nothing here), or one character.
_DISPLAY_TOKEN = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]|_.|\*.|.', re.DOTALL)
_CURRENCY = re.compile(r"\[\$([^-\]]*)(?:-[0-9A-Fa-f]+)?\]")  # [$€-407]: the symbol; [$-409]: a locale alone
# Letters (dates, times, General, scientific notation), text (@) and fractions (/): not rendered here.
_NOT_RENDERED = re.compile(r"[A-Za-z@/]")
#: Built-in formats (ECMA-376 Part 1, 18.8.30) a cell may use without the file writing them out: those whose
#: text does not depend on the computer showing them.
BUILT_IN_FORMATS = {1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00", 9: "0%", 10: "0.00%", 37: "#,##0 ;(#,##0)",
                    38: "#,##0 ;[Red](#,##0)", 39: "#,##0.00;(#,##0.00)", 40: "#,##0.00;[Red](#,##0.00)"}
#: The built-in currency and accounting formats: shown in the currency of the computer showing them, so not
#: known from the file; left as read, unlisted (README).
LOCAL_BUILT_IN_FORMATS = frozenset({5, 6, 7, 8, 41, 42, 43, 44})


def display_format(code: str) -> DisplayFormat | None:
    """The ``DisplayFormat`` of a format code, or None: General and text (``@``) show the value as read,
    and dates, times, fractions, scientific notation, conditions and numeral systems are not rendered here.
    (A zero-padded format renders too; the reader applies it instead: ``number_formats.number_style``.)"""
    if not code:
        return None
    parsed = [_display_section(section) for section in code_sections(code)[:3]]  # a fourth is for text
    sections = tuple(s for s in parsed if s is not None)
    if len(sections) < len(parsed) or not any(s.integer or s.point for s in sections):
        return None
    return DisplayFormat(code, sections)


def _display_section(section: str) -> _Section | None:
    """One section of a display format, or None when it holds what ``DisplayFormat`` does not render."""
    tokens = _DISPLAY_TOKEN.findall(section)
    later = [False] * (len(tokens) + 1)  # whether a placeholder follows token i
    for i in range(len(tokens) - 1, -1, -1):
        later[i] = later[i + 1] or tokens[i] in _PLACEHOLDERS
    prefix: list[str] = []
    integer: list[str] = []
    fraction: list[str] = []
    suffix: list[str] = []
    grouping = point = False
    exponent = 0
    part = "prefix"  # then "integer", "fraction" (after the point), "suffix" (literals after the number)
    for i, token in enumerate(tokens):
        previous = tokens[i - 1] if i else ""
        if token in _PLACEHOLDERS:
            if part == "suffix":
                return None  # a second number
            part = "fraction" if part == "fraction" else "integer"
            (fraction if part == "fraction" else integer).append(token)
            continue
        if token == ".":
            if part in ("fraction", "suffix"):
                return None
            point, part = True, "fraction"
            continue
        if token == "," and part == "integer" and previous in _PLACEHOLDERS and later[i + 1]:
            grouping = True
            continue
        if token == "," and part in ("integer", "fraction") and not later[i + 1] and (
                previous in _PLACEHOLDERS or previous == ","):
            exponent -= 3  # a comma after the number divides it by a thousand
            continue
        literal = _display_literal(token)
        if literal is None:
            return None
        if token == "%":
            exponent += 2
        if part == "prefix":
            prefix.append(literal)
        elif part == "integer" and later[i + 1]:
            integer.append(literal)  # between the integer's placeholders: 000-00-0000
        elif part == "fraction" and later[i + 1]:
            return None
        else:
            part = "suffix"
            suffix.append(literal)
    if grouping and any(t not in _PLACEHOLDERS for t in integer):
        return None  # thousands separators and literals among the digits: not seen in HR exports
    return _Section("".join(prefix), tuple(integer), grouping, point, "".join(fraction), "".join(suffix), exponent)


def _display_literal(token: str) -> str | None:
    """What a token other than a placeholder, a point or a separator shows, or None for one not rendered."""
    if token.startswith('"'):
        return token[1:-1]
    if token.startswith("\\"):
        return token[1:]
    if token.startswith("_"):
        return " "
    if token.startswith("*"):
        return ""
    if token.startswith("["):
        currency = _CURRENCY.fullmatch(token)
        if currency is not None:
            return currency.group(1)
        return "" if COLOUR.fullmatch(token) else None  # else a condition, an elapsed time, a numeral system
    if _NOT_RENDERED.match(token):
        return None
    return token
