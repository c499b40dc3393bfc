"""``Positional``: a read-only ``Sequence`` whose subclasses say only how to get the item at one position."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar, overload

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
