"""The analysis clock (reader/clock.py, src/clock.rs): capture order, a clock that never goes back, absurd times ignored."""
from __future__ import annotations

import itertools

import clock_reference
import numpy as np
from clock_reference import _lone
from hypothesis import assume, given
from hypothesis import strategies as st

from tcpsack_analyze.reader.clock import JUMP_NS, PLAUSIBLE_NS, AnalysisClock

S = 1_000_000_000
T0 = 1_700_000_000 * S  # November 2023


def times(*values: int) -> list[int]:
    return AnalysisClock().advance(np.array(values, dtype=np.int64)).tolist()


def test_forward_time_is_kept_exactly():
    clock = AnalysisClock()
    assert clock.advance(np.array([T0, T0 + 5, T0 + S])).tolist() == [T0, T0 + 5, T0 + S]
    assert clock.counts.backwards == clock.counts.absurd == clock.counts.jumps == 0
    assert clock.counts.warnings() == []


def test_a_step_back_waits_for_time_to_catch_up():
    clock = AnalysisClock()
    out = clock.advance(np.array([T0, T0 + 10, T0 + 4, T0 + 8, T0 + 12]))
    assert out.tolist() == [T0, T0 + 10, T0 + 10, T0 + 10, T0 + 12]  # no drift after the reordering
    assert clock.counts.backwards == 2
    assert clock.counts.largest_backward_ns == 6
    assert "2 records are timestamped before" in clock.counts.warnings()[0]


def test_absurd_timestamps_are_ignored_and_counted():
    clock = AnalysisClock()
    out = clock.advance(np.array([-5 * S, T0, -(2**63), T0 + 1, PLAUSIBLE_NS, 2**63 - 1, T0 + 2]))
    # the record before the first plausible time is put at it; the others at the clock's time
    assert out.tolist() == [T0, T0, T0, T0 + 1, T0 + 1, T0 + 1, T0 + 2]
    assert clock.counts.absurd == 4
    assert clock.counts.backwards == 0 and clock.counts.jumps == 0


def test_a_capture_of_absurd_timestamps_stands_at_zero():
    assert times(-1, -(2**63), 2**63 - 1) == [0, 0, 0]


def test_a_jump_of_years_is_kept_and_counted():
    clock = AnalysisClock()
    out = clock.advance(np.array([T0, T0 + 30 * JUMP_NS, T0 + 30 * JUMP_NS + 1]))
    assert out.tolist() == [T0, T0 + 30 * JUMP_NS, T0 + 30 * JUMP_NS + 1]
    assert clock.counts.jumps == 1 and clock.counts.largest_jump_ns == 30 * JUMP_NS
    assert clock.counts.backwards == 0


def test_state_carries_across_batches():
    clock = AnalysisClock()
    assert clock.advance(np.array([T0 + 10])).tolist() == [T0 + 10]
    assert clock.advance(np.array([], dtype=np.int64)).tolist() == []
    assert clock.advance(np.array([T0 + 3, T0 + 11])).tolist() == [T0 + 10, T0 + 11]
    assert clock.counts.backwards == 1


raw_times = st.lists(
    st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(T0 - 10 * S, T0 + 10 * S), st.sampled_from([0, -1, PLAUSIBLE_NS, 2**63 - 1])),
    max_size=60,
)


