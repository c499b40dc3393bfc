"""Per-row time-off checks after validation: leave type and lang, half days, period, in-file overlaps.

Each function takes plain values and returns plain values or ``Problem``s; ``hrimport.imports.timeoff``
composes them. Problem codes: ``not-an-allowed-value`` (lang), ``not-a-half-day-marker`` and
``ambiguous-half-day`` (warnings on a row sent with its own figure: ``unread_halves``), ``end-before-start``,
``overlaps-in-file``, the warnings ``overlaps-imported`` (a leave imported before overlaps the row's period:
``overlaps_imported``) and ``duplicate-row`` of a leave listed twice (``LeaveTable.repeats`` finds them),
and two warnings (the row is sent as written) unless ``[timeoff] strict_checks`` lists their code:
``unknown-leave-type`` and ``region-code`` (a region's ISO 3166-2 code as the country: ``region_warning``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from hrimport.outcomes import Problem
from hrimport.regions import describe_region, region_codes
from hrimport.timeoff.days import DayKey, TotalsPolicy, format_days, parse_days
from hrimport.timeoff.leave_types import (
    Lang,
    LeaveTypeMatch,
    match_leave_type,
    parse_lang,
    unknown_type_message,
    unlisted_leave_type,
)

__all__ = ["HALVES_NOT_READ", "PLATFORM_DOUBTS", "TimeOffRow", "changed_since_imported", "check_row", "find_overlaps",
           "halves_shown", "overlaps_imported", "region_warning", "repeat_warning", "unread_halves"]

#: The report's half days of a row whose half-day cell could not be read: it claims neither a full day nor a half.
HALVES_NOT_READ = "not read"

#: The warnings that are doubts of ours about whether the platform takes a value (a leave type our list lacks, a
#: region's code as the country): a record the platform accepted in an earlier run (``already_imported``) has
#: answered them, so a later run of a file that lists it again does not tell them again on its row.
PLATFORM_DOUBTS = frozenset({"unknown-leave-type", "region-code"})


@dataclass
class TimeOffRow:
    """One row that passed validation, as the later stages need it."""

    pos: int  # position in the mapped table
    row: int  # source row number
    external_id: str
    match: LeaveTypeMatch
    lang: Lang
    country: str
    start: str
    end: str
    half_start: bool
    half_end: bool
    total_given: str  # "" when the sheet has none
    # the figure as the cell writes it (``4,5``, a decimal comma, where ``total_given`` reads 4.5): what a message
    # quotes (``given_shown``); "" when it is ``total_given``
    given_written: str = ""
    # False: a half-day cell could not be read (``hrimport.timeoff.halves``); the row is sent with its own figure,
    # which the calculation is not asked to check (its count follows the half days), and claims no half days
    halves_read: bool = True
    notes: str = ""
    decision: str = ""
    total_days: str = ""  # what is sent, once known
    warnings: list[Problem] = field(default_factory=list)  # doubts shown in the report; the row is still sent
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def given_shown(self) -> str:
        """The file's figure as its cell writes it: what a message quotes (principle 1)."""
        return self.given_written or self.total_given

    @property
    def leave_type_name(self) -> str:
        return self.match.send_name(self.lang)

    @property
    def day_key(self) -> DayKey:
        return DayKey(self.country, self.start, self.end, self.half_start, self.half_end)

    def details(self) -> dict[str, str]:
        """The time-off columns of the report."""
        return {
            "leave_type": self.leave_type_name,
            "start_date": self.start,
            "end_date": self.end,
            "half_days": halves_shown(self.half_start, self.half_end, one_day=self.start == self.end)
                         if self.halves_read else HALVES_NOT_READ,
            "total_days": self.total_days or self.total_given,
        }


def halves_shown(half_start: bool, half_end: bool, *, one_day: bool) -> str:
    """A record's half days as the report's column shows them: ``start``, ``end``, ``start, end``, ``half day``
    (a one-day record), or empty (none)."""
    halves = [n for n, on in (("start", half_start), ("end", half_end)) if on]
    return "half day" if halves and one_day else ", ".join(halves)


