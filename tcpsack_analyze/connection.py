"""Per-connection state reconstruction, consumed batch by batch (DOMAIN.md sections 1-3).

A :class:`Connection` receives its packets in file order, a batch at a time, and keeps for each
direction what a tcptrace-like report needs: handshake options, unwrapped sequence state
(snd_una, snd_max), unique and retransmitted bytes, SACK and D-SACK counts, duplicate ACKs,
windows and RTT samples. The common packets (new in-order data and ordinary ACKs) are handled
with numpy over the whole batch; only packets that need it (retransmissions, data past a gap,
SACK bookkeeping) go through Python, so the cost follows the loss episodes, not the packet count.

Definitions follow tcptrace where the report compares with it (the retransmission test is "any
overlap with bytes already sent", counted on payload bytes), and DOMAIN.md elsewhere. Where they
differ from tcptrace it is said in ``docs/report.md``.
"""
from __future__ import annotations

import numpy as np

from tcpsack_analyze.acks import dsack_first_block, duplicate_ack
from tcpsack_analyze.events import EventBatch, Kind, Placement, StreamFacts, events_from_rows
from tcpsack_analyze.flows import ATTEMPT, CLOSED, RESET
from tcpsack_analyze.loss.tracker import LossTracker
from tcpsack_analyze.rangeset import RangeSet
from tcpsack_analyze.reader.decode import ACK, FIN, PSH, RST, SYN, PacketBatch
from tcpsack_analyze.results import ConnectionResult, DirectionCounts
from tcpsack_analyze.rtt import RttSampler
from tcpsack_analyze.seqspace import SeqSpace, wire_add

NOT_SENT = -2  # placement of a row that is not a send of its direction

NS = 1_000_000_000


class Direction:
    """Accumulated state and counters of one direction of a connection (slotted: a capture of
    many short connections holds thousands of them at once)."""

    __slots__ = (
        "space", "syn_seen", "isn", "syn_count", "fin_count", "rst_count", "syn_rexmit", "fin_rexmit", "mss", "wscale", "sack_permitted", "ts_option",
        "packets", "ack_packets", "pure_acks", "data_packets", "data_bytes", "pushed", "unique_bytes", "rexmit_packets", "rexmit_bytes",
        "out_of_order", "zwnd_probes", "zwnd_probe_bytes", "oversize_segments", "max_seg", "min_seg", "sack_packets", "dsack_packets",
        "max_sack_blocks", "empty_sack_options", "dupacks", "triple_dupacks", "_dup_run", "_last_ack", "_last_win", "snd_una", "snd_max",
        "snd_max_before", "_data_max", "_data_min", "_holes", "win_min", "win_max", "win_sum", "win_count", "syn_windows", "zero_windows", "last_win",
        "first_ns", "last_ns", "idle_max_ns", "rtt", "_fin_at"
    )

    def __init__(self) -> None:
        self.space = SeqSpace()
        # handshake
        self.syn_seen = False
        self.isn: int | None = None
        self.syn_count = 0
        self.fin_count = 0
        self.rst_count = 0
        self.syn_rexmit = 0
        self.fin_rexmit = 0
        self.mss: int | None = None
        self.wscale: int | None = None
        self.sack_permitted = False
        self.ts_option = False
        # packet counters
        self.packets = 0
        self.ack_packets = 0
        self.pure_acks = 0
        self.data_packets = 0
        self.data_bytes = 0
        self.pushed = 0
        self.unique_bytes = 0
        self.rexmit_packets = 0
        self.rexmit_bytes = 0
        self.out_of_order = 0
        self.zwnd_probes = 0
        self.zwnd_probe_bytes = 0
        self.oversize_segments = 0  # larger than the MSS (TSO/GRO, BIG TCP)
        self.max_seg = 0
        self.min_seg = 0
        # SACK
        self.sack_packets = 0  # ACKs with at least one SACK block (tcptrace "sack pkts sent")
        self.dsack_packets = 0
        self.max_sack_blocks = 0
        self.empty_sack_options = 0
        # ACKs
        self.dupacks = 0
        self.triple_dupacks = 0
        self._dup_run = 0
        self._last_ack: int | None = None
        self._last_win: int | None = None
        self.snd_una: int | None = None  # highest cumulative ACK for this direction's data
        self.snd_max = 0  # highest seq + len sent (incl. SYN/FIN)
        self.snd_max_before = 0  # snd_max at the start of the current batch
        self._data_max: int | None = None  # highest payload byte + 1 seen
        self._data_min: int | None = None  # lowest payload byte seen
        self._holes = RangeSet()  # payload ranges below _data_max never seen
        # windows (advertised by this side)
        self.win_min: int | None = None
        self.win_max = 0
        self.win_sum = 0
        self.win_count = 0
        self.syn_windows: list[int] = []
        self.zero_windows = 0
        self.last_win: int | None = None
        # time
        self.first_ns: int | None = None
        self.last_ns: int | None = None
        self.idle_max_ns = 0
        self.rtt = RttSampler()  # RTT samples of this direction's data
        self._fin_at: int | None = None


