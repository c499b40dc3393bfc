"""``hrimport timeoff mark-cancelled``: records HR cancelled on the platform, marked so in the ledger.

The platform's interface can neither list nor remove time off (spec: no such endpoint), so a leave cancelled
or moved in the HR system is cancelled on the platform by HR, by hand, after an import told it as no longer in
the export (``hrimport.timeoff.gone``). This command then marks those records, by the platform's record id, as
cancelled (``Ledger.cancel``: kept in the ledger with when, no longer held as on the platform), so that they
are no longer told, and the same leave in a later export is sent again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hrimport.errors import ConfigError
from hrimport.imports.ledger_recovery import timeoff_imports
from hrimport.service.urls import EMBEDDED_SANDBOX, describe_target, service_host
from hrimport.state.ledger import LEDGER_FILE, Cancelled, open_ledger

__all__ = ["MarkedCancelled", "mark_cancelled"]


@dataclass(frozen=True)
class MarkedCancelled:
    """What ``mark_cancelled`` did in one ledger."""

    ledger: Path
    target: str  # where the records were sent, as people read it
    customer_id: str
    done: Cancelled


def mark_cancelled(path: Path, record_ids: list[int], *, base_url: str | None = None) -> list[MarkedCancelled]:
    """Mark the records ``record_ids`` of the time-off import ``path`` (an import config, or a job file: its
    time-off steps) as cancelled on the platform. A record id the ledger does not hold as sent there (nor marked
    before) is a ``ConfigError`` naming it, and nothing is marked; a job file's steps may share a ledger, or each
    send to its own service or customer: each id must be known to one of them."""
    from hrimport.service.connection import resolve_connection, service_key

    imports = timeoff_imports(path, what="there is no time-off ledger to mark records in")
    places = []
    for config, state_dir, _ in imports:
        conn = resolve_connection(config.service, base_url=base_url, sending=False)  # the key only: no token
        target = describe_target(service_host(conn.base_url)) if conn.base_url else describe_target(EMBEDDED_SANDBOX)
        places.append((state_dir, service_key(conn), conn.customer_id or "", target))
    places = list(dict.fromkeys(places))
    # first, which ledger holds each id, without marking anything: an unknown id marks none
    owner: dict[int, int] = {}
    for at, (state_dir, service, customer_id, _) in enumerate(places):
        with open_ledger(state_dir) as ledger:
            for record_id in ledger.cancel(service, customer_id, record_ids, dry_run=True).known:
                owner.setdefault(record_id, at)
    unknown = [r for r in dict.fromkeys(record_ids) if r not in owner]
    if unknown:
        state_dir, _, customer_id, target = places[0]
        where = (f"the time-off ledger {state_dir / LEDGER_FILE} holds as sent to {target} for customer {customer_id}"
                 if len(places) == 1 else f"the time-off ledgers of {path.name}'s time-off steps hold as sent")
        ids = ", ".join(map(str, unknown))
        raise ConfigError(f"record{'s' if len(unknown) > 1 else ''} {ids} {'are' if len(unknown) > 1 else 'is'} "
                          f"not among the time off {where}: nothing was marked; give the record ids the report's "
                          "'No longer in the export' lists (column Record id)")
    done = []
    for at, (state_dir, service, customer_id, target) in enumerate(places):
        mine = [r for r in dict.fromkeys(record_ids) if owner[r] == at]
        if not mine:
            continue
        with open_ledger(state_dir) as ledger:
            done.append(MarkedCancelled(ledger.path, target, customer_id, ledger.cancel(service, customer_id, mine)))
    return done
