"""The time-off stage's small parts: leave-type names, half-day markers, day counts, overlaps, the ledger."""

from __future__ import annotations

import sqlite3
import threading
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from hrimport.config import parse_config
from hrimport.errors import ConfigError
from hrimport.state.ledger import LEDGER_FILE, LedgerKey, open_ledger
from hrimport.timeoff.days import DayKey, calendar_days, format_days, parse_days
from hrimport.timeoff.halves import HalfDayError, halves_for, parse_half
from hrimport.timeoff.leave_types import closest_names, detect_lang, match_leave_type
from hrimport.timeoff.rows import TimeOffRow, check_row, find_overlaps
from hrimport.timeoff.settings import TimeOffSettings
from hrimport.timeoff.table import HALVES_UNREAD, LeaveTable, ValidRows


@pytest.mark.parametrize(("written", "english", "sent_zh"), [
    ("Annual Leave", "Annual Leave", "年假"),
    ("annual  leave", "Annual Leave", "年假"),
    ("Annual", "Annual Leave", "年假"),
    ("sick-leave", "Sick Leave", "病假"),
    ("年假", "Annual Leave", "年假"),
    ("年休假", "Annual Leave", "年假"),  # an alias: sent as the platform's name
    ("丧假", "Bereavement Leave", "丧假"),  # Simplified
    ("喪假", "Bereavement Leave", "喪假"),  # Traditional stays Traditional
    ("陪產假", "Paternity Leave", "陪產假"),
    ("补休", "Compensatory Leave", "补休"),
    ("補休", "Compensatory Leave", "補休"),
])
def test_leave_types_are_recognised_in_english_simplified_and_traditional_chinese(
        written: str, english: str, sent_zh: str) -> None:
    match = match_leave_type(written)
    assert match is not None
    assert match.leave_type.en == english
    assert match.send_name("EN") == english
    assert match.send_name("ZH") == sent_zh


def test_the_language_is_detected_from_the_script_of_the_name() -> None:
    assert detect_lang("Annual Leave") == "EN"
    assert detect_lang("年假") == "ZH"
    assert detect_lang("育嬰假") == "ZH"


def test_an_unknown_type_is_sent_as_written_with_the_closest_known_names_unless_strict() -> None:
    """The platform publishes no list of its leave types: ours doubts a name, never refuses it by default."""
    assert match_leave_type("Birthday Leave") is None
    assert "Study Leave" in closest_names("Studdy Leave")
    assert closest_names("年休")[0] in ("年休假", "年假")
    where = {"leave_type": "Leave Type"}
    match, lang, problems = check_row(row=7, leave_type=" Anual Leave", lang_cell="", config_lang=None,
                                      start="2024-01-02", end="2024-01-02", sources=where)
    assert match is not None and not match.listed and (match.send_name("EN"), lang) == ("Anual Leave", "EN")
    (warning,) = problems
    assert (warning.code, warning.severity, warning.column, warning.value) == (
        "unknown-leave-type", "warning", "Leave Type", " Anual Leave")
    assert warning.message == (
        "Row 7, column 'Leave Type': ' Anual Leave' is not among the leave types hrimport knows (closest known: "
        "Annual Leave, Parental Leave, Personal Leave); kept as written, for the platform to take or refuse (the platform publishes no list of "
        "its types; if it is a typo, correct it, or add a value map under [timeoff.values.leave_type] if it is "
        "the company's own name for one of them).")
    match, lang, problems = check_row(row=7, leave_type="志愿假", lang_cell="", config_lang=None,
                                      start="2024-01-02", end="2024-01-02", sources=where)
    assert match is not None and (match.send_name("ZH"), lang) == ("志愿假", "ZH")

    match, _, problems = check_row(row=7, leave_type="Anual Leave", lang_cell="", config_lang=None,
                                   start="2024-01-02", end="2024-01-02", sources=where,
                                   strict=frozenset({"unknown-leave-type"}))
    (error,) = problems
    assert match is None and error.severity == "error"
    assert error.message.endswith("not sent ([timeoff] strict_checks lists unknown-leave-type): correct it, or "
                                  "add a value map under [timeoff.values.leave_type] if it is the company's own "
                                  "name for one of them.")