class Connection:
    """One TCP connection (a flow epoch) and its two directions."""

    def __init__(self, conn_id: int, batch: PacketBatch, row: int, epoch: int, *, stages: bool = True) -> None:
        self.id = conn_id
        self.epoch = epoch
        flags = int(batch.flags[row])
        # the opener: SYN sender, SYN-ACK receiver, else the first packet's sender
        opener_is_src = not (flags & SYN and flags & ACK)
        a_addr, a_port = (batch.src[row], batch.sport[row]) if opener_is_src else (batch.dst[row], batch.dport[row])
        b_addr, b_port = (batch.dst[row], batch.dport[row]) if opener_is_src else (batch.src[row], batch.sport[row])
        self.a_addr = bytes(a_addr)
        self.b_addr = bytes(b_addr)
        self.a_port = int(a_port)
        self.b_port = int(b_port)
        self.ipver = int(batch.ipver[row])
        self.dirs = (Direction(), Direction())
        self.packets = 0
        self.first_ns: int | None = None
        self.last_ts_ns: int | None = None
        self.closed = False  # a FIN or RST was seen
        self.backwards_timestamps = 0  # its packets timestamped before a record captured ahead of them (reader/clock.py)
        self.vlan_tagged = 0
        self.syn_ts: int | None = None
        self.synack_ts: int | None = None
        self.hs_ack_ts: int | None = None
        self.syn_isn: int | None = None  # sequence number of the opening SYN (set by the flow table)
        self.first_index = int(batch.index[row])  # record number of the first packet
        self.loss = (LossTracker(0), LossTracker(1))  # loss forensics of each direction's data
        self.stages = stages  # False: the flow stage only (events), no RTT or loss stage

    # ----------------------------------------------------------------- epochs
    @property
    def answered(self) -> bool:
        """A SYN-ACK was seen (the handshake got past its first step)."""
        return self.synack_ts is not None or (self.dirs[0].syn_seen and self.dirs[1].syn_seen)

    def ended(self, batch: PacketBatch | None = None, rows: np.ndarray | None = None) -> str | None:
        """How it ended, for the flow table's connection-finished rule (flows.py): RESET (a RST
        seen), CLOSED (a FIN seen in both directions) or ATTEMPT (a side sent SYNs and nothing
        else, the other side nothing); None while it goes on. With ``rows`` of ``batch`` (its
        packets, not yet consumed): as it would be after them, without consuming them (the flow
        table decides before it hands them over)."""
        rst = self.dirs[0].rst_count + self.dirs[1].rst_count
        fins = [st.fin_count for st in self.dirs]
        syns = [st.syn_count for st in self.dirs]
        sent = [st.packets for st in self.dirs]
        if batch is not None and rows is not None and rows.size:
            flags = batch.flags[rows]
            d_of = self.direction_of(batch, rows)
            rst += int(np.count_nonzero(flags & RST))
            for d in (0, 1):
                mine = flags[d_of == d]
                fins[d] += int(np.count_nonzero(mine & FIN))
                syns[d] += int(np.count_nonzero(mine & SYN))
                sent[d] += int(mine.size)
        if rst:
            return RESET
        if fins[0] and fins[1]:
            return CLOSED
        if any(syns[d] and sent[d] == syns[d] and not sent[1 - d] for d in (0, 1)):
            return ATTEMPT
        return None

    def direction_of(self, batch: PacketBatch, rows: np.ndarray) -> np.ndarray:
        """The direction (:class:`~tcpsack_analyze.events.Dir` value) of each of ``rows``."""
        if self.a_addr == self.b_addr and self.a_port == self.b_port:
            return np.zeros(rows.shape[0], dtype=np.int64)
        src = batch.src[rows].view(np.uint64)  # the 16 address bytes as two words
        hi, lo = np.frombuffer(self.a_addr, np.uint64)
        is_a = (batch.sport[rows] == self.a_port) & (src[:, 0] == hi) & (src[:, 1] == lo)
        return np.where(is_a, 0, 1)

    # ---------------------------------------------------------------- consume
    def consume(self, batch: PacketBatch, rows: np.ndarray) -> tuple[EventBatch, EventBatch]:
        """Account the packets ``rows`` of ``batch`` (this connection's, in file order); returns
        the events of each direction they made, after the stages consumed them."""
        d_of = self.direction_of(batch, rows)
        ts = batch.ts_ns[rows]
        flags = batch.flags[rows]
        if self.first_ns is None:
            self.first_ns = int(ts[0])
        self.packets += rows.shape[0]
        self.last_ts_ns = int(ts[-1])
        self.vlan_tagged += int(batch.vlan[rows].sum())
        if (flags & (FIN | RST)).any():
            self.closed = True
        self._handshake_times(ts, flags, d_of)
        self._syn_options(batch, rows, flags, d_of)
        self._anchor_spaces(batch, rows, flags, d_of)
        # zero-window probes (tcptrace): data sent while the peer's last window was 0
        peer_last_win = self._peer_last_window(batch, rows, d_of, flags)
        ctx = _BatchView(batch, rows, ts, flags)
        sels = [np.nonzero(d_of == d)[0] for d in (0, 1)]
        acks = []
        for d in (0, 1):
            if sels[d].size:
                acks.append(_consume_direction(self, d, ctx, sels[d], peer_last_win[sels[d]]))
        for job in acks:  # ACKs need the peer's snd_max as it was when each ACK was sent
            if job is not None:
                _account_acks(self, *job)
        events = (self._events(ctx, d_of, 0), self._events(ctx, d_of, 1))
        if self.stages:
            now = int(ts[-1])
            for d, ev in enumerate(events):
                rtt = self.dirs[d].rtt.feed(ev)
                self.loss[d].feed(ev, now=now, facts=self.facts(d), rtt=rtt)
        return events

    def facts(self, d: int) -> StreamFacts:
        """What the loss tracker of direction ``d`` needs to know besides the events."""
        st, peer = self.dirs[d], self.dirs[1 - d]
        return StreamFacts(peer.mss or st.max_seg, st.space.anchor or 0, self._turnaround(d), self._turnaround(1 - d))

    @staticmethod
    def _events(ctx: _BatchView, d_of: np.ndarray, d: int) -> EventBatch:
        """The events of direction ``d`` in the batch (events.py): its sends and the peer's ACKs."""
        send = (d_of == d) & (ctx.placement != NOT_SENT)
        ack = (d_of != d) & ctx.has_ack
        rows = np.flatnonzero(send | ack)
        is_send = send[rows]
        is_ack = ~is_send
        opts = ctx.batch.opts
        raw = ctx.rows[rows]
        def pick(col: np.ndarray, own: np.ndarray, fill: int, dtype: type) -> np.ndarray:
            out: np.ndarray = col[rows].astype(dtype, copy=False)  # a fresh array: masked in place
            out[~own] = fill
            return out

        cols = {
            "kind": np.where(is_ack, np.int8(Kind.ACK), np.int8(Kind.SEND)),
            "time_ns": ctx.ts[rows],
            "index": ctx.order[rows],
            "flags": ctx.flags[rows].astype(np.int16),
            "start": pick(ctx.start, is_send, -1, np.int64),
            "end": pick(ctx.end, is_send, -1, np.int64),
            "placement": pick(ctx.placement, is_send, Placement.NONE, np.int8),
            "tsval": opts.tsval[raw].astype(np.int64),
            "ack": pick(ctx.ack, is_ack, -1, np.int64),
            "win": pick(ctx.win, is_ack, -1, np.int64),
            "tsecr": opts.tsecr[raw].astype(np.int64),
            "nsack": pick(ctx.nsack, is_ack, 0, np.int8),
            "dup": ctx.dup[rows] & is_ack,
            "dsack": ctx.dsack[rows] & is_ack,
        }
        cols["tsval"][is_ack] = -1
        cols["tsecr"][is_send] = -1
        return events_from_rows(cols, ctx.sack[rows])

    def finish(self) -> ConnectionResult:
        """Close the stages (end of capture) into the connection's frozen result; the loss
        records are stamped with this connection's id."""
        losses = []
        for tracker in self.loss:
            res = tracker.finish()
            for table in res.tables:
                table.fill("conn", self.id)
            losses.append(res)
        return ConnectionResult(
            id=self.id, epoch=self.epoch, a_addr=self.a_addr, a_port=self.a_port, b_addr=self.b_addr, b_port=self.b_port,
            ipver=self.ipver, state=self.state(), packets=self.packets, vlan_tagged=self.vlan_tagged,
            backwards_timestamps=self.backwards_timestamps,
            syn_ns=self.syn_ts, synack_ns=self.synack_ts, hs_ack_ns=self.hs_ack_ts, window_scale_in_use=self.window_scale_in_use(),
            counts=(self._counts(0), self._counts(1)),
            rtt=(self.dirs[0].rtt.finish(), self.dirs[1].rtt.finish()),
            loss=(losses[0], losses[1]),
        )

    def _counts(self, d: int) -> DirectionCounts:
        st = self.dirs[d]
        win_min, win_max, win_mean = self.window_stats(d)
        return DirectionCounts(
            packets=st.packets, ack_packets=st.ack_packets, pure_acks=st.pure_acks, sack_packets=st.sack_packets,
            dsack_packets=st.dsack_packets, max_sack_blocks=st.max_sack_blocks, empty_sack_options=st.empty_sack_options,
            unique_bytes=st.unique_bytes, data_packets=st.data_packets, data_bytes=st.data_bytes, pushed=st.pushed,
            rexmit_packets=st.rexmit_packets, rexmit_bytes=st.rexmit_bytes, syn_rexmits=st.syn_rexmit, fin_rexmits=st.fin_rexmit,
            out_of_order=st.out_of_order, zwnd_probes=st.zwnd_probes, zwnd_probe_bytes=st.zwnd_probe_bytes,
            syn_count=st.syn_count, fin_count=st.fin_count, rst_count=st.rst_count, dupacks=st.dupacks,
            triple_dupacks=st.triple_dupacks, zero_windows=st.zero_windows, window_min=win_min, window_max=win_max,
            window_mean=win_mean, wscale=st.wscale, mss=st.mss, sack_permitted=st.sack_permitted, ts_option=st.ts_option,
            max_seg=st.max_seg, min_seg=st.min_seg, oversize_segments=st.oversize_segments, first_ns=st.first_ns,
            last_ns=st.last_ns, idle_max_ns=st.idle_max_ns, snd_una=st.snd_una, snd_max=st.snd_max, syn_seen=st.syn_seen,
        )

    def _turnaround(self, d: int) -> int | None:
        """Capture point -> data sender of ``d`` -> capture point, from the handshake."""
        if d == 0 and self.hs_ack_ts is not None and self.synack_ts is not None:
            return self.hs_ack_ts - self.synack_ts
        if d == 1 and self.synack_ts is not None and self.syn_ts is not None:
            return self.synack_ts - self.syn_ts
        return None

    def _syn_options(self, batch: PacketBatch, rows: np.ndarray, flags: np.ndarray, d_of: np.ndarray) -> None:
        """Options of the SYNs (few: Python), read before any window of the batch is scaled."""
        opts = batch.opts
        for i in np.nonzero((flags & SYN) != 0)[0].tolist():
            st = self.dirs[int(d_of[i])]
            r = int(rows[i])
            if st.isn is None:
                st.isn = int(batch.seq[r])
                st.syn_seen = True
                if st.space.anchor_at_syn(st.isn, data_seen=st._data_max is not None):
                    st.snd_max = 0  # what was counted belonged to an earlier attempt
            st.syn_count += 1
            if opts.mss[r] >= 0:
                st.mss = int(opts.mss[r])
            if opts.wscale[r] >= 0:
                st.wscale = min(int(opts.wscale[r]), 14)  # RFC 7323 section 2.3: larger means 14
            st.sack_permitted |= bool(opts.sack_permitted[r])
            st.ts_option |= bool(opts.tsval[r] >= 0)

    def _anchor_spaces(self, batch: PacketBatch, rows: np.ndarray, flags: np.ndarray, d_of: np.ndarray) -> None:
        """A space without a SYN starts at the first number seen of it, in capture order: a
        sequence number of its sender (not a RST's, which may be 0), or an ACK number of its
        receiver less one (seqspace.py). Done before either stream is unwrapped, so the origin
        does not depend on where batches end."""
        for d, st in enumerate(self.dirs):
            if st.space.anchor is not None:
                continue
            own = np.flatnonzero((d_of == d) & ((flags & RST) == 0))[:1]
            acks = np.flatnonzero((d_of != d) & ((flags & ACK) != 0))[:1]
            if acks.size and (not own.size or acks[0] < own[0]):
                st.space.ensure_anchor(int(wire_add(int(batch.ack[rows[acks[0]]]), -1)))
            elif own.size:
                st.space.ensure_anchor(int(batch.seq[rows[own[0]]]))

    def _handshake_times(self, ts: np.ndarray, flags: np.ndarray, d_of: np.ndarray) -> None:
        if self.hs_ack_ts is not None:
            return
        for i in np.nonzero((flags & (SYN | ACK)) != 0)[0][:8].tolist():
            f = int(flags[i])
            if f & SYN and not f & ACK and self.syn_ts is None:
                self.syn_ts = int(ts[i])
            elif f & SYN and f & ACK and self.synack_ts is None and self.syn_ts is not None:
                self.synack_ts = int(ts[i])
            elif not f & SYN and self.synack_ts is not None and int(d_of[i]) == 0:
                self.hs_ack_ts = int(ts[i])
                return

    def _peer_last_window(self, batch: PacketBatch, rows: np.ndarray, d_of: np.ndarray, flags: np.ndarray) -> np.ndarray:
        """For each packet, the other side's last effective window before it (-1 if none yet)."""
        n = rows.shape[0]
        out = np.full(n, -1, dtype=np.int64)
        pos = np.arange(n)
        for d in (0, 1):
            peer = self.dirs[1 - d]
            eff = self.effective_window(1 - d, batch.win[rows], flags)
            mine = d_of == d
            idx = np.where(~mine, pos, -1)
            last = np.maximum.accumulate(idx)
            prev = np.empty(n, dtype=np.int64)
            prev[0] = -1
            prev[1:] = last[:-1]
            carried = -1 if peer.last_win is None else peer.last_win
            val = np.where(prev >= 0, eff[np.maximum(prev, 0)], carried)
            out[mine] = val[mine]
        return out

    def window_scale_in_use(self) -> bool | None:
        """True/False when both SYNs were seen; None (unknown) otherwise (DOMAIN.md section 1)."""
        a, b = self.dirs
        if not (a.syn_seen and b.syn_seen):
            return None
        return a.wscale is not None and b.wscale is not None

    def effective_window(self, d: int, win: np.ndarray, flags: np.ndarray) -> np.ndarray:
        """Advertised window in bytes: scaled unless the packet is a SYN (RFC 7323 section 2.2)."""
        if self.window_scale_in_use():
            shift = self.dirs[d].wscale or 0
            return np.where((flags & SYN) != 0, win, win << shift)
        return win.copy()

    def window_stats(self, d: int) -> tuple[int | None, int, float | None]:
        """(min non-zero, max, mean) of the windows direction ``d`` advertised.

        As tcptrace: SYN windows are unscaled, so once window scaling is in use they are left
        out; without scaling they count like any other window.
        """
        st = self.dirs[d]
        lo, hi, total, count = st.win_min, st.win_max, st.win_sum, st.win_count
        if not self.window_scale_in_use():
            for w in st.syn_windows:
                hi = max(hi, w)
                if w > 0:
                    lo = w if lo is None else min(lo, w)
                total += w
                count += 1
        return lo, hi, (total / count if count else None)

    def state(self) -> str:
        a, b = self.dirs
        if a.rst_count or b.rst_count:
            return "reset"
        if not (a.syn_seen or b.syn_seen):
            return "no SYN seen"
        if a.fin_count and b.fin_count:
            return "complete"
        return "open at end of capture"


