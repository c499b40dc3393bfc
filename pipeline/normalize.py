"""Rewrite spreadsheet values in the canonical form the service expects, before validation.

Issue 3, "Normalisation before validation": trim, enumerations in canonical case, booleans, gender
synonyms, countries to ISO alpha-2, dates to ``YYYY-MM-DD``, e-mails lower-cased. Every normaliser takes
a Series of text and returns a new one in which each value it *recognises* is rewritten and every other
value is left exactly as it was: a normaliser never guesses (a misspelt country or an impossible date
stays as written, so the validator can report it with the value the person typed).

Values repeat a lot (100k rows, a few dozen countries), so the parsers run once per distinct value
(``pd.factorize``) and the results are spread back over the rows.

Example::

    normalize_country(pd.Series(["MYS", "Malaysia", "马来西亚", "Malasia"]))
    # -> ["MY", "MY", "MY", "Malasia"]
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from functools import cache

import numpy as np
import pandas as pd
import pycountry

from pipeline.fields import Field

__all__ = [
    "normalize_boolean",
    "normalize_country",
    "normalize_date",
    "normalize_email",
    "normalize_enum",
    "normalize_for_field",
    "normalize_gender",
    "normalize_number",
    "trim",
]

_TRUE = frozenset({"true", "yes", "y", "1", "是"})
_FALSE = frozenset({"false", "no", "n", "0", "否"})
_GENDER = {
    "m": "Male",
    "male": "Male",
    "man": "Male",
    "男": "Male",
    "男性": "Male",
    "f": "Female",
    "female": "Female",
    "woman": "Female",
    "女": "Female",
    "女性": "Female",
}

# Common Chinese names (Simplified and Traditional) of the countries HR exports from the region name.
_CHINESE_COUNTRY_NAMES = {
    "CN": ("中国", "中國", "中华人民共和国", "中華人民共和國", "中国大陆", "中國大陸"),
    "HK": ("香港", "中国香港", "中國香港", "香港特别行政区", "香港特別行政區"),
    "MO": ("澳门", "澳門", "中国澳门", "中國澳門"),
    "TW": ("台湾", "台灣", "臺灣", "中国台湾", "中國台灣"),
    "MY": ("马来西亚", "馬來西亞"),
    "SG": ("新加坡",),
    "US": ("美国", "美國"),
    "GB": ("英国", "英國"),
    "JP": ("日本",),
    "KR": ("韩国", "韓國", "南韩", "南韓"),
    "KP": ("朝鲜", "朝鮮", "北韩", "北韓"),
    "AU": ("澳大利亚", "澳大利亞", "澳洲"),
    "NZ": ("新西兰", "紐西蘭", "新西蘭"),
    "IN": ("印度",),
    "ID": ("印度尼西亚", "印度尼西亞", "印尼"),
    "TH": ("泰国", "泰國"),
    "VN": ("越南",),
    "PH": ("菲律宾", "菲律賓"),
    "KH": ("柬埔寨",),
    "LA": ("老挝", "寮國", "老撾"),
    "MM": ("缅甸", "緬甸"),
    "BN": ("文莱", "汶萊", "文萊"),
    "BD": ("孟加拉国", "孟加拉國", "孟加拉"),
    "PK": ("巴基斯坦",),
    "LK": ("斯里兰卡", "斯里蘭卡"),
    "NP": ("尼泊尔", "尼泊爾"),
    "DE": ("德国", "德國"),
    "FR": ("法国", "法國"),
    "IT": ("意大利", "義大利"),
    "ES": ("西班牙",),
    "PT": ("葡萄牙",),
    "NL": ("荷兰", "荷蘭"),
    "BE": ("比利时", "比利時"),
    "CH": ("瑞士",),
    "AT": ("奥地利", "奧地利"),
    "SE": ("瑞典",),
    "NO": ("挪威",),
    "DK": ("丹麦", "丹麥"),
    "FI": ("芬兰", "芬蘭"),
    "IE": ("爱尔兰", "愛爾蘭"),
    "PL": ("波兰", "波蘭"),
    "RU": ("俄罗斯", "俄羅斯"),
    "TR": ("土耳其",),
    "CA": ("加拿大",),
    "MX": ("墨西哥",),
    "BR": ("巴西",),
    "AR": ("阿根廷",),
    "CL": ("智利",),
    "AE": ("阿联酋", "阿聯酋", "阿拉伯联合酋长国", "阿拉伯聯合大公國"),
    "SA": ("沙特阿拉伯", "沙烏地阿拉伯", "沙特"),
    "IL": ("以色列",),
    "EG": ("埃及",),
    "ZA": ("南非",),
    "NG": ("尼日利亚", "奈及利亞"),
    "KE": ("肯尼亚", "肯亞"),
}
# English names people write that pycountry does not hold as name, official or common name.
_ENGLISH_ALIASES = {
    "US": ("USA", "U.S.A.", "U.S.", "America", "United States of America"),
    "GB": ("UK", "U.K.", "Great Britain", "Britain", "England", "Scotland", "Wales", "Northern Ireland"),
    "KR": ("Korea, South", "Republic of Korea"),
    "KP": ("Korea, North",),
    "RU": ("Russia",),
    "CZ": ("Czech Republic",),
    "TR": ("Turkey",),
    "MO": ("Macau",),
    "BN": ("Brunei",),
    "CV": ("Cape Verde",),
    "CI": ("Ivory Coast",),
    "SZ": ("Swaziland",),
    "MM": ("Burma",),
    "PS": ("Palestine",),
    "VA": ("Vatican", "Vatican City"),
    "FM": ("Micronesia",),
    "NL": ("The Netherlands", "Holland"),
    "CD": ("DR Congo", "Democratic Republic of the Congo", "DRC"),
    "CG": ("Republic of Congo",),
    "MK": ("Macedonia",),
    "AE": ("UAE", "U.A.E."),
    "PH": ("The Philippines",),
}

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
_TIME = r"(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
_YMD = re.compile(rf"(\d{{4}})-(\d{{1,2}})-(\d{{1,2}}){_TIME}|(\d{{4}})[/.](\d{{1,2}})[/.](\d{{1,2}})")
_CHINESE_DATE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日?")
_NUMERIC_DMY = re.compile(r"(\d{1,2})([/.\-])(\d{1,2})\2(\d{4})")
_DAY_MONTH_NAME = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?[\s\-]+([A-Za-z]{3,9})\.?,?[\s\-]+(\d{4})")
_MONTH_NAME_DAY = re.compile(r"([A-Za-z]{3,9})\.?[\s\-]+(\d{1,2})(?:st|nd|rd|th)?,?[\s\-]+(\d{4})")
_SERIAL = re.compile(r"(\d{5})(?:\.\d+)?")
# Excel serial numbers taken as dates: 10000 (1927-05-18) to 73050 (2099-12-31); five digits only, so a
# year ("2020") or a small count is never read as a date.
_SERIAL_RANGE = (10_000, 73_050)
_EXCEL_EPOCH = dt.date(1899, 12, 30)  # serial 1 = 1900-01-01 after Excel's 1900 leap-year bug
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)")


def _fold(value: str) -> str:
    """Case-folded, trimmed, inner spaces collapsed: the key of every synonym table."""
    return " ".join(value.split()).casefold()


def _per_value(s: pd.Series, convert: Callable[[str], str | None]) -> pd.Series:
    """Apply ``convert`` once per distinct value; None (not recognised) keeps the value as it was."""
    s = s.fillna("")
    codes, uniques = pd.factorize(s)
    originals = [str(u) for u in uniques]
    converted = [convert(u) for u in originals]
    if all(new is None or new == old for new, old in zip(converted, originals)):
        return s.copy()
    table = np.array([old if new is None else new for new, old in zip(converted, originals)], dtype=object)
    return pd.Series(table[codes], index=s.index, name=s.name, dtype="str")


def trim(s: pd.Series) -> pd.Series:
    """Surrounding whitespace removed; missing values become ""."""
    return s.fillna("").str.strip()


def normalize_enum(s: pd.Series, field: Field) -> pd.Series:
    """Enumerated values matched ignoring case and spaces, written as the field's canonical choice."""
    return _per_value(s, field.canonical_choice)


