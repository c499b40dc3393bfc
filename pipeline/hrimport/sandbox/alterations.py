"""Alterations on demand: a sandbox that stores some staff values otherwise than they were sent.

Real platforms accept a record and store less than was sent: free text cut to the column's length, an
optional field the company has not enabled left out. The answer's ``user`` record then shows what was
stored, and hrimport's read-after-write check (``hrimport.service.readback``) warns about it. These settings
make the sandbox do the same, so that the check is tested against a real server (issue 15, part 3). Off by
default; ``--alter`` on ``hrimport sandbox serve`` and ``/_admin/alterations`` set them.

The alteration happens where a platform's would, in the store: ``GET /_admin/staff`` and the answers show
the stored value, and the next update merges onto it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hrimport.fields import staff_fields, staff_output_names
from hrimport.sandbox.faults import first_problem, key_values

#: ``--alter typical``: what a platform commonly does (the spec publishes no lengths: "Maximum lengths and
#: formats of free-text fields: not shown").
TYPICAL_TEXT_LENGTH = 40
TYPICAL_DROPPED = ("highest_education",)


@cache
def truncatable_fields() -> frozenset[str]:
    """Free-text fields the output record shows, but the external id: the ones ``truncate_text`` cuts."""
    shown = staff_output_names()
    return frozenset(f.name for f in staff_fields() if f.kind == "text" and not f.key and f.name in shown)


@cache
def droppable_fields() -> frozenset[str]:
    """Optional input fields the output record shows: the ones ``drop_fields`` may name."""
    shown = staff_output_names()
    return frozenset(f.name for f in staff_fields() if f.required == "no" and f.name in shown)


class Alterations(BaseModel):
    """How the sandbox stores staff values (and a time-off record's days) otherwise than sent (``--alter``,
    ``POST /_admin/alterations``); nothing altered by default."""

    model_config = ConfigDict(extra="forbid")

    truncate_text: int | None = Field(
        default=None, ge=1,
        description="Store free text (name, job_title, location, passport_number...) cut to this many characters.",
    )
    drop_fields: list[str] = Field(
        default=[],
        description="Optional fields this platform does not keep (not enabled for the company): accepted, "
        "not stored, answered as \"\" (or null).",
    )

    whole_days: bool = Field(
        default=False,
        description="Store a time-off record's total_days as a whole number, cut down (4.5 as 4): the spec "
        "types the time-off record's total_days integer, so a platform may hold no half days.",
    )

    @field_validator("drop_fields")
    @classmethod
    def _optional_fields_only(cls, names: list[str]) -> list[str]:
        unknown = [n for n in names if n not in droppable_fields()]
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: only optional staff fields of the output record may be "
                             f"dropped ({', '.join(sorted(droppable_fields()))})")
        return names

    @classmethod
    def typical(cls) -> Alterations:
        """``--alter typical``: free text cut to 40 characters, ``highest_education`` not kept."""
        return cls(truncate_text=TYPICAL_TEXT_LENGTH, drop_fields=list(TYPICAL_DROPPED))

    @classmethod
    def from_spec(cls, spec: str) -> Alterations:
        """Parse ``--alter``: ``typical``, JSON, or ``key=value,...`` (lists joined by ``/``).

        >>> Alterations.from_spec("truncate_text=20,drop_fields=location/phone").drop_fields
        ['location', 'phone']

        A bad spec is a ``ValueError`` whose message is one line.
        """
        spec = spec.strip()
        if spec == "typical":
            return cls.typical()
        try:
            if spec.startswith("{"):
                return cls.model_validate_json(spec)
            values: dict[str, Any] = key_values(spec, "alteration setting")
            if "drop_fields" in values:
                values["drop_fields"] = [n.strip() for n in values["drop_fields"].split("/") if n.strip()]
            return cls.model_validate(values)
        except ValidationError as exc:
            raise ValueError(first_problem(exc)) from None

    def stored_form(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` (one checked staff record, as sent) as this platform stores them: a dropped field
        becomes None, which the store's merge treats as no value."""
        stored = dict(values)
        for name, value in values.items():
            if name in self.drop_fields:
                stored[name] = None
            elif self.truncate_text and name in truncatable_fields() and isinstance(value, str):
                stored[name] = value[: self.truncate_text]
        return stored

