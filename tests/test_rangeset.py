"""RangeSet against a brute-force set of integers (hypothesis)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tcpsack_analyze.rangeset import RangeSet

span = st.tuples(st.integers(0, 60), st.integers(0, 20)).map(lambda t: (t[0], t[0] + t[1]))
ops = st.lists(st.tuples(st.sampled_from(["add", "remove", "below"]), span), max_size=40)


@settings(max_examples=400)
@given(ops, span)
def test_matches_bruteforce(operations: list[tuple[str, tuple[int, int]]], probe: tuple[int, int]) -> None:
    rs = RangeSet()
    ref: set[int] = set()
    for op, (s, e) in operations:
        if op == "add":
            assert rs.add(s, e) == len(set(range(s, e)) - ref)
            ref |= set(range(s, e))
        elif op == "remove":
            assert rs.remove(s, e) == len(set(range(s, e)) & ref)
            ref -= set(range(s, e))
        else:
            rs.remove_below(s)
            ref = {x for x in ref if x >= s}
        # canonical form: sorted, disjoint, non-touching, non-empty
        ranges = list(rs)
        for (s1, e1), (s2, e2) in zip(ranges, ranges[1:]):
            assert s1 < e1 < s2 < e2
        assert all(s < e for s, e in ranges)
        assert {x for s, e in ranges for x in range(s, e)} == ref
    s, e = probe
    assert rs.overlap(s, e) == len(set(range(s, e)) & ref)
    assert rs.size() == len(ref)
    assert [x for a, b in rs.gaps(s, e) for x in range(a, b)] == sorted(set(range(s, e)) - ref)
    assert [x for a, b in rs.intersecting(s, e) for x in range(a, b)] == sorted(set(range(s, e)) & ref)
    for x in range(s, e):
        assert (x in rs) == (x in ref)
