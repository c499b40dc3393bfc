"""Leave types as a spreadsheet writes them -> the platform's names, and the ``lang`` each row is sent with.

The platform takes a leave type "in the language given by ``lang``" (spec, endpoint 5), ``EN`` or ``ZH``.
A sheet may write a type in English, Simplified or Traditional Chinese, or in the company's own words
(which the config's ``[timeoff.values.leave_type]`` map translates before this stage). Each row's ``lang``
comes from, first found wins: the row's ``lang`` column (when the config maps one), the config's
``[timeoff] lang`` (``EN``/``ZH``; ``auto``, the default, means "not set"), else the script of the name
(any CJK ideograph -> ``ZH``). The name sent is the type's canonical name in that language, so
``年休假`` becomes ``年假`` and ``annual leave`` becomes ``Annual Leave``; a Traditional name stays
Traditional. The platform publishes no list of its leave types (api-notes), so the list here
(``schemas/leave_types.toml``) is ours: a name matching none of its types is sent as written
(``unlisted_leave_type``), its lang the script of the name unless the row or the config says it, with an
``unknown-leave-type`` warning naming the closest known names (difflib); the platform refuses it if it does not
know it either, and ``[timeoff] strict_checks = ["unknown-leave-type"]`` holds such a row back instead.

    >>> match_leave_type("sick leave").leave_type.en
    'Sick Leave'
    >>> match_leave_type("喪假").send_name("ZH")
    '喪假'
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from typing import Literal

from hrimport.fields import LeaveType, leave_types

Lang = Literal["EN", "ZH"]
LANGS: tuple[Lang, ...] = ("EN", "ZH")

# CJK Unified Ideographs and Extension A, plus the compatibility block: enough to tell Chinese from English.
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class LeaveTypeMatch:
    """A leave type and how the sheet wrote it: a type of the list, or (``listed`` false) the name as written,
    which the list does not hold (``unlisted_leave_type``)."""

    leave_type: LeaveType
    written: str
    listed: bool = True

    @property
    def written_lang(self) -> Lang:
        return detect_lang(self.written)

    def send_name(self, lang: Lang) -> str:
        """The type's platform name in ``lang``: Traditional Chinese kept when the sheet wrote it so."""
        lt = self.leave_type
        if lang == "EN":
            return lt.en
        if _fold_zh(self.written) == lt.zh_hant and lt.zh_hant != lt.zh:
            return lt.zh_hant
        return lt.zh


def detect_lang(name: str) -> Lang:
    """``ZH`` when the name holds a Chinese character, else ``EN``."""
    return "ZH" if _CJK.search(name) else "EN"


def _fold_en(name: str) -> str:
    """Case, spaces, hyphens and underscores ignored: ``annual-leave`` == ``Annual  Leave``."""
    return " ".join(re.sub(r"[-_]+", " ", name).split()).casefold()


def _fold_zh(name: str) -> str:
    # NFKC turns full-width and compatibility forms into the usual ones; Chinese has no spaces to keep
    return "".join(unicodedata.normalize("NFKC", name).split())


@cache
def _index() -> tuple[dict[str, LeaveType], dict[str, LeaveType]]:
    english: dict[str, LeaveType] = {}
    chinese: dict[str, LeaveType] = {}
    for lt in leave_types():
        english[_fold_en(lt.en)] = lt
        # "Annual" for "Annual Leave": exports often drop the word
        if lt.en.casefold().endswith(" leave"):
            english.setdefault(_fold_en(lt.en[: -len(" leave")]), lt)
        for name in lt.chinese_names:
            chinese[_fold_zh(name)] = lt
    return english, chinese


def match_leave_type(name: str) -> LeaveTypeMatch | None:
    """The leave type ``name`` means, in English or Chinese, or None if it is not a known name."""
    english, chinese = _index()
    written = name.strip()
    lt = chinese.get(_fold_zh(written)) if detect_lang(written) == "ZH" else english.get(_fold_en(written))
    return LeaveTypeMatch(lt, written) if lt else None


def unlisted_leave_type(name: str) -> LeaveTypeMatch:
    """``name``, which no type of the list matches, as a leave type of its own: sent as written (trimmed) in
    either language, counted on working days (the basis only explains a difference of day counts)."""
    written = name.strip()
    return LeaveTypeMatch(LeaveType(0, written, written, written, "Working"), written, listed=False)


def ledger_name(name: str) -> str:
    """The name the time-off ledger keys a leave type by (``hrimport.state.ledger``): the English name of the
    type ``name`` means (``年假`` and ``Annual Leave`` are one), or ``name`` trimmed when the list has no such type
    (sent as written); for the name a report or a journal shows in a row's details.

    >>> ledger_name("年假"), ledger_name(" Garden Leave ")
    ('Annual Leave', 'Garden Leave')
    """
    return (match_leave_type(name) or unlisted_leave_type(name)).leave_type.en


def closest_names(name: str, n: int = 3) -> list[str]:
    """Known names (English and Chinese) closest to ``name``, best first; English names when none is close."""
    if detect_lang(name) == "ZH":
        pool = list(dict.fromkeys(c for lt in leave_types() for c in lt.chinese_names))
        key = _fold_zh(name)
        # short Chinese names share few characters: a lower cut-off still finds 年休 -> 年假
        found = difflib.get_close_matches(key, pool, n=n, cutoff=0.3)
    else:
        pool = [lt.en for lt in leave_types()]
        folded = {_fold_en(p): p for p in pool}
        found = [folded[f] for f in difflib.get_close_matches(_fold_en(name), list(folded), n=n, cutoff=0.5)]
    return found


def unknown_type_message(row: int, column: str | None, name: str, *, sent: bool) -> str:
    """The sentence for a name matching no leave type of the list, with the closest known names; ``sent``: the
    row is sent with it as written (else held back: ``[timeoff] strict_checks``)."""
    where = f"Row {row}, column '{column}'" if column else f"Row {row}"
    close = closest_names(name)
    if close:
        hint = f"closest known: {', '.join(close)}"
    else:
        hint = f"known: {', '.join(lt.en for lt in leave_types())}"
    said = f"{where}: '{name}' is not among the leave types hrimport knows ({hint})"
    fix = "add a value map under [timeoff.values.leave_type] if it is the company's own name for one of them"
    if sent:
        return (f"{said}; kept as written, for the platform to take or refuse (the platform publishes no list "
                f"of its types; if it is a typo, correct it, or {fix}).")
    return f"{said}; not sent ([timeoff] strict_checks lists unknown-leave-type): correct it, or {fix}."


def parse_lang(value: str) -> Lang | None:
    """``EN``/``ZH`` given in any case, or None."""
    folded = value.strip().upper()
    return next((lang for lang in LANGS if lang == folded), None)


__all__ = [
    "LANGS",
    "Lang",
    "LeaveTypeMatch",
    "closest_names",
    "detect_lang",
    "ledger_name",
    "match_leave_type",
    "parse_lang",
    "unknown_type_message",
    "unlisted_leave_type",
]