@given(raw_times, st.lists(st.integers(0, 60), max_size=4))
def test_property_monotone_bounded_and_independent_of_batches(values, cuts):
    """Whatever the timestamps: analysis times never decrease, stay in [0, PLAUSIBLE_NS), and do
    not depend on where the batches were cut (lone stray timestamps aside: a batch's first and
    last records are never taken for one); the counts are consistent."""
    array = np.array(values, dtype=np.int64)
    assume(_lone(array, (array >= 0) & (array < PLAUSIBLE_NS)).size == 0)
    whole = AnalysisClock()
    expected = whole.advance(np.array(values, dtype=np.int64))
    pieces = AnalysisClock()
    bounds = sorted({0, len(values), *(min(c, len(values)) for c in cuts)})
    got = np.concatenate([pieces.advance(np.array(values[a:b], dtype=np.int64)) for a, b in itertools.pairwise(bounds)] or [np.empty(0, np.int64)])
    plausible = [v for v in values if 0 <= v < PLAUSIBLE_NS]
    # records before the first plausible timestamp stand at it when their batch holds it, else at 0
    first = next((i for i, v in enumerate(values) if 0 <= v < PLAUSIBLE_NS), len(values))
    assert got[first:].tolist() == expected[first:].tolist()
    assert set(got[:first].tolist()) <= {0, *expected[:first].tolist()}
    assert pieces.counts == whole.counts
    for out in (expected, got):
        assert np.all(np.diff(out) >= 0)
        assert np.all((out >= 0) & (out < PLAUSIBLE_NS))
    assert whole.counts.absurd >= len(values) - len(plausible)  # lone stray ones are absurd too


@given(st.lists(st.integers(T0 - 10 * S, T0 + 10 * S), max_size=60))
def test_property_within_a_year_the_clock_is_the_running_maximum(values):
    """Timestamps less than a year apart: each record at the latest timestamp so far, every step back counted."""
    clock = AnalysisClock()
    out = clock.advance(np.array(values, dtype=np.int64)).tolist()
    assert out == [max(values[: i + 1]) for i in range(len(values))]
    assert clock.counts.backwards == sum(1 for i, v in enumerate(values) if i and v < max(values[:i]))
    assert clock.counts.absurd == clock.counts.jumps == 0


def test_a_lone_record_years_ahead_is_ignored():
    clock = AnalysisClock()
    out = clock.advance(np.array([T0, T0 + 46 * JUMP_NS, T0 + 1, T0 + 2]))
    assert out.tolist() == [T0, T0, T0 + 1, T0 + 2]
    assert clock.counts.absurd == 1 and clock.counts.backwards == clock.counts.jumps == 0


def test_a_clock_stepped_back_by_years_is_followed_not_waited_for():
    clock = AnalysisClock()
    out = clock.advance(np.array([T0, T0 + 5, T0 - 2 * JUMP_NS, T0 - 2 * JUMP_NS + 7]))
    assert out.tolist() == [T0, T0 + 5, T0 + 5, T0 + 12]
    assert clock.counts.backwards == 1 and clock.counts.largest_backward_ns == 2 * JUMP_NS + 5


def test_constants_are_the_policys():
    assert (PLAUSIBLE_NS, JUMP_NS) == (clock_reference.PLAUSIBLE_NS, clock_reference.JUMP_NS) == (1 << 62, 365 * 24 * 3600 * 10**9)


# timestamps that exercise every branch: near T0, a year or more away (both ways, lone or not),
# absurd, and the boundaries
wild_times = st.lists(
    st.one_of(
        st.integers(T0 - 10 * S, T0 + 10 * S),
        st.builds(lambda k, d: T0 + k * JUMP_NS + d, st.integers(-50, 50), st.integers(-3 * S, 3 * S)),
        st.integers(-(2**63), 2**63 - 1),
        st.sampled_from([0, -1, PLAUSIBLE_NS - 1, PLAUSIBLE_NS, 2**63 - 1, JUMP_NS, T0 + JUMP_NS, T0 - JUMP_NS]),
    ),
    max_size=60,
)


@given(wild_times, st.lists(st.integers(0, 60), max_size=4))
def test_compiled_clock_equals_the_reference(values, cuts):
    """The compiled clock gives the vectorised reference's analysis times and counts, batch by batch."""
    bounds = sorted({0, len(values), *(min(c, len(values)) for c in cuts)})
    ours, ref = AnalysisClock(), clock_reference.AnalysisClock()
    for a, b in itertools.pairwise(bounds):
        batch = np.array(values[a:b], dtype=np.int64)
        assert ours.advance(batch).tolist() == ref.advance(batch).tolist(), (a, b)
    assert ours.counts.__dict__ == ref.counts.__dict__
