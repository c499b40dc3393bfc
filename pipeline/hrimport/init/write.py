"""The commented TOML config ``hrimport init`` writes from a ``ConfigPlan``.

Written for a person to read and finish: each mapped column says how it was recognised, every value the
user must supply is ``"TODO..."`` with a comment saying what to write (``load_config`` refuses a config that
still holds one, naming each), custom fields are commented out so the user chooses which company data to
send, and the columns left out are listed with their reasons. ``[source] expected_columns`` records the
headers the config was written for.
"""

from __future__ import annotations

from collections.abc import Iterable

from hrimport.init.plan import ColumnPlan, ConfigPlan
from hrimport.listing import SHOWN, one_line, quoted, shorten, some
from hrimport.outcomes import SourceInfo
from hrimport.reader.other_sheets import sheet_names

#: What a column the workbook hides says in the config and the preview: sent, it is data nobody looked at.
HIDDEN_NOTE = "a hidden column of the workbook: unhide it in Excel and look at it before sending it"
_COMMENT_AT = 44  # column where end-of-line comments start, so the file reads as a table


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string (quotes, backslashes and control characters escaped)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _line(text: str, comment: str = "") -> str:
    if not comment:
        return text
    return f"{text.ljust(_COMMENT_AT - 1)} # {comment}"


def _array(items: Iterable[str]) -> str:
    return "[" + ", ".join(toml_string(i) for i in items) + "]"


def rows_named(rows: list[int]) -> str:
    """'row 9', 'rows 9 and 10', 'rows 9, 10, 12 and 13', 'rows 4, 6, 7, 9, 12 and 20 more'."""
    if len(rows) == 1:
        return f"row {rows[0]}"
    if len(rows) <= SHOWN:
        return f"rows {', '.join(map(str, rows[:-1]))} and {rows[-1]}"
    return f"rows {some([str(row) for row in rows[:SHOWN]], len(rows))}"


def _quoted_cell(cell: str) -> str:
    return f"'{shorten(cell, 40)}'"  # a footer may be a paragraph


def summary_rows_setting(plan: ConfigPlan, file_name: str) -> list[str]:
    """``totals_or_footer_rows = "skip"``, under comment lines naming the totals rows and footer lines init saw.

    Written as a setting, not commented out: the export init read has such rows, and an HR system that writes
    them writes them every month, where each would need attention and make every run exit 1 for a row that is
    no person. The rows are named here, for the person finishing the config to check they are none of their
    people; every report names each row skipped."""
    cells = list(dict.fromkeys(one_line(" ".join(c.split()), None) for c in plan.summary_cells if c.strip()))
    lines = [f"# {file_name} has totals rows or footer lines under its people ({rows_named(plan.summary_rows)}):"]
    if cells:
        lines.append(f"#   {quoted(cells, shown=4, quote=_quoted_cell)}")
    lines += ["# no people: they are skipped, each named in the report. \"flag\" (the default) holds such a row",
              "# back instead (it needs attention: exit 1). Check that none of them is a person.",
              'totals_or_footer_rows = "skip"']
    return lines


def same_table_setting(info: SourceInfo) -> list[str]:
    """The comment above ``sheet`` when other visible sheets of the workbook hold the table of the sheet init
    read: the config names its sheet (an import of the workbook without one is refused), one config a sheet."""
    if not info.same_table_sheets:
        return []
    others = sheet_names(info.same_table_sheets)
    verb = "holds" if len(info.same_table_sheets) == 1 else "hold"
    sheets = "sheet" if len(info.same_table_sheets) == 1 else "sheets"
    return [f"# {sheets} {others} of {info.name} {verb} the same table as '{info.sheet}': this config imports",
            f"# '{info.sheet}' alone. One config per sheet: copy this one and change sheet."]