class _BatchView:
    """The rows of one connection inside a batch, with the per-row arrays already cut."""

    __slots__ = ("batch", "rows", "ts", "flags", "order", "snd_max_run", "start", "end", "placement", "has_ack", "ack", "win", "dup", "dsack", "nsack", "sack")

    def __init__(self, batch: PacketBatch, rows: np.ndarray, ts: np.ndarray, flags: np.ndarray) -> None:
        self.batch = batch
        self.rows = rows
        self.ts = ts
        self.flags = flags
        self.order = batch.index[rows]
        self.snd_max_run: list[np.ndarray | None] = [None, None]
        # per row, for the events: data placement, unwrapped ACK/SACK, window in bytes
        n = rows.shape[0]
        self.start = np.zeros(n, np.int64)
        self.end = np.zeros(n, np.int64)
        self.placement = np.full(n, NOT_SENT, np.int64)
        self.has_ack = np.zeros(n, bool)
        self.ack = np.full(n, -1, np.int64)
        self.win = np.full(n, -1, np.int64)
        self.dup = np.zeros(n, bool)
        self.dsack = np.zeros(n, bool)
        self.nsack = np.zeros(n, np.int64)
        self.sack = np.zeros((n, 4, 2), np.int64)


def _consume_direction(conn: Connection, d: int, ctx: _BatchView, sel: np.ndarray, peer_win: np.ndarray) -> tuple | None:
    st = conn.dirs[d]
    peer = conn.dirs[1 - d]
    b = ctx.batch
    rows = ctx.rows[sel]
    ts = ctx.ts[sel]
    flags = ctx.flags[sel]
    paylen = b.paylen[rows]
    n = rows.shape[0]
    syn = (flags & SYN) != 0
    fin = (flags & FIN) != 0
    rst = (flags & RST) != 0
    ackf = (flags & ACK) != 0

    # --- time
    if st.first_ns is None:
        st.first_ns = int(ts[0])
    gaps = np.diff(ts, prepend=ts[0] if st.last_ns is None else st.last_ns)
    st.idle_max_ns = max(st.idle_max_ns, int(gaps.max()))
    st.last_ns = int(ts[-1])

    syn_idx = np.nonzero(syn)[0]
    first_syn_here = int(syn_idx[0]) if syn_idx.size and st.syn_count == len(syn_idx) else -1
    st.fin_count += int(fin.sum())
    st.rst_count += int(rst.sum())

    # --- counters that need no order
    st.packets += n
    data = paylen > 0
    st.data_packets += int(data.sum())
    st.data_bytes += int(paylen.sum())
    st.pushed += int((data & ((flags & PSH) != 0)).sum())
    if data.any():
        pl = paylen[data]
        st.max_seg = max(st.max_seg, int(pl.max()))
        mn = int(pl.min())
        st.min_seg = mn if st.min_seg == 0 else min(st.min_seg, mn)
        if st.mss:
            st.oversize_segments += int((pl > st.mss).sum())

    # --- sequence numbers
    # a RST's sequence number may be 0 (RFC 9293 section 3.10.7.1: the reset of a segment
    # without ACK): it neither moves the unwrapping along nor snd_max
    seq = st.space.unwrap_seqs(b.seq[rows], follow=~rst)
    pay_start = seq + syn
    pay_end = pay_start + paylen
    # nor do segments before the direction's SYN (of an earlier attempt: the SYN is relative 0)
    counts = ~rst
    if first_syn_here > 0:
        counts[:first_syn_here] = False
    if counts.any():
        st.snd_max = max(st.snd_max, int((pay_end + fin)[counts].max()))

    # --- windows advertised by this side
    eff = conn.effective_window(d, b.win[rows], flags)
    winpk = ackf & ~syn & ~rst
    st.syn_windows += [int(w) for w in eff[syn & ~rst]]  # kept apart: they only count unscaled (below)
    if winpk.any():
        w = eff[winpk]
        st.win_max = max(st.win_max, int(w.max()))
        nz = w[w > 0]
        if nz.size:
            st.win_min = int(nz.min()) if st.win_min is None else min(st.win_min, int(nz.min()))
        st.win_sum += int(w.sum())
        st.win_count += int(w.size)
    st.zero_windows += int((ackf & ~rst & (eff == 0)).sum())
    ctx.win[sel] = eff
    st.last_win = int(eff[~rst][-1]) if (~rst).any() else st.last_win

    # --- data: unique, retransmitted, out-of-order (tcptrace rexmit(): overlap with bytes seen)
    probe = data & ~syn & (peer_win == 0) & (peer.packets > 0)
    st.zwnd_probes += int(probe.sum())
    st.zwnd_probe_bytes += int(paylen[probe].sum())
    track = data & ~probe
    ctx.start[sel] = pay_start
    ctx.end[sel] = pay_end
    # every packet is in a stream: one with the ACK flag is an ACK of the peer's data, any other
    # (and one with payload, SYN or FIN) a send of this direction
    ctx.placement[sel[((syn | fin | rst) & ~data) | ~(ackf | data)]] = Placement.NONE
    ctx.placement[sel[probe]] = Placement.PROBE
    if track.any():
        ti = np.nonzero(track)[0]
        s = pay_start[ti]
        e = pay_end[ti]
        base = st._data_max if st._data_max is not None else int(s[0])
        if st._data_min is None:
            st._data_min = int(s[0])
        prev_max = np.empty_like(e)
        prev_max[0] = base
        if e.size > 1:
            prev_max[1:] = np.maximum(np.maximum.accumulate(e[:-1]), base)
        st._data_max = max(base, int(e.max()))
        plain = s == prev_max  # the common case: next new data in order
        st.unique_bytes += int((e - s)[plain].sum())
        code = np.full(ti.size, Placement.NEW, np.int64)
        for k in np.nonzero(~plain)[0].tolist():
            code[k] = _account_segment(st, int(s[k]), int(e[k]), int(prev_max[k]))
        ctx.placement[sel[ti]] = code
    # SYN and FIN retransmissions without data are counted apart: tcptrace counts them as
    # retransmitted data packets (1 byte of sequence space each)
    for i in np.nonzero((syn | fin) & ~data)[0].tolist():
        if syn[i] and i != first_syn_here:
            if int(b.seq[rows[i]]) == st.isn:
                st.syn_rexmit += 1
        if fin[i]:
            v = int(pay_end[i])
            if st._fin_at is not None and v <= st._fin_at:
                st.fin_rexmit += 1
            st._fin_at = v if st._fin_at is None else max(v, st._fin_at)

    # running snd_max of this direction at each row of the batch (for the peer's dupACK test)
    run = np.full(ctx.rows.shape[0], -1, dtype=np.int64)
    run[sel] = pay_end + fin
    ctx.snd_max_run[d] = np.maximum(np.maximum.accumulate(run), st.snd_max_before)
    st.snd_max_before = st.snd_max
    # --- ACKs sent by this side (about the peer's data): accounted after both directions' data
    if ackf.any():
        return (d, ctx, sel, ackf, syn, fin, rst, paylen, eff)
    return None


