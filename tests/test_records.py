"""The valid rows an import holds until it sends them come back exactly as they were built."""

from __future__ import annotations

import pickle
from array import array
from pathlib import Path
from typing import Any

import pytest

from hrimport.config import load_config
from hrimport.fields import staff_output_names
from hrimport.imports.records import PendingRecords, SentRows
from hrimport.imports.staff import prepare_staff
from hrimport.outcomes import (
    Outcome,
    OutcomeRows,
    OutcomesByRow,
    PlainRows,
    Problem,
    RowOutcome,
    RunInfo,
    RunResult,
    SourceInfo,
)
from hrimport.service.readback import ReadBack
from hrimport.service.staff import StaffRecord, build_elements, build_payloads, element_json
from hrimport.stores import PickledRows, SpooledList, TextColumn
from tests.staff_files import person, write_config, write_csv

KEYS = ("customer_system_id", "name", "system_email", "country", "is_intern", "is_employee", "customer_data_type")


def built(n: int, **extra: Any) -> dict[str, Any]:
    """A payload as ``build_payloads`` makes it: fields in the table's order, empty ones left out."""
    payload: dict[str, Any] = {"customer_system_id": f"E{n:04}", "name": f"Zoë {n}", "country": "SG"}
    if n % 2:
        payload["system_email"] = f"p{n}@example.com"
        payload = {k: payload[k] for k in KEYS if k in payload}
    return {**payload, **extra}


def test_each_record_comes_back_with_its_payload_in_its_own_order_and_the_text_it_is_sent_as() -> None:
    payloads = [built(1), built(2), built(3, is_intern=True, is_employee=False),
                built(4, customer_data_type=[{"name": "Cost centre", "value": "陈 7"}])]
    records = PendingRecords()
    records.extend(range(2, 6), [p["customer_system_id"] for p in payloads], [p["name"] for p in payloads], payloads,
                   KEYS)
    for record, payload in zip(records, payloads):
        assert list(record.payload.items()) == list(payload.items())  # same keys, same order
        assert record.sent_json == element_json(StaffRecord(record.row, record.external_id, record.name, payload))
        assert element_json(record) == record.sent_json


def test_a_payload_that_is_not_its_own_element_is_kept_as_it_is() -> None:
    """Out of the expected order, without its external id or with a customer id: kept and sent as before."""
    odd = [{"name": "Ann", "customer_system_id": "E1"}, {"name": "Bo"}, {"customer_system_id": "E3", "customer_id": "99"}]
    records = PendingRecords()
    records.extend([2, 3, 4], ["E1", "E2", "E3"], ["Ann", "Bo", ""], odd, KEYS)
    for record, payload in zip(records, odd):
        assert list(record.payload.items()) == list(payload.items())
        assert record.sent_json is None
        assert element_json(record) == element_json(StaffRecord(record.row, record.external_id, record.name, payload))
    kept = records.keeping(lambda row, _: row != 3)
    assert [r.payload for r in kept] == [odd[0], odd[2]]