def write_config_text(plan: ConfigPlan, info: SourceInfo, *, sheet: str | None, job: str,
                      encoding: str | None = None) -> str:
    """The config file's text."""
    kind = plan.kind
    command = "staff" if kind == "staff" else "timeoff"
    by_role: dict[str, list[ColumnPlan]] = {}
    for c in plan.columns:
        by_role.setdefault(c.role, []).append(c)
    mapped = len(by_role.get("field", [])) + len(by_role.get("name part", [])) + len(by_role.get("setting", []))
    out = [
        f"# {'Staff' if kind == 'staff' else 'Time-off'} import config written by `hrimport init` from {info.name}.",
        f"# {mapped} of {len(plan.columns)} columns mapped. Fill in every value marked TODO (the comment beside",
        "# it says what to write), then check the whole file without sending anything:",
        f"#   hrimport {command} validate THIS_CONFIG.toml {info.name}",
        "",
        "[service]",
        _line('customer_id = "TODO"', "your company's number on the platform (99 on the sandbox)"),
        _line('token_env = "HRIMPORT_TOKEN"', "the NAME of the variable holding the token, never the token"),
        "",
        "[source]",
    ]
    out += same_table_setting(info)
    if sheet is not None:
        out.append(_line(f"sheet = {toml_string(sheet)}", "the sheet init read"))
    elif info.sheet:
        out.append(_line(f"# sheet = {toml_string(info.sheet)}", "the first visible sheet, read by default"))
    if info.header_rows > 1:
        out.append(f"# the {info.header_place} is read as one header, its columns named as below: found on "
                   "its own every time")
    elif info.header_row > 1:
        out.append(f"# the header is row {info.header_row}, below titles: found on its own every time")
    if encoding is not None:  # init --encoding: the file could not say it, so every month's import is told
        out.append(_line(f"encoding = {toml_string(encoding)}", "the export's encoding, as given to init"))
    elif info.encoding and info.format in ("csv", "tsv"):
        out.append(_line(f"# encoding = {toml_string(info.encoding)}", "detected; set it if a month's file is "
                                                                        "refused as uncertain"))
    if plan.date_order:
        out.append(_line(f"date_order = {toml_string(plan.date_order)}", f"proven by the values: {plan.date_note}"))
    elif plan.date_unknown:
        out.append(_line('date_order = "TODO: day-first | month-first"', plan.date_note))
    elif any(c.note.startswith("dates") for c in plan.columns):
        out.append(_line('# date_order = "day-first"', "no date depends on the order yet; a file with dates such "
                                                       "as 01/02/2020 needs it: how your HR system writes dates"))
    # the strict setting, where a company wants it (principle 2: by default such a value is sent, with a warning)
    out.append(_line('# formula_text = "reject"', "hold back a row with text like =Manager (default: sent as "
                                                  "written, with a warning)"))
    if plan.summary_rows:
        out += summary_rows_setting(plan, info.name)
    out.append("expected_columns = [                    # the headers this config was written for")
    out += [f"    {toml_string(h)}," for h in info.headers]
    out.append("]")
    out += ["", "[report]", f"job = {toml_string(job)}", ""]

    out.append(f"[{kind}]")
    settings = dict(plan.settings)
    if kind == "staff":
        value, comment = plan.constants.get("customer_system_id_type", ("TODO", ""))
        out.append(_line(f"customer_system_id_type = {toml_string(value)}", comment))
        out.append(_line('# email_check = "strict"', "hold back a row whose e-mail is not like name@example.com "
                                                    "(default: sent, with a warning)"))
        out.append(_line('# strict_checks = ["country-change-incomplete"]',
                         "hold back a row with only one of old_country and its date where the file shows no "
                         "move (default: sent, with a warning)"))
    for key, (value, comment) in settings.items():
        by_setting = {c.target: c for c in by_role.get("setting", [])}
        if key in by_setting:
            comment = by_setting[key].how or ""
        out.append(_line(f"{key} = {toml_string(value)}", comment))
    if kind == "timeoff":
        out.append(_line('# export_holds = "all"', 'what each export lists: "all" (default), every leave of the period '
                                                   'it covers, so leave imported before and missing is told; '
                                                   '"changes", only leave changed since the last one'))
    out += ["", f"[{kind}.columns]"]
    for c in by_role.get("field", []):
        comment = ", ".join(x for x in (c.how, c.note, HIDDEN_NOTE if c.hidden else "") if x)
        out.append(_line(f"{toml_string(c.column)} = {toml_string(c.target or '')}", comment))
    for name in plan.missing:
        out.append(_line(f'# "?" = {toml_string(name)}', f"TODO: no column was recognised as {name}; name the "
                                                          "column that holds it and uncomment"))
    if plan.joins:
        out += ["", f"[{kind}.join]"]
        for name, (cols, separator) in plan.joins.items():
            if separator == " ":
                out.append(_line(f"{name} = {_array(cols)}", "joined with a space, in this order"))
            else:
                spec = f"{{ columns = {_array(cols)}, separator = {toml_string(separator)} }}"
                out.append(_line(f"{name} = {spec}", "joined in this order"))
    constants = {k: v for k, v in plan.constants.items() if k != "customer_system_id_type"}
    if constants:
        out += ["", f"[{kind}.constants]"]
        for name, (value, comment) in constants.items():
            out.append(_line(f"{name} = {toml_string(value)}", comment))
    for name, table in plan.values.items():
        out += ["", f"[{kind}.values.{name}]" + " " * 4 + "# values in the file the import does not understand"]
        out += [f"{toml_string(k)} = {toml_string(v)}" for k, v in table.items()]
    custom = by_role.get("custom field", [])
    if custom:
        out += ["", f"[{kind}.custom_fields]",
                "# Columns no field means. Uncomment those to send as company data (customer_data_type); the",
                "# name on the right must be a data type configured for your company on the platform."]
        out += [_line(f"# {toml_string(c.column)} = {toml_string(c.target or c.column)}",
                      HIDDEN_NOTE if c.hidden else "") for c in custom]
    left = by_role.get("left out", [])
    if left:
        out += ["", "# Columns left out:"]
        out += [f"#   {toml_string(c.column)}: {c.note}" for c in left]
    return "\n".join(out) + "\n"
