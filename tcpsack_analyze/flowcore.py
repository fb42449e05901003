"""The flow table, the flow stage, the RTT sampler and the loss tracker, run by the compiled
core (``src/flow/``, ``src/rtt_sampler.rs``, ``src/loss/``; docs/core.md phases 2-5), and their
columns made into Python objects.

:class:`CoreFlows` feeds the capture's :class:`~tcpsack_analyze.reader.PacketBatch` chunks to
``_core.FlowPipeline`` (one call a chunk, nothing per packet). For each chunk it gives the
connections the chunk touched (:class:`Touched`: per direction its
:class:`~tcpsack_analyze.events.EventBatch`, :class:`~tcpsack_analyze.events.StreamFacts` and
the chunk's data/ACK RTT samples, for callers that read events: ``events_of``, plots, models)
and the connections finished
after it (the flow table's connection-finished event; at the end of the capture every one still
live) as their :class:`~tcpsack_analyze.results.ConnectionResult`: identity, handshake, state,
per-direction :class:`~tcpsack_analyze.results.DirectionCounts`,
:class:`~tcpsack_analyze.rtt.RttResult` and :class:`~tcpsack_analyze.loss.tracker.LossResult`
(its records stamped with the connection's id).
The rules themselves are stated where they live: the flow table in ``src/flow/table.rs``, the
flow stage in ``src/flow/stage.rs`` (docs/architecture.md).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcpsack_analyze import _core
from tcpsack_analyze.events import EventBatch, StreamFacts
from tcpsack_analyze.loss import tracker
from tcpsack_analyze.reader import PacketBatch, ReadStatus, read_capture
from tcpsack_analyze.results import ConnectionResult, DirectionCounts
from tcpsack_analyze.rtt import RttResult, _bag

DEFAULT_REUSE_SILENCE_S = 60.0
DEFAULT_CLOSE_DELAY_S = 5.0  # after a FIN each way
DEFAULT_ABORT_DELAY_S = 240.0  # after a RST, or an attempt never answered: 2 MSL (RFC 9293 section 3.4.2)

FINISHED_GROUP = 256  # finished connections made into Python objects at a time
_EVENT_COLUMNS = ("kind", "time_ns", "index", "flags", "start", "end", "placement", "tsval", "ack", "win", "tsecr", "nsack", "dup", "dsack", "sack_row")
_NONE = _core.COUNT_NONE
_BOOLS = ("sack_permitted", "ts_option", "syn_seen")
_OPTIONAL = ("window_min", "wscale", "mss", "first_ns", "last_ns", "snd_una")


@dataclass(frozen=True, slots=True)
class Touched:
    """One connection a chunk touched: what the stages behind the event boundary read."""

    id: int
    now: int  # time of its last packet in the chunk
    events: tuple[EventBatch, EventBatch]
    facts: tuple[StreamFacts, StreamFacts]
    rtt: tuple[tuple[np.ndarray, np.ndarray] | None, tuple[np.ndarray, np.ndarray] | None]  # (ACK times, samples)


@dataclass(frozen=True, slots=True)
class Chunk:
    """What one chunk of the capture gave (``batch`` None at the end of the capture)."""

    batch: PacketBatch | None
    touched: Iterator[Touched]  # made one at a time from the core's columns, so that each can go once used
    finished: Iterator[ConnectionResult]  # made a group at a time; what is not taken before the next chunk is dropped
    row_conn: np.ndarray  # connection id of each packet of the batch
    row_dir: np.ndarray  # and its direction (events.Dir value)


class CoreFlows:
    """A capture read through the core's flow table, flow stage, RTT sampler and loss tracker
    (module doc). ``stages=False``: the flow stage alone (events; no RTT samples, no loss
    records). ``events=False``: no connection's events cross (a report needs none: the stages
    that read them run in the core)."""

    def __init__(self, path: str, status: ReadStatus, bpf: str | None, chunk_bytes: int, reuse_silence_s: float = DEFAULT_REUSE_SILENCE_S,
                 delays_s: tuple[float, float] = (DEFAULT_CLOSE_DELAY_S, DEFAULT_ABORT_DELAY_S), *, stages: bool = True,
                 events: bool = True) -> None:
        self.path, self.status, self.bpf, self.chunk_bytes = path, status, bpf, chunk_bytes
        self.core = _core.FlowPipeline(reuse_silence_s, delays_s[0], delays_s[1], stages)
        self.core.set_loss(tracker.THIN_PACKETS, tracker.HORIZON)  # HORIZON: tests shorten it
        if not events:
            self.core.set_events_for([])
        self.tcp_packets = 0

    def chunks(self) -> Iterator[Chunk]:
        """Each chunk once the core has run it; at the end one without a batch, with every
        connection still live finished."""
        clock = self.status.clock
        for batch in read_capture(self.path, self.status, self.bpf, self.chunk_bytes):
            self.tcp_packets += len(batch)
            out = self.core.feed(batch, clock.marks())
            yield Chunk(batch, touched(out.pop("touched")), self._finished(), out["row_conn"], out["row_dir"])
            del batch, out  # see read_capture: freed before the next chunk is decoded
            self.core.discard_finished()
        empty = np.empty(0, np.int64)
        self.core.finish()
        yield Chunk(None, iter(()), self._finished(), empty, empty)

    def _finished(self) -> Iterator[ConnectionResult]:
        """The finished connections the core holds, taken a group at a time."""
        while True:
            cols = self.core.take_finished(FINISHED_GROUP)
            if not len(cols["id"]):
                return
            yield from finished(cols)


def _opt(v: int) -> int | None:
    return None if v == _NONE else v


def touched(cols: dict[str, Any]) -> Iterator[Touched]:
    """The touched connections of a chunk from the core's columns, one at a time."""
    ev_off, sack_off, rtt_off = cols["ev_off"].tolist(), cols["sack_off"].tolist(), cols["rtt_off"].tolist()
    mss, anchor = cols["mss"].tolist(), cols["seq_anchor"].tolist()
    turn, rturn = cols["turnaround_ns"].tolist(), cols["receiver_turnaround_ns"].tolist()
    event_cols = {c: cols[c] for c in _EVENT_COLUMNS}
    sack, at, sample = cols["sack"], cols["rtt_at"], cols["rtt_sample"]
    for t, (cid, now) in enumerate(zip(cols["conn"].tolist(), cols["now"].tolist())):
        evs = []
        rtts: list[tuple[np.ndarray, np.ndarray] | None] = []
        for d in (0, 1):
            k = 2 * t + d
            lo, hi = ev_off[k], ev_off[k + 1]
            evs.append(EventBatch(**{c: v[lo:hi] for c, v in event_cols.items()}, sack=sack[sack_off[k] : sack_off[k + 1]]))
            r0, r1 = rtt_off[k], rtt_off[k + 1]
            rtts.append((at[r0:r1], sample[r0:r1]) if r1 > r0 else None)
        facts = tuple(StreamFacts(mss[t][d], anchor[t][d], _opt(turn[t][d]), _opt(rturn[t][d])) for d in (0, 1))
        yield Touched(cid, now, (evs[0], evs[1]), (facts[0], facts[1]), (rtts[0], rtts[1]))