def test_the_elements_made_from_the_columns_are_the_payloads_as_sent(tmp_path: Path) -> None:
    """``build_elements`` writes each row's element without making its payload: the very text
    ``element_json`` gives of the payload ``build_payloads`` makes, and the records hold that payload."""
    rows = [person(1), person(2, **{"Is Intern": "yes"}), person(3, **{"Is Intern": "yes", "Is Employee": "no"}),
            person(4, **{"Is Manager": "no", "Cost Centre": "", "Title": 'Lead "Ops" \\ 陈\u2028'}),
            person(5, Name="Zoë Ünal", Gender="", **{"Birth Date": "1990-02-03", "Is Intern": "no"})]
    cfg = load_config(write_config(tmp_path / "staff.toml"))
    _, mapped, problems, _ = prepare_staff(cfg, write_csv(tmp_path / "staff.csv", rows))
    assert problems == {}
    positions = list(range(len(mapped)))
    payloads = build_payloads(mapped, positions)
    elements = build_elements(mapped, positions)
    ids = mapped.frame["customer_system_id"].tolist()
    assert elements is not None
    assert [e.text for e in elements] == [element_json(StaffRecord(0, ext, "", p)) for ext, p in zip(ids, payloads)]
    assert payloads[1]["is_employee"] is False and "customer_data_type" not in payloads[3]

    records = PendingRecords()
    records.extend_elements(mapped.row_numbers, ids, mapped.frame["name"].tolist(), elements)
    assert [list(r.payload.items()) for r in records] == [list(p.items()) for p in payloads]
    assert [r.sent_json for r in records] == [e.text for e in elements]
    # what the answer is checked against: the fields the service echoes, as the element holds them
    readback = ReadBack()
    for record, payload in zip(records, payloads):
        assert record.compared is not None
        user = {key: payload[name] for name, key in staff_output_names().items() if name in payload}
        assert readback.unaltered(*record.compared, user) and readback.warnings(record.row, payload, user) == ()
        cut = {**user, "job_title": "Analy"}
        assert not readback.unaltered(*record.compared, cut) and readback.warnings(record.row, payload, cut)
    # a batch's answers are told at once, as each alone
    users = [{key: payload[name] for name, key in staff_output_names().items() if name in payload} for payload in payloads]
    compared = [record.compared for record in records]
    assert readback.unaltered_many(compared, users) == [True] * len(payloads)  # type: ignore[arg-type]
    cut = [{**user, "job_title": "Analy"} for user in users]
    assert readback.unaltered_many(compared, cut) == [False] * len(payloads)  # type: ignore[arg-type]


def test_an_answer_told_unaltered_in_a_batch_is_one_no_warning_is_found_in(tmp_path: Path) -> None:
    """``unaltered_many`` says True only where ``warnings`` would find nothing, and wherever ``unaltered``
    says True: an answer storing the same values in another case, type or form is looked at row by row."""
    rows = [person(1), person(2, **{"Is Intern": "yes"}), person(3, Gender="")]
    cfg = load_config(write_config(tmp_path / "staff.toml"))
    _, mapped, _, _ = prepare_staff(cfg, write_csv(tmp_path / "staff.csv", rows))
    positions = list(range(len(mapped)))
    elements = build_elements(mapped, positions)
    assert elements is not None
    records = PendingRecords()
    records.extend_elements(mapped.row_numbers, mapped.frame["customer_system_id"].tolist(),
                            mapped.frame["name"].tolist(), elements)
    readback = ReadBack()
    names = staff_output_names()
    answers: list[tuple[StaffRecord, Any]] = []
    for record in records:
        payload = dict(record.payload)
        user = {key: payload[name] for name, key in names.items() if name in payload}
        answers += [(record, user), (record, None), (record, {**user, "gender": str(user.get("gender")).upper()}),
                    (record, {k: v for k, v in user.items() if k != "country"}),
                    (record, {**user, "is_intern": 1 if user.get("is_intern") is True else user.get("is_intern")}),
                    (record, {**user, "job_start_date": str(user["job_start_date"]).replace("-", "/")})]
    told = readback.unaltered_many([r.compared for r, _ in answers], [u for _, u in answers])  # type: ignore[misc]
    for (record, user), same in zip(answers, told):
        assert record.compared is not None
        if readback.unaltered(*record.compared, user):
            assert same
        if same:
            assert readback.warnings(record.row, record.payload, user) == ()
    assert told[0] and not told[1] and not told[3]  # as stored; no record; a field not stored
    # texts that are not one element's fields each are told row by row, as ``unaltered`` tells them
    odd = [(("name",), '"name":"A"},{"x":1'), (("name",), '"name":')]
    assert readback.unaltered_many(odd, [{"name": "A"}] * 2) == [readback.unaltered(*c, {"name": "A"}) for c in odd]


