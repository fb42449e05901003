"""Loss patterns (tcpsack_analyze.loss.patterns): bursts, loss events, P and P', the Gilbert and
Gilbert-Elliott fits and the Mathis model.

The vectorised burst and event code is checked against plain Python loops over random sequences
(hypothesis), the fits against hand counts, a per-transmission reference forward-backward pass
written out here, and long synthetic Gilbert-Elliott sequences with known parameters (the fit's
closed-form run powers are checked against squaring by the unit tests of src/ge.rs).
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpsack_analyze.lab.lossmodels import GilbertElliott as EmulatorGilbertElliott
from tcpsack_analyze.loss.patterns import (
    START_MARGIN,
    achieved_percent,
    bursts,
    fit_gilbert_elliott,
    fit_gilbert_elliott_all,
    gilbert_estimate,
    loss_events,
    loss_pattern,
    mathis_throughput,
)

HAND = [0, 1, 1, 0, 1, 0, 0, 1, 1, 1]
MS = 1_000_000


# --------------------------------------------------------------------------- references


def brute_bursts(lost: list[bool]) -> list[tuple[int, int]]:
    out, i = [], 0
    for value, run in itertools.groupby(lost):
        n = len(list(run))
        if value:
            out.append((i, n))
        i += n
    return out


def brute_events(lost: list[bool], times: list[int], rtt: float | None) -> list[tuple[int, int]]:
    """DOMAIN.md section 7, one loss at a time: join the open event while within one RTT of its first loss."""
    if rtt is None:
        return brute_bursts(lost)
    events: list[list[int]] = []  # [first index, losses, first send time]
    for i, (gone, t) in enumerate(zip(lost, times)):
        if not gone:
            continue
        if events and t - events[-1][2] < rtt:
            events[-1][1] += 1
        else:
            events.append([i, 1, t])
    return [(first, count) for first, count, _ in events]


def reference_pass(lost: list[bool], theta: list[float]) -> tuple[list[float], float]:
    """One Baum-Welch step over single transmissions: the updated (p, r, loss_good, loss_bad) and
    the log-likelihood of ``theta``. The chain starts in the good state and moves before each
    transmission (the lab emulator's convention)."""
    p, r, loss_good, loss_bad = theta
    a = [[1 - p, p], [r, 1 - r]]

    def emit(gone: bool, state: int) -> float:
        q = (loss_good, loss_bad)[state]
        return q if gone else 1 - q

    alpha, log_likelihood = [[1.0, 0.0]], 0.0
    for gone in lost:
        row = [sum(alpha[-1][i] * a[i][j] for i in range(2)) * emit(gone, j) for j in range(2)]
        scale = sum(row)
        log_likelihood += math.log(scale)
        alpha.append([x / scale for x in row])
    beta = [[1.0, 1.0]]
    for gone in reversed(lost[1:]):
        col = [sum(a[i][j] * emit(gone, j) * beta[-1][j] for j in range(2)) for i in range(2)]
        beta.append([x / sum(col) for x in col])
    beta.reverse()
    moves = [[0.0, 0.0], [0.0, 0.0]]
    lost_in = [0.0, 0.0]
    for t, gone in enumerate(lost):
        xi = [[alpha[t][i] * a[i][j] * emit(gone, j) * beta[t][j] for j in range(2)] for i in range(2)]
        total = sum(map(sum, xi))
        for i, j in itertools.product(range(2), repeat=2):
            moves[i][j] += xi[i][j] / total
            lost_in[j] += xi[i][j] / total if gone else 0.0
    in_state = [moves[0][j] + moves[1][j] for j in range(2)]
    updated = [moves[0][1] / sum(moves[0]), moves[1][0] / sum(moves[1]), lost_in[0] / in_state[0], lost_in[1] / in_state[1]]
    return updated, log_likelihood


def ge_sequence(n: int, p: float, r: float, loss_good: float, loss_bad: float, seed: int) -> np.ndarray:
    """A Gilbert-Elliott loss sequence drawn with a seeded numpy generator, one step at a time."""
    rng = np.random.default_rng(seed)
    move, lose = rng.random(n).tolist(), rng.random(n)
    bad, state = np.empty(n, dtype=bool), False
    for t in range(n):
        state = move[t] >= r if state else move[t] < p
        bad[t] = state
    return lose < np.where(bad, loss_bad, loss_good)


@st.composite
def transmissions(draw: st.DrawFn, max_size: int = 120) -> tuple[list[bool], list[int], float | None]:
    lost = draw(st.lists(st.booleans(), max_size=max_size))
    start = draw(st.integers(0, 2**61))  # epoch-sized nanosecond times
    gaps = draw(st.lists(st.integers(0, 40 * MS), min_size=len(lost), max_size=len(lost)))
    times = list(itertools.accumulate(gaps, initial=start))[1:]
    rtt = draw(st.one_of(st.none(), st.integers(1, 200 * MS), st.floats(0.5, 200.0 * MS)))
    return lost, times, rtt


# --------------------------------------------------------------------------- bursts and events


def test_bursts_hand_case() -> None:
    assert bursts(np.array(HAND, dtype=bool)).tolist() == [[1, 2], [4, 1], [7, 3]]
    assert bursts(np.array([], dtype=bool)).shape == (0, 2)
    assert bursts(np.ones(5, dtype=bool)).tolist() == [[0, 5]]


def test_pattern_hand_case_without_rtt() -> None:
    lp = loss_pattern(np.array(HAND, dtype=bool), np.arange(10) * 10 * MS)
    assert (lp.segments, lp.lost, lp.bursts, lp.loss_events) == (10, 6, 3, 3)
    assert lp.P == pytest.approx(0.6) and lp.P_prime == pytest.approx(0.3)
    assert lp.events_by == "burst" and lp.rtt_ns is None
    assert lp.burst_mean == pytest.approx(2.0) and lp.burst_max == 3
    assert lp.burst_histogram == {1: 1, 2: 1, 3: 1}
    assert lp.losses_per_event_histogram == {1: 1, 2: 1, 3: 1}
    assert lp.isolated_share == pytest.approx(1 / 6) and lp.bursty_share == pytest.approx(5 / 6)


@pytest.mark.parametrize(
    ("rtt_ms", "events", "histogram"),
    [
        # losses sent at 10, 20, 40, 70, 80 and 90 ms
        (35, [(1, 3), (7, 3)], {3: 2}),  # 40 - 10 < 35: the first event spans two bursts
        (30, [(1, 2), (4, 1), (7, 3)], {1: 1, 2: 1, 3: 1}),  # 40 - 10 = 30 is not within 30
        (100, [(1, 6)], {6: 1}),
        (5, [(i, 1) for i in (1, 2, 4, 7, 8, 9)], {1: 6}),
    ],
)
def test_events_by_rtt_hand_case(rtt_ms: float, events: list[tuple[int, int]], histogram: dict[int, int]) -> None:
    lost, times = np.array(HAND, dtype=bool), np.arange(10) * 10 * MS
    assert loss_events(lost, times, rtt_ms * MS).tolist() == [list(e) for e in events]
    lp = loss_pattern(lost, times, rtt_ms * MS)
    assert lp.events_by == "rtt" and lp.loss_events == len(events)
    assert lp.P_prime == pytest.approx(len(events) / 10)
    assert lp.losses_per_event_histogram == histogram
    assert lp.burst_histogram == {1: 1, 2: 1, 3: 1}  # bursts do not depend on the RTT


def test_events_with_an_rtt_of_centuries_end() -> None:
    """Issue 16: send times near the int64 maximum plus a huge RTT wrapped around, and the chain
    of events stepped back to its start for ever (a MemoryError at 6.8 GB). The sum saturates
    and the chain always moves on."""
    lost = np.ones(3, dtype=bool)
    times = np.array([1, 2**62, 2**63 - 1], dtype=np.int64)
    assert loss_events(lost, times, 4.0 * 2**63).tolist() == [[0, 2], [2, 1]]
    at_the_end = loss_events(lost, np.full(3, 2**63 - 1, dtype=np.int64), 1e30)
    assert at_the_end[:, 1].sum() == 3  # every loss in one event or another, and it ended


@settings(max_examples=300, deadline=None)
@given(transmissions())
def test_bursts_and_events_match_loops(case: tuple[list[bool], list[int], float | None]) -> None:
    lost, times, rtt = case
    assert [tuple(b) for b in bursts(np.array(lost, dtype=bool)).tolist()] == brute_bursts(lost)
    got = loss_events(np.array(lost, dtype=bool), np.array(times, dtype=np.int64), rtt)
    assert [tuple(e) for e in got.tolist()] == brute_events(lost, times, rtt)
    # the send times of the lost transmissions alone are enough (what LossResult keeps)
    only_lost = np.array([t for t, x in zip(times, lost) if x], dtype=np.int64)
    assert (loss_events(np.array(lost, dtype=bool), only_lost, rtt) == got).all()


@settings(max_examples=150, deadline=None)
@given(transmissions(max_size=60))
def test_pattern_matches_loops(case: tuple[list[bool], list[int], float | None]) -> None:
    lost, times, rtt = case
    lp = loss_pattern(np.array(lost, dtype=bool), np.array(times, dtype=np.int64), rtt)
    runs = [n for _, n in brute_bursts(lost)]
    events = [n for _, n in brute_events(lost, times, rtt)]
    n, k = len(lost), sum(lost)
    assert (lp.segments, lp.lost, lp.bursts, lp.loss_events) == (n, k, len(runs), len(events))
    assert lp.P == (k / n if n else None)
    assert lp.P_prime == (len(events) / n if n else None)
    assert lp.burst_histogram == {b: runs.count(b) for b in set(runs)}
    assert lp.losses_per_event_histogram == {e: events.count(e) for e in set(events)}
    assert sum(b * c for b, c in lp.burst_histogram.items()) == k
    assert sum(e * c for e, c in lp.losses_per_event_histogram.items()) == k
    if k:
        assert lp.burst_max == max(runs) and lp.burst_mean == pytest.approx(k / len(runs))
        assert lp.isolated_share == pytest.approx(runs.count(1) / k)
        assert lp.bursty_share == pytest.approx(1.0 - runs.count(1) / k)
    else:
        assert lp.burst_mean is lp.burst_max is lp.isolated_share is lp.bursty_share is None
    if n < 10 or not k:
        assert lp.gilbert is None and lp.gilbert_elliott is None
    else:
        assert lp.gilbert is not None and lp.gilbert_elliott is not None


def test_rtt_extremes() -> None:
    # Transmissions 1 ms apart: an RTT longer than the whole sequence makes all losses one
    # event; an RTT shorter than the spacing makes every loss its own event.
    lost = ge_sequence(20_000, 0.02, 0.4, 0.01, 0.9, seed=4)
    times = np.arange(lost.size) * MS
    assert loss_pattern(lost, times, 30_000 * MS).losses_per_event_histogram == {int(lost.sum()): 1}
    assert loss_pattern(lost, times, 0.5 * MS).losses_per_event_histogram == {1: int(lost.sum())}


def test_input_errors() -> None:
    lost = np.array(HAND, dtype=bool)
    with pytest.raises(ValueError):
        loss_events(lost, np.arange(9), 5.0)  # neither one time per transmission nor per loss
    with pytest.raises(ValueError):
        loss_events(lost, np.arange(10)[::-1], 5.0)  # send times go backwards
    for rtt in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError):
            loss_events(lost, np.arange(10), rtt)
    with pytest.raises(ValueError):
        fit_gilbert_elliott(lost, max_iterations=0)


