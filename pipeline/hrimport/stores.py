"""Compact stores of a run's rows (issue 17: a million rows in flat memory).

- ``Positional``: a read-only ``Sequence`` whose subclasses say only how to get the item at one position,
  and ``Iterated``, one read front to back;
- ``TextColumn``: strings kept to the end of a run (external ids, names) as Arrow arrays;
- ``Spool``: lists of objects kept to the end of a run in a temporary file, not in memory;
- ``SpooledList``: a list appended to, and iterated, whose items past the first few thousand wait in a ``Spool``;
- ``PickledRows``: objects written to a file a piece at a time, for another process to read as a sequence.
"""

from __future__ import annotations

import bisect
import os
import pickle
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import IO, TYPE_CHECKING, Generic, TypeVar, overload

from hrimport.private_files import anonymous_file

if TYPE_CHECKING:
    import pyarrow as pa

T = TypeVar("T")


class Positional(Sequence[T]):
    """A ``Sequence`` made of ``__len__`` and ``_at(index)`` (an index in ``range(len(self))``): negative
    indexes, bounds and slices are worked out here once, for the stores of a run's rows that are not lists
    (``hrimport.imports.records``, ``hrimport.outcomes``). A slice is made item by item in order
    (``_slice``), which a store read front to back serves best."""

    def _at(self, index: int) -> T:
        raise NotImplementedError

    def _slice(self, start: int, stop: int, step: int) -> list[T]:
        return [self._at(i) for i in range(start, stop, step)]

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return self._slice(*index.indices(len(self)))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._at(index)


class Iterated(Positional[T]):
    """A ``Positional`` read front to back (its ``__iter__``): an item is found by iterating up to it, a
    slice by iterating over it; equal to a list, a tuple or another ``Iterated`` holding equal items."""

    def __iter__(self) -> Iterator[T]:
        raise NotImplementedError

    def _at(self, index: int) -> T:
        return next(islice(self, index, None))

    def _slice(self, start: int, stop: int, step: int) -> list[T]:
        if step == 1:
            return list(islice(self, start, max(start, stop)))  # the first items without making the others
        items = list(self)
        return [items[i] for i in range(start, stop, step)]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Iterated | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class TextColumn(Positional[str]):
    """Strings kept to the end of a run (ids, names), as Arrow arrays in malloc's pool rather than one
    Python object each: kept objects made among a chunk's millions of short-lived ones would pin the
    allocator's pages they share, and a run's memory would grow with every chunk."""

    def __init__(self) -> None:
        self._pieces: list[pa.Array] = []
        self._ends: list[int] = []  # the index after each piece's last string
        self._read: tuple[int, int, list[str]] = (0, 0, [])  # the piece read last: its range, its strings

    def extend(self, values: Iterable[str]) -> None:
        import pyarrow as pa  # here: ``hrimport.outcomes`` (and ``--help``) import this module

        piece = pa.array(list(values), type=pa.string(), memory_pool=pa.system_memory_pool())
        if len(piece):
            self._pieces.append(piece)
            self._ends.append(len(self) + len(piece))

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def _at(self, index: int) -> str:
        start, stop, values = self._read
        if not start <= index < stop:  # records are asked for in order: each piece is made Python strings once
            k = bisect.bisect_right(self._ends, index)
            start, stop = (self._ends[k - 1] if k else 0), self._ends[k]
            values = self._pieces[k].to_pylist()
            self._read = (start, stop, values)
        value: str = values[index - start]
        return value

    def __iter__(self) -> Iterator[str]:
        for piece in self._pieces:
            yield from piece.to_pylist()

    def as_arrow(self) -> pa.ChunkedArray:
        """The strings as one Arrow column, not copied."""
        import pyarrow as pa

        return pa.chunked_array(self._pieces, type=pa.string())


#: Where a ``Spool`` holds one list: its first byte in the file and its length in bytes.
Spooled = tuple[int, int]


class Spool(Generic[T]):
    """Lists of objects pickled into a temporary file (unlinked from the start, readable by this process
    only, gone when the spool is dropped), each read back whole when asked for: what a run keeps to its
    end that would otherwise take memory in proportion to its rows."""

    def __init__(self) -> None:
        self._file = anonymous_file(self)

    def put(self, items: list[T]) -> Spooled:
        data = pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)
        start = self._file.seek(0, os.SEEK_END)
        self._file.write(data)
        return start, len(data)

    def get(self, where: Spooled) -> list[T]:
        start, length = where
        self._file.seek(start)
        items: list[T] = pickle.loads(self._file.read(length))  # unpickled: written by this process, for itself
        return items


class SpooledList(Generic[T]):
    """A list that is appended to, then iterated (as often as needed) in the order of its items: the first
    ``held`` of them are kept in memory, the others wait in a ``Spool``, a piece of ``AT_ONCE`` at a time,
    so a list of every problem of a file whose every row has one does not take memory in proportion to it."""

    AT_ONCE = 2_000

    def __init__(self, held: int) -> None:
        self._held: list[T] = []
        self._capacity = held
        self._pieces: list[Spooled] = []
        self._tail: list[T] = []  # the items after the held ones, not yet put in the spool
        self._spool: Spool[T] | None = None
        self._length = 0

    def append(self, item: T) -> None:
        self._length += 1
        if len(self._held) < self._capacity:
            self._held.append(item)
            return
        self._tail.append(item)
        if len(self._tail) == self.AT_ONCE:
            self._spooled(self._tail)
            self._tail = []

    def _spooled(self, items: list[T]) -> None:
        """Put ``AT_ONCE`` items, the ones after those held so far, in the spool."""
        self._pieces.append(self._spool_of().put(items))

    def _spool_of(self) -> Spool[T]:
        if self._spool is None:
            self._spool = Spool()
        return self._spool

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[T]:
        yield from self._held
        for piece in self._pieces:
            yield from self._spool_of().get(piece)
        yield from self._tail


class PickledRows(Iterated[T]):
    """Objects pickled into a file a piece at a time (``write``), read back the same way each time they are
    iterated: how many rows reach another process (``hrimport.report.writer``'s to_fix) without being held,
    or pickled, whole on either side. Only the file's path and the count are pickled with it."""

    AT_ONCE = 1_000

    def __init__(self, path: Path, count: int) -> None:
        self.path, self._count = path, count

    @classmethod
    def write(cls, items: Iterable[T], path: Path, out: IO[bytes]) -> PickledRows[T]:
        """Write ``items`` to ``out`` (the file ``path``, open to write), and close it."""
        count = 0
        with out:
            piece: list[T] = []
            for item in items:
                piece.append(item)
                if len(piece) == cls.AT_ONCE:
                    pickle.dump(piece, out, protocol=pickle.HIGHEST_PROTOCOL)
                    count, piece = count + len(piece), []
            if piece:
                pickle.dump(piece, out, protocol=pickle.HIGHEST_PROTOCOL)
                count += len(piece)
        return cls(path, count)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[T]:
        with open(self.path, "rb") as fh:
            while True:
                try:
                    piece: list[T] = pickle.load(fh)
                except EOFError:
                    return
                yield from piece
