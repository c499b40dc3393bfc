"""Validator: a pandera schema generated from the field specification, and its failures as ``Problem``s.

Only this module touches pandera. ``validate_records`` runs the schema lazily, so every problem of
every row is found in one pass, and turns ``SchemaErrors.failure_cases`` into sentences an HR person
understands, naming the source row, the column, the value and what is expected.

Every check is the platform's own rule (a date, a country code, an allowed value...), but for two doubts of
ours (principle 2: a row is never refused on a rule the interface does not state), each a warning on its row,
which is sent as written, unless the config makes it strict (an error: the row is not sent):

- ``not-an-email``: the interface types the e-mail fields as plain strings, so a value that does not look like
  name@example.com is doubted, never refused, unless ``[staff] email_check = "strict"``;
- ``country-change-incomplete``: the interface needs ``old_country`` and ``new_country_effective_date``
  "only when the staff member's country is being changed", and refuses "a country change without" them. A row
  whose ``old_country`` is another country than its ``country`` changes country, so one without the date is
  that refusal (an error, always). Whether a row giving only the date, or an ``old_country`` equal to its
  ``country``, changes country, only the platform knows (it holds the country it has): a warning, unless
  ``[staff] strict_checks`` lists the code.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pyarrow as arrow
import pyarrow.compute as pc

from hrimport.config import DEFAULT_EMAIL_CHECK
from hrimport.fields import Field, by_name
from hrimport.listing import INVISIBLE, INVISIBLE_RANGES
from hrimport.mapper import MappedTable
from hrimport.normalize.countries import alpha2_codes
from hrimport.normalize.values import RE2_SPACES
from hrimport.outcomes import Problem
from hrimport.reader.repeated_header import holds_no_record, keep_alone
from hrimport.regions import looks_like_region_code, region_codes, unknown_region_advice

# Deliberately plain: one @, no spaces, a dot in the domain. It catches the typos HR exports actually contain
# ("jane.doe@", "jane doe@acme.com"), but real addresses fail it too (an intranet's "ann@intranet"), and the
# platform publishes no rule: a warning unless the config's email_check is "strict".
# Nor an invisible character (principle 1): an address pasted from a web page, a chat or Outlook may carry a
# zero-width space, a direction mark or a soft hyphen that the sheet does not show, and the platform would then
# hold a login other than the one everybody sees.
_NOT_IN_EMAIL = rf"@\s{INVISIBLE}"
EMAIL_PATTERN = rf"[^{_NOT_IN_EMAIL}]+@[^{_NOT_IN_EMAIL}]+\.[^{_NOT_IN_EMAIL}.]+"
# The same for pyarrow, whose RE2 runs it ~5x faster than pandas falls back to Python's re for \s.
_NOT_IN_EMAIL_RE2 = "@" + RE2_SPACES + "".join(rf"\x{{{first:X}}}-\x{{{last:X}}}" for first, last in INVISIBLE_RANGES)
_EMAIL_RE2 = rf"^[^{_NOT_IN_EMAIL_RE2}]+@[^{_NOT_IN_EMAIL_RE2}]+\.[^{_NOT_IN_EMAIL_RE2}.]+$"
NUMBER_PATTERN = r"\d+(\.\d+)?"
INTEGER_PATTERN = r"\d+"
ISO_DATE_PATTERN = r"\d{4}-\d{2}-\d{2}"


def _is_real_date(s: pd.Series) -> pd.Series:
    """Whether each value is an ISO date that exists (not 2021-02-30): each distinct value looked at once, as a
    column repeats its dates."""
    codes, uniques = pd.factorize(s)
    distinct = pd.Series(uniques, dtype="str")
    iso = distinct.str.fullmatch(ISO_DATE_PATTERN)
    real = (iso & pd.to_datetime(distinct.where(iso), format="%Y-%m-%d", errors="coerce").notna()).to_numpy(bool)
    found = np.zeros(len(s), dtype=bool)  # a missing value (code -1) is no date
    given = codes >= 0
    found[given] = real[codes[given]]
    return pd.Series(found, index=s.index)


def _is_email(s: pd.Series) -> pd.Series:
    """``s.str.fullmatch(EMAIL_PATTERN)``, in RE2."""
    found = pc.match_substring_regex(arrow.array(s, type=arrow.string()), _EMAIL_RE2)
    return pd.Series(found.fill_null(False).to_numpy(zero_copy_only=False), index=s.index, dtype=bool)


def _kind_checks(f: Field) -> list[pa.Check]:
    kind = f.kind
    if kind == "date":
        return [pa.Check(_is_real_date, error="not-a-date")]
    if kind == "email":
        return [pa.Check(_is_email, error="not-an-email")]
    if kind == "country":
        codes = alpha2_codes()
        if f.subdivisions:
            return [pa.Check(_country_or_region, error="unknown-country")]
        return [pa.Check(lambda s: s.isin(codes), error="unknown-country")]
    if kind == "enum":
        return [pa.Check(lambda s: s.isin(f.choices), error="not-an-allowed-value")]
    if kind == "boolean":
        return [pa.Check(lambda s: s.isin(("true", "false")), error="not-a-boolean")]
    if kind == "number":
        return [pa.Check(lambda s: s.str.fullmatch(NUMBER_PATTERN), error="not-a-number")]
    if kind == "integer":
        return [pa.Check(lambda s: s.str.fullmatch(INTEGER_PATTERN), error="not-a-number")]
    return []


def _country_or_region(s: pd.Series) -> pd.Series:
    """Whether each value is a country code or a region code ISO 3166-2 lists, as the mapper wrote them (US-CA):
    a field taking regions (``Field.subdivisions``). A column of country codes never loads ISO 3166-2's list."""
    known = s.isin(alpha2_codes())
    if known.all():
        return known
    return known | s.isin(region_codes())


