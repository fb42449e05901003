"""Open-loop inference: drive each sender model with a direction's observed events (DOMAIN.md 8).

Each model (:mod:`tcpsack_analyze.models`) sees the observed sends and ACKs in order, as the
data sender saw them, and is asked, for every observed send, whether it would have allowed it
(tcpcsm-style passive inference; Jaiswal et al., "Inferring TCP connection characteristics
through passive measurements"). What it does not allow is a :class:`Violation`, written in
words; the model then *follows* the sender (enters recovery or the RTO state as the sender
evidently did), so that one departure does not cascade into many.

The rules, per observed data send:

* **Every send** but the fast retransmission and a tail loss probe is checked against the window: a send may start while pipe < cwnd (Linux's
  packet rule, at most one segment more lenient than RFC 6675 step (C)), so pipe above cwnd by
  more than one SMSS after it, ``n`` whole segments more, is "sent n segments beyond cwnd" (consecutive sends without an ACK between them make one
  violation, with the largest excess).
* **A retransmission** outside recovery is explained, in this order, by a tail loss probe
  (``tlp``: the highest outstanding segment, no duplicate ACK, 2 SRTT since the last send or the
  RTO due, RFC 8985 section 7.2; exempt from the window check; when the RTO has expired, only if
  it is not also the lowest), by RACK (``rack``: a hole below SACKed data after at least one
  duplicate ACK, however few; the model enters recovery), or by the model's own RTO having
  expired (the model then times out; a 10% slack absorbs RTT-estimate differences); otherwise it is "retransmitted after 1
  dupACK" or "retransmitted 120 ms before the RTO expired" (and, for a repeated RTO whose time
  fits the un-backed-off RTO, "no backoff on the second RTO"). A second retransmission of the
  same segment needs the RTO (or, inside recovery, RACK: ``rack``), unless it is the fast
  retransmission that starts a recovery the model also entered. With ``bookkeeping="ns3"`` the
  head that ns-3 marked lost (:attr:`~tcpsack_analyze.models.base.SenderModel.head_marked_lost`)
  may be resent outside recovery, subject to the window.

Vantage point (DOMAIN.md 1): the models need the times at the sender. Near the sender the
capture's times are used as they are. Near the receiver (or mid-path) every ACK is delayed by
the turnaround between the capture point and the sender, measured on the handshake (else the
smallest ACK -> next send gap), and the events are re-ordered by those times.

Per model, per ACK, a row of (time, cwnd, ssthresh, pipe, flight, state) is kept
(:meth:`ModelRun.frame`); per interval between ACKs, the limiting factor: the receive window
(less than one SMSS of it left), cwnd (less than one SMSS of the model's window left) or the
application (idle or thin). The *naive bound* is the flight size after the sends of each
interval (a lower bound of cwnd while the sender is cwnd-limited); models are ranked by the
share of sends that conform, then by the median gap between their cwnd and that bound.
"""
from __future__ import annotations

import dataclasses
import math
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, overload

import numpy as np

from tcpsack_analyze.events import (
    Ack,
    Dir,
    EventBatch,
    Kind,
    Placement,
    Send,
    StreamFacts,
)
from tcpsack_analyze.models.base import (
    CONGESTION_AVOIDANCE,
    INFINITE,
    LOSS,
    RECOVERY,
    SLOW_START,
    SenderModel,
    SenderOptions,
    State,
    model_class,
)
from tcpsack_analyze.models.rto import NS

if TYPE_CHECKING:  # pandas is imported where a table is built
    import pandas as pd

    from tcpsack_analyze.analysis import Analysis
    from tcpsack_analyze.report.model import ConnectionReport

FIT_THRESHOLD = 0.95  # a model "fits" when at least this share of the sends conform
RTO_SLACK = 0.10  # an observed RTO this much earlier than the model's still counts as its RTO
TLP_FACTOR = 2.0  # RFC 8985 section 7.2: PTO = 2 SRTT
NO_DATA = "no data sent in this direction: no model can run"
LIMITS = ("cwnd", "receive window", "application")
STATES = tuple(s.value for s in State)
_STATE_INDEX = {s: i for i, s in enumerate(State)}

