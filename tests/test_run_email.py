"""What the people on call receive from an unattended ``hrimport run``: the e-mail, the lines cron logs, run.json.

The story: the HR operations lead reads the e-mail on a phone, and whoever runs the machine reads the cron log.
The subject never calls done what did not happen, the body says what to do, every failure that stops a run is
mailed (a mistake in a config someone edited, a run killed last time), and a report too big for the mail relay
does not stop the mail. A real SMTP server (aiosmtpd) on a loopback port receives every message; the sandbox
is real, over HTTP, or the embedded one.
"""

from __future__ import annotations

import json
import resource
import select
import signal
import socket
import sys
from collections import Counter
from datetime import datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from hrimport.cli import main
from hrimport.jobs import EXIT_MEANINGS
from tests.child_process import reaped
from tests.mail_relay import Inbox, free_port, running_relay
from tests.staff_files import person, write_config, write_csv
from tests.test_run_job import BULK, JobFolder, notify_table, run_cli, wait_for
from tests.test_run_job import hrimport as hrimport_process


def started_at(folder: Path) -> str:
    """When the run of ``folder`` started, as the next run names it ("the run started 2024-05-01 06:15")."""
    return datetime.strptime(folder.name, "%Y-%m-%d_%H%M%S").strftime("%Y-%m-%d %H:%M")


def body_of(msg: EmailMessage) -> str:
    """The e-mail's plain-text body, as a phone shows it."""
    part = msg.get_body(("plain",))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n")


def hrimport(*args: str, **env: str) -> Result:
    """``hrimport ARGS`` with exactly these connection variables (unset ones are empty)."""
    return CliRunner().invoke(main, list(args), env={"HRIMPORT_TOKEN": "", "HRIMPORT_BASE_URL": "", **env},
                              catch_exceptions=False)


# ----------------------------------------------------------------------------- the subject is never a false "done"


def test_a_trial_on_the_embedded_sandbox_is_never_mailed_as_imported(tmp_path: Path,
                                                                     relay: tuple[Inbox, int]) -> None:
    box, port = relay
    write_config(tmp_path / "staff.toml")  # no base URL: the job's sandbox = true sends it to the embedded one
    (tmp_path / "exports").mkdir()
    write_csv(tmp_path / "exports" / "staff.csv", [person(1)])
    job = tmp_path / "monthly.toml"
    job.write_text('sandbox = true\n[[step]]\nkind = "staff"\nconfig = "staff.toml"\nsource = "exports/staff.csv"\n'
                   + notify_table(port, when="always") + "\n")

    result = hrimport("run", str(job), HRIMPORT_SANDBOX_DB=str(tmp_path / "embedded.db"))

    assert result.exit_code == 0, result.output
    [msg] = box.messages
    # nothing reached the platform: the subject says so, as the run's last line does
    assert msg["Subject"] == "[hrimport] monthly: everything imported on the embedded sandbox, not the platform (exit 0)"
    assert result.stderr.splitlines()[-1].startswith(
        "monthly: everything imported on the embedded sandbox, not the platform (exit 0")


# ------------------------------------------------------------------------------------------ the mail relay


class RefusingInbox(Inbox):
    """A relay whose mailboxes named ``gone@...`` no longer exist (a colleague who left)."""

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: Any) -> str:
        if address.startswith("gone@"):
            return "550 5.1.1 <gone@acme.example>: mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"


def test_a_recipient_the_relay_refuses_does_not_hide_that_the_others_got_the_mail(tmp_path: Path,
                                                                                 sandbox: Any) -> None:
    with running_relay(RefusingInbox()) as (box, port):
        job = JobFolder(tmp_path / "gone", sandbox, notify=notify_table(port).replace(
            'to = ["payroll@acme.example"]', 'to = ["payroll@acme.example", "gone@acme.example"]'))
        job.export("2024-05", job.people(2, **{"2": {"Country": "Atlantis"}}))

        result = run_cli("run", str(job.job))

    assert result.exit_code == 1  # the run's own verdict, whatever the mail did
    [msg] = box.messages
    assert box.envelopes[0].rcpt_tos == ["payroll@acme.example"]
    assert msg["Subject"] == f"[hrimport] monthly: 1 row needs attention{job.on_sandbox} (exit 1)"
    said = (f"the SMTP server 127.0.0.1:{port} refused gone@acme.example (550 5.1.1 <gone@acme.example>: mailbox "
            "unavailable): check the address in [notify] to; the e-mail went to payroll@acme.example")
    assert f"Error: e-mail not sent to every recipient: {said}\n" in result.stderr
    run = job.last_run()
    assert (run["notified"], run["notify_error"]) == (True, said)


