"""``report.html``: one self-contained page, rendered with jinja2 from ``templates/report.html.j2``.

Issue 4: inline CSS and SVG only (no fonts, scripts or CDNs from elsewhere), so the page opens offline and as
an e-mail attachment; autoescape on, so every spreadsheet value is text; readable with scripts off. The full
row list stops at ``RunInfo.html_row_limit`` rows to keep the page light, and each problem's (and warning's)
list at ``RunInfo.html_problem_limit`` rows, the page saying how many more and where they are. The lines of those two long tables are made here, escaped as the template would, and the page is
written as the template makes it, never held whole.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from hrimport.outcomes import Outcome, RowOutcome, RunResult
from hrimport.private_files import written_whole
from hrimport.report.digest import RowsDigest, digest_rows
from hrimport.report.explain import explain
from hrimport.report.provenance import provenance_view
from hrimport.report.view import (
    OUTCOME_COLOURS,
    ProblemGrouping,
    ProblemLine,
    RowMasking,
    detail_label,
    fix_file_rows,
    format_time,
    gone_view,
    plan_view,
    run_facts,
    sandbox_notice,
)
from hrimport.resources import data_dir

TEMPLATE = "report.html.j2"
SCRIPT = "report.js"  # the page's one inline script, allowed by its hash in the page's CSP
_CHART_WIDTH = 220  # px of the longest bar in the counts chart: narrow, so its words stay readable on a phone


@dataclass
class Bar:
    """One outcome's line in the counts chart."""

    outcome: Outcome
    label: str
    count: int
    share: float  # of all rows, 0..1
    width: float  # px
    colour: str
    text_colour: str


def _css_string(text: str) -> Markup:
    """``text`` as a quoted CSS string for the page's ``<style>``: every character but ASCII letters, digits
    and spaces escaped (``\\3c ``), so a column name can neither end the string nor the style element."""
    escaped = "".join(c if (c.isascii() and c.isalnum()) or c == " " else f"\\{ord(c):x} " for c in text)
    return Markup(f'"{escaped}"')


@cache
def _environment(folder: str) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        autoescape=True,  # always, whatever the file name: spreadsheet values are data (issue 4, Safety)
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["thousands"] = lambda n: f"{n:,}"
    env.filters["css_string"] = _css_string
    return env


@cache
def _script(folder: str) -> tuple[str, str]:
    """The inline script's text and its CSP source (``'sha256-...'``): only this script may run."""
    text = (Path(folder) / SCRIPT).read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return text, f"sha256-{digest}"


def _bars(digest: RowsDigest) -> list[Bar]:
    total = max(digest.total, 1)
    biggest = max(digest.counts.values(), default=0) or 1
    bars = []
    for value, count in digest.counts.items():
        if not count:
            continue
        outcome = Outcome(value)
        bg, fg = OUTCOME_COLOURS[outcome]
        bars.append(
            Bar(
                outcome, outcome.label, count, count / total, max(2.0, _CHART_WIDTH * count / biggest), fg, bg
            )
        )
    return bars


# The page's two long tables, "All rows" (up to html_row_limit lines) and the problem lines of each group
# (up to html_problem_limit rows each, of 100,000 in a bad month), are made here rather than in the template: jinja2
# spends about 0.1 ms on a line of ten cells, escaping each through its own call, which made the page 1 s of a
# 100,000-row run. Values are escaped as the template's autoescape does (markupsafe); numbers, outcomes and
# problem codes are ours.

_PILLS = {o: f'<span class="pill o-{escape(o.value)}">{escape(o.label)}</span>' for o in Outcome}
_ESCAPED = re.compile(r"[&<>'\"]")  # the characters markupsafe.escape replaces


def _text(value: str) -> str:
    """``value`` escaped as the template's autoescape does (``markupsafe.escape``), without the cost of its call
    for the many values that have nothing to escape."""
    return escape(value) if _ESCAPED.search(value) else value


def _row_line(row: RowOutcome, masking: RowMasking, keys: list[str], read_as: list[tuple[str, str, str]] | None
              ) -> str:
    """The ``<tr>`` of ``row`` in "All rows", its problems' plain titles first, then its values that changed."""
    titles = "".join(
        f'<span><a href="#code-{_text(code)}">{_text(explain(code).title)}</a> <code class="code">{_text(code)}'
        "</code></span>"
        for code in row.problem_codes
    )
    changed = ""
    if read_as:
        changed = '<ul class="read-as" aria-label="Values changed on their way">' + "".join(
            f'<li>{_text(column)}: <span class="value">{_text(read)}</span> → <span class="value">{_text(sent)}'
            "</span></li>"
            for column, read, sent in read_as
        ) + "</ul>"
    details = "".join(f'<td class="detail">{_text(d)}</td>' for d in masking.details(row, keys))
    return (
        f'      <tr data-outcome="{_text(row.outcome.value)}" id="row-{row.row}"><td class="num">{row.row}</td>'
        f'<td class="id">{_text(row.external_id)}</td><td class="name">{_text(row.name)}</td>'
        f'<td>{_PILLS[row.outcome]}</td><td class="problem-titles">{titles}</td>'
        f'<td class="msg">{_text(masking.message(row))}{changed}</td>{details}</tr>'
    )