_ORDINAL = {1: "first", 2: "second", 3: "third"}


@dataclass(frozen=True, slots=True)
class Violation:
    """An observed send the model would not have made, in words."""

    model: str
    time_ns: int
    index: int  # record number of the send in the capture
    kind: str  # "window", "early retransmission", "early timeout", "no backoff", "repeat"
    text: str


class Violations(Sequence[Violation]):
    """A model's violations, kept as columns and made :class:`Violation` objects when read.

    A sender no model explains has a violation for most of its sends (a synthetic benchmark
    sender: over a million per model on a million packets); as objects they would outweigh
    everything else inference keeps. A window violation is its time, record number and excess
    (its text is written from the excess); the rarer others keep their kind and text."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._time = array("q")
        self._index = array("q")
        self._excess = array("q")  # segments beyond cwnd of a window violation, 0 for the others
        self._other: dict[int, tuple[str, str]] = {}  # position -> (kind, text) of the others

    def add_window(self, time_ns: int, index: int) -> int:
        """A window violation (its excess set by :meth:`set_excess`); returns its position."""
        self._time.append(time_ns)
        self._index.append(index)
        self._excess.append(0)
        return len(self._time) - 1

    def set_excess(self, position: int, segments: int) -> None:
        self._excess[position] = segments

    def add(self, time_ns: int, index: int, kind: str, text: str) -> None:
        self._other[len(self._time)] = (kind, text)
        self._time.append(time_ns)
        self._index.append(index)
        self._excess.append(0)

    def __len__(self) -> int:
        return len(self._time)

    def _at(self, i: int) -> Violation:
        other = self._other.get(i)
        if other is None:
            n = self._excess[i]
            other = ("window", f"sent {n} segment{'s' if n > 1 else ''} beyond cwnd")
        return Violation(self.model, self._time[i], self._index[i], *other)

    @overload
    def __getitem__(self, i: int) -> Violation: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[Violation, ...]: ...

    def __getitem__(self, i: int | slice) -> Violation | tuple[Violation, ...]:
        if isinstance(i, slice):
            return tuple(self._at(j) for j in range(*i.indices(len(self))))
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("violation index out of range")
        return self._at(i)

    def __iter__(self) -> Iterator[Violation]:
        return (self._at(i) for i in range(len(self)))

    def __repr__(self) -> str:
        return f"Violations({self.model!r}, {len(self)})"


@dataclass(frozen=True)
class ModelRun:
    """One model driven by one direction's events: its verdict and its per-ACK series."""

    model: str
    sends: int  # data sends checked
    nonconforming: int  # sends with a violation
    violations: Violations
    cwnd_error: float | None  # median (cwnd - naive bound) in segments, where bounded
    falling_edges: int  # cwnd falls to one segment (timeouts, Tahoe's fast retransmits)
    timeouts: int
    recoveries: int
    limiting: dict[str, float]  # share of time per limiting factor
    # per-ACK series (cwnd, ssthresh, pipe, flight in octets; ssthresh -1 while infinite)
    time_ns: np.ndarray = field(repr=False)
    index: np.ndarray = field(repr=False)
    cwnd: np.ndarray = field(repr=False)
    ssthresh: np.ndarray = field(repr=False)
    pipe: np.ndarray = field(repr=False)
    flight: np.ndarray = field(repr=False)
    state: np.ndarray = field(repr=False)  # index into STATES

    @property
    def conformance(self) -> float:
        """Share of the sends the model allows (1.0 without sends)."""
        return 1.0 - self.nonconforming / self.sends if self.sends else 1.0

    def state_at(self, t_ns: np.ndarray) -> np.ndarray:
        """Row of the series in force at each time (the last ACK at or before it; -1 before any)."""
        return np.searchsorted(self.time_ns, t_ns, side="right") - 1

    def frame(self, smss: int) -> pd.DataFrame:
        """The series as a pandas DataFrame, one row per ACK, windows in segments too."""
        import pandas as pd

        ss = self.ssthresh.astype(float)
        ss[ss < 0] = np.nan
        frame: pd.DataFrame = pd.DataFrame({
            "model": self.model, "time_ns": self.time_ns, "time_s": self.time_ns / NS, "index": self.index,
            "cwnd": self.cwnd, "ssthresh": ss, "pipe": self.pipe, "flight": self.flight,
            "cwnd_segments": self.cwnd / smss, "ssthresh_segments": ss / smss,
            "state": [STATES[s] for s in self.state.tolist()],
        })
        return frame


