"""The platform interface document's field tables, transcribed by hand (tests/test_interface_fields.py).

Copied from the interface document ("Staff, Time-Off and Vendor Customer Service Interface", sections
"Resources and their fields" and "Endpoints"), row by row in its order, types and "Required" written as
the document writes them; NOT generated from ``schemas/``. ``schemas/*.toml`` is our own reading of the
same tables, used by the sandbox, the validation and the README alike: a field wrong there would pass
everywhere at once. Checking it against this second, independent copy catches that.

Each input row is ``(field, type, required)``; ``CHOICES`` and ``DEFAULTS`` hold what a row's "Rules"
column says about allowed values and defaults. Do not edit these tables to make a test pass: edit them only
when the interface document changes, and then from the document.
"""

from __future__ import annotations

# --- "Staff input fields (single and bulk)" ------------------------------------------------------------
STAFF_INPUT: list[tuple[str, str, str]] = [
    ("customer_id", "integer (single), string (bulk)", "yes"),
    ("customer_system_id", "string", "yes"),
    ("customer_system_id_type", "string", "yes"),
    ("name", "string", "yes"),
    ("system_email", "string", "yes"),
    ("country", "string", "yes"),
    ("job_title", "string", "yes"),
    ("job_start_date", "string", "yes"),
    ("staff_type", "string", "yes"),
    ("is_manager", "boolean", "no"),
    ("is_employee", "boolean", "no"),
    ("is_intern", "boolean", "no"),
    ("birthdate", "string", "no"),
    ("gender", "string", "no"),
    ("highest_education", "string", "no"),
    ("nationality", "string", "no"),
    ("personal_email", "string", "no"),
    ("phone", "string", "no"),
    ("phone_country", "string", "no"),
    ("emergency_name", "string", "no"),
    ("emergency_email", "string", "no"),
    ("emergency_phone", "string", "no"),
    ("emergency_phone_country", "string", "no"),
    ("emergency_relationship", "string", "no"),
    ("passport_number", "string", "no"),
    ("passport_issue_date", "string", "no"),
    ("passport_issuing_country", "string", "no"),
    ("passport_expiry_date", "string", "no"),
    ("reporting_officer", "string", "no"),
    ("ec_type", "string", "no"),
    ("ec_entity_id", "string", "no"),
    ("ec_entity_system_id_type", "string", "no"),
    ("ec_start_date", "string", "no"),
    ("ec_end_date", "string", "no"),
    ("probation_end_date", "string", "no"),
    ("last_working_day", "string", "no"),
    ("offboarding_reason", "string", "no"),
    ("location", "string", "no"),
    ("work_email", "string", "no"),
    ("customer_data_type", "array of custom data entries", "no"),
    ("old_country", "string", "conditional"),
    ("new_country_effective_date", "string", "conditional"),
]

#: Endpoint 2, "Required:" (the single endpoint's body).
STAFF_REQUIRED_SINGLE = ["customer_id", "customer_system_id", "customer_system_id_type", "name", "system_email",
                         "country", "job_title", "job_start_date", "staff_type"]
#: Endpoint 3, "Required in each element:" (``customer_id`` sits once at the top of the bulk body).
STAFF_REQUIRED_BULK_ELEMENT = ["customer_system_id", "customer_system_id_type", "name", "system_email", "country",
                               "job_title", "job_start_date", "staff_type"]

# --- "4. Calculate total leave days", Body -------------------------------------------------------------
LEAVE_DAYS_INPUT: list[tuple[str, str, str]] = [
    ("country", "string", "yes"),
    ("start_date", "string", "yes"),
    ("end_date", "string", "yes"),
    ("is_half_start_date", "boolean", "yes"),
    ("is_half_end_date", "boolean", "yes"),
]

# --- "5. Add time-off record", Body --------------------------------------------------------------------
TIMEOFF_INPUT: list[tuple[str, str, str]] = [
    ("customer_id", "integer", "yes"),
    ("customer_system_id", "string", "yes"),
    ("leave_type", "string", "yes"),
    ("lang", "string", "yes"),
    ("country", "string", "yes"),
    ("start_date", "string", "yes"),
    ("end_date", "string", "yes"),
    ("total_days", "string", "yes"),
    ("notes", "string", "no"),
    ("decision", "string", "no"),
]

#: Allowed values the "Rules" columns list, in the case the document writes them.
CHOICES: dict[str, dict[str, list[str]]] = {
    "staff": {
        "staff_type": ["System", "Payroll", "HRO", "EOR"],
        "gender": ["Female", "Male"],
        "ec_type": ["Fixed-term", "Indefinite"],
        "ec_entity_system_id_type": ["Platform", "Customer"],
        "offboarding_reason": ["Involuntary", "Voluntary"],
    },
    "timeoff": {
        "lang": ["EN", "ZH"],
        "decision": ["Approve", "Reject"],
    },
    "leave_days": {},
}

#: Defaults the "Rules" columns state.
DEFAULTS: dict[str, dict[str, bool]] = {
    "staff": {"is_manager": False, "is_employee": True},
    "timeoff": {},
    "leave_days": {"is_half_start_date": False, "is_half_end_date": False},
}

# --- "Staff output record (`user`)": "All fields are strings unless noted." -------------------------------
# Rows as the document groups them: (comma-separated field names, type).
STAFF_OUTPUT: list[tuple[str, str]] = [
    ("id", "integer"),
    ("name, role, system_email, country, status", "string"),
    ("offboarding_reason, birthdate, gender, highest_education, nationality", "string"),
    ("personal_email, phone", "string"),
    ("emergency_name, emergency_email, emergency_phone, emergency_relationship", "string"),
    ("passport_number, passport_issue_date, passport_issuing_country, passport_expiry_date", "string"),
    ("reporting_officer, job_title, location, staff_type, work_email", "string"),
    ("ec_entity, ec_type, ec_vendor", "string"),
    ("job_start_date, probation_end_date, ec_start_date, ec_end_date", "string"),
    ("last_working_day", "string or null"),
    (("host_country, host_staff_type, host_ec_entity, host_ec_vendor, host_ec_type, host_ec_start_date, "
      "host_ec_end_date"), "string"),
    ("job_scope", "string"),
    ("customer_system_id", "string"),
]
