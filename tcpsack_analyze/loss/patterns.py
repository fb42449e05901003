"""Loss patterns of one direction: rates, bursts, loss events and a Gilbert-Elliott fit.

DOMAIN.md section 7 asks for P (lost / data segments sent), P' (loss events / data segments
sent), the burst length distribution, the isolated vs bursty share and a two-state
Gilbert-Elliott fit; section 9 for the Mathis model. The delay/loss testbed paper (000) shows
why bursts and events matter apart from P: Reno recovers an isolated drop by fast retransmit but
times out after a burst, SACK recovers either; it describes its loss processes by P (packet loss
probability), P' (drop events per packet) and b (packets per burst), the quantities below.

Everything here is plain numpy on one direction's data-segment transmissions in transmission
order, originals and retransmissions alike: ``lost[i]`` says whether transmission ``i`` failed to
arrive and ``times_ns[i]`` when it was sent. Deciding which transmissions were lost (from a
sender-, receiver- or mid-path capture) is the caller's job.

- A *burst* is a maximal run of consecutive transmissions that were all lost; b is its length.
- A *loss event* is all the losses within one round trip (one congestion signal): an event
  starts at a loss, and every later loss sent less than one RTT after that first loss belongs
  to it; the next loss sent later starts the next event. Without an RTT each burst is taken as
  its own event (``events_by == "burst"``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = [
    "GilbertElliott",
    "LossPattern",
    "achieved_percent",
    "bursts",
    "fit_gilbert_elliott",
    "gilbert_estimate",
    "loss_events",
    "loss_pattern",
    "mathis_throughput",
]

MIN_FIT_SEGMENTS = 10  # fewer transmissions say nothing about a two-state chain
MAX_ITERATIONS = 200  # forward-backward passes at the most
TOLERANCE = 1e-8  # stop when a cycle gains less log-likelihood than this share of it
PROBABILITY_FLOOR = 1e-9  # how far inside [0, 1] an accelerated step lands
SCAN_CHUNK = 32  # matrices per chunk in the blocked scan of the forward and backward passes
# The simple Gilbert estimate puts the loss probabilities on the boundary (0 and 1) and may put
# p or r there too; Baum-Welch cannot move a parameter off 0 or 1 (a state that never loses is
# never credited with a loss), so it starts this far inside.
START_MARGIN = 0.01


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
    """
    lost = np.asarray(lost, dtype=bool)
    times_ns = np.asarray(times_ns, dtype=np.int64)
    if times_ns.shape != lost.shape:
        raise ValueError("lost and times_ns must have the same length")
    if rtt_ns is None:
        return bursts(lost)
    if not 0 < rtt_ns < math.inf:
        raise ValueError(f"the RTT must be positive and finite, not {rtt_ns}")
    index = np.flatnonzero(lost)
    sent = times_ns[index]
    if np.any(np.diff(sent) < 0):
        raise ValueError("the send times of the lost transmissions decrease")
    # A later loss joins the event when its whole-ns distance d < rtt, that is d < ceil(rtt).
    # For each loss, the first loss one RTT or more after it: the next event if this one starts one.
    following = np.searchsorted(sent, sent + math.ceil(rtt_ns), side="left").tolist()
    firsts: list[int] = []
    i = 0
    while i < len(following):  # a chain through the losses, one step per event
        firsts.append(i)
        i = following[i]
    first = np.asarray(firsts, dtype=np.int64)
    return np.column_stack((index[first], np.diff(np.append(first, len(index))))).astype(np.int64)


def loss_pattern(lost: np.ndarray, times_ns: np.ndarray, rtt_ns: float | None = None) -> LossPattern:
    """All the loss statistics of one direction's transmissions (see :class:`LossPattern`)."""
    lost = np.asarray(lost, dtype=bool)
    if lost.ndim != 1:
        raise ValueError("lost must be one-dimensional")
    segments, lost_count = int(lost.size), int(lost.sum())
    runs = bursts(lost)
    events = loss_events(lost, times_ns, rtt_ns)
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
        gilbert_elliott=fit_gilbert_elliott(lost),
    )


def gilbert_estimate(lost: np.ndarray) -> GilbertElliott | None:
    """The simple Gilbert model (loss_good=0, loss_bad=1) read off the sequence in closed form.

    With every loss in the bad state and none in the good one, the states are observed and the
    maximum-likelihood transition probabilities are counts: p = bursts / good transmissions
    followed by another (the chain's start counts as one), r = bursts that ended / lost
    transmissions followed by another. Up to the ends of the sequence these are the textbook
    p = bursts / received and r = 1/b; r is 1/b when no lost transmission has a successor.
    None with no losses or fewer than MIN_FIT_SEGMENTS transmissions.
    """
    lost = np.asarray(lost, dtype=bool)
    n, lost_count = int(lost.size), int(lost.sum())
    if n < MIN_FIT_SEGMENTS or lost_count == 0:
        return None
    burst_count = len(bursts(lost))
    last_lost = int(lost[-1])
    p = burst_count / (1 + (n - lost_count) - (1 - last_lost))
    left_bad = lost_count - last_lost
    r = (burst_count - last_lost) / left_bad if left_bad else burst_count / lost_count
    log_likelihood = _expected_counts(_runs(lost), p, r, 0.0, 1.0)[1]
    return GilbertElliott(p, r, 0.0, 1.0, log_likelihood, "gilbert", 0, True)


