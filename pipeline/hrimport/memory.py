"""How the process asks for memory, so that reading a file in chunks stays flat (issue 17).

Two allocators hold a run's cells: glibc's malloc (Python objects, fastexcel's Rust cells) and pyarrow's
pool (every Arrow string pandas holds). Each keeps pages it freed for reuse unless told otherwise, and a
chunked run frees a chunk's worth of cells every chunk: without the settings here, a 100,000-row XLSX dry run
peaked at 400-412 MB where 345 MB are in use at most.

- ``use_returning_arrow_pool``: for a workbook, pyarrow's jemalloc pool instead of its default mimalloc, which
  kept the pages each piece's cells freed (fastexcel's cells turned into text, rewritten, cut into chunks): the
  100,000 x 40 XLSX validate and dry run peak 35-55 MB lower at the same CPU time (``make bench``'s commands on
  this 2-core machine). Not for CSV: the staff validate peaks 25 MB lower but the time-off validate of
  200,000 rows costs 10% more CPU, and its peak grows more with the rows than mimalloc's.
- ``share_malloc_arenas``: the threads reading a sheet's pieces share one malloc arena.
- ``release_freed_memory``: malloc gives back the pages freed since the last piece.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable


def use_returning_arrow_pool() -> None:
    """Make pyarrow's jemalloc pool the default for the Arrow arrays made from now on (those made before keep
    theirs). Left alone where pyarrow is built without jemalloc (Windows) or the user chose a pool with
    ``ARROW_DEFAULT_MEMORY_POOL``."""
    import pyarrow as pa

    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return
    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except NotImplementedError:  # pyarrow.lib.ArrowNotImplementedError is one
        pass


def _malloc_function(name: str) -> Callable[..., int] | None:
    try:
        function: Callable[..., int] = getattr(ctypes.CDLL(None), name)
        return function
    except (OSError, AttributeError, TypeError):  # not glibc (Windows: no CDLL(None)): nothing to tune
        return None


_MALLOC_TRIM = _malloc_function("malloc_trim")
_MALLOPT = _malloc_function("mallopt")
_M_ARENA_MAX = -8  # mallopt's parameter for the number of arenas (glibc's malloc.h)
#: Arenas malloc may keep: the main thread's, and one the threads reading a sheet share.
MALLOC_ARENAS = 2


def share_malloc_arenas() -> None:
    """Let the threads reading a sheet's pieces (fastexcel's, the one cutting and scanning them, the one
    measuring the sheet) share one malloc arena: glibc gives each thread an arena of its own, and each
    keeps pages its thread freed, so that a 100,000-row validation peaked 20-50 MB higher with the
    piece-cutting thread than without it (400 MB with shared strings; 350 MB in shared arenas). Set once
    for the process, before those threads start; a glibc that has made more arenas already reuses them."""
    if _MALLOPT is not None:
        _MALLOPT(_M_ARENA_MAX, MALLOC_ARENAS)


def release_freed_memory() -> None:
    """Give the memory freed since the last grid back to the system. fastexcel's cells and Arrow strings
    are allocated in Rust by glibc's malloc, in the reading thread's arena, which keeps freed pages
    unless told: a 100,000-row validation otherwise ends 40 MB higher, for nothing."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