def test_lang_comes_from_the_column_then_the_config_then_the_script() -> None:
    def lang(cell: str, config: str | None, name: str = "年假") -> str | None:
        return check_row(row=2, leave_type=name, lang_cell=cell, config_lang=config,  # type: ignore[arg-type]
                         start="2024-01-02", end="2024-01-02", sources={})[1]

    assert lang("", None) == "ZH"
    assert lang("", None, "Annual Leave") == "EN"
    assert lang("", "EN") == "EN"
    assert lang("zh", "EN", "Annual Leave") == "ZH"
    _, _, problems = check_row(row=2, leave_type="年假", lang_cell="FR", config_lang=None,
                               start="2024-01-02", end="2024-01-02", sources={"lang": "Language"})
    assert [p.code for p in problems] == ["not-an-allowed-value"]


@pytest.mark.parametrize(("cells", "one_day", "expected"), [
    (("", "", ""), False, (False, False)),
    (("yes", "", ""), False, (True, False)),
    (("", "PM", ""), False, (False, True)),
    (("Second Half", "First Half", ""), False, (True, True)),
    (("", "", "上午"), True, (True, False)),
    (("", "", "下午"), False, (True, False)),  # starts at noon
    (("", "", "AM"), False, (False, True)),  # back at noon on the last day
    (("", "", "true"), True, (True, False)),
    (("否", "全天", "Full Day"), False, (False, False)),
])
def test_half_day_markers_become_the_half_start_and_end_flags(
        cells: tuple[str, str, str], one_day: bool, expected: tuple[bool, bool]) -> None:
    start, end, day = cells
    assert halves_for(start_cell=start, end_cell=end, day_cell=day, one_day=one_day) == expected


@pytest.mark.parametrize(("cells", "code", "which"), [
    (("maybe", "", ""), "not-a-half-day-marker", "half_start"),
    (("", "", "yes"), "ambiguous-half-day", "half_day"),
])
def test_unusable_half_day_values_are_problems(cells: tuple[str, str, str], code: str, which: str) -> None:
    with pytest.raises(HalfDayError) as info:
        halves_for(start_cell=cells[0], end_cell=cells[1], day_cell=cells[2], one_day=False)
    assert (info.value.code, info.value.which) == (code, which)
    assert parse_half(" first  HALF ") is not None


def test_calendar_days_count_every_day_less_the_halves() -> None:
    assert calendar_days(DayKey("MY", "2024-06-08", "2024-06-09", False, False)) == 2
    assert calendar_days(DayKey("MY", "2024-06-08", "2024-06-09", True, False)) == Decimal("1.5")
    assert calendar_days(DayKey("MY", "2024-06-08", "2024-06-08", True, True)) == Decimal("0.5")
    assert [format_days(Decimal(x)) for x in ("2", "2.0", "3.50", "0.5")] == ["2", "2", "3.5", "0.5"]
    assert parse_days("3.5") == Decimal("3.5") and parse_days("three") is None and parse_days("nan") is None


def _row(pos: int, start: str, end: str, person: str = "000101") -> TimeOffRow:
    match = match_leave_type("Annual Leave")
    assert match is not None
    return TimeOffRow(pos=pos, row=pos + 2, external_id=person, match=match, lang="EN", country="SG",
                      start=start, end=end, half_start=False, half_end=False, total_given="")


def test_rows_of_one_person_overlapping_each_other_are_all_flagged() -> None:
    rows = [_row(0, "2024-02-20", "2024-02-23"), _row(1, "2024-02-22", "2024-02-22"),
            _row(2, "2024-02-24", "2024-02-26"), _row(3, "2024-02-20", "2024-02-23", person="000102")]
    problems = find_overlaps(rows, imported=set())
    assert sorted(problems) == [0, 1]
    assert problems[1][0].code == "overlaps-in-file"
    assert "row 2 (2024-02-20..2024-02-23)" in problems[1][0].message


def _table(rows: list[tuple[int, str, str, str, int, int]]) -> LeaveTable:
    """A ``LeaveTable`` of rows (row, external id, start, end, half days, what it sends as one number)."""
    match = match_leave_type("Annual Leave")
    assert match is not None
    numbers, ids, starts, ends, halves, sends = (list(column) for column in zip(*rows))
    n = len(rows)
    table = LeaveTable(keep_notes=False)
    table.extend(ValidRows(rows=numbers, ids=ids, names=ids, matches=[match] * n, langs=["EN"] * n,
                           countries=["SG"] * n, starts=starts, ends=ends, halves=halves, given=[""] * n,
                           notes=[""] * n, decisions=[""] * n,
                           sent=[np.array([[digest, digest * 7] for digest in sends], dtype=np.uint64)]))
    table.close()
    return table