def fit_gilbert_elliott(
    lost: np.ndarray, max_iterations: int = MAX_ITERATIONS, tolerance: float = TOLERANCE
) -> GilbertElliott | None:
    """Fit a two-state Gilbert-Elliott model to the sequence by Baum-Welch (EM).

    A hidden Markov model with two states and Bernoulli (lost or not) emissions, started from the
    simple Gilbert estimate (:func:`gilbert_estimate`) moved START_MARGIN inside the parameter
    space. Each Baum-Welch step runs one scaled forward-backward pass
    (:func:`_expected_counts`) and re-estimates p, r and the two loss probabilities from the
    expected transition and emission counts (:func:`_maximise`). Plain EM crawls when the best
    fit lies near the edge of the parameter space (a good state that almost never loses, the
    common case), so the steps are accelerated by SQUAREM (:func:`_squarem_jump`), which keeps
    EM's guarantee that the likelihood never falls. It stops when a cycle gains less than
    ``tolerance`` times the log-likelihood (``converged``), or after ``max_iterations``
    forward-backward passes (1 evaluates the start, 2 takes one plain EM step); the result is
    the best point evaluated. A pass takes time in proportion to the runs of equal outcomes
    (about twice the bursts), not to the transmissions: a million transmissions at 5% loss fit
    in about a second. The state that loses more is reported as the bad one: EM keeps the roles
    of its start, and should a jump ever exchange them, they are swapped back (the start state
    then being the lossier one). None with no losses or fewer than MIN_FIT_SEGMENTS
    transmissions.
    """
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, not {max_iterations}")
    start = gilbert_estimate(lost)
    if start is None:
        return None
    runs = _runs(np.asarray(lost, dtype=bool))
    passes = 0
    best = (np.empty(4), -math.inf)

    def em_step(theta: np.ndarray) -> tuple[np.ndarray, float]:
        """The Baum-Welch update of (p, r, loss_good, loss_bad) and their log-likelihood."""
        nonlocal passes, best
        counts, log_likelihood = _expected_counts(runs, *theta)
        passes += 1
        if log_likelihood > best[1]:
            best = (theta, log_likelihood)
        return _maximise(counts, theta), log_likelihood

    theta = np.clip([start.p, start.r, 0.0, 1.0], START_MARGIN, 1.0 - START_MARGIN)
    previous, floor, fallback = -math.inf, -math.inf, theta
    converged = False
    while passes < max_iterations:
        following, log_likelihood = em_step(theta)
        if not log_likelihood >= floor:  # the jump went downhill: on from the plain EM point
            theta, floor = fallback, -math.inf
            continue
        converged = log_likelihood - previous <= tolerance * abs(log_likelihood)
        if converged or passes >= max_iterations:
            break
        previous = log_likelihood
        after, floor = em_step(following)
        theta, fallback = _squarem_jump(theta, following, after), after
    (p, r, loss_good, loss_bad), log_likelihood = best
    if loss_good > loss_bad:
        p, r, loss_good, loss_bad = r, p, loss_bad, loss_good
    return GilbertElliott(
        float(p), float(r), float(loss_good), float(loss_bad), log_likelihood, "baum-welch", passes, converged
    )


