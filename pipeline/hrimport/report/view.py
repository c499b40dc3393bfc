"""Shape a ``RunResult`` for display: the facts, colours, messages and groups every report file shows.

Nothing here decides anything about the import (issue 4: the reporter computes nothing about it); it only
formats what the stages recorded, so ``report.html``, ``report.xlsx`` and ``summary.json`` say the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from hrimport.outcomes import (
    HELD_LISTED,
    GoneLeave,
    Outcome,
    Problem,
    RowOutcome,
    RunInfo,
    RunResult,
    SourceInfo,
)
from hrimport.report.cells import Masker, mask_value
from hrimport.report.digest import RowsDigest, digest_rows
from hrimport.report.explain import Explanation, explain
from hrimport.service.urls import EMBEDDED_SANDBOX, describe_target, is_sandbox_target, service_host
from hrimport.stores import SpooledList

#: Outcome -> (background, text) colours shared by the HTML page and the xlsx ``Rows`` sheet.
OUTCOME_COLOURS: dict[Outcome, tuple[str, str]] = {
    Outcome.ADDED: ("#DCF2E3", "#17603A"),
    Outcome.UPDATED: ("#DDEBFB", "#1B4F8A"),
    Outcome.UNCHANGED: ("#EEF0F2", "#4A5560"),
    Outcome.ALREADY_IMPORTED: ("#EEF0F2", "#4A5560"),
    Outcome.VALID: ("#E4F3F1", "#1D6359"),
    Outcome.PERMISSION_DENIED: ("#EFE3F8", "#6A2E91"),
    Outcome.INVALID: ("#FDF0D5", "#8A5300"),
    Outcome.REJECTED: ("#FBE2DE", "#A12C1B"),
    Outcome.OVERLAPS_EXISTING: ("#FDEBD7", "#8F4A0C"),
    Outcome.FAILED: ("#F9D7D9", "#8E1420"),
    Outcome.NOT_SENT: ("#EEF0F2", "#8E1420"),
    Outcome.SKIPPED: ("#F3F4F6", "#5B6470"),
}

# Rows needing attention that carry no Problem still belong to a group: the code their outcome implies.
_OUTCOME_CODES: dict[Outcome, str] = {
    Outcome.INVALID: "invalid",
    Outcome.REJECTED: "service-rejected",
    Outcome.PERMISSION_DENIED: "permission-denied",
    Outcome.OVERLAPS_EXISTING: "overlaps-existing",
    Outcome.FAILED: "transport-failed",
    Outcome.NOT_SENT: "not-sent",
}


def shown_host(url: str) -> str:
    """The host (and port) a report shows for the service: ``service_host``'s URL without its scheme and
    path, so never a user info or query either (a token may hide there)."""
    if url == EMBEDDED_SANDBOX:
        return "the embedded sandbox"
    return urlsplit(service_host(url)).netloc


def sandbox_notice(service_url: str) -> str:
    """The warning every output of a run against a sandbox carries (issue 13: never used by accident);
    ``""`` for a run against the platform."""
    if not is_sandbox_target(service_url):
        return ""
    if service_url == EMBEDDED_SANDBOX:
        return ("Not the platform: this run used the embedded sandbox, a stand-in started inside hrimport; "
                "nothing reached the real service. To import for real, set the service's base URL (--base-url, "
                "base_url in the config's [service] table, or $HRIMPORT_BASE_URL).")
    where = describe_target(service_url).removeprefix("sandbox at ")
    return f"Not the platform: this run used the sandbox at {where}; nothing reached the real service."


def format_size(size: int) -> str:
    """``1234567`` -> ``1.2 MB`` (decimal units, as file managers show)."""
    value = float(size)
    for unit in ("bytes", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{int(value):,} {unit}" if unit == "bytes" else f"{value:,.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def format_duration(seconds: float) -> str:
    """``0.42`` -> ``0.4 s``; ``192`` -> ``3 min 12 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {secs} s"


def format_timings(timings: Mapping[str, float]) -> str:
    """Seconds per stage in one line: ``read 0.2 s, validate 0.1 s, submit 41.8 s``."""
    return ", ".join(f"{stage} {format_duration(seconds)}" for stage, seconds in timings.items())


def format_time(iso: str) -> str:
    """An ISO 8601 timestamp as people read it: ``2024-05-01 14:03:22 (+02:00)``."""
    if not iso:
        return ""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    offset = moment.strftime("%z")
    return f"{text} (UTC{offset[:3]}:{offset[3:]})" if offset else text


def detail_label(key: str) -> str:
    """Column heading of a detail key: ``leave_type`` -> ``Leave type``; labels already written stay."""
    if key.islower() and " " not in key:
        return key.replace("_", " ").capitalize()
    return key


_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}


