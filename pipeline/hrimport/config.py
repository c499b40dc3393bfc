"""The import config: one TOML file per import, describing the export and how its columns map to fields.

Example (``samples/bamboohr_staff.toml`` has a complete one)::

    [service]
    customer_id = 99
    token_env = "HRIMPORT_TOKEN"          # the NAME of the variable holding the token, never the token

    [source]
    date_order = "month-first"            # how to read 01/02/2020; ISO dates are never ambiguous
    formula_text = "warn"                 # =Manager is sent as written, with a warning; "reject" holds
                                          # such a row back; "strip" sends it as Manager, with a warning
    totals_or_footer_rows = "flag"        # a totals row or footer line needs attention; "skip": skipped

    [staff]
    customer_system_id_type = "BambooHR"
    email_check = "warn"                  # or "strict": hold back a row whose e-mail is not name@example.com
    strict_checks = []                    # codes of other doubts to hold back, e.g. ["country-change-incomplete"]

    [staff.columns]                       # source column -> staff field
    "Employee #" = "customer_system_id"
    "Hire Date" = "job_start_date"

    [staff.join]                          # fields made of several columns
    name = ["First Name", "Last Name"]

    [staff.constants]                     # the same value on every row
    staff_type = "Payroll"

    [staff.values.staff_type]             # per-field value maps, matched ignoring case
    "Full-Time" = "Payroll"

    [staff.custom_fields]                 # source column -> company data type (customer_data_type)
    "Cost Centre" = "Cost Center"

Everything is checked when the file is loaded; a mistake is a ``ConfigError`` naming the key and the fix.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrimport.errors import ConfigError
from hrimport.fields import Field, by_name, staff_fields, timeoff_fields
from hrimport.service.urls import check_base_url
from hrimport.tomlfile import read_toml, reject_unknown_keys

if TYPE_CHECKING:  # the config is read before any data: it imports no pandas
    from hrimport.normalize.dates import DateOrder

DEFAULT_TOKEN_ENV = "HRIMPORT_TOKEN"
DEFAULT_BATCH_SIZE = 100
DEFAULT_HTML_ROW_LIMIT = 5000
#: Lines report.html lists under each problem and each warning: a bad month's 20,000 rows of one mistake made a
#: page of 20 MB, which no phone opens and no e-mail carries; to_fix and report.xlsx have every one.
DEFAULT_HTML_PROBLEM_LIMIT = 500
# What becomes of text a spreadsheet would run as a formula (hrimport.normalize.formulas): the platform's
# interface sets no rule against =Manager, so by default it is sent as written with a warning (we escape the
# spreadsheets we write); "reject" holds the row back; "strip" sends it without its leading =, +, -, @.
FORMULA_TEXT_MODES = ("warn", "reject", "strip")
DEFAULT_FORMULA_TEXT = "warn"
# What becomes of a row found to be a totals row or a footer line (hrimport.reader.summary_rows): the finding is a
# rule of ours, so by default the row is held back and needs attention (a person's row taken for one is seen);
# "skip" gives it the outcome skipped, named in the report, which needs no one's attention (an HR system that
# writes a footer under every export).
TOTALS_OR_FOOTER_MODES = ("flag", "skip")
DEFAULT_TOTALS_OR_FOOTER_ROWS = "flag"
# What becomes of an e-mail field's value that does not look like name@example.com (hrimport.validate): the
# platform's interface types these fields as plain strings, so the pattern is ours, and by default the row is
# sent with a warning; "strict" holds the row back.
EMAIL_CHECKS = ("warn", "strict")
DEFAULT_EMAIL_CHECK = "warn"
# The other doubts of a staff row on a rule the platform's interface does not state (principle 2), which a row
# is sent with, as a warning, unless ``[staff] strict_checks`` names their code (hrimport.validate): a row
# giving only one of old_country and new_country_effective_date where the file shows no country change; two
# columns mapped to one field holding different values, the first sent (hrimport.mapper.columns_disagree); a long
# number shown in scientific notation, its last digits lost (hrimport.normalize.long_numbers); a row the workbook
# hides, by a filter or Hide (hrimport.reader.hidden_rows); a value in a column the workbook hides
# (hrimport.reader.hidden_columns); a character nobody sees in a text value (hrimport.normalize.invisible).
STRICT_CHECKS = ("country-change-incomplete", "columns-disagree", "scientific-notation", "hidden-row",
                 "hidden-column", "invisible-character")
# The most a workbook (a ZIP: .xlsx, .xlsm, .ods) may unpack to, in MB: a real 100,000 x 40 export unpacks
# to about 250 MB, while a "ZIP bomb" packs a sheet of gigabytes into a megabyte.
DEFAULT_MAX_UNPACKED_MB = 500
# Seconds one request may take before the client gives up on it (connecting: at most 10 of them). A bulk
# of 100 staff records takes well under a second on the sandbox; a real platform behind a gateway may need
# more, and its limits are not shown, so the setting is the config's.
DEFAULT_REQUEST_TIMEOUT = 30.0
# Requests in flight at once. Staff: one batch at a time unless the config says more, since the platform's
# rate limits are not shown and a batch is already 100 records; at most the client's connection pool.
# Time off: records are posted one per request, so a few at a time keep the wire busy.
DEFAULT_STAFF_CONCURRENCY = 1
MAX_STAFF_CONCURRENCY = 4
DEFAULT_TIMEOFF_CONCURRENCY = 4
MAX_REQUEST_TIMEOUT = 600.0


@dataclass(frozen=True)
class ServiceSettings:
    """Where to send records. Unset values come from the environment or the embedded sandbox."""

    base_url: str | None = None
    customer_id: str | None = None
    token_env: str = DEFAULT_TOKEN_ENV
    timeout: float = DEFAULT_REQUEST_TIMEOUT  # seconds one request may take (each retry gets as long)


@dataclass(frozen=True)
class SourceSettings:
    """How to read the export."""

    sheet: str | int | None = None
    header_row: int | None = None
    date_order: DateOrder | None = None  # None: not set; each date column's values decide, else day-first
    encoding: str | None = None
    delimiter: str | None = None
    formula_text: str = DEFAULT_FORMULA_TEXT  # "warn" | "reject" | "strip": what becomes of text like =A1
    # "flag" | "skip": whether a totals row or a footer line is held back (needs attention) or skipped
    totals_or_footer_rows: str = DEFAULT_TOTALS_OR_FOOTER_ROWS
    max_unpacked_mb: int = DEFAULT_MAX_UNPACKED_MB  # a workbook unpacking to more is refused
    expected_columns: tuple[str, ...] = ()  # the headers `hrimport init` wrote the config for


@dataclass(frozen=True)
class FieldMapping:
    """How source columns become the fields of one kind of record (staff or time off)."""

    fields: tuple[Field, ...]
    columns: dict[str, str] = field(default_factory=dict)  # source column -> field
    joins: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)  # field -> (columns, sep)
    constants: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict[str, str]] = field(default_factory=dict)  # field -> {source value: value}
    custom_fields: dict[str, str] = field(default_factory=dict)  # source column -> data type name
    pack_unmapped: bool = False
    extra: dict[str, Any] = field(default_factory=dict)  # kind-specific settings (time off: halves, lang)
    # source columns read with each row but sent as no field (time off: half-day markers): key -> column
    carried: dict[str, str] = field(default_factory=dict)
    expected_columns: tuple[str, ...] = ()  # [source] expected_columns: the headers the config was made for
    email_check: str = DEFAULT_EMAIL_CHECK  # [staff] email_check: "warn" | "strict"
    strict_checks: frozenset[str] = frozenset()  # [staff] strict_checks: codes of STRICT_CHECKS held back

    @property
    def source_columns(self) -> list[str]:
        """Every source column this mapping reads."""
        cols = list(self.columns)
        for join_cols, _ in self.joins.values():
            cols.extend(join_cols)
        cols.extend(self.custom_fields)
        cols.extend(self.carried.values())
        return list(dict.fromkeys(cols))

    def field_sources(self) -> dict[str, str]:
        """Field -> how a person would name where its value came from (for messages)."""
        out: dict[str, str] = {}
        for column, name in self.columns.items():
            out.setdefault(name, column)
        for name, (cols, _) in self.joins.items():
            out[name] = " + ".join(cols)
        for name in self.constants:
            out.setdefault(name, f"(config constant {name})")
        for name in self.defaults:
            out.setdefault(name, f"(config default {name})")
        return out


def sensitive_fields() -> tuple[str, ...]:
    """Fields the field specification marks ``sensitive``: masked in reports unless the config says otherwise."""
    return tuple(f.name for f in staff_fields() if f.sensitive)


@dataclass(frozen=True)
class ReportSettings:
    folder: Path = Path("reports")
    job: str = "import"
    mask: tuple[str, ...] = field(default_factory=sensitive_fields)
    html_row_limit: int = DEFAULT_HTML_ROW_LIMIT
    html_problem_limit: int = DEFAULT_HTML_PROBLEM_LIMIT


@dataclass(frozen=True)
class GuardSettings:
    """``[guards]``: the shares (0 to 1) above which the drift guard holds a staff import
    (``hrimport.changes.guards``)."""

    max_headcount_drop: float = 0.10
    max_changed_share: float = 0.30
    max_missing: float = 0.05


@dataclass(frozen=True)
class ImportConfig:
    """A whole import config file."""

    path: Path
    service: ServiceSettings
    source: SourceSettings
    report: ReportSettings
    staff: FieldMapping | None = None
    timeoff: FieldMapping | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    # requests at once: staff batches ([staff] concurrency) or time-off records ([timeoff] concurrency)
    concurrency: int = DEFAULT_TIMEOFF_CONCURRENCY
    state_dir: Path = Path(".hrimport")
    guards: GuardSettings = field(default_factory=GuardSettings)


_TOP_KEYS = {"service", "source", "staff", "timeoff", "report", "state_dir", "guards"}
_MAPPING_KEYS = {"columns", "join", "constants", "defaults", "values"}
_STAFF_KEYS = {"custom_fields", "pack_unmapped", "customer_system_id_type", "batch_size", "concurrency",
               "email_check", "strict_checks"}
# time-off-only keys, interpreted by the time-off stage (hrimport.timeoff)
_TIMEOFF_KEYS = {"lang", "default_country", "half_start", "half_end", "half_day", "total_days", "name",
                 "strict_checks", "export_holds"}


def load_config(path: str | Path) -> ImportConfig:
    """Read and check an import config file."""
    path = Path(path)
    return parse_config(read_toml(path, "config file"), path)


def parse_config(data: dict[str, Any], path: Path) -> ImportConfig:
    """Check a config already parsed from TOML (``path`` is used in messages and for relative paths)."""
    where = path.name
    service_keys = data.get("service", {}) if isinstance(data.get("service"), dict) else {}
    if any(key.lower() in ("token", "auth_token", "access_token") for key in (*service_keys, *data)):
        raise ConfigError(
            f"{where}: never put the token in a file; set token_env to the name of the environment "
            f"variable that holds it (default {DEFAULT_TOKEN_ENV})"
        )
    reject_unknown_keys(data, _TOP_KEYS, where)
    if "staff" not in data and "timeoff" not in data:
        raise ConfigError(f"{where}: needs a [staff] or a [timeoff] section saying how columns map to fields")
    base = path.parent

    service = _table(data, "service", where)
    reject_unknown_keys(service, {"base_url", "customer_id", "token_env", "timeout"}, f"{where} [service]")
    customer_id = service.get("customer_id")
    if isinstance(customer_id, str) and customer_id.strip().upper().startswith("TODO"):
        raise ConfigError(f"{where} [service]: fill in the value still marked TODO: customer_id; the comment "
                          "beside it says what to write")
    if customer_id is not None and not str(customer_id).strip().isdigit():
        raise ConfigError(f"{where} [service] customer_id must be a number, not {customer_id!r}")
    service_settings = ServiceSettings(
        base_url=_opt_str(service, "base_url", where),
        customer_id=str(customer_id).strip() if customer_id is not None else None,
        token_env=_opt_str(service, "token_env", where) or DEFAULT_TOKEN_ENV,
        timeout=_request_timeout(service.get("timeout", DEFAULT_REQUEST_TIMEOUT), where),
    )
    if service_settings.base_url:  # a password written in the file, a query string: refused now, as a token is
        check_base_url(service_settings.base_url, f"{where} [service] base_url", service_settings.token_env)

    source = _table(data, "source", where)
    source_keys = {"sheet", "header_row", "date_order", "encoding", "delimiter", "formula_text", "max_unpacked_mb",
                   "expected_columns", "totals_or_footer_rows"}
    reject_unknown_keys(source, source_keys, f"{where} [source]")
    date_order = source.get("date_order")
    if isinstance(date_order, str) and date_order.strip().upper().startswith("TODO"):
        raise ConfigError(f"{where} [source]: fill in the value still marked TODO: date_order; the comment beside "
                          "it says what to write")
    if date_order not in (None, "day-first", "month-first"):
        raise ConfigError(f'{where} [source] date_order must be "day-first" or "month-first", not {date_order!r}')
    header_row = source.get("header_row")
    # true is an int to Python: it would read row 1, and sheet = true the sheet at position 1
    if header_row is not None and (isinstance(header_row, bool) or not isinstance(header_row, int) or header_row < 1):
        raise ConfigError(f"{where} [source] header_row must be a row number (1 = the first row)")
    sheet = source.get("sheet")
    if sheet is not None and (isinstance(sheet, bool) or not isinstance(sheet, (str, int))):
        raise ConfigError(f"{where} [source] sheet must be a sheet name or a 0-based position")
    formula_text = source.get("formula_text", DEFAULT_FORMULA_TEXT)
    if formula_text not in FORMULA_TEXT_MODES:
        *others, last = (f'"{m}"' for m in FORMULA_TEXT_MODES)
        allowed = f"{', '.join(others)} or {last}"
        raise ConfigError(f"{where} [source] formula_text must be {allowed}, not {formula_text!r}")
    totals_or_footer_rows = source.get("totals_or_footer_rows", DEFAULT_TOTALS_OR_FOOTER_ROWS)
    if totals_or_footer_rows not in TOTALS_OR_FOOTER_MODES:
        raise ConfigError(f'{where} [source] totals_or_footer_rows must be "flag" (such a row needs attention) or '
                          f'"skip" (it is skipped, named in the report), not {totals_or_footer_rows!r}')
    delimiter = _opt_str(source, "delimiter", where)
    if delimiter is not None and (len(delimiter) != 1 or delimiter in '"\r\n'):
        # the CSV reader splits on one character; a quote or a line end cannot separate cells
        raise ConfigError(
            f'{where} [source] delimiter must be one character other than a quote or a line end, e.g. ";" or '
            f'"\\t" for a tab, not {delimiter!r}'
        )
    max_unpacked_mb = source.get("max_unpacked_mb", DEFAULT_MAX_UNPACKED_MB)
    if isinstance(max_unpacked_mb, bool) or not isinstance(max_unpacked_mb, int) or max_unpacked_mb < 1:
        raise ConfigError(f"{where} [source] max_unpacked_mb must be a whole number of megabytes (at least 1)")
    source_settings = SourceSettings(
        sheet=sheet,
        header_row=header_row,
        date_order=date_order,
        encoding=_opt_str(source, "encoding", where),
        delimiter=delimiter,
        formula_text=formula_text,
        totals_or_footer_rows=totals_or_footer_rows,
        max_unpacked_mb=max_unpacked_mb,
        expected_columns=_str_list(source, "expected_columns", f"{where} [source]"),
    )

    report = _table(data, "report", where)
    reject_unknown_keys(report, {"folder", "job", "mask", "html_row_limit", "html_problem_limit"}, f"{where} [report]")
    mask = report.get("mask", list(sensitive_fields()))
    if not isinstance(mask, list) or not all(isinstance(m, str) for m in mask):
        raise ConfigError(f"{where} [report] mask must be a list of field names")
    limits = {key: report.get(key, default) for key, default in (("html_row_limit", DEFAULT_HTML_ROW_LIMIT),
                                                                 ("html_problem_limit", DEFAULT_HTML_PROBLEM_LIMIT))}
    for key, limit in limits.items():
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise ConfigError(f"{where} [report] {key} must be a whole number")
    folder = Path(report["folder"]) if "folder" in report else Path("reports")
    report_settings = ReportSettings(
        folder=folder if folder.is_absolute() or "folder" not in report else base / folder,
        job=str(report.get("job") or path.stem),
        mask=tuple(mask),
        html_row_limit=limits["html_row_limit"],
        html_problem_limit=limits["html_problem_limit"],
    )

    staff = _mapping(data, "staff", staff_fields(), where) if "staff" in data else None
    timeoff = _mapping(data, "timeoff", timeoff_fields(), where) if "timeoff" in data else None
    _check_mask(report_settings.mask, (staff, timeoff), source_settings.expected_columns, where)
    if source_settings.expected_columns:  # the mapper compares them with each file's headers
        expected = source_settings.expected_columns
        staff = replace(staff, expected_columns=expected) if staff else None
        timeoff = replace(timeoff, expected_columns=expected) if timeoff else None
    batch_size = data.get("staff", {}).get("batch_size", DEFAULT_BATCH_SIZE)
    if staff is not None:
        concurrency = data["staff"].get("concurrency", DEFAULT_STAFF_CONCURRENCY)
        if isinstance(concurrency, int) and concurrency > MAX_STAFF_CONCURRENCY:
            raise ConfigError(f"{where}: [staff] concurrency must be at most {MAX_STAFF_CONCURRENCY} (the "
                              f"connections the client keeps open), not {concurrency}")
    else:
        concurrency = data.get("timeoff", {}).get("concurrency", DEFAULT_TIMEOFF_CONCURRENCY)
    for key, value in (("batch_size", batch_size), ("concurrency", concurrency)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{where}: {key} must be a whole number of at least 1")
    state_dir = Path(data.get("state_dir", ".hrimport"))
    guards = _table(data, "guards", where)
    reject_unknown_keys(guards, {f.name for f in dataclasses.fields(GuardSettings)}, f"{where} [guards]")
    shares: dict[str, float] = {}
    for key, value in guards.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ConfigError(f"{where} [guards] {key} must be a share between 0 and 1 (0.1 = 10%), not {value!r}")
        shares[key] = float(value)
    return ImportConfig(
        path=path,
        service=service_settings,
        source=source_settings,
        report=report_settings,
        staff=staff,
        timeoff=timeoff,
        batch_size=batch_size,
        concurrency=concurrency,
        state_dir=state_dir if state_dir.is_absolute() else base / state_dir,
        guards=GuardSettings(**shares),
    )


def _mapping(data: dict[str, Any], kind: str, fields: tuple[Field, ...], where: str) -> FieldMapping:
    table = _table(data, kind, where)
    allowed = _MAPPING_KEYS | (_TIMEOFF_KEYS | {"concurrency"} if kind == "timeoff" else _STAFF_KEYS)
    here = f"{where} [{kind}]"
    reject_unknown_keys(table, allowed, here)
    known = by_name(fields)
    settable = {name for name, f in known.items() if not f.envelope}

    def check_field(name: str, context: str) -> str:
        if name not in settable:
            close = difflib.get_close_matches(name, sorted(settable), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else f"; known fields: {', '.join(sorted(settable))}"
            raise ConfigError(f"{here} {context}: {name!r} is not a {kind} field{hint}")
        return name

    columns = {}
    for column, name in _table(table, "columns", here).items():
        if not isinstance(name, str):
            raise ConfigError(f"{here} columns: {column!r} must map to a field name")
        columns[column] = check_field(name, f"columns.{column!r}")

    joins: dict[str, tuple[tuple[str, ...], str]] = {}
    for name, spec in _table(table, "join", here).items():
        check_field(name, "join")
        if isinstance(spec, list):
            cols, sep = spec, " "
        elif isinstance(spec, dict):  # a misspelt "separator" would join with a space unnoticed
            reject_unknown_keys(spec, {"columns", "separator"}, f"{here} join.{name}")
            cols, sep = spec.get("columns", []), spec.get("separator", " ")
        else:
            cols, sep = [], " "
        if not cols or not all(isinstance(c, str) for c in cols) or not isinstance(sep, str):
            raise ConfigError(f'{here} join.{name}: give a list of columns, e.g. {name} = ["First Name", "Last Name"]')
        joins[name] = (tuple(cols), sep)

    constants = {check_field(k, "constants"): _scalar(v, f"{here} constants.{k}") for k, v in
                 _table(table, "constants", here).items()}
    if "customer_system_id_type" in table:
        constants["customer_system_id_type"] = _scalar(table["customer_system_id_type"], here)
    defaults = {check_field(k, "defaults"): _scalar(v, f"{here} defaults.{k}") for k, v in
                _table(table, "defaults", here).items()}

    values: dict[str, dict[str, str]] = {}
    for name, mapping in _table(table, "values", here).items():
        check_field(name, "values")
        if not isinstance(mapping, dict):
            raise ConfigError(f'{here} values.{name}: give a table, e.g. [{kind}.values.{name}] "M" = "Male"')
        values[name] = {str(k): _scalar(v, f"{here} values.{name}") for k, v in mapping.items()}

    custom = _table(table, "custom_fields", here)
    pack_unmapped = table.get("pack_unmapped", False)
    if not isinstance(pack_unmapped, bool):
        raise ConfigError(f"{here} pack_unmapped must be true or false")

    email_check = table.get("email_check", DEFAULT_EMAIL_CHECK)
    if email_check not in EMAIL_CHECKS:
        choices = " or ".join(f'"{m}"' for m in EMAIL_CHECKS)
        raise ConfigError(f"{here} email_check must be {choices}, not {email_check!r}")
    strict = strict_checks(table.get("strict_checks", []), here, STRICT_CHECKS) if kind == "staff" else frozenset()
    extra = {k: table[k] for k in _TIMEOFF_KEYS if k in table} if kind == "timeoff" else {}
    _reject_todo(here, constants, defaults, values, extra)
    mapped = set(columns.values()) | set(joins) | set(constants) | set(defaults)
    missing = [f.name for f in fields if f.is_required and not f.envelope and f.name not in mapped]
    if kind == "timeoff":
        # the time-off stage fills these itself (lang from the leave type's script, total_days from the
        # calculation endpoint, country from default_country)
        missing = [m for m in missing if m not in {"lang", "total_days"}
                   and not (m == "country" and "default_country" in table)]
    if missing:
        raise ConfigError(
            f"{here}: required field(s) {', '.join(missing)} have no column, join, constant or default; "
            f"map a column to each, e.g. \"Hire Date\" = \"{missing[0]}\" under [{kind}.columns]"
        )
    return FieldMapping(
        fields=fields,
        columns=columns,
        joins=joins,
        constants=constants,
        defaults=defaults,
        values=values,
        custom_fields={str(k): str(v) for k, v in custom.items()},
        pack_unmapped=pack_unmapped,
        extra=extra,
        email_check=email_check,
        strict_checks=strict,
    )


def strict_checks(value: object, here: str, codes: tuple[str, ...]) -> frozenset[str]:
    """``strict_checks`` of ``[staff]`` or ``[timeoff]`` (``here``): a list of ``codes``, the doubts of ours to hold
    a row back for."""
    allowed = ", ".join(f'"{c}"' for c in codes)
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise ConfigError(f"{here} strict_checks must be a list of problem codes, such as [{allowed}]")
    for code in value:
        if code == "not-an-email":
            raise ConfigError(f'{here} strict_checks: not-an-email has its own setting: email_check = "strict"')
        if code not in codes:
            raise ConfigError(f"{here} strict_checks: {code!r} is not a check that can be made strict (one of "
                              f"{allowed})")
    return frozenset(value)


def _check_mask(mask: tuple[str, ...], mappings: tuple[FieldMapping | None, ...], expected: tuple[str, ...],
                where: str) -> None:
    """A ``[report] mask`` name that masks nothing (a field misspelt) would leave the values it was meant to
    hide in full in every report: refused, unless columns not named here are packed as data types."""
    fields = {f.name for f in (*staff_fields(), *timeoff_fields())}
    named = set(fields) | set(expected)
    for mapping in mappings:
        if mapping is None:
            continue
        if mapping.pack_unmapped:  # any header of the file may become a data type of that name
            return
        named.update(mapping.source_columns, mapping.custom_fields.values())
    known = {n.strip().casefold() for n in named}
    for name in mask:
        if name.strip().casefold() not in known:
            close = difflib.get_close_matches(name, sorted(fields), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(f"{where} [report] mask: {name!r} is not a field, nor a column or data type this "
                              f"config names{hint}")


def _reject_todo(here: str, constants: dict[str, str], defaults: dict[str, str],
                 values: dict[str, dict[str, str]], extra: dict[str, Any]) -> None:
    """A config ``hrimport init`` wrote still holds values marked TODO: one line naming each."""
    def todo(value: Any) -> bool:
        return isinstance(value, str) and value.strip().upper().startswith("TODO")

    left = [k if k == "customer_system_id_type" else f"constants.{k}" for k, v in constants.items() if todo(v)]
    left += [f"defaults.{k}" for k, v in defaults.items() if todo(v)]
    left += [k for k, v in extra.items() if todo(v)]
    left += [f"values.{name}.{key!r}" for name, table in values.items() for key, v in table.items() if todo(v)]
    if left:
        raise ConfigError(f"{here}: fill in the value(s) still marked TODO: {', '.join(left)}; "
                          "the comment beside each says what to write")


def _str_list(table: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} {key} must be a list of column headers")
    return tuple(value)


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: {key} must be a table ([{key}])")
    return value


def _request_timeout(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_REQUEST_TIMEOUT:
        raise ConfigError(f"{where} [service] timeout must be the seconds one request may take, a number above 0 "
                          f"and at most {MAX_REQUEST_TIMEOUT:g} (default {DEFAULT_REQUEST_TIMEOUT:g}), not {value!r}")
    return float(value)


def _opt_str(table: dict[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{where}: {key} must be text")
    return value


def _scalar(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise ConfigError(f"{where}: {value!r} must be a text, number or true/false value")
