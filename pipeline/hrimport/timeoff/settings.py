"""The time-off-only keys of a config's ``[timeoff]`` section, checked.

``hrimport.config`` keeps them raw in ``FieldMapping.extra``; this module says what they mean::

    [timeoff]
    lang = "auto"              # EN or ZH: the language leave types are sent in; auto (default): a row's
                               # lang column if mapped, else the script of the name (Chinese -> ZH)
    default_country = "SG"     # the country of rows whose country cell is empty, or of every row when
                               # no column maps to country
    half_start = "Start Half"  # column: is the first day a half day (yes/no, AM/PM, 上午/下午...)
    half_end = "End Half"      # column: is the last day a half day
    half_day = "Half Day"      # column: one marker for the record (see hrimport.timeoff.halves)
    name = "Employee Name"     # column: the person's name, shown in the report (never sent); by default
                               # a column headed as in schemas/name_headers.toml, if the file has one
    total_days = "file"        # file (default): send the file's figure, warn where the service counts
                               # otherwise; service: send the service's count, with the warning; strict:
                               # do not send a row whose figure differs, nor one without a figure
                               # counted 0 days (see hrimport.timeoff.days)
    export_holds = "all"       # all (default): the export lists every leave of the period it covers (a
                               # cumulative history, or a month's leave), so a leave imported before that it no
                               # longer lists is told (hrimport.timeoff.gone); changes: only leave added or
                               # changed since the last export, so none is
"""

from __future__ import annotations

import tomllib
import unicodedata
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from hrimport.config import FieldMapping, strict_checks
from hrimport.errors import ConfigError
from hrimport.normalize.countries import code_to_write
from hrimport.reader.grid import normalize_header
from hrimport.regions import region_code
from hrimport.resources import data_dir
from hrimport.timeoff.days import TOTALS_POLICIES, TotalsPolicy
from hrimport.timeoff.leave_types import Lang, parse_lang
from hrimport.validate import alpha2_codes

__all__ = ["HALF_KEYS", "TimeOffSettings", "name_headers"]

#: The keys naming half-day columns, in the order halves_for takes them.
HALF_KEYS = ("half_start", "half_end", "half_day")

#: ``[timeoff] strict_checks``: the doubts of ours (principle 2) a time-off row is sent with, as a warning, unless
#: the setting names their code: a leave type the list of leave types lacks (hrimport.timeoff.leave_types), a
#: region's ISO 3166-2 code as the country, which the spec's tables do not name, a half-day cell not read on a row
#: sent with its own figure, and a period overlapping a leave imported before (hrimport.timeoff.rows); two columns
#: mapped to one field holding different values, the first sent (hrimport.mapper.columns_disagree); a long number
#: shown in scientific notation (hrimport.normalize.long_numbers); a row the workbook hides, by a filter or Hide
#: (hrimport.reader.hidden_rows); a value in a column the workbook hides (hrimport.reader.hidden_columns); a
#: character nobody sees in a text value (hrimport.normalize.invisible).
STRICT_CHECKS = ("unknown-leave-type", "region-code", "not-a-half-day-marker", "ambiguous-half-day",
                 "overlaps-imported", "columns-disagree", "scientific-notation", "hidden-row", "hidden-column",
                 "invisible-character")

#: ``[timeoff] export_holds``: what an export lists: every leave of the period it covers (a leave imported before
#: that it no longer lists is told), or only the leave changed since the last export (nothing is told).
EXPORT_HOLDS = ("all", "changes")

#: Fields the sheet may leave empty: the import fills them (the service's count, the leave type's script).
FILLED_BY_THE_IMPORT = frozenset({"total_days", "lang"})


