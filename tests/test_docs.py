"""The README tells the truth: its field tables come from the field specification, its commands exist."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from hrimport.cli import main
from hrimport.docs import render_readme
from hrimport.fields import staff_fields, timeoff_fields

README = Path(__file__).resolve().parent.parent / "README.md"


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
