"""E-mail the verdict of a job run, with ``report.html`` (and ``to_fix`` when there is one) attached.

Sent through the SMTP server the job file names (``[notify]``), with STARTTLS when asked (``starttls``) or
over implicit TLS (``ssl``, SMTPS, usually port 465: the whole session inside TLS), the server's certificate
checked against the system's CAs or the job's ``ca_file``, logging in with the password held in the
environment variable the job names: the password is never in a file, a log or a message. ``when`` decides whether a run is worth an e-mail:

- ``always``: every run;
- ``attention`` (the default): only when a person must act, i.e. the exit code is not 0;
- ``never``: no e-mail.
"""

from __future__ import annotations

import mimetypes
import os
import smtplib
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Literal

from hrimport.errors import ConfigError

__all__ = ["NotifyError", "NotifySettings", "SomeRecipientsRefused", "send_mail", "should_notify"]

When = Literal["always", "attention", "never"]
WHEN_VALUES: tuple[When, ...] = ("always", "attention", "never")


class NotifyError(Exception):
    """The e-mail could not be sent (the run's own exit code is kept; this is reported beside it)."""


class SomeRecipientsRefused(NotifyError):
    """The relay took the e-mail for some recipients and refused the others: it was sent, not to everyone."""

    def __init__(self, message: str, delivered: Sequence[str]) -> None:
        super().__init__(message)
        self.delivered = tuple(delivered)