def resolve_lang(name: str, lang_cell: str, config_lang: Lang | None, match: LeaveTypeMatch | None) -> Lang | None:
    """The row's lang: its lang cell, else the config's, else the script of the name; None if the cell is bad."""
    if lang_cell:
        return parse_lang(lang_cell)
    if config_lang:
        return config_lang
    return match.written_lang if match else None


def check_row(
    *, row: int, leave_type: str, lang_cell: str, config_lang: Lang | None, start: str, end: str,
    sources: dict[str, str], strict: frozenset[str] = frozenset(), country: str = "",
) -> tuple[LeaveTypeMatch | None, Lang | None, list[Problem]]:
    """The leave type and lang of one row, with the problems found: errors (the row is not sent; then the
    match or the lang may be None) and warnings. A name the list of leave types lacks is sent as written, with
    the warning ``unknown-leave-type``, and a region's code as the ``country`` with ``region-code``, unless
    ``strict`` (``[timeoff] strict_checks``) names that code."""
    problems: list[Problem] = []
    if "-" in country and country in region_codes():  # as the mapper wrote it (us-ca -> US-CA)
        problems.append(region_warning(row, sources.get("country"), country, sent="region-code" not in strict))
    match = match_leave_type(leave_type)
    if match is None:
        column = sources.get("leave_type", "leave_type")
        sent = "unknown-leave-type" not in strict
        problems.append(Problem("unknown-leave-type", unknown_type_message(row, column, leave_type, sent=sent), row,
                                column, "leave_type", leave_type, severity="warning" if sent else "error"))
        match = unlisted_leave_type(leave_type) if sent else None
    lang = resolve_lang(leave_type, lang_cell, config_lang, match)
    if lang_cell and lang is None:
        column = sources.get("lang", "lang")
        problems.append(Problem("not-an-allowed-value",
                                f"Row {row}, column '{column}': '{lang_cell}' is not one of EN, ZH.",
                                row, column, "lang", lang_cell))
    if end < start:
        # either date may be the wrong one: the problem names both cells, blaming neither
        first, last = sources.get("start_date", "start_date"), sources.get("end_date", "end_date")
        problems.append(Problem("end-before-start",
                                f"Row {row}, columns '{first}' and '{last}': the leave ends on {end} ({last}), "
                                f"before it starts on {start} ({first}); correct whichever date is wrong.",
                                row, None, None, None))
    return match, lang, problems


def region_warning(row: int, column: str | None, code: str, *, sent: bool) -> Problem:
    """The ``region-code`` problem of a row whose country is ``code``, a region ISO 3166-2 lists (US-CA).

    The spec's tables say "ISO Alpha-2" for the time-off record's and the calculation's country, while the
    platform's documents list ISO 3166-2 codes among its options (api-notes): whether it takes one is not stated.
    So the row is sent as written, for the region's holidays to count (a refusal makes it ``rejected``, in the
    platform's words): a warning, unless ``sent`` is False (``[timeoff] strict_checks`` names the code)."""
    where = f"Row {row}, column '{column}'" if column else f"Row {row}"
    country = code.split("-")[0]
    said = f"{where}: {describe_region(code)} is a region's code (ISO 3166-2), where the platform's interface names " \
           "a two-letter country code"
    if sent:
        message = (f"{said}; kept as written, so that the region's public holidays count (the platform's documents "
                   f"list such codes too): if the platform refuses it, write {country}.")
    else:
        message = (f"{said}; not sent ([timeoff] strict_checks lists region-code): write {country}, or take "
                   "region-code out of strict_checks to send it.")
    return Problem("region-code", message, row, column, "country", code, severity="warning" if sent else "error")


