"""RecordTable (loss/table.py): records come back as they went in, whatever their values."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpsack_analyze.loss import table as table_mod
from tcpsack_analyze.loss.records import Retransmission
from tcpsack_analyze.loss.table import RecordTable


@dataclass(slots=True)
class _Rec:
    n: int
    maybe: int | None
    flag: bool
    word: str
    note: str | None
    words: list[str] = field(default_factory=list)


_INT = st.one_of(
    st.integers(-(1 << 31), (1 << 31) - 1),  # int32, including its minimum (None's mark)
    st.integers(-(1 << 63) + 1, (1 << 63) - 1),  # forces int64
)
_WORD = st.sampled_from(["fast", "rto", "tlp", "recovery"])
_TEXT = st.text(max_size=30)  # mostly distinct: the column turns plain
_RECS = st.lists(
    st.builds(_Rec, _INT, st.one_of(st.none(), _INT), st.booleans(), st.one_of(_WORD, _TEXT),
              st.one_of(st.none(), _TEXT), st.lists(_WORD, max_size=3)),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(recs=_RECS)
def test_records_round_trip(recs: list[_Rec]) -> None:
    table = RecordTable(_Rec, recs)
    assert len(table) == len(recs)
    assert table.records() == recs
    assert table.column("note") == [r.note for r in recs]
    values, present = table.ints("maybe")
    assert present.tolist() == [r.maybe is not None for r in recs]
    assert values[present].tolist() == [r.maybe for r in recs if r.maybe is not None]


def test_codes_while_values_repeat(monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeating strings stay codes; distinct ones (evidence lines) become a plain list."""
    monkeypatch.setattr(table_mod, "VOCABULARY_MIN", 4)
    recs = [_Rec(i, None, False, "fast" if i % 2 else "rto", f"line {i}") for i in range(40)]
    table = RecordTable(_Rec, recs)
    word, note = table._cols["word"], table._cols["note"]
    assert word.plain is None and word.vocab == ["rto", "fast"]  # type: ignore[union-attr]
    assert note.plain is not None and not note.vocab  # type: ignore[union-attr]
    assert table.records() == recs


def test_every_loss_record_kind_has_columns() -> None:
    """Each field type of the real records maps to a column (a new type would raise)."""
    r = Retransmission(3, "a2b", 10, 1_700_000_000_000_000_000, 0xFFFFFFF0, 1, 1449, 1, "fast", None, None, 3, 2,
                       1000, None, 10, 0, None, 11_000_000, False, False, evidence="3 dupACKs")
    assert RecordTable(Retransmission, [r]).records() == [r]


def _narrow(values: list[int | None]) -> np.ndarray:
    """As the core hands an integer column over: int32 with its minimum for None when every
    value fits, else int64 with its minimum for None."""
    i32 = np.iinfo(np.int32)
    if all(v is None or i32.min < v <= i32.max for v in values):
        return np.array([i32.min if v is None else v for v in values], np.int32)
    return np.array([np.iinfo(np.int64).min if v is None else v for v in values], np.int64)


@settings(max_examples=100, deadline=None)
@given(recs=_RECS)
def test_from_columns_gives_the_records_appended(recs: list[_Rec]) -> None:
    """The compiled loss tracker's columns (int32 or int64 with the type's minimum for None,
    booleans, lists of values) make the same table as appending the records one by one."""
    values = {
        "n": _narrow([r.n for r in recs]), "maybe": _narrow([r.maybe for r in recs]),
        "flag": np.array([r.flag for r in recs], np.bool_),
        "word": [r.word for r in recs], "note": [r.note for r in recs], "words": [r.words for r in recs],
    }
    table = RecordTable.from_columns(_Rec, len(recs), values)
    assert len(table) == len(recs)
    assert table.records() == recs
    appended = RecordTable(_Rec, recs)
    for name in ("n", "maybe", "flag"):
        got, want = table.ints(name), appended.ints(name)
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