@dataclass(frozen=True)
class DirectionInference:
    """The models' verdicts on one direction of one connection."""

    conn: int
    direction: str
    vantage: str
    smss: int
    first_ns: int | None  # time of the direction's first event (times are shown from it)
    ack_shift_ns: int  # delay added to ACK times to get the sender's view (0 near the sender)
    status: str  # "ok", or why no model could run
    runs: tuple[ModelRun, ...]  # ranked, best first
    naive_segments: tuple[float, float, float] | None  # flight-size bound: min, median, max

    @property
    def best(self) -> ModelRun | None:
        """The best-ranked model when it fits (at least FIT_THRESHOLD of sends conform)."""
        if self.runs and self.runs[0].conformance >= FIT_THRESHOLD:
            return self.runs[0]
        return None

    @property
    def confidence(self) -> float:
        """How much better the best fit explains the sends than the runner-up: the share of the
        runner-up's non-conforming sends the best avoids (0 when they tie, 1 when the best has
        none and the runner-up some); 0 without a fit."""
        if self.best is None:
            return 0.0
        if len(self.runs) < 2:
            return self.best.conformance
        a, b = self.runs[0].conformance, self.runs[1].conformance
        return 0.0 if b >= 1.0 else max(0.0, (a - b) / (1.0 - b))

    @property
    def verdict(self) -> str:
        if self.status != "ok":
            return self.status
        if self.best is None:
            return "no loss-based model fits"
        return f"{self.best.model} (confidence {self.confidence:.2f})"


def run_model(
    model: str | type[SenderModel],
    events: EventBatch | Sequence[Send | Ack],
    smss: int,
    options: SenderOptions | None = None,
    *,
    ack_shift_ns: int = 0,
) -> ModelRun:
    """Drive one model with a direction's events (module docstring) and judge every send.

    ``events`` is a batch, or the list :func:`sender_view` makes of one (to share it between
    models); ``ack_shift_ns`` applies to a batch only."""
    cls = model_class(model)
    view = sender_view(events, ack_shift_ns) if isinstance(events, EventBatch) else events
    sends = [e.start for e in view if isinstance(e, Send)]
    m = cls(smss, options, start=min(sends) if sends else 1)
    judge = _Judge(m, cls.name or cls.__name__)
    for ev in view:
        if isinstance(ev, Send):
            judge.send(ev)
        else:
            judge.ack(ev)
    return judge.finish()


def sender_view(events: EventBatch, ack_shift_ns: int = 0) -> list[Send | Ack]:
    """The data sends and the ACKs of a direction as the sender saw them: ACK times delayed by
    ``ack_shift_ns`` and the events re-ordered by time (module docstring); sends that no loss
    rule reads (SYN/FIN without payload, zero-window probes) are left out.

    Built from the batch's columns at once (``tolist``), the same views as
    :meth:`EventBatch.event` makes one by one."""
    keep = events.is_data | events.is_ack
    order = np.nonzero(keep)[0]
    is_ack = events.kind[order] == Kind.ACK
    t = events.time_ns[order] + np.where(is_ack, ack_shift_ns, 0)
    if ack_shift_ns:
        by_time = np.argsort(t, kind="stable")
        order, is_ack, t = order[by_time], is_ack[by_time], t[by_time]
    cols = [c[order].tolist() for c in (events.index, events.start, events.end, events.flags, events.tsval,
                                          events.placement, events.ack, events.sack_row, events.dsack, events.dup,
                                          events.win, events.tsecr)]
    placements = {p.value: p for p in Placement}
    out: list[Send | Ack] = []
    append = out.append
    for i, (acked, time, index, start, end, flags, tsval, placement, ack, sack_row, dsack, dup, win, tsecr) in enumerate(
            zip(is_ack.tolist(), t.tolist(), *cols)):
        if acked:
            sack = tuple(events.blocks(int(order[i]))) if sack_row >= 0 else ()
            append(Ack(time, index, ack, sack, dsack, dup, win, None if tsecr < 0 else tsecr, flags))
        else:
            append(Send(time, index, start, end, flags, None if tsval < 0 else tsval, placements[placement]))
    return out


