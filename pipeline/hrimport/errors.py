"""hrimport's exceptions, and the exit code each one ends a command with.

Bad rows are never exceptions (they are ``Problem`` values, see ``hrimport.outcomes``); these are for a
bad command line, config or file, a job already running, or a service that cannot be used::

    HrimportError
    ├── UsageError               exit 2  a bad option or argument
    ├── ConfigError              exit 2  the import or job config is wrong
    ├── InputFileError           exit 2  the spreadsheet cannot be read as asked
    ├── JobLockedError           exit 3  another run of the same job holds its lock
    └── ServiceError             exit 4  the service cannot be used
        ├── AuthenticationError          401: the token is missing, wrong or expired
        └── ServiceUnavailableError      still unreachable or failing after retries

``hrimport.service.client`` is the one place where httpx's exceptions become these.
"""

from __future__ import annotations


class HrimportError(Exception):
    """Base class; ``exit_code`` is what the CLI exits with."""

    exit_code = 2


class UsageError(HrimportError):
    exit_code = 2


class ConfigError(HrimportError):
    exit_code = 2


class InputFileError(HrimportError):
    exit_code = 2


class JobLockedError(HrimportError):
    exit_code = 3


class ServiceError(HrimportError):
    exit_code = 4


class AuthenticationError(ServiceError):
    pass


class ServiceUnavailableError(ServiceError):
    pass


EXIT_OK = 0
EXIT_ROWS_NEED_ATTENTION = 1
EXIT_INPUT = 2
EXIT_LOCKED = 3
EXIT_SERVICE = 4
