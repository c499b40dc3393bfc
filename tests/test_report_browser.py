"""report.html in a real browser: headless Chromium renders it on a phone, a wide screen and paper, its links
lead to the rows they name, and a value from the spreadsheet never runs.

Debian's ``chromium`` is needed (``make test`` installs it when missing; CI does). Without it these tests fail
with the install command, unless ``HRIMPORT_SKIP_BROWSER=1`` says to skip them on purpose.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import openpyxl
import pytest

from hrimport.changes.plan import PlanInput, make_plan
from hrimport.demo import run_demo
from hrimport.docs import SCREENSHOTS, screenshot
from hrimport.outcomes import Outcome, RunResult
from hrimport.report import ReportFiles, write_report
from hrimport.state.store import AcceptedRecord, fingerprint
from tests.headless_chromium import (
    PAPER,
    ChromiumPage,
    chromium_path,
    pdf_page_count,
    pdf_text_bottoms,
    run_chromium,
)
from tests.report_samples import sample_result

ROOT = Path(__file__).resolve().parent.parent


def _printable(paper: str) -> int:
    """The CSS pixels across a sheet of ``paper`` inside the report's @page margins (10 mm)."""
    return round((PAPER[paper][0] - 2 * 10 / 25.4) * 96)


PRINTABLE_A4 = _printable("A4")

#: Measured in the page: everything that sticks out of its parent (unless the parent is a box that scrolls
#: sideways, and ``scrollAllowed``), every box whose content is wider than the box, a page wider than the
#: window, and every id broken over two lines. An empty list when the layout holds.
LAYOUT_CHECK = """((scrollAllowed) => {
  const found = [];
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\\s+/).join(".") : "") +
    ' "' + (el.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 30) + '"';
  const scrolls = (el) => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  // what only screen readers get (a card's column headings) is clipped to nothing on purpose
  const unseen = (el) => el.closest("thead") && getComputedStyle(el.closest("thead")).position === "absolute";
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth + 1) {
    found.push(`the page is ${root.scrollWidth}px wide in a ${root.clientWidth}px window`);
  }
  for (const el of document.body.querySelectorAll("*")) {
    const tag = el.tagName.toLowerCase();
    if ((el.closest("svg") && tag !== "svg") || ["script", "style"].includes(tag) || unseen(el)) continue;
    const style = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    if (style.display === "none" || (box.width === 0 && box.height === 0)) continue;
    const parent = el.parentElement;
    if (parent !== document.body && !scrolls(parent)) {
      const p = parent.getBoundingClientRect();
      if (box.left < p.left - 1 || box.right > p.right + 1) {
        found.push(`${name(el)} (${Math.round(box.left)}..${Math.round(box.right)}px) sticks out of ` +
                   `${name(parent)} (${Math.round(p.left)}..${Math.round(p.right)}px)`);
      }
    }
    if (scrolls(el) && !scrollAllowed && el.scrollWidth > el.clientWidth + 1) {
      found.push(`${name(el)}: scrolls sideways (${el.scrollWidth}px of content in ${el.clientWidth}px)`);
    }
    if (!scrolls(el) && style.display !== "inline" && tag !== "svg" && el.scrollWidth > el.clientWidth + 1) {
      found.push(`${name(el)}: its content is ${el.scrollWidth}px wide in ${el.clientWidth}px`);
    }
  }
  for (const el of document.querySelectorAll("td.id")) {
    if (!el.textContent.trim() || el.getClientRects().length === 0) continue;
    const range = document.createRange();
    range.selectNodeContents(el);
    const lines = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
    if (lines.size > 1) found.push(`${name(el)}: the id is broken over ${lines.size} lines`);
  }
  return found;
})"""


def _ten_rows_four_problems() -> RunResult:
    """The sample's ten rows with four needing attention, one problem each (rows 8 to 11)."""
    result = sample_result()
    result.rows = [
        replace(r, outcome=Outcome.ADDED, problems=(), message="", source=None) if r.row in (7, 12) else r
        for r in result.rows
    ]
    assert [len(r.problems) for r in result.need_attention] == [1, 1, 1, 1]
    return result


