"""The flow table's grouping of a batch's packets by flow key (flows._group)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpsack_analyze import flows


def brute_groups(key: np.ndarray) -> dict[bytes, list[int]]:
    groups: dict[bytes, list[int]] = {}
    for i, row in enumerate(key):
        groups.setdefault(row.tobytes(), []).append(i)
    return groups


def groups_of(key: np.ndarray) -> dict[bytes, list[int]]:
    first, order, bounds = flows._group(key)
    out = {}
    for u in range(first.shape[0]):
        rows = order[bounds[u] : bounds[u + 1]].tolist()
        assert rows[0] == first[u]  # the group's first row in file order
        out[key[first[u]].tobytes()] = rows
    return out


keys = st.integers(1, 12).flatmap(
    lambda flows_: st.tuples(
        st.lists(st.lists(st.integers(0, 2**64 - 1), min_size=5, max_size=5), min_size=flows_, max_size=flows_),
        st.lists(st.integers(0, flows_ - 1), min_size=1, max_size=200),
    )
)


@settings(max_examples=200, deadline=None)
@given(keys)
def test_group_matches_brute_force(case: tuple[list[list[int]], list[int]]) -> None:
    table, pick = case
    key = np.array(table, dtype=np.uint64)[pick]
    assert groups_of(key) == brute_groups(key)


@settings(max_examples=50, deadline=None)
@given(keys)
def test_hash_collisions_fall_back_to_the_keys(case: tuple[list[list[int]], list[int]]) -> None:
    table, pick = case
    key = np.array(table, dtype=np.uint64)[pick]
    real = flows._mix
    flows._mix = lambda k: np.zeros(k.shape[0], dtype=np.uint64)  # every flow collides
    try:
        assert groups_of(key) == brute_groups(key)
    finally:
        flows._mix = real