def test_no_losses_and_short_sequences() -> None:
    none_lost = loss_pattern(np.zeros(50, dtype=bool), np.arange(50))
    assert none_lost.P == 0.0 and none_lost.P_prime == 0.0 and none_lost.bursts == 0
    assert none_lost.burst_histogram == {} and none_lost.losses_per_event_histogram == {}
    assert none_lost.gilbert is None and none_lost.gilbert_elliott is None
    empty = loss_pattern(np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64), 1000.0)
    assert empty.segments == 0 and empty.P is None and empty.P_prime is None
    short = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1], dtype=bool)  # nine transmissions
    assert gilbert_estimate(short) is None and fit_gilbert_elliott(short) is None


# --------------------------------------------------------------------------- Gilbert and Gilbert-Elliott


def test_gilbert_estimate_hand_counts() -> None:
    # States are observed: start(G) G B B G B G G B B B. From G: G->G twice, G->B three times;
    # from B: B->B three times, B->G twice (the last B has no successor).
    g = gilbert_estimate(np.array(HAND, dtype=bool))
    assert g is not None and g.method == "gilbert"
    assert g.p == pytest.approx(3 / 5) and g.r == pytest.approx(2 / 5)
    assert (g.loss_good, g.loss_bad) == (0.0, 1.0)
    assert g.log_likelihood == pytest.approx(4 * math.log(2 / 5) + 6 * math.log(3 / 5))
    # A single loss at the very end says nothing about leaving the bad state: r = 1/b = 1.
    tail = gilbert_estimate(np.array([0] * 11 + [1], dtype=bool))
    assert tail is not None and tail.r == 1.0 and tail.p == pytest.approx(1 / 12)


