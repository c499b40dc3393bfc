"""What the platform's answers mean: its message strings and refusals, read in this one place.

The service says how a staff record fared in words (spec endpoint 3: ``Add Successfully``, ``Update
Successfully``, ``Permission Denied``) and refuses a request with a status and ``details`` naming fields
(spec "Errors", api-notes "Time off"). The submitters turn these meanings into row outcomes; no other
module spells the service's words.
"""

from __future__ import annotations

from hrimport.errors import AccessDenied, Conflict, RequestRejected
from hrimport.outcomes import Outcome

__all__ = ["MESSAGE_OUTCOMES", "SPLIT_STATUSES", "refused_for_content", "staff_outcome", "timeoff_refusal"]

#: The bulk endpoint's messages (spec endpoint 3: ``Add Successfully``...; the single endpoint writes
#: them in lower case), compared case-insensitively.
MESSAGE_OUTCOMES = {
    "add successfully": Outcome.ADDED,
    "update successfully": Outcome.UPDATED,
    "permission denied": Outcome.PERMISSION_DENIED,
}

#: Statuses for which a batch is split to find its bad rows: the request was refused for its content.
#: (413/422 are not in the spec but are what a service says about a batch too big or an element it cannot
#: process; splitting helps there too.) Other refusals (403, 404, 409) concern the batch as a whole.
SPLIT_STATUSES = frozenset({400, 413, 422})


def refused_for_content(status: int) -> bool:
    """Whether a refusal with this status is about the request's content, so a batch is split to find its
    bad rows: a status of ``SPLIT_STATUSES``, or a success status carrying the spec's generic error body
    ``{"error": "Invalid request"}`` (spec "Errors": its statuses are "not shown"), which names no element
    either."""
    return status in SPLIT_STATUSES or 200 <= status < 300


def staff_outcome(message: str) -> Outcome | None:
    """The outcome a staff result's ``message`` reports; None for a message the spec does not know.

    >>> staff_outcome(" Add Successfully ")
    <Outcome.ADDED: 'added'>
    """
    return MESSAGE_OUTCOMES.get(message.strip().lower())


def timeoff_refusal(exc: RequestRejected) -> str:
    """The problem code of a refused time-off record (a 409 is an overlap with a stored record, a 404 or
    a complaint about ``customer_system_id`` an unknown person, and so on; api-notes "Time off")."""
    fields = {str(d.get("field")) for d in exc.details if isinstance(d, dict)}
    if isinstance(exc, Conflict):
        return "overlaps-existing"
    if isinstance(exc, AccessDenied):
        return "permission-denied"
    if exc.status == 404 or "customer_system_id" in fields:
        return "unknown-staff"
    if "total_days" in fields:
        return "total-days-mismatch"
    if "leave_type" in fields:
        return "unknown-leave-type"
    return "service-rejected"