def _rule_checks(columns: set[str]) -> list[pa.Check]:
    """Rules across fields (spec: is_intern; old_country and new_country_effective_date together)."""
    checks = []
    if "is_intern" in columns and columns & {"is_manager", "is_employee"}:
        def intern_alone(df: pd.DataFrame) -> pd.Series:
            other = pd.Series(False, index=df.index)
            for name in ("is_manager", "is_employee"):
                if name in df:
                    other |= df[name] == "true"
            return ~((df["is_intern"] == "true") & other)

        checks.append(pa.Check(intern_alone, error="intern-with-other-role"))
    if columns & set(_COUNTRY_CHANGE):
        def both_or_neither(df: pd.DataFrame) -> pd.Series:
            given = [df[c].notna() if c in df else pd.Series(False, index=df.index) for c in _COUNTRY_CHANGE]
            return given[0] == given[1]

        # one code, an error or a warning as the row shows a change or not (_changes_country)
        checks.append(pa.Check(both_or_neither, error="country-change-incomplete"))
    return checks


#: The fields the interface needs together "when the staff member's country is being changed".
_COUNTRY_CHANGE = ("old_country", "new_country_effective_date")


def _changes_country(frame: pd.DataFrame, pos: int) -> bool:
    """Whether the row at ``pos`` shows a country change: its ``old_country`` is a country other than its
    ``country`` (both normalised to ISO codes by the mapper). Without an ``old_country``, or with the same
    country, the file does not tell; the platform, which holds the person's country, does."""
    if "old_country" not in frame or "country" not in frame:
        return False
    old, new = frame["old_country"].iat[pos], frame["country"].iat[pos]
    return bool(pd.notna(old) and pd.notna(new) and old != new)


def build_schema(fields: tuple[Field, ...], present: set[str]) -> pa.DataFrameSchema:
    """The pandera schema for the fields of one record kind that this file provides. The key's duplicates are
    not its business: whether rows sharing an id differ needs every row of the file (``KeyIds``)."""
    columns = {}
    for f in fields:
        if f.envelope or f.kind == "custom_data" or f.name not in present:
            continue
        columns[f.name] = pa.Column(nullable=not f.is_required, checks=_kind_checks(f), required=False)
    return pa.DataFrameSchema(columns, checks=_rule_checks(present))