@dataclass(frozen=True)
class TimeOffSettings:
    """What the ``[timeoff]`` section says beyond the column map."""

    lang: Lang | None = None  # None: auto
    default_country: str | None = None
    half_columns: dict[str, str] | None = None  # half_start/half_end/half_day -> source column
    name_column: str | None = None  # the person's name, for the report
    total_days: TotalsPolicy = "file"
    strict_checks: frozenset[str] = frozenset()  # [timeoff] strict_checks: codes of STRICT_CHECKS held back
    export_holds: str = "all"  # one of EXPORT_HOLDS

    @property
    def tells_missing_leave(self) -> bool:
        """Whether a leave imported before that the export no longer lists is told (``hrimport.timeoff.gone``)."""
        return self.export_holds == "all"

    def import_mapping(self, mapping: FieldMapping) -> FieldMapping:
        """``mapping`` as the time-off import maps a file with it: the half-day and name columns carried
        with each row, ``default_country`` filling empty countries, ``total_days`` and ``lang`` optional (the import
        fills them: the service's calculation, the leave type's script), and no field a key (one person has
        many leave rows)."""
        defaults = {**mapping.defaults, "country": self.default_country} if self.default_country else mapping.defaults
        fields = tuple(
            replace(f, required="no" if f.name in FILLED_BY_THE_IMPORT else f.required, key=False)
            for f in mapping.fields
        )
        carried = {**(self.half_columns or {}), **({"name": self.name_column} if self.name_column else {})}
        return replace(mapping, fields=fields, defaults=defaults, carried=carried, strict_checks=self.strict_checks)

    @classmethod
    def from_mapping(cls, mapping: FieldMapping, where: str) -> TimeOffSettings:
        """Check the raw keys; ``where`` (the config's file name) starts every message."""
        extra: dict[str, Any] = mapping.extra
        here = f"{where} [timeoff]"
        lang: Lang | None = None
        raw_lang = extra.get("lang", "auto")
        if not isinstance(raw_lang, str) or (raw_lang.strip().lower() != "auto" and parse_lang(raw_lang) is None):
            raise ConfigError(f'{here} lang must be "EN", "ZH" or "auto", not {raw_lang!r}')
        if raw_lang.strip().lower() != "auto":
            lang = parse_lang(raw_lang)
        country = extra.get("default_country")
        if country is not None:
            code = country.strip().upper() if isinstance(country, str) else ""
            if code not in alpha2_codes() and not (isinstance(country, str) and region_code(country)):
                # a country's name is not rewritten in the config either (principle 1): its code is named
                advice = code_to_write(country) if isinstance(country, str) else None
                hint = f": {advice}" if advice else ""
                raise ConfigError(f"{here} default_country must be an ISO 3166 alpha-2 code such as SG, or a region's "
                                  f"ISO 3166-2 code such as US-CA, not {country!r}{hint}")
            country = region_code(country) or code
        halves: dict[str, str] = {}
        for key in HALF_KEYS:
            column = extra.get(key)
            if column is None:
                continue
            if not isinstance(column, str) or not column.strip():
                raise ConfigError(f'{here} {key} must name a column of the file, e.g. {key} = "Half Day"')
            halves[key] = column
        name = extra.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ConfigError(f'{here} name must name a column of the file, e.g. name = "Employee Name"')
        policy = extra.get("total_days", "file")
        chosen = next((p for p in TOTALS_POLICIES if isinstance(policy, str) and policy.strip().lower() == p), None)
        if chosen is None:
            raise ConfigError(f'{here} total_days must be "file", "service" or "strict", not {policy!r} '
                              '(the column holding the days is mapped under [timeoff.columns])')
        strict = strict_checks(extra.get("strict_checks", []), here, STRICT_CHECKS)
        holds = extra.get("export_holds", "all")
        if holds not in EXPORT_HOLDS:
            raise ConfigError(f'{here} export_holds must be "all" (the export lists every leave of the period it '
                              'covers: a cumulative history, or a month\'s leave) or "changes" (only the leave '
                              f'changed since the last export), not {holds!r}')
        return cls(lang=lang, default_country=country, half_columns=halves, name_column=name, total_days=chosen,
                   strict_checks=strict, export_holds=holds)


@cache
def name_headers() -> frozenset[str]:
    """The headers that hold a person's name (``schemas/name_headers.toml``), as ``normalize_header`` keys."""
    with open(data_dir("schemas") / "name_headers.toml", "rb") as fh:
        headers = tomllib.load(fh)["headers"]
    return frozenset(normalize_header(unicodedata.normalize("NFKC", h)) for h in headers)
