"""Before sending: the plan says what a month's staff file changes; the drift guard holds a suspicious one.

Real imports into the sandbox over HTTP; the state folder is the one the first month's import wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hrimport.changes.plan import PlanInput, make_plan
from hrimport.state.store import AcceptedRecord, fingerprint
from tests.staff_files import HEADER, person, write_config, write_csv
from tests.test_staff_import import hrimport, latest_run

pytestmark = pytest.mark.usefixtures("instant_retries")


def month(tmp_path: Path, sandbox: Any, rows: list[dict[str, str]], name: str, *args: str) -> Any:
    config = tmp_path / "staff.toml"
    if not config.exists():
        write_config(config)
    data = write_csv(tmp_path / name, rows, [*HEADER, *(k for k in rows[0] if k not in HEADER)])
    return hrimport("staff", *args, str(config), str(data), "--report-dir", str(tmp_path / "reports"),
                    base_url=sandbox.base_url)


def test_a_second_month_plans_exactly_its_hires_leavers_and_changes(tmp_path: Path, sandbox: Any) -> None:
    config = write_config(tmp_path / "staff.toml")  # with a last working day column, for leavers
    mapping = '"Move Date" = "new_country_effective_date"\n'
    config.write_text(config.read_text().replace(mapping, mapping + '"Last Day" = "last_working_day"\n'))
    october = [person(n, **{"Last Day": ""}) for n in range(1, 13)]
    assert month(tmp_path, sandbox, october, "october.csv", "import").exit_code == 0

    november = [dict(p) for p in october]
    november[0]["Title"] = "Senior Analyst"
    november[1]["Country"] = "SG"
    november[2]["Email"] = "new.address3@acme.example"
    november[3]["Last Day"] = "2024-11-29"  # a leaver
    november += [person(13, **{"Last Day": ""}), person(14, **{"Last Day": ""})]
    result = month(tmp_path, sandbox, november, "november.csv", "plan", "--json")

    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["counts"] == {"new": 2, "changed": 4, "unchanged": 8, "invalid": 0, "missing": 0}
    assert plan["fields"] == {"job_title": 1, "country": 1, "system_email": 1, "last_working_day": 1}
    assert [e["external_id"] for e in plan["highlights"]["new_hires"]["examples"]] == ["000013", "000014"]
    assert [e["external_id"] for e in plan["highlights"]["leavers"]["examples"]] == ["000004"]
    assert plan["highlights"]["job_changes"]["examples"][0]["changes"] == "job_title: Analyst -> Senior Analyst"
    assert plan["highlights"]["country_changes"]["count"] == 1
    assert plan["highlights"]["email_changes"]["examples"][0]["changes"] == (
        "system_email: person3@acme.example -> new.address3@acme.example")
    assert sandbox.staff(99) and len(sandbox.staff(99)) == 12  # a plan sends nothing
    folder = latest_run(tmp_path).parent
    payloads = [json.loads(line) for line in (folder / "payloads.jsonl").read_text().splitlines()]
    assert [len(b["bulk_staff_data"]) for b in payloads] == [14] and payloads[0]["customer_id"] == "99"
    assert "demo-customer-99" not in (folder / "payloads.jsonl").read_text()


def test_a_file_with_forty_percent_fewer_people_is_held_until_accepted(tmp_path: Path, sandbox: Any) -> None:
    october = [person(n) for n in range(1, 21)]
    assert month(tmp_path, sandbox, october, "october.csv", "import").exit_code == 0
    shrunk = [dict(p, Title="Lead") for p in october[:12]]
    sandbox.clear_requests()

    held = month(tmp_path, sandbox, shrunk, "november.csv", "import")
    assert held.exit_code == 5, held.output
    assert "Held for review, nothing sent: headcount down 40%: 20 people were accepted from this job, this " \
           "file has 12" in held.stdout
    assert "8 of the 20 people accepted before (40%) are not in this file, e.g. 000013 Person 13" in held.stdout
    assert "'Title' (job_title) changes for 12 of 12 people (100%)" in held.stdout
    assert not [r for r in sandbox.requests() if r["path"].endswith("bulk_add_edit_staff")]
    summary = json.loads(latest_run(tmp_path).read_text())
    assert summary["exit_code"] == 5 and summary["counts"]["not_sent"] == 12

    released = month(tmp_path, sandbox, shrunk, "november.csv", "import", "--accept-drift")
    assert released.exit_code == 0, released.output
    assert {s["job_title"] for s in sandbox.staff(99) if s["customer_system_id"] <= "000012"} == {"Lead"}


def test_a_reports_subtotal_rows_are_no_people_whose_columns_were_emptied(tmp_path: Path, sandbox: Any) -> None:
    """A report with a subtotal and a total under each team of one: 24 of its 36 rows hold no person. The
    column-emptied guard counted them as people with every column empty ('Email' empty on 67% of the rows)
    and held the month; it looks at the rows holding a record."""
    october = [person(n) for n in range(1, 13)]
    assert month(tmp_path, sandbox, october, "october.csv", "import").exit_code == 0
    report = []
    for someone in october:
        report += [someone, {"Employee ID": "Subtotal", "Name": "1"}, {"Employee ID": "Total", "Name": "1"}]
    november = month(tmp_path, sandbox, report, "november.csv", "import")
    assert november.exit_code == 1, november.output
    assert "Held for review" not in november.output
    assert "Rows read: 36 = 12 updated + 24 invalid" in november.output


def test_a_held_import_leads_its_verdict_with_the_hold(tmp_path: Path, sandbox: Any) -> None:
    october = [person(n) for n in range(1, 21)]
    assert month(tmp_path, sandbox, october, "october.csv", "import").exit_code == 0
    november = october[:12]  # the same 12 people, and 8 gone: a broken export

    held = month(tmp_path, sandbox, november, "november.csv", "import")

    assert held.exit_code == 5, held.output
    verdict = ("Held for review, nothing sent: the file differs from last time more than the drift guard allows; "
               "12 need attention.")
    assert verdict in held.stdout.splitlines()
    assert json.loads(latest_run(tmp_path).read_text())["verdict"] == verdict[:-1]
    dry = month(tmp_path, sandbox, november, "november.csv", "import", "--dry-run")
    assert dry.exit_code == 5
    assert verdict.replace("Held for review, nothing sent", "Would be held for review") in dry.stdout.splitlines()


def test_leavers_released_with_accept_drift_are_not_held_again_next_month(tmp_path: Path, sandbox: Any) -> None:
    october = [person(n) for n in range(1, 21)]
    assert month(tmp_path, sandbox, october, "october.csv", "import").exit_code == 0
    november = october[:17]  # three leavers dropped from the export
    assert month(tmp_path, sandbox, november, "november.csv", "import").exit_code == 5
    assert month(tmp_path, sandbox, november, "november.csv", "import", "--accept-drift").exit_code == 0

    december = [dict(p) for p in november]
    december[0]["Title"] = "Senior Analyst"
    planned = month(tmp_path, sandbox, december, "december.csv", "plan", "--json")
    assert planned.exit_code == 0, planned.output
    plan = json.loads(planned.stdout)
    assert plan["counts"] == {"new": 0, "changed": 1, "unchanged": 16, "invalid": 0, "missing": 0}
    assert plan["accepted_before"] == 17 and plan["held"] == []
    imported = month(tmp_path, sandbox, december, "december.csv", "import")
    assert imported.exit_code == 0, imported.output
    assert "Held for review" not in imported.stdout


def test_one_leaver_a_month_never_adds_up_to_a_held_month(tmp_path: Path, sandbox: Any) -> None:
    october = [person(n) for n in range(1, 31)]
    assert month(tmp_path, sandbox, october, "october.csv", "import").exit_code == 0
    november = october[1:]  # one leaver of 30 (3%): under the 5% the guard allows
    assert month(tmp_path, sandbox, november, "november.csv", "import").exit_code == 0
    december = november[1:]  # one more of the 29 who were there in November (3%)
    result = month(tmp_path, sandbox, december, "december.csv", "import")
    assert result.exit_code == 0, result.output
    assert ("Plan: 0 new, 0 changed, 28 unchanged (sent again; hrimport run without --full skips them), "
            "0 invalid, 1 missing") in result.stdout
    assert len(sandbox.staff(99)) == 30  # leavers are never removed from the platform


def test_a_month_imported_by_hand_again_says_its_unchanged_rows_are_sent_all_the_same(
    tmp_path: Path, sandbox: Any
) -> None:
    october = [person(n) for n in range(1, 21)]
    assert month(tmp_path, sandbox, october, "october.csv", "import").exit_code == 0
    planned = month(tmp_path, sandbox, october, "october.csv", "plan")
    assert ("Plan: 0 new, 0 changed, 20 unchanged (would be sent again; hrimport run without --full skips them), "
            "0 invalid, 0 missing") in planned.stdout.splitlines()

    again = month(tmp_path, sandbox, october, "october.csv", "import")
    assert again.exit_code == 0, again.output
    assert ("Plan: 0 new, 0 changed, 20 unchanged (sent again; hrimport run without --full skips them), "
            "0 invalid, 0 missing") in again.stdout.splitlines()
    assert "Rows read: 20 = 20 updated" in again.stdout.splitlines()  # they were sent: the plan said so
    report = (latest_run(tmp_path).parent / "report.html").read_text(encoding="utf-8")
    assert "unchanged, sent again" in report
    summary = json.loads((latest_run(tmp_path).parent / "summary.json").read_text(encoding="utf-8"))
    assert summary["plan"]["unchanged_sent"] is True

    # held by the drift guard, nothing goes: the plan does not say the unchanged rows are sent
    held = month(tmp_path, sandbox, october[:10], "november.csv", "import")
    assert held.exit_code == 5, held.output
    assert "Plan: 0 new, 0 changed, 10 unchanged, 0 invalid, 10 missing" in held.stdout.splitlines()
    # the report's rows needing attention say what to do with a held file, not to correct the rows
    page = (latest_run(tmp_path).parent / "report.html").read_text(encoding="utf-8")
    assert '<h3>Held for review <code class="code">held-for-review</code>' in page
    assert "If the file is right, run the same import again with --accept-drift" in page


def test_a_fix_file_is_not_held_for_the_people_it_leaves_out(tmp_path: Path, sandbox: Any) -> None:
    rows = [person(n) for n in range(1, 21)] + [person(21, Country="Atlantis")]
    assert month(tmp_path, sandbox, rows, "october.csv", "import").exit_code == 1
    fixed = [dict(person(21), Problem="Row 22: 'Atlantis' is not a country we recognise")]
    result = month(tmp_path, sandbox, fixed, "to_fix.csv", "import")
    assert result.exit_code == 0, result.output


def test_a_fix_file_of_people_who_moved_country_is_judged_against_everyone_not_its_own_rows(
    tmp_path: Path, sandbox: Any
) -> None:
    # October: 40 people. November: 12 move country without the move date the platform needs, so those 12 go
    # to to_fix; HR fills the dates in and imports it. Its 12 country changes are 12 of the 40 people (30%),
    # as they would have been in a November with no mistake, not 12 of to_fix's 12 (100%)
    october = [person(n) for n in range(1, 41)]
    assert month(tmp_path, sandbox, october, "october.csv", "import").exit_code == 0
    movers = [person(n, Country="SG", **{"Old Country": "MY", "Move Date": ""}) for n in range(1, 13)]
    november = movers + october[12:]
    assert month(tmp_path, sandbox, november, "november.csv", "import").exit_code == 1
    fixed = [dict(p, **{"Move Date": "2024-11-01", "Problem": "Row 2: the move date is missing"}) for p in movers]

    result = month(tmp_path, sandbox, fixed, "to_fix.csv", "import")

    assert result.exit_code == 0, result.output
    assert "Held for review" not in result.output
    assert sum(1 for p in sandbox.staff(99) if p["country"] == "SG" and p["customer_system_id"] <= "000012") == 12

    # a to_fix that moves nearly everyone is still held: 35 of the 40 people accepted
    everyone = [dict(person(n, Country="CN", **{"Old Country": "MY", "Move Date": "2024-12-01"}), Problem="Row 2: x")
                for n in range(1, 36)]
    held = month(tmp_path, sandbox, everyone, "to_fix-2.csv", "import")
    assert held.exit_code == 5, held.output
    assert "Held for review, nothing sent: 'Country' (country) changes for 35 of 40 people (88%), e.g. row 2: SG -> CN" in held.output
    assert "a wrong mapping?." not in held.output  # a question ends its sentence


people = st.lists(st.tuples(st.integers(0, 30), st.booleans(), st.integers(0, 3)), max_size=25,
                  unique_by=lambda t: t[0])
before = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 3), st.booleans()), max_size=25,
                  unique_by=lambda t: t[0])


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(people, before)
def test_every_row_has_one_plan_status_and_the_missing_are_exactly_those_gone(rows: Any, accepted: Any) -> None:
    def payload(ext: str, title: int) -> dict[str, Any]:
        return {"customer_system_id": ext, "name": ext, "job_title": f"T{title}"}

    state = {f"E{n}": AcceptedRecord(f"E{n}", fingerprint(f"E{n}", payload(f"E{n}", t)), payload(f"E{n}", t),
                                     f"E{n}", "2026-10-01", "staff" if ours else "other")
             for n, t, ours in accepted}
    inputs = [PlanInput(i + 2, f"E{n}", "", payload(f"E{n}", t) if valid else None)
              for i, (n, valid, t) in enumerate(rows)]
    plan = make_plan(inputs, state, "staff")
    counts = plan.counts()
    assert counts["new"] + counts["changed"] + counts["unchanged"] + counts["invalid"] == len(rows)
    present = {f"E{n}" for n, _, _ in rows}
    ours = {ext for ext, r in state.items() if r.job == "staff"}
    assert {m.external_id for m in plan.missing} == ours - present
    assert counts["missing"] == len(ours) - len(ours & present)
    # each row's own line, as a list of PlannedRow would give it, however the plan keeps them
    expected = []
    for row in inputs:
        was = state.get(row.external_id)
        status = ("invalid" if row.payload is None else "new" if was is None else
                  "unchanged" if was.fingerprint == fingerprint(row.external_id, row.payload) else "changed")
        expected.append((row.row, row.external_id, status))
    assert [(r.row, r.external_id, r.status) for r in plan.rows] == expected
    assert [(plan.rows[i].row, plan.rows[i].status) for i in range(-len(rows), 0)] == [(r, s) for r, _, s in expected]
    assert [plan.rows.status_of(r) for r, _, _ in expected] == [s for _, _, s in expected]
    assert plan.rows.distinct_ids() == len(present)


def test_a_config_naming_another_hr_system_is_held_as_it_would_add_everyone_again(tmp_path: Path, sandbox: Any) -> None:
    """Someone tidies the config's customer_system_id_type ("TestHRIS" -> "TestHRIS 2"). The platform knows a
    person by external id AND that type, so the next import would add all three people a second time beside
    their records, where the plan called them "changed". The import is held before sending, however few people
    the job has, and says why; --accept-drift sends it as the config asks."""
    people = [person(n) for n in range(1, 4)]
    assert month(tmp_path, sandbox, people, "october.csv", "import").exit_code == 0
    config = tmp_path / "staff.toml"
    config.write_text(config.read_text().replace('customer_system_id_type = "TestHRIS"',
                                                 'customer_system_id_type = "TestHRIS 2"'))
    sandbox.clear_requests()

    held = month(tmp_path, sandbox, people, "november.csv", "import")

    assert held.exit_code == 5, held.output
    assert ("customer_system_id_type is 'TestHRIS 2' where the platform holds 3 of these people under 'TestHRIS' "
            "(e.g. row 2: 000001 Person 1; row 3: 000002 Person 2; row 4: 000003 Person 3): it knows a person by "
            "external id and that type, so each would be added again, a second record beside the one it holds; set "
            'customer_system_id_type = "TestHRIS" in [staff] again, or run with --accept-drift to add them under '
            "'TestHRIS 2'") in held.stdout
    assert "changes for" not in held.stdout  # not also told as a field changing for everyone
    assert not [r for r in sandbox.requests() if r["path"].endswith("bulk_add_edit_staff")]
    assert len(sandbox.staff(99)) == 3

    released = month(tmp_path, sandbox, people, "november.csv", "import", "--accept-drift")

    assert released.exit_code == 0, released.output
    assert sorted((s["customer_system_id_type"], s["customer_system_id"]) for s in sandbox.staff(99)) == sorted(
        (kind, f"00000{n}") for kind in ("TestHRIS", "TestHRIS 2") for n in range(1, 4))