def infer_direction(
    events: EventBatch,
    smss: int,
    models: Sequence[str | type[SenderModel]],
    options: SenderOptions | None = None,
    *,
    conn: int = 0,
    direction: str = "a2b",
    vantage: str = "near sender",
    turnaround_ns: int | None = None,
) -> DirectionInference:
    """Run every model on one direction and rank them (module docstring)."""
    shift = 0
    if vantage != "near sender":
        shift = turnaround_ns if turnaround_ns is not None else _turnaround_from_events(events)
    first = int(events.time_ns[0]) if len(events) else None
    n_data = int(events.is_data.sum())
    n_acks = int(events.is_ack.sum())
    status = "ok"
    if n_data == 0:
        status = NO_DATA
    elif n_acks == 0:
        status = "no ACKs for this direction's data (one-way capture?): no model can run"
    elif smss <= 0:
        status = "no MSS known: no model can run"
    if status != "ok":
        return DirectionInference(conn, direction, vantage, smss, first, shift, status, (), None)
    view = sender_view(events, shift)
    runs = [run_model(m, view, smss, options) for m in models]
    runs.sort(key=lambda r: (-r.conformance, math.inf if r.cwnd_error is None else abs(r.cwnd_error)))
    naive = runs[0].flight / smss
    stats = (float(naive.min()), float(np.median(naive)), float(naive.max())) if naive.size else None
    return DirectionInference(conn, direction, vantage, smss, first, shift, status, tuple(runs), stats)


def sender_mss(events: EventBatch, mss_option: int | None = None) -> int:
    """SMSS of a direction: the most common payload length of its data sends, at most the MSS
    option (the option minus TCP options such as timestamps is what a sender fills; a larger
    length is TSO at the capture host); 0 without data."""
    data = events.is_data
    if not data.any():
        return 0
    lengths = (events.end - events.start)[data]
    if mss_option:
        lengths = lengths[lengths <= mss_option]
    if not lengths.size:
        return int(mss_option or 0)
    values, counts = np.unique(lengths, return_counts=True)
    return int(values[counts.argmax()])


def _turnaround_from_events(events: EventBatch) -> int:
    """Capture point -> sender -> capture point without a handshake: the smallest gap between an
    ACK that advanced the cumulative ACK and the first send of new data after it."""
    acks = events.is_ack
    sends = events.is_data & (events.placement == Placement.NEW)
    if not acks.any() or not sends.any():
        return 0
    send_t = events.time_ns[sends]
    ack_rows = np.nonzero(acks)[0]
    cum = np.maximum.accumulate(events.ack[ack_rows])
    adv = np.concatenate([[True], cum[1:] > cum[:-1]])
    at = events.time_ns[ack_rows[adv]]
    k = np.searchsorted(send_t, at, side="right")
    ok = k < send_t.size
    gaps = send_t[k[ok]] - at[ok]
    return int(gaps.min()) if gaps.size else 0