def reading_summary(src: SourceInfo) -> str:
    """How the file was read, in one line: 'staff.csv: CSV, encoding utf-8, comma-delimited, header on row 1'."""
    parts = [src.format.upper()]
    if src.sheet is not None:
        parts.append(f"sheet '{src.sheet}'")
    if src.encoding:
        parts.append(f"encoding {src.encoding}")
    if src.delimiter:
        parts.append(f"{_DELIMITER_NAMES.get(src.delimiter, repr(src.delimiter))}-delimited")
    parts.append(f"header on row {src.header_row}" if src.header_rows == 1 else src.header_told)
    return f"{src.name}: {', '.join(parts)}"


def run_facts(info: RunInfo) -> list[tuple[str, str]]:
    """The run's facts as (label, value) lines, in the order the report's header shows them."""
    src = info.source
    facts = [
        ("Job", info.job),
        ("Kind", "Time off" if info.kind == "timeoff" else "Staff"),
        ("Mode", "Dry run: nothing was sent" if info.dry_run else "Import"),
        ("File", src.name),
    ]
    if src.sheet:
        facts.append(("Sheet", src.sheet))
    facts += [
        ("Format", src.format.upper() + (f", {src.encoding}" if src.encoding else "")),
        ("Size", format_size(src.size)),
        ("SHA-256", src.sha256),
        ("Header row", str(src.header_row) if src.header_rows == 1
         else src.header_told.removeprefix("header over rows ")),
        ("Started", format_time(info.started_at)),
        ("Finished", format_time(info.finished_at)),
        ("Duration", format_duration(info.duration_s)),
        ("Timings", format_timings(info.timings) or "not recorded"),
        ("Service", shown_host(info.service_url)),
        ("Target", describe_target(info.service_url) or "none (checked only)"),
        ("Customer id", info.customer_id),
        ("Tool version", f"hrimport {info.tool_version}" if info.tool_version else "hrimport"),
        ("Ignored columns", ", ".join(info.ignored_columns) if info.ignored_columns else "none"),
    ]
    return facts


class RowMasking:
    """Masks a run's sensitive values in every row's cells and messages (see ``cells.Masker``)."""

    def __init__(self, result: RunResult, digest: RowsDigest | None = None) -> None:
        self.masker = Masker(result.info.mask_fields)
        # Source columns that carry a masked field, learnt from the problems: their raw cells are secrets too.
        self.columns = set(self.masker.fields)
        if self.masker:
            places = (digest or digest_rows(result)).problem_places
            self.columns.update(column.strip().casefold() for name, column in places
                                if self.masker.applies(name, column))
        # the source's headers seen so far, and those of them that are secret columns: each header is compared
        # once, not once per row (100,000 rows needing attention x 40 columns, three times over)
        self.seen_headers: set[str] = set()
        self.secret_headers: set[str] = set()
        # whether a detail key, or a problem's (field, column), is a masked field: decided once each, not once
        # per row
        self.masked_keys: dict[str, bool] = {}
        self.masked_places: dict[tuple[str | None, str | None], bool] = {}
        # the detail keys known not to be masked fields: a row whose detail keys are all among them (a dry
        # run's every row, {"plan": "new"}) has no secret in its details, found in one set comparison
        self.open_keys: set[str] = set()

    def _masked_key(self, key: str) -> bool:
        masked = self.masked_keys.get(key)
        if masked is None:
            masked = self.masked_keys[key] = self.masker.applies(key)
            if not masked:
                self.open_keys.add(key)
        return masked

    def masked_details(self, keys: list[str]) -> list[bool]:
        """Whether each of ``keys`` is a masked field: its value is shown as ``mask_value`` shows it."""
        return [self._masked_key(k) for k in keys]

    def _masked_problem(self, problem: Problem) -> bool:
        place = (problem.field, problem.column)
        masked = self.masked_places.get(place)
        if masked is None:
            masked = self.masked_places[place] = self.masker.applies(*place)
        return masked

    def secrets(self, row: RowOutcome) -> list[str]:
        """The raw sensitive values of ``row``, to hide wherever its texts quote them."""
        if not self.masker:
            return []
        # runs for every row of every report file: inline look-ups, nothing made for a row with nothing secret
        found = [p.value for p in row.problems if p.value and self._masked_problem(p)] if row.problems else []
        if row.details and not row.details.keys() <= self.open_keys:
            masked_keys = self.masked_keys
            for k, v in row.details.items():
                masked = masked_keys.get(k)
                if masked is None:
                    masked = self._masked_key(k)
                if masked and v:
                    found.append(v)
        if row.source:
            source = row.source
            if not source.keys() <= self.seen_headers:
                for header in source.keys() - self.seen_headers:
                    self.seen_headers.add(header)
                    if header.strip().casefold() in self.columns:
                        self.secret_headers.add(header)
            found += [v for v in (source.get(h) for h in self.secret_headers) if v]
        return found

    def message(self, row: RowOutcome) -> str:
        """The row's message as shown: its own message, else its problems' messages; masked."""
        text = row.message or "; ".join(dict.fromkeys(p.message for p in row.problems))
        # a row with no problems or cells, whose detail keys are none masked (most rows), has no secrets
        if (self.masker and text
                and (row.problems or row.source or (row.details and not row.details.keys() <= self.open_keys))
                and (secrets := self.secrets(row))):
            text = self.masker.text(text, secrets)
        return text

    def details(self, row: RowOutcome, keys: list[str]) -> list[str]:
        """The row's detail values in ``keys`` order, masked where the key is a masked field."""
        d = row.details
        if not d:
            return [""] * len(keys)
        masked = self._masked_key
        return ["" if (v := d.get(k)) is None else mask_value(v) if masked(k) else v for k in keys]

    def problem(self, row: RowOutcome, problem: Problem) -> tuple[str, str]:
        """(value, message) of ``problem`` as shown."""
        value = problem.value
        value = "" if value is None else mask_value(value) if self._masked_problem(problem) else value
        message = problem.message
        if self.masker and (secrets := self.secrets(row)):
            message = self.masker.text(message, secrets)
        return value, message


