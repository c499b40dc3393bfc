"""Country names and codes rewritten as ISO 3166 alpha-2 codes; anything not certain left as written.

The names come from ISO codes and pycountry's English names, CLDR's names in many languages
(``schemas/cldr_country_names.json``, written from Babel's CLDR data by ``make cldr``), ISO's short names
as ISO writes them and the names HR systems write (``schemas/countries.toml``). A name is matched ignoring case and
repeated spaces, never accents. A name that two sources give to different countries (Vietnamese ``Nga`` =
Russia, alpha-3 ``NGA`` = Nigeria), or that ``countries.toml`` lists as ``[ambiguous]`` (``Congo``: the
Republic to ISO, either Congo to people), is not certain: it stays as written, and
``flag_ambiguous_countries`` puts an ``ambiguous-country`` problem on its row, naming the candidates.

Example::

    normalize_country(pd.Series(["MYS", "Malaysia", "马来西亚", "Áo", "Nga", "NGA", "Malasia"]))
    # -> ["MY", "MY", "MY", "AT", "Nga", "NG", "Malasia"]
"""

from __future__ import annotations

import json
import tomllib
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pycountry

from hrimport.errors import ConfigError
from hrimport.normalize.values import ValueMemo, fold, per_value
from hrimport.outcomes import Problem
from hrimport.regions import country_name, region_code
from hrimport.resources import data_dir

if TYPE_CHECKING:
    from hrimport.mapper import MappedTable

COUNTRIES_FILE = "countries.toml"
CLDR_FILE = "cldr_country_names.json"
KOSOVO = "XK"  # not in ISO 3166 (so not in pycountry) but used by payroll systems and CLDR


@dataclass(frozen=True)
class CountryNames:
    """Every spelling of every country, folded (see ``country_key``), and what it means."""

    certain: dict[str, str]  # key -> the one alpha-2 code it names
    ambiguous: dict[str, dict[str, str]]  # key -> {alpha-2: how it names it ("" or "ISO code NGA")}
    english: dict[str, str]  # alpha-2 -> English name, for messages


def country_key(value: str) -> str:
    """The matching key: NFKC, case-folded, spaces collapsed, typographic apostrophe as ``'``."""
    return fold(value.replace("\u2019", "'"))


def read_country_file() -> dict[str, Any]:
    """``schemas/countries.toml`` as written: ``[cldr] languages``, ``[ambiguous] name = [codes]``,
    ``[iso_names] code = [names]``, ``[names.<language>] code = [names]``."""
    with open(data_dir("schemas") / COUNTRIES_FILE, "rb") as fh:
        return tomllib.load(fh)


