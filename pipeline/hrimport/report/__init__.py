"""The reporter stage: render a run's ``RunResult`` as files HR staff read, forward and act on (issue 4).

``write_report(result, folder)`` writes ``report.html``, ``report.xlsx``, ``to_fix.xlsx`` (and ``to_fix.csv``
for a CSV source), ``summary.json`` and ``outcomes.jsonl``; ``default_report_folder`` names the folder of a
run. One module per file kind (``html``, ``excel``, ``fix_file``, ``summary``; ``fix_workbook`` makes
``to_fix.xlsx`` from the source workbook, ``fix_marks`` says what it marks), with ``explain`` (problem codes
in plain words), ``view`` (shared display shaping), ``cells`` (masking), ``digest`` (what every file needs of
all the rows, in one walk of them) and ``streamed_sheet`` (the xlsx sheets with a line per row, fast). A job's folder also holds
``index.html``, every run at a glance: ``history`` reads the run folders, ``history_page`` writes the page.
Private files and folder names are ``hrimport.private_files``; the to_fix round trip's contract is
``hrimport.to_fix_format``.

The writers' names load on first use: a command that only prints a run (``staff validate``) or never writes
a report (``leave-days``) does not import jinja2 and xlsxwriter.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# explain and view are light, and loaded here also because ``explain`` is both a module and a function: the
# function bound now is what ``from hrimport.report import explain`` gives, whatever is imported later
from hrimport.report.explain import Explanation, explain
from hrimport.report.view import reading_summary

if TYPE_CHECKING:
    from hrimport.report.history import OUTCOMES_FILE
    from hrimport.report.writer import ReportFiles, default_report_folder, write_report

#: The names loaded on first use: the writer's, and the outcomes file's name, which the history names.
_LAZY = frozenset({"OUTCOMES_FILE", "ReportFiles", "default_report_folder", "write_report"})

__all__ = [
    "OUTCOMES_FILE",
    "Explanation",
    "ReportFiles",
    "default_report_folder",
    "explain",
    "reading_summary",
    "write_report",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'hrimport.report' has no attribute {name!r}")
    module = "hrimport.report.history" if name == "OUTCOMES_FILE" else "hrimport.report.writer"
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value
