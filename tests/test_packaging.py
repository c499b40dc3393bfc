"""A plain (not editable) `pip install` gives a working `hrimport`, from any folder, data included."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_installs_a_working_hrimport_with_its_templates_schemas_and_samples(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels)],
        check=True, capture_output=True,
    )
    (wheel,) = wheels.glob("hrimport-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("hrimport/_data/templates/report.html.j2", "hrimport/_data/schemas/staff.toml",
                   "hrimport/_data/schemas/leave_types.toml", "hrimport/_data/samples/bamboohr_staff.csv",
                   "hrimport/py.typed"):
        assert needed in names, needed
    assert not any(name.startswith("pipeline/") for name in names)  # the import name is the project's


    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    # a user's own folder named pipeline/ (a common name) beside the command must not break it
    (elsewhere / "pipeline").mkdir(parents=True)
    (elsewhere / "pipeline" / "__init__.py").write_text("raise ImportError('the user\'s own pipeline package')\n")
    # the installed copy, not this checkout: PYTHONPATH comes before the editable install's path entry
    env = {**os.environ, "PYTHONPATH": str(site)}
    where = subprocess.run([sys.executable, "-c", "import hrimport; print(hrimport.__file__)"], cwd=elsewhere,
                           env=env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(site))
    module = subprocess.run([sys.executable, "-m", "hrimport", "--version"], cwd=elsewhere, env=env,
                            capture_output=True, text=True, check=False)
    assert module.returncode == 0 and "hrimport" in module.stdout, module.stderr
    demo = subprocess.run([str(site / "bin" / "hrimport"), "demo", "--output", "out"], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert demo.returncode == 0, demo.stderr
    assert "Done. Open the reports in a browser" in demo.stdout
    assert len(list((elsewhere / "out" / "reports").glob("*/*/report.html"))) == 3


def test_every_dependency_is_pinned_in_the_lock_file() -> None:
    # `make` installs requirements.lock and then hrimport without its dependencies: a package added to
    # pyproject.toml but not locked (`make lock`) would be missing from every install.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    names = {re.split(r"[<>=!~\[ ;]", spec, maxsplit=1)[0].lower().replace("_", "-") for spec in wanted}
    pinned = {line.split("==")[0].lower().replace("_", "-")
              for line in (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines() if "==" in line}
    assert names - pinned == set()
