"""Read-after-write: what the platform stored for a staff record, against what was sent (issue 15, part 3).

Every staff create-or-update answers with the stored ``user`` record (spec endpoints 2 and 3).
``altered_fields`` compares each field sent with it; ``ReadBack.warnings`` words each difference as a
``platform-altered`` warning on the row, which stays ``added`` or ``updated``. What counts as the same value
comes from the spec and api-notes, so that a faithful store never warns:

- a field is read under its output name (``fields.staff_output_names``, from ``schemas/staff_output.toml``:
  ``ec_entity_id`` is ``ec_entity``); the single endpoint's ``passpost_issue_date`` reaches this module as
  ``passport_issue_date`` (``ServiceClient`` reads both, ``normalise_user``). A field the record does not
  carry (the role flags, the phone countries, ``customer_data_type``...) cannot be checked and is not;
- ``""`` and ``null`` both mean no value (api-notes: empty strings for unknown text, null for some dates);
- enumerated values match in any case and documented variant (spec: "The single-endpoint reference writes
  them in lower case"; api-notes: ``Fixed Term`` for ``Fixed-term``), country codes in any case;
- dates match when they name the same day, written ``YYYY-MM-DD`` or ``YYYY/MM/DD`` (api-notes: an example
  writes ``2020/01/31``).

Anything else must be equal. A difference is ``truncated`` (the stored text is the start of the sent one),
``case-changed``, ``dropped`` (nothing stored), ``type-changed`` (not text: the spec types every field of the
record but ``id`` as a string) or ``changed``.

    >>> [(a.field, a.how, a.stored) for a in altered_fields(
    ...     {"job_title": "Payroll Specialist", "gender": "Female", "highest_education": "MSc"},
    ...     {"job_title": "Payroll Spec", "gender": "female", "highest_education": None})]
    [('highest_education', 'dropped', None), ('job_title', 'truncated', 'Payroll Spec')]
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from operator import itemgetter
from typing import Any, Literal

from hrimport.fields import Field, by_name, staff_fields, staff_output_names
from hrimport.outcomes import Problem

__all__ = ["Alteration", "ReadBack", "altered_fields", "compared_fields"]

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")

How = Literal["truncated", "case-changed", "dropped", "type-changed", "changed"]

_HOW_WORDS: dict[How, str] = {
    "truncated": "cut short",
    "case-changed": "in another case",
    "dropped": "not stored",
    "type-changed": "stored as another type",
    "changed": "stored differently",
}


@dataclass(frozen=True)
class Alteration:
    """One field the platform stored otherwise than it was sent: ``stored`` as the record holds it
    (None when absent or null)."""

    field: str
    sent: str
    stored: Any
    how: How


@cache
def _compared() -> tuple[tuple[str, str, Field], ...]:
    """(input field, output key, its spec) for every input field the output record echoes."""
    specs = by_name(staff_fields())
    return tuple((name, key, specs[name]) for name, key in staff_output_names().items())


@lru_cache(maxsize=64)  # one entry per set of fields a file fills: a handful
def _compared_of(sent: tuple[str, ...]) -> tuple[itemgetter[Any], itemgetter[Any]] | None:
    """For a payload with the keys ``sent``: getters of the compared fields it holds, from the payload (by
    input name) and from the record (by output key); None when it holds none."""
    held = [(name, key) for name, key, _ in _compared() if name in sent]
    if not held:
        return None
    return itemgetter(*(name for name, _ in held)), itemgetter(*(key for _, key in held))


@lru_cache(maxsize=64)  # one entry per set of fields a file fills: a handful
def _stored_values(held: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """The values a record holds for the compared fields ``held`` (input names), as a tuple in that order."""
    keys = [_output_keys()[name] for name in held]
    if not keys:
        return lambda user: ()
    if len(keys) == 1:
        key = keys[0]
        return lambda user: (user[key],)
    return itemgetter(*keys)


def compared_fields() -> tuple[str, ...]:
    """The input fields the service's answer is checked against, in the order they are checked."""
    return tuple(name for name, _, _ in _compared())


@cache
def _output_keys() -> dict[str, str]:
    """Input field -> its key in the output record, for the compared fields."""
    return {name: key for name, key, _ in _compared()}


#: Fields and their values in JSON as an element holds them (no spaces, the text as it is), in the order given.
_encode_fields = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def altered_fields(sent: Mapping[str, Any], user: Mapping[str, Any]) -> list[Alteration]:
    """The fields of ``sent`` (a staff input record) that ``user`` (the record the platform answered with)
    holds otherwise, in the output record's order. Fields not sent, or sent empty, are not compared: the
    platform keeps its own value for them (updates merge)."""
    held = _compared_of(tuple(sent))
    if held is None:
        return []  # nothing sent that the record echoes
    sent_values, stored_values = held
    try:
        if sent_values(sent) == stored_values(user):
            return []  # everything stored as sent: the usual answer, told for every row sent in one C-level pass
    except KeyError:
        pass  # a field the record does not carry: weighed one by one below
    found = []
    for name, key, spec in _compared():
        value = sent.get(name)
        if not isinstance(value, str) or not value:
            continue
        stored = user.get(key)
        how = _difference(spec, value, stored)
        if how is not None:
            found.append(Alteration(name, value, stored, how))
    return found