def test_gilbert_estimate_recovers_the_lab_emulator() -> None:
    # The lab's link emulator (stdlib random, its own code) and this module agree on the model.
    model = EmulatorGilbertElliott(0.02, 0.25, seed=9)
    lost = np.array([model.drop() for _ in range(100_000)])
    g = gilbert_estimate(lost)
    assert g is not None
    assert g.p == pytest.approx(0.02, rel=0.1) and g.r == pytest.approx(0.25, rel=0.1)
    assert g.mean_bad_run == pytest.approx(4.0, rel=0.1)
    assert g.loss_rate == pytest.approx(lost.mean(), rel=0.02)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=10, max_size=60).filter(any))
def test_first_baum_welch_step_matches_reference(lost: list[bool]) -> None:
    g = gilbert_estimate(np.array(lost))
    assert g is not None
    start = [min(max(x, START_MARGIN), 1 - START_MARGIN) for x in (g.p, g.r, 0.0, 1.0)]
    stepped, start_likelihood = reference_pass(lost, start)
    _, stepped_likelihood = reference_pass(lost, stepped)
    if stepped[2] > stepped[3]:  # the fit names the lossier state bad
        stepped = [stepped[1], stepped[0], stepped[3], stepped[2]]
    at_start = fit_gilbert_elliott(np.array(lost), max_iterations=1)
    one_step = fit_gilbert_elliott(np.array(lost), max_iterations=2)
    assert at_start is not None and one_step is not None
    assert at_start.log_likelihood == pytest.approx(start_likelihood, rel=1e-9)
    assert [at_start.p, at_start.r, at_start.loss_good, at_start.loss_bad] == pytest.approx(start)
    assert one_step.log_likelihood == pytest.approx(stepped_likelihood, rel=1e-9)
    assert [one_step.p, one_step.r, one_step.loss_good, one_step.loss_bad] == pytest.approx(stepped, rel=1e-7, abs=1e-12)
    assert one_step.log_likelihood >= at_start.log_likelihood - 1e-9  # EM never goes downhill
    assert one_step.iterations == 2 and not one_step.converged