def _problem_lines(lines: list[ProblemLine], row_class: str, row_cells: dict[int, Markup]) -> Iterator[Markup]:
    """The ``<tr>`` of each problem line of a group (the template's ``problem_table``), made as it is written."""
    row_class = _text(row_class)
    for p in lines:
        yield Markup(
            f'        <tr class="{row_class}" data-row="{p.row}"><td class="num">{row_cells[p.row]}</td>'
            f'<td class="id">{_text(p.external_id)}</td><td class="name">{_text(p.name)}</td>\n'
            f'          <td>{_PILLS[p.outcome]}</td><td class="col">{_text(p.column)}</td>'
            f'<td class="value">{_text(p.value)}</td><td class="msg">{_text(p.message)}</td></tr>'
        )


def _row_cells(rows: set[int], linked: set[int], fix_rows: dict[int, int]) -> dict[int, Markup]:
    """The "Row" cell of each row a problem or warning line names: its number in the file, a link to its line
    in "All rows" when listed there, and its row in ``to_fix`` when it is in that file."""
    cells: dict[int, Markup] = {}
    for row in rows:
        number = f'<a class="row-link" href="#row-{row}">{row}</a>' if row in linked else str(row)
        in_fix = f'<span class="fix-row">to_fix row {fix_rows[row]}</span>' if row in fix_rows else ""
        cells[row] = Markup(number + in_fix)
    return cells


def render_html(
    result: RunResult,
    *,
    masking: RowMasking | None = None,
    digest: RowsDigest | None = None,
    fix_file_name: str = "to_fix.xlsx",
    fix_csv_name: str | None = None,
    template_dir: Path | None = None,
) -> str:
    """Render the report page of ``result`` as a string; ``fix_csv_name``: the CSV copy of to_fix, if any."""
    return "".join(page_parts(result, masking=masking, digest=digest, fix_file_name=fix_file_name,
                              fix_csv_name=fix_csv_name, template_dir=template_dir))


def page_parts(
    result: RunResult,
    *,
    masking: RowMasking | None = None,
    digest: RowsDigest | None = None,
    fix_file_name: str = "to_fix.xlsx",
    fix_csv_name: str | None = None,
    template_dir: Path | None = None,
) -> Iterator[str]:
    """The report page of ``result``, part after part as the template makes them (``render_html`` joined), so a
    page of 100,000 problem lines need not be held whole.

    One walk of the rows: the first ``html_row_limit`` are kept for "All rows", and every row's problems and
    warnings are grouped (each group's first ``html_problem_limit`` rows listed, the others counted); nothing
    else is done for the rows after the limits.
    """
    digest = digest or digest_rows(result)
    masking = masking or RowMasking(result, digest)
    info = result.info
    limit = max(info.html_row_limit, 0)
    shown: list[RowOutcome] = []
    grouping = ProblemGrouping(masking, max(info.html_problem_limit, 0))
    for row in result.rows:
        if len(shown) < limit:
            shown.append(row)
        if row.problems or row.outcome.needs_attention:
            grouping.add(row)
    groups, warnings = grouping.problems, grouping.warnings
    keys = digest.detail_keys
    folder = str(template_dir or data_dir("templates"))
    script, script_hash = _script(folder)
    facts = run_facts(info)
    bars = _bars(digest)
    linked = {r.row for r in shown}  # a problem links to its line in "All rows" when that line is there
    named = {line.row for g in (*groups, *warnings) for line in g.lines}
    row_cells = _row_cells(named, linked, fix_file_rows(result, digest))
    provenance = provenance_view(result, masking, shown)
    row_lines = (Markup(_row_line(r, masking, keys, provenance.rows.get(r.row))) for r in shown)
    return (
        _environment(folder)
        .get_template(TEMPLATE)
        .generate(
            result=result,
            info=info,
            verdict=digest.verdict,
            total=digest.total,
            imported=digest.imported,
            attention=digest.attention,
            skipped=digest.skipped,
            bars=bars,
            chart_width=_CHART_WIDTH,
            facts=facts,
            facts_by_label=dict(facts),
            sandbox_notice=sandbox_notice(info.service_url),
            groups=groups,
            warnings=warnings,
            listed=len(shown),
            row_lines=row_lines,  # made as the template writes them
            hidden_rows=digest.total - len(shown),
            linked_rows=linked,
            detail_headers=[detail_label(k) for k in keys],
            fix_file_name=fix_file_name,
            fix_csv_name=fix_csv_name,
            problem_lines=partial(_problem_lines, row_cells=row_cells),
            plan=plan_view(info.plan, dry_run=info.dry_run),
            gone=gone_view(result),
            format_time=format_time,
            script=Markup(script),  # our own file, not data: must not be escaped inside <script>
            script_hash=script_hash,
            colours={o.value: c for o, c in OUTCOME_COLOURS.items()},
            provenance=provenance,
        )
    )


def write_html(
    result: RunResult,
    path: Path,
    *,
    masking: RowMasking | None = None,
    digest: RowsDigest | None = None,
    fix_file_name: str = "to_fix.xlsx",
    fix_csv_name: str | None = None,
) -> Path:
    """Write ``report.html`` (mode 0600, whole or not at all: ``written_whole``) and return its path."""
    parts = page_parts(result, masking=masking, digest=digest, fix_file_name=fix_file_name,
                       fix_csv_name=fix_csv_name)
    with written_whole(path) as fh:
        fh.writelines(parts)
    return path
