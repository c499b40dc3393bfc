"""The README tells the truth: its field tables come from the field specification, its commands exist, its
config examples load, the config keys and exit codes it names are the program's, and the help agrees."""

from __future__ import annotations

import dataclasses
import re
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from hrimport.cli import main
from hrimport.config import GuardSettings, parse_config
from hrimport.docs import render_readme
from hrimport.errors import ConfigError
from hrimport.fields import staff_fields, timeoff_fields
from hrimport.jobs import EXIT_MEANINGS
from hrimport.jobs.jobfile import parse_job

README = Path(__file__).resolve().parent.parent / "README.md"
SAMPLES = README.parent / "samples"


def test_the_readme_field_tables_are_generated_from_the_field_specification() -> None:
    text = README.read_text(encoding="utf-8")
    assert render_readme(text) == text, "README field tables are stale: run `make docs`"
    for f in (*staff_fields(), *timeoff_fields()):
        assert f"| `{f.name}` |" in text


def test_the_first_screen_gives_the_two_setup_commands() -> None:
    first_screen = "\n".join(README.read_text(encoding="utf-8").splitlines()[:25])
    assert "make demo" in first_screen and "make test" in first_screen


def _commands(group, prefix=()):  # type: ignore[no-untyped-def]
    for name, cmd in group.commands.items():
        path = (*prefix, name)
        yield path, cmd
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, path)


def test_every_command_has_help_and_is_named_in_the_readme() -> None:
    text = README.read_text(encoding="utf-8")
    for path, cmd in _commands(main):
        result = CliRunner().invoke(main, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert (cmd.help or "").strip(), f"hrimport {' '.join(path)} has no help"
        assert re.search(r"hrimport " + re.escape(" ".join(path)) + r"\b", text), \
            f"hrimport {' '.join(path)} is not in the README"


def test_the_readme_benchmark_table_is_the_one_make_bench_wrote() -> None:
    results = README.parent / "tests" / "bench" / "RESULTS.md"
    block = f"<!-- bench:begin -->\n{results.read_text(encoding='utf-8')}<!-- bench:end -->"
    assert block in README.read_text(encoding="utf-8"), \
        "the README's Benchmarks table differs from tests/bench/RESULTS.md: numbers come from `make bench`"


# ------------------------------------------------------------------ what the README says of configs and exit codes

def _readme_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def _refusal(load: Callable[[], object]) -> str:
    try:
        load()
    except ConfigError as exc:
        return str(exc)
    return ""


# the columns the README's partial example leaves out, so that it loads as a whole config
_REQUIRED_STAFF_COLUMNS = {"Email": "system_email", "Title": "job_title", "Country": "country"}
_REQUIRED_TIMEOFF_COLUMNS = {"Employee ID": "customer_system_id", "Leave Type": "leave_type", "From": "start_date",
                             "To": "end_date"}


def test_the_readme_import_config_example_loads(tmp_path: Path) -> None:
    (example,) = [b for b in _readme_blocks("toml") if b.startswith("[service]")]
    data = tomllib.loads(example)
    data["staff"]["columns"].update(_REQUIRED_STAFF_COLUMNS)
    config = parse_config(data, tmp_path / "staff.toml")
    assert config.source.formula_text == "warn" and config.report.html_problem_limit == 500


def test_the_readme_timeoff_section_example_loads(tmp_path: Path) -> None:
    (example,) = [b for b in _readme_blocks("toml") if b.startswith("[timeoff]")]
    data = {"service": {"customer_id": 99}, **tomllib.loads(example)}
    data["timeoff"]["columns"] = dict(_REQUIRED_TIMEOFF_COLUMNS)
    assert parse_config(data, tmp_path / "leave.toml").timeoff is not None


def test_the_readme_job_file_example_loads(tmp_path: Path) -> None:
    (example,) = [b for b in _readme_blocks("toml") if "[[step]]" in b]
    for sample in ("bamboohr_staff.toml", "leave_history.toml"):
        shutil.copy(SAMPLES / sample, tmp_path / sample)
    job = parse_job(tomllib.loads(example), tmp_path / "monthly.toml")
    assert [s.kind for s in job.steps] == ["staff", "timeoff"] and job.notify is not None


def test_every_config_key_the_readme_names_is_one_the_loader_accepts(tmp_path: Path) -> None:
    named = set(re.findall(r"`\[([a-z_.]+)\] ([a-z_]+)", README.read_text(encoding="utf-8")))
    assert ("source", "max_unpacked_mb") in named and ("notify", "when") in named
    for section, key in sorted(named):
        if section == "notify":
            data = {"step": [{"kind": "staff", "config": str(SAMPLES / "bamboohr_staff.toml"),
                              "source": "staff.csv"}],
                    "notify": {"to": ["hr@example.com"], "from": "hrimport@example.com", key: "probe"}}
            refusal = _refusal(lambda: parse_job(data, tmp_path / "job.toml"))  # noqa: B023
        else:
            data = {"service": {"customer_id": 99}, "staff": {"columns": {"Id": "customer_system_id"}}}
            table = data
            for part in section.split("."):
                table = table.setdefault(part, {})
            table[key] = "probe"
            refusal = _refusal(lambda: parse_config(data, tmp_path / "import.toml"))  # noqa: B023
        assert "unknown key" not in refusal and not re.search(r"is not a (staff|timeoff) field", refusal), \
            f"the README names [{section}] {key}: {refusal}"


def test_the_readme_drift_guard_table_gives_the_loaders_keys_and_defaults() -> None:
    guard_row = r"^\| `[a-z-]+` \| .* \| (\d+)% \(`(\w+)`\) \|$"
    rows = re.findall(guard_row, README.read_text(encoding="utf-8"), re.MULTILINE)
    defaults = {f.name: f.default for f in dataclasses.fields(GuardSettings)}
    assert {key: int(share) / 100 for share, key in rows} == defaults


def test_the_readme_exit_code_table_is_every_code_hrimport_run_ends_with() -> None:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("**Exit codes, for whoever is on call**"):]
    table = table[:table.index("\n\n", table.index("| code |"))]
    assert [int(code) for code in re.findall(r"^\| (\d+) \|", table, re.MULTILINE)] == sorted(EXIT_MEANINGS)


@pytest.mark.parametrize("command", [(), ("run",)], ids=["hrimport", "hrimport run"])
def test_the_help_names_every_exit_code(command: tuple[str, ...]) -> None:
    help_text = CliRunner().invoke(main, [*command, "--help"], terminal_width=200).output
    said = help_text[help_text.index("Exit codes:"):]
    said = said[:said.index("\n\n")]
    assert set(EXIT_MEANINGS) <= {int(n) for n in re.findall(r"\b(\d+) [a-zA-Z/]", said)}, said


@pytest.mark.parametrize("command", ["leave-days", "customers"])
def test_a_command_without_a_config_does_not_offer_the_configs_base_url(command: str) -> None:
    help_text = CliRunner().invoke(main, [command, "--help"], terminal_width=200).output
    assert "$HRIMPORT_BASE_URL, else the embedded sandbox" in help_text
    assert "config" not in help_text
