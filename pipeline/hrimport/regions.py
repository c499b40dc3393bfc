"""ISO 3166-2 region codes (``US-CA``, ``DE-BY``, ``ES-CT``): which exist, their ISO form, and what to write instead.

The time-off record's and the leave-day calculation's ``country`` take one (``Field.subdivisions``), so that a
region's public holidays count (api-notes: "public holidays belong to a country or region; ISO 3166-2
subdivision codes such as ``US-CA`` appear in the option set"), though the spec's tables say "ISO Alpha-2".
pycountry (Debian's iso-codes) is the list: no table of ours. A region's name ("California") is never read as
its code: names are not unique ("Georgia", "Punjab"), and the staff fields take countries only.

Kept free of pandas, as ``hrimport leave-days`` uses it::

    >>> region_code(" us-ca ")
    'US-CA'
    >>> region_code("US-XX") is None and looks_like_region_code("US-XX")
    True
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

import pycountry

__all__ = ["country_name", "describe_region", "looks_like_region_code", "region_code", "region_codes", "region_names",
           "unknown_region_advice"]

#: How ISO 3166-2 writes a region's code: its country's two letters, a hyphen, one to three letters or digits.
_REGION_SHAPE = re.compile(r"[A-Z]{2}-[A-Z0-9]{1,3}")


def _written(value: str) -> str:
    """``value`` as its code would be written: full-width forms made plain, spaces trimmed, upper case."""
    return unicodedata.normalize("NFKC", value).strip().upper()


def looks_like_region_code(value: str) -> bool:
    """Whether ``value`` has a region code's shape, listed or not (``US-XX`` has; ``California``, ``USA-CA`` have not)."""
    return bool(_REGION_SHAPE.fullmatch(_written(value)))


@cache
def region_names() -> dict[str, str]:
    """Every region code ISO 3166-2 lists -> the region's name (pycountry: about 5,000; loaded once, about 0.1 s)."""
    return {s.code: s.name for s in pycountry.subdivisions}


@cache
def region_codes() -> frozenset[str]:
    """Every region code ISO 3166-2 lists."""
    return frozenset(region_names())


def region_code(value: str) -> str | None:
    """The code of the region ``value`` names as ISO 3166-2 writes it (``us-ca`` -> ``US-CA``), or None (not
    written as a region code, or a code ISO does not list). Only a value of that shape loads the list."""
    code = _written(value)
    if not _REGION_SHAPE.fullmatch(code):
        return None
    return code if code in region_codes() else None


def country_name(alpha_2: str) -> str | None:
    """The name of the country whose ISO 3166 alpha-2 code is ``alpha_2`` (Kosovo's XK too), or None."""
    if alpha_2 == "XK":  # not in ISO 3166 (so not in pycountry) but a country the platform takes
        return "Kosovo"
    country = pycountry.countries.get(alpha_2=alpha_2)
    return getattr(country, "common_name", None) or getattr(country, "name", None)


@cache  # a few regions, told on each of their rows
def describe_region(code: str) -> str:
    """A listed region's code in words: ``"US-CA (California, United States)"``."""
    region = region_names().get(code)
    country = country_name(code[:2]) or code[:2]
    return f"{code} ({region}, {country})" if region is not None else code


def unknown_region_advice(value: str) -> str:
    """One sentence for a value written as a region code that ISO 3166-2 does not list, naming it and saying
    what to write: ``"'US-XX' is not a region of United States (US) that ISO 3166-2 lists; write the two-letter
    country code US, or the region's code as ISO 3166-2 writes it, such as US-AK for Alaska"``."""
    country = _written(value)[:2]
    name = country_name(country)
    if name is None:
        return (f"'{value}' is not a region code ISO 3166-2 lists ({country} is no country's code); write the "
                "two-letter country code, such as SG, or a region's code as ISO 3166-2 writes it, such as US-CA")
    theirs = sorted(code for code in region_codes() if code.startswith(f"{country}-"))
    if not theirs:  # Kosovo (XK, not in ISO 3166), the Vatican...
        return (f"'{value}' is not a region code: ISO 3166-2 lists no regions of {name} ({country}); write the "
                f"two-letter country code {country}")
    return (f"'{value}' is not a region of {name} ({country}) that ISO 3166-2 lists; write the two-letter country "
            f"code {country}, or the region's code as ISO 3166-2 writes it, such as {_example(theirs[0])}")


def _example(code: str) -> str:
    region = region_names().get(code)
    return f"{code} for {region}" if region is not None else code