def test_fit_is_a_fixed_point_of_baum_welch() -> None:
    lost = ge_sequence(3000, 0.03, 0.3, 0.02, 0.7, seed=21)
    fit = fit_gilbert_elliott(lost)
    assert fit is not None and fit.converged
    theta = [fit.p, fit.r, fit.loss_good, fit.loss_bad]
    stepped, likelihood = reference_pass(lost.tolist(), theta)
    assert fit.log_likelihood == pytest.approx(likelihood, rel=1e-9)
    assert stepped == pytest.approx(theta, abs=2e-3)
    shorter = fit_gilbert_elliott(lost, max_iterations=30, tolerance=0.0)
    assert shorter is not None and fit.log_likelihood >= shorter.log_likelihood - 1e-6


def test_em_recovers_a_simple_gilbert_chain() -> None:
    lost = ge_sequence(200_000, 0.01, 0.3, 0.0, 1.0, seed=1)
    fit = fit_gilbert_elliott(lost)
    assert fit is not None and fit.method == "baum-welch" and fit.converged
    assert fit.p == pytest.approx(0.01, rel=0.1) and fit.r == pytest.approx(0.3, rel=0.1)
    assert fit.loss_good < 0.002 and fit.loss_bad > 0.98
    closed = gilbert_estimate(lost)
    assert closed is not None
    assert closed.p == pytest.approx(0.01, rel=0.1) and closed.r == pytest.approx(0.3, rel=0.1)
    # loss_good = 0, loss_bad = 1 lies inside EM's parameter space: EM does at least as well
    assert fit.log_likelihood >= closed.log_likelihood - 1.0


def test_em_recovers_a_lossy_good_state_where_the_simple_model_cannot() -> None:
    lost = ge_sequence(300_000, 0.01, 0.3, 0.01, 0.8, seed=2)
    fit, closed = fit_gilbert_elliott(lost), gilbert_estimate(lost)
    assert fit is not None and closed is not None and fit.converged
    assert fit.p == pytest.approx(0.01, rel=0.15) and fit.r == pytest.approx(0.3, rel=0.15)
    assert fit.loss_good == pytest.approx(0.01, rel=0.2) and fit.loss_bad == pytest.approx(0.8, abs=0.05)
    assert fit.loss_rate == pytest.approx(lost.mean(), rel=0.02)
    # Good-state losses look like extra short bursts to the simple model: p too high, r too high.
    assert closed.p > 1.5 * 0.01 and closed.r > 1.5 * 0.3
    assert fit.log_likelihood > closed.log_likelihood + 100


