"""Country names and codes rewritten as ISO 3166 alpha-2 codes; anything not certain left as written."""

from __future__ import annotations

import unicodedata
from functools import cache

import pandas as pd
import pycountry

from pipeline.normalize.values import fold, per_value

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


def _ascii_fold(text: str) -> str:
    """ "Türkiye" -> "turkiye": accents dropped, so a name typed without them still matches exactly."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def _country_table() -> dict[str, str]:
    """Every accepted spelling of every country, folded, -> its alpha-2 code."""
    table: dict[str, str] = {}

    def add(name: str, code: str) -> None:
        for key in (fold(name), _ascii_fold(fold(name))):
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
    return per_value(s, lambda value: table.get(fold(value)) or table.get(_ascii_fold(fold(value))))
