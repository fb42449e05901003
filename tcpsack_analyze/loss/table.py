"""Loss records stored column by column, so that holding them costs bytes, not objects.

A long capture with 1% loss holds tens of thousands of loss records until the report is written.
As slotted dataclasses with their integers and strings they took 0.7-1.5 KB each, which made the
peak RSS grow with the length of the capture (issue 2: 1M and 5M packets within 20%). A
:class:`RecordTable` keeps each field of one record kind in a compact column:

- integers (``int``, ``int | None``) in an ``array.array`` of int32, widened to int64 at the
  first value that needs it, with the type's minimum standing for None;
- booleans as bytes;
- strings (``str``, ``str | None``) and ``list[str]`` as codes into a vocabulary while values
  repeat (triggers, causes, directions), and as a plain list once they mostly do not (evidence
  lines).

Records are rebuilt on demand (:meth:`RecordTable.records`); whole columns are read with
:meth:`RecordTable.column` and :meth:`RecordTable.ints` without building records.
"""
from __future__ import annotations

import dataclasses
import operator
from array import array
from collections.abc import Iterable
from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np

R = TypeVar("R")

_NONE = {"i": -(1 << 31), "q": -(1 << 63)}  # stands for None in an integer column
VOCABULARY_MIN = 16  # a coded column keeps plain values once its vocabulary is past this...
VOCABULARY_SHARE = 0.5  # ...and past this share of its values (they mostly do not repeat)
VOCABULARY_MAX = 1 << 15  # ...or past the int16 codes


def _view(data: array) -> np.ndarray:
    """An array.array as a numpy array over the same memory (its typecode is a numpy dtype)."""
    return np.frombuffer(data, dtype=data.typecode)


class _IntColumn:
    """int32 values, widened to int64 when one does not fit; None as the type's minimum."""

    __slots__ = ("data", "none")

    def __init__(self) -> None:
        self.data = array("i")
        self.none = _NONE["i"]

    def append(self, value: int | None) -> None:
        if value is None:
            value = self.none
        elif value == self.none:
            self._widen()
        try:
            self.data.append(value)
        except OverflowError:
            self._widen()
            self.data.append(value)

    def _widen(self) -> None:
        if self.data.typecode == "q":
            raise OverflowError("loss record integer outside int64")
        old = _view(self.data).astype(np.int64)
        old[old == self.none] = _NONE["q"]
        self.none = _NONE["q"]
        self.data = array("q", old.tobytes())

    @classmethod
    def of(cls, values: np.ndarray) -> _IntColumn:
        """A column of int32 or int64 values with the type's minimum for None (the compiled loss
        tracker's columns, narrowed there to int32 when every value fits)."""
        col = cls()
        raw = np.asarray(values)
        if raw.dtype == np.int32:
            col.data = array("i", raw.tobytes())
        else:
            col.data, col.none = array("q", raw.astype(np.int64).tobytes()), _NONE["q"]
        return col

    def values(self) -> list[int | None]:
        none = self.none
        return [None if x == none else x for x in self.data]

    def ints(self) -> tuple[np.ndarray, np.ndarray]:
        raw = _view(self.data)
        return raw.astype(np.int64), raw != self.none


class _BoolColumn:
    __slots__ = ("data",)

    def __init__(self) -> None:
        self.data = array("b")

    def append(self, value: bool) -> None:
        self.data.append(1 if value else 0)

    @classmethod
    def of(cls, values: np.ndarray) -> _BoolColumn:
        col = cls()
        col.data = array("b", np.asarray(values, np.int8).tobytes())
        return col

    def values(self) -> list[bool]:
        return [bool(x) for x in self.data]

    def ints(self) -> tuple[np.ndarray, np.ndarray]:
        return _view(self.data).astype(np.int64), np.ones(len(self.data), dtype=bool)


class _CodedColumn:
    """Strings (or tuples of them) as int16 codes into a vocabulary; plain values once the
    values mostly do not repeat (the vocabulary would cost more than the values)."""

    __slots__ = ("codes", "vocab", "index", "plain", "as_list")

    def __init__(self, as_list: bool) -> None:
        self.codes: array | None = array("h")
        self.vocab: list[Any] = []
        self.index: dict[Any, int] = {}
        self.plain: list[Any] | None = None
        self.as_list = as_list  # the field is a list (stored as a tuple, given back as a list)

    def append(self, value: Any) -> None:
        if self.as_list:
            value = tuple(value)
        if self.plain is not None:
            self.plain.append(value)
            return
        code = self.index.get(value)
        if code is None:
            n = len(self.vocab)
            if n >= VOCABULARY_MAX or (n >= VOCABULARY_MIN and n > VOCABULARY_SHARE * (len(self.codes or ()) + 1)):
                self.plain = self._decoded()
                self.codes, self.vocab, self.index = None, [], {}
                self.plain.append(value)
                return
            code = self.index[value] = len(self.vocab)
            self.vocab.append(value)
        assert self.codes is not None
        self.codes.append(code)

    def _decoded(self) -> list[Any]:
        if self.plain is not None:
            return list(self.plain)
        assert self.codes is not None
        vocab = self.vocab
        return [vocab[c] for c in self.codes]

    def values(self) -> list[Any]:
        out = self._decoded()
        return [list(v) for v in out] if self.as_list else out


