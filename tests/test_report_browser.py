"""report.html in a real browser: headless Chromium renders it, and a value from the spreadsheet never runs.

Debian's ``chromium`` is needed (``make test`` installs it when missing; CI does). Without it this test fails
with the install command, unless ``HRIMPORT_SKIP_BROWSER=1`` says to skip it on purpose.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hrimport.report import ReportFiles, write_report
from tests.report_samples import sample_result


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and Path("/usr/bin/chromium").exists():
        found = "/usr/bin/chromium"
    if found is None:
        if os.environ.get("HRIMPORT_SKIP_BROWSER") == "1":
            pytest.skip("HRIMPORT_SKIP_BROWSER=1: browser test skipped on purpose")
        pytest.fail(
            "headless Chromium is missing: run `make chromium` (apt-get install chromium), "
            "or set HRIMPORT_SKIP_BROWSER=1 to skip this test"
        )
    return found


def _run_chromium(page: Path, tmp_path: Path, *args: str) -> str:
    """Run headless Chromium on ``page`` with ``args``; return its stdout."""
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        *args,
        page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _injected_script_ran_or_parsed(dom: str) -> list[str]:
    """What an unescaped ``<script>`` from the spreadsheet leaves in the rendered DOM, if anything."""
    found = []
    if "<pwned-marker" in dom:
        found.append("the injected script ran (it adds a <pwned-marker> element)")
    if re.search(r"<title>\s*PWNED", dom):
        found.append("the injected script ran (it retitles the page)")
    if len(re.findall(r"<script\b", dom)) != 1:
        found.append("the page holds a <script> element besides its own")
    return found


@pytest.fixture
def report(tmp_path: Path) -> ReportFiles:
    return write_report(sample_result(), tmp_path / "report")


def test_chromium_renders_the_verdict_counts_and_problem_rows(report: ReportFiles, tmp_path: Path) -> None:
    dom = _run_chromium(report.html, tmp_path, "--dump-dom")
    assert 'data-js="on"' in dom  # the page's own script did run: scripts were on for this check
    assert "4 of 10 rows imported; 6 need attention." in dom
    assert re.search(r"<b>10</b><span>rows read</span>", dom)
    assert re.search(r"<b>6</b><span>need attention</span>", dom)
    problem_row = re.search(r'<tr class="problem-row" data-row="9">.*?</tr>', dom, re.DOTALL)
    assert problem_row and "Rosalind Franklin" in problem_row.group(0)
    assert "•••••5678" in problem_row.group(0) and "Passport number" in problem_row.group(0)
    assert "10 of 10 rows shown" in dom  # the filter script counted the row list
    # the spreadsheet's <script> names are shown as text, and never ran
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert "createElement('pwned-marker')" in dom
    assert _injected_script_ran_or_parsed(dom) == []


def test_the_injection_check_catches_an_unescaped_page(report: ReportFiles, tmp_path: Path) -> None:
    # Guard for the test above: put the name back unescaped, as a template with autoescape off would.
    page = report.html.read_text()
    escaped = "&lt;script&gt;document.title=&#39;PWNED&#39;;"
    assert escaped in page
    raw = re.sub(r"&lt;script&gt;(document\.title.*?)&lt;/script&gt;", r"<script>\1</script>", page)
    raw = raw.replace("&#39;", "'")
    raw = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", raw)  # as if the CSP were missing
    unsafe = tmp_path / "unsafe.html"
    unsafe.write_text(raw)
    found = _injected_script_ran_or_parsed(_run_chromium(unsafe, tmp_path, "--dump-dom"))
    assert "the injected script ran (it adds a <pwned-marker> element)" in found


def test_the_csp_stops_an_unescaped_script_too(report: ReportFiles, tmp_path: Path) -> None:
    # Defence in depth: with the CSP kept, even an unescaped script does not run.
    page = report.html.read_text()
    raw = re.sub(r"&lt;script&gt;(document\.title.*?)&lt;/script&gt;", r"<script>\1</script>", page)
    unsafe = tmp_path / "unsafe-with-csp.html"
    unsafe.write_text(raw.replace("&#39;", "'"))
    dom = _run_chromium(unsafe, tmp_path, "--dump-dom")
    assert 'data-js="on"' in dom  # our own script is allowed by its hash
    assert "<pwned-marker" not in dom


def test_screenshot(report: ReportFiles, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    _run_chromium(report.html, tmp_path, f"--screenshot={shot}", "--window-size=1280,2000")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