def unread_halves(*, row: int, code: str, reason: str, column: str | None, key: str, cell: str,
                  policy: TotalsPolicy, total_days: str, days_column: str | None, strict: bool = False,
                  days_written: str = "") -> Problem:
    """The problem (``code``: ``not-a-half-day-marker`` or ``ambiguous-half-day``) of a row whose half-day cell
    ``cell`` (in ``column``, the ``[timeoff]`` key ``key``) could not be read, ``reason`` saying why (the
    ``HalfDayError``'s message, naming the cell).

    The time-off record carries no half days (spec, endpoint 5): they only ask the calculation for its count.
    So under ``total_days = "file"`` a row with its own figure (``total_days``, its cell as mapped) is sent with
    it, unchecked: a warning (principle 2). Without a figure, or when the service's count is sent
    (``service``) or must agree (``strict``), the count needs the half days: the row is held back (an error).
    ``days_column``: the source column of total_days, which the message names. ``strict`` (``[timeoff]
    strict_checks`` names ``code``): held back in every case. ``days_written``: the figure as its cell writes it
    (``4,5``), which the message quotes, when it is not ``total_days`` (read 4.5)."""
    shown = days_written or total_days
    said = f"Row {row}, column '{column}': {reason}" if column else f"Row {row}: {reason}"
    place = (row, column, key, cell)
    if policy == "file" and parse_days(total_days) is not None and strict:
        return Problem(code, f"{said}; not sent ([timeoff] strict_checks lists {code}): write the half day as one of "
                             f"the values above, or take {code} out of strict_checks to send the row with the file's "
                             f"total_days {shown}.", *place)
    if policy == "file" and parse_days(total_days) is not None:
        # said of the record, not of this run's sending: the same row found already imported next month is
        # not sent again, and its warning stays true
        return Problem(code, f"{said}; the record carries no half days, so the file's total_days {shown} "
                             "stands, without the service's check (the service counts a period's days from its "
                             "half days).", *place, severity="warning")
    if policy == "file":
        days = f"write them in the '{days_column}' column" if days_column else "map a column to total_days"
        why = (f"not sent: the service counts the days from the half days, and the row gives no number of days of "
               f"its own ({days} to send it with them)")
    elif policy == "service":
        why = "not sent (total_days = \"service\": the service's count, which is sent, follows the half days)"
    else:
        why = "not sent (total_days = \"strict\": the file's figure is checked against the service's count, " \
              "which follows the half days)"
    return Problem(code, f"{said}; {why}.", *place)


def find_overlaps(rows: list[TimeOffRow], imported: set[int]) -> dict[int, list[Problem]]:
    """Rows giving one person time off on overlapping days, keyed by position: all of them are flagged,
    except rows already imported (``imported`` holds their positions), which are only named."""
    by_person: dict[str, list[TimeOffRow]] = defaultdict(list)
    for r in rows:
        by_person[r.external_id].append(r)
    clashes: dict[int, list[TimeOffRow]] = defaultdict(list)
    for group in by_person.values():
        group.sort(key=lambda r: (r.start, r.end, r.row))
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if b.start > a.end:
                    break  # sorted by start: nothing later can overlap a
                clashes[a.pos].append(b)
                clashes[b.pos].append(a)
    problems: dict[int, list[Problem]] = {}
    for r in rows:
        others = clashes.get(r.pos)
        if not others or r.pos in imported:
            continue
        named = ", ".join(
            f"row {o.row} ({o.start}..{o.end}{', already imported' if o.pos in imported else ''})"
            for o in sorted(others, key=lambda o: o.row)
        )
        problems[r.pos] = [Problem(
            "overlaps-in-file",
            f"Row {r.row}: {r.start}..{r.end} for '{r.external_id}' overlaps {named} of this file; "
            "not sent: book each day once.",
            r.row, None, None, None,
        )]
    return problems


def repeat_warning(*, row: int, first: int, external_id: str, column: str) -> Problem:
    """The ``duplicate-row`` warning of row ``row``, which lists row ``first``'s leave again exactly: it is not
    sent, and shares row ``first``'s outcome (``hrimport.imports.repeats``). ``column``: the external id's."""
    return Problem(
        "duplicate-row",
        f"Row {row} repeats row {first}: the same external id '{external_id}' ('{column}'), leave type, dates and "
        f"half days, and the same value in every field sent, so the leave is sent once, with row {first}, and this "
        "row shares its outcome.",
        row, column, "customer_system_id", external_id, severity="warning",
    )