def _difference(spec: Field, sent: str, stored: Any) -> How | None:
    """How ``stored`` differs from ``sent`` for a field like ``spec``; None when it is the same value."""
    if stored is None or stored == "":
        return "dropped"
    if not isinstance(stored, str):
        return "type-changed"
    if stored == sent or _same_value(spec, sent, stored):
        return None
    if sent.startswith(stored):
        return "truncated"
    if stored.casefold() == sent.casefold():
        return "case-changed"
    return "changed"


def _same_value(spec: Field, sent: str, stored: str) -> bool:
    """The spec's equivalences (see the module docstring) between two different strings."""
    if spec.kind == "enum":
        canonical = spec.canonical_choice(sent)
        return canonical is not None and canonical == spec.canonical_choice(stored)
    if spec.kind == "country":
        return stored.strip().upper() == sent.strip().upper()
    if spec.kind == "date":
        day = _date(sent)
        return day is not None and day == _date(stored)
    return False


def _date(text: str) -> dt.date | None:
    """The day ``YYYY-MM-DD`` or ``YYYY/MM/DD`` names; None for anything else."""
    text = text.strip().replace("/", "-")
    if not _DAY.fullmatch(text):
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class ReadBack:
    """Words a row's read-after-write warnings: ``masked`` fields (the config's ``[report] mask``) show
    their values masked as the report masks them, never in full; ``columns`` names the source column each
    field came from (``MappedTable.field_sources``)."""

    masked: Collection[str] = field(default_factory=lambda: frozenset(f.name for f in staff_fields() if f.sensitive))
    columns: Mapping[str, str] = field(default_factory=dict)

    def warnings(self, row: int, sent: Mapping[str, Any], user: Any) -> tuple[Problem, ...]:
        """One ``platform-altered`` warning per field ``user`` holds otherwise than ``sent``; none when the
        answer carries no record to compare with."""
        if not isinstance(user, dict):
            return ()
        return tuple(self._warning(row, a) for a in altered_fields(sent, user))

    def unaltered(self, held: tuple[str, ...], sent: str, user: Any) -> bool:
        """True when ``user`` holds each field of ``held`` (the compared fields a payload holds, in
        ``compared_fields`` order) as sent: ``sent`` is their ``"field":value`` JSON texts as the element
        holds them, joined by commas. The same JSON means the same values, so ``warnings`` would find
        nothing; False says only that ``warnings`` must look."""
        if not isinstance(user, dict):
            return False
        keys = _output_keys()
        try:
            stored = _encode_fields({name: user[keys[name]] for name in held})
        except (KeyError, TypeError, ValueError):
            return False
        return stored == "{" + sent + "}"

    def unaltered_many(self, compared: Sequence[tuple[tuple[str, ...], str]], users: Sequence[Any]) -> list[bool]:
        """``unaltered`` of many rows (each row's ``compared`` and answered ``user``): their sent texts read
        in one call, and each row's values compared with its record's at once. Equal values mean ``warnings``
        finds nothing (it compares them first), as the same JSON does; the values sent are text and
        booleans."""
        if not compared:
            return []
        try:
            sent_rows = json.loads("[{" + "},{".join(sent for _, sent in compared) + "}]")
        except ValueError:
            sent_rows = None
        if not isinstance(sent_rows, list) or len(sent_rows) != len(compared):
            # not the texts of an element's fields: each row told alone, as its text is
            return [self.unaltered(held, sent, user) for (held, sent), user in zip(compared, users)]
        same = []
        for (held, _), sent, user in zip(compared, sent_rows, users):
            try:
                same.append(isinstance(user, dict) and _stored_values(held)(user) == tuple(sent.values()))
            except KeyError:
                same.append(False)
        return same

    def _warning(self, row: int, alteration: Alteration) -> Problem:
        name, column, stored = alteration.field, self.columns.get(alteration.field), alteration.stored
        how = f"cut to {len(stored)} characters" if alteration.how == "truncated" else _HOW_WORDS[alteration.how]
        where = f"Row {row}, column {column!r}" if column else f"Row {row}"
        message = (f"{where}: the platform altered {name} ({how}): sent {self._as_reported(name, alteration.sent)!r}, "
                   f"stored {self._stored(name, stored)}")
        return Problem("platform-altered", message, row=row, column=column, field=name,
                       value=self._as_reported(name, alteration.sent), severity="warning")

    def _stored(self, name: str, stored: Any) -> str:
        """The stored value as a message quotes it: text in quotes, another type as its JSON, none as
        ``nothing``; masked when the field is."""
        if stored is None or stored == "":
            return "nothing"
        if isinstance(stored, str):
            return repr(self._as_reported(name, stored))
        return self._as_reported(name, json.dumps(stored, ensure_ascii=False))

    def _is_masked(self, name: str) -> bool:
        """Masked as the report masks: by field name or by the source column it came from."""
        masked = {m.strip().casefold() for m in self.masked}
        return any(n is not None and n.strip().casefold() in masked for n in (name, self.columns.get(name)))

    def _as_reported(self, name: str, value: str) -> str:
        """``value`` as a report may hold it: masked when the field is."""
        if not self._is_masked(name):
            return value
        # The report's own form (``•••••1234``), imported here only: the reporter's package is not
        # otherwise needed to send rows.
        from hrimport.report.cells import mask_value

        return mask_value(value)