def test_the_rows_answered_alike_are_kept_as_arrays_and_come_back_in_source_order() -> None:
    # answers arrive out of order with several requests in flight; a rejected row keeps its problems
    sent = SentRows()
    rejected = RowOutcome(7, "E7", "Zoë 7", Outcome.REJECTED, (Problem("unknown-staff", "Row 7: no."),), "no")
    sent.add([RowOutcome(r, f"E{r}", f"Zoë {r}", Outcome.ADDED, message="Add Successfully") for r in (9, 8)])
    sent.add([RowOutcome(2, "E2", "李 2", Outcome.UPDATED, message="Updated"), rejected,
              RowOutcome(3, "E3", "Ng 3", Outcome.ADDED, message="Add Successfully")])

    assert sent.listed == [rejected] and len(sent) == 5
    groups = {(p.outcome, p.message): list(p.outcomes()) for p in sent.alike()}
    assert groups == {
        (Outcome.ADDED, "Add Successfully"): [RowOutcome(r, f"E{r}", name, Outcome.ADDED, message="Add Successfully")
                                              for r, name in ((3, "Ng 3"), (8, "Zoë 8"), (9, "Zoë 9"))],
        (Outcome.UPDATED, "Updated"): [RowOutcome(2, "E2", "李 2", Outcome.UPDATED, message="Updated")],
    }


def test_a_service_wording_every_answer_its_own_way_has_its_rows_kept_as_they_are() -> None:
    sent = SentRows()
    answers = [RowOutcome(r, f"E{r}", "", Outcome.ADDED, message=f"Added staff {r}")
               for r in range(2, SentRows.MAX_GROUPS + 12)]
    sent.add(answers)
    assert sum(len(p) for p in sent.alike()) == SentRows.MAX_GROUPS
    assert sent.listed == answers[SentRows.MAX_GROUPS:]


def test_the_stores_of_a_runs_rows_index_and_slice_as_a_list_does() -> None:
    rows = OutcomeRows()
    rows.add([RowOutcome(3, "E3", "", Outcome.INVALID)],
             PlainRows(array("q", [2, 4, 5]), ["E2", "E4", "E5"], ["", "", ""], Outcome.VALID))
    ids = TextColumn()
    ids.extend(["E2", "E3"])
    ids.extend(["E4", "E5"])
    for store, as_a_list in ((rows, list(rows)), (ids, ["E2", "E3", "E4", "E5"])):
        for index in range(-4, 4):
            assert store[index] == as_a_list[index]
        for cut in (slice(None), slice(None, None, -1), slice(1, 3), slice(-2, None), slice(3, 1), slice(0, 4, 2)):
            assert store[cut] == as_a_list[cut], cut
        with pytest.raises(IndexError):
            store[4]


def _chunk_of_outcomes(first: int) -> tuple[list[RowOutcome], PlainRows]:
    """Ten rows from ``first``: some invalid with their cells, one valid with a warning, the rest plain."""
    listed = [RowOutcome(first + k, f"E{first + k}", f"Zoë {first + k}", Outcome.INVALID,
                         (Problem("not-a-date", f"Row {first + k}: 'x' is not a date.", first + k, "Hire Date",
                                  "job_start_date", "x"),),
                         f"Row {first + k}: 'x' is not a date.", source={"Employee ID": f"E{first + k}", "Hire Date": "x"})
              for k in (1, 4, 5)]
    listed.append(RowOutcome(first + 7, f"E{first + 7}", "", Outcome.VALID,
                             (Problem("name-order", "a warning", first + 7, severity="warning"),)))
    plain = [first + k for k in (0, 2, 3, 6, 8, 9)]
    return listed, PlainRows(array("q", plain), [f"E{r}" for r in plain], ["" for _ in plain], Outcome.VALID)