def _account_segment(st: Direction, lo: int, hi: int, top: int) -> int:
    """Account payload ``[lo, hi)`` sent when the highest byte seen was ``top``, and say where
    it falls: REXMIT when it overlapped bytes already seen (a retransmission, counting the
    overlap as tcptrace does), FILL when it fills a hole, GAP past a gap, NEW otherwise."""
    assert st._data_min is not None
    if lo < st._data_min:  # below everything seen so far: the space below becomes a hole
        st._holes.add(lo, st._data_min)
        st._data_min = lo
    if lo >= top:  # new data past a gap: the gap becomes a hole
        st._holes.add(top, lo)
        st.unique_bytes += hi - lo
        return Placement.GAP if lo > top else Placement.NEW
    upto = min(hi, top)
    unseen = st._holes.overlap(lo, upto)
    if lo in st._holes and hi < top:
        st.out_of_order += 1
    st._holes.remove(lo, hi)
    seen = (upto - lo) - unseen
    st.unique_bytes += (hi - lo) - seen
    if seen > 0:
        st.rexmit_packets += 1
        st.rexmit_bytes += seen
        return Placement.REXMIT
    return Placement.FILL


def _account_acks(
    conn: Connection, d: int, ctx: _BatchView, sel: np.ndarray, ackf: np.ndarray, syn: np.ndarray, fin: np.ndarray,
    rst: np.ndarray, paylen: np.ndarray, eff: np.ndarray,
) -> None:
    st = conn.dirs[d]
    peer = conn.dirs[1 - d]
    b = ctx.batch
    ai = np.nonzero(ackf)[0]
    rows = ctx.rows[sel][ai]
    st.ack_packets += int(ai.size)
    st.pure_acks += int(((paylen == 0) & ~syn & ~fin & ~rst)[ai].sum())
    ack_raw = b.ack[rows]
    ack_abs = peer.space.unwrap_acks(ack_raw)
    prev_una = peer.snd_una
    ctx.ack[sel[ai]] = ack_abs
    ctx.has_ack[sel[ai]] = True
    cum = np.maximum.accumulate(ack_abs)
    if prev_una is not None:
        cum = np.maximum(cum, prev_una)
    peer.snd_una = int(cum[-1])
    # SACK blocks (not on RSTs, as tcptrace)
    nsack = b.opts.nsack[rows]
    st.empty_sack_options += int(b.opts.sack_empty[rows].sum())
    has_sack = (nsack > 0) & ~rst[ai]
    dsack_any = np.zeros(ai.size, dtype=bool)
    if has_sack.any():
        hs = np.nonzero(has_sack)[0]
        st.sack_packets += int(hs.size)
        st.max_sack_blocks = max(st.max_sack_blocks, int(nsack[hs].max()))
        raw = b.opts.sack[rows[hs]]
        edges = SeqSpace.unwrap_near(raw, ack_raw[hs, None, None], ack_abs[hs, None, None])
        l0, r0, l1, r1 = edges[:, 0, 0], edges[:, 0, 1], edges[:, 1, 0], edges[:, 1, 1]
        dsack = dsack_first_block(ack_abs[hs], nsack[hs], l0, r0, l1, r1)
        st.dsack_packets += int(dsack.sum())
        dsack_any[hs] = dsack
        at = sel[ai[hs]]
        ctx.dsack[at] = dsack
        ctx.nsack[at] = nsack[hs]
        ctx.sack[at] = edges
    # duplicate ACKs: no data, ACK number unchanged, and either the same window (RFC 5681
    # section 2) or new SACK information (RFC 6675 section 2), while data is outstanding
    pure = ((paylen == 0) & ~syn & ~fin & ~rst)[ai]
    win = eff[ai]
    prev_ack = np.empty_like(ack_abs)
    prev_win = np.empty_like(win)
    prev_ack[0] = -1 if st._last_ack is None else st._last_ack
    prev_win[0] = -1 if st._last_win is None else st._last_win
    prev_ack[1:] = ack_abs[:-1]
    prev_win[1:] = win[:-1]
    peer_run = ctx.snd_max_run[1 - d]
    peer_max = peer_run[sel[ai]] if peer_run is not None else np.full(ai.size, peer.snd_max_before)
    outstanding = ack_abs < peer_max
    dup = duplicate_ack(pure, ack_abs == prev_ack, outstanding, win == prev_win, has_sack & ~dsack_any)
    st._last_ack = int(ack_abs[-1])
    st._last_win = int(win[-1])
    ctx.dup[sel[ai]] = dup
    if dup.any():
        st.dupacks += int(dup.sum())
        run = st._dup_run
        for flag in dup.tolist():
            if flag:
                run += 1
                if run == 3:
                    st.triple_dupacks += 1
            else:
                run = 0
        st._dup_run = run
    else:
        st._dup_run = 0
