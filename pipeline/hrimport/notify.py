"""E-mail the verdict of a job run, with ``report.html`` (and ``to_fix`` when there is one) attached.

Sent through the SMTP server the job file names (``[notify]``), with STARTTLS when asked (``starttls``) or
over implicit TLS (``ssl``, SMTPS, usually port 465: the whole session inside TLS), the server's certificate
checked against the system's CAs or the job's ``ca_file``, logging in with the password held in the
environment variable the job names: the password is never in a file, a log or a message. The e-mail is kept
under the size the server says it takes (its SIZE) and ``attach_limit``, counted as sent: the files that do not
fit are named in the body (``build_message``); a server that says no SIZE and refuses the e-mail as too big gets
it again without files. ``when`` decides whether a run is worth an e-mail:

- ``always``: every run;
- ``attention`` (the default): only when a person must act, i.e. the exit code is not 0;
- ``never``: no e-mail.
"""

from __future__ import annotations

import mimetypes
import os
import smtplib
import socket
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Literal

from hrimport.errors import ConfigError

__all__ = ["Attachment", "NotifyError", "NotifySettings", "SomeRecipientsRefused", "send_mail", "should_notify"]

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
    # the largest e-mail sent, in bytes as sent (attachments base64-encoded): most mailboxes take 25 MB;
    # attachments that do not fit are named in the body instead
    attach_limit: int = 20_000_000

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


@dataclass(frozen=True)
class Attachment:
    """A file to attach under ``name``; ``stand_in`` is attached in its place when it does not fit (a report's
    workbook for its page)."""

    name: str
    path: Path
    stand_in: Attachment | None = None


AttachmentLike = Path | tuple[str, Path] | Attachment


def build_message(
    settings: NotifySettings, subject: str, body: str, attachments: Sequence[AttachmentLike] = (),
    *, size_limit: int | None = None, refused_as_too_big: str | None = None,
) -> EmailMessage:
    """The e-mail: a plain-text body and as many of the files as fit, the smallest first; the others are named
    in the body, with their size and where they are.

    An attachment is a path, (file name to show, path) when two files share a name, or an ``Attachment``. What
    fits is counted as the e-mail is sent (base64 makes a file a third bigger): at most ``attach_limit``, and at
    most ``size_limit``, the relay's own limit (its SIZE), which it would otherwise answer with a refusal of
    the whole e-mail. ``refused_as_too_big``: the relay's answer to the e-mail with its files, when it refused
    it as too big without saying its limit beforehand; then no file is attached, and the body says why.
    """
    msg = EmailMessage()
    # one line: a header may hold no line break, and a file name may (a subject names the file found)
    msg["Subject"] = " ".join(f"{settings.subject_prefix} {subject}".split())
    msg["From"] = settings.sender
    msg["To"] = ", ".join(settings.to)
    msg["Date"] = formatdate(localtime=True)
    msg["Message-ID"] = make_msgid(domain=settings.sender.rpartition("@")[2] or None)
    limit = 0 if refused_as_too_big else min(settings.attach_limit, size_limit or settings.attach_limit)
    wanted = [_attachment(item) for item in attachments]
    msg.set_content(body)
    room = limit - len(msg.as_bytes(policy=policy.SMTP)) - _MARGIN
    parts: dict[int, EmailMessage] = {}  # by the attachment's place in ``wanted``: the e-mail keeps their order
    sized: list[tuple[int, int, EmailMessage, int]] = []  # (bytes as sent, place, part, bytes of the file)
    unreadable: list[str] = []
    for place, item in enumerate(wanted):
        try:
            part, on_disk = _part(item), item.path.stat().st_size
        except OSError as exc:  # the report folder changed under the run: say so, send the rest
            unreadable.append(f"  {item.path} ({exc.strerror or exc})")
            continue
        sized.append((len(part.as_bytes(policy=policy.SMTP)), place, part, on_disk))
    for size, place, part, _ in sorted(sized, key=lambda entry: entry[0]):
        if size <= room:
            parts[place], room = part, room - size
    too_big: list[str] = []
    for _, place, _, on_disk in sized:
        if place in parts:
            continue
        item, stand_in = wanted[place], wanted[place].stand_in
        note = f"  {item.path} ({_megabytes(on_disk)})"
        fitting = _fitting(stand_in, room) if stand_in is not None else None
        if stand_in is not None and fitting is not None:
            parts[place], room = fitting[0], room - fitting[1]
            note += f": {stand_in.name} is attached in its place"
        too_big.append(note)
    if too_big:
        why = (f"the mail server refused the e-mail with them: {refused_as_too_big}" if refused_as_too_big else
               f"the mail server takes at most {_megabytes(limit)}" if limit < settings.attach_limit else
               f"hrimport keeps an e-mail under {_megabytes(limit)}, which most mailboxes take")
        body = body.rstrip("\n") + (f"\n\nNot attached, too big for this e-mail ({why}); the files are on {socket.gethostname()}, "
                 "the machine that runs hrimport:\n" + "\n".join(too_big) + "\n")
    if unreadable:
        body = body.rstrip("\n") + "\n\nNot attached, could not be read:\n" + "\n".join(unreadable) + "\n"
    if too_big or unreadable:
        msg.set_content(body)
    if parts:
        msg.make_mixed()
        for place in sorted(parts):
            msg.attach(parts[place])
    return msg