def read_cldr_file() -> dict[str, Any]:
    """``schemas/cldr_country_names.json``: ``{"cldr_version", "babel_version", "names": {language: {code: name}}}``.

    CLDR's names, kept as a data file rather than read through Babel at run time: Babel loads and merges
    a whole locale (dates, numbers, currencies...) to give its territory names, about 0.3 s for the 23
    languages, paid by every import with a country column.
    """
    with open(data_dir("schemas") / CLDR_FILE, encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
        return data


def cldr_names_from_babel() -> dict[str, Any]:
    """The contents of ``schemas/cldr_country_names.json`` as the installed Babel gives them."""
    import babel
    from babel import Locale
    from babel.core import get_cldr_version

    real = alpha2_codes()
    names = {
        language: {code: name for code, name in sorted(Locale.parse(language).territories.items()) if code in real}
        for language in read_country_file()["cldr"]["languages"]
    }
    return {"cldr_version": get_cldr_version(), "babel_version": babel.__version__, "names": names}


def write_cldr_file() -> None:
    """Rewrite ``schemas/cldr_country_names.json`` from the installed Babel (``make cldr``)."""
    with open(data_dir("schemas") / CLDR_FILE, "w", encoding="utf-8") as fh:
        json.dump(cldr_names_from_babel(), fh, ensure_ascii=False, indent=1)
        fh.write("\n")


@cache
def alpha2_codes() -> frozenset[str]:
    """ISO 3166 alpha-2 codes, plus Kosovo's XK: every code the platform takes."""
    return frozenset(c.alpha_2 for c in pycountry.countries) | {KOSOVO}


@cache
def iso_codes() -> dict[str, str]:
    """Every upper-case alpha-2 and alpha-3 code -> its alpha-2 code (Kosovo's XK and XKX included)."""
    codes = {KOSOVO: KOSOVO, "XKX": KOSOVO}
    for country in pycountry.countries:
        codes[country.alpha_2] = codes[country.alpha_3] = country.alpha_2
    return codes


@cache
def country_names() -> CountryNames:
    """The table, built once per process (about 0.05 s)."""
    real = alpha2_codes()
    meanings: dict[str, dict[str, str]] = defaultdict(dict)

    def add(name: str, code: str, how: str = "") -> None:
        found = meanings[country_key(name)]
        if code not in found or not how:  # a name beats a code: "Russia (RU)", not "(RU, ISO code RUS)"
            found[code] = how

    for country in pycountry.countries:
        for attribute in ("name", "official_name", "common_name"):
            if value := getattr(country, attribute, None):
                add(value, country.alpha_2)
    for written, code in iso_codes().items():  # codes in any case: "my", "Mys"
        add(written, code, f"ISO code {written}")
    data = read_country_file()
    cldr = read_cldr_file()["names"]
    english: dict[str, str] = {}
    for language in data["cldr"]["languages"]:
        if language not in cldr:
            raise ConfigError(
                f"{COUNTRIES_FILE} lists the language '{language}' but {CLDR_FILE} has no names for it: run `make cldr`"
            )
        territories = cldr[language]
        for code, name in territories.items():
            if code in real:  # not a region (001, 419) or a grouping (EU, UN, EZ, QO, XA, XB)
                add(name, code)
        if language == "en":
            english = {code: name for code, name in territories.items() if code in real}
    for names in [data.get("iso_names", {}), *data["names"].values()]:
        for code, spellings in names.items():
            for name in spellings:
                add(name, code)
    for name, codes in data.get("ambiguous", {}).items():  # "Congo": CG to ISO, either Congo to people
        for code in codes:
            add(name, code)

    certain = {key: next(iter(found)) for key, found in meanings.items() if len(found) == 1}
    ambiguous = {key: found for key, found in meanings.items() if len(found) > 1}
    return CountryNames(certain=certain, ambiguous=ambiguous, english=english)


def _written_as_code(value: str) -> str | None:
    """The alpha-2 code of a value written as an upper-case ISO code ("NGA", "AT"): always that code."""
    text = unicodedata.normalize("NFKC", value).strip()
    return iso_codes().get(text) if text.isascii() and text.isupper() else None


def country_code(value: str) -> str | None:
    """The alpha-2 code ``value`` certainly names, or None (unknown, or the name of two countries).

    Upper-case codes are answered without the name table, so a column of codes never loads Babel.
    """
    return _written_as_code(value) or country_names().certain.get(country_key(value))


def code_to_write(value: str) -> str | None:
    """What to write for a value that names one country but is not its two-letter code, as a message says it:
    ``"write MY for Malaysia"`` (for "Malaysia", "MYS", "马来西亚"); None when it names no country for certain.
    A setting or argument is never rewritten (principle 1): its code is named for the user to write."""
    code = country_code(value)
    if code is None:
        return None
    return f"write {code} for {country_names().english.get(code) or country_name(code) or code}"


def country_candidates(value: str) -> str | None:
    """For a value naming more than one country, the candidates in words, e.g.
    ``"Russia (RU) or Nigeria (NG, ISO code NGA)"``; None when the value is certain or unknown."""
    if _written_as_code(value):
        return None
    names = country_names()
    found = names.ambiguous.get(country_key(value))
    if not found:
        return None
    described = [
        f"{names.english.get(code, code)} ({code}{', ' + how if how and how != f'ISO code {code}' else ''})"
        for code, how in sorted(found.items(), key=lambda item: (bool(item[1]), item[0]))  # names first
    ]
    return ", ".join(described[:-1]) + " or " + described[-1]


def normalize_country(s: pd.Series, memo: ValueMemo | None = None, *, subdivisions: bool = False) -> pd.Series:
    """ISO alpha-2 from ISO codes and country names in many languages (see the module docstring).

    Only certain matches are rewritten: a misspelt or ambiguous country stays as written. ``subdivisions``
    (``Field.subdivisions``): a region code ISO 3166-2 lists is written as ISO writes it too (``us-ca`` ->
    ``US-CA``); a region's name ("California") is not read (``hrimport.regions``).
    """
    return per_value(s, country_or_region_code if subdivisions else country_code, memo)


def country_or_region_code(value: str) -> str | None:
    """``region_code``, else ``country_code``: a field taking ISO 3166-2 region codes (``Field.subdivisions``)."""
    return region_code(value) or country_code(value)


def flag_ambiguous_countries(mapped: MappedTable) -> None:
    """An ``ambiguous-country`` problem on every row whose country field holds a name of two countries."""
    for spec in mapped.fields:
        if spec.kind != "country" or spec.name not in mapped.frame:
            continue
        values = mapped.frame[spec.name]
        candidates = {v: found for v in values.unique() if v and (found := country_candidates(str(v)))}
        if not candidates:
            continue
        column = mapped.field_sources.get(spec.name, spec.name)
        for position in np.flatnonzero(values.isin(list(candidates)).to_numpy()):
            value = str(values.iloc[position])
            row = mapped.row_numbers[position]
            message = (f"Row {row}, column '{column}': '{value}' could be {candidates[value]}; "
                       "write the two-letter ISO code.")
            problem = Problem("ambiguous-country", message, row, column, spec.name, value)
            mapped.add_problem(int(position), problem)