def validate_records(
    mapped: MappedTable, *, duplicates: bool = True, email_check: str = DEFAULT_EMAIL_CHECK,
    strict_checks: frozenset[str] = frozenset(),
) -> dict[int, list[Problem]]:
    """Every problem of every row, keyed by the row's position in ``mapped`` (rows absent are valid).

    The problems the reader and the mapper already found (``mapped.problems``) come first; a cell they
    flagged is not reported again by the schema (a two-digit year is not also "not a date").
    ``duplicates=False``: ``mapped`` is one chunk of a file, whose duplicate ids ``KeyIds`` finds once the
    last chunk is in; else ``mapped`` is the whole file, and its rows sharing an id get their ``duplicate-id``
    problems, or their ``duplicate-row`` warnings (``KeyIds.duplicates``), here.
    ``email_check`` (the config's ``[staff] email_check``): "warn" adds each ``not-an-email`` to
    ``mapped.warnings`` (the row stays valid and carries it), "strict" makes it a problem of its row.
    ``strict_checks`` (``[staff] strict_checks``) does the same for the other doubts it names (module docstring).
    """
    frame = mapped.frame.mask(mapped.frame == "")  # empty cells are missing values to pandera
    schema = build_schema(mapped.fields, set(frame.columns))
    problems = {pos: list(found) for pos, found in mapped.problems.items()}
    strict = set(strict_checks) | ({"not-an-email"} if email_check == "strict" else set())
    try:
        schema.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        for pos, found in _problems_from(exc.failure_cases, mapped, frame, problems, strict=strict).items():
            for problem in found:
                if problem.is_warning:
                    mapped.add_problem(pos, problem)
                else:
                    problems.setdefault(pos, []).append(problem)
    keep_alone(problems, mapped.warnings)  # a row holding no record: its fields are no values to check
    if duplicates:
        keys = KeyIds(mapped.fields)
        keys.add(mapped, problems)
        shared = keys.duplicates(mapped)
        position = {row: pos for pos, row in enumerate(mapped.row_numbers)} if shared else {}
        for row, problem in shared.doubled.items():
            problems.setdefault(position[row], []).append(problem)
        for row, repeat in shared.repeats.items():
            mapped.warnings.setdefault(position[row], []).insert(0, repeat.warning)
    return problems


def config_value_problem(
    mapped: MappedTable, problems: dict[int, list[Problem]], constants: dict[str, str], defaults: dict[str, str]
) -> tuple[str, Problem] | None:
    """The first problem of a value the config gave rather than the file (a constant, or a default where the
    row's cell is empty), with "constants" or "defaults"; None when there is none. Such a value is the
    config's mistake, on every row it fills: the caller refuses the config instead of blaming the rows' cells."""
    given = set(constants) | set(defaults)
    if not given:
        return None
    for pos, found in problems.items():
        for problem in found:
            if problem.field not in given or problem.code not in _VALUE_CODES:
                continue
            if problem.field in constants:
                return "constants", problem
            cells = mapped.read.get(problem.field)  # the file's cells, when a column maps the field
            if cells is None or cells.iat[pos] == "":
                return "defaults", problem
    return None


def _problems_from(
    cases: pd.DataFrame, mapped: MappedTable, frame: pd.DataFrame, known: dict[int, list[Problem]], *,
    strict: set[str],
) -> dict[int, list[Problem]]:
    """The schema's failures as problems, one per cell (one per row for a rule across fields); a doubt of ours
    (``_OUR_RULES``) whose code ``strict`` does not name is a warning."""
    specs = by_name(mapped.fields)
    cases = cases[cases["index"].notna()]
    problems: dict[int, list[Problem]] = defaultdict(list)
    seen: set[tuple[int, str, str | None]] = set()
    flagged = {(pos, p.field) for pos, found in known.items() for p in found if p.field}
    # a cell read as empty because it holds no value (an Excel error, a formula without its result) already says
    # so: "a value is required, and the cell is empty" would tell the same cell twice, the second time wrongly
    holds_no_value = {(pos, p.field) for pos, found in known.items() for p in found
                      if p.field and p.code in _NO_VALUE_CODES}

    for check, column, value, index in zip(cases["check"], cases["column"], cases["failure_case"], cases["index"]):
        pos = int(index)
        code = "missing-value" if check == "not_nullable" else str(check)
        # a rule across fields reports every column of the failing row: one problem per row is enough
        field_name = None if code in _ROW_RULES else column
        if (pos, code, field_name) in seen or (code != "missing-value" and (pos, field_name) in flagged) or (
                (pos, field_name) in holds_no_value):
            continue
        seen.add((pos, code, field_name))
        row = mapped.row_numbers[pos]
        f = specs.get(column) if field_name else None
        source = mapped.field_sources.get(column, column) if field_name else None
        text = "" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)
        doubt = code in _OUR_RULES and not (code == "country-change-incomplete" and _changes_country(frame, pos))
        warn = doubt and code not in strict
        message = _MESSAGES.get(code, _generic)(
            row=row, column=source, value=text, field=f, frame=frame, pos=pos, mapped=mapped, doubt=doubt, warn=warn,
        )
        problems[pos].append(Problem(code, message, row, source, field_name, text if field_name else None,
                                     severity="warning" if warn else "error"))
    return dict(problems)