def test_rows_to_fix_past_the_ones_held_wait_in_a_file_and_come_back_the_same() -> None:
    # a file whose every row is invalid, or that the service rejects whole: past ``held`` rows of their own, the
    # outcomes (each with its problems and cells) are read back from a temporary file, not held in memory
    held, spooled = OutcomeRows(held=1_000_000), OutcomeRows(held=4)
    for first in range(2, 62, 10):
        for rows in (held, spooled):
            listed, plain = _chunk_of_outcomes(first)
            rows.add(listed, plain)

    assert spooled._spool is not None and held._spool is None
    assert list(spooled) == list(held) and len(spooled) == len(held) == 60
    assert spooled[::-1] == held[::-1] and spooled[17] == held[17]
    assert spooled.outcome_counts() == held.outcome_counts() == {Outcome.INVALID: 18, Outcome.VALID: 42}
    assert spooled.warned() == held.warned() == 6 and spooled.attention() == 18
    assert sorted(spooled.row_numbers()) == sorted(held.row_numbers()) == list(range(2, 62))
    assert [[o.row for o in listed] for listed, _ in spooled.segments()] == [
        [o.row for o in listed] for listed, _ in held.segments()]
    attention = RunResult(_run_info(), spooled).need_attention
    assert len(attention) == 18 and list(attention) == [o for o in held if not o.outcome.is_success]
    assert attention[0].source == {"Employee ID": "E3", "Hire Date": "x"} and attention[-1].row == 57


def test_rows_handed_to_another_process_by_a_file_come_back_the_same_each_time(tmp_path: Path) -> None:
    listed, _ = _chunk_of_outcomes(2)
    rows = listed * 700  # more than one piece of the file
    path = tmp_path / "rows.pickle"

    handed = PickledRows.write(iter(rows), path, path.open("wb"))
    again = pickle.loads(pickle.dumps(handed))  # what reaches the other process: the path and the count

    assert len(again) == 2_800 and list(again) == rows and list(again) == rows and again[-1] == rows[-1]
    assert len(pickle.dumps(handed)) < 300


def _run_info() -> RunInfo:
    source = SourceInfo(path="staff.csv", name="staff.csv", format="csv", size=1, sha256="0")
    return RunInfo(kind="staff", job="test", source=source, service_url="", customer_id="99", started_at="")


def test_a_long_list_of_problem_lines_comes_back_in_order_each_time_it_is_read() -> None:
    lines = SpooledList[int](held=3)
    for n in range(4_500):  # held, then two pieces in the file, then a tail not yet written
        lines.append(n)
    assert len(lines) == 4_500 and list(lines) == list(range(4_500)) and list(lines) == list(range(4_500))


def test_outcomes_gathered_in_any_order_are_taken_back_a_range_of_rows_at_a_time_in_row_order() -> None:
    # the rows the service answered come in the order it answered (several requests in flight, a batch
    # resent without its rejected rows); past ``held`` they wait in runs in a file
    rows = [r for start in range(2, 10_002, 100) for r in reversed(range(start, start + 100))]
    gathered = OutcomesByRow(held=7)
    gathered += (RowOutcome(r, f"E{r}", "", Outcome.REJECTED, message=f"Row {r}: no.") for r in rows)
    assert len(gathered) == 10_000

    taken = [gathered.taken(last) for last in (150, 2_000, 2_001, 9_999, 20_000)]

    assert [[o.row for o in part] for part in taken] == [
        list(range(2, 151)), list(range(151, 2_001)), [2_001], list(range(2_002, 10_000)), [10_000, 10_001]]
    assert taken[1][0] == RowOutcome(151, "E151", "", Outcome.REJECTED, message="Row 151: no.")
    assert len(gathered) == 0 and list(gathered.drained()) == []
    gathered += (RowOutcome(r, f"E{r}", "", Outcome.INVALID) for r in reversed(range(2, 3_002)))
    assert sorted(o.row for o in gathered.drained()) == list(range(2, 3_002)) and len(gathered) == 0
    assert gathered.taken(10_000) == []