def test_em_on_a_million_transmissions() -> None:
    # how long it takes is a benchmark matter (benchmarks/README.md); here, that it converges
    lost = ge_sequence(1_000_000, 0.02, 0.25, 0.005, 0.7, seed=3)
    fit = fit_gilbert_elliott(lost)
    assert fit is not None and fit.converged and fit.iterations < 100
    assert fit.p == pytest.approx(0.02, rel=0.1) and fit.r == pytest.approx(0.25, rel=0.1)
    assert fit.loss_good == pytest.approx(0.005, rel=0.2) and fit.loss_bad == pytest.approx(0.7, abs=0.03)


def test_fitting_together_is_fitting_apart() -> None:
    # A capture's directions are fitted in one batch; each fit must be the one it gets alone,
    # whatever the others do (converge sooner or later, jump downhill, never start).
    sequences = [
        ge_sequence(3000, 0.03, 0.3, 0.02, 0.7, seed=21),
        ge_sequence(500, 0.01, 0.5, 0.0, 1.0, seed=22),
        np.zeros(40, dtype=bool),  # no loss: no fit
        np.array(HAND, dtype=bool),
        ge_sequence(20_000, 0.005, 0.2, 0.001, 0.9, seed=23),
        np.random.default_rng(24).random(2500) < 0.01,  # independent losses: a flat likelihood, slow EM
        np.array([1] * 9, dtype=bool),  # too short
    ]
    together = fit_gilbert_elliott_all(sequences)
    apart = [fit_gilbert_elliott(s) for s in sequences]
    assert [f is None for f in together] == [f is None for f in apart] == [False, False, True, False, False, False, True]
    for t, a in zip(together, apart):
        if t is None or a is None:
            continue
        assert t.iterations == a.iterations and t.converged == a.converged
        assert t.log_likelihood == pytest.approx(a.log_likelihood, rel=1e-12)
        assert [t.p, t.r, t.loss_good, t.loss_bad] == pytest.approx([a.p, a.r, a.loss_good, a.loss_bad], rel=1e-9, abs=1e-12)
    assert fit_gilbert_elliott_all([]) == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=10, max_size=300).filter(any))
def test_fit_is_a_valid_model_with_the_bad_state_losing_more(lost: list[bool]) -> None:
    fit = fit_gilbert_elliott(np.array(lost))
    assert fit is not None
    assert all(0.0 <= x <= 1.0 for x in (fit.p, fit.r, fit.loss_good, fit.loss_bad))
    assert fit.loss_good <= fit.loss_bad
    assert 1 <= fit.iterations <= 200 and math.isfinite(fit.log_likelihood) and fit.log_likelihood <= 1e-9


# --------------------------------------------------------------------------- Mathis


def test_mathis_hand_calculation() -> None:
    # 1460 * sqrt(1.5) = 1788.1275...; / (0.1 s * sqrt(0.01)) = 178 812.75 B/s
    assert mathis_throughput(1460, 0.1, 0.01, delayed_acks=False) == pytest.approx(178_812.75, rel=1e-6)
    # delayed ACKs: sqrt(3/4) = 0.8660254, 1460 * 0.8660254 / 0.01 = 126 439.7 B/s
    assert mathis_throughput(1460, 0.1, 0.01, delayed_acks=True) == pytest.approx(126_439.7, rel=1e-6)
    # a quarter of the loss rate doubles the model throughput
    base = mathis_throughput(1000, 0.05, 0.01, False)
    assert base is not None and mathis_throughput(1000, 0.05, 0.0025, False) == pytest.approx(2 * base)
    assert mathis_throughput(1460, 0.1, 0.0, False) is None
    assert mathis_throughput(1460, None, 0.01, False) is None
    assert mathis_throughput(1460, 0.1, None, True) is None


def test_achieved_percent() -> None:
    assert achieved_percent(89_406.375, 178_812.75) == pytest.approx(50.0)
    assert achieved_percent(1000.0, None) is None