_ROW_RULES = {"intern-with-other-role", "country-change-incomplete"}
# Problems of a value itself (the schema's kind checks, the mapper's reading of dates and countries), which a
# config's default or constant can have; not the reader's problems of a cell (an Excel error, a formula
# without its result), which leave the cell empty for a default to fill.
_VALUE_CODES = {"not-a-date", "not-an-email", "unknown-country", "not-an-allowed-value", "not-a-boolean",
                "not-a-number", "ambiguous-country", "two-digit-year", "formula-like-text"}
# Checks of a rule the platform's interface does not state (principle 2): a warning unless the config is strict
# (country-change-incomplete: only where the row shows no country change, _changes_country).
_OUR_RULES = {"not-an-email", "country-change-incomplete"}
# the reader's and mapper's problems of a cell that holds no value to send (hrimport.reader.grid)
_NO_VALUE_CODES = {"error-value", "formula-not-calculated"}


@dataclass(frozen=True, slots=True)
class RepeatedRow:
    """A row that repeats an earlier one exactly: the same external id, the same value in every field sent
    (an export that listed a person twice; in a time-off file, a leave: ``LeaveTable.repeats``). Sending it
    too would change nothing, as the platform adds or updates people by external id (and would refuse the
    leave as overlapping itself), so it is not sent: it shares the outcome of row ``first``, and carries
    ``warning`` (``duplicate-row``) to say so."""

    first: int
    warning: Problem


@dataclass
class SharedIds:
    """The rows of a file whose external id another row has too (``KeyIds.duplicates``), by row number: the
    ``duplicate-id`` problem of each row of an id whose rows differ (none of them is sent), and each later
    row of an id whose rows are all valid and send the same values (only the first is sent)."""

    doubled: dict[int, Problem] = field(default_factory=dict)
    repeats: dict[int, RepeatedRow] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.doubled or self.repeats)