@dataclass
class ProblemLine:
    """One problem of one row, as listed under its code."""

    row: int
    external_id: str
    name: str
    outcome: Outcome
    column: str
    value: str
    message: str


@dataclass
class ProblemGroup:
    """All problems sharing a code, with what the code means and how to fix it: the lines of its first
    ``limit`` rows (every line of each: a row may have two cells with one problem), and how many rows it
    names in all. ``counts`` is told of each line, a row's lines together, rows in order."""

    code: str
    explanation: Explanation
    limit: int | None = None  # rows listed at most (report.html's ``html_problem_limit``); None: every one
    # past the first few thousand, the lines wait in a file
    lines: SpooledList[ProblemLine] = field(default_factory=lambda: SpooledList(HELD_LISTED))
    row_count: int = 0  # the rows the group names, listed or not
    listed_rows: int = 0
    _last_row: int | None = field(default=None, repr=False)

    def counts(self, row: int) -> bool:
        """Count a line of ``row``; whether it is listed (its row among the first ``limit``)."""
        if row != self._last_row:
            self._last_row = row
            self.row_count += 1
            if self.limit is None or self.listed_rows < self.limit:
                self.listed_rows += 1
        return self.row_count == self.listed_rows

    @property
    def unlisted_rows(self) -> int:
        """The rows named but not listed (past ``limit``): report.xlsx has them, and to_fix those held back."""
        return self.row_count - self.listed_rows


class ProblemGrouping:
    """The rows' problems grouped by code, as a walk of the rows gives them (``add``): ``problems``, those of
    the rows needing attention, and ``warnings``, those of every row (imported or not: what was doubtful about
    a row but did not stop it, such as a broken cell in a column nothing is sent from, or a value changed as
    the config allows). Each is largest group first.

    A row with two problems shows in both groups; a row needing attention with no recorded problem shows
    under the code its outcome implies, with its message.
    """

    def __init__(self, masking: RowMasking, limit: int | None = None) -> None:
        self.masking = masking
        self.limit = limit  # rows listed per group
        self._problems: dict[str, ProblemGroup] = {}
        self._warnings: dict[str, ProblemGroup] = {}

    def add(self, row: RowOutcome) -> None:
        """Group the problems and warnings of ``row``, after those of the rows given before it."""
        if row.outcome.needs_attention:
            found = tuple(p for p in row.problems if not p.is_warning) or (
                Problem(_OUTCOME_CODES.get(row.outcome, row.outcome.value), row.message or row.outcome.label),
            )
            for p in found:
                self._line(self._problems, row, p)
        for p in row.problems:
            if p.is_warning:
                self._line(self._warnings, row, p)

    def _line(self, groups: dict[str, ProblemGroup], row: RowOutcome, p: Problem) -> None:
        group = groups.get(p.code)
        if group is None:
            group = groups[p.code] = ProblemGroup(p.code, explain(p.code), self.limit)
        if group.counts(row.row):
            value, message = self.masking.problem(row, p)
            group.lines.append(
                ProblemLine(row.row, row.external_id, row.name, row.outcome, p.column or "", value, message))

    @property
    def problems(self) -> list[ProblemGroup]:
        return _largest_first(self._problems)

    @property
    def warnings(self) -> list[ProblemGroup]:
        return _largest_first(self._warnings)


def _largest_first(groups: dict[str, ProblemGroup]) -> list[ProblemGroup]:
    return sorted(groups.values(), key=lambda g: (-g.row_count, g.code))


