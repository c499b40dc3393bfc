"""The embedded sandbox: the sandbox started in a thread of this process, for a run with no service set.

``hrimport.service.connection`` falls back to it when no base URL is configured, and the demo runs on it.
It lives with the sandbox, not with the service client, so that the code that talks to the platform
never imports the sandbox's server (FastAPI, uvicorn) to do so.

Its data is kept in ``$HRIMPORT_SANDBOX_DB`` (default ``.hrimport/sandbox.db``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from hrimport.errors import ConfigError
from hrimport.private_files import make_private_file, make_private_folder

DEFAULT_SANDBOX_DB = Path(".hrimport") / "sandbox.db"


@contextmanager
def running_sandbox(db_path: str | Path, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run the sandbox in a thread of this process; yields its base URL (``http://HOST:PORT/sandbox``)."""
    import uvicorn

    from hrimport.sandbox.app import create_app

    db_path = Path(db_path)
    # A trial on the embedded sandbox stores the export's real rows (names, e-mails, birth dates...) in this
    # file, by default .hrimport/ of the folder the command runs in, which need not be the config's state
    # folder: private like it. A folder made here is 0700; an existing one (a $HRIMPORT_SANDBOX_DB the user
    # chose) is left as it is, and the file is 0600 from its first byte (SQLite's -wal and -shm take its mode).
    if not db_path.parent.exists():
        make_private_folder(db_path.parent)
    make_private_file(db_path)
    server = uvicorn.Server(uvicorn.Config(create_app(db_path), host=host, port=port, log_level="warning",
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, name="hrimport-sandbox", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise ConfigError(f"the embedded sandbox did not start on {host}:{port}")
        time.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{bound}/sandbox"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def sandbox_db_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the embedded sandbox keeps its data: ``$HRIMPORT_SANDBOX_DB``, else ``.hrimport/sandbox.db``."""
    env = os.environ if environ is None else environ
    return Path(env.get("HRIMPORT_SANDBOX_DB") or DEFAULT_SANDBOX_DB)