class KeyIds:
    """The external ids of a file validated chunk by chunk (issue 17), and the rows that share one.

    The ids are kept as Arrow arrays (about 20 bytes a row rather than a Python string each), and with each
    valid row, a 128-bit digest of what it sends (``sent_digests``, 16 bytes): whether two rows send the same
    values is known without keeping the rows. The duplicates are found once the last chunk is in: rows of an
    id that are all valid and send the same values are one person listed twice, sent once (``RepeatedRow``);
    otherwise every row of the id gets the ``duplicate-id`` problem, naming the other rows."""

    def __init__(self, fields: tuple[Field, ...]) -> None:
        self.key = next((f.name for f in fields if f.key), None)
        self._ids: list[arrow.Array] = []
        self._rows: list[np.ndarray] = []
        self._digests: list[np.ndarray] = []  # per row kept: its digest, (0, 0) for an invalid row
        self._valid: list[np.ndarray] = []

    def add(self, mapped: MappedTable, problems: dict[int, list[Problem]]) -> None:
        """Take one chunk's ids: the non-empty ones on rows whose id no earlier check flagged. ``problems``:
        the chunk's (a row with one is not sent, so it never repeats another)."""
        if self.key is None or self.key not in mapped.frame:
            return
        ids = mapped.frame[self.key]
        keep = (ids != "").to_numpy(copy=True)  # pandas' own array is read-only (copy-on-write)
        valid = np.ones(len(ids), dtype=bool)
        for pos, found in problems.items():
            valid[pos] = False
            if any(p.field == self.key for p in found) or holds_no_record(found):
                # a cell already flagged is not reported again (as in validate_records); a row repeating the
                # header, a totals row, hold no id ('Employee ID' twice in a file of three exports, 'Total' under
                # each department of a report, are no duplicates)
                keep[pos] = False
        # from Python, into malloc's pool: kept to the end, these must neither hold on to the chunk's own
        # Arrow buffers nor pin the pages of pyarrow's pool that the next chunks reuse
        self._ids.append(arrow.array(ids[keep].tolist(), type=arrow.large_string(),
                                     memory_pool=arrow.system_memory_pool()))
        self._rows.append(np.asarray(mapped.row_numbers, dtype=np.int64)[keep])
        valid = valid[keep]
        digests = np.zeros((len(valid), 2), dtype=np.uint64)
        digests[valid] = sent_digests(mapped, np.flatnonzero(keep)[valid])
        self._digests.append(digests)
        self._valid.append(valid)

    def duplicates(self, mapped: MappedTable) -> SharedIds:
        """The rows whose id another row has too: ``duplicate-id`` problems and repeated rows."""
        found = SharedIds()
        if not self._ids or self.key is None:
            return found
        ids = arrow.chunked_array(self._ids, type=arrow.large_string())
        counts = pc.value_counts(ids)
        doubled = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
        if not len(doubled):
            return found
        hit = pc.is_in(ids, value_set=doubled).to_numpy(zero_copy_only=False)
        rows = np.concatenate(self._rows)[hit].tolist()
        values = pc.filter(ids, hit).to_pylist()
        digests = np.concatenate(self._digests)[hit]
        valid = np.concatenate(self._valid)[hit]
        at_of: dict[str, list[int]] = defaultdict(list)  # id -> its rows' places among those hit, in file order
        for at, value in enumerate(values):
            at_of[value].append(at)
        column = mapped.field_sources.get(self.key, self.key)
        for value, places in at_of.items():
            first = places[0]
            same = bool(valid[places].all() and (digests[places] == digests[first]).all())
            if same:
                for at in places[1:]:
                    found.repeats[rows[at]] = RepeatedRow(rows[first], Problem(
                        "duplicate-row", _repeated(row=rows[at], first=rows[first], column=column, value=value),
                        rows[at], column, self.key, value, severity="warning"))
                continue
            shared = [rows[at] for at in places]
            for row in shared:
                found.doubled[row] = Problem("duplicate-id", _duplicate(row=row, column=column, value=value,
                                                                        dup_rows=shared), row, column, self.key, value)
        return found


def sent_digests(mapped: MappedTable, positions: np.ndarray) -> np.ndarray:
    """A 128-bit digest (two ``uint64``) of the values each valid row at ``positions`` sends: every field and
    custom data value, normalised, as the request body is made of them. The values are joined by a NUL, which
    no value sent holds (the reader makes a cell holding one ``bad-encoding``, never sent), so two rows' texts
    are alike only when their values are; the text is hashed by SipHash with two keys, and two texts share
    both halves by chance once in 2^128."""
    columns = [mapped.frame[name] for name in mapped.frame.columns] + [mapped.custom[name] for name in mapped.custom.columns]
    out = np.zeros((len(positions), 2), dtype=np.uint64)
    if not len(positions) or not columns:
        return out
    # whole columns (Arrow-backed: no copy), the rows wanted taken in Arrow (no pandas copy of each column)
    values = [arrow.array(column, type=arrow.large_string()) for column in columns]
    if len(positions) != len(mapped.frame):
        wanted = arrow.array(positions)
        values = [column.take(wanted) for column in values]
    text = pc.binary_join_element_wise(*values, arrow.scalar("\x00", arrow.large_string())).to_numpy(
        zero_copy_only=False)
    for half, key in enumerate(_DIGEST_KEYS):
        out[:, half] = pd.util.hash_array(text, hash_key=key, categorize=False)
    return out