def fix_file_rows(result: RunResult, digest: RowsDigest | None = None) -> dict[int, int]:
    """Each row needing attention's row number in ``to_fix`` (source row -> to_fix row), so a report can say
    where to find it there as well as in the original file.

    Computed from the run, not asked of the writer: it assumes the layout ``report.fix_file`` writes, in
    xlsx and CSV alike: the source's title rows, padded with blank rows down to the source's own header row,
    then the header, then the rows needing attention, one line each, in source order. If that layout
    changes, this must change with it (tests/test_report_browser.py opens both and compares).
    """
    source = result.info.source
    header = max(len(source.preamble), source.header_row - 1) + 1  # a header over two rows: one joined row
    attention = sorted((digest or digest_rows(result)).attention_rows)
    return {row: header + position for position, row in enumerate(attention, 1)}


# --- the plan: what the file changes (hrimport.changes.plan ``Plan.summary()``) ---------------------------

_PLAN_COUNTS = (
    ("new", "new"),
    ("changed", "changed"),
    ("unchanged", "unchanged"),
    ("invalid", "invalid, not planned"),
    ("missing", "missing from the file"),
)


@dataclass
class PlanExample:
    """One person a plan highlight names: their row (None for someone missing from the file)."""

    row: int | None
    external_id: str
    name: str
    text: str  # the changes (``job_title: Analyst -> Lead``), or when a missing person was last accepted


@dataclass
class PlanHighlight:
    """What payroll looks at first (new hires, leavers...): how many, and the first few by name."""

    key: str
    title: str
    count: int
    examples: list[PlanExample]

    @property
    def more(self) -> int:
        return self.count - len(self.examples)


@dataclass
class PlanView:
    """A run's plan as the report shows it: counts, highlights with examples, people per changed field."""

    counts: list[tuple[str, str, int]]  # (key, label, count)
    first_run: bool
    partial: bool
    accepted_before: int
    highlights: list[PlanHighlight]
    fields: list[tuple[str, str, int]]  # (label, field name, people)


def plan_view(plan: Mapping[str, Any] | None, *, dry_run: bool = False) -> PlanView | None:
    """``RunInfo.plan`` (``Plan.summary()``) shaped for the report; None for a run without a plan.

    Only highlights with people are kept; on a first run everyone is new, so the new hires are not listed
    one by one (the counts say it). The missing people are a highlight too, last.
    """
    if plan is None:
        return None
    counts = plan.get("counts", {})
    first_run = bool(plan.get("first_run"))
    # "unchanged" beside a send of every row: the label says they go all the same
    sent_again = {"unchanged": f"unchanged, {'would be ' if dry_run else ''}sent again"} if plan.get("unchanged_sent") else {}
    highlights = [
        PlanHighlight(key, entry["title"], entry["count"],
                      [PlanExample(e["row"], e["external_id"], e["name"], e.get("changes", ""))
                       for e in entry.get("examples", [])])
        for key, entry in plan.get("highlights", {}).items()
        if entry.get("count") and not (first_run and key == "new_hires")
    ]
    missing = plan.get("missing", {})
    if missing.get("count"):
        highlights.append(PlanHighlight(
            "missing", "Missing (accepted before, not in this file)", missing["count"],
            [PlanExample(None, m["external_id"], m["name"],
                         f"last accepted {m['accepted_at'][:10]}" if m.get("accepted_at") else "")
             for m in missing.get("examples", [])]))
    return PlanView(
        counts=[(key, sent_again.get(key, label), int(counts.get(key, 0))) for key, label in _PLAN_COUNTS],
        first_run=first_run,
        partial=bool(plan.get("partial")),
        accepted_before=int(plan.get("accepted_before", 0)),
        highlights=highlights,
        fields=[(detail_label(name), name, people) for name, people in plan.get("fields", {}).items()],
    )


# --- time off: the leave imported before that the export no longer lists (hrimport.timeoff.gone) ------------

#: The columns the report lists each such leave under (report.html's table, report.xlsx's sheet).
GONE_HEADERS = ("External id", "Name", "Leave type", "Start date", "End date", "Days", "Record id", "Imported",
                "From file", "Row")
#: report.xlsx's sheet listing every one of them.
GONE_SHEET = "No longer in the export"


@dataclass
class GoneView:
    """The leave imported before that the export no longer lists, as report.html shows it: how many, and the
    first ``html_problem_limit`` of them (report.xlsx lists every one)."""

    count: int
    listed: list[GoneLeave]

    @property
    def more(self) -> int:
        return self.count - len(self.listed)


def gone_view(result: RunResult) -> GoneView | None:
    """``result.gone`` shaped for report.html; None when the export lists every leave it covers."""
    if not result.gone:
        return None
    limit = max(result.info.html_problem_limit, 0)
    listed: list[GoneLeave] = []
    for leave in result.gone:
        if len(listed) == limit:
            break
        listed.append(leave)
    return GoneView(len(result.gone), listed)
