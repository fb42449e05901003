"""Inferred cwnd and state against the kernel's truth of a lab run (``truth.json``).

The kernel's ``tcp:tcp_probe`` rows (:mod:`tcpsack_analyze.truth`) give cwnd and ssthresh in
segments at each ACK, *before* the ACK is processed, and ``tcp:tcp_cong_state_set`` the
congestion state. The sender-side capture sees each ACK a few microseconds before the
tracepoint, so the model's value to compare with a probe row is the one in force before the
last captured ACK at or before the row's time.

Figures (DOMAIN.md section 10, issue 14): the share of ACKs outside recovery (kernel state
Open, Disorder or CWR) where the inferred cwnd is within one segment of the kernel's, and within
10% of it; the same for the naive bound (the flight size); and the share of ACKs whose inferred
state matches the kernel's (Open, Disorder, CWR = slow start or congestion avoidance; Recovery;
Loss = the RTO state).

The state compared is, like cwnd, the one in force *before* the ACK: the last change strictly
before the probe's time. A change at the probe's own instant is that ACK's doing: ns-3 stamps
the probe and the state change its processing makes with the same simulated time (the kernel's
tracepoints are nanoseconds apart, so its figures do not depend on this), and taking it as
the state before would judge the ACK that ends recovery as Open (with ns-3's deflated cwnd
beside the model's inflated one) and the ACK that starts it as Recovery.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcpsack_analyze.models.base import State
from tcpsack_analyze.models.infer import STATES, ModelRun
from tcpsack_analyze.truth import Truth

_KERNEL_STATE = {
    "Open": (State.SLOW_START, State.CONGESTION_AVOIDANCE),
    "Disorder": (State.SLOW_START, State.CONGESTION_AVOIDANCE),
    "CWR": (State.SLOW_START, State.CONGESTION_AVOIDANCE),
    "Recovery": (State.RECOVERY,),
    "Loss": (State.LOSS,),
}


@dataclass(frozen=True)
class TruthComparison:
    """How one model's inferred series compares with the kernel's on one flow."""

    model: str
    acks: int  # probe rows compared
    acks_open: int  # of which outside recovery (Open, Disorder, CWR)
    within_one: float  # share of acks_open with |inferred - kernel cwnd| <= 1 segment
    within_10pct: float  # share of acks_open with |inferred - kernel| <= 10% of the kernel's
    naive_within_one: float  # the same for the flight size
    naive_within_10pct: float
    state_match: float  # share of all compared ACKs whose state matches


def compare(run: ModelRun, truth: Truth, flow: int, smss: int) -> TruthComparison:
    """Compare ``run`` (a model driven by the flow's sender-side events) with the truth."""
    probes = truth.probes_frame()
    p = probes[probes.flow == flow]
    t_ns = (p.t.to_numpy() * 1e9).astype(np.int64)
    row = run.state_at(t_ns) - 1  # before the captured ACK that the probe is about
    ok = row >= 0
    row = row[ok]
    kernel = p.cwnd.to_numpy()[ok].astype(float)
    changes = sorted((c.t, c.state) for c in truth.ca_states if c.flow == flow)
    change_t = np.array([c[0] for c in changes])
    k = np.searchsorted(change_t, p.t.to_numpy()[ok], side="left") - 1  # strictly before: see above
    kstate = np.array(["Open" if i < 0 else changes[i][1] for i in k.tolist()], dtype=object)
    open_ = np.isin(kstate, ("Open", "Disorder", "CWR"))
    inferred = run.cwnd[row] / smss
    naive = run.flight[row] / smss

    def share(x: np.ndarray) -> float:
        return float(x[open_].mean()) if open_.any() else float("nan")

    mstate = [State(STATES[s]) for s in run.state[row].tolist()]
    match = np.array([m in _KERNEL_STATE.get(s, ()) for m, s in zip(mstate, kstate)])
    return TruthComparison(
        run.model, int(ok.sum()), int(open_.sum()),
        share(np.abs(inferred - kernel) <= 1), share(np.abs(inferred - kernel) <= 0.1 * kernel),
        share(np.abs(naive - kernel) <= 1), share(np.abs(naive - kernel) <= 0.1 * kernel),
        float(match.mean()) if match.size else float("nan"),
    )


__all__ = ["TruthComparison", "compare"]