#: The two SipHash keys of ``sent_digests`` (16 characters each, as pandas takes them): any two distinct keys.
_DIGEST_KEYS = ("hrimport-sent-1.", "hrimport-sent-2.")


def _where(row: int, column: str | None) -> str:
    return f"Row {row}, column '{column}'" if column else f"Row {row}"


def _generic(*, row: int, column: str | None, value: str, **_: object) -> str:
    return f"{_where(row, column)}: '{value}' is not valid."


def _missing(*, row: int, column: str | None, field: Field | None, **_: object) -> str:
    name = field.name if field else column
    return f"{_where(row, column)}: a value is required ({name}), and the cell is empty."


def _not_date(*, row: int, column: str | None, value: str, **_: object) -> str:
    return (f"{_where(row, column)}: '{value}' is not a real date "
            "(expected a real calendar date, such as 2020-01-31, or an Excel date cell).")


def _not_email(*, row: int, column: str | None, value: str, warn: bool, **_: object) -> str:
    if not warn:
        return (f"{_where(row, column)}: '{value}' is not an e-mail address ({email_flaw(value)}; expected "
                "name@example.com); not sent (email_check = \"strict\").")
    return f"{_where(row, column)}: '{value}' does not look like an e-mail address ({email_flaw(value)}); kept as written."


def email_flaw(value: str) -> str:
    """What keeps ``value`` from the form ``EMAIL_PATTERN`` describes, in a few words."""
    local, at, domain = value.partition("@")
    if not at:
        return "no @"
    if "@" in domain:
        return "more than one @"
    if any(c.isspace() for c in value):
        return "a space in it"
    if hidden := next((c for c in value if c in INVISIBLE), None):
        return f"an invisible character, U+{ord(hidden):04X}, in it"
    if not local:
        return "nothing before the @"
    if not domain:
        return "nothing after the @"
    if "." not in domain:
        return "no dot after the @"
    if domain.endswith("."):
        return "a dot at the end"
    return "the part after the @ is not a domain such as example.com"


def _country(*, row: int, column: str | None, value: str, field: Field | None, **_: object) -> str:
    regions = field is not None and field.subdivisions
    if regions and looks_like_region_code(value):
        return f"{_where(row, column)}: {unknown_region_advice(value)}."
    region = ", or a region's ISO 3166-2 code such as US-CA" if regions else ""
    return (f"{_where(row, column)}: '{value}' is not a country we recognise "
            f"(use an ISO code such as SG, MY or CN{region}, or the country's name in English or another "
            "common language, spelt in full).")


def _enum(*, row: int, column: str | None, value: str, field: Field | None, **_: object) -> str:
    allowed = ", ".join(field.choices) if field else "the allowed values"
    return f"{_where(row, column)}: '{value}' is not one of {allowed} (add a value map to the config if it means one)."


def _boolean(*, row: int, column: str | None, value: str, **_: object) -> str:
    return f"{_where(row, column)}: '{value}' is not a yes/no value (use yes/no, true/false, Y/N or 1/0)."


# "1,500": one comma before three digits, read as 1.5 in Berlin and as 1500 in London (one or two digits after a
# comma are read as decimals: hrimport.normalize.DECIMAL_COMMA).
_COMMA_BEFORE_THREE_DIGITS = re.compile(r"([+-]?\d+),(\d{3})")


def _number(*, row: int, column: str | None, value: str, **_: object) -> str:
    both = _COMMA_BEFORE_THREE_DIGITS.fullmatch(value.strip())
    if both:
        whole, part = both.groups()
        decimal = format(Decimal(f"{whole}.{part}").normalize(), "f")
        return (f"{_where(row, column)}: '{value}' is not a number: its comma may be a decimal comma ({decimal}) "
                f"or separate thousands ({int(whole + part)}); write it with digits and a dot for decimals.")
    return f"{_where(row, column)}: '{value}' is not a number (expected e.g. 2 or 3.5)."


#: A duplicate id names every other row it is on up to this many; beyond, the first and a count.
DUPLICATE_ROWS_NAMED = 3


def _duplicate(*, row: int, column: str | None, value: str, dup_rows: list[int], **_: object) -> str:
    return (f"{_where(row, column)}: external id '{value}' appears more than once in this file "
            f"(also on {_other_rows(row, dup_rows)}); each person must appear once.")


