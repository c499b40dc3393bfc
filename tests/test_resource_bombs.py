"""Whatever the file, an import's memory and time stay bounded, and its error lines stay short.

Each case is a real file (written by csv, zipfile or the OS), run through the command as a user runs it:
the big ones in a child process whose peak memory is measured (``tests.child_process``), and killed
when it passes the ceiling, so a regression fails fast instead of taking the machine's memory.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from hrimport.cli import main
from tests.child_process import run_hrimport
from tests.staff_files import HEADER, person, write_config, write_csv

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


# ------------------------------------------------------------------------------------- ZIP bombs, blank tails

# A run reading a small file peaks at ~200 MB (pandas, pyarrow and the readers imported).
SMALL_RUN_MB = 400


def write_workbook(path: Path, rows: list[dict[str, str]]) -> Path:
    import xlsxwriter  # the test's real writer of workbooks

    workbook = xlsxwriter.Workbook(str(path))
    sheet = workbook.add_worksheet("Staff")
    sheet.write_row(0, 0, HEADER)
    for r, row in enumerate(rows, start=1):
        sheet.write_row(r, 0, [row[h] for h in HEADER])
    workbook.close()
    return path


def write_zip_bomb(path: Path, unpacked_mb: int) -> Path:
    """A real workbook whose sheet holds ``unpacked_mb`` MB of spaces between its rows (XML allows them):
    it packs into about 1/1000 of that, as a ZIP bomb does."""
    import zipfile

    plain = write_workbook(path.with_name("plain.xlsx"), [person(1)])
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bomb:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename != "xl/worksheets/sheet1.xml":
                bomb.writestr(info.filename, data)
                continue
            head, tail = data.split(b"<sheetData>")
            with bomb.open(info.filename, "w", force_zip64=True) as part:
                part.write(head + b"<sheetData>")
                spaces = b" " * 1_000_000
                for _ in range(unpacked_mb):
                    part.write(spaces)
                part.write(tail)
    return path


def test_a_zip_bomb_is_refused_before_it_is_unpacked(tmp_path: Path) -> None:
    # 600 MB of sheet in a 0.6 MB file: read, it took 2 GB and 80 s; refused, it takes neither.
    write_config(tmp_path / "staff.toml")
    bomb = write_zip_bomb(tmp_path / "staff.xlsx", 600)
    assert bomb.stat().st_size < 1_000_000
    done = run_hrimport("staff", "validate", "staff.toml", "staff.xlsx", cwd=tmp_path, ceiling_mb=SMALL_RUN_MB,
                        timeout=60)
    assert done.exit_code == 2
    assert done.lines == [
        ("Error: staff.xlsx would unpack to 600 MB, more than the limit of 500 MB (a damaged or hostile file?); "
        "if the workbook really is that big, raise max_unpacked_mb in the config's [source] section")
    ]


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


@pytest.mark.parametrize("rows", [[person(1)], []], ids=["one-row", "header-only"])
def test_megabytes_of_blank_lines_under_the_data_are_not_materialised(tmp_path: Path, rows: list[dict[str, str]]) -> None:
    # 2 MB of line ends (and a few of delimiters and spaces) under the header took 700 MB.
    write_config(tmp_path / "staff.toml")
    data = write_csv(tmp_path / "staff.csv", rows)
    with open(data, "a", newline="") as fh:
        fh.write("\r\n" * 1_000_000 + ",,, ,\n" * 1000 + "\n" * 1_000_000)
    done = run_hrimport("staff", "validate", "staff.toml", "staff.csv", cwd=tmp_path, ceiling_mb=SMALL_RUN_MB,
                        timeout=60)
    if rows:
        assert done.exit_code == 0, done.stderr
        assert "1 of 1 rows checked." in done.stdout
    else:
        assert done.exit_code == 2
        assert done.lines == ["Error: staff.csv has a header row (row 1) but no data rows under it"]


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


def test_a_link_to_dev_zero_is_refused_at_once(tmp_path: Path) -> None:
    # Read, it grew to 23 GB until the kernel killed the process.
    write_config(tmp_path / "staff.toml")
    (tmp_path / "staff.csv").symlink_to("/dev/zero")
    done = run_hrimport("staff", "validate", "staff.toml", "staff.csv", cwd=tmp_path, ceiling_mb=SMALL_RUN_MB,
                        timeout=60)
    assert done.exit_code == 2
    assert done.lines == [("Error: staff.csv links to /dev/zero, a device; it must be a regular file: save the "
                          "export as a file and give its path")]


def test_a_named_pipe_is_refused_instead_of_waiting_forever(tmp_path: Path) -> None:
    write_config(tmp_path / "staff.toml")
    os.mkfifo(tmp_path / "staff.csv")
    done = run_hrimport("staff", "validate", "staff.toml", "staff.csv", cwd=tmp_path, timeout=30)
    assert done.exit_code == 2
    assert done.lines == [("Error: staff.csv is a named pipe; it must be a regular file: save the export as a "
                          "file and give its path")]


def test_a_link_to_a_regular_file_is_read(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    write_csv(tmp_path / "export.csv", [person(1)])
    (tmp_path / "staff.csv").symlink_to(tmp_path / "export.csv")
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(tmp_path / "staff.csv")])
    assert result.exit_code == 0, result.output
    assert "1 of 1 rows checked." in result.output


# ------------------------------------------------------------------------------------------ long lists


def test_a_header_of_10000_names_gives_a_short_error_line(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    header = [f"Column number {j} of a very wide export" for j in range(10_000)]
    data = write_csv(tmp_path / "staff.csv", [dict.fromkeys(header, "x")], header=header)
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert len(line) < 500
    assert line.startswith("Error: staff.csv: column(s) 'Employee ID', 'Name', 'Email', 'Country', 'Title' and "
                           "10 more named in the config are not in the file (header row 1 has 'Column number 0 ")
    assert line.endswith("and 9,995 more)")


def test_a_name_repeated_across_10000_columns_gives_a_short_error_line(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    header = HEADER + [f"Extra {j % 20}" for j in range(10_000)]
    with open(tmp_path / "staff.csv", "w", newline="") as fh:
        fh.write(",".join(header) + "\n" + ",".join(person(1).values()) + "\n")
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(tmp_path / "staff.csv")])
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert len(line) < 500
    assert "'Extra 0' (columns Q, AK, BE, BY, CS and 495 more); " in line
    assert "and 15 more; rename them so each is unique" in line


def test_a_name_twice_still_names_both_columns(tmp_path: Path) -> None:
    config = write_config(tmp_path / "staff.toml")
    header = [*HEADER, "Email", "Name"]
    data = write_csv(tmp_path / "staff.csv", [person(1)], header=header)
    result = CliRunner().invoke(main, ["staff", "validate", str(config), str(data)])
    assert result.output.endswith("staff.csv: the header row (row 1) has duplicate column names: 'Name' (columns B "
                                  "and R); 'Email' (columns C and Q); rename them so each is unique\n")