@pytest.mark.skipif(sys.platform == "win32", reason="a line break in a file name is a POSIX possibility")
def test_a_file_name_with_a_line_break_makes_one_line_in_crons_log_and_the_subject_not_a_traceback(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    box, port = relay
    job = JobFolder(tmp_path / "odd", sandbox, notify=notify_table(port, when="always"))
    job.export("2024-05", job.people(2)).rename(job.root / "exports" / "staff_2024\n05.csv")
    first = run_cli("run", str(job.job))
    assert first.exit_code == 0
    # cron's log: the step's line is one line, the name shown as Python writes it
    step_line, folder_line, verdict = first.stderr.splitlines()
    assert step_line.startswith(f"staff: 2 of 2 rows imported (staff_2024\\n05.csv, {job.on_sandbox.strip()}); ")
    assert folder_line.startswith("Report folder: ") and verdict.startswith("monthly: everything imported")
    run_log = (job.runs()[-1] / "run.log").read_text()
    assert all(line[:4].isdigit() for line in run_log.splitlines())  # every line a record of its own, dated

    result = run_cli("run", str(job.job))  # no new export: the subject names the file

    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    subject = box.messages[-1]["Subject"]
    assert subject.startswith("[hrimport] monthly: no new export: the newest file matching exports/staff_*.csv "
                              "(staff_2024 05.csv) is the one imported on ")
    assert job.last_run()["notified"] is True


def test_a_report_bigger_than_the_relay_takes_leaves_the_email_its_workbook(tmp_path: Path, sandbox: Any) -> None:
    # a month of 300 rows to fix makes a page bigger than this relay takes (ordinary relays take 10 MB, a big
    # month's page is 20): the relay would refuse the whole e-mail, and nobody would hear of the 300 rows
    with running_relay(data_size_limit=300_000) as (box, port):
        job = JobFolder(tmp_path / "big", sandbox, notify=notify_table(port))
        job.export("2024-05", job.people(300, **{str(n): {"Country": "Atlantis"} for n in range(1, 301)}))

        result = run_cli("run", str(job.job))

    assert result.exit_code == 1, result.stderr
    [msg] = box.messages
    assert msg["Subject"] == f"[hrimport] monthly: 300 rows need attention{job.on_sandbox} (exit 1)"
    assert len(box.envelopes[0].original_content) <= 300_000
    # the rows to fix, and every row's outcome in the workbook, in place of the page
    assert [a.get_filename() for a in msg.iter_attachments()] == ["report.xlsx", "to_fix.xlsx"]
    page = job.runs()[-1] / "staff" / "report.html"
    size = page.stat().st_size
    assert size > 300_000
    assert (f"\n\nNot attached, too big for this e-mail (the mail server takes at most 0.3 MB); the files are on "
            f"{socket.gethostname()}, the machine that runs hrimport:\n  {page} ({size / 1e6:.1f} MB): report.xlsx "
            "is attached in its place\n") in body_of(msg)
    assert job.last_run()["notified"] is True


class SizeRefusingInbox(Inbox):
    """A relay that announces no SIZE and refuses, after the DATA, any e-mail over 100 KB (Exchange's
    "552 5.3.4 Message size exceeds fixed maximum message size")."""

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if len(envelope.original_content) > 100_000:
            self.refused = getattr(self, "refused", 0) + 1
            return "552 5.3.4 Message size exceeds fixed maximum message size"
        return await super().handle_DATA(server, session, envelope)


def test_a_relay_refusing_the_email_as_too_big_without_saying_its_size_still_gets_the_verdict(
        tmp_path: Path, sandbox: Any) -> None:
    # the relay says no limit beforehand: the e-mail goes with its files, is refused as too big, and the month's
    # 300 rows to fix would reach nobody; it goes again with the files named where they are
    with running_relay(SizeRefusingInbox(), data_size_limit=None) as (box, port):
        job = JobFolder(tmp_path / "big", sandbox, notify=notify_table(port))
        job.export("2024-05", job.people(300, **{str(n): {"Country": "Atlantis"} for n in range(1, 301)}))

        result = run_cli("run", str(job.job))

    assert result.exit_code == 1, result.stderr
    assert "e-mail not sent" not in result.stderr
    assert box.refused == 1
    [msg] = box.messages
    assert msg["Subject"] == f"[hrimport] monthly: 300 rows need attention{job.on_sandbox} (exit 1)"
    assert list(msg.iter_attachments()) == []
    folder = job.runs()[-1] / "staff"
    said = (f"\n\nNot attached, too big for this e-mail (the mail server refused the e-mail with them: 552 5.3.4 "
            f"Message size exceeds fixed maximum message size); the files are on {socket.gethostname()}, the "
            f"machine that runs hrimport:\n  {folder / 'report.html'} (")
    assert said in body_of(msg)
    to_fix = folder / "to_fix.xlsx"
    assert f"\n  {to_fix} ({round(to_fix.stat().st_size / 1000)} KB)\n" in body_of(msg)
    assert job.last_run()["notified"] is True


# ------------------------------------------------------------------------- every run that stops is mailed


def test_a_mistake_made_in_an_import_config_is_mailed_not_only_logged(tmp_path: Path, sandbox: Any,
                                                                     relay: tuple[Inbox, int]) -> None:
    # someone adds a value map to staff.toml and mistypes a line: from then on every monthly run stops at once,
    # and cron's output goes to a log file nobody reads
    box, port = relay
    job = JobFolder(tmp_path / "edited", sandbox, notify=notify_table(port))
    job.export("2024-05", job.people(2))
    config = job.root / "staff.toml"
    config.write_text(config.read_text().replace("customer_id = 99", 'customer_id = "ninety-nine"'))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 2
    error = "staff.toml [service] customer_id must be a number, not 'ninety-nine'"
    assert result.stderr == f"Error: {error}\n"  # one line, as before
    [msg] = box.messages
    assert msg["Subject"] == f"[hrimport] monthly: not started: {error} (exit 2)"
    body = body_of(msg)
    assert f"not started: {error}\n" in body
    assert "Exit code 2: a usage, config or input-file error" in body
    assert job.sandbox.requests() == []  # nothing was sent


def test_the_email_after_a_killed_run_says_that_run_did_not_finish(tmp_path: Path, sandbox: Any,
                                                                   relay: tuple[Inbox, int]) -> None:
    # the machine went down mid-run: that run sent no e-mail, so the next one is the first to tell anyone
    box, port = relay
    job = JobFolder(tmp_path / "killed", sandbox, batch_size=5, notify=notify_table(port))  # when = "attention"
    job.export("2024-05", job.people(30))
    sandbox.set_faults(latency=0.3)
    killed = hrimport_process("run", str(job.job))
    with reaped(killed):
        wait_for(lambda: sum(1 for r in sandbox.requests() if r["path"].endswith(BULK)) >= 2, what="two batches")
        killed.send_signal(signal.SIGKILL)
        killed.communicate(timeout=30)
    sandbox.clear_faults()
    [folder] = job.runs()
    assert box.messages == [] and not (folder / "run.json").exists()

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr  # a clean run: its e-mail is due all the same, for the killed one
    started = started_at(folder)
    said = f"the run started {started} did not finish (killed, or the machine stopped), so it sent no e-mail"
    assert f"hrimport: {said}: {folder}\n" in result.stderr
    [msg] = box.messages
    assert (f"\n\nNote: {said}; the lines above say what this run did in its place (nothing is stored twice). Its "
            f"folder: {folder}\n") in body_of(msg)

    assert run_cli("run", str(job.job)).exit_code == 0  # told once: the run after is clean, and mails nobody
    assert len(box.messages) == 1


def test_a_killed_run_whose_log_was_cut_mid_line_is_told_as_not_known_to_have_sent_its_email(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    # a power cut (or a disk that filled up) stops the log mid-line: a run so stopped may have got further than
    # its log says, where a kill, which lands between two lines, leaves the log whole
    box, port = relay
    job = JobFolder(tmp_path / "cut", sandbox, batch_size=5, notify=notify_table(port))
    job.export("2024-05", job.people(30))
    sandbox.set_faults(latency=0.3)
    killed = hrimport_process("run", str(job.job))
    with reaped(killed):
        wait_for(lambda: sum(1 for r in sandbox.requests() if r["path"].endswith(BULK)) >= 2, what="two batches")
        killed.send_signal(signal.SIGKILL)
        killed.communicate(timeout=30)
    sandbox.clear_faults()
    [folder] = job.runs()
    log = (folder / "run.log").read_bytes()
    assert log.endswith(b"\n")
    (folder / "run.log").write_bytes(log[:-12])  # its last line cut 12 bytes before its end

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    started = started_at(folder)
    said = (f"the run started {started} did not finish, or could not write its folder (its run.log is cut: the "
            "machine stopped, or its disk was full), so whether it sent its e-mail is unknown")
    assert f"hrimport: {said}: {folder}\n" in result.stderr
    [msg] = box.messages
    assert f"\n\nNote: {said}; the lines above say what this run did in its place" in body_of(msg)


def test_a_run_killed_while_it_sends_its_email_is_told_by_the_next_run(tmp_path: Path, sandbox: Any,
                                                                     relay: tuple[Inbox, int]) -> None:
    box, port = relay
    # this morning's relay takes the connection and never greets: the run waits in the e-mail, its steps done
    # and its run.json written, and is killed there (a reboot, the OOM killer, systemd's TimeoutStartSec)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        silent_port = silent.getsockname()[1]
        job = JobFolder(tmp_path / "killed-mailing", sandbox, notify=notify_table(silent_port, "always"))
        job.export("2024-05", job.people(3))
        killed = hrimport_process("run", str(job.job))
        with reaped(killed):
            readable, _, _ = select.select([silent], [], [], 60)  # the run is connecting to the relay
            assert readable, "the run never began its e-mail"
            killed.send_signal(signal.SIGKILL)
            killed.communicate(timeout=30)
    [folder] = job.runs()
    assert box.messages == []  # nobody was told
    job.job.write_text(job.job.read_text().replace(f"port = {silent_port}", f"port = {port}"))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    started = started_at(folder)
    # the relay may have taken the e-mail before the kill: whether it went is not known, what the steps did is
    said = (f"the run started {started} finished its steps (everything imported, exit 0) but may not have sent its "
            "e-mail (killed while sending it, or its run.json could not be written after it)")
    told_by_next_run(result, box, said, folder)
    assert json.loads((folder / "run.json").read_text())["email_pending"] is True  # what marked it
    assert job.last_run()["email_pending"] is False

    assert run_cli("run", str(job.job)).exit_code == 0  # told once
    assert "may not have sent" not in body_of(box.messages[-1])


def told_by_next_run(result: Any, box: Inbox, said: str, folder: Path) -> None:
    """The next run tells of the earlier run in ``folder`` as ``said``: on stderr, and in its one e-mail's note."""
    assert f"hrimport: {said}: {folder}\n" in result.stderr
    [msg] = box.messages
    assert f"\n\nNote: {said}. Its folder: {folder}\n" in body_of(msg)


def run_with_run_json_blocked(tmp_path: Path, sandbox: Any, port: int) -> tuple[JobFolder, Path, Any, str]:
    """A monthly run (6 people, one in Atlantis) whose run.json cannot be written: a folder takes its name as the
    run goes (a real failure, as a full disk or a folder made read-only would be). The job, the run's folder,
    the finished process and its stderr."""
    job = JobFolder(tmp_path / "blocked", sandbox, batch_size=2, notify=notify_table(port))
    job.export("2024-05", job.people(6, **{"2": {"Country": "Atlantis"}}))
    sandbox.set_faults(latency=0.2)
    run = hrimport_process("run", str(job.job))
    with reaped(run):
        wait_for(lambda: any(r["path"].endswith(BULK) for r in sandbox.requests()), what="the first batch")
        [folder] = job.runs()
        (folder / "run.json").mkdir()
        _, err = run.communicate(timeout=60)
    sandbox.clear_faults()
    return job, folder, run, err


def test_a_run_json_that_cannot_be_written_is_said_after_the_verdict_in_the_last_line_and_the_subject(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    # run.json cannot be written in the run's folder (here a folder took its name as the run went: a real
    # failure, as a full disk or a folder made read-only would be): what the steps did is still the verdict
    box, port = relay
    job, folder, run, err = run_with_run_json_blocked(tmp_path, sandbox, port)

    assert run.returncode == 6, err  # the run's summary not written, as documented
    not_written = (f"the run's summary could not be written to {folder}: Is a directory; free space there (the "
                   "steps' lines say what each sent)")
    lines = err.splitlines()
    assert lines[0].startswith("staff: 5 of 6 rows imported; 1 needs attention")
    assert lines[1] == f"Error: {not_written}"
    assert lines[-1] == (f"monthly: 1 row needs attention{job.on_sandbox}; {not_written} (exit 6: "
                         f"{EXIT_MEANINGS[6]})")
    [msg] = box.messages
    assert msg["Subject"] == f"[hrimport] monthly: 1 row needs attention{job.on_sandbox}; {not_written} (exit 6)"
    assert f"\n{not_written}\n" in body_of(msg)
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("run.json")) == ["run.json"]  # no partial


def test_a_run_whose_run_json_was_never_written_but_whose_email_went_is_not_told_as_killed(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    # both writes of run.json fail (a folder took its name as the run went: real failures); the e-mail went, and
    # run.log says so: the next run must not say that run sent no e-mail
    box, port = relay
    job, folder, run, err = run_with_run_json_blocked(tmp_path, sandbox, port)
    assert run.returncode == 6, err
    assert len(box.messages) == 1  # its e-mail went

    again = run_cli("run", str(job.job))

    assert again.exit_code == 1, again.stderr  # the row in Atlantis still needs attention: mailed again
    assert str(folder) not in again.stderr and "did not finish" not in again.stderr
    assert len(box.messages) == 2 and "Note:" not in body_of(box.messages[-1])


def test_a_run_whose_run_json_was_never_written_and_was_killed_mailing_says_its_email_is_unknown(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    box, port = relay
    # run.json cannot be written (a folder took its name as the run went: a real failure), and the relay takes
    # the connection and never greets: the run waits in its e-mail and is killed there
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        silent_port = silent.getsockname()[1]
        job = JobFolder(tmp_path / "blocked-mailing", sandbox, batch_size=2,
                        notify=notify_table(silent_port, "always"))
        job.export("2024-05", job.people(6))
        sandbox.set_faults(latency=0.2)
        killed = hrimport_process("run", str(job.job))
        with reaped(killed):
            wait_for(lambda: any(r["path"].endswith(BULK) for r in sandbox.requests()), what="the first batch")
            [folder] = job.runs()
            (folder / "run.json").mkdir()
            readable, _, _ = select.select([silent], [], [], 60)  # the run is connecting to the relay
            assert readable, "the run never began its e-mail"
            killed.send_signal(signal.SIGKILL)
            killed.communicate(timeout=30)
    sandbox.clear_faults()
    assert not (folder / "run.json").is_file() and box.messages == []
    job.job.write_text(job.job.read_text().replace(f"port = {silent_port}", f"port = {port}"))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    started = started_at(folder)
    # its run.log says the steps were done, and not that the e-mail went: whether it did is not known
    said = (f"the run started {started} finished its steps (everything imported, exit 0) but its run.json could "
            "not be written, so whether it sent its e-mail is unknown")
    told_by_next_run(result, box, said, folder)

    assert run_cli("run", str(job.job)).exit_code == 0  # told once
    assert "unknown" not in body_of(box.messages[-1])


def test_a_run_whose_run_json_was_never_written_and_whose_email_failed_is_told_as_its_log_says(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    # run.json cannot be written (a folder took its name as the run went: a real failure), and the relay is down
    # that morning: run.log says the e-mail was not sent, and why; the next run says just that
    box, port = relay
    smtp_down = free_port()
    job, folder, run, err = run_with_run_json_blocked(tmp_path, sandbox, smtp_down)
    assert run.returncode == 6, err
    refused = f"cannot connect to the SMTP server 127.0.0.1:{smtp_down}: Connection refused; check host and port"
    assert f"Error: e-mail not sent: {refused}" in err.splitlines()
    job.job.write_text(job.job.read_text().replace(f"port = {smtp_down}", f"port = {port}"))

    result = run_cli("run", str(job.job))

    assert result.exit_code == 1, result.stderr  # the row in Atlantis still needs attention
    said = (f"the run started {started_at(folder)} finished its steps (1 row needs attention, exit 1) but did not "
            f"send its e-mail (its run.log says: e-mail not sent: {refused}), and its run.json could not be written")
    assert "unknown" not in result.stderr
    told_by_next_run(result, box, said, folder)


class FolderMovedInbox(Inbox):
    """A relay that refuses every recipient, as the run's folder is moved away and a file put in its place (real
    failures: run.json cannot be written there again, and run.log, open, goes on in the folder moved): the
    folder's run.json still says the e-mail was due, and its run.log says it was not sent."""

    def __init__(self, runs: Any) -> None:
        super().__init__()
        self.runs = runs
        self.folder: Path | None = None

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: Any) -> str:
        [self.folder] = self.runs()
        self.folder.rename(self.folder.with_name("moved"))
        self.folder.write_text("not a folder")
        return "550 5.1.1 no such mailbox"


def test_a_run_json_left_saying_the_email_was_due_is_told_as_its_log_says_when_the_email_failed(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    box, port = relay
    job = JobFolder(tmp_path / "refused", sandbox)
    job.export("2024-05", job.people(2, **{"2": {"Country": "Atlantis"}}))
    refusing_box = FolderMovedInbox(job.runs)
    with running_relay(refusing_box) as (_, refusing):
        job.job.write_text(job.job.read_text() + notify_table(refusing) + "\n")
        first = run_cli("run", str(job.job))
    assert first.exit_code == 6, first.stderr  # run.json not written after the e-mail
    folder = refusing_box.folder
    assert folder is not None
    folder.unlink()
    folder.with_name("moved").rename(folder)  # put back as it was
    assert json.loads((folder / "run.json").read_text())["email_pending"] is True
    refused = (f"the SMTP server 127.0.0.1:{refusing} refused every recipient: payroll@acme.example (550 5.1.1 no "
               "such mailbox)")
    assert f"Error: e-mail not sent: {refused}" in first.stderr.splitlines()
    job.job.write_text(job.job.read_text().replace(f"port = {refusing}", f"port = {port}"))

    result = run_cli("run", str(job.job))

    said = (f"the run started {started_at(folder)} finished its steps (1 row needs attention, exit 1) but did not send "
            f"its e-mail (e-mail not sent: {refused})")
    assert "may not have sent" not in result.stderr
    told_by_next_run(result, box, said, folder)


def test_a_month_whose_email_failed_is_told_by_the_next_run_even_when_that_one_is_clean(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    # September's run has a row to fix and the relay is down that morning: only cron's log knows. October's export
    # is clean: under when = "attention" nobody would ever hear of September's row
    box, port = relay
    smtp_down = free_port()
    job = JobFolder(tmp_path / "relay-down", sandbox, notify=notify_table(smtp_down))
    job.export("2024-09", job.people(4, **{"2": {"Country": "Atlantis"}}))
    first = run_cli("run", str(job.job))
    assert first.exit_code == 1, first.stderr
    [september] = job.runs()
    refused = f"cannot connect to the SMTP server 127.0.0.1:{smtp_down}: Connection refused; check host and port"
    assert json.loads((september / "run.json").read_text())["notify_error"] == refused
    job.job.write_text(job.job.read_text().replace(f"port = {smtp_down}", f"port = {port}"))
    job.export("2024-10", job.people(4))  # the row fixed in the HR system

    result = run_cli("run", str(job.job))

    assert result.exit_code == 0, result.stderr
    said = (f"the run started {started_at(september)} finished its steps (1 row needs attention, exit 1) but did not "
            f"send its e-mail (e-mail not sent: {refused})")
    told_by_next_run(result, box, said, september)

    assert run_cli("run", str(job.job)).exit_code == 0  # told once: November's run mails nobody
    assert len(box.messages) == 1


@pytest.mark.skipif(not hasattr(resource, "prlimit"), reason="needs Linux's prlimit")
def test_a_run_whose_log_stopped_exactly_at_a_line_end_is_not_told_as_having_sent_no_email(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    # the run's files stop taking bytes exactly where its run.log's last line ends: the kernel's limit on the size
    # a process may write a file to (RLIMIT_FSIZE, set on the stopped run to run.log's size) fails the next write
    # whole, as a disk that fills up exactly there would; run.json cannot be written (a folder took its name). The
    # run goes on without its log and mails its verdict: its log must not read as a kill's ("sent no e-mail")
    box, port = relay
    job = JobFolder(tmp_path / "limit", sandbox, batch_size=2, notify=notify_table(port))
    job.export("2024-05", job.people(6))
    sandbox.set_faults(latency=0.2)
    run = hrimport_process("run", str(job.job))
    with reaped(run):
        wait_for(lambda: any(r["path"].endswith(BULK) for r in sandbox.requests()), what="the first batch")
        run.send_signal(signal.SIGSTOP)
        [folder] = job.runs()
        (folder / "run.json").mkdir()
        log = folder / "run.log"
        assert log.read_bytes().endswith(b"\n")
        resource.prlimit(run.pid, resource.RLIMIT_FSIZE, (log.stat().st_size, log.stat().st_size))
        run.send_signal(signal.SIGCONT)
        _, err = run.communicate(timeout=60)
    sandbox.clear_faults()
    assert run.returncode == 6, err
    assert "Traceback" not in err and "Logging error" not in err
    assert len(box.messages) == 1  # it mailed its verdict after its log had stopped

    result = run_cli("run", str(job.job))

    said = (f"the run started {started_at(folder)} did not finish, or could not write its folder (its run.log is "
            "cut: the machine stopped, or its disk was full), so whether it sent its e-mail is unknown")
    assert f"hrimport: {said}: {folder}\n" in result.stderr
    assert "sent no e-mail" not in result.stderr
    assert f"\n\nNote: {said}; the lines above say what this run did" in body_of(box.messages[-1])


# ------------------------------------------------------------------------------------- what cron logs


def test_a_failed_step_and_an_email_not_sent_are_each_one_line_in_crons_log(tmp_path: Path, sandbox: Any) -> None:
    smtp_down = free_port()  # the relay is down this morning
    job = JobFolder(tmp_path / "nofile", sandbox, notify=notify_table(smtp_down))  # and no export came

    result = run_cli("run", str(job.job))

    assert result.exit_code == 2
    missing = (f"no file matches {job.root / 'exports' / 'staff_*.csv'}; put this month's export there or fix "
               "source in the job file")
    folder = job.runs()[-1]
    assert result.stderr.splitlines() == [
        f"staff: Error: {missing}",
        (f"Error: e-mail not sent: cannot connect to the SMTP server 127.0.0.1:{smtp_down}: Connection refused; "
         "check host and port"),
        f"Report folder: {folder}",
        # the verdict, as the e-mail's subject has it: said once, without "Error:" in the middle
        (f"monthly: staff step failed: {missing} (exit 2: a usage, config or input-file error (among them an "
         "export missing, unreadable, too old, or older than the last one imported): fix the job file, config or "
         "source file it names, then run again)"),
    ]
    log = (folder / "run.log").read_text()
    assert f"ERROR   hrimport.jobs: step staff: {missing}\n" in log  # run.log keeps every error, the step named once
    assert "ERROR   hrimport.jobs: e-mail not sent: cannot connect" in log


def test_a_state_database_that_cannot_be_opened_ends_the_run_mailed_and_is_not_told_as_killed(
        tmp_path: Path, sandbox: Any, relay: tuple[Inbox, int]) -> None:
    # the state folder's database cannot be opened (here a folder has its name, as a restore gone wrong would
    # leave it; a full disk fails the same way): no step can run, and the run ends as any run does
    box, port = relay
    job = JobFolder(tmp_path / "nostate", sandbox, notify=notify_table(port))
    job.export("2024-05", job.people(2))
    (job.root / "state" / "state.db").mkdir(parents=True)

    result = run_cli("run", str(job.job))

    assert result.exit_code == 2, result.stderr
    assert "Traceback" not in result.stderr
    [folder] = job.runs()
    cannot = f"cannot open the state database {job.root / 'state' / 'state.db'}: Is a directory; check the state folder"
    assert result.stderr.splitlines()[0] == f"Error: {cannot}"
    [msg] = box.messages
    assert " ".join(msg["Subject"].split()) == f"[hrimport] monthly: not started: {cannot} (exit 2)"  # unfolded
    assert json.loads((folder / "run.json").read_text())["verdict"] == f"not started: {cannot}"
    assert job.stored() == Counter()

    (job.root / "state" / "state.db").rmdir()
    again = run_cli("run", str(job.job))

    assert again.exit_code == 0, again.stderr
    assert "did not finish" not in again.stderr  # that run finished, and said why it did nothing