def test_a_leave_listed_twice_is_told_apart_from_rows_that_overlap_it() -> None:
    table = _table([
        (2, "000101", "2024-03-04", "2024-03-08", 0, 1),
        (3, "000102", "2024-03-04", "2024-03-08", 0, 2),
        (4, "000101", "2024-03-11", "2024-03-11", 0, 3),  # another leave of the person, on other days
        (5, "000101", "2024-03-04", "2024-03-08", 0, 1),  # row 2 again
        (6, "000102", "2024-03-04", "2024-03-08", 0, 2),  # row 3 again, but row 7 overlaps both
        (7, "000102", "2024-03-08", "2024-03-08", 0, 4),
        (8, "000103", "2024-03-04", "2024-03-04", 1, 5),
        (9, "000103", "2024-03-04", "2024-03-04", 0, 5),  # row 8 but for its half day
        (10, "000101", "2024-03-04", "2024-03-08", 0, 1),  # row 2 a third time
    ])
    assert table.repeats() == {3: 0, 8: 0}  # by position: rows 5 and 10 repeat row 2
    assert table.repeated.tolist() == [False] * 3 + [True] + [False] * 4 + [True]
    assert sorted(table.overlaps()) == [1, 4, 5, 6, 7]  # rows 3, 6 and 7; rows 8 and 9


def test_a_row_whose_half_days_were_not_read_claims_none_in_the_report() -> None:
    table = _table([
        (2, "000101", "2024-03-04", "2024-03-06", HALVES_UNREAD, 1),
        (3, "000102", "2024-03-04", "2024-03-04", HALVES_UNREAD, 2),  # one day: not "half day" either
        (4, "000103", "2024-03-04", "2024-03-04", 1, 3),
        (5, "000104", "2024-03-04", "2024-03-06", 2, 4),
    ])
    rows = table.rows(range(4))
    assert [(r.halves_read, r.half_start, r.half_end) for r in rows] == [
        (False, False, False), (False, False, False), (True, True, False), (True, False, True)]
    # the report's column of many rows, and of one row, say the same
    in_columns = list(table.detail_columns(np.arange(4))["half_days"])
    assert in_columns == [r.details()["half_days"] for r in rows] == ["not read", "not read", "half day", "end"]


def test_a_row_already_imported_is_named_but_not_flagged() -> None:
    rows = [_row(0, "2024-02-20", "2024-02-23"), _row(1, "2024-02-23", "2024-02-23")]
    problems = find_overlaps(rows, imported={0})
    assert list(problems) == [1]
    assert "already imported" in problems[1][0].message


def test_the_ledger_remembers_accepted_records_across_opens(tmp_path: Path) -> None:
    key = LedgerKey("http://x/sandbox", "99", "000101", "Annual Leave", "2024-03-04", "2024-03-08")
    other = LedgerKey("https://prod/api:v1", *list(vars(key).values())[1:])
    with open_ledger(tmp_path) as ledger:
        assert ledger.find([key]) == {}
        ledger.remember(key, record_id=7, total_days="5", source_file="leave.xlsx", source_row=3)
    with open_ledger(tmp_path) as ledger:
        found = ledger.find([key, other])
    assert list(found) == [key]  # another service is another ledger key
    assert (found[key].record_id, found[key].total_days, found[key].source_row) == (7, "5", 3)
    mode = sqlite3.connect(tmp_path / LEDGER_FILE).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_a_ledger_written_before_sending_states_existed_reads_as_stored(tmp_path: Path) -> None:
    # the ledger file as the first time-off import wrote it: no status, no body
    old = sqlite3.connect(tmp_path / LEDGER_FILE)
    old.executescript("""
        CREATE TABLE accepted (service TEXT NOT NULL, customer_id TEXT NOT NULL, external_id TEXT NOT NULL,
            leave_type TEXT NOT NULL, start_date TEXT NOT NULL, end_date TEXT NOT NULL, record_id INTEGER,
            total_days TEXT NOT NULL, source_file TEXT NOT NULL, source_row INTEGER NOT NULL,
            accepted_at TEXT NOT NULL,
            PRIMARY KEY (service, customer_id, external_id, leave_type, start_date, end_date));
        INSERT INTO accepted VALUES ('s', '99', '000101', 'Annual Leave', '2024-03-04', '2024-03-08', 7, '5',
            'leave.xlsx', 3, '2024-04-01T09:00:00+08:00');
    """)
    old.close()
    key = LedgerKey("s", "99", "000101", "Annual Leave", "2024-03-04", "2024-03-08")
    new = LedgerKey("s", "99", "000102", "Annual Leave", "2024-03-04", "2024-03-08")
    with open_ledger(tmp_path) as ledger:
        assert ledger.find([key])[key].stored
        ledger.sending(new, body={"total_days": "5"}, total_days="5", source_file="may.xlsx", source_row=2)
        assert ledger.find([new])[new].status == "sending"
        ledger.sending(new, body={"total_days": "4"}, total_days="4", source_file="june.xlsx", source_row=9)
        assert ledger.find([new])[new].source_file == "may.xlsx"  # the first send is the one to find again
        ledger.remember(new, record_id=8, total_days="5", source_file="june.xlsx", source_row=9)
        entry = ledger.find([new])[new]
    assert (entry.status, entry.record_id, entry.source_file, entry.source_row) == ("stored", 8, "may.xlsx", 2)