def _maximise(counts: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """The M step: (p, r, loss_good, loss_bad) from the expected counts of :func:`_expected_counts`.

    A parameter whose state carries no weight keeps its value.
    """
    moves = counts.sum(axis=0)  # expected transitions i -> j
    in_state = moves.sum(axis=0)  # expected transmissions sent in each state
    lost_in_state = counts[1].sum(axis=0)
    numerator = np.array([moves[0, 1], moves[1, 0], lost_in_state[0], lost_in_state[1]])
    denominator = np.array([moves[0].sum(), moves[1].sum(), in_state[0], in_state[1]])
    return np.divide(numerator, denominator, out=theta.copy(), where=denominator > 0)


def _squarem_jump(theta: np.ndarray, following: np.ndarray, after: np.ndarray) -> np.ndarray:
    """SQUAREM's extrapolation from two EM steps theta -> following -> after (scheme S3).

    Varadhan and Roland, "Simple and globally convergent methods for accelerating the
    convergence of any EM algorithm", Scand. J. Statistics 35 (2008): with r the first step and
    v the change between the steps, jump to theta + 2a r + a^2 v, a = |r| / |v| and at least 1
    (a = 1 gives ``after``). The jump is kept PROBABILITY_FLOOR inside [0, 1], where EM can still
    move every parameter; the caller falls back to ``after`` when it lowers the likelihood.
    """
    step = following - theta
    change = after - 2.0 * following + theta
    size = float(np.linalg.norm(change))
    if size == 0.0:
        return after
    a = max(1.0, float(np.linalg.norm(step)) / size)
    return np.clip(theta + 2.0 * a * step + a * a * change, PROBABILITY_FLOOR, 1.0 - PROBABILITY_FLOOR)


class _Runs(NamedTuple):
    """A sequence as runs of equal outcomes, each run named by its kind: (outcome, length)."""

    kind: np.ndarray  # per run, in order: its index in the two arrays below
    kind_outcomes: np.ndarray  # 1 lost, 0 arrived
    kind_lengths: np.ndarray


def _runs(lost: np.ndarray) -> _Runs:
    """Cut the sequence into runs; the E step works per run and per kind of run, not per transmission."""
    starts = np.flatnonzero(np.diff(lost, prepend=~lost[:1]))
    lengths = np.diff(starts, append=len(lost))
    keys, kind = np.unique(lengths * 2 + lost[starts], return_inverse=True)
    return _Runs(kind, keys % 2, keys // 2)


def _expected_counts(runs: _Runs, p: float, r: float, loss_good: float, loss_bad: float) -> tuple[np.ndarray, float]:
    """One scaled forward-backward pass: expected counts and the log-likelihood.

    ``counts[o, i, j]`` is the expected number of transmissions with outcome o (1 lost) sent in
    state j with the chain in state i before them (0 good, 1 bad), given the whole sequence:
    the E step of Baum-Welch. The log-likelihood is that of the sequence, the chain starting in
    the good state.

    Transmission t moves the state distribution by N = ``steps[o_t]`` (N[i, j] =
    A[i, j] P(o_t | j)), so a run of k equal outcomes moves it by N^k: the forward and backward
    passes step over runs rather than transmissions (a capture with a few per cent loss has a
    few runs per hundred transmissions). Within a run, with a the forward row before it and b
    the backward column after it, the expected transitions i -> j sum to
    sum_m (a N^m)_i N_ij (N^(k-1-m) b)_j / (a N^k b), which is linear in the outer product of
    a and b: those are summed per kind of run first, then multiplied by the kind's
    sum_m N^m (x) N^(k-1-m) from :func:`_run_powers`.
    """
    transitions = np.array([[1.0 - p, p], [r, 1.0 - r]])
    steps = np.stack((transitions * [1.0 - loss_good, 1.0 - loss_bad], transitions * [loss_good, loss_bad]))
    kinds = len(runs.kind_lengths)
    blocks, log_scale = _run_powers(steps[runs.kind_outcomes], runs.kind_lengths)
    power = blocks[runs.kind, :2, :2]  # N^k of each run, scaled
    start, end = np.array([1.0, 0.0]), np.array([0.5, 0.5])
    forward = np.vstack((start, _scaled_products(start, power)))  # before the first run, after each
    before = forward[:-1]
    growth = (before[:, :, None] * power).sum(axis=(1, 2))  # P(run | earlier runs), scaled
    log_likelihood = float(np.log(growth).sum() + log_scale[runs.kind].sum())
    later = np.vstack((_scaled_products(end, power[:0:-1].transpose(0, 2, 1))[::-1], end))  # after each run
    through = growth * (forward[1:] * later).sum(axis=1)  # a N^k b
    ends = (before[:, :, None] * later[:, None, :] / through[:, None, None]).reshape(-1)
    slots = (runs.kind[:, None] * 4 + np.arange(4)).reshape(-1)
    per_kind = np.bincount(slots, weights=ends, minlength=4 * kinds).reshape(kinds, 2, 2)
    within = blocks[:, :4, 4:].reshape(kinds, 2, 2, 2, 2).transpose(0, 2, 1, 4, 3)  # [kind, p, q, i, j]
    moves = (per_kind[:, :, :, None, None] * within).sum(axis=(1, 2)) * steps[runs.kind_outcomes]
    return np.stack([moves[runs.kind_outcomes == outcome].sum(axis=0) for outcome in (0, 1)]), log_likelihood


def _run_powers(steps: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each N = steps[i], k = lengths[i]: N^k and sum_m N^m (x) N^(k-1-m), scaled, and the log scale.

    Both come from one power of the block matrix Z = [[I (x) N, I], [0, N^T (x) I]] (8 by 8):
    Z^k has I (x) N^k top left (so N^k in its first 2 by 2) and sum_m (N^T)^(k-1-m) (x) N^m
    top right, which :func:`_expected_counts` reads as sum_m N^m[p, i] N^(k-1-m)[j, q]. All
    the powers at once by binary exponentiation, each product scaled to a largest entry of 1
    (the powers of N shrink geometrically), with the log of the scale kept apart.
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
    while True:
        odd = (bits & 1).astype(bool)
        product = result[odd] @ square[odd]
        peak = product.max(axis=(1, 2))
        result[odd] = product / peak[:, None, None]
        logs[odd] += square_logs[odd] + np.log(peak)
        bits >>= 1
        live = bits > 0
        if not live.any():
            return result, logs
        product = square[live] @ square[live]
        peak = product.max(axis=(1, 2))
        square[live] = product / peak[:, None, None]
        square_logs[live] = 2.0 * square_logs[live] + np.log(peak)


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
