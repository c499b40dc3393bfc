"""The secrets this process has read (the service's token, the SMTP password), hidden from what is printed of
an error nobody foresaw: its one line, and its traceback under ``--debug``.

A known error never holds a secret (``hrimport.service.client`` keeps the token in the HTTP client's headers,
``Connection`` hides it from its repr); an unexpected one may hold whatever its library put in its text.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

__all__ = ["HIDDEN", "hide_secrets", "remember_secret"]

HIDDEN = "<hidden>"

# the default token variable is hidden even before a config names its own (a crash before the connection is made)
_DEFAULT_TOKEN_ENV = "HRIMPORT_TOKEN"
_remembered: set[str] = set()


def remember_secret(value: str) -> None:
    """Keep ``value`` (a token, a password) out of every unexpected error printed from now on."""
    if len(value.strip()) >= 4:  # shorter, it would hide parts of words, and guards nothing
        _remembered.add(value.strip())


def hide_secrets(text: str, also: Iterable[str] = ()) -> str:
    """``text`` with every secret remembered (and ``also``) replaced by ``<hidden>``, the longest first."""
    secrets = {*_remembered, os.environ.get(_DEFAULT_TOKEN_ENV, "").strip(), *(s.strip() for s in also)}
    for secret in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, HIDDEN)
    return text