class _Judge:
    """Feeds one model, checks each send, keeps the series (module docstring).

    Per event it asks the model for its pipe once (:attr:`SenderModel.pipe` walks the
    scoreboard), keeps the per-ACK rows in one flat ``array`` of int64 and writes a window
    violation's text once, when its run of sends ends."""

    def __init__(self, model: SenderModel, name: str) -> None:
        self.m = model
        self.name = name
        self.sends = 0
        self.nonconforming = 0
        self.violations = Violations(name)
        self.rows = array("q")  # per ACK: time, index, cwnd, ssthresh, pipe, flight, state
        self.edges = 0
        self.burst_excess = 0  # largest excess (segments) in the current run of sends
        self.burst_at = 0  # where its violation is
        self.limit_time = dict.fromkeys(LIMITS, 0)
        self.gaps: list[float] = []
        self.interval_peak = 0  # largest flight after a send since the last ACK
        self.last_ack_ns: int | None = None
        self.pipe = 0  # the model's pipe after the last event (nothing changes it between events)
        self.resent: set[int] = set()  # starts of the retransmissions of octets still outstanding
        self.fast_pending = False  # recovery began: the next retransmission is the fast one

    # ------------------------------------------------------------------ sends

    def send(self, ev: Send) -> None:
        m = self.m
        board = m.board
        self.sends += 1
        exempt = False
        bad: tuple[str, str] | None = None
        if ev.start < board.high_data:
            bad, exempt = self._retransmission(ev)
            exempt = exempt or self.fast_pending
            self.fast_pending = False
        before = m.cwnd
        smss = m.smss
        m.on_send(ev)
        self.pipe = pipe = m.pipe_after_send
        cwnd = m.cwnd
        if cwnd <= smss < before:
            self.edges += 1
        excess = -(-(pipe - cwnd) // smss) - 1  # a send may start below cwnd (one packet)
        if bad is None:
            if excess > 0 and not exempt:
                if self.burst_excess == 0:
                    self.burst_at = self.violations.add_window(ev.time_ns, ev.index)
                if excess > self.burst_excess:
                    self.burst_excess = excess
                self.nonconforming += 1
        else:
            self.violations.add(ev.time_ns, ev.index, *bad)
            self.nonconforming += 1
        flight = board.outstanding
        if flight > self.interval_peak:
            self.interval_peak = flight

    def _end_burst(self) -> None:
        """A run of sends beyond cwnd ended: its violation's excess is the largest in it."""
        if self.burst_excess:
            self.violations.set_excess(self.burst_at, self.burst_excess)
            self.burst_excess = 0

    def _retransmission(self, ev: Send) -> tuple[tuple[str, str] | None, bool]:
        """Whether the model explains a retransmission; makes it follow the sender if not.
        Returns (violation kind and text or None, whether the window check is waived: a tail
        loss probe, or the fast retransmission that starts recovery, RFC 5681 section 3.2 step 2)."""
        m = self.m
        now = ev.time_ns
        deadline = m.rto_deadline_ns
        slack = int(RTO_SLACK * m.timer.current_s() * NS)
        expired = deadline is not None and now >= deadline - slack
        repeat = ev.start in self.resent
        self.resent.add(ev.start)
        if m.state in (RECOVERY, LOSS) and (not repeat or (self.fast_pending and ev.start == m.board.high_ack)):
            return None, False  # in recovery; or the fast retransmission of a head resent before
        if m.head_marked_lost and ev.start == m.board.high_ack and not repeat:
            return None, False  # ns-3 resends a head it marked lost (bookkeeping="ns3"), window permitting
        srtt = m.srtt_s
        pto = (srtt is not None and m.last_send_ns is not None
               and now - m.last_send_ns >= int(TLP_FACTOR * srtt * (1 - RTO_SLACK) * NS))
        probe = m.options.tlp and not repeat and m.dup_acks == 0 and ev.end >= m.board.high_data and (pto or expired)
        if probe and (not expired or ev.start > m.board.high_ack):
            return None, True  # a probe resends the highest segment, an RTO the lowest
        high_sack = m.board.high_sack
        if (m.options.rack and m.uses_sack and not repeat and m.dup_acks > 0 and high_sack is not None
                and ev.start < high_sack):
            m.enter_recovery(now)  # RACK: the reordering window expired (the sender's timing)
            return None, True
        if expired:
            self._timeout(now)
            return None, False
        if repeat:
            if m.state is RECOVERY and m.options.rack:
                return None, False
            ordinal = _ORDINAL.get(m.timer.backoffs + 1, f"{m.timer.backoffs + 1}th")
            unbacked = deadline is not None and m.timer.backoffs and now >= deadline - int(
                (m.timer.current_s() - m.timer.base_s()) * NS) - slack
            text = (f"no backoff on the {ordinal} RTO" if unbacked else
                    f"retransmitted the same segment again {self._early(deadline, now)}")
            self._timeout(now)
            return ("no backoff" if unbacked else "repeat", text), False
        if m.dup_acks > 0:
            text = f"retransmitted after {m.dup_acks} dupACK{'s' if m.dup_acks > 1 else ''}"
            m.enter_recovery(now)
            return ("early retransmission", text), True
        text = f"retransmitted {self._early(deadline, now)}"
        self._timeout(now)
        return ("early timeout", text), False

    @staticmethod
    def _early(deadline: int | None, now: int) -> str:
        if deadline is None:
            return "with nothing outstanding and no dupACK"
        return f"{(deadline - now) / 1e6:.0f} ms before the RTO expired, with no dupACK"

    def _timeout(self, now: int) -> None:
        before = self.m.cwnd
        self.m.on_timeout(now)
        if self.m.cwnd <= self.m.smss < before:
            self.edges += 1

    # ------------------------------------------------------------------ ACKs

    def ack(self, ev: Ack) -> None:
        m = self.m
        now = ev.time_ns
        if self.last_ack_ns is not None:
            self._close_interval(now)
        before, state = m.cwnd, m.state
        m.on_ack(ev)
        cwnd, smss = m.cwnd, m.smss
        if cwnd <= smss < before:
            self.edges += 1
        after = m.state
        if after is RECOVERY and state is not RECOVERY:
            self.fast_pending = True
        if self.burst_excess:
            self._end_burst()
        if len(self.resent) > 64:
            self.resent = {s for s in self.resent if s >= m.board.high_ack}
        self.pipe = pipe = m.pipe
        flight = m.board.outstanding
        ssthresh = m.ssthresh
        self.rows.extend((now, ev.index, cwnd, -1 if ssthresh >= INFINITE else ssthresh, pipe, flight, _STATE_INDEX[after]))
        self.last_ack_ns = now
        self.interval_peak = flight

    def _close_interval(self, now: int) -> None:
        """The interval since the previous ACK ends: its limiting factor and cwnd gap."""
        m = self.m
        board = m.board
        rwnd = m.rwnd
        if rwnd is not None and board.high_ack + rwnd - board.high_data < m.smss:
            limit = "receive window"
        elif m.send_window(self.pipe) < m.smss:
            limit = "cwnd"
        else:
            limit = "application"
        self.limit_time[limit] += now - self.last_ack_ns  # type: ignore[operator]  # the caller checked
        if limit == "cwnd" and (m.state is SLOW_START or m.state is CONGESTION_AVOIDANCE):
            self.gaps.append((m.cwnd - self.interval_peak) / m.smss)

    def finish(self) -> ModelRun:
        m = self.m
        self._end_burst()
        rows = np.frombuffer(self.rows, dtype=np.int64).reshape(-1, 7)
        total = sum(self.limit_time.values())
        limiting = {k: (v / total if total else 0.0) for k, v in self.limit_time.items()}
        return ModelRun(
            self.name, self.sends, self.nonconforming, self.violations,
            float(np.median(self.gaps)) if self.gaps else None, self.edges, m.timeouts, m.recoveries, limiting,
            *(rows[:, c].copy() for c in range(7)),
        )


@dataclass(frozen=True)
class CaptureInference:
    """The models' verdicts on every direction of a capture (:func:`infer_capture`)."""

    path: str
    models: tuple[str, ...]
    directions: tuple[DirectionInference, ...]
    complete: bool  # the whole capture was read (else only a prefix: see ``warnings``)
    warnings: tuple[str, ...]

    def cwnd_df(self) -> pd.DataFrame:
        """One row per ACK per model per direction: cwnd, ssthresh, pipe, flight, state."""
        import pandas as pd

        frames = []
        for d in self.directions:
            for r in d.runs:
                f = r.frame(d.smss)
                f.insert(0, "direction", d.direction)
                f.insert(0, "conn", d.conn)
                frames.append(f)
        out: pd.DataFrame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        return out

    def violations_df(self) -> pd.DataFrame:
        """One row per violation: connection, direction, model, time, record number, kind, text."""
        import pandas as pd

        rows = [{"conn": d.conn, "direction": d.direction, **dataclasses.asdict(v), "time_s": v.time_ns / NS}
                for d in self.directions for r in d.runs for v in r.violations]
        out: pd.DataFrame = pd.DataFrame(rows, columns=["conn", "direction", "model", "time_ns", "index", "kind", "text", "time_s"])
        return out


def streams_of(path: str, conns: set[int], bpf: str | None) -> tuple[dict[tuple[int, str], EventBatch], dict[int, tuple[StreamFacts, StreamFacts]]]:
    """Both directions' events of every connection in ``conns`` and their stream facts, in one
    read of the capture (:func:`~tcpsack_analyze.analysis.stream_events`: the flow stage only)."""
    from tcpsack_analyze.analysis import stream_events

    parts: dict[tuple[int, str], list[EventBatch]] = {}
    facts: dict[int, tuple[StreamFacts, StreamFacts]] = {}
    for cid, pair in stream_events(path, bpf, facts=facts):
        if cid in conns:
            for d in Dir:
                parts.setdefault((cid, d.label), []).append(pair[d])
    return {key: EventBatch.concat(batches) for key, batches in parts.items()}, facts


Streams = dict[tuple[int, str], EventBatch]
Facts = dict[int, tuple[StreamFacts, StreamFacts]]


def selected(path: str, conn: Sequence[int] | None, bpf: str | None) -> tuple[Analysis, list[ConnectionReport], Streams, Facts]:
    """A capture's analysis, its connections (those in ``conn``, all by default) and their
    events and stream facts: what every per-direction model command starts from (``infer``,
    ``replay``)."""
    from tcpsack_analyze.analysis import analyze

    analysis = analyze(path, bpf)
    conns = [c for c in analysis.report.connections if conn is None or c.id in conn]
    streams, facts = streams_of(path, {c.id for c in conns}, bpf)
    return analysis, conns, streams, facts


def infer_capture(
    path: str,
    models: Sequence[str | type[SenderModel]] | None = None,
    options: SenderOptions | None = None,
    *,
    conn: Sequence[int] | None = None,
    filter: str | None = None,
) -> CaptureInference:
    """Run the sender models on every direction (of the connections ``conn``) of a capture.

    ``models`` are names or :class:`~tcpsack_analyze.models.base.SenderModel` subclasses (all
    registered models by default); ``options`` default to :meth:`SenderOptions.linux`. Raises
    :class:`~tcpsack_analyze.errors.CaptureError` when nothing could be read.
    """
    from tcpsack_analyze.models.base import MODELS

    chosen = list(models) if models else sorted(MODELS)
    opts = options or SenderOptions.linux()
    analysis, conns, streams, facts = selected(path, conn, filter)
    report = analysis.report
    out = []
    for c in conns:
        turnaround = {d.label: facts[c.id][d].turnaround_ns for d in Dir} if c.id in facts else {"a2b": None, "b2a": None}
        for d in (c.a2b, c.b2a):
            if d.data_packets == 0:
                out.append(DirectionInference(c.id, d.name, d.vantage, 0, None, 0, NO_DATA, (), None))
                continue
            ev = streams.pop((c.id, d.name))  # let each direction's events go once inferred
            out.append(infer_direction(ev, sender_mss(ev, d.mss), chosen, opts, conn=c.id, direction=d.name,
                                       vantage=d.vantage, turnaround_ns=turnaround[d.name]))
    names = tuple(model_class(m).name or model_class(m).__name__ for m in chosen)
    return CaptureInference(path, names, tuple(out), report.capture.complete, tuple(report.capture.warnings))


__all__ = [
    "FIT_THRESHOLD", "CaptureInference", "DirectionInference", "ModelRun", "Violation", "Violations",
    "infer_capture", "infer_direction", "run_model", "selected", "sender_mss", "sender_view", "streams_of",
]
