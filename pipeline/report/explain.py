"""Plain-language explanations of problem codes, for the people who fix the rows.

The report groups rows needing attention by ``Problem.code`` (STYLE.md example 4) and shows, per code, what
went wrong and how to fix it. Wording lives here only, so it can improve without touching tests or stages::

    >>> explain("not-a-date").title
    'Not a date'
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Explanation:
    """What a problem code means and what HR staff should do about it."""

    title: str
    meaning: str
    fix: str


_EXPLANATIONS: dict[str, Explanation] = {
    "missing-value": Explanation(
        "Missing value",
        "A required column is empty for this row.",
        "Fill in the cell in the file to fix, then import that file again.",
    ),
    "not-a-date": Explanation(
        "Not a date",
        "The cell should hold a date but its text could not be read as one.",
        "Write the date as YYYY-MM-DD (for example 2024-03-31) or use a real Excel date cell.",
    ),
    "not-an-email": Explanation(
        "Not an e-mail address",
        "The cell should hold an e-mail address such as name@example.com.",
        "Correct the address: one @, no spaces, and a domain after the @.",
    ),
    "unknown-country": Explanation(
        "Unknown country",
        "The platform expects a two-letter ISO country code (GB, DE, SG...).",
        "Replace the country with its two-letter ISO 3166 code.",
    ),
    "not-an-allowed-value": Explanation(
        "Not an allowed value",
        "The platform accepts only a fixed list of values in this column.",
        "Choose one of the allowed values named in the message, spelled exactly as shown.",
    ),
    "not-a-boolean": Explanation(
        "Not yes or no",
        "The column is a yes/no flag but the cell holds something else.",
        "Write Yes or No (true/false and 1/0 are also accepted).",
    ),
    "intern-with-other-role": Explanation(
        "Intern with another role",
        "An intern cannot also hold another staff role in the platform.",
        "Either remove the intern flag or clear the other role, whichever is true.",
    ),
    "country-change-incomplete": Explanation(
        "Country change incomplete",
        "The person moves to another country, but the details a country change needs are missing.",
        "Fill in every column the message names for the new country (e.g. the effective date).",
    ),
    "duplicate-id": Explanation(
        "Duplicate id",
        "The same external id appears on more than one row of the file; none of them was sent.",
        "Keep one row per person: delete or correct the duplicates.",
    ),
    "unknown-custom-field": Explanation(
        "Unknown custom field",
        "The column maps to a custom field the platform does not have for this customer.",
        "Ask the platform administrator to create the field, or remove it from the import config.",
    ),
    "service-rejected": Explanation(
        "Refused by the platform",
        "The platform checked the row and refused it; its reason is quoted in the message.",
        "Correct the row as the platform's reason says, then import the file to fix again.",
    ),
    "permission-denied": Explanation(
        "Permission denied",
        "The account used for the import may not change this record.",
        "Ask the platform administrator to grant the import account access, then run again.",
    ),
    "http-5xx": Explanation(
        "Platform error",
        "The platform answered with a server error, even after several retries. The row itself may be fine.",
        "Run the same import again later; rows already imported are not sent twice.",
    ),
    "transport-failed": Explanation(
        "Platform unreachable",
        "The platform could not be reached, even after several retries. The row itself may be fine.",
        "Check the network or the platform's status, then run the same import again.",
    ),
    "unknown-leave-type": Explanation(
        "Unknown leave type",
        "The leave type is not one the platform knows for this customer.",
        "Use a leave type exactly as the platform names it, or map it in the import config.",
    ),
    "total-days-mismatch": Explanation(
        "Total days do not match",
        "The number of days given does not match the working days between the start and end dates.",
        "Check the dates and the day count; half days must be marked as such.",
    ),
    "overlaps-in-file": Explanation(
        "Overlapping time off in the file",
        "Two rows of the file give the same person time off on overlapping days.",
        "Merge or correct the overlapping rows so each day is booked once.",
    ),
    "overlaps-existing": Explanation(
        "Overlaps time off already booked",
        "The platform already holds time off for this person on some of these days.",
        "Check the person's existing time off in the platform; cancel one of the two if needed.",
    ),
    "unknown-staff": Explanation(
        "Unknown staff member",
        "No staff member with this external id exists in the platform.",
        "Import the staff member first, or correct the external id.",
    ),
}

_GENERIC = Explanation(
    "Other problem",
    "The row could not be imported; the message says why.",
    "Correct the row as the message says, then import the file to fix again.",
)

# ``http-503``, ``http-500``... share one explanation: HR staff act the same way on any server error.
_HTTP_5XX = re.compile(r"http-5\d\d")


def explain(code: str) -> Explanation:
    """Return the explanation of ``code``; unknown codes get a generic text naming the code."""
    if code in _EXPLANATIONS:
        return _EXPLANATIONS[code]
    if _HTTP_5XX.fullmatch(code):
        return _EXPLANATIONS["http-5xx"]
    return Explanation(f"{_GENERIC.title} ({code})", _GENERIC.meaning, _GENERIC.fix)


def known_codes() -> list[str]:
    """The codes with their own explanation, for tests and documentation."""
    return list(_EXPLANATIONS)