def _count_plan() -> list[tuple[int, int]]:
    """For each field of DirectionCounts, in order: (position in the core's row, conversion:
    0 as is, 1 None for the core's NONE, 2 bool, 3 the window mean from its sum and count)."""
    at = {name: i for i, name in enumerate(_core.COUNT_FIELDS)}
    plan = []
    for f in dataclasses.fields(DirectionCounts):
        if f.name == "window_mean":
            plan.append((at["window_sum"], 3))
        else:
            plan.append((at[f.name], 1 if f.name in _OPTIONAL else 2 if f.name in _BOOLS else 0))
    return plan


_PLAN = _count_plan()
_WINDOW_COUNT = _core.COUNT_FIELDS.index("window_count")


def _counts(counts: np.ndarray) -> list[DirectionCounts]:
    """Every direction's counters from the core's rows (``COUNT_FIELDS``; rows of a group of
    connections, two each), converted a field at a time over the whole group (one call per
    field, not per direction: a capture of many short connections has two directions per ten
    packets)."""
    rows = counts.reshape(-1, len(_core.COUNT_FIELDS))
    windows = rows[:, _WINDOW_COUNT].tolist()
    fields: list[list[Any]] = []
    for i, how in _PLAN:
        col = rows[:, i]
        if how == 1:
            fields.append([None if v == _NONE else v for v in col.tolist()])
        elif how == 2:
            fields.append(col.astype(bool).tolist())
        elif how == 3:  # as tcptrace: the mean of the windows advertised (window_stats)
            fields.append([v / n if n else None for v, n in zip(col.tolist(), windows)])
        else:
            fields.append(col.tolist())
    return list(map(DirectionCounts, *fields))


def finished(cols: dict[str, Any]) -> list[ConnectionResult]:
    """The finished connections of a chunk from the core's columns (taken only when the stages
    ran: a flow stage run alone, for events, drops them); their loss records are stamped with
    their connection's id."""
    counts = _counts(cols["counts"])
    off, rtt = cols["rtt_off"].tolist(), cols["rtt"]
    a_addr, b_addr = cols["a_addr"], cols["b_addr"]
    ints = {c: cols[c].tolist() for c in ("id", "epoch", "a_port", "b_port", "ipver", "packets", "vlan_tagged", "backwards_timestamps",
                                          "syn_ns", "synack_ns", "hs_ack_ns", "window_scale_in_use")}
    out = []
    loss = cols["loss"]
    for i, state in enumerate(cols["state"]):
        if loss[i] is None:
            raise RuntimeError("a connection's result needs the stages behind the flow stage (CoreFlows(stages=True))")
        bags = [_bag(rtt[off[4 * i + j] : off[4 * i + j + 1]]) for j in range(4)]
        wsiu = ints["window_scale_in_use"][i]
        conn = ints["id"][i]
        results = (tracker.result_of("a2b", loss[i][0], conn), tracker.result_of("b2a", loss[i][1], conn))
        out.append(ConnectionResult(
            id=conn, epoch=ints["epoch"][i], a_addr=a_addr[i].tobytes(), a_port=ints["a_port"][i], b_addr=b_addr[i].tobytes(),
            b_port=ints["b_port"][i], ipver=ints["ipver"][i], state=state, packets=ints["packets"][i], vlan_tagged=ints["vlan_tagged"][i],
            backwards_timestamps=ints["backwards_timestamps"][i], syn_ns=_opt(ints["syn_ns"][i]), synack_ns=_opt(ints["synack_ns"][i]),
            hs_ack_ns=_opt(ints["hs_ack_ns"][i]), window_scale_in_use=None if wsiu < 0 else bool(wsiu),
            counts=(counts[2 * i], counts[2 * i + 1]), rtt=(RttResult(bags[0], bags[1]), RttResult(bags[2], bags[3])), loss=results,
        ))
    return out


__all__ = ["Chunk", "CoreFlows", "Touched"]
