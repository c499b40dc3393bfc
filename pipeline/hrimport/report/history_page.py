"""``reports/<job>/index.html``: every run of a job at a glance, so HR sees when a month is unlike the others.

One self-contained page like ``report.html`` (inline CSS and SVG, no script, nothing loaded from elsewhere;
autoescape on), rendered from ``templates/history.html.j2``: small bar charts of the rows read (the headcount
of a staff import) and of the rows needing attention per run, oldest to newest with the usual level of the
earlier runs marked, then one line per run, newest first, linking to its report. It shows what
``hrimport.report.history`` reads: counts, verdicts, file names and exit codes, never a row's value.

``update_history(report_folder)`` rewrites the page after a run's report is written, and ``hrimport run``
calls it again after removing old run folders, so the page never links to a report that is gone.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path

import jinja2

from hrimport import __version__
from hrimport.private_files import written_whole
from hrimport.report.history import RunLine, job_folder_of, read_runs
from hrimport.resources import data_dir

__all__ = ["HISTORY_PAGE", "Chart", "render_history", "update_history", "write_history"]

log = logging.getLogger(__name__)

HISTORY_PAGE = "index.html"
TEMPLATE = "history.html.j2"
CHART_RUNS = 24  # runs per chart: two years of monthly runs
CHART_WIDTH, CHART_HEIGHT = 520, 150
_TOP, _BOTTOM, _SIDE = 22, 22, 6  # room above the bars (the newest value), below (dates), at the sides
_MIN_SLOTS = 8  # a job's first runs get bars of a sensible width, not one bar as wide as the chart
_KIND_TITLES = {"staff": "Staff", "timeoff": "Time off", "": "Runs"}


@dataclass(frozen=True)
class ChartBar:
    """One run's bar, in the SVG's coordinates."""

    x: float
    y: float
    width: float
    height: float
    value: int
    when: str  # the run's date and time, for the bar's tooltip
    newest: bool
    dry_run: bool


@dataclass(frozen=True)
class Chart:
    """A bar chart of one figure per run (oldest left, newest right), and the earlier runs' median."""

    title: str
    figure: str  # what a bar counts: "rows read", "rows needing attention"
    tone: str  # CSS class of the bars: "read" or "attention"
    bars: list[ChartBar]
    baseline: float  # y of the bars' foot
    top: int  # the largest value shown, the height of the tallest bar
    usual: float | None  # the median of the runs before the newest (from 2 of them on)
    usual_y: float | None
    first_when: str
    last_when: str


def update_history(report_folder: Path) -> Path | None:
    """Rewrite the history page of the job ``report_folder`` belongs to; returns its path, or None when the
    folder belongs to no job's folder or the page cannot be written (a warning: the run itself is done and
    its report written, so the history is never a reason for it to fail)."""
    job_folder = job_folder_of(report_folder)
    if job_folder is None:
        return None
    try:
        return write_history(job_folder)
    except OSError as exc:
        log.warning("the history page %s could not be written: %s", job_folder / HISTORY_PAGE,
                    exc.strerror or exc)
        return None


def write_history(job_folder: Path) -> Path:
    """Write ``job_folder/index.html`` (mode 0600, whole or not at all: ``written_whole``) from the runs the
    folder holds now."""
    text = render_history(job_folder.name, read_runs(job_folder))
    path = job_folder / HISTORY_PAGE
    with written_whole(path) as fh:
        fh.write(text)
    return path


def render_history(job: str, lines: list[RunLine], *, template_dir: Path | None = None) -> str:
    """The page of ``job``'s runs (``lines`` newest first) as a string."""
    kinds = list(dict.fromkeys(line.kind for line in reversed(lines) if line.rows_read is not None))
    charts = []
    for kind in kinds:
        runs = [line for line in reversed(lines) if line.kind == kind and line.rows_read is not None]
        runs = runs[-CHART_RUNS:]
        title = _KIND_TITLES.get(kind, kind)
        charts.append(_chart(f"{title}: rows read", "rows read", "read", runs, lambda r: r.rows_read))
        charts.append(_chart(f"{title}: rows needing attention", "rows needing attention", "attention", runs,
                             lambda r: r.need_attention))
    return (
        _environment(str(template_dir or data_dir("templates")))
        .get_template(TEMPLATE)
        .render(job=job, lines=lines, charts=charts, chart_width=CHART_WIDTH, chart_height=CHART_HEIGHT,
                kind_titles=_KIND_TITLES, tool_version=__version__,
                written_at=datetime.now().astimezone().isoformat(timespec="seconds"))
    )


def _chart(
    title: str, figure: str, tone: str, runs: list[RunLine], value_of: Callable[[RunLine], int | None]
) -> Chart:
    values = [value_of(r) or 0 for r in runs]
    top = max(values, default=0)
    baseline = CHART_HEIGHT - _BOTTOM
    scale = (baseline - _TOP) / top if top else 0.0
    slot = (CHART_WIDTH - 2 * _SIDE) / max(len(runs), _MIN_SLOTS)
    left = CHART_WIDTH - _SIDE - slot * len(runs)  # newest at the right edge, where the eye looks for "now"
    bars = []
    for i, (run, value) in enumerate(zip(runs, values)):
        height = max(value * scale, 1.0)  # a zero is a hairline on the baseline: "none", not "missing"
        bars.append(ChartBar(x=round(left + i * slot + slot * 0.15, 1), y=round(baseline - height, 1),
                             width=round(slot * 0.7, 1), height=round(height, 1), value=value,
                             when=_when(run.started_at), newest=i == len(runs) - 1, dry_run=run.dry_run))
    earlier = values[:-1]
    usual = statistics.median(earlier) if len(earlier) >= 2 else None
    return Chart(
        title=title, figure=figure, tone=tone, bars=bars, baseline=baseline, top=top, usual=usual,
        usual_y=round(baseline - usual * scale, 1) if usual is not None else None,
        first_when=_when(runs[0].started_at)[:10], last_when=_when(runs[-1].started_at)[:10],
    )


def _when(started_at: str) -> str:
    """``2024-05-01T09:00:00+02:00`` -> ``2024-05-01 09:00``: the time the run started, where it ran."""
    try:
        return datetime.fromisoformat(started_at).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return started_at


@cache
def _environment(folder: str) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        autoescape=True,  # file names and verdicts are data, like every value on report.html
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["thousands"] = lambda n: "–" if n is None else f"{n:,}"
    env.filters["when"] = _when
    env.filters["number"] = lambda x: f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"
    return env
