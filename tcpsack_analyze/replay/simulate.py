"""A small deterministic discrete-event simulator: one sender model over one path.

The path (:class:`Path`) is a dumbbell reduced to one flow: data crosses the loss process (which
transmissions die, :mod:`~tcpsack_analyze.replay.loss`), then a drop-tail bottleneck of
``rate_Bps`` with room for ``queue`` packets (no rate: no bottleneck, no queue), then half the
base RTT of propagation; ACKs come back over the other half, never lost or queued. The receiver
SACKs and delays ACKs as :mod:`~tcpsack_analyze.replay.receiver` says; the sender is a reference
model driven as :mod:`~tcpsack_analyze.replay.sender` says.

Events are kept in a heap ordered by time, then by the order they were scheduled, and the loss
model is seeded, so a run is the same for the same inputs and seed. The run returns the
sender's view (its sends and the ACKs as they reached it: an
:class:`~tcpsack_analyze.events.EventBatch`, as the flow stage makes of a sender-side capture),
so the same loss tracker that reads a capture measures the run (:mod:`.outcome`).

Left out, on purpose: other flows (cross traffic), ACK loss and ACK compression, reordering, a
receive window that changes (it is fixed), header overhead on the link (payload octets only),
the handshake and FIN, and the hosts' processing time.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from itertools import count

import numpy as np

from tcpsack_analyze.acks import duplicate_ack
from tcpsack_analyze.events import ACK, Ack, EventBatch, Send
from tcpsack_analyze.lab.lossmodels import LossModel
from tcpsack_analyze.replay.loss import segment_dropper
from tcpsack_analyze.replay.receiver import AckOut, Receiver
from tcpsack_analyze.replay.sender import Sender

NS = 1_000_000_000


@dataclass(frozen=True)
class Path:
    """A replay's path: base RTT, bottleneck rate (payload octets/s) and queue (None: none), and
    the receiver (SACK, delayed ACKs and their timer, the fixed receive window it advertises)."""

    rtt_ns: int
    rate_Bps: float | None = None
    queue: int | None = None  # packets the bottleneck holds besides the one being sent
    sack: bool = True
    delayed_acks: bool = True
    delack_ns: int = 40_000_000  # Linux's minimum delayed-ACK timeout (RFC 1122: at most 500 ms)
    window: int = 1 << 30  # the receive window the receiver advertises, octets

    def __post_init__(self) -> None:
        if self.rtt_ns <= 0:
            raise ValueError(f"the base RTT must be positive, not {self.rtt_ns} ns")
        if self.rate_Bps is not None and self.rate_Bps <= 0:
            raise ValueError(f"the bottleneck rate must be positive, not {self.rate_Bps}")


@dataclass(frozen=True)
class Trace:
    """What happened in one run: the sender's view (its sends, the ACKs it received), which
    transmissions were dropped and why (per send in order: None, "loss" or "queue"), the model's
    cwnd and ssthresh (octets) and state after each ACK, when the last octet was acknowledged
    (None: not within the time limit), the model's RTO expiries and recoveries, and its entries
    into the loss state (an RTO, or Tahoe's fast retransmit: the cwnd falling edges)."""

    events: EventBatch
    drops: tuple[str | None, ...]
    ack_times_ns: np.ndarray
    cwnd: np.ndarray
    ssthresh: np.ndarray
    states: tuple[str, ...]
    finished_ns: int | None
    timeouts: int
    recoveries: int
    loss_entries: int


_ARRIVE, _ACK, _DELACK, _RTO, _APP = range(5)


def run(sender: Sender, path: Path, loss: LossModel, *, limit_s: float = 3600.0) -> Trace:
    """Run ``sender`` over ``path`` from time 0 until its data is acknowledged or ``limit_s`` of
    simulated time have passed. ``loss`` is a fresh seeded loss model (one decision per data
    transmission, in send order; the observed losses decide by octets, :mod:`.loss`)."""
    one_way = path.rtt_ns // 2
    receiver = Receiver(sender.start, sack=path.sack, delayed=path.delayed_acks, delack_ns=path.delack_ns,
                        end=sender.start + sender.app.total)
    heap: list[tuple[int, int, int, object]] = []
    order = count()
    queued: list[int] = []  # departure times of the packets at the bottleneck (a heap)
    link_free = 0
    drops: list[str | None] = []
    log: list[Send | Ack] = []
    limit = int(limit_s * NS)
    rto_at: int | None = None
    app_at: int | None = None
    last_ack = sender.start  # the handshake acknowledged the SYN: the first ACK of data 1 is a duplicate
    drop = segment_dropper(loss)
    series: list[tuple[int, int, int]] = []
    states: list[str] = []

    def push(t: int, kind: int, data: object = None) -> None:
        heapq.heappush(heap, (t, next(order), kind, data))

    def put_on_path(tx: Send) -> None:
        nonlocal link_free
        log.append(tx)
        if drop(tx.start, tx.end):
            drops.append("loss")
            return
        t = tx.time_ns
        if path.rate_Bps:
            while queued and queued[0] <= t:
                heapq.heappop(queued)
            if path.queue is not None and len(queued) > path.queue:
                drops.append("queue")
                return
            link_free = max(t, link_free) + round((tx.end - tx.start) / path.rate_Bps * NS)
            heapq.heappush(queued, link_free)
            t = link_free
        drops.append(None)
        push(t + one_way, _ARRIVE, tx)

    def act(now: int) -> None:
        """The sender sends what it may; its timer and the application's next write are
        scheduled."""
        nonlocal rto_at, app_at
        for tx in sender.transmit(now):
            put_on_path(tx)
        deadline = sender.model.rto_deadline_ns
        if deadline != rto_at:
            rto_at = deadline
            if deadline is not None:
                push(deadline, _RTO, deadline)
        nxt = sender.app.next_write_ns(now)
        if nxt is not None and nxt != app_at:
            app_at = nxt
            push(nxt, _APP)

    act(0)
    finished: int | None = None
    while heap:
        now, _, kind, data = heapq.heappop(heap)
        if now > limit:
            break
        if kind == _ARRIVE:
            assert isinstance(data, Send)
            out = receiver.on_segment(data.start, data.end, data.tsval, now)
            if out is not None:
                push(now + one_way, _ACK, out)
            elif receiver.timer_ns is not None:
                push(receiver.timer_ns, _DELACK)
        elif kind == _DELACK:
            out = receiver.on_timer(now)
            if out is not None:
                push(now + one_way, _ACK, out)
        elif kind == _ACK:
            assert isinstance(data, AckOut)
            dup = bool(duplicate_ack(True, data.ack == last_ack, sender.model.board.high_data > data.ack, True, bool(data.sack)))
            last_ack = data.ack
            ack = Ack(now, sender.record, data.ack, data.sack, False, dup, path.window, data.tsecr, ACK)
            sender.record += 1
            log.append(ack)
            sender.on_ack(ack)
            series.append((now, sender.model.cwnd, sender.model.ssthresh))
            states.append(sender.model.state.value)
            if sender.done:
                finished = now
                break
            act(now)
        elif kind == _RTO:
            if data == sender.model.rto_deadline_ns and data == rto_at:
                rto_at = None
                sender.on_timeout(now)
                act(now)
        else:  # _APP
            act(now)
    m = sender.model
    cols = np.asarray(series, np.int64).reshape(-1, 3)
    return Trace(EventBatch.of(log), tuple(drops), cols[:, 0].copy(), cols[:, 1].copy(), cols[:, 2].copy(), tuple(states),
                 finished, m.timeouts, m.recoveries, sender.loss_entries)


__all__ = ["NS", "Path", "Trace", "run"]
