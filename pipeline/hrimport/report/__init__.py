"""The reporter stage: render a run's ``RunResult`` as files HR staff read, forward and act on (issue 4).

``write_report(result, folder)`` writes ``report.html``, ``report.xlsx``, ``to_fix.xlsx`` (and ``to_fix.csv``
for a CSV source), ``summary.json`` and ``outcomes.jsonl``; ``default_report_folder`` names the folder of a
run. One module per file kind (``html``, ``excel``, ``fix_file``, ``summary``; ``fix_workbook`` makes
``to_fix.xlsx`` from the source workbook, ``fix_marks`` says what it marks), with ``explain`` (problem codes
in plain words), ``view`` (shared display shaping) and ``cells`` (masking). Private files and folder names
are ``hrimport.private_files``; the to_fix round trip's contract is ``hrimport.to_fix_format``.
"""

from __future__ import annotations

from hrimport.report.explain import Explanation, explain
from hrimport.report.view import reading_summary
from hrimport.report.writer import OUTCOMES_FILE, ReportFiles, default_report_folder, write_report

__all__ = [
    "OUTCOMES_FILE",
    "Explanation",
    "ReportFiles",
    "default_report_folder",
    "explain",
    "reading_summary",
    "write_report",
]