def _time_off_result() -> RunResult:
    """A time-off run: five detail columns beside the message, a long leave type and CJK names."""
    result = sample_result()
    result.info.kind = "timeoff"
    leave = ["Annual Leave", "Childcare Leave (unpaid, by agreement)", "病假", "Sick Leave", "Personal Leave"]
    result.rows = [
        replace(r, name="李娜" if r.row == 5 else r.name,
                details={"leave_type": leave[i % 5], "start_date": "2024-02-20", "end_date": "2024-02-23",
                         "half_days": "start, end" if i % 3 == 0 else "", "total_days": "3.5"})
        for i, r in enumerate(result.rows)
    ]
    return result


def _month_two_result(*, dry_run: bool = False) -> RunResult:
    """A second month's staff run with its plan, made by ``make_plan`` from what the platform accepted in
    October: E001 changes job, E002 moves country, E003 leaves, E010 is new, E011 is missing."""
    result = sample_result()
    result.info.dry_run = dry_run
    october = {
        "E001": {"name": "Ada Lovelace", "job_title": "Analyst", "country": "GB"},
        "E002": {"name": "Grace Hopper", "job_title": "Admiral", "country": "US"},
        "E003": {"name": "Alan Turing", "job_title": "Researcher", "country": "GB"},
        "E011": {"name": "Ida Rhodes", "job_title": "Analyst", "country": "US"},
    }
    november = {
        "E001": {**october["E001"], "job_title": "Lead Analyst"},
        "E002": {**october["E002"], "country": "SG"},
        "E003": {**october["E003"], "last_working_day": "2024-05-31"},
        "E010": {"name": "Hedy Lamarr", "job_title": "Engineer", "country": "AT"},
    }
    accepted = {ext: AcceptedRecord(ext, fingerprint(ext, p), p, p["name"], "2024-04-01T09:00:00+02:00",
                                    "monthly-staff") for ext, p in october.items()}
    people = [PlanInput(r.row, r.external_id, r.name, november.get(r.external_id)) for r in result.rows]
    plan = make_plan(people, accepted, "monthly-staff")
    result.info.plan = plan.summary()
    for row, planned in zip(result.rows, plan.rows, strict=True):  # each row's own line, as an import adds
        row.details = {"plan": planned.status, "changes": planned.describe()}
    return result


@pytest.fixture
def report(tmp_path: Path) -> ReportFiles:
    return write_report(sample_result(), tmp_path / "report")


@pytest.fixture(scope="module")
def tab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromiumPage]:
    """One browser tab for the whole file (starting Chromium takes seconds); each test opens its page."""
    with ChromiumPage(tmp_path_factory.mktemp("chromium")) as page:
        yield page


# --- what the page shows, in the order HR reads it ----------------------------------------------------------


def test_chromium_renders_the_verdict_counts_and_problem_rows(report: ReportFiles, tmp_path: Path) -> None:
    dom = run_chromium(report.html, tmp_path, "--dump-dom")
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


def test_the_sections_come_in_the_order_hr_reads_them(tmp_path: Path, tab: ChromiumPage) -> None:
    files = write_report(_month_two_result(), tmp_path / "r")
    tab.open(files.html)
    sections = tab.evaluate("Array.from(document.querySelectorAll('main > header, main > section'), s => s.id)")
    assert sections == ["summary", "changes", "attention", "rows", "run-facts"]
    # the technical facts are folded: the file's hash is there, but not shown until asked for
    assert tab.evaluate("document.querySelector('#run-facts details').open") is False
    assert tab.evaluate("document.querySelector('#run-facts dd.hash').checkVisibility()") is False
    assert "3f5a0c1e9b7d2a4c" in tab.evaluate("document.querySelector('#run-facts').textContent")
    # a problem's plain title leads; its code follows, smaller
    head = tab.evaluate("""(() => { const h = document.querySelector('#code-not-an-email h3');
        const code = h.querySelector('code');
        return [h.textContent.trim(), parseFloat(getComputedStyle(h).fontSize),
                parseFloat(getComputedStyle(code).fontSize)]; })()""")
    assert head[0].startswith("Unusual e-mail address not-an-email")
    assert head[2] < head[1]


