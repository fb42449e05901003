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

import itertools
import math
from dataclasses import dataclass

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
MAX_ITERATIONS = 200  # Baum-Welch iterations at the most
TOLERANCE = 1e-9  # stop when an iteration gains less log-likelihood than this share of it
# The simple Gilbert estimate puts the loss probabilities on the boundary (0 and 1) and may put
# p or r there too; Baum-Welch cannot move a parameter off 0 or 1 (a state that never loses is
# never credited with a loss), so it starts this far inside.
START_MARGIN = 0.05


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
    "baum-welch" for the EM fit; ``iterations`` counts EM iterations (0 for "gilbert") and
    ``converged`` is False when EM stopped at its iteration cap.
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
    if rtt_ns is None:
        return bursts(lost)
    if not rtt_ns > 0:
        raise ValueError(f"the RTT must be positive, not {rtt_ns}")
    times_ns = np.asarray(times_ns, dtype=np.int64)
    if times_ns.shape != lost.shape:
        raise ValueError("lost and times_ns must have the same length")
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
    space. Each iteration runs the scaled forward-backward pass (:func:`_expected_counts`) and
    re-estimates p, r and the two loss probabilities from the expected transition and emission
    counts. It stops when an iteration gains less than ``tolerance`` times the log-likelihood,
    or after ``max_iterations`` (1 evaluates the start). The state that loses more is reported
    as the bad one. None with no losses or fewer than MIN_FIT_SEGMENTS transmissions.
    """
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, not {max_iterations}")
    start = gilbert_estimate(lost)
    if start is None:
        return None
    runs = _runs(np.asarray(lost, dtype=bool))

    def inside(x: float) -> float:
        return min(max(x, START_MARGIN), 1.0 - START_MARGIN)

    p, r = inside(start.p), inside(start.r)
    loss_good, loss_bad = START_MARGIN, 1.0 - START_MARGIN
    previous = -math.inf
    for iteration in itertools.count(1):
        counts, log_likelihood = _expected_counts(runs, p, r, loss_good, loss_bad)
        converged = log_likelihood - previous <= tolerance * abs(log_likelihood)
        if converged or iteration >= max_iterations:
            break
        previous = log_likelihood
        moves = counts.sum(axis=0)  # expected transitions i -> j
        in_state = moves.sum(axis=0)  # expected transmissions sent in each state
        lost_in_state = counts[1].sum(axis=0)
        p = moves[0, 1] / moves[0].sum() if moves[0].sum() > 0 else p
        r = moves[1, 0] / moves[1].sum() if moves[1].sum() > 0 else r
        loss_good = lost_in_state[0] / in_state[0] if in_state[0] > 0 else loss_good
        loss_bad = lost_in_state[1] / in_state[1] if in_state[1] > 0 else loss_bad
    if loss_good > loss_bad:
        p, r, loss_good, loss_bad = r, p, loss_bad, loss_good
    return GilbertElliott(
        float(p), float(r), float(loss_good), float(loss_bad), log_likelihood, "baum-welch", iteration, converged
    )


def _runs(lost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sequence as runs of equal outcomes: (outcome 0/1, length) arrays, in order."""
    starts = np.flatnonzero(np.diff(lost, prepend=~lost[:1]))
    return lost[starts].astype(np.intp), np.diff(starts, append=len(lost))


def _expected_counts(
    runs: tuple[np.ndarray, np.ndarray], p: float, r: float, loss_good: float, loss_bad: float
) -> tuple[np.ndarray, float]:
    """One scaled forward-backward pass: expected counts and the log-likelihood.

    ``counts[o, i, j]`` is the expected number of transmissions with outcome o (1 lost) sent in
    state j with the chain in state i before them (0 good, 1 bad), given the whole sequence:
    the E step of Baum-Welch. The log-likelihood is that of the sequence, the chain starting in
    the good state.

    Transmission t moves the state distribution by ``steps[o_t]`` (steps[o][i, j] =
    A[i, j] P(o | j)), so a run of k equal outcomes moves it by steps[o]^k: the forward and
    backward passes step over runs rather than transmissions (a capture with a few per cent loss
    has a few runs per hundred transmissions), with the powers and the within-run sums from
    :func:`_run_powers`. Within a run, with a the forward row before it and b the backward
    column after it, the expected transitions i -> j sum to
    sum_m (a N^m)_i N_ij (N^(k-1-m) b)_j, scaled so that the run's k transmissions count k.
    """
    outcomes, lengths = runs
    transitions = np.array([[1.0 - p, p], [r, 1.0 - r]])
    steps = np.stack((transitions * [1.0 - loss_good, 1.0 - loss_bad], transitions * [loss_good, loss_bad]))
    power = np.empty((len(lengths), 2, 2))
    within = np.empty((len(lengths), 2, 2, 2, 2))  # within[run, p, q, i, j]: sum_m N^m[p, i] N^(k-1-m)[j, q]
    log_scale = np.empty(len(lengths))
    for outcome in (0, 1):
        mine = outcomes == outcome
        distinct, which = np.unique(lengths[mine], return_inverse=True)
        blocks, logs = _run_powers(steps[outcome], distinct)
        power[mine] = blocks[which, :2, :2]
        within[mine] = blocks[which, :4, 4:].reshape(-1, 2, 2, 2, 2).transpose(0, 2, 1, 4, 3)
        log_scale[mine] = logs[which]
    start = np.array([1.0, 0.0])
    before = np.vstack((start, _scaled_products(start, power)))[:-1]
    log_likelihood = float(np.log(np.einsum("ri,rij->r", before, power)).sum() + log_scale.sum())
    end = np.array([0.5, 0.5])
    after = np.vstack((_scaled_products(end, power[:0:-1].transpose(0, 2, 1))[::-1], end))
    moves = np.einsum("rp,rq,rpqij->rij", before, after, within) * steps[outcomes]
    moves *= (lengths / moves.sum(axis=(1, 2)))[:, None, None]
    return np.stack([moves[outcomes == outcome].sum(axis=0) for outcome in (0, 1)]), log_likelihood