@dataclass(frozen=True)
class NotifySettings:
    """Where and when to send the verdict (the job file's ``[notify]`` table)."""

    to: tuple[str, ...]
    sender: str
    host: str = "localhost"
    port: int = 25
    starttls: bool = False
    ssl: bool = False  # implicit TLS (SMTPS, usually port 465)
    ca_file: Path | None = None  # CA bundle for a relay with a private certificate (default: the system's)
    user: str | None = None
    password_env: str | None = None  # the NAME of the variable holding the password
    when: When = "attention"
    subject_prefix: str = "[hrimport]"
    timeout: float = 30.0
    attach_limit: int = 20 * 1024 * 1024  # bytes; bigger attachments are named in the body instead

    def password(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The SMTP password from the environment, or None when the job names no variable."""
        if not self.password_env:
            return None
        env = os.environ if environ is None else environ
        value = env.get(self.password_env)
        if not value:
            raise ConfigError(
                f"the SMTP password is not set: set the environment variable {self.password_env} "
                f"(named by password_env in the job's [notify] table)"
            )
        return value


def should_notify(settings: NotifySettings | None, exit_code: int) -> bool:
    """Whether this run's verdict is worth an e-mail under the job's ``when``."""
    if settings is None or settings.when == "never":
        return False
    return settings.when == "always" or exit_code != 0


def build_message(
    settings: NotifySettings, subject: str, body: str, attachments: Sequence[Path | tuple[str, Path]] = ()
) -> EmailMessage:
    """The e-mail: a plain-text body and the files attached (too-big files are named, not attached).

    An attachment is a path, or (file name to show, path) when two files share a name.
    """
    msg = EmailMessage()
    # one line: a header may hold no line break, and a file name may (a subject names the file found)
    msg["Subject"] = " ".join(f"{settings.subject_prefix} {subject}".split())
    msg["From"] = settings.sender
    msg["To"] = ", ".join(settings.to)
    msg["Date"] = formatdate(localtime=True)
    msg["Message-ID"] = make_msgid(domain=settings.sender.rpartition("@")[2] or None)
    left_out: list[Path] = []
    to_attach: list[tuple[str, Path]] = []
    total = 0
    for item in attachments:
        name, path = item if isinstance(item, tuple) else (item.name, item)
        size = path.stat().st_size
        if total + size > settings.attach_limit:
            left_out.append(path)
        else:
            to_attach.append((name, path))
            total += size
    if left_out:
        body += "\n\nToo big to attach (open them in the report folder):\n" + "\n".join(f"  {p}" for p in left_out)
    msg.set_content(body)
    for name, path in to_attach:
        ctype, _ = mimetypes.guess_type(name)
        maintype, _, subtype = (ctype or "application/octet-stream").partition("/")
        data = path.read_bytes()
        if maintype == "text":
            try:
                # as text, so the mail says charset=utf-8 and report.html opens with its accents intact
                msg.add_attachment(data.decode("utf-8"), subtype=subtype, filename=name)
                continue
            except UnicodeDecodeError:  # e.g. a to_fix.csv kept in the source's own encoding
                maintype, subtype = "application", "octet-stream"
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return msg


def send_mail(
    settings: NotifySettings,
    subject: str,
    body: str,
    attachments: Sequence[Path | tuple[str, Path]] = (),
    *,
    environ: Mapping[str, str] | None = None,
) -> EmailMessage:
    """Compose and send one e-mail; returns it. Raises ``NotifyError`` naming the server and the fix."""
    password = settings.password(environ)
    msg = build_message(settings, subject, body, attachments)
    where = f"{settings.host}:{settings.port}"
    context = ssl.create_default_context(cafile=str(settings.ca_file) if settings.ca_file else None)
    greeted = False  # a failure before the server's greeting often means ssl is set the wrong way round
    try:
        smtp: smtplib.SMTP
        if settings.ssl:
            smtp = smtplib.SMTP_SSL(settings.host, settings.port, timeout=settings.timeout, context=context)
        else:
            smtp = smtplib.SMTP(settings.host, settings.port, timeout=settings.timeout)
        greeted = True
        with smtp:
            if settings.starttls and not settings.ssl:
                smtp.starttls(context=context)
            if settings.user:
                try:
                    smtp.login(settings.user, password or "")
                except UnicodeEncodeError:  # smtplib encodes the login as ASCII; its error names a character
                    raise NotifyError(
                        f"cannot log in to the SMTP server {where}: an SMTP login is ASCII only, and the user in "
                        f"[notify] or the password in ${settings.password_env} has other characters (such as "
                        "accented letters)") from None
            refused = smtp.send_message(msg)
    except smtplib.SMTPAuthenticationError:
        raise NotifyError(
            f"the SMTP server {where} refused the login of {settings.user!r}: "
            f"check the password in ${settings.password_env}"
        ) from None
    except smtplib.SMTPNotSupportedError as exc:
        raise NotifyError(f"the SMTP server {where} does not support {_smtp_text(exc)}: check starttls/user") from None
    except smtplib.SMTPRecipientsRefused as exc:
        raise NotifyError(f"the SMTP server {where} refused every recipient: {_refusals(exc.recipients)}") from None
    except smtplib.SMTPServerDisconnected as exc:
        if not greeted and not settings.ssl:
            # a server speaking implicit TLS waits for a TLS hello and never greets a plain client
            raise NotifyError(
                f"the SMTP server {where} sent no greeting: if it expects implicit TLS (usually port 465), "
                "set ssl = true in [notify]"
            ) from None
        raise NotifyError(f"the SMTP server {where} did not take the e-mail: {_smtp_text(exc)}") from None
    except smtplib.SMTPException as exc:
        raise NotifyError(f"the SMTP server {where} did not take the e-mail: {_smtp_text(exc)}") from None
    except ssl.SSLError as exc:
        hint = ""
        if not greeted and settings.ssl and exc.reason == "WRONG_VERSION_NUMBER":
            # the server answered in plain text: it speaks plain SMTP, perhaps with STARTTLS
            hint = ": the server does not speak implicit TLS; if it offers STARTTLS (usually port 587), " \
                   "set starttls = true instead of ssl"
        raise NotifyError(f"TLS with the SMTP server {where} failed: {exc.reason or exc}{hint}") from None
    except TimeoutError:
        raise NotifyError(f"the SMTP server {where} did not answer in {settings.timeout:g} s") from None
    except OSError as exc:
        raise NotifyError(
            f"cannot connect to the SMTP server {where}: {exc.strerror or exc}; check host and port"
        ) from None
    if refused:
        delivered = [address for address in settings.to if address not in refused]
        raise SomeRecipientsRefused(
            f"the SMTP server {where} refused {_refusals(refused)}: check the address in [notify] to; "
            f"the e-mail went to {', '.join(delivered)}", delivered)
    return msg


def _refusals(refused: Mapping[str, tuple[int, bytes | str]]) -> str:
    """``gone@acme.example (550 5.1.1 mailbox unavailable)``, for each address the relay refused."""
    def why(code: int, text: bytes | str) -> str:
        return f"{code} {text.decode('utf-8', 'replace') if isinstance(text, bytes) else text}".strip()
    return ", ".join(f"{address} ({why(*answer)})" for address, answer in refused.items())


def _smtp_text(exc: smtplib.SMTPException) -> str:
    error = getattr(exc, "smtp_error", None)
    if isinstance(error, bytes):
        return f"{getattr(exc, 'smtp_code', '')} {error.decode('utf-8', 'replace')}".strip()
    return str(exc)