def test_what_changed_shows_the_plan_with_its_hires_leavers_and_changes(tmp_path: Path, tab: ChromiumPage) -> None:
    files = write_report(_month_two_result(dry_run=True), tmp_path / "r")
    tab.open(files.html)
    section = tab.evaluate("document.getElementById('changes').innerText")
    assert section.startswith("What this file would change\n")  # a dry run: nothing changed yet
    assert "Compared with what the platform last accepted from this job (4 people)." in section
    counts = tab.evaluate("Array.from(document.querySelectorAll('#plan-counts .stat'), s => s.innerText)")
    assert [c.replace("\n", " ") for c in counts] == [
        "1 new", "3 changed", "0 unchanged", "6 invalid, not planned", "1 missing from the file"]
    highlights = tab.evaluate("Object.fromEntries(Array.from(document.querySelectorAll('.highlight'),"
                              " h => [h.id, h.innerText.replace(/\\s+/g, ' ')]))")
    assert highlights == {
        "plan-new_hires": "New hires1 Row 13 · Hedy Lamarr E010",
        "plan-leavers": "Leavers (last working day newly set)1 Row 6 · Alan Turing E003 "
                        "last_working_day: (none) -> 2024-05-31",
        "plan-country_changes": "Country changes1 Row 5 · Grace Hopper E002 country: US -> SG",
        "plan-job_changes": "Job changes1 Row 4 · Ada Lovelace E001 job_title: Analyst -> Lead Analyst",
        "plan-missing": "Missing (accepted before, not in this file)1 Ida Rhodes E011 "
                        "last accepted 2024-04-01",
    }
    fields = tab.evaluate("Array.from(document.querySelectorAll('.fields-table tbody tr'), r => r.innerText)")
    assert [f.replace("\t", " ") for f in fields] == [
        "Job title job_title 1", "Country country 1", "Last working day last_working_day 1"]
    # a highlighted person links to their row
    assert tab.evaluate("document.querySelector('#plan-job_changes a').getAttribute('href')") == "#row-4"


def test_a_run_without_a_plan_says_so_in_one_line_and_time_off_says_nothing(tmp_path: Path,
                                                                           tab: ChromiumPage) -> None:
    staff = write_report(sample_result(), tmp_path / "staff")
    tab.open(staff.html)
    assert tab.evaluate("document.getElementById('changes').tagName") == "P"
    assert tab.evaluate("document.getElementById('changes').innerText").startswith("What changed: not known")
    timeoff = write_report(_time_off_result(), tmp_path / "timeoff")
    tab.open(timeoff.html)
    assert tab.evaluate("document.getElementById('changes')") is None


def test_a_problem_links_to_its_row_and_names_its_row_in_to_fix(tmp_path: Path, tab: ChromiumPage) -> None:
    files = write_report(sample_result(), tmp_path / "r")
    tab.open(files.html, height=700)
    # HR has filtered the list to the imported rows, then follows the e-mail problem's link to its row
    tab.evaluate("(() => { const s = document.getElementById('outcome-filter'); s.value = 'added';"
                 " s.dispatchEvent(new Event('change')); })()")
    assert tab.evaluate("document.getElementById('row-8').hidden") is True
    where = tab.evaluate("document.querySelector('#code-not-an-email .problem-row td').innerText")
    assert where.split() == ["8", "to_fix", "row", "5"]
    tab.evaluate("document.querySelector('#code-not-an-email a.row-link').click()")
    assert tab.evaluate("location.hash") == "#row-8"
    assert tab.evaluate("document.getElementById('row-8').hidden") is False  # the filter let go
    assert tab.evaluate("document.getElementById('row-8').matches(':target')") is True
    top, bottom = tab.evaluate("(() => { const r = document.getElementById('row-8').getBoundingClientRect();"
                               " return [r.top, r.bottom]; })()")
    assert 0 <= top and bottom <= 700  # scrolled into view
    assert "Marie Curie" in tab.evaluate("document.getElementById('row-8').innerText")
    # ...and finds Marie Curie on the row of to_fix.xlsx the report named, as on every other row it named
    assert files.to_fix is not None
    sheet = openpyxl.load_workbook(files.to_fix).active
    assert sheet is not None
    named = tab.evaluate("Object.fromEntries(Array.from(document.querySelectorAll('tr.problem-row'),"
                         " tr => [tr.querySelector('.id').innerText, tr.querySelector('.fix-row').innerText]))")
    assert len(named) == 6
    for external_id, text in named.items():
        assert sheet.cell(int(text.removeprefix("to_fix row ")), 1).value == external_id


