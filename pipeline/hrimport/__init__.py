"""hrimport: load HRIS spreadsheet exports into an HR/payroll platform's API, with a report of every row.

Stages (each a module with plain data in and out)::

    reader -> mapper -> validate -> submit -> report
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("hrimport")
except PackageNotFoundError:  # running from a checkout without an install
    __version__ = "0.0.0+checkout"

__all__ = ["__version__"]