def _run_powers(step: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each k in ``lengths``: N^k and sum_m N^m (x) N^(k-1-m), scaled, and the log of the scale.

    Both come from one power of the block matrix Z = [[I (x) N, I], [0, N^T (x) I]] (8 by 8):
    Z^k has I (x) N^k top left (so N^k in its first 2 by 2) and sum_m (N^T)^(k-1-m) (x) N^m
    top right. Z^k for every k at once by binary exponentiation, each product scaled to a largest
    entry of 1 (the powers of N shrink geometrically), with the log of the scale kept apart.
    """
    z = np.zeros((8, 8))
    z[:4, :4] = np.kron(np.eye(2), step)
    z[:4, 4:] = np.eye(4)
    z[4:, 4:] = np.kron(step.T, np.eye(2))
    result = np.broadcast_to(np.eye(8), (len(lengths), 8, 8)).copy()
    logs = np.zeros(len(lengths))
    square, square_log = z, 0.0
    bits = lengths.copy()
    while True:
        odd = (bits & 1).astype(bool)
        product = result[odd] @ square
        peak = product.max(axis=(1, 2))
        result[odd] = product / peak[:, None, None]
        logs[odd] += square_log + np.log(peak)
        bits >>= 1
        if not bits.any():
            return result, logs
        square = square @ square
        top = square.max()
        square, square_log = square / top, 2 * square_log + math.log(top)


def _scaled_products(start: np.ndarray, matrices: np.ndarray) -> np.ndarray:
    """Rows start @ matrices[0] @ ... @ matrices[t] for every t, each scaled to sum 1, (n, 2).

    The recursion is sequential. To keep the Python loops short the sequence is cut into about
    sqrt(n) chunks of about sqrt(n) matrices: one loop runs down all the chunks side by side
    (the running product within each chunk), a second carries the row from chunk to chunk, and
    one vectorised product joins the two. Every running product is scaled to sum 1, which keeps
    it representable; the rows are wanted only up to a factor.
    """
    n = len(matrices)
    if n == 0:
        return np.empty((0, 2))
    width = math.isqrt(n)
    chunks = -(-n // width)
    padded = np.empty((chunks * width, 2, 2))
    padded[:n] = matrices
    padded[n:] = np.eye(2)
    blocks = padded.reshape(chunks, width, 2, 2)
    running = np.empty_like(blocks)
    product = np.broadcast_to(np.eye(2), (chunks, 2, 2))
    for j in range(width):
        product = product @ blocks[:, j]
        product /= product.sum(axis=(1, 2), keepdims=True)
        running[:, j] = product
    heads = np.empty((chunks, 2))
    row = start / start.sum()
    for c in range(chunks):
        heads[c] = row
        row = row @ running[c, -1]
        row /= row.sum()
    rows = np.einsum("ci,cwij->cwj", heads, running).reshape(-1, 2)[:n]
    return rows / rows.sum(axis=1, keepdims=True)


def _histogram(values: np.ndarray) -> dict[int, int]:
    """value -> how many times it occurs."""
    keys, counts = np.unique(values, return_counts=True)
    return dict(zip(keys.tolist(), counts.tolist()))


def mathis_throughput(mss_bytes: float, rtt_s: float | None, p: float | None, delayed_acks: bool) -> float | None:
    """The Mathis et al. model's throughput in bytes/s: MSS * C / (RTT * sqrt(p)) (DOMAIN.md 9).

    C = sqrt(3/2) with an ACK per segment, sqrt(3/4) with delayed ACKs (one ACK per two). The
    model's p is the rate of congestion signals, each halving the window, so pass P' (loss events
    per segment, as paper 000 does); with isolated losses P' = P. None when p is 0 or unknown or
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
