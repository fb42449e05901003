"""Loss patterns of one direction: rates, bursts, loss events and a Gilbert-Elliott fit.

DOMAIN.md section 7 asks for P (lost / data segments sent), P' (loss events / data segments
sent), the burst length distribution, the isolated vs bursty share and a two-state
Gilbert-Elliott fit; section 9 for the Mathis model. The delay/loss testbed paper (000) shows
why bursts and events matter apart from P: Reno recovers an isolated drop by fast retransmit but
times out after a burst, SACK recovers either; it describes its loss processes by P (packet loss
probability), P' (drop events per packet) and b (packets per burst), the quantities below.

Everything here is plain numpy on one direction's data-segment transmissions in transmission
order, originals and retransmissions alike: ``lost[i]`` says whether transmission ``i`` failed to
arrive and ``times_ns[i]`` when it was sent (only the send times of the lost ones are read:
they may be given alone, see :func:`loss_events`). Deciding which transmissions were lost (from a
sender-, receiver- or mid-path capture) is the caller's job.

- A *burst* is a maximal run of consecutive transmissions that were all lost; b is its length.
- A *loss event* is all the losses within one round trip (one congestion signal): an event
  starts at a loss, and every later loss sent less than one RTT after that first loss belongs
  to it; the next loss sent later starts the next event. Without an RTT each burst is taken as
  its own event (``events_by == "burst"``).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import EllipsisType
from typing import NamedTuple

import numpy as np

__all__ = [
    "GilbertElliott",
    "LossPattern",
    "achieved_percent",
    "bursts",
    "fit_gilbert_elliott",
    "fit_gilbert_elliott_all",
    "gilbert_estimate",
    "loss_events",
    "loss_pattern",
    "mathis_throughput",
]

MIN_FIT_SEGMENTS = 10  # fewer transmissions say nothing about a two-state chain
MAX_ITERATIONS = 200  # forward-backward passes at the most
TOLERANCE = 1e-8  # stop when a cycle gains less log-likelihood than this share of it
PROBABILITY_FLOOR = 1e-9  # how far inside [0, 1] an accelerated step lands
# _run_powers uses its closed form where 1 - l2/l1 >= DISTINCT_EIGENVALUES and no entry of the
# first projection exceeds PROJECTION_LIMIT; there it agrees with squaring to about 1e-13 (the
# error grows with the square of the projections).
DISTINCT_EIGENVALUES = 1e-2
PROJECTION_LIMIT = 10.0
SCAN_CHUNK = 32  # matrices per chunk in the blocked scan of the forward and backward passes
# The simple Gilbert estimate puts the loss probabilities on the boundary (0 and 1) and may put
# p or r there too; Baum-Welch cannot move a parameter off 0 or 1 (a state that never loses is
# never credited with a loss), so it starts this far inside.
START_MARGIN = 0.01
INT64_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class GilbertElliott:
    """A two-state Gilbert-Elliott loss model (the form netem and RFC 3611 section 4.7.2 use).

    Once per transmission the chain moves good->bad with probability ``p`` and bad->good with
    probability ``r``, then the transmission is lost with probability ``loss_good`` or
    ``loss_bad`` in the state it is in. The chain is in the good state before the first
    transmission (as the lab's emulator, :mod:`tcpsack_analyze.lab.lossmodels`, starts it), and
    the bad state is the one with the higher loss probability. ``log_likelihood`` is the natural
    log of the probability of the fitted sequence under these parameters, so two fits of the same
    sequence compare. ``method`` is "gilbert" for the closed-form simple Gilbert estimate and
    "baum-welch" for the EM fit; ``iterations`` counts the fit's forward-backward passes (0 for
    "gilbert") and ``converged`` is False when the fit stopped at its cap instead.
    """

    p: float
    r: float
    loss_good: float
    loss_bad: float
    log_likelihood: float
    method: str
    iterations: int
    converged: bool

    @property
    def mean_bad_run(self) -> float | None:
        """Mean stay in the bad state, 1/r (the mean burst length b when loss_bad=1, loss_good=0)."""
        return 1.0 / self.r if self.r > 0 else None

    @property
    def loss_rate(self) -> float | None:
        """Long-run share of transmissions lost, to compare with the observed P."""
        if self.p + self.r == 0:
            return None
        bad = self.p / (self.p + self.r)
        return bad * self.loss_bad + (1.0 - bad) * self.loss_good


@dataclass(frozen=True)
class LossPattern:
    """Loss statistics of one direction (DOMAIN.md section 7; P, P' and b as in paper 000).

    Ratios are None when there is nothing to divide by (no transmissions, or no losses for the
    burst figures). ``burst_histogram`` maps burst length to the number of bursts;
    ``losses_per_event_histogram`` maps losses per loss event (per window) to the number of
    events. ``isolated_share`` is the share of lost transmissions that were bursts of one,
    ``bursty_share`` the rest. ``gilbert`` is the closed-form simple Gilbert estimate and
    ``gilbert_elliott`` the Baum-Welch fit; both None with no losses or fewer than
    MIN_FIT_SEGMENTS transmissions.
    """

    segments: int
    lost: int
    P: float | None
    loss_events: int
    P_prime: float | None
    events_by: str  # "rtt" or "burst"
    rtt_ns: float | None
    bursts: int
    burst_mean: float | None
    burst_max: int | None
    burst_histogram: dict[int, int]
    isolated_share: float | None
    bursty_share: float | None
    losses_per_event_histogram: dict[int, int]
    gilbert: GilbertElliott | None
    gilbert_elliott: GilbertElliott | None


_NO_ROWS = np.empty((0, 2), np.int64)  # the bursts or loss events of a sequence without a loss (read-only)
_NO_ROWS.flags.writeable = False


def bursts(lost: np.ndarray) -> np.ndarray:
    """The bursts of ``lost`` as (start index, length) rows, shape (bursts, 2), int64.

    A burst is a maximal run of True; its starts and ends are where the False-padded sequence
    steps up and down.
    """
    steps = np.diff(np.concatenate(([False], np.asarray(lost, dtype=bool), [False])).astype(np.int8))
    starts = np.flatnonzero(steps == 1)
    ends = np.flatnonzero(steps == -1)
    return np.column_stack((starts, ends - starts)).astype(np.int64)


def loss_events(lost: np.ndarray, times_ns: np.ndarray, rtt_ns: float | None) -> np.ndarray:
    """The loss events as (index of the first loss, number of losses) rows, shape (events, 2).

    With an RTT, an event is the first loss not yet in an event plus every later loss sent less
    than ``rtt_ns`` after it (DOMAIN.md section 7); the send times of the losses must not
    decrease. Without one (None), the events are the bursts, see :func:`bursts`.

    ``times_ns`` holds the send time of every transmission (the shape of ``lost``) or only those
    of the lost ones, in order (one per True of ``lost``): the others are never read, so a
    tracker need not keep them (:attr:`~tcpsack_analyze.loss.tracker.LossResult.lost_times`).
    """
    lost = np.asarray(lost, dtype=bool)
    times_ns = np.asarray(times_ns, dtype=np.int64)
    index = np.flatnonzero(lost)
    if times_ns.shape == lost.shape:
        sent = times_ns[index]
    elif times_ns.shape == index.shape:
        sent = times_ns
    else:
        raise ValueError("times_ns must give the send time of every transmission or of every lost one")
    if rtt_ns is None:
        return bursts(lost)
    if not 0 < rtt_ns < math.inf:
        raise ValueError(f"the RTT must be positive and finite, not {rtt_ns}")
    if np.any(np.diff(sent) < 0):
        raise ValueError("the send times of the lost transmissions decrease")
    # A later loss joins the event when its whole-ns distance d < rtt, that is d < ceil(rtt).
    # For each loss, the first loss one RTT or more after it: the next event if this one starts one.
    # The sum saturates at the int64 maximum (an RTT of centuries from absurd timestamps must
    # neither wrap around, which would send the chain below backwards for ever, nor raise).
    reach = min(math.ceil(rtt_ns), INT64_MAX)
    following = np.searchsorted(sent, np.minimum(sent, INT64_MAX - reach) + reach, side="left").tolist()
    firsts: list[int] = []
    i = 0
    while i < len(following):  # a chain through the losses, one step per event
        firsts.append(i)
        i = max(following[i], i + 1)  # a saturated sum may not reach past the loss itself
    first = np.asarray(firsts, dtype=np.int64)
    return np.column_stack((index[first], np.diff(np.append(first, len(index))))).astype(np.int64)


def loss_pattern(
    lost: np.ndarray, times_ns: np.ndarray, rtt_ns: float | None = None, gilbert_elliott: GilbertElliott | None | EllipsisType = ...
) -> LossPattern:
    """All the loss statistics of one direction's transmissions (see :class:`LossPattern`).

    ``gilbert_elliott`` is the sequence's Baum-Welch fit when the caller has it already (a
    capture's directions are fitted together, :func:`fit_gilbert_elliott_all`); by default
    it is fitted here. ``times_ns`` as for :func:`loss_events`.
    """
    lost = np.asarray(lost, dtype=bool)
    if lost.ndim != 1:
        raise ValueError("lost must be one-dimensional")
    segments, lost_count = int(lost.size), int(lost.sum())
    # nothing lost (most directions of most captures): no bursts, no events, nothing to fit
    runs = bursts(lost) if lost_count else _NO_ROWS
    events = loss_events(lost, times_ns, rtt_ns) if lost_count else _NO_ROWS
    lengths = runs[:, 1]
    isolated = int(np.count_nonzero(lengths == 1)) / lost_count if lost_count else None
    return LossPattern(
        segments=segments,
        lost=lost_count,
        P=lost_count / segments if segments else None,
        loss_events=len(events),
        P_prime=len(events) / segments if segments else None,
        events_by="burst" if rtt_ns is None else "rtt",
        rtt_ns=rtt_ns,
        bursts=len(runs),
        burst_mean=float(lengths.mean()) if len(runs) else None,
        burst_max=int(lengths.max()) if len(runs) else None,
        burst_histogram=_histogram(lengths),
        isolated_share=isolated,
        bursty_share=None if isolated is None else 1.0 - isolated,
        losses_per_event_histogram=_histogram(events[:, 1]),
        gilbert=gilbert_estimate(lost),
        gilbert_elliott=fit_gilbert_elliott(lost) if gilbert_elliott is ... else gilbert_elliott,
    )


def gilbert_estimate(lost: np.ndarray) -> GilbertElliott | None:
    """The simple Gilbert model (loss_good=0, loss_bad=1) read off the sequence in closed form.

    With every loss in the bad state and none in the good one, the states are observed and the
    maximum-likelihood transition probabilities are counts: p = bursts / good transmissions
    followed by another (the chain's start counts as one), r = bursts that ended / lost
    transmissions followed by another. Up to the ends of the sequence these are the textbook
    p = bursts / received and r = 1/b; r is 1/b when no lost transmission has a successor. The
    log-likelihood is the same counts times the logs of their probabilities. None with no losses
    or fewer than MIN_FIT_SEGMENTS transmissions.
    """
    lost = np.asarray(lost, dtype=bool)
    n, lost_count = int(lost.size), int(lost.sum())
    if n < MIN_FIT_SEGMENTS or lost_count == 0:
        return None
    burst_count = len(bursts(lost))
    last_lost = int(lost[-1])
    leave_good = 1 + (n - lost_count) - (1 - last_lost)  # good -> anything, the start included
    leave_bad = lost_count - last_lost  # bad -> anything
    ended = burst_count - last_lost  # bad -> good
    p = burst_count / leave_good
    r = ended / leave_bad if leave_bad else burst_count / lost_count
    moves = np.array([leave_good - burst_count, burst_count, ended, leave_bad - ended], dtype=float)
    used = moves > 0  # a move that never happens adds nothing, even with probability 0
    log_likelihood = float((moves[used] * np.log(np.array([1.0 - p, p, r, 1.0 - r])[used])).sum())
    return GilbertElliott(p, r, 0.0, 1.0, log_likelihood, "gilbert", 0, True)


def fit_gilbert_elliott(
    lost: np.ndarray, max_iterations: int = MAX_ITERATIONS, tolerance: float = TOLERANCE
) -> GilbertElliott | None:
    """Fit a two-state Gilbert-Elliott model to one sequence: :func:`fit_gilbert_elliott_all` of one."""
    return fit_gilbert_elliott_all([lost], max_iterations, tolerance)[0]


def fit_gilbert_elliott_all(
    sequences: Sequence[np.ndarray], max_iterations: int = MAX_ITERATIONS, tolerance: float = TOLERANCE
) -> list[GilbertElliott | None]:
    """Fit a two-state Gilbert-Elliott model to each sequence by Baum-Welch (EM), all at once.

    A hidden Markov model with two states and Bernoulli (lost or not) emissions, started from the
    simple Gilbert estimate (:func:`gilbert_estimate`) moved START_MARGIN inside the parameter
    space. Each Baum-Welch step runs one scaled forward-backward pass
    (:func:`_expected_counts`) and re-estimates p, r and the two loss probabilities from the
    expected transition and emission counts (:func:`_maximise`). Plain EM crawls when the best
    fit lies near the edge of the parameter space (a good state that almost never loses, the
    common case), so the steps are accelerated by SQUAREM (:func:`_squarem_jump`), which keeps
    EM's guarantee that the likelihood never falls. A fit stops when a cycle gains less than
    ``tolerance`` times the log-likelihood (``converged``), or after ``max_iterations``
    forward-backward passes (1 evaluates the start, 2 takes one plain EM step); the result is
    the best point evaluated. The state that loses more is reported as the bad one: EM keeps the
    roles of its start, and should a jump ever exchange them, they are swapped back (the start
    state then being the lossier one). None for a sequence with no losses or fewer than
    MIN_FIT_SEGMENTS transmissions.

    The sequences are independent fits that share their passes: each pass runs the E step of
    every fit still going as one set of array operations (a capture's directions are mostly
    short, and a pass over one short sequence costs its numpy call overhead, not its length).
    A pass takes time in proportion to the runs of equal outcomes (about twice the bursts), not
    to the transmissions: a million transmissions at 5% loss fit in about a second.
    """
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, not {max_iterations}")
    starts = [gilbert_estimate(lost) for lost in sequences]
    fitted = [i for i, g in enumerate(starts) if g is not None]
    results: list[GilbertElliott | None] = [None] * len(starts)
    if not fitted:
        return results
    everything = _Batch.of([np.asarray(sequences[i], dtype=bool) for i in fitted])
    count = len(fitted)
    theta = np.clip([[g.p, g.r, 0.0, 1.0] for i in fitted if (g := starts[i])], START_MARGIN, 1.0 - START_MARGIN)
    following = np.empty_like(theta)
    fallback = theta.copy()
    previous = np.full(count, -math.inf)
    floor = np.full(count, -math.inf)
    second = np.zeros(count, dtype=bool)  # the next pass evaluates ``following``, not ``theta``
    passes = np.zeros(count, dtype=np.int64)
    converged = np.zeros(count, dtype=bool)
    best, best_likelihood = theta.copy(), np.full(count, -math.inf)
    going = np.ones(count, dtype=bool)
    batch, members = everything, np.arange(count)
    while going.any():
        if len(members) != int(going.sum()):
            members = np.flatnonzero(going)
            batch = everything.subset(going)
        at = np.where(second[members, None], following[members], theta[members])
        counts, likelihood = _expected_counts(batch, at)
        passes[members] += 1
        better = likelihood > best_likelihood[members]
        best[members[better]], best_likelihood[members[better]] = at[better], likelihood[better]
        stepped = _maximise(counts, at)
        # first pass of a cycle (at theta): back to the plain EM point after a downhill jump,
        # else stop when converged, else evaluate the EM step next
        first = ~second[members]
        here, step, gained = members[first], stepped[first], likelihood[first]
        downhill = ~(gained >= floor[here])
        theta[here[downhill]], floor[here[downhill]] = fallback[here[downhill]], -math.inf
        on, step, gained = here[~downhill], step[~downhill], gained[~downhill]
        done = gained - previous[on] <= tolerance * np.abs(gained)
        converged[on[done]], going[on[done]] = True, False
        previous[on], following[on], second[on] = gained, step, True
        # second pass (at following): the SQUAREM jump from theta, falling back to this EM step
        there = members[~first]
        after = stepped[~first]
        floor[there], fallback[there], second[there] = likelihood[~first], after, False
        theta[there] = _squarem_jump(theta[there], following[there], after)
        going &= passes < max_iterations
    for k, i in enumerate(fitted):
        p, r, loss_good, loss_bad = best[k]
        if loss_good > loss_bad:
            p, r, loss_good, loss_bad = r, p, loss_bad, loss_good
        results[i] = GilbertElliott(
            float(p), float(r), float(loss_good), float(loss_bad), float(best_likelihood[k]), "baum-welch", int(passes[k]), bool(converged[k])
        )
    return results


def _maximise(counts: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """The M step: (p, r, loss_good, loss_bad) per fit from the expected counts of :func:`_expected_counts`.

    A parameter whose state carries no weight keeps its value.
    """
    moves = counts.sum(axis=1)  # [fit, i, j]: expected transitions i -> j
    in_state = moves.sum(axis=1)  # expected transmissions sent in each state
    lost_in_state = counts[:, 1].sum(axis=1)
    numerator = np.column_stack((moves[:, 0, 1], moves[:, 1, 0], lost_in_state))
    denominator = np.column_stack((moves[:, 0].sum(axis=1), moves[:, 1].sum(axis=1), in_state))
    return np.divide(numerator, denominator, out=theta.copy(), where=denominator > 0)


def _squarem_jump(theta: np.ndarray, following: np.ndarray, after: np.ndarray) -> np.ndarray:
    """SQUAREM's extrapolation from two EM steps theta -> following -> after (scheme S3), per fit (row).

    Varadhan and Roland, "Simple and globally convergent methods for accelerating the
    convergence of any EM algorithm", Scand. J. Statistics 35 (2008): with r the first step and
    v the change between the steps, jump to theta + 2a r + a^2 v, a = |r| / |v| and at least 1
    (a = 1 gives ``after``). The jump is kept PROBABILITY_FLOOR inside [0, 1], where EM can still
    move every parameter; the caller falls back to ``after`` when it lowers the likelihood.
    """
    step = following - theta
    change = after - 2.0 * following + theta
    size = np.linalg.norm(change, axis=1)
    still = size == 0.0
    a = np.maximum(1.0, np.linalg.norm(step, axis=1) / np.where(still, 1.0, size))[:, None]
    jump = np.clip(theta + 2.0 * a * step + a * a * change, PROBABILITY_FLOOR, 1.0 - PROBABILITY_FLOOR)
    return np.where(still[:, None], after, jump)


class _Batch(NamedTuple):
    """Sequences as runs of equal outcomes, each run named by its kind (fit, outcome, length).

    The E step works per run and per kind of run, not per transmission. Runs are in order, fit
    by fit; ``offsets`` says where each fit's runs begin (and, last, where they end).
    """

    offsets: np.ndarray  # fits + 1
    run_fit: np.ndarray  # per run: the fit (sequence) it belongs to
    run_kind: np.ndarray  # per run: its index in the kind arrays
    kind_fit: np.ndarray
    kind_outcomes: np.ndarray  # 1 lost, 0 arrived
    kind_lengths: np.ndarray

    @staticmethod
    def of(sequences: list[np.ndarray]) -> _Batch:
        """Cut each sequence into runs and name the kinds."""
        starts = [np.flatnonzero(np.diff(lost, prepend=~lost[:1])) for lost in sequences]
        lengths = np.concatenate([np.diff(s, append=len(lost)) for s, lost in zip(starts, sequences)])
        outcomes = np.concatenate([lost[s] for s, lost in zip(starts, sequences)]).astype(np.int64)
        sizes = np.array([len(s) for s in starts])
        run_fit = np.repeat(np.arange(len(sequences)), sizes)
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        span = int(lengths.max()) + 1
        keys, run_kind = np.unique((run_fit * span + lengths) * 2 + outcomes, return_inverse=True)
        return _Batch(offsets, run_fit, run_kind.reshape(-1), keys // 2 // span, keys % 2, keys // 2 % span)

    def subset(self, keep: np.ndarray) -> _Batch:
        """The fits with ``keep`` set, renumbered in order (their kinds stay distinct)."""
        runs = keep[self.run_fit]
        kinds = keep[self.kind_fit]
        fit_number = np.cumsum(keep) - 1
        kind_number = np.cumsum(kinds) - 1
        return _Batch(
            np.concatenate(([0], np.cumsum(np.diff(self.offsets)[keep]))),
            fit_number[self.run_fit[runs]],
            kind_number[self.run_kind[runs]],
            fit_number[self.kind_fit[kinds]],
            self.kind_outcomes[kinds],
            self.kind_lengths[kinds],
        )


# A pass's forward and backward scans run over the runs of every fit in one sequence of
# matrices, a reset matrix heading each fit's runs: any row times FORWARD_RESET is the chain's
# start (the good state, up to scale) and any row times BACKWARD_RESET the uniform end row.
FORWARD_RESET = np.array([[1.0, 0.0], [1.0, 0.0]])
BACKWARD_RESET = np.full((2, 2), 0.5)


def _expected_counts(batch: _Batch, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One scaled forward-backward pass per fit: expected counts and the log-likelihoods.

    ``counts[f, o, i, j]`` is the expected number of transmissions of fit f with outcome o (1
    lost) sent in state j with the chain in state i before them (0 good, 1 bad), given the whole
    sequence: the E step of Baum-Welch. The log-likelihood is that of the sequence, the chain
    starting in the good state.

    Transmission t moves the state distribution by N = ``steps[o_t]`` (N[i, j] =
    A[i, j] P(o_t | j)), so a run of k equal outcomes moves it by N^k: the forward and backward
    passes step over runs rather than transmissions (a capture with a few per cent loss has a
    few runs per hundred transmissions). Within a run, with a the forward row before it and b
    the backward column after it, the expected transitions i -> j sum to
    sum_m (a N^m)_i N_ij (N^(k-1-m) b)_j / (a N^k b), which is linear in the outer product of
    a and b: those are summed per kind of run first, then multiplied by the kind's
    sum_m N^m (x) N^(k-1-m) from :func:`_run_powers`.
    """
    fits, runs = len(batch.offsets) - 1, len(batch.run_fit)
    p, r, loss_good, loss_bad = theta.T
    transitions = np.stack((np.column_stack((1.0 - p, p)), np.column_stack((r, 1.0 - r))), axis=1)  # [fit, i, j]
    arrive = np.column_stack((1.0 - loss_good, 1.0 - loss_bad))[:, None, :]
    steps = np.stack((transitions * arrive, transitions * (1.0 - arrive)), axis=1)  # [fit, outcome, i, j]
    kind_steps = steps[batch.kind_fit, batch.kind_outcomes]
    kind_power, log_scale, within = _run_powers(kind_steps, batch.kind_lengths)
    power = kind_power[batch.run_kind]  # N^k of each run, scaled
    # one scan: forward over the runs, then backward over them (transposed, in reverse)
    forward = np.insert(power, batch.offsets[:-1], FORWARD_RESET, axis=0)
    backward = np.insert(power[::-1].transpose(0, 2, 1), runs - batch.offsets[1:], BACKWARD_RESET, axis=0)
    rows = _scaled_products(np.ones(2), np.concatenate((forward, backward)))
    position = np.arange(runs) + batch.run_fit + 1  # of each run among the forward matrices
    before, after = rows[position - 1], rows[position]
    later = rows[len(forward) + (runs - 1 - np.arange(runs)) + (fits - batch.run_fit) - 1]  # the row after each run
    growth = (before[:, :, None] * power).sum(axis=(1, 2))  # P(run | earlier runs), scaled
    log_likelihood = np.bincount(batch.run_fit, np.log(growth) + log_scale[batch.run_kind], minlength=fits)
    through = growth * (after * later).sum(axis=1)  # a N^k b
    ends = (before[:, :, None] * later[:, None, :] / through[:, None, None]).reshape(-1)
    kinds = len(batch.kind_lengths)
    slots = (batch.run_kind[:, None] * 4 + np.arange(4)).reshape(-1)
    per_kind = np.bincount(slots, weights=ends, minlength=4 * kinds).reshape(kinds, 2, 2)
    moves = within.spread(per_kind) * kind_steps
    slots = ((batch.kind_fit * 2 + batch.kind_outcomes)[:, None] * 4 + np.arange(4)).reshape(-1)
    counts = np.bincount(slots, weights=moves.reshape(-1), minlength=fits * 8).reshape(fits, 2, 2, 2)
    return counts, log_likelihood


class _Within(NamedTuple):
    """W = sum_m N^m (x) N^(k-1-m) of each kind of run, W[i, p, q, a, b] = sum_m N^m[p, a] N^(k-1-m)[b, q].

    Kept as :func:`_run_powers` finds it: for most kinds the two eigen-projections and three
    weights, W = w0 E1 (x) E1 + w1 E2 (x) E2 + w2 (E1 (x) E2 + E2 (x) E1); for the kinds
    in ``hard`` the whole array, ``hard_full``.
    """

    first: np.ndarray  # E1, (kinds, 2, 2)
    second: np.ndarray  # E2
    weights: np.ndarray  # (kinds, 3)
    hard: np.ndarray  # kind indices
    hard_full: np.ndarray  # (len(hard), 2, 2, 2, 2)

    def spread(self, ends: np.ndarray) -> np.ndarray:
        """sum_pq ends[i, p, q] W[i, p, q, a, b] for every kind i: (kinds, 2, 2).

        For one product term X (x) Y that is X^T ends Y^T, four batched 2 by 2 products in all.
        """
        f, s = self.first.transpose(0, 2, 1), self.second.transpose(0, 2, 1)
        w0, w1, w2 = (self.weights[:, j, None, None] for j in range(3))
        out = (f @ ends) @ (w0 * f + w2 * s) + (s @ ends) @ (w2 * f + w1 * s)
        if self.hard.size:
            out[self.hard] = (ends[self.hard][:, :, :, None, None] * self.hard_full).sum(axis=(1, 2))
        return out


def _run_powers(steps: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, _Within]:
    """For each N = steps[i], k = lengths[i]: N^k and W = sum_m N^m (x) N^(k-1-m), both scaled, and the log scale.

    In closed form from the eigenvalues of N (a non-negative 2 by 2 matrix, so they are real,
    l1 >= |l2|): with E1 = (N - l2 I) / (l1 - l2) and E2 = (l1 I - N) / (l1 - l2) the
    projections on the two eigenvectors, N^m = l1^m E1 + l2^m E2, so N^k = l1^k (E1 + rho^k E2)
    and W = l1^(k-1) (k E1 (x) E1 + k rho^(k-1) E2 (x) E2 + g (E1 (x) E2 + E2 (x) E1)), with
    rho = l2 / l1 and g = sum_m rho^m = (1 - rho^k) / (1 - rho) (see :class:`_Within`). Both
    are divided by l1^k, whose log is the scale: a power of N shrinks geometrically with k. The
    projections grow, and the sum cancels, as l1 - l2 -> 0 or the eigenvectors come close
    (1 - rho below DISTINCT_EIGENVALUES or a projection entry above PROJECTION_LIMIT, or a zero
    matrix): those kinds, rare and only met on the way through the parameter space, are computed
    by squaring instead (:func:`_run_powers_by_squaring`).
    """
    a, b, c, d = steps[:, 0, 0], steps[:, 0, 1], steps[:, 1, 0], steps[:, 1, 1]
    spread = np.sqrt((a - d) ** 2 + 4.0 * b * c)  # l1 - l2, a sum of non-negative terms: no cancellation
    top = (a + d + spread) / 2.0  # l1
    gap = np.divide(spread, top, out=np.zeros_like(top), where=top > 0)  # 1 - rho
    closed = gap >= DISTINCT_EIGENVALUES
    rho = 1.0 - np.where(closed, gap, 1.0)
    eye = np.eye(2)
    first = (steps / np.where(closed, top, 1.0)[:, None, None] - rho[:, None, None] * eye) / np.where(closed, gap, 1.0)[:, None, None]
    closed &= np.abs(first).max(axis=(1, 2)) <= PROJECTION_LIMIT
    second = eye - first
    rho_k1 = np.power(rho, lengths - 1)
    power = first + (rho_k1 * rho)[:, None, None] * second
    g = (1.0 - rho_k1 * rho) / np.where(closed, gap, 1.0)
    inv = np.where(closed, 1.0 / np.where(closed, top, 1.0), 0.0)
    weights = np.column_stack((lengths * inv, lengths * rho_k1 * inv, g * inv))
    log_scale = lengths * np.log(np.where(closed, top, 1.0))
    hard = np.flatnonzero(~closed)
    hard_full = np.empty((0, 2, 2, 2, 2))
    if hard.size:
        power[hard], log_scale[hard], hard_full = _run_powers_by_squaring(steps[hard], lengths[hard])
    return power, log_scale, _Within(first, second, weights, hard, hard_full)


def _run_powers_by_squaring(steps: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_run_powers` for any N, by binary exponentiation of a block matrix: N^k, the log
    scale and W (whole, as :class:`_Within` indexes it), all scaled alike.

    Both come from one power of Z = [[I (x) N, I], [0, N^T (x) I]] (8 by 8): Z^k has
    I (x) N^k top left (so N^k in its first 2 by 2) and sum_m (N^T)^(k-1-m) (x) N^m top right.
    All the powers at once, each product scaled to a largest entry of 1, with the log of the
    scale kept apart.
    """
    count = len(lengths)
    square = np.zeros((count, 8, 8))
    square[:, :2, :2] = square[:, 2:4, 2:4] = steps
    square[:, :4, 4:] = np.eye(4)
    square[:, 4::2, 4::2] = square[:, 5::2, 5::2] = steps.transpose(0, 2, 1)
    square_logs = np.zeros(count)
    result = np.broadcast_to(np.eye(8), (count, 8, 8)).copy()
    logs = np.zeros(count)
    bits = lengths.copy()
    while bits.any():
        odd = (bits & 1).astype(bool)
        product = result[odd] @ square[odd]
        peak = product.max(axis=(1, 2))
        result[odd] = product / peak[:, None, None]
        logs[odd] += square_logs[odd] + np.log(peak)
        bits >>= 1
        live = bits > 0
        product = square[live] @ square[live]
        peak = product.max(axis=(1, 2))
        square[live] = product / peak[:, None, None]
        square_logs[live] = 2.0 * square_logs[live] + np.log(peak)
    within = result[:, :4, 4:].reshape(count, 2, 2, 2, 2).transpose(0, 2, 1, 4, 3)
    return result[:, :2, :2], logs, within


def _scaled_products(start: np.ndarray, matrices: np.ndarray) -> np.ndarray:
    """Rows start @ matrices[0] @ ... @ matrices[t] for every t, each scaled to sum 1, (n, 2).

    The recursion is sequential; it runs as a blocked scan to keep the Python loops short. The
    matrices are cut into chunks of SCAN_CHUNK; the running products within every chunk are
    formed side by side (SCAN_CHUNK vectorised steps, on the four entries as separate arrays),
    the row at the head of each chunk comes from the same scan over the chunk totals (so about
    SCAN_CHUNK log(n) / log(SCAN_CHUNK) steps in all), and one vectorised product joins the
    two. Every running product is scaled to sum 1, which keeps it representable: the rows are
    wanted only up to a factor.
    """
    n = len(matrices)
    if n == 0:
        return np.empty((0, 2))
    width = min(n, SCAN_CHUNK)
    chunks = -(-n // width)
    padded = np.broadcast_to(np.eye(2), (chunks * width, 2, 2)).copy()
    padded[:n] = matrices
    entries = padded.reshape(chunks, width, 4).transpose(2, 1, 0).copy()  # [entry, step, chunk]
    running = np.empty_like(entries)
    a, b, c, d = np.ones(chunks), np.zeros(chunks), np.zeros(chunks), np.ones(chunks)
    for j in range(width):
        e, f, g, h = entries[:, j]
        a, b, c, d = a * e + b * g, a * f + b * h, c * e + d * g, c * f + d * h
        total = a + b + c + d
        a, b, c, d = a / total, b / total, c / total, d / total
        running[:, j] = a, b, c, d
    row = start / start.sum()
    if chunks > 1:
        heads = np.vstack((row, _scaled_products(row, running[:, -1, :-1].T.reshape(-1, 2, 2))))
    else:
        heads = row[None, :]
    x, y = heads[:, 0], heads[:, 1]
    rows = np.stack((x * running[0] + y * running[2], x * running[1] + y * running[3]), axis=-1)
    rows = rows.transpose(1, 0, 2).reshape(-1, 2)[:n]
    return rows / rows.sum(axis=1, keepdims=True)


def _histogram(values: np.ndarray) -> dict[int, int]:
    """value -> how many times it occurs."""
    if not values.size:
        return {}
    keys, counts = np.unique(values, return_counts=True)
    return dict(zip(keys.tolist(), counts.tolist()))


def mathis_throughput(mss_bytes: float, rtt_s: float | None, p: float | None, delayed_acks: bool) -> float | None:
    """The Mathis et al. model's throughput in bytes/s: MSS * C / (RTT * sqrt(p)) (DOMAIN.md 9).

    C = sqrt(3/2) with an ACK per segment, sqrt(3/4) with delayed ACKs (one ACK per two). The
    model's p is the rate of congestion signals, each halving the window, so pass P' (loss events
    per segment); with isolated losses P' = P. None when p is 0 or unknown or
    the RTT is unknown (the model has no finite value).
    """
    if p is None or rtt_s is None or p <= 0 or rtt_s <= 0:
        return None
    c = math.sqrt(0.75) if delayed_acks else math.sqrt(1.5)
    return mss_bytes * c / (rtt_s * math.sqrt(p))


def achieved_percent(throughput: float, model_throughput: float | None) -> float | None:
    """Achieved throughput as a percentage of the model's (same units), None without a model."""
    if model_throughput is None or model_throughput <= 0:
        return None
    return 100.0 * throughput / model_throughput
