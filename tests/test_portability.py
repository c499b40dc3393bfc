"""hrimport starts where POSIX-only modules do not exist (Windows): no module of it imports one.

The test suite runs on Linux, where ``import fcntl`` works, so an import of a POSIX-only module would pass
every other test and still stop every command on Windows (as ``import fcntl`` in the lock once did). Here a
fresh interpreter makes those modules unimportable, as they are on Windows, then imports every module of
hrimport and asks every command for its ``--help``.
"""

from __future__ import annotations

import json
import subprocess
import sys

# Modules of the standard library that exist on POSIX systems only (Python's docs, "Availability: Unix"),
# but for ``posix`` itself, which ``os`` needs to start on POSIX (``nt`` on Windows).
POSIX_ONLY = ("fcntl", "termios", "tty", "pty", "pwd", "grp", "resource", "syslog")

SCRIPT = """
import sys
for name in sys.argv[1:]:
    sys.modules[name] = None  # `import name` now raises ImportError, as on Windows

import importlib, json, pkgutil, traceback

import click

import hrimport
from hrimport.cli import main

failed = {}


def record(name):
    failed[name] = traceback.format_exc(limit=-3)


for info in pkgutil.walk_packages(hrimport.__path__, "hrimport.", onerror=record):
    if info.name.endswith(".__main__"):  # importing it runs the command; ask_help below runs it instead
        continue
    try:
        importlib.import_module(info.name)
    except Exception:
        record(info.name)

helped = []


def ask_help(command, path):
    try:
        main.main(args=[*path, "--help"], prog_name="hrimport", standalone_mode=False)
        helped.append(" ".join(["hrimport", *path]))
    except Exception:
        record(" ".join(["hrimport", *path, "--help"]))
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            ask_help(sub, [*path, name])


ask_help(main, [])
print(json.dumps({"failed": failed, "helped": helped}))
"""


def test_every_module_imports_and_every_command_helps_without_posix_only_modules() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, *POSIX_ONLY], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["failed"] == {}, "\n".join(f"{name}:\n{error}" for name, error in result["failed"].items())
    assert "hrimport" in result["helped"] and "hrimport run" in result["helped"]
    assert len(result["helped"]) > 5  # the groups' commands too (staff import, timeoff import...)