def normalize_boolean(s: pd.Series) -> pd.Series:
    """ "true"/"false" from true/false, yes/no, y/n, 1/0 and 是/否, in any case."""

    def convert(value: str) -> str | None:
        folded = _fold(value)
        if folded in _TRUE:
            return "true"
        if folded in _FALSE:
            return "false"
        return None

    return _per_value(s, convert)


def normalize_gender(s: pd.Series) -> pd.Series:
    """ "Male"/"Female" from M/F, male/female, man/woman, 男/女 and 男性/女性, in any case."""
    return _per_value(s, lambda value: _GENDER.get(_fold(value)))


def _ascii_fold(text: str) -> str:
    """ "Türkiye" -> "turkiye": accents dropped, so a name typed without them still matches exactly."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def _country_table() -> dict[str, str]:
    """Every accepted spelling of every country, folded, -> its alpha-2 code."""
    table: dict[str, str] = {}

    def add(name: str, code: str) -> None:
        for key in (_fold(name), _ascii_fold(_fold(name))):
            table.setdefault(key, code)

    for country in pycountry.countries:
        code = country.alpha_2
        for attribute in ("alpha_2", "alpha_3", "name", "official_name", "common_name"):
            value = getattr(country, attribute, None)
            if value:
                add(value, code)
    for code, names in (*_ENGLISH_ALIASES.items(), *_CHINESE_COUNTRY_NAMES.items()):
        for name in names:
            add(name, code)
    return table


def normalize_country(s: pd.Series) -> pd.Series:
    """ISO alpha-2 from alpha-2, alpha-3, English names (pycountry's and common ones) and Chinese names.

    Exact matches only (ignoring case, spaces and accents): a misspelt country stays as written.
    """
    table = _country_table()
    return _per_value(s, lambda value: table.get(_fold(value)) or table.get(_ascii_fold(_fold(value))))


def _iso(year: int, month: int, day: int) -> str | None:
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None  # "2021-02-30": not a real date, left for the validator to say so


def _parse_date(value: str, day_first: bool) -> str | None:
    """``YYYY-MM-DD`` for a date in a usual spreadsheet form, or None when it is not one (or not real)."""
    text = value.strip()
    if match := _YMD.fullmatch(text):
        y, m, d = (int(g) for g in (match.groups()[:3] if match.group(1) else match.groups()[3:]))
        return _iso(y, m, d)
    if match := _CHINESE_DATE.fullmatch(text):
        return _iso(*(int(g) for g in match.groups()))
    if match := _NUMERIC_DMY.fullmatch(text):
        first, second, year = int(match.group(1)), int(match.group(3)), int(match.group(4))
        # 13/01/2020 and 01/13/2020 can only be read one way; only both-12-or-less follows day_first.
        if first > 12 >= second or (day_first and not second > 12 >= first):
            return _iso(year, second, first)
        return _iso(year, first, second)
    if match := _DAY_MONTH_NAME.fullmatch(text):
        month = _MONTHS.get(match.group(2).lower())
        return _iso(int(match.group(3)), month, int(match.group(1))) if month else None
    if match := _MONTH_NAME_DAY.fullmatch(text):
        month = _MONTHS.get(match.group(1).lower())
        return _iso(int(match.group(3)), month, int(match.group(2))) if month else None
    if match := _SERIAL.fullmatch(text):
        serial = int(match.group(1))
        if _SERIAL_RANGE[0] <= serial <= _SERIAL_RANGE[1]:
            return (_EXCEL_EPOCH + dt.timedelta(days=serial)).isoformat()
    return None


def normalize_date(s: pd.Series, day_first: bool) -> pd.Series:
    """``YYYY-MM-DD`` from ISO dates and date-times, 31/01/2020 or 01/31/2020 (``day_first`` decides
    when both readings are possible), 31.01.2020, 31-01-2020, 2020/1/31, 2020年1月31日, Excel serial
    numbers, "31 Jan 2020" and "Jan 31, 2020". Impossible dates such as 2021-02-30 are left unchanged."""
    return _per_value(s, lambda value: _parse_date(value, day_first))


def normalize_email(s: pd.Series) -> pd.Series:
    """E-mail addresses trimmed and lower-cased."""
    return s.fillna("").str.strip().str.lower()


def _canonical_number(value: str) -> str | None:
    text = value.strip()
    if not _NUMBER.fullmatch(text):
        return None
    try:
        number = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only plain decimals
        return None
    if number == 0:
        return "0"
    return format(number.normalize(), "f")


def normalize_number(s: pd.Series) -> pd.Series:
    """Plain decimals written without redundant zeros: "3.50" -> "3.5", "2.0" -> "2", "007" -> "7"."""
    return _per_value(s, _canonical_number)


def normalize_for_field(s: pd.Series, field: Field, *, day_first: bool) -> pd.Series:
    """Trim, then apply the normaliser of ``field.kind`` (gender gets its built-in synonyms too)."""
    s = trim(s)
    kind = field.kind
    if kind == "date":
        return normalize_date(s, day_first)
    if kind == "country":
        return normalize_country(s)
    if kind == "email":
        return normalize_email(s)
    if kind == "boolean":
        return normalize_boolean(s)
    if kind == "enum":
        if field.name == "gender":
            s = normalize_gender(s)
        return normalize_enum(s, field)
    if kind in ("integer", "number"):
        return normalize_number(s)
    return s  # text, custom data and leave types: trimmed only (leave types are matched elsewhere)
