"""Loss patterns of one direction: rates, bursts, loss events and a Gilbert-Elliott fit.

DOMAIN.md section 7 asks for P (lost / data segments sent), P' (loss events / data segments
sent), the burst length distribution, the isolated vs bursty share and a two-state
Gilbert-Elliott fit; section 9 for the Mathis model. The delay/loss testbed paper (000) shows
why bursts and events matter apart from P: Reno recovers an isolated drop by fast retransmit but
times out after a burst, SACK recovers either; it describes its loss processes by P (packet loss
probability), P' (drop events per packet) and b (packets per burst), the quantities below.

Everything here works on one direction's data-segment transmissions in transmission order,
originals and retransmissions alike (rates, bursts and events in numpy, the Gilbert and
Gilbert-Elliott fits in the compiled core, src/ge.rs): ``lost[i]`` says whether transmission
``i`` failed to arrive and ``times_ns[i]`` when it was sent (only the send times of the lost ones
are read: they may be given alone, see :func:`loss_events`). Deciding which transmissions were
lost (from a sender-, receiver- or mid-path capture) is the caller's job.

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

import numpy as np

from tcpsack_analyze import _core

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

# the fits' constants live in the core (src/ge.rs): fewer transmissions than MIN_FIT_SEGMENTS say
# nothing about a two-state chain; a fit makes MAX_ITERATIONS forward-backward passes at the most
# and stops when a cycle gains less log-likelihood than TOLERANCE times it; it starts
# START_MARGIN inside the parameter space
MIN_FIT_SEGMENTS: int = _core.GE_MIN_FIT_SEGMENTS
MAX_ITERATIONS: int = _core.GE_MAX_ITERATIONS
TOLERANCE: float = _core.GE_TOLERANCE
START_MARGIN: float = _core.GE_START_MARGIN
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
        gilbert=gilbert_estimate(lost) if lost_count else None,  # (no call into the core for nothing)
        gilbert_elliott=(fit_gilbert_elliott(lost) if lost_count else None) if gilbert_elliott is ... else gilbert_elliott,
    )


def gilbert_estimate(lost: np.ndarray) -> GilbertElliott | None:
    """The simple Gilbert model (loss_good=0, loss_bad=1) read off the sequence in closed form.

    With every loss in the bad state and none in the good one, the states are observed and the
    maximum-likelihood transition probabilities are counts: p = bursts / good transmissions
    followed by another (the chain's start counts as one), r = bursts that ended / lost
    transmissions followed by another. Up to the ends of the sequence these are the textbook
    p = bursts / received and r = 1/b; r is 1/b when no lost transmission has a successor. The
    log-likelihood is the same counts times the logs of their probabilities. None with no losses
    or fewer than MIN_FIT_SEGMENTS transmissions. Computed by the compiled core (src/ge.rs).
    """
    return _models(_core.gilbert_elliott(*_column([lost]), fit=False), "gilbert_", "gilbert")[0]


def fit_gilbert_elliott(
    lost: np.ndarray, max_iterations: int = MAX_ITERATIONS, tolerance: float = TOLERANCE
) -> GilbertElliott | None:
    """Fit a two-state Gilbert-Elliott model to one sequence: :func:`fit_gilbert_elliott_all` of one."""
    return fit_gilbert_elliott_all([lost], max_iterations, tolerance)[0]


def fit_gilbert_elliott_all(
    sequences: Sequence[np.ndarray], max_iterations: int = MAX_ITERATIONS, tolerance: float = TOLERANCE
) -> list[GilbertElliott | None]:
    """Fit a two-state Gilbert-Elliott model to each sequence by Baum-Welch (EM), in the compiled core (src/ge.rs).

    A hidden Markov model with two states and Bernoulli (lost or not) emissions, started from the
    simple Gilbert estimate (:func:`gilbert_estimate`) moved START_MARGIN inside the parameter
    space. Each Baum-Welch step runs one scaled forward-backward pass over the runs of equal
    outcomes (a run of k equal outcomes moves the state distribution by the k-th power of one
    matrix, in closed form from its eigenvalues) and re-estimates p, r and the two loss
    probabilities from the expected transition and emission counts. Plain EM crawls when the
    best fit lies near the edge of the parameter space (a good state that almost never loses, the
    common case), so the steps are accelerated by SQUAREM (Varadhan and Roland, Scand. J.
    Statistics 35, 2008), which keeps EM's guarantee that the likelihood never falls. A fit
    stops when a cycle gains less than ``tolerance`` times the log-likelihood (``converged``), or
    after ``max_iterations`` forward-backward passes (1 evaluates the start, 2 takes one plain EM
    step); the result is the best point evaluated. The state that loses more is reported as the
    bad one. None for a sequence with no losses or fewer than MIN_FIT_SEGMENTS transmissions.

    Each sequence is fitted on its own: its fit does not depend on the others in the call, so a
    capture's directions can be fitted one connection at a time as they finish. A pass takes
    time in proportion to the runs of equal outcomes (about twice the bursts), not to the
    transmissions.
    """
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, not {max_iterations}")
    if not sequences:
        return []
    columns = _core.gilbert_elliott(*_column(sequences), fit=True, max_iterations=max_iterations, tolerance=tolerance)
    return _models(columns, "fit_", "baum-welch")


def _column(sequences: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The sequences as one bool column and the offsets where each begins (and, last, ends)."""
    parts = [np.asarray(lost, dtype=bool).reshape(-1) for lost in sequences]
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in parts], out=offsets[1:])
    return (np.concatenate(parts) if parts else np.zeros(0, dtype=bool)), offsets


def _models(columns: dict[str, np.ndarray], prefix: str, method: str) -> list[GilbertElliott | None]:
    """The core's columns (src/py_ge.rs) as one GilbertElliott or None per sequence."""
    rows = zip(*(columns[prefix + name].tolist() for name in ("found", "p", "r", "loss_good", "loss_bad", "log_likelihood", "iterations", "converged")))
    return [GilbertElliott(p, r, good, bad, ll, method, n, ok) if found else None for found, p, r, good, bad, ll, n, ok in rows]


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
