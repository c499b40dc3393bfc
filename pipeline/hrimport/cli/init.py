"""``hrimport init``: write an import config from an export, and preview what it maps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hrimport.listing import columns_taken, one_line, padded, quoted

if TYPE_CHECKING:
    from hrimport.init import InitResult
    from hrimport.init.synonyms import Kind


@click.command("init")
@click.argument("file", type=click.Path(path_type=Path))  # the reader refuses a folder in one line
@click.option("--kind", type=click.Choice(["staff", "timeoff"]), default=None,
              help="What the export holds (default: time off when its headers name a leave type and dates).")
@click.option("--sheet", default=None, help="The workbook sheet to read (default: the first visible one).")
@click.option("--encoding", default=None,
              help="The encoding a CSV/TSV export was saved in (such as cp1252), when it cannot be told from the "
                   "file; written into the config.")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Where to write the config (default: beside FILE, named like it, .toml).")
@click.option("--json", "as_json", is_flag=True, help="Print the preview as JSON.")
@click.option("--force", is_flag=True, help="Replace the config if it already exists.")
def init(file: Path, kind: str | None, sheet: str | None, encoding: str | None, output: Path | None, as_json: bool,
         force: bool) -> None:
    """Write a commented import config for FILE, matching its columns to the platform's fields.

    Headers are matched with the synonym packs in schemas/synonyms/ (English, Chinese, Japanese, Korean,
    Malay/Indonesian, German, French, Spanish, Portuguese, Vietnamese, Thai) and checked against the
    values. Prints each column, its field, how sure (exact synonym, token match, values only) and three
    values as they would be sent. Fill in the lines marked TODO, then run validate. Exit 2 for a file
    that cannot be read or a config that exists (without --force).

    Example:

        hrimport init staff_2026-11.csv -o staff.toml
        hrimport staff validate staff.toml staff_2026-11.csv
    """
    from hrimport.init import init_config  # the reader and pandas

    chosen: Kind | None = "staff" if kind == "staff" else "timeoff" if kind == "timeoff" else None
    result = init_config(file, kind=chosen, sheet=sheet, encoding=encoding, output=output, force=force)
    if as_json:
        click.echo(json.dumps(result.as_json(), ensure_ascii=False, indent=2))
    else:
        click.echo(preview(result))


def preview(result: InitResult) -> str:
    """The table a person reads: column, field, how sure, three values as sent."""
    from hrimport.init.write import rows_named  # the reader and pandas, loaded by init_config already

    rows = [("Column", "Field", "How sure", "Examples (as sent)")]
    for c in result.plan.columns:
        if c.role == "field":
            target = c.target or ""
        elif c.role == "name part":
            target = f"name ({c.note})"
        elif c.role == "setting":
            target = f"[{result.plan.kind}] {c.target}"
        elif c.role == "custom field":
            target = "custom field? (commented out)"
        else:
            target = "-"
        how = c.how or ("" if c.role == "custom field" else c.note)
        if c.hidden:
            how = f"{how}, hidden column" if how else "hidden column"
        # a cell's line break (an address, a header wrapped in Excel) shown as \n: one column's line stays one line
        rows.append((one_line(c.column, None), target, how, " | ".join(one_line(e, None) for e in c.examples)))
    # widths in terminal columns: a Chinese header (员工编号) takes two a character
    widths = [min(max(columns_taken(r[i]) for r in rows), 32) for i in range(3)]
    lines = ["  ".join(padded(cell, widths[i]) if i < 3 else cell for i, cell in enumerate(row)).rstrip()
             for row in rows]
    info = result.source
    read = f"Read {info.name}" + (f", sheet '{info.sheet}'" if info.sheet else "") + f", {info.header_told}"
    totals, hidden_rows = result.plan.summary_rows, result.plan.hidden_rows
    numbers = rows_named(totals) if totals else ""
    held = [f"{len(totals)} of them totals rows or footer lines, never sent: {numbers}"] if totals else []
    if hidden_rows:
        held.append(f"{len(hidden_rows)} {'' if totals else 'of them '}hidden in the workbook: {rows_named(hidden_rows)}")
    told = f" ({'; '.join(held)})" if held else ""
    out = [read + f": a {result.plan.kind} export of {info.rows_read} rows{told}.", "", *lines, ""]
    if hidden_rows:  # rows nobody saw on screen are sent: said before the columns
        out[1:1] = [hidden_rows_told(result)]
    if info.same_table_sheets:  # the sheet is written into the config: say so before the columns
        out[1:1] = [same_table_told(result)]
    if info.header_note:  # the columns below were named by a header nobody sees
        out[1:1] = [info.header_note]
    if result.plan.todos:
        out.append("To fill in (marked TODO): " + "; ".join(result.plan.todos))
    if result.plan.missing:
        out.append("No column found for: " + ", ".join(result.plan.missing) + " (name them under [columns])")
    hidden = [c.column for c in result.plan.columns if c.hidden]
    if hidden:
        out.append(f"Hidden columns of the workbook: {quoted(hidden)}: columns you may never have seen in Excel; "
                   "unhide them and look at them before sending any (a custom field stays commented out until you "
                   "uncomment it).")
    if totals:
        out.append(f'Totals rows and footer lines: [source] totals_or_footer_rows = "skip" is written, so that {numbers} '
                   "and their like each month are skipped (named in the report) rather than needing attention; "
                   "check that none of them is a person.")
    command = "staff" if result.plan.kind == "staff" else "timeoff"
    out.append(f"Wrote {result.output}. Next: hrimport {command} validate {result.output} {info.path}")
    return "\n".join(out)


def hidden_rows_told(result: InitResult) -> str:
    """The line saying which rows of the table the workbook hides, and what the import does with them."""
    from hrimport.init.write import rows_named  # the reader and pandas, loaded by init_config already

    hidden = result.plan.hidden_rows
    them, those = ("it", "it if it is") if len(hidden) == 1 else ("them", "those")
    return (f"Hidden rows of the workbook (by a filter or Hide): {rows_named(hidden)}. The import sends {them} all the "
            f"same, with a hidden-row warning, though nobody sees {them} in Excel: unhide {them} and check {them}, or "
            f'delete {those} not to be imported (strict_checks = ["hidden-row"] in [{result.plan.kind}] holds {them} '
            "back).")


def same_table_told(result: InitResult) -> str:
    """The line saying that other sheets of the workbook hold the table init read, and what the config does."""
    from hrimport.reader.other_sheets import sheet_names  # the reader and pandas

    info = result.source
    others = info.same_table_sheets
    verb = "holds" if len(others) == 1 else "hold"
    return (f"Sheet{'s' if len(others) > 1 else ''} {sheet_names(others)} of {info.name} {verb} the same table as "
            f"'{info.sheet}': the config reads '{info.sheet}' alone (sheet = \"{info.sheet}\" in [source]); one "
            "config per sheet imports each: copy it and change sheet.")
