"""E-mail of the verdict, received by a real SMTP server (aiosmtpd) the test starts on a loopback port."""

from __future__ import annotations

import os
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from hrimport.errors import ConfigError
from hrimport.notify import NotifyError, NotifySettings, send_mail, should_notify
from tests.mail_relay import Inbox, free_port

PASSWORD = "s3cret-smtp-pw"


def _authenticator(server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> AuthResult:
    ok = isinstance(auth_data, LoginPassword) and auth_data.login == b"robot" and auth_data.password == PASSWORD.encode()
    return AuthResult(success=ok, handled=False)


@pytest.fixture
def smtp_server() -> Iterator[tuple[Inbox, int]]:
    """A plain SMTP server on a free loopback port, accepting LOGIN/PLAIN for robot / PASSWORD."""
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port, authenticator=_authenticator,
                            auth_require_tls=False)
    controller.start()
    yield inbox, port
    controller.stop()


def settings(port: int, **kw: Any) -> NotifySettings:
    base: dict[str, Any] = {"to": ("payroll@example.com", "oncall@example.com"), "sender": "hrimport@example.com",
                            "host": "127.0.0.1", "port": port, "timeout": 10}
    return NotifySettings(**{**base, **kw})


def report_file(tmp_path: Path) -> Path:
    path = tmp_path / "report.html"
    path.write_text("<html><body><h1>3 of 5 rows imported</h1></body></html>", encoding="utf-8")
    return path


def test_the_verdict_arrives_with_report_html_attached(smtp_server: tuple[Inbox, int], tmp_path: Path) -> None:
    inbox, port = smtp_server
    html = report_file(tmp_path)
    fix = tmp_path / "to_fix.csv"
    fix.write_text("Employee #,Problem\n000105,not a date\n", encoding="utf-8")

    send_mail(settings(port), "monthly: 2 rows need attention (exit 1)", "See the report.\n", [html, fix])

    assert len(inbox.messages) == 1
    msg = inbox.messages[0]
    assert msg["Subject"] == "[hrimport] monthly: 2 rows need attention (exit 1)"
    assert sorted(inbox.envelopes[0].rcpt_tos) == ["oncall@example.com", "payroll@example.com"]
    assert "See the report." in msg.get_body(("plain",)).get_content()
    parts = {p.get_filename(): p for p in msg.iter_attachments()}
    assert set(parts) == {"report.html", "to_fix.csv"}
    assert parts["report.html"].get_content_type() == "text/html"
    assert "3 of 5 rows imported" in parts["report.html"].get_content()


def test_attachments_can_be_renamed_when_two_steps_share_a_file_name(
    smtp_server: tuple[Inbox, int], tmp_path: Path
) -> None:
    inbox, port = smtp_server
    html = report_file(tmp_path)
    send_mail(settings(port), "s", "b", [("staff-report.html", html), ("timeoff-report.html", html)])
    names = [p.get_filename() for p in inbox.messages[0].iter_attachments()]
    assert names == ["staff-report.html", "timeoff-report.html"]


def test_login_uses_the_password_from_the_environment(smtp_server: tuple[Inbox, int], tmp_path: Path) -> None:
    inbox, port = smtp_server
    s = settings(port, user="robot", password_env="TEST_SMTP_PW")
    send_mail(s, "ok", "body", environ={"TEST_SMTP_PW": PASSWORD})
    assert len(inbox.messages) == 1


def test_a_wrong_password_names_the_variable_never_the_password(smtp_server: tuple[Inbox, int]) -> None:
    inbox, port = smtp_server
    s = settings(port, user="robot", password_env="TEST_SMTP_PW")
    with pytest.raises(NotifyError) as caught:
        send_mail(s, "ok", "body", environ={"TEST_SMTP_PW": "wrong-password"})
    assert "$TEST_SMTP_PW" in str(caught.value)
    assert "wrong-password" not in str(caught.value)
    assert inbox.messages == []


def test_a_missing_password_variable_is_a_config_error() -> None:
    s = settings(25, user="robot", password_env="TEST_SMTP_PW")
    with pytest.raises(ConfigError, match="set the environment variable TEST_SMTP_PW"):
        send_mail(s, "ok", "body", environ={})


def test_an_unreachable_server_is_one_clear_error() -> None:
    port = free_port()  # nothing listens there
    with pytest.raises(NotifyError, match=rf"cannot connect to the SMTP server 127.0.0.1:{port}.*check host and port"):
        send_mail(settings(port), "s", "b")


@pytest.fixture(scope="module")
def relay_ca() -> trustme.CA:
    """A private CA made for the test, like a company's own for its mail relay."""
    return trustme.CA()


