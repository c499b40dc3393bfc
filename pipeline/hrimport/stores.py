"""Compact stores of a run's rows (issue 17: a million rows in flat memory).

- ``Positional``: a read-only ``Sequence`` whose subclasses say only how to get the item at one position;
- ``TextColumn``: strings kept to the end of a run (external ids, names) as Arrow arrays.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar, overload

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