def changed_since_imported(r: TimeOffRow, sent: dict[str, Any], *, record: str, sources: dict[str, str],
                           figure_sent: bool, masked: frozenset[str] = frozenset()) -> Problem | None:
    """The ``changed-since-imported`` warning of a row the ledger holds as imported whose values now differ from
    the request body its record was sent with (``sent``): a month's file corrected after it was imported.

    The ledger knows a record by person, leave type and dates, so the row is ``already_imported`` and nothing is
    sent; and the platform's interface adds time off but changes none (spec: no endpoint updates a record). So
    the record keeps the values it was sent with, and the warning names each value the file now gives otherwise
    (``total_days`` when the file's figure is what is sent, ``figure_sent``; the country, the notes, the
    decision), for HR to change on the platform. ``record``: the record in words; ``masked``: the fields whose
    values are not quoted (``[report] mask``). None when nothing differs."""
    changes: list[str] = []

    def compare(name: str, was: str, now: str) -> None:
        if was == now:
            return
        column = f" ('{sources[name]}')" if name in sources else ""
        shown = "" if name in masked else f" {_quoted(was)} → {_quoted(now)}"
        changes.append(f"{name}{column}{shown}")

    given = parse_days(r.total_given) if figure_sent and r.total_given else None
    if given is not None:
        compare("total_days", str(sent.get("total_days", "")), format_days(given))
    compare("country", str(sent.get("country", "")), r.country)
    compare("notes", str(sent.get("notes", "")), r.notes)
    compare("decision", str(sent.get("decision", "")), r.decision)
    if not changes:
        return None
    return Problem(
        "changed-since-imported",
        f"Row {r.row}: {record} was sent with other values than the file now gives: {'; '.join(changes)}. The "
        "platform's interface adds time off but does not change it, so nothing is sent: if the file is right, "
        "change the record on the platform.",
        r.row, None, None, None, severity="warning",
    )


def overlaps_imported(r: TimeOffRow, imported: list[str], *, column: str | None, sent: bool = True) -> Problem:
    """The ``overlaps-imported`` warning of a row about to be sent whose period overlaps records of the same person
    that were imported before (``imported``: each in words, earliest first), of another leave type or other dates:
    most often a corrected month's file whose leave moved by a day or changed its type. The platform's interface
    adds time off but cannot change or remove a record, so the old record stays as it was sent: a platform that
    checks refuses the new one as overlapping (``overlaps_existing``), one that does not holds both. A warning,
    not a refusal: HR may have cancelled the old record on the platform already, and the platform decides; an
    error (not sent) when ``sent`` is False (``[timeoff] strict_checks`` names the code)."""
    shown = "; ".join(imported[:3]) + (f"; and {len(imported) - 3:,} more" if len(imported) > 3 else "")
    which = "that record" if len(imported) == 1 else "those records"
    said = (f"Row {r.row}: {r.leave_type_name} {r.start}..{r.end} overlaps time off imported before for "
            f"'{r.external_id}': {shown}.")
    if not sent:
        return Problem("overlaps-imported",
                       f"{said} Not sent ([timeoff] strict_checks lists overlaps-imported): if this row corrects "
                       f"that leave, change or cancel {which} on the platform first, then take overlaps-imported out "
                       "of strict_checks to send it; else correct the dates.",
                       r.row, column, "start_date", r.start)
    return Problem(
        "overlaps-imported",
        f"{said} If this row corrects that leave, change or cancel {which} on the platform: its interface adds time "
        "off but cannot change or remove a record, and a platform that checks takes no leave overlapping another of "
        "the same person.",
        r.row, column, "start_date", r.start, severity="warning",
    )


def _quoted(value: str) -> str:
    return f"'{value}'" if value else "(empty)"