def relay_context(ca: trustme.CA) -> ssl.SSLContext:
    """The relay's server-side TLS: a certificate for 127.0.0.1 signed by ``ca``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    return context


def start_smtps(ca: trustme.CA) -> tuple[Controller, Inbox, int]:
    """Start an SMTP server speaking implicit TLS only (SMTPS, as on port 465) on a free loopback port,
    its certificate signed by ``ca``, accepting LOGIN/PLAIN for robot / PASSWORD; stop the controller."""
    inbox = Inbox()
    port = free_port()
    # auth_require_tls=False: aiosmtpd counts only STARTTLS as TLS; here every byte is inside TLS anyway
    controller = Controller(inbox, hostname="127.0.0.1", port=port, ssl_context=relay_context(ca),
                            authenticator=_authenticator, auth_require_tls=False)
    controller.start()
    return controller, inbox, port


@pytest.fixture
def smtps_server(relay_ca: trustme.CA) -> Iterator[tuple[Inbox, int]]:
    """``start_smtps`` with ``relay_ca``, stopped at teardown."""
    controller, inbox, port = start_smtps(relay_ca)
    yield inbox, port
    controller.stop()


def test_starttls_with_a_private_ca(tmp_path: Path, relay_ca: trustme.CA) -> None:
    ca_file = tmp_path / "relay-ca.pem"
    relay_ca.cert_pem.write_to_path(str(ca_file))
    inbox = Inbox()
    port = free_port()
    # require_starttls: the server refuses mail before STARTTLS, so delivery proves TLS was used;
    # auth_require_tls (the default): the login is only possible inside TLS
    controller = Controller(inbox, hostname="127.0.0.1", port=port, tls_context=relay_context(relay_ca),
                            require_starttls=True, authenticator=_authenticator)
    controller.start()
    try:
        s = settings(port, starttls=True, ca_file=ca_file, user="robot", password_env="TEST_SMTP_PW")
        send_mail(s, "over TLS", "body", environ={"TEST_SMTP_PW": PASSWORD})
        assert len(inbox.messages) == 1 and inbox.tls[0] in ("TLSv1.2", "TLSv1.3")
        with pytest.raises(NotifyError):  # without STARTTLS the server refuses
            send_mail(settings(port), "plain", "body")
    finally:
        controller.stop()


def test_implicit_tls_with_a_private_ca_delivers_and_logs_in_inside_tls(
    smtps_server: tuple[Inbox, int], relay_ca: trustme.CA, tmp_path: Path
) -> None:
    inbox, port = smtps_server
    ca_file = tmp_path / "relay-ca.pem"
    relay_ca.cert_pem.write_to_path(str(ca_file))
    s = settings(port, ssl=True, ca_file=ca_file, user="robot", password_env="TEST_SMTP_PW")

    send_mail(s, "monthly: done (exit 0)", "All rows imported.\n", [report_file(tmp_path)],
              environ={"TEST_SMTP_PW": PASSWORD})

    [msg] = inbox.messages
    assert inbox.tls == ["TLSv1.3"] or inbox.tls == ["TLSv1.2"]  # the whole session was inside TLS
    assert msg["Subject"] == "[hrimport] monthly: done (exit 0)"
    assert [a.get_filename() for a in msg.iter_attachments()] == ["report.html"]
    assert PASSWORD.encode() not in inbox.envelopes[0].original_content


def test_implicit_tls_refuses_a_relay_whose_certificate_is_not_trusted(
    smtps_server: tuple[Inbox, int], tmp_path: Path
) -> None:
    inbox, port = smtps_server
    s = settings(port, ssl=True, user="robot", password_env="TEST_SMTP_PW")  # no ca_file: the system's CAs
    with pytest.raises(NotifyError) as caught:
        send_mail(s, "s", "b", environ={"TEST_SMTP_PW": PASSWORD})
    message = str(caught.value)
    assert message.startswith(f"TLS with the SMTP server 127.0.0.1:{port} failed: ")
    assert "CERTIFICATE_VERIFY_FAILED" in message and "\n" not in message
    assert PASSWORD not in message
    assert inbox.messages == []  # nothing, not even the login, went to a relay that could not be trusted


def test_a_relay_expecting_implicit_tls_without_ssl_set_says_to_set_it(smtps_server: tuple[Inbox, int]) -> None:
    _, port = smtps_server
    with pytest.raises(NotifyError) as caught:
        send_mail(settings(port, timeout=0.5), "s", "b")  # the relay waits for a TLS hello, never greets
    assert str(caught.value) == (f"the SMTP server 127.0.0.1:{port} sent no greeting: if it expects implicit "
                                 "TLS (usually port 465), set ssl = true in [notify]")


def test_ssl_set_for_a_plain_relay_says_to_use_starttls_instead(smtp_server: tuple[Inbox, int]) -> None:
    inbox, port = smtp_server
    with pytest.raises(NotifyError) as caught:
        send_mail(settings(port, ssl=True), "s", "b")
    assert str(caught.value) == (f"TLS with the SMTP server 127.0.0.1:{port} failed: WRONG_VERSION_NUMBER: the "
                                 "server does not speak implicit TLS; if it offers STARTTLS (usually port 587), "
                                 "set starttls = true instead of ssl")
    assert inbox.messages == []


@pytest.mark.parametrize(
    ("when", "exit_code", "sent"),
    [
        ("always", 0, True), ("always", 1, True),
        ("attention", 0, False), ("attention", 1, True), ("attention", 2, True), ("attention", 3, True),
        ("attention", 4, True),
        ("never", 0, False), ("never", 4, False),
    ],
)
def test_when_decides_which_runs_are_worth_an_email(when: str, exit_code: int, sent: bool) -> None:
    assert should_notify(settings(25, when=when), exit_code) is sent


def test_no_notify_table_means_no_email() -> None:
    assert should_notify(None, 4) is False


def test_a_password_smtp_cannot_send_is_one_line_naming_the_variable(smtp_server: tuple[Inbox, int]) -> None:
    inbox, port = smtp_server
    s = settings(port, user="robot", password_env="TEST_SMTP_PW")
    with pytest.raises(NotifyError) as caught:
        send_mail(s, "ok", "body", environ={"TEST_SMTP_PW": "pässwörd-9"})
    assert str(caught.value) == (
        f"cannot log in to the SMTP server 127.0.0.1:{port}: an SMTP login is ASCII only, and the user in "
        "[notify] or the password in $TEST_SMTP_PW has other characters (such as accented letters)")
    assert inbox.messages == []


def test_the_size_limit_counts_the_email_as_sent_not_the_files_on_disk(
    smtp_server: tuple[Inbox, int], tmp_path: Path
) -> None:
    # base64 makes a file a third bigger: a mailbox taking 25 MB refuses 20 MB of files, which arrive as 27
    inbox, port = smtp_server
    workbook = tmp_path / "to_fix.xlsx"
    workbook.write_bytes(os.urandom(160_000))  # a workbook is zipped: it does not compress further
    html = report_file(tmp_path)

    send_mail(settings(port, attach_limit=200_000), "s", "See the report.\n", [html, workbook])

    [msg] = inbox.messages
    assert len(inbox.envelopes[0].original_content) <= 200_000
    assert [a.get_filename() for a in msg.iter_attachments()] == ["report.html"]
    assert (f"Not attached, too big for this e-mail (hrimport keeps an e-mail under 0.2 MB, which most mailboxes "
            f"take); the files are on {socket.gethostname()}, the machine that runs hrimport:\n  {workbook} (0.2 MB)"
            in msg.get_body(("plain",)).get_content().replace("\r\n", "\n"))


def test_a_login_set_for_a_relay_that_offers_none_without_tls_says_what_to_set() -> None:
    # aiosmtpd, as most relays, offers AUTH only once the connection is encrypted
    port = free_port()
    controller = Controller(Inbox(), hostname="127.0.0.1", port=port, authenticator=_authenticator)
    controller.start()
    try:
        with pytest.raises(NotifyError) as caught:
            send_mail(settings(port, user="robot", password_env="TEST_SMTP_PW"), "s", "b",
                      environ={"TEST_SMTP_PW": PASSWORD})
    finally:
        controller.stop()
    assert str(caught.value) == (f"the SMTP server 127.0.0.1:{port} offers no login on this connection: set "
                                 "starttls = true (or ssl = true) in [notify] if it takes logins over TLS only, or "
                                 "remove user if it takes the e-mail without one")


def test_starttls_set_for_a_relay_that_offers_none_says_what_to_set(smtp_server: tuple[Inbox, int]) -> None:
    inbox, port = smtp_server  # plain, no certificate: it offers no STARTTLS
    with pytest.raises(NotifyError) as caught:
        send_mail(settings(port, starttls=True), "s", "b")
    assert str(caught.value) == (f"the SMTP server 127.0.0.1:{port} does not offer STARTTLS: use its port that does "
                                 "(usually 587), or set ssl = true in [notify] if it speaks implicit TLS (usually "
                                 "port 465)")
    assert inbox.messages == []