_Column = _IntColumn | _BoolColumn | _CodedColumn


def _column_for(annotation: str) -> _Column:
    """The column for a dataclass field, from its annotation (a string: postponed evaluation)."""
    base = annotation.replace(" | None", "").strip()
    if base == "int":
        return _IntColumn()
    if base == "bool":
        return _BoolColumn()
    if base == "str":
        return _CodedColumn(as_list=False)
    if base == "list[str]":
        return _CodedColumn(as_list=True)
    raise TypeError(f"no column for a field of type {annotation!r}")


class _Kind(NamedTuple):
    """What the tables of one record kind share: its fields' annotations and a getter of them."""

    types: dict[str, str]  # field name -> annotation (a string: postponed evaluation)
    names: tuple[str, ...]
    get: operator.attrgetter


_KINDS: dict[type, _Kind] = {}


def _kind(kind: type) -> _Kind:
    """The shared description of a record kind (made once per kind, not once per table)."""
    known = _KINDS.get(kind)
    if known is None:
        types = {f.name: str(f.type) for f in dataclasses.fields(kind)}
        known = _KINDS[kind] = _Kind(types, tuple(types), operator.attrgetter(*types))
    return known


class RecordTable(Generic[R]):
    """The records of one dataclass kind (in the order appended), one compact column per field.

    The columns are made at the first record: most directions of a capture of many short
    connections have no loss record of any kind, and ten empty tables of a dozen columns cost
    about 30 KB per connection (issue 16); an empty table is the object and its kind.
    """

    __slots__ = ("kind", "names", "_cols", "_size")

    def __init__(self, kind: type[R], records: Iterable[R] = ()) -> None:
        self.kind = kind
        self.names = _kind(kind).names
        self._cols: dict[str, _Column] | None = None
        self._size = 0
        for rec in records:
            self.append(rec)

    @classmethod
    def from_columns(cls, kind: type[R], size: int, values: dict[str, Any]) -> RecordTable[R]:
        """A table of ``size`` records from one sequence of values per field (integer fields as
        int32 or int64 arrays with the type's minimum for None, booleans as arrays, the others as
        lists):
        the loss tracker's tables, made in the compiled core."""
        table: RecordTable[R] = cls(kind)
        if not size:
            return table
        cols: dict[str, _Column] = {}
        for name, annotation in _kind(kind).types.items():
            col = _column_for(annotation)
            if isinstance(col, _IntColumn):
                col = _IntColumn.of(values[name])
            elif isinstance(col, _BoolColumn):
                col = _BoolColumn.of(values[name])
            else:
                for value in values[name]:
                    col.append(value)
            cols[name] = col
        table._cols = cols
        table._size = size
        return table

    def __len__(self) -> int:
        return self._size

    def _columns(self) -> dict[str, _Column]:
        if self._cols is None:
            self._cols = {name: _column_for(t) for name, t in _kind(self.kind).types.items()}
        return self._cols

    def append(self, rec: R) -> None:
        for col, value in zip(self._columns().values(), _kind(self.kind).get(rec)):
            col.append(value)
        self._size += 1

    def records(self) -> list[R]:
        """The records, rebuilt (new objects on each call: changing them changes nothing here)."""
        if not self._size:
            return []
        cols = [col.values() for col in self._columns().values()]
        kind = self.kind
        return [kind(*row) for row in zip(*cols)]

    def column(self, name: str) -> list[Any]:
        """One field of every record, as Python values."""
        if name not in self.names:
            raise KeyError(name)
        return self._columns()[name].values() if self._size else []

    def ints(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """An integer or boolean field as int64 values and a mask of the records that have one."""
        col = self._cols[name] if self._cols is not None else _column_for(_kind(self.kind).types[name])  # empty: not kept
        if isinstance(col, _CodedColumn):
            raise TypeError(f"{name} is not a number")
        return col.ints()
