"""The field specification: one declarative list of every input field, read from ``schemas/*.toml``.

Everything that needs a field list takes it from here: the sandbox's request validation, the import
pipeline's pandera schema, the mapper's normalisers and the README's field table
(``python -m hrimport.fields`` prints it).
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from hrimport.resources import data_dir

Kind = Literal[
    "text", "date", "country", "email", "boolean", "enum", "integer", "number", "custom_data", "leave_type"
]
Required = Literal["yes", "no", "conditional"]


@dataclass(frozen=True)
class Field:
    """One input field of an endpoint, as the spec's tables describe it."""

    name: str
    type: Literal["string", "integer", "boolean", "array"]
    kind: Kind
    required: Required
    description: str
    choices: tuple[str, ...] = ()
    variants: dict[str, str] = field(default_factory=dict)
    default: bool | None = None
    rule: str | None = None
    envelope: bool = False
    key: bool = False
    sensitive: bool = False
    #: the service takes the choices only as written (the spec: lang is an "Uppercase" code); the import
    #: still reads a file's value in any case and sends the choice as written, as the report shows
    exact_case: bool = False
    #: a country field that takes an ISO 3166-2 region code (US-CA) too (``hrimport.regions``)
    subdivisions: bool = False

    @property
    def is_required(self) -> bool:
        return self.required == "yes"

    def canonical_choice(self, value: str) -> str | None:
        """The canonical spelling of an enumerated value given in any case, or None if it is not one."""
        folded = " ".join(value.split()).casefold()
        for choice in self.choices:
            if choice.casefold() == folded:
                return choice
        return self.variants.get(folded)


@dataclass(frozen=True)
class OutputField:
    """One key of the staff record the service answers with (the spec's ``user`` table)."""

    name: str
    type: Literal["string", "integer"]
    description: str = ""
    from_input: str | None = None  # the input field it echoes, when the name differs
    null_when_unknown: bool = False


#: How a leave type counts days: weekends and public holidays left out, or every day.
Basis = Literal["Working", "Calendar"]


@dataclass(frozen=True)
class LeaveType:
    """One entry of the leave-type dictionary (``schemas/leave_types.toml``)."""

    id: int
    en: str
    zh: str
    zh_hant: str
    basis: Basis
    zh_aliases: tuple[str, ...] = ()

    @property
    def chinese_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.zh, self.zh_hant, *self.zh_aliases)))


def _load(filename: str) -> dict[str, Any]:
    with open(data_dir("schemas") / filename, "rb") as fh:
        return tomllib.load(fh)


def _fields(filename: str) -> tuple[Field, ...]:
    out = []
    for entry in _load(filename)["field"]:
        entry = dict(entry)
        entry["choices"] = tuple(entry.get("choices", ()))
        out.append(Field(**entry))
    return tuple(out)


@cache
def staff_fields() -> tuple[Field, ...]:
    """Staff input fields of the single and bulk create-or-update endpoints."""
    return _fields("staff.toml")


@cache
def timeoff_fields() -> tuple[Field, ...]:
    """Input fields of the time-off endpoint."""
    return _fields("timeoff.toml")


@cache
def leave_days_fields() -> tuple[Field, ...]:
    """Input fields of the leave-day calculation endpoint."""
    return _fields("leave_days.toml")


@cache
def staff_output_fields() -> tuple[OutputField, ...]:
    """Keys of the staff output record, in the spec's order."""
    return tuple(OutputField(**entry) for entry in _load("staff_output.toml")["field"])


@cache
def staff_output_names() -> dict[str, str]:
    """Input field -> the key of the staff output record holding what was stored for it (``ec_entity_id`` ->
    ``ec_entity``, the others by their own name). Input fields the record does not echo (the role flags, the
    phone countries, ``customer_data_type``...) are absent: what the platform stored for them is not shown."""
    inputs = {f.name for f in staff_fields()}
    return {f.from_input or f.name: f.name for f in staff_output_fields() if (f.from_input or f.name) in inputs}


@cache
def leave_types() -> tuple[LeaveType, ...]:
    """The leave-type dictionary shared by the sandbox and the time-off import."""
    return tuple(
        LeaveType(**{**entry, "zh_aliases": tuple(entry.get("zh_aliases", ()))})
        for entry in _load("leave_types.toml")["leave_type"]
    )


def by_name(fields: tuple[Field, ...]) -> dict[str, Field]:
    return {f.name: f for f in fields}


def markdown_table(fields: tuple[Field, ...]) -> str:
    """The README's field table for one endpoint."""
    lines = ["| Field | Type | Kind | Required | Values / rules |", "|---|---|---|---|---|"]
    for f in fields:
        values = ", ".join(f"`{c}`" for c in f.choices) or f.description
        if f.choices:
            values = f"{values}. {f.description}"
        lines.append(f"| `{f.name}` | {f.type} | {f.kind} | {f.required} | {values} |")
    return "\n".join(lines)


def main() -> None:
    """Print the README's field tables (``python -m hrimport.fields``)."""
    for title, fields in (
        ("Staff fields", staff_fields()),
        ("Time-off fields", timeoff_fields()),
        ("Leave-day calculation fields", leave_days_fields()),
    ):
        sys.stdout.write(f"#### {title}\n\n{markdown_table(fields)}\n\n")
    rows = "\n".join(f"| `{f.name}` | {f.type}{' or null' if f.null_when_unknown else ''} | {f.description} |"
                     for f in staff_output_fields())
    sys.stdout.write("#### Staff output record (`user`)\n\n| Key | Type | Notes |\n|---|---|---|\n"
                     f"{rows}\n\n")


if __name__ == "__main__":
    main()
