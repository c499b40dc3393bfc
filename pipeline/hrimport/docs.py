"""Keep the README's generated parts true: ``python -m hrimport.docs README.md`` rewrites them in place.

Two parts are generated: the field tables (from the field specification) and the screenshots of the report
in ``docs/`` beside the README, taken by headless Chromium from the demo's first staff report, so the
pictures show what the report really looks like (``--no-screenshots`` leaves them as they are).
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hrimport import fields

BEGIN, END = "<!-- fields:begin -->", "<!-- fields:end -->"
#: README-relative PNG -> the browser window it is taken in (CSS pixels): a desktop and a phone
SCREENSHOTS = {"docs/report.png": (1200, 1500), "docs/report-phone.png": (420, 900)}


def field_tables() -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fields.main()
    return out.getvalue().rstrip()


def render_readme(text: str) -> str:
    """``text`` with the part between the field-table markers regenerated from the field specification."""
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.DOTALL)
    return pattern.sub(lambda _: f"{BEGIN}\n{field_tables()}\n{END}", text)


def find_chromium() -> str:
    """The headless browser for screenshots; SystemExit with the way to install it when there is none."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("Chromium is missing: run `make chromium` (apt-get install chromium), then `make docs`.")


def screenshot(page: Path, png: Path, width: int, height: int, *, chromium: str | None = None) -> Path:
    """``png``: ``page`` as headless Chromium shows it in a window ``width`` x ``height`` CSS pixels."""
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [chromium or find_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             f"--user-data-dir={profile}", f"--window-size={width},{height}", f"--screenshot={png.resolve()}",
             page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0 or not png.is_file():
        raise SystemExit(f"Chromium could not take the screenshot of {page}: {done.stderr.strip()[-500:]}")
    return png


def write_report_screenshots(root: Path) -> list[Path]:
    """Import the demo's first staff sample into the embedded sandbox (as ``make demo`` does) in a temporary
    folder, and take ``SCREENSHOTS`` of its report.html under ``root``."""
    from hrimport.demo import run_demo  # the sandbox and the import: only when screenshots are wanted

    chromium = find_chromium()
    with tempfile.TemporaryDirectory() as output, contextlib.closing(run_demo(Path(output))) as steps:
        page = next(steps).report.html
        return [screenshot(page, root / name, width, height, chromium=chromium)
                for name, (width, height) in SCREENSHOTS.items()]


def main(path: str = "README.md", *options: str) -> None:
    readme = Path(path)
    readme.write_text(render_readme(readme.read_text(encoding="utf-8")), encoding="utf-8")
    if "--no-screenshots" not in options:
        for png in write_report_screenshots(readme.parent):
            print(f"wrote {png}")


if __name__ == "__main__":
    main(*sys.argv[1:])
