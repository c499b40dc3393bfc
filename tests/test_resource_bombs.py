"""Whatever the file, an import's memory and time stay bounded, and its error lines stay short.

Each case is a real file (written by csv, zipfile or the OS), run through the command as a user runs it:
the big ones in a child process whose peak memory is measured (``tests.child_process``), and killed
when it passes the ceiling, so a regression fails fast instead of taking the machine's memory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hrimport.cli import main
from tests.child_process import run_hrimport
from tests.staff_files import person, write_config, write_csv

# ------------------------------------------------------------------------------------------ duplicate ids


def duplicate_lines(output: str) -> dict[int, str]:
    """Excel row -> what its duplicate-id line says in brackets."""
    found = {}
    for line in output.splitlines():
        if "appears more than once" in line:
            row = int(line.split(",")[0].removeprefix("Row "))
            found[row] = line[line.index("(") + 1 : line.index(")")]
    return found


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        ([1, 2, 1], {2: "also on row 4", 4: "also on row 2"}),
        ([1, 2, 1, 3, 1], {2: "also on rows 4 and 6", 4: "also on rows 2 and 6", 6: "also on rows 2 and 4"}),
        ([1, 1, 1, 1], {2: "also on rows 3, 4 and 5", 3: "also on rows 2, 4 and 5", 5: "also on rows 2, 3 and 4"}),
        ([1, 1, 1, 1, 1], {2: "also on row 3 and 3 other rows", 3: "also on row 2 and 3 other rows",
                           6: "also on row 2 and 3 other rows"}),
        ([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], {14: "also on row 2 and 11 other rows"}),
    ],
)
def test_a_duplicate_id_names_the_other_rows_when_few_and_counts_them_when_many(
    tmp_path: Path, ids: list[int], expected: dict[int, str]
) -> None:
    config = write_config(tmp_path / "staff.toml")
    data = write_csv(tmp_path / "staff.csv", [person(n, Name=f"Person {i}") for i, n in enumerate(ids)])
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    assert result.exit_code == 1, result.output
    found = duplicate_lines(result.output)
    assert {row: found[row] for row in expected} == expected


def test_the_duplicate_message_reads_as_a_sentence(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    data = write_csv(tmp_path / "staff.csv", [person(1), person(2), person(1, Name="Someone Else")])
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    assert ("Row 4, column 'Employee ID': external id '000001' appears more than once in this file "
            "(also on row 2); each person must appear once.") in result.output.splitlines()


def test_100000_rows_sharing_one_id_validate_in_bounded_memory_and_time(tmp_path: Path) -> None:
    # The wrong column mapped as the external id: every row is a duplicate of every other. Each message
    # used to list every other row (O(n²)): 8,000 rows took 594 MB, 100,000 passed 5.4 GB. Reading and
    # checking 100,000 rows takes ~550 MB whatever their ids.
    write_config(tmp_path / "staff.toml")
    write_csv(tmp_path / "staff.csv", [person(1, Name=f"Person {i}") for i in range(100_000)])
    done = run_hrimport("staff", "validate", "staff.toml", "staff.csv", cwd=tmp_path, ceiling_mb=800, timeout=90)
    assert done.exit_code == 1, done.stderr
    assert done.lines[0] == ("Row 2, column 'Employee ID': external id '000001' appears more than once in this "
                             "file (also on row 3 and 99,998 other rows); each person must appear once.")
    assert "0 of 100,000 rows checked; 100,000 need attention." in done.stdout
    assert max(len(line) for line in done.lines) < 300