def _repeated(*, row: int, first: int, column: str | None, value: str) -> str:
    return (f"Row {row} repeats row {first}: the same external id '{value}' ('{column}') and the same value in "
            f"every field sent, so the person is sent once, with row {first}, and this row shares its outcome.")


def _other_rows(row: int, rows: list[int]) -> str:
    """The rows of ``rows`` other than ``row``, in words: all of them when few, else the first and a count.

    Constant size and time per row, whatever the number of duplicates: 100,000 rows sharing one id (the
    wrong column mapped as the external id) would otherwise make 100,000 messages of 100,000 row numbers.
    """
    if len(rows) - 1 > DUPLICATE_ROWS_NAMED:
        first = rows[1] if rows[0] == row else rows[0]
        rest = len(rows) - 2
        return f"row {first} and {rest:,} other row{'s' if rest != 1 else ''}"
    others = [str(r) for r in rows if r != row]
    if len(others) == 1:
        return f"row {others[0]}"
    return f"rows {', '.join(others[:-1])} and {others[-1]}"


def _intern(*, row: int, mapped: MappedTable, **_: object) -> str:
    # the fields with a source to look at (a column, a config value): not an is_employee the mapper filled for
    # an intern, which no column of the file holds
    cols = [mapped.field_sources[n] for n in ("is_intern", "is_manager", "is_employee")
            if n in mapped.frame and n in mapped.field_sources]
    return (f"Row {row}: an intern cannot also be a manager or an employee "
            f"(check the columns {', '.join(repr(c) for c in cols)}).")


def _country_change(*, row: int, mapped: MappedTable, frame: pd.DataFrame, pos: int, doubt: bool, warn: bool,
                    **_: object) -> str:
    """The one of old_country and new_country_effective_date given without the other: with another country
    than the row's, the spec's refusal; else a doubt, sent as written (``warn``) or held back (strict)."""
    def where(name: str) -> str:  # the column, or that none gives the field
        return f"'{mapped.field_sources[name]}'" if name in mapped.field_sources else f"no column ({name})"

    def cell(name: str) -> str:
        value = frame[name].iat[pos] if name in frame else None
        return "" if value is None or pd.isna(value) else str(value)

    old, date, country = cell("old_country"), cell("new_country_effective_date"), cell("country")
    if not doubt:
        return (f"Row {row}: the country changes from {old} ({where('old_country')}) to {country} "
                f"({where('country')}), and the platform needs the date the new country takes effect "
                f"({where('new_country_effective_date')}) with a change, which is empty; not sent: enter the date.")
    if old:
        said = (f"{where('old_country')} is {old}, the same country as {where('country')}, and "
                f"{where('new_country_effective_date')} is empty: the file shows no country change, and only "
                "a change needs both")
        check = fix = "if the person moved, enter the country they left and the date"
        fix += f", else clear {where('old_country')}"
    else:
        said = (f"{where('new_country_effective_date')} is {date} and {where('old_country')} is empty: a country "
                "change needs both, and whether the country changes only the platform knows (it holds the "
                "person's country)")
        check = "the platform refuses the row if it does: then enter the country the person left"
        fix = (f"enter the country the person left, or clear {where('new_country_effective_date')} if the "
               "country does not change")
    if warn:  # "kept", not "sent": the row may not be sent this run (unchanged since last month, a dry run)
        return f"Row {row}: {said}; kept as written ({check})."
    return f"Row {row}: {said}; not sent ([staff] strict_checks lists country-change-incomplete): {fix}."


_MESSAGES: dict[str, Callable[..., str]] = {
    "missing-value": _missing,
    "not-a-date": _not_date,
    "not-an-email": _not_email,
    "unknown-country": _country,
    "not-an-allowed-value": _enum,
    "not-a-boolean": _boolean,
    "not-a-number": _number,
    "intern-with-other-role": _intern,
    "country-change-incomplete": _country_change,
}

__all__ = ["EMAIL_PATTERN", "KeyIds", "RepeatedRow", "SharedIds", "alpha2_codes", "build_schema",
           "config_value_problem", "email_flaw", "sent_digests", "validate_records"]

