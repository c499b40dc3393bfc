"""Whatever the file, an import's memory and time stay bounded, and its error lines stay short.

The settings and the wording around the limits, run in-process; every hostile file itself (ZIP bombs,
blank tails, links to devices, 100,000 rows sharing one id...) is in ``test_hostile_files``, each run in a
child process whose peak memory is measured.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hrimport.cli import main
from tests.staff_files import HEADER, person, write_config, write_csv, write_workbook

# ------------------------------------------------------------------------------------------ duplicate ids


def duplicate_lines(output: str) -> dict[int, str]:
    """Excel row -> what its duplicate-id line says in brackets (rows saying the same share a line: "Rows 3,
    4 and 5, column ..." or "Rows 3, 4, 5, 6, 7 and 7 more, column ...", which names the first five)."""
    found = {}
    for line in output.splitlines():
        if "appears more than once" in line:
            named = line[: line.index(", column")].removeprefix("Rows ").removeprefix("Row ")
            listed, _, last = named.partition(" and ")
            rows = [int(r) for r in listed.split(", ")] + ([int(last)] if last and not last.endswith("more") else [])
            for row in rows:
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
        ([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], {2: "also on row 3 and 11 other rows",
                                                 7: "also on row 2 and 11 other rows"}),
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


# ---------------------------------------------------------------------------- the unpacked size, blank rows

def test_the_unpacked_size_limit_is_a_setting(tmp_path: Path) -> None:
    rows = [person(n, Title="Analyst " * 20) for n in range(1, 3001)]  # ~2 MB of sheet once unpacked
    data = write_workbook(tmp_path / "staff.xlsx", rows)
    runner = CliRunner()
    strict = write_config(tmp_path / "strict.toml", extra="")
    strict.write_text(strict.read_text().replace("[source]\n", "[source]\nmax_unpacked_mb = 1\n"))
    refused = runner.invoke(main, ["staff", "validate", str(strict), str(data)])
    assert refused.exit_code == 2
    assert refused.output.count("\n") == 1
    assert "more than the limit of 1 MB" in refused.output
    default = runner.invoke(main, ["staff", "validate", str(write_config(tmp_path / "staff.toml")), str(data)])
    assert default.exit_code == 0, default.output
    assert "3,000 of 3,000 rows checked." in default.output


@pytest.mark.parametrize("value", ["0", "-5", '"big"', "1.5", "true"])
def test_a_wrong_unpacked_size_limit_is_one_line_and_exit_2(tmp_path: Path, value: str) -> None:
    config = write_config(tmp_path / "staff.toml")
    config.write_text(config.read_text().replace("[source]\n", f"[source]\nmax_unpacked_mb = {value}\n"))
    data = write_csv(tmp_path / "staff.csv", [person(1)])
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    assert result.exit_code == 2
    assert result.output == (
        "Error: staff.toml [source] max_unpacked_mb must be a whole number of megabytes (at least 1)\n"
    )


def test_blank_lines_between_rows_and_trailing_empty_cells_are_kept_as_read(tmp_path: Path) -> None:
    write_config(tmp_path / "staff.toml")
    data = write_csv(tmp_path / "staff.csv", [person(1)])
    last = ",".join(person(2).values()).replace("Analyst", "Analyst ,")  # a value beyond the header
    with open(data, "a", newline="") as fh:
        fh.write("\n\n" + ",".join(person(3).values()) + ",,\n" + last + ",  ,\n\n ,, \n")
    result = CliRunner().invoke(main, ["staff", "validate", str(tmp_path / "staff.toml"), str(data)])
    assert "Row 6 has 17 cells but the header row has 16" in result.output  # rows 3-4 blank
    assert "Rows read: 3 = 2 valid + 1 invalid" in result.output


# ------------------------------------------------------------------------------------ not a regular file


def test_a_link_to_a_regular_file_is_read(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    write_csv(tmp_path / "export.csv", [person(1)])
    (tmp_path / "staff.csv").symlink_to(tmp_path / "export.csv")
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(tmp_path / "staff.csv")])
    assert result.exit_code == 0, result.output
    assert "1 of 1 rows checked." in result.output


# ------------------------------------------------------------------------------------------ long lists


def test_a_name_twice_still_names_both_columns(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    header = [*HEADER, "Email", "Name"]
    data = write_csv(tmp_path / "staff.csv", [person(1)], header=header)
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    assert result.output.endswith("staff.csv: the header row (row 1) has duplicate column names: 'Name' (columns B "
                                  "and R); 'Email' (columns C and Q); rename them so each is unique\n")