def test_the_to_fix_rows_named_for_a_csv_source_are_its_lines(tmp_path: Path, tab: ChromiumPage) -> None:
    files = write_report(sample_result(fmt="csv", delimiter=","), tmp_path / "r")
    lines = list(csv.reader((files.folder / "to_fix.csv").read_text(encoding="utf-8-sig").splitlines()))
    tab.open(files.html)
    named = tab.evaluate("Array.from(document.querySelectorAll('tr.problem-row'),"
                         " tr => [tr.querySelector('.id').innerText, tr.querySelector('.fix-row').innerText])")
    for external_id, text in named:
        assert lines[int(text.removeprefix("to_fix row ")) - 1][0] == external_id


# --- a phone, a wide screen, paper ----------------------------------------------------------------------------


REPORTS: dict[str, Callable[[], RunResult]] = {
    "staff": sample_result,
    "staff with a plan": _month_two_result,
    "time off": _time_off_result,
}


@pytest.mark.parametrize("kind", REPORTS)
def test_on_a_phone_every_row_is_a_card_and_nothing_sticks_out(kind: str, tmp_path: Path,
                                                                tab: ChromiumPage) -> None:
    files = write_report(REPORTS[kind](), tmp_path / "r")
    tab.open(files.html, width=360)  # the narrowest phones in common use
    # tables may scroll sideways inside their box on a phone: they do not need to here
    assert tab.evaluate(f"{LAYOUT_CHECK}(false)") == []
    cards = tab.evaluate("Array.from(document.querySelectorAll('#all-rows tbody tr'),"
                         " tr => getComputedStyle(tr).display)")
    assert set(cards) == {"block"}
    # each value is led by its column's name, in every table
    for table in tab.evaluate("Array.from(document.querySelectorAll('main table'), (t, i) => i)"):
        headers, labels = tab.evaluate(f"""(() => {{ const t = document.querySelectorAll('main table')[{table}];
            return [Array.from(t.tHead.rows[0].cells, th => th.textContent.trim()),
                    Array.from(t.tBodies[0].rows[0].cells,
                               td => getComputedStyle(td, '::before').content.slice(1, -1))]; }})()""")
        assert labels == headers


@pytest.mark.parametrize("kind", REPORTS)
def test_on_a_wide_screen_every_table_fits_without_scrolling(kind: str, tmp_path: Path,
                                                             tab: ChromiumPage) -> None:
    files = write_report(REPORTS[kind](), tmp_path / "r")
    tab.open(files.html, width=1400)
    assert tab.evaluate(f"{LAYOUT_CHECK}(false)") == []
    # the last column (time off: Total days) ends inside the window
    last, right = tab.evaluate("(() => { const th = document.querySelector('#all-rows th:last-child');"
                               " return [th.innerText, th.getBoundingClientRect().right]; })()")
    assert right <= 1400, last


