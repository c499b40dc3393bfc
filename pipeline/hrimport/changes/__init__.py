"""What a file will change, judged against what the platform last accepted (issue 15).

- ``plan``: every row ``new``, ``changed`` (field by field, before -> after), ``unchanged`` or ``invalid``,
  and the people ``missing`` from the file; what payroll cares about picked out (new hires, leavers,
  country, e-mail and job changes).
- ``guards``: the drift guard, which holds a suspicious month (a broken export, a wrong mapping) before
  anything is sent.

Plain data in (payloads, the state folder's ``AcceptedRecord``s), plain data out.
"""