def test_the_ledger_takes_writes_from_many_threads(tmp_path: Path) -> None:
    with open_ledger(tmp_path) as ledger:
        def write(n: int) -> None:
            ledger.remember(LedgerKey("s", "99", f"{n:06d}", "Sick Leave", "2024-01-01", "2024-01-01"),
                            record_id=n, total_days="1", source_file="f", source_row=n)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(ledger.entries()) == 40


def _settings(**timeoff: object) -> TimeOffSettings:
    data = {"timeoff": {"columns": {"Id": "customer_system_id", "Type": "leave_type", "From": "start_date",
                                    "To": "end_date", "Country": "country"}, **timeoff}}
    cfg = parse_config(data, Path("leave.toml"))
    assert cfg.timeoff is not None
    return TimeOffSettings.from_mapping(cfg.timeoff, "leave.toml")


def test_the_timeoff_section_keys_are_checked() -> None:
    s = _settings(lang="zh", default_country="sg", half_day="Half Day")
    assert (s.lang, s.default_country, s.half_columns) == ("ZH", "SG", {"half_day": "Half Day"})
    assert _settings().lang is None  # auto
    with pytest.raises(ConfigError, match='lang must be "EN", "ZH" or "auto"'):
        _settings(lang="French")
    with pytest.raises(ConfigError) as named:
        _settings(default_country="Singapore")
    assert str(named.value) == ("leave.toml [timeoff] default_country must be an ISO 3166 alpha-2 code such as SG, or "
                                "a region's ISO 3166-2 code such as US-CA, not 'Singapore': write SG for Singapore")
    with pytest.raises(ConfigError, match="half_start must name a column"):
        _settings(half_start=True)
    assert _settings().strict_checks == frozenset()  # an unknown leave type is sent, with a warning
    assert _settings(strict_checks=["unknown-leave-type"]).strict_checks == {"unknown-leave-type"}
    with pytest.raises(ConfigError) as refused:
        _settings(strict_checks=["country-change-incomplete"])
    assert str(refused.value) == ("leave.toml [timeoff] strict_checks: 'country-change-incomplete' is not a check "
                                  'that can be made strict (one of "unknown-leave-type", "region-code", '
                                  '"not-a-half-day-marker", "ambiguous-half-day", "overlaps-imported", '
                                  '"columns-disagree", "scientific-notation", "hidden-row", "hidden-column", "invisible-character")')


def test_a_region_code_may_be_the_default_country_or_held_back() -> None:
    assert _settings(default_country=" us-ca ").default_country == "US-CA"  # as ISO 3166-2 writes it
    with pytest.raises(ConfigError) as refused:
        _settings(default_country="US-XX")
    assert str(refused.value) == ("leave.toml [timeoff] default_country must be an ISO 3166 alpha-2 code such as SG, "
                                  "or a region's ISO 3166-2 code such as US-CA, not 'US-XX'")
    with pytest.raises(ConfigError, match="not 'California'"):
        _settings(default_country="California")  # a region's name is not read as its code
    assert _settings(strict_checks=["region-code"]).strict_checks == {"region-code"}
