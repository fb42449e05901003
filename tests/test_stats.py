"""Summary and SampleBag (stats.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpsack_analyze.stats import SampleBag, Summary

_BATCHES = st.lists(
    st.lists(st.one_of(st.integers(0, 50), st.integers(0, 1 << 40)), min_size=1, max_size=40), max_size=30
)


@settings(max_examples=150, deadline=None)
@given(batches=_BATCHES, first_merge=st.integers(1, 64))
def test_bag_keeps_every_sample(batches: list[list[int]], first_merge: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SampleBag, "FIRST_MERGE", first_merge)  # merges early and often
        bag = SampleBag()
        for b in batches:
            bag.add(np.asarray(b, dtype=np.int64))
    everything = sorted(x for b in batches for x in b)
    assert len(bag) == len(everything)
    assert sorted(bag.array().tolist()) == everything
    assert bag.min() == (everything[0] if everything else None)
    assert Summary.of(bag.array()) == Summary.of(np.asarray(everything, dtype=np.int64))


def test_bag_counts_repeated_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeated RTTs (microsecond timestamps) are counted, so the bag stops growing."""
    monkeypatch.setattr(SampleBag, "FIRST_MERGE", 100)
    bag = SampleBag()
    rng = np.random.default_rng(1)
    for _ in range(200):
        bag.add(rng.integers(11_000_000, 11_050_000, 100) // 1000 * 1000)  # 50 distinct values
    assert len(bag) == 20_000
    assert bag._values.size <= 50 and bag._loose_n < 100


def test_summary_ignores_sample_order() -> None:
    x = np.random.default_rng(2).integers(0, 10**9, 1001)
    assert Summary.of(x) == Summary.of(x[::-1].copy())


@settings(max_examples=200, deadline=None)
@given(samples=st.lists(st.integers(0, 1 << 40), min_size=1, max_size=150), scale=st.sampled_from([1.0, 1e-6, 1e-3]))
def test_summary_agrees_with_numpy(samples: list[int], scale: float) -> None:
    """The plain-Python path for a few samples and the numpy path for many give numpy's figures
    (mean, population deviation, ``linear`` percentiles) to the last bits."""
    x = np.sort(np.asarray(samples, dtype=np.int64)).astype(np.float64) * scale
    want = [x.min(), x.mean(), x.max(), x.std(), *np.percentile(x, [50, 90, 99])]
    s = Summary.of(np.asarray(samples, dtype=np.int64), scale)
    assert s.count == len(samples)
    assert [s.min, s.mean, s.max, s.stddev, s.median, s.p90, s.p99] == pytest.approx(want, rel=1e-12, abs=1e-300)


def test_summary_percentiles_stay_between_ranks() -> None:
    s = Summary.of(np.asarray([10, 20], dtype=np.int64))
    assert (s.median, s.p90, s.p99) == (15.0, 19.0, 19.9)
    assert Summary.of(np.asarray([7], dtype=np.int64)) == Summary(1, 7.0, 7.0, 7.0, 0.0, 7.0, 7.0, 7.0)


def test_summary_does_not_depend_on_memory_alignment() -> None:
    """The same samples at different addresses give the same figures, to the last bit (numpy's
    pairwise sums do not: the 1M benchmark's report moved in 508 means between runs)."""
    samples = np.random.default_rng(7).integers(0, 10**9, 5000)
    seen = set()
    for offset in range(8):
        buf = np.zeros(samples.size + 8, np.int64)
        view = buf[offset : offset + samples.size]
        view[:] = samples
        s = Summary.of(view, 1e-6)
        seen.add((s.mean, s.stddev))
    assert len(seen) == 1
