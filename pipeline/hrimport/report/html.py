"""``report.html``: one self-contained page, rendered with jinja2 from ``templates/report.html.j2``.

Issue 4: inline CSS and SVG only (no fonts, scripts or CDNs from elsewhere), so the page opens offline and as
an e-mail attachment; autoescape on, so every spreadsheet value is text; readable with scripts off. The full
row list stops at ``RunInfo.html_row_limit`` rows to keep the page light; rows needing attention are always
all listed.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import jinja2
from markupsafe import Markup

from hrimport.outcomes import Outcome, RowOutcome, RunResult
from hrimport.private_files import open_private
from hrimport.report.explain import explain
from hrimport.report.provenance import provenance_view
from hrimport.report.view import (
    OUTCOME_COLOURS,
    RowMasking,
    detail_keys,
    detail_label,
    fix_file_rows,
    plan_view,
    problem_groups,
    run_facts,
    sandbox_notice,
    warning_groups,
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


@dataclass
class RowLine:
    """One row of the full row list, already masked."""

    row: int
    external_id: str
    name: str
    outcome: Outcome
    problems: list[tuple[str, str]]  # (code, plain title), the title shown first
    message: str
    details: list[str]


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


def _bars(result: RunResult) -> list[Bar]:
    counts = result.counts()
    total = max(len(result.rows), 1)
    biggest = max(counts.values(), default=0) or 1
    bars = []
    for value, count in counts.items():
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


def _row_lines(rows: list[RowOutcome], masking: RowMasking, keys: list[str]) -> list[RowLine]:
    return [
        RowLine(
            r.row,
            r.external_id,
            r.name,
            r.outcome,
            [(code, explain(code).title) for code in r.problem_codes],
            masking.message(r),
            masking.details(r, keys),
        )
        for r in rows
    ]


def _row_cells(result: RunResult, linked: set[int]) -> dict[int, Markup]:
    """The "Row" cell of each row with a problem or warning: its number in the file, a link to its line in
    "All rows" when listed there, and its row in ``to_fix`` when it is in that file.

    Made here once per row, not in the template: a run can list 100,000 problem lines, and this cell is the
    template's costliest per line. Only integers go in, so nothing needs escaping.
    """
    fix_rows = fix_file_rows(result)
    cells: dict[int, Markup] = {}
    for row in (r.row for r in result.rows if r.problems or not r.outcome.is_success):
        number = f'<a class="row-link" href="#row-{row}">{row}</a>' if row in linked else str(row)
        in_fix = f'<span class="fix-row">to_fix row {fix_rows[row]}</span>' if row in fix_rows else ""
        cells[row] = Markup(number + in_fix)
    return cells


def render_html(
    result: RunResult,
    *,
    masking: RowMasking | None = None,
    fix_file_name: str = "to_fix.xlsx",
    fix_csv_name: str | None = None,
    template_dir: Path | None = None,
) -> str:
    """Render the report page of ``result`` as a string; ``fix_csv_name``: the CSV copy of to_fix, if any."""
    masking = masking or RowMasking(result)
    info = result.info
    limit = max(info.html_row_limit, 0)
    shown = result.rows[:limit]
    keys = detail_keys(result.rows)
    imported = result.imported
    folder = str(template_dir or data_dir("templates"))
    script, script_hash = _script(folder)
    facts = run_facts(info)
    bars = _bars(result)
    linked = {r.row for r in shown}  # a problem links to its line in "All rows" when that line is there
    return (
        _environment(folder)
        .get_template(TEMPLATE)
        .render(
            result=result,
            info=info,
            verdict=result.verdict(),
            total=len(result.rows),
            imported=imported,
            attention=len(result.rows) - imported,
            bars=bars,
            chart_width=_CHART_WIDTH,
            facts=facts,
            facts_by_label=dict(facts),
            sandbox_notice=sandbox_notice(info.service_url),
            groups=problem_groups(result, masking),
            warnings=warning_groups(result, masking),
            rows=_row_lines(shown, masking, keys),
            hidden_rows=len(result.rows) - len(shown),
            linked_rows=linked,
            detail_headers=[detail_label(k) for k in keys],
            fix_file_name=fix_file_name,
            fix_csv_name=fix_csv_name,
            row_cells=_row_cells(result, linked),
            plan=plan_view(info.plan),
            script=Markup(script),  # our own file, not data: must not be escaped inside <script>
            script_hash=script_hash,
            colours={o.value: c for o, c in OUTCOME_COLOURS.items()},
            provenance=provenance_view(result, masking),
        )
    )


def write_html(
    result: RunResult,
    path: Path,
    *,
    masking: RowMasking | None = None,
    fix_file_name: str = "to_fix.xlsx",
    fix_csv_name: str | None = None,
) -> Path:
    """Write ``report.html`` (mode 0600) and return its path."""
    text = render_html(result, masking=masking, fix_file_name=fix_file_name, fix_csv_name=fix_csv_name)
    with open_private(path, "w") as fh:
        fh.write(text)
    return path