_MARGIN = 16 * 1024  # bytes kept for the lines naming what is not attached and the parts' boundaries


def _attachment(item: AttachmentLike) -> Attachment:
    if isinstance(item, Attachment):
        return item
    name, path = item if isinstance(item, tuple) else (item.name, item)
    return Attachment(name, path)


def _fitting(item: Attachment, room: int) -> tuple[EmailMessage, int] | None:
    """The file as a part of the e-mail and its size as sent, when it fits in ``room`` bytes."""
    try:
        part = _part(item)
    except OSError:
        return None
    size = len(part.as_bytes(policy=policy.SMTP))
    return (part, size) if size <= room else None


def _part(item: Attachment) -> EmailMessage:
    """The file as a part of the e-mail, encoded as it will be sent."""
    part = EmailMessage()
    ctype, _ = mimetypes.guess_type(item.name)
    maintype, _, subtype = (ctype or "application/octet-stream").partition("/")
    data = item.path.read_bytes()
    if maintype == "text":
        try:
            # as text, so the mail says charset=utf-8 and report.html opens with its accents intact
            part.set_content(data.decode("utf-8"), subtype=subtype, disposition="attachment", filename=item.name)
            return part
        except UnicodeDecodeError:  # e.g. a to_fix.csv kept in the source's own encoding
            maintype, subtype = "application", "octet-stream"
    part.set_content(data, maintype=maintype, subtype=subtype, disposition="attachment", filename=item.name)
    return part


def _megabytes(size: int) -> str:
    """``12.3 MB``, or ``40 KB`` under a tenth of a megabyte (a small to_fix is not "0.0 MB")."""
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{max(1, round(size / 1000))} KB"


def send_mail(
    settings: NotifySettings,
    subject: str,
    body: str,
    attachments: Sequence[AttachmentLike] = (),
    *,
    environ: Mapping[str, str] | None = None,
) -> EmailMessage:
    """Compose and send one e-mail; returns it. Raises ``NotifyError`` naming the server and the fix.

    The e-mail is composed once the relay has said how big an e-mail it takes (``build_message``)."""
    password = settings.password(environ)
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
                try:
                    smtp.starttls(context=context)
                except smtplib.SMTPNotSupportedError:
                    raise NotifyError(
                        f"the SMTP server {where} does not offer STARTTLS: use its port that does (usually 587), or "
                        "set ssl = true in [notify] if it speaks implicit TLS (usually port 465)") from None
            if settings.user:
                try:
                    smtp.login(settings.user, password or "")
                except smtplib.SMTPNotSupportedError:  # smtplib: "SMTP AUTH extension not supported by server."
                    raise NotifyError(
                        f"the SMTP server {where} offers no login on this connection: set starttls = true (or ssl = "
                        "true) in [notify] if it takes logins over TLS only, or remove user if it takes the e-mail "
                        "without one") from None
                except UnicodeEncodeError:  # smtplib encodes the login as ASCII; its error names a character
                    raise NotifyError(
                        f"cannot log in to the SMTP server {where}: an SMTP login is ASCII only, and the user in "
                        f"[notify] or the password in ${settings.password_env} has other characters (such as "
                        "accented letters)") from None
            smtp.ehlo_or_helo_if_needed()
            msg = build_message(settings, subject, body, attachments, size_limit=_relay_limit(smtp))
            try:
                refused = smtp.send_message(msg)
            except smtplib.SMTPDataError as exc:
                if not (msg.is_multipart() and _too_big(exc)):
                    raise
                # a relay that does not say its SIZE refused the e-mail as too big: the verdict still has to
                # reach someone, so it goes again with the files named in the body (smtplib reset the session)
                msg = build_message(settings, subject, body, attachments, refused_as_too_big=_smtp_text(exc))
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


def _relay_limit(smtp: smtplib.SMTP) -> int | None:
    """The largest e-mail the relay takes, in bytes, as its EHLO answer says (SIZE, RFC 1870); None when it says
    none (0 is no limit)."""
    size = smtp.esmtp_features.get("size", "") if smtp.does_esmtp else ""
    return int(size) if size.isdigit() and int(size) > 0 else None


def _too_big(exc: smtplib.SMTPDataError) -> bool:
    """Whether the relay refused the e-mail for its size: 552 (RFC 5321's "exceeded storage allocation") or the
    enhanced status 5.3.4 ("message too big for system", RFC 3463) that some relays send with 554."""
    text = exc.smtp_error.decode("utf-8", "replace") if isinstance(exc.smtp_error, bytes) else str(exc.smtp_error)
    return exc.smtp_code == 552 or "5.3.4" in text


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
