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


#: When a half-day cell not read is a warning and when it holds a row back (hrimport.timeoff.rows.unread_halves).
_UNREAD_HALVES = (
    "The time-off record sent has no half-day field: half days only go into the platform's count of the days. "
    "So when the row "
    "gives its own number of days and total_days is \"file\" under [timeoff] (the default), this is a warning: "
    "the row was sent with that number, which the platform did not check. When the row gives no number of days, "
    "or total_days is \"service\" or \"strict\", the count needs the half days, and the row is held back; so is "
    "every such row when strict_checks under [timeoff] lists the code.")

_EXPLANATIONS: dict[str, Explanation] = {
    "missing-value": Explanation(
        "Missing value",
        "A required column is empty for this row.",
        "Fill in the cell in the file to fix, then import that file again.",
    ),
    "not-a-date": Explanation(
        "Not a date",
        "The cell should hold a date but its text could not be read as one (a time of day, such as 12:00:00 from "
        "a cell with a time format, is not a date either); or it is a cell no real day can be sent for: a date "
        "cell showing 0 January 1900 (00/01/1900, how Excel shows a 0, which some HR systems write for \"no "
        "date\") or 29 February 1900 (Excel counts 1900 as a leap year; it was not), a number Excel cannot show "
        "as a date (it shows ########: below zero, or after the year 9999), a date with a minus sign (a number "
        "below zero in a workbook of the 1904 date system), or a number in one of Excel's East Asian formats, "
        "which show a date or a time depending on the computer's language.",
        "Write the date as YYYY-MM-DD (for example 2024-03-31) or use a real Excel date cell with a date format "
        "(such as yyyy-mm-dd); leave the cell empty if there is no date.",
    ),
    "not-an-email": Explanation(
        "Unusual e-mail address",
        "The address is not in the usual form name@example.com (one @, no spaces, a dot after the @); the "
        "message says what looks wrong. The platform sets no rule for e-mail addresses, so by default this is a "
        "warning and the address is sent as written; with email_check = \"strict\" under [staff] in the config, "
        "the row is held back instead.",
        "If it is a typo, correct the address in the HR system (or in the file to fix) and import again. If it "
        "is right (an internal address such as ann@intranet), there is nothing to do.",
    ),
    "unknown-country": Explanation(
        "Unknown country",
        "The platform expects a two-letter ISO country code (GB, DE, SG...); the country of time off may also "
        "be a region's code as ISO 3166-2 writes it (US-CA, DE-BY), and the message says when a code written "
        "so is not one ISO lists. A region's name (California) is not read as its code.",
        "Replace the country with its two-letter ISO 3166 code (for time off, or a region's ISO 3166-2 code).",
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
        "The platform needs the country the person left (old_country) and the date the new country takes effect "
        "(new_country_effective_date) together when a person's country changes, and refuses a change without "
        "them. When the row's old country is another country than its country, the person moves, and a row "
        "without the date was held back. When the row gives only the date, or an old country that is its "
        "country, whether the country changes only the platform knows: by default this is a warning and the row "
        "is sent as written (the platform refuses it if the country does change); with strict_checks = "
        "[\"country-change-incomplete\"] under [staff] in the config, the row is held back instead.",
        "If the person moved, fill in both the country they left and the date the new country takes effect. If "
        "not, clear the one that is given (or, for a warning, there is nothing to do).",
    ),
    "duplicate-id": Explanation(
        "Duplicate id",
        "The same external id appears on more than one row of the file, and the rows do not send the same "
        "values (or one of them has a problem of its own); none of them was sent, since which one is right is "
        "not known.",
        "Keep one row per person: delete or correct the duplicates.",
    ),
    "duplicate-row": Explanation(
        "Row repeated",
        "The row repeats an earlier row of the file: the same external id and the same value in every field "
        "sent (a person the export listed twice, or in a time-off file the same leave: leave type, dates and "
        "half days). The platform adds or updates people by external id, and a leave is booked once, so it was "
        "sent once, with the earlier row, and this row has that row's outcome.",
        "Nothing to do. If the person or the leave should appear once, the export may list it twice: check the "
        "HR system's report.",
    ),
    "columns-disagree": Explanation(
        "Columns disagree",
        "Two columns the config maps to one field both hold a value on this row, and the values differ. The "
        "row was sent with the value of the column that comes first in the config's columns; the other value "
        "was not sent. The message names both. With columns-disagree in the config's strict_checks, the row is "
        "held back instead.",
        "Nothing to do if the value sent is right. Otherwise correct it in the HR system, or change the "
        "order of the columns in the config; a row held back is sent once the two columns agree.",
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
    "connect-failed": Explanation(
        "Platform unreachable",
        "No connection to the platform could be made, even after several retries. The row itself may be fine.",
        "Check the network or the platform's status, then run the same import again.",
    ),
    "timeout": Explanation(
        "Platform too slow",
        "The platform did not answer in time, even after several retries. The row itself may be fine.",
        "Run the same import again later; rows already imported are not sent twice.",
    ),
    "transport-failed": Explanation(
        "Platform unreachable",
        "The platform could not be reached, even after several retries. The row itself may be fine.",
        "Check the network or the platform's status, then run the same import again.",
    ),
    "unknown-leave-type": Explanation(
        "Unknown leave type",
        "The leave type is not among those hrimport knows (the message names the closest). The platform "
        "publishes no list of its leave types, so by default this is a warning and the row is sent with the "
        "name as written, for the platform to take or refuse; a row the platform refused for it was not added. "
        "With strict_checks = [\"unknown-leave-type\"] under [timeoff] in the config, the row is held back "
        "instead.",
        "If the name is a typo, correct it; if it is the company's own name for a type, map it under "
        "[timeoff.values.leave_type] in the import config. If the platform took it, there is nothing to do.",
    ),
    "region-code": Explanation(
        "Region code as the country",
        "The time off's country is a region's code as ISO 3166-2 writes it (US-CA for California), so that the "
        "region's public holidays count. The platform's interface names a two-letter country code for this "
        "field, while its documents list region codes among its options: whether it takes one is not stated. "
        "So by default this is a warning and the row is sent as written; a row the platform refused for it was "
        "not added. With strict_checks = [\"region-code\"] under [timeoff] in the config, the row is held back "
        "instead.",
        "If the platform took it, there is nothing to do. If it refused it, write the country's two-letter code "
        "(US for US-CA): the platform then counts the country's public holidays only.",
    ),
    "total-days-differs": Explanation(
        "Total days differ from the platform's count",
        "The file's number of days is not the platform's count of working days for these dates and half days "
        "(the company may observe other holidays, or count this leave type every day). The row was sent with "
        "the figure the message names.",
        "Nothing to do if the file's figure is right. Otherwise correct it in the HR system; to send the "
        "platform's count instead, set total_days = \"service\" under [timeoff] in the config.",
    ),
    "total-days-unchecked": Explanation(
        "Total days not checked",
        "The platform could not count the days of this period, so the file's figure was sent unchecked.",
        "Check the record's days on the platform.",
    ),
    "changed-since-imported": Explanation(
        "Changed since it was imported",
        "This leave (the same person, leave type and dates) was imported before, and the file now gives other "
        "values for it (the days, the country, the notes or the decision): a month's file corrected after it was "
        "imported. The platform's interface adds time off but cannot change a record, so nothing was sent: the "
        "record on the platform still holds the values the message names first.",
        "If the file is right, change the record on the platform (hrimport remembers the record as imported, so "
        "importing the file again does not send it). If the record is right, nothing to do; correct the file to "
        "stop this warning.",
    ),
    "overlaps-imported": Explanation(
        "Overlaps time off imported before",
        "This leave overlaps a record of the same person that hrimport imported in an earlier run, with other "
        "dates or another leave type: most often a corrected file, the leave moved by a day or its type changed. "
        "hrimport knows a record by person, leave type and dates, so this row is a new record; the platform's "
        "interface cannot change or remove the old one, which stays as it was sent. A platform that checks refuses "
        "this row as overlapping; one that does not would hold both. With overlaps-imported in strict_checks under "
        "[timeoff], such a row is held back instead.",
        "If this row corrects the leave the message names, change or cancel that record on the platform (and, if "
        "the platform refused this row or strict_checks held it back, import the file again). If both leaves are "
        "right, correct the dates so that they do not overlap.",
    ),
    "total-days-mismatch": Explanation(
        "Total days do not match",
        "The number of days given is not the platform's count for these dates and half days, and the config "
        "asks for them to agree (total_days = \"strict\").",
        "Check the dates, the half-day columns and the day count; or leave the day count empty to have it "
        "calculated.",
    ),
    "no-leave-days": Explanation(
        "No working days in the period",
        "The platform counts no working day in the period (weekends and public holidays), and the file gives "
        "no number of days. The platform sets no rule against a record of 0 days, so by default this is a "
        "warning and the record was sent with the platform's 0; with total_days = \"strict\" under [timeoff] in "
        "the config (or a file's figure other than 0 under it), the row is held back instead.",
        "Check the dates; if the leave is counted every day (such as sick leave), write the number of days in "
        "the file and correct the record on the platform. If 0 days is right, there is nothing to do.",
    ),
    "end-before-start": Explanation(
        "End before start",
        "The end date is earlier than the start date.",
        "Swap or correct the dates.",
    ),
    "not-a-half-day-marker": Explanation(
        "Not a half-day marker",
        "A half-day cell holds something that is neither yes/no nor AM/PM (First Half, Second Half, 上午, 下午). "
        + _UNREAD_HALVES,
        "Write yes/no, AM/PM, First Half/Second Half, or leave it empty for a full day. If the row was sent, "
        "check its days on the platform.",
    ),
    "ambiguous-half-day": Explanation(
        "Unclear half day",
        "The half-day marker cannot tell whether the first or the last day is the half day. " + _UNREAD_HALVES,
        "Write AM (back at noon on the last day) or PM (off from noon on the first day), or use separate "
        "half-start and half-end columns. If the row was sent, check its days on the platform.",
    ),
    "not-a-number": Explanation(
        "Not a number",
        "The cell should hold a number, such as 2 or 3.5.",
        "Write the number with digits and a dot for decimals.",
    ),
    "no-result": Explanation(
        "No answer for this row",
        "The row was sent, but the platform's answer did not mention it, so whether it was stored is unknown.",
        "Import the file again: staff records are created or updated, never duplicated.",
    ),
    "unexpected-answer": Explanation(
        "Unexpected answer from the platform",
        "The platform answered with something its documentation does not describe.",
        "Run the import again later; if it persists, send the report to the platform's support.",
    ),
    "unexpected-message": Explanation(
        "Unexpected message from the platform",
        "The platform's answer for this row carried a message hrimport does not know.",
        "Check the record in the platform; send the report to the platform's support if it is wrong.",
    ),
    "not-sent": Explanation(
        "Not sent",
        "The run stopped sending before this row: the platform became unreachable, or the run was stopped "
        "(Ctrl-C, or the system ended it). The row itself may be fine.",
        "Run the same import again (once the platform is reachable); nothing is added twice.",
    ),
    "held-for-review": Explanation(
        "Held for review",
        "The drift guard found the file too different from what the platform last accepted from this job (many "
        "people missing, the headcount down, a field changing for many, a column emptied: the top of this report "
        "says which), so no row was sent. The row itself may be fine.",
        "Check the file and the mapping against those reasons. If the file is right, run the same import again "
        "with --accept-drift; if not, import a corrected export.",
    ),
    "overlaps-in-file": Explanation(
        "Overlapping time off in the file",
        "Rows of the file give the same person time off on overlapping days, and they are not one leave listed "
        "twice (that is sent once: Row repeated): two of them differ in a value sent, such as the leave type, "
        "the dates, the half days, the days or the notes. None of them was sent, since which is right is not "
        "known.",
        "Merge or correct the overlapping rows so each day is booked once.",
    ),
    "overlaps-existing": Explanation(
        "Overlaps time off already booked",
        "The platform already holds time off for this person on some of these days.",
        "Check the person's existing time off in the platform; cancel one of the two if needed. When the row "
        "also says it overlaps time off imported before, the file corrects that leave: change or cancel the "
        "old record on the platform, then import the file again.",
    ),
    "bad-encoding": Explanation(
        "Unreadable characters",
        "Some bytes of this cell are not text in the file's encoding (often a value pasted from another "
        "program), so what it says cannot be known; it is shown with \ufffd where the bytes were.",
        "Retype the value in the HR system (or in the file) and export or save the file again.",
    ),
    "cell-too-long": Explanation(
        "A cell longer than a spreadsheet holds",
        "The cell holds more than 32,767 characters, the most a cell of Excel (or LibreOffice, in .xlsx) holds: "
        "a program wrote it, and no spreadsheet program shows it, so nobody can have read what would be sent.",
        "Correct the value in the HR system (or the program that wrote the file) and export the file again.",
    ),
    "error-value": Explanation(
        "An error instead of a value",
        "The cell shows an Excel error such as #N/A or #DIV/0! (a formula that found nothing, or an error "
        "pasted as a value), so there is no value to send; sending nothing, or the config's default, would "
        "hide it.",
        "Correct the formula (or type the value) in the file, save it and import it again.",
    ),
    "formula-not-calculated": Explanation(
        "A formula without its result",
        "The cell holds a formula, but the file was saved without what it calculates, by a program that "
        "writes formulas without calculating them: with no result, or with a stand-in such as 0 and a mark "
        "asking the program opening the file to calculate it again. Excel would show the result; sending "
        "nothing, the stand-in or the config's default would hide it.",
        "Open the file in Excel and save it (that calculates the formulas), or in LibreOffice choose Data > "
        "Calculate > Recalculate Hard and save it, then import it again.",
    ),
    "extra-cells": Explanation(
        "More cells than the header",
        "The row has values beyond the last column of the header, usually because a value holding the "
        "delimiter (a comma or semicolon) was not put in quotes, which shifts the row's values.",
        "Put quotes around values that contain the delimiter, or remove the extra cells, and save again.",
    ),
    "header-row-repeated": Explanation(
        "Header row repeated",
        "The row holds the column names of the header row again, not a record: two exports were probably "
        "joined into one file (one pasted under the other, or two files put together), and the second one's "
        "header became a row of data. It was not sent, and nothing else is said about its cells.",
        "Delete this row from the file. Then check that the rows below it are the export you meant to import "
        "(not last month's as well), and import the file again.",
    ),
    "totals-or-footer-row": Explanation(
        "Totals row or footer line",
        "The row is no record: it looks like a totals row (\"Total\", \"Grand Total\", \"Summe\", \"合计\" and a "
        "count or a sum, or a sum alone) or a footer line (\"Generated by ... on ...\", \"Confidential\") that the "
        "HR system wrote under the table: its id and name cells hold such words or nothing, and most of its "
        "required cells are empty. It was not sent, and nothing else is said about its cells.",
        "Nothing, if the row is what the message shows: it is never sent (delete it from the export if you "
        "prefer). If it is a person, fill in their cells and import the file again. If the HR system writes such "
        "rows under every export, totals_or_footer_rows = \"skip\" in the config's [source] table has them "
        "skipped: each is still named here, as a warning, but needs no attention and the run does not exit 1.",
    ),
    "scientific-notation": Explanation(
        "Long number in scientific notation",
        "The cell holds a number written in scientific notation (4.40301E+17): a spreadsheet keeps only 15 "
        "digits of a number, and shows a longer one so. An id, a bank account or a phone number stored as a "
        "number has lost its last digits, and two people's numbers may now read alike. The value was kept as "
        "written; this is a warning, unless scientific-notation is in the config's strict_checks, which holds the "
        "row back.",
        "In the HR system (or the spreadsheet), store the column as text and export it again, or type the "
        "number in full in a cell formatted as text.",
    ),
    "invisible-character": Explanation(
        "Character nobody sees in the value",
        "The value holds a character that takes no room on screen: a zero-width space, a direction mark, a soft "
        "hyphen, a word joiner, usually pasted with the text from a web page, a chat or an e-mail. The sheet shows "
        "the value without it, but the platform would store it with it: an id so written is another person than "
        "the one without it, and a name or a phone number so written is found by no search. The value was kept as "
        "written; this is a warning, unless invisible-character is in the config's strict_checks, which holds the "
        "row back.",
        "Retype the value in the HR system (or delete the character: in Excel, click into the cell, go to where the "
        "message says and press Delete or Backspace once), export and import again. If it was sent, correct it on "
        "the platform too.",
    ),
    "hidden-row": Explanation(
        "Row hidden in the workbook",
        "The row is hidden in the workbook: filtered out by an AutoFilter (\"Status = Active\") or hidden with "
        "Hide, and saved so. It is still in the file, and it was sent like any other row, though nobody sees it "
        "on screen in Excel: a leaver, last month's row kept below, a test person. This is a warning, unless "
        "hidden-row is in the config's strict_checks, which holds the row back.",
        "Unhide the row in Excel (clear the filter, or select the rows around it and Unhide) and check it. If it "
        "is not to be imported, delete it and import the file again; if it was sent by mistake, correct it on the "
        "platform.",
    ),
    "hidden-column": Explanation(
        "Value in a hidden column of the workbook",
        "The column is hidden in the workbook (Hide, or a width dragged to zero; Workday hides its ID columns in "
        "its exports), and the config sends it, as a field or a custom field. Its values are still in the file, "
        "and this row's was sent like any other, though nobody sees the column on screen in Excel: a config made "
        "before the export hid it, or a column nobody checked. This is a warning, unless hidden-column is in the "
        "config's strict_checks, which holds the row back.",
        "Unhide the column in Excel (select the columns on either side of it, then Unhide) and check its values. "
        "If it is not to be sent, take it out of the config's columns (or custom fields) and import the file "
        "again; if a value was sent by mistake, correct it on the platform.",
    ),
    "date-order-mismatch": Explanation(
        "Date in the wrong order",
        "The column's dates are read in one order (day-first or month-first, shown in the message); this "
        "date cannot be read that way, so it is not guessed.",
        "Write the date in the column's order, or as YYYY-MM-DD.",
    ),
    "two-digit-year": Explanation(
        "Two-digit year",
        "The date's year has two digits, so the century is unknown (20 could be 1920 or 2020).",
        "Write the year in full (2020), or format the column as dates in Excel.",
    ),
    "ambiguous-country": Explanation(
        "Country not certain",
        "The text is a name or code of more than one country (in different languages, or a name such as "
        "Congo that people use for two), so it is not guessed.",
        "Write the country's two-letter ISO code (AT, BE, RU...).",
    ),
    "formula-like-text": Explanation(
        "Looks like a spreadsheet formula",
        "The value starts with =, +, - or @ followed by something other than a number or phone number, so a "
        "spreadsheet opening it could run it as a formula. The platform sets no rule against such values, so "
        "by default this is a warning and the value is sent as written (the reports and files to fix show it "
        "as text, never as a formula); with formula_text = \"reject\" under [source] in the config, the row "
        "is held back instead.",
        "If the leading character is a mistake, correct the value in the HR system (or in the file to fix) "
        "and import again. If it is meant (=Manager, @Home Office), there is nothing to fix; a config that "
        "says formula_text = \"reject\" holds such rows back until that line is removed.",
    ),
    "formula-like-text-stripped": Explanation(
        "Formula character removed",
        "The value started like a spreadsheet formula; as the config's formula_text = \"strip\" says, it was "
        "sent without its leading character(s).",
        "Check that the value sent (shown in the message) is what was meant.",
    ),
    "platform-altered": Explanation(
        "Stored differently by the platform",
        "The platform accepted the row but stored a value otherwise than it was sent: cut short, left out, in "
        "another case or changed. The message names the field, what was sent and what the platform holds.",
        "Check the value on the platform. If it matters, shorten or correct it in the HR system to what the "
        "platform can hold, or ask the platform administrator to enable the field; the row itself was imported.",
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