@pytest.fixture(scope="module")
def demo_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The reports ``make demo`` writes: real imports of the samples into the embedded sandbox, with every
    section a real run fills (the sandbox banner, how values were read, the leave-day notes)."""
    output = tmp_path_factory.mktemp("demo")
    return {step.source.name: step.report.html for step in run_demo(output)}


@pytest.mark.parametrize(("width", "media"), [(360, "screen"), (1400, "screen"), (PRINTABLE_A4, "print")],
                         ids=["small phone", "wide screen", "A4 paper"])
def test_the_demo_reports_and_histories_fit_a_small_phone_a_wide_screen_and_paper(
        width: int, media: str, demo_reports: dict[str, Path], tab: ChromiumPage) -> None:
    # the sample exports fill what the made-up results above do not: "How values were read" once made
    # the page twice as wide as a 360px phone, and each job's history ran off the right of a printed A4
    assert sorted(demo_reports) == ["bamboohr_staff.csv", "leave_history.xlsx", "workday_staff.xlsx"]
    for source, html in demo_reports.items():
        tab.open(html, width=width, media="" if media == "screen" else media)
        assert tab.evaluate("document.getElementById('values-read') !== null"), source
        assert (source, tab.evaluate(f"{LAYOUT_CHECK}(false)")) == (source, [])
        history = html.parent.parent / "index.html"
        tab.open(history, width=width, media="" if media == "screen" else media)
        assert (history.parent.name, tab.evaluate(f"{LAYOUT_CHECK}(false)")) == (history.parent.name, [])


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_ten_rows_with_four_problems_print_on_two_pages(paper: str, tmp_path: Path, tab: ChromiumPage) -> None:
    files = write_report(_ten_rows_four_problems(), tmp_path / "r")
    tab.open(files.html)
    tab.evaluate("addEventListener('beforeprint', () => {"
                 " window.factsOpenWhenPrinted = document.querySelector('#run-facts details').open; })")
    pdf = tab.print_pdf(paper)
    assert pdf_page_count(pdf) <= 2
    first_page_ends = pdf_text_bottoms(pdf)[0]
    assert first_page_ends > 2 / 3, f"the first page's text ends {first_page_ends:.0%} down: mostly empty"
    # printing opens the folded run details, so the file's hash is on paper too; the screen gets them back closed
    assert tab.evaluate("window.factsOpenWhenPrinted") is True
    assert tab.evaluate("document.querySelector('#run-facts details').open") is False


@pytest.mark.parametrize("paper", ["A4", "Letter"])
@pytest.mark.parametrize("kind", REPORTS)
def test_on_paper_nothing_overlaps_and_ids_stay_whole(kind: str, paper: str, tmp_path: Path,
                                                      tab: ChromiumPage) -> None:
    files = write_report(REPORTS[kind](), tmp_path / "r")
    printable = _printable(paper)
    tab.open(files.html, width=printable, media="print")
    assert tab.evaluate(f"{LAYOUT_CHECK}(false)") == []
    assert set(tab.evaluate("Array.from(document.querySelectorAll('th'), th => getComputedStyle(th).position)")) \
        == {"static"}  # a header stuck to the top would print over the rows


# --- the README's pictures ------------------------------------------------------------------------------------


def _png_size(png: Path) -> tuple[int, int]:
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_make_docs_screenshots_are_the_ones_the_readme_shows() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name, size in SCREENSHOTS.items():
        assert f'src="{name}"' in readme, f"the README does not show {name}"
        assert _png_size(ROOT / name) == size, f"{name} is stale or drawn by hand: run `make docs`"


def test_a_screenshot_is_the_report_rendered_at_the_window_size(report: ReportFiles, tmp_path: Path) -> None:
    chromium_path()  # fails (or skips on purpose) without Chromium, as the other browser tests do
    png = screenshot(report.html, tmp_path / "report.png", 420, 900)
    assert _png_size(png) == (420, 900)
    assert png.stat().st_size > 20_000  # a rendered page, not a blank one


# --- a value from the spreadsheet never runs ------------------------------------------------------------------


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
    found = _injected_script_ran_or_parsed(run_chromium(unsafe, tmp_path, "--dump-dom"))
    assert "the injected script ran (it adds a <pwned-marker> element)" in found


def test_the_csp_stops_an_unescaped_script_too(report: ReportFiles, tmp_path: Path) -> None:
    # Defence in depth: with the CSP kept, even an unescaped script does not run.
    page = report.html.read_text()
    raw = re.sub(r"&lt;script&gt;(document\.title.*?)&lt;/script&gt;", r"<script>\1</script>", page)
    unsafe = tmp_path / "unsafe-with-csp.html"
    unsafe.write_text(raw.replace("&#39;", "'"))
    dom = run_chromium(unsafe, tmp_path, "--dump-dom")
    assert 'data-js="on"' in dom  # our own script is allowed by its hash
    assert "<pwned-marker" not in dom


def test_the_layout_check_finds_what_a_phone_broke_before(tmp_path: Path, tab: ChromiumPage) -> None:
    # Guard for the layout tests: the page as a phone showed it before (no cards, fixed column widths, a
    # narrow id column, tables as wide as they like) fails the check the way HR saw it: ids a digit or two
    # a line, badges over the next cell, a page wider than the phone.
    files = write_report(sample_result(), tmp_path / "r")
    page = files.html.read_text()
    before = (page.replace("@media screen and (max-width: 600px)", "@media (max-width: 1px)")
              .replace("td.id { white-space: nowrap; }", "td.id { overflow-wrap: anywhere; }")
              .replace("</style>", ".problems { table-layout: fixed; } .problems th:nth-child(2) { width: 2ch; }"
                                   " .table-wrap { overflow: visible; }</style>"))
    (tmp_path / "before.html").write_text(before)
    tab.open(tmp_path / "before.html", width=420)
    found = "\n".join(tab.evaluate(f"{LAYOUT_CHECK}(true)"))
    assert re.search(r"^span\.pill\.o-invalid .* sticks out of td ", found, re.MULTILINE), found
    assert re.search(r'^td\.id "E004": the id is broken over [2-9] lines$', found, re.MULTILINE), found
    assert re.search(r"^the page is \d+px wide in a 420px window$", found, re.MULTILINE), found
