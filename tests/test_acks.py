"""The D-SACK and duplicate-ACK rules (tcpsack_analyze/acks.py), on hand-made values.

The rules are the core's (src/acks.rs, which marks every ACK event); the numpy copy in
tests/flow_reference.py (the old Python flow stage, the core's reference) is checked against them
case by case.
"""
from __future__ import annotations

import numpy as np
import pytest

import flow_reference

from tcpsack_analyze.acks import dsack_first_block, duplicate_ack

# (ack, nsack, l0, r0, l1, r1, is D-SACK, why)
DSACK_CASES = [
    (1000, 1, 500, 1000, 0, 0, True, "first block below the cumulative ACK (RFC 2883 s. 4.1.1)"),
    (1000, 1, 999, 2000, 0, 0, True, "first block starts below the ACK and straddles it (Linux tcp_check_dsack)"),
    (1000, 1, 1000, 2000, 0, 0, False, "an ordinary block at the ACK"),
    (1000, 2, 3000, 3500, 2000, 4000, True, "first block inside the second (RFC 2883 s. 4.1.2)"),
    (1000, 2, 3000, 4000, 3000, 4000, True, "first block equal to the second"),
    (1000, 2, 1500, 2500, 2000, 4000, False, "partial overlap of the second block (tcptrace would say D-SACK)"),
    (1000, 2, 3000, 3500, 1000, 2000, False, "two disjoint ordinary blocks"),
    (1000, 0, 0, 0, 0, 0, False, "no block at all"),
]


@pytest.mark.parametrize("case", DSACK_CASES, ids=[c[-1] for c in DSACK_CASES])
def test_dsack_rule(case: tuple) -> None:
    *args, want, _ = case
    assert dsack_first_block(*args) is want
    arrays = [np.asarray([a], np.int64) for a in args]
    assert flow_reference.dsack_first_block(*arrays).tolist() == [want]


def test_dsack_rule_vectorised_matches_scalar() -> None:
    cols = list(zip(*[c[:6] for c in DSACK_CASES]))
    got = flow_reference.dsack_first_block(*[np.asarray(c, np.int64) for c in cols])
    assert got.tolist() == [c[6] for c in DSACK_CASES]


def test_duplicate_ack_rule() -> None:
    # pure, same ACK, outstanding, same window -> duplicate (RFC 5681 section 2)
    assert duplicate_ack(True, True, True, True, False)
    # window update without SACK: not a duplicate; with a new SACK block it is (RFC 6675 s. 2)
    assert not duplicate_ack(True, True, True, False, False)
    assert duplicate_ack(True, True, True, False, True)
    # carries data, or the ACK moved, or nothing outstanding: never a duplicate
    assert not duplicate_ack(False, True, True, True, True)
    assert not duplicate_ack(True, False, True, True, True)
    assert not duplicate_ack(True, True, False, True, True)
    cases = [(p, a, o, w, n) for p in (False, True) for a in (False, True) for o in (False, True) for w in (False, True) for n in (False, True)]
    v = flow_reference.duplicate_ack(*(np.array(c) for c in zip(*cases)))
    assert v.tolist() == [duplicate_ack(*c) for c in cases]


def test_wire_arithmetic_wraps() -> None:
    from tcpsack_analyze.seqspace import offset_range, signed_diff, wire_add, wire_sub

    top = (1 << 32) - 10
    assert wire_add(top, 20) == 10 and wire_add(5, -6) == (1 << 32) - 1
    assert wire_sub(10, top) == 20 and signed_diff(top, 10) == -20
    assert offset_range(top, 30, 5) == (0, 15)  # crosses zero: the part at or above 5
    assert offset_range(20, 10, top) == (30, 40)
    assert offset_range(top - 100, 50, 5) is None  # wholly below
