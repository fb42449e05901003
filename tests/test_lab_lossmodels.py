"""The lab's loss models: rates and burst lengths converge to their parameters, seeds repeat."""
from __future__ import annotations

import itertools
import math

import pytest

from tcpsack_analyze.lab.lossmodels import BurstyLoss, GilbertElliott, RandomLoss, parse

N = 200_000


def _decisions(spec: str, seed: int = 7, n: int = N) -> list[bool]:
    model = parse(spec, seed)
    return [model.drop() for _ in range(n)]


def _bursts(decisions: list[bool]) -> list[int]:
    return [len(list(run)) for lost, run in itertools.groupby(decisions) if lost]


def _close(observed: float, expected: float, n: int = N) -> bool:
    """Within 5 binomial standard deviations (plus a floor for tiny rates)."""
    sd = math.sqrt(max(expected * (1 - expected), 1e-4) / n)
    return abs(observed - expected) <= 5 * sd + 1e-4


@pytest.mark.parametrize("p", [0.0, 0.01, 0.05, 0.3])
def test_random_rate_converges(p: float) -> None:
    d = _decisions(f"random:{p}")
    assert _close(sum(d) / N, p)


def test_bursty_event_rate_and_exact_burst_length() -> None:
    model = BurstyLoss(0.01, 3, seed=11)
    d = [model.drop() for _ in range(N)]
    bursts = _bursts(d)
    # Events can only touch when one starts right after another ended; then runs merge.
    assert all(b % 3 == 0 for b in bursts)
    events = sum(b // 3 for b in bursts)
    # P' is per packet that could start an event (not inside a burst).
    eligible = N - 2 * events
    assert _close(events / eligible, 0.01)
    assert _close(sum(d) / N, model.expected_loss_rate())


def test_gilbert_elliott_rate_and_mean_burst() -> None:
    model = GilbertElliott(0.02, 0.25, seed=3)
    d = [model.drop() for _ in range(N)]
    assert _close(sum(d) / N, model.expected_loss_rate())
    mean_burst = sum(_bursts(d)) / len(_bursts(d))
    assert abs(mean_burst - 1 / 0.25) < 0.15  # geometric with mean 1/r


def test_gilbert_elliott_lossy_good_state() -> None:
    model = parse("ge:0.05:0.5:0.01:0.8", seed=5)
    d = [model.drop() for _ in range(N)]
    assert _close(sum(d) / N, model.expected_loss_rate())


def test_same_seed_same_decisions_other_seed_differs() -> None:
    assert _decisions("random:0.1", 1, 1000) == _decisions("random:0.1", 1, 1000)
    assert _decisions("random:0.1", 1, 1000) != _decisions("random:0.1", 2, 1000)


@pytest.mark.parametrize("spec", ["none", "random:0.02", "bursty:0.01:3", "ge:0.01:0.3:0:1"])
def test_spec_round_trip(spec: str) -> None:
    model = parse(spec, seed=0)
    assert parse(model.spec(), seed=0).params() == model.params()


@pytest.mark.parametrize(
    "spec", ["drop:0.1", "random", "random:1.5", "bursty:0.1:2.5", "bursty:0.1:0", "ge:0.1:0", "random:x"]
)
def test_bad_specs_rejected(spec: str) -> None:
    with pytest.raises(ValueError):
        parse(spec, seed=0)


def test_none_never_drops() -> None:
    assert not any(_decisions("none", n=1000))
    assert RandomLoss(0.0, seed=1).expected_loss_rate() == 0.0
