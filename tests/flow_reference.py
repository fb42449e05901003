"""The Python flow table, flow stage and RTT sampler, as they were before the core took them
over (``flows.py``, ``connection.py``, ``seqspace.SeqSpace``, ``rtt.RttSampler``; docs/core.md
phases 2-4): the reference of tests/test_flow_core.py, used by no product code.

The rules are documented where they live now: ``src/flow/table.rs`` (the flow table and the
connection-finished event), ``src/flow/stage.rs`` (the flow stage), ``src/flow/unwrap.rs``
(sequence unwrapping), ``src/rtt_sampler.rs`` (RTT samples).
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Generic, Protocol, TypeVar

import numpy as np

from tcpsack_analyze.events import EventBatch, Kind, Placement, StreamFacts, events_from_rows
from tcpsack_analyze.rangeset import RangeSet
from tcpsack_analyze.reader import ReadStatus, read_capture
from tcpsack_analyze.reader.decode import ACK, FIN, PSH, RST, SYN, PacketBatch
from tcpsack_analyze.results import DirectionCounts
from tcpsack_analyze.stats import SampleBag



MOD, HALF = 1 << 32, 1 << 31


def signed_diff(a, b):  # type: ignore[no-untyped-def]
    """``a - b`` modulo 2**32, signed, over numpy arrays or ints (the product's rule is
    src/seq.rs, which this reference is compared with)."""
    return ((a - b + HALF) % MOD) - HALF


def wire_add(a, b):  # type: ignore[no-untyped-def]
    """``a + b`` modulo 2**32 (as src/seq.rs)."""
    return (a + b) % MOD


def dsack_first_block(ack: np.ndarray, nsack: np.ndarray, l0: np.ndarray, r0: np.ndarray, l1: np.ndarray, r1: np.ndarray) -> np.ndarray:
    """The D-SACK rule over a batch (the product's is src/acks.rs, which this reference is
    compared with): RFC 2883 section 4, as ``tcpsack_analyze.acks.dsack_first_block``."""
    return np.asarray((nsack > 0) & ((l0 < ack) | ((nsack > 1) & (l1 <= l0) & (r0 <= r1))))


def duplicate_ack(pure: np.ndarray, same_ack: np.ndarray, outstanding: np.ndarray, same_window: np.ndarray, new_sack: np.ndarray) -> np.ndarray:
    """The duplicate-ACK rule over a batch (RFC 5681 / RFC 6675 section 2), as
    ``tcpsack_analyze.acks.duplicate_ack``."""
    return np.asarray(pure & same_ack & outstanding & (same_window | new_sack))

class Unwrapper:
    """Unwraps one stream of 32-bit values, carrying its state across batches."""

    __slots__ = ("last_raw", "last_abs")

    def __init__(self) -> None:
        self.last_raw: int | None = None
        self.last_abs = 0

    def start(self, anchor_raw: int, anchor_abs: int) -> None:
        """Begin the stream at a value whose unwrapped number is known."""
        self.last_raw = anchor_raw
        self.last_abs = anchor_abs

    @property
    def started(self) -> bool:
        return self.last_raw is not None

    def unwrap(self, raw: np.ndarray) -> np.ndarray:
        """Unwrapped 64-bit numbers for ``raw`` (in stream order); the stream must be started."""
        if raw.size == 0:
            return raw.astype(np.int64)
        assert self.last_raw is not None
        prev = np.empty_like(raw)
        prev[0] = self.last_raw
        prev[1:] = raw[:-1]
        out = self.last_abs + np.cumsum(signed_diff(raw, prev))
        self.last_raw = int(raw[-1])
        self.last_abs = int(out[-1])
        return out


class SeqSpace:
    """The sequence space of one direction: its anchor and its two streams."""

    __slots__ = ("anchor", "seqs", "acks")

    def __init__(self) -> None:
        self.anchor: int | None = None  # raw value whose unwrapped number is 0
        self.seqs = Unwrapper()
        self.acks = Unwrapper()

    def ensure_anchor(self, raw: int) -> None:
        if self.anchor is None:
            self.anchor = raw

    def anchor_at_syn(self, isn: int, data_seen: bool) -> bool:
        """The SYN was seen: its ISN is relative 0 (domain.md section 2). A space anchored
        before it (by a stray segment or an ACK number of an earlier attempt) starts again at
        the ISN, unless data was already placed in it (then the numbers already reported stay
        valid). Returns whether an earlier origin was given up."""
        moved = self.anchor is not None and self.anchor != isn and not data_seen
        if self.anchor is None or moved:
            self.anchor = isn
            self.seqs = Unwrapper()
            self.acks = Unwrapper()
        return moved

    def _start(self, stream: Unwrapper, first_raw: int) -> None:
        assert self.anchor is not None
        stream.start(first_raw, int(signed_diff(first_raw, self.anchor)))

    def unwrap_seqs(self, raw: np.ndarray, follow: np.ndarray | None = None) -> np.ndarray:
        """Unwrapped sequence numbers of ``raw`` (in stream order). Rows where ``follow`` is
        False are unwrapped near the stream's latest value without moving it along."""
        if follow is not None and not follow.all():
            out = np.empty(raw.shape, np.int64)
            if follow.any():
                out[follow] = self.unwrap_seqs(raw[follow])
            if not self.seqs.started:
                self.ensure_anchor(int(raw[~follow][0]))
                assert self.anchor is not None
                self._start(self.seqs, self.anchor)
            assert self.seqs.last_raw is not None
            out[~follow] = self.seqs.last_abs + signed_diff(raw[~follow], self.seqs.last_raw)
            return out
        if raw.size and not self.seqs.started:
            self.ensure_anchor(int(raw[0]))
            self._start(self.seqs, int(raw[0]))
        return self.seqs.unwrap(raw)

    def unwrap_acks(self, raw: np.ndarray) -> np.ndarray:
        if raw.size and not self.acks.started:
            # acknowledgment numbers point one past data: anchor so the first ACK is >= 0
            self.ensure_anchor(int(raw[0]) - 1)
            self._start(self.acks, int(raw[0]))
        return self.acks.unwrap(raw)

    @staticmethod
    def unwrap_near(raw: np.ndarray, ref_raw: np.ndarray, ref_abs: np.ndarray) -> np.ndarray:
        """Unwrap values known to lie within 2**31 of a reference (SACK edges near the ACK)."""
        return np.asarray(ref_abs + signed_diff(raw, ref_raw))


DEFAULT_REUSE_SILENCE_S = 60.0
DEFAULT_CLOSE_DELAY_S = 5.0  # after a FIN each way
DEFAULT_ABORT_DELAY_S = 240.0  # after a RST, or an attempt never answered: 2 MSL (RFC 9293 section 3.4.2)
CLOSED, RESET, ATTEMPT = "closed", "reset", "attempt"  # how a connection ended (Epoch.ended)


def _endpoint_words(addr: np.ndarray, port: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    words = np.ascontiguousarray(addr).view(">u8").astype(np.uint64)
    return words[:, 0], words[:, 1], port.astype(np.uint64)


def _mix(key: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of ``key`` (n, 5 uint64 words): multiply-xorshift per word."""
    h = np.zeros(key.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        for w in range(key.shape[1]):
            h = (h ^ key[:, w]) * np.uint64(0x9E3779B97F4A7C15)
            h ^= h >> np.uint64(29)
    return h


def _group(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of ``key`` grouped by equal rows: (first row of each group, rows in group order with
    file order kept inside a group, group bounds in that order).

    Grouping 64-bit hashes is several times faster than sorting the 40-byte keys themselves, and
    the stable sort by group number is a radix sort while there are fewer than 65536 groups. A
    collision (two flows with one hash) is detected by comparing every row with its group's
    first; then the keys themselves are grouped.
    """
    _, first, inverse = np.unique(_mix(key), return_index=True, return_inverse=True)
    if not (key == key[first][inverse]).all():
        keyv = np.ascontiguousarray(key).view(np.dtype((np.void, key.shape[1] * 8))).ravel()
        _, first, inverse = np.unique(keyv, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    order = np.argsort(inverse.astype(np.uint16) if first.shape[0] <= 0xFFFF else inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(first.shape[0] + 1))
    return first, order, bounds


class Epoch(Protocol):
    """What the flow table reads of a connection to decide whether a SYN starts a new one."""

    syn_isn: int | None  # sequence number of the SYN that opened it (set by the flow table)
    packets: int
    closed: bool  # a FIN or RST was seen
    last_ts_ns: int | None

    @property
    def answered(self) -> bool: ...

    def ended(self, batch: PacketBatch | None = None, rows: np.ndarray | None = None) -> str | None:
        """CLOSED, RESET or ATTEMPT (see the module doc), None while it has not ended; with
        ``rows`` of ``batch``: as it would be after them (they are not consumed yet)."""
        ...


C = TypeVar("C", bound=Epoch)


class Flow(Generic[C]):
    """One endpoint pair and its current connection."""

    __slots__ = ("key", "current", "count")

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.current: C | None = None
        self.count = 0


class _Retired:
    """The epoch counts of flows with no live connection, so that a flow seen again numbers its
    next connection on (DOMAIN.md section 1). A scan meets each flow once: a million of them are
    kept as sorted 40-byte keys and uint32 counts (41 MB), not as dict entries (about 200 bytes
    each); the latest ones wait in a dict until there are ``MERGE`` of them."""

    MERGE = 1 << 16

    def __init__(self) -> None:
        self._recent: dict[bytes, int] = {}
        self._keys = np.empty(0, dtype="S40")  # sorted; a fixed 40-byte key compares as bytes
        self._counts = np.empty(0, dtype=np.uint32)

    def put(self, key: bytes, count: int) -> None:
        self._recent[key] = count
        if len(self._recent) >= max(self.MERGE, self._keys.shape[0] >> 3):
            self._merge()

    def take(self, keys: list[bytes]) -> list[int]:
        """The epoch count of each key (0 for a flow never seen), forgotten here: its flow is live again."""
        out = [self._recent.pop(k, -1) for k in keys]
        if self._keys.shape[0]:
            ask = [i for i, c in enumerate(out) if c < 0]
            if ask:
                want = np.array([keys[i] for i in ask], dtype="S40")
                at = np.minimum(np.searchsorted(self._keys, want), self._keys.shape[0] - 1)
                found = self._keys[at] == want
                counts = np.where(found, self._counts[at], 0).tolist()
                for i, c in zip(ask, counts):
                    out[i] = c
                # a found entry stays in the arrays; put() of the flow's next count supersedes it
        return [max(c, 0) for c in out]

    def _merge(self) -> None:
        keys = np.array(list(self._recent), dtype="S40")
        counts = np.array(list(self._recent.values()), dtype=np.uint32)
        self._recent = {}
        order = np.argsort(keys, kind="stable")
        keys, counts = keys[order], counts[order]
        at = np.searchsorted(self._keys, keys)
        inside = at < self._keys.shape[0]
        same = np.zeros(keys.shape[0], dtype=bool)
        same[inside] = self._keys[at[inside]] == keys[inside]
        self._counts[at[same]] = counts[same]
        self._keys = np.insert(self._keys, at[~same], keys[~same])
        self._counts = np.insert(self._counts, at[~same], counts[~same])


def _pop_silent(queue: OrderedDict[C, Flow[C]], limit_ns: int) -> Iterator[tuple[C, Flow[C]]]:
    """Take from the front of ``queue`` (oldest last packet first) the connections whose last
    packet came before ``limit_ns``."""
    while queue:
        conn = next(iter(queue))
        if conn.last_ts_ns is not None and conn.last_ts_ns >= limit_ns:
            return
        yield queue.popitem(last=False)


class FlowTable(Generic[C]):
    """Assigns packets to connections; connections are created by ``make_connection`` and handed
    back by :meth:`expire` when they are finished (the module doc)."""

    def __init__(self, make_connection: Callable[[int, PacketBatch, int, int], C], reuse_silence_s: float = DEFAULT_REUSE_SILENCE_S,
                 close_delay_s: float = DEFAULT_CLOSE_DELAY_S, abort_delay_s: float = DEFAULT_ABORT_DELAY_S) -> None:
        self._flows: dict[bytes, Flow[C]] = {}  # flows with a live connection
        self._retired = _Retired()
        self._make = make_connection
        self._next_id = 0
        self.reuse_silence_ns = int(reuse_silence_s * 1e9)
        self.close_delay_ns = int(close_delay_s * 1e9)
        self.abort_delay_ns = max(int(abort_delay_s * 1e9), self.close_delay_ns)
        self._delay = {CLOSED: self.close_delay_ns, RESET: self.abort_delay_ns, ATTEMPT: self.abort_delay_ns}
        # live connections by their latest batch, oldest first: those silent for the close delay
        # leave it, to be finished (closed, superseded), to wait in _aborted for the abort delay
        # (reset, attempt), or to stay live out of both (not ended: only a packet, which puts them
        # back at the end, can end them)
        self._queue: OrderedDict[C, Flow[C]] = OrderedDict()
        self._aborted: OrderedDict[C, Flow[C]] = OrderedDict()
        self._live: dict[C, Flow[C]] = {}  # every live connection and its flow
        self.new: list[C] = []  # created since the caller last cleared it (for numbering)

    def _new_connection(self, flow: Flow[C], batch: PacketBatch, row: int) -> C:
        conn = self._make(self._next_id, batch, row, flow.count)
        self._next_id += 1
        flow.count += 1
        if flow.current is not None:  # superseded: no packet can reach it any more (expire finishes it)
            self._queue.setdefault(flow.current, flow)
            self._aborted.pop(flow.current, None)  # once: it may wait there (it was reset), then KeyError in _retire
        flow.current = conn
        self.new.append(conn)
        self._live[conn] = flow
        return conn

    @property
    def live(self) -> list[C]:
        """The live connections (created and not yet handed back), in the order created."""
        return list(self._live)

    def split(self, batch: PacketBatch) -> Iterator[tuple[C, np.ndarray]]:
        """Yield (connection, row indices in file order) for the packets of ``batch``."""
        n = len(batch)
        if n == 0:
            return
        s_hi, s_lo, s_p = _endpoint_words(batch.src, batch.sport)
        d_hi, d_lo, d_p = _endpoint_words(batch.dst, batch.dport)
        src_low = (s_hi < d_hi) | ((s_hi == d_hi) & ((s_lo < d_lo) | ((s_lo == d_lo) & (s_p <= d_p))))
        key = np.empty((n, 5), dtype=np.uint64)
        key[:, 0] = np.where(src_low, s_hi, d_hi)
        key[:, 1] = np.where(src_low, s_lo, d_lo)
        key[:, 2] = np.where(src_low, d_hi, s_hi)
        key[:, 3] = np.where(src_low, d_lo, s_lo)
        key[:, 4] = np.where(src_low, (s_p << np.uint64(16)) | d_p, (d_p << np.uint64(16)) | s_p)
        first, order, bounds = _group(key)
        flags = batch.flags
        syn_only = (flags & (SYN | ACK)) == SYN
        raw = key[first].tobytes()
        kbs = [raw[i * 40 : (i + 1) * 40] for i in range(first.shape[0])]
        flows = [self._flows.get(kb) for kb in kbs]
        missing = [u for u, f in enumerate(flows) if f is None]
        if missing:
            for u, count in zip(missing, self._retired.take([kbs[u] for u in missing])):
                revived = self._flows[kbs[u]] = Flow[C](kbs[u])
                revived.count = count
                flows[u] = revived
        queue = self._queue
        for u, flow in enumerate(flows):
            assert flow is not None
            rows = order[bounds[u] : bounds[u + 1]]
            for conn, part in self._epochs(flow, batch, rows, syn_only):
                queue[conn] = flow
                queue.move_to_end(conn)
                self._aborted.pop(conn, None)
                yield conn, part

    def expire(self, now_ns: int) -> list[C]:
        """The connection-finished event: the connections that ended and have been silent for
        their delay at analysis time ``now_ns`` (so that any later packet of their flow starts
        a new connection), oldest first; they leave the table."""
        done: list[C] = []
        for conn, flow in _pop_silent(self._queue, now_ns - self.close_delay_ns):
            ended = conn.ended()
            if flow.current is not conn or ended == CLOSED:  # superseded, or closed
                done.append(conn)
                self._retire(flow, conn)
            elif ended is not None:
                self._aborted[conn] = flow  # in the order of their last packets, as the queue
            # else: silent but not ended: stays live, out of both queues until its next packet
        for conn, flow in _pop_silent(self._aborted, now_ns - self.abort_delay_ns):
            done.append(conn)
            self._retire(flow, conn)
        return done

    def finish_all(self) -> list[C]:
        """Every live connection (end of capture), in the order they were created."""
        live = list(self._live.items())
        for conn, flow in live:
            self._retire(flow, conn)
        self._queue.clear()
        self._aborted.clear()
        return [conn for conn, _ in live]

    def _retire(self, flow: Flow[C], conn: C) -> None:
        if flow.current is conn:
            flow.current = None
            del self._flows[flow.key]
            self._retired.put(flow.key, flow.count)
        del self._live[conn]

    def _epochs(self, flow: Flow[C], batch: PacketBatch, rows: np.ndarray, syn_only: np.ndarray) -> Iterator[tuple[C, np.ndarray]]:
        conn = flow.current
        if conn is None:
            conn = self._new_connection(flow, batch, int(rows[0]))
            conn.syn_isn = None
        ts = batch.ts_ns
        times = ts[rows]
        since = np.diff(times, prepend=times[0] if conn.last_ts_ns is None else conn.last_ts_ns)
        quiet = np.flatnonzero(since > self.close_delay_ns)  # a packet after the (shorter) close delay
        syn_rows = np.nonzero(syn_only[rows])[0]
        if syn_rows.size == 0 and quiet.size == 0:
            yield conn, rows
            return
        # rare path: a packet here may start a new epoch
        begin = 0
        flags = batch.flags
        quiet_set = set(quiet.tolist())
        is_syn = set(syn_rows.tolist())
        for k in sorted(quiet_set | is_syn):
            row = int(rows[k])
            if k in quiet_set:
                # the connection-finished rule (module doc), decided per packet so that it does
                # not depend on where batches end: was the connection over before this packet?
                how = conn.ended(batch, rows[begin:k]) if conn.packets or k > begin else None
                if how is not None and int(since[k]) > self._delay[how]:
                    if k > begin:
                        yield conn, rows[begin:k]
                    conn = self._new_connection(flow, batch, row)
                    conn.syn_isn = None
                    begin = k
            if k not in is_syn:
                continue
            seq = int(batch.seq[row])
            before = flags[rows[begin:k]]
            if conn.syn_isn is None and k == begin and conn.packets == 0:
                conn.syn_isn = seq
                continue
            answered = conn.answered or bool(((before & (SYN | ACK)) == (SYN | ACK)).any())
            ended = conn.closed or bool((before & (FIN | RST)).any()) or not answered
            last_ts = int(ts[rows[k - 1]]) if k > begin else conn.last_ts_ns
            silent = last_ts is not None and int(ts[row]) - last_ts > self.reuse_silence_ns
            if conn.syn_isn is None:
                conn.syn_isn = seq
            elif seq != conn.syn_isn and (ended or silent):
                if k > begin:
                    yield conn, rows[begin:k]
                conn = self._new_connection(flow, batch, row)
                conn.syn_isn = seq
                begin = k
        yield conn, rows[begin:]


_NOTHING = np.empty(0, np.int64)
_NOTHING.flags.writeable = False


class RttSampler:
    """Takes RTT samples from one direction's events (module docstring)."""

    def __init__(self) -> None:
        # first transmissions awaiting their ACK: end, send time, resends before it, record number
        # (empty columns are one shared read-only array: they are replaced, never written to)
        self._pend_end = self._pend_ts = self._pend_rx = self._pend_order = _NOTHING
        self._rexmits = 0  # resends so far (Karn's rule)
        self._rexmit_orders = _NOTHING  # record numbers of resends still relevant
        self._tsval_keys = self._tsval_ts = _NOTHING  # TSvals of first transmissions and their times
        self._snd_una: int | None = None
        self.samples = SampleBag()
        self.ts_samples = SampleBag()

    def feed(self, ev: EventBatch) -> tuple[np.ndarray, np.ndarray] | None:
        """Account one batch; returns its data/ACK samples as (ACK times, samples), by time."""
        data = ev.is_data
        rexmit = data & (ev.placement == Placement.REXMIT)
        first_tx = data & ~rexmit
        if rexmit.any():
            self._rexmit_orders = np.concatenate([self._rexmit_orders, ev.index[rexmit]])
        rx_cum = self._rexmits + np.cumsum(rexmit)
        if rexmit.any():
            self._rexmits = int(rx_cum[-1])
        if first_tx.any():
            self._pend_end = np.concatenate([self._pend_end, ev.end[first_tx]])
            self._pend_ts = np.concatenate([self._pend_ts, ev.time_ns[first_tx]])
            self._pend_rx = np.concatenate([self._pend_rx, rx_cum[first_tx]])
            self._pend_order = np.concatenate([self._pend_order, ev.index[first_tx]])
            tsv = ev.tsval[first_tx]
            has = tsv >= 0
            if has.any():
                self._tsval_keys = np.concatenate([self._tsval_keys, tsv[has]])
                self._tsval_ts = np.concatenate([self._tsval_ts, ev.time_ns[first_tx][has]])
        acks = ev.is_ack
        if not acks.any():
            return None
        order, ack, at, tsecr = ev.index[acks], ev.ack[acks], ev.time_ns[acks], ev.tsecr[acks]
        prev_una = self._snd_una
        cum = np.maximum.accumulate(ack)
        if prev_una is not None:
            cum = np.maximum(cum, prev_una)
        self._snd_una = int(cum[-1])
        self._timestamps(at, ack, cum, tsecr, prev_una)
        return self._pairs(order, ack, at)

    def _timestamps(self, at: np.ndarray, ack: np.ndarray, cum: np.ndarray, tsecr: np.ndarray, prev_una: int | None) -> None:
        """RFC 7323 section 4.3: an ACK that advances snd_una echoes the TSval of the data it
        acknowledges."""
        if not self._tsval_keys.size:
            return
        adv = np.empty(ack.size, dtype=bool)
        adv[0] = prev_una is None or ack[0] > prev_una
        adv[1:] = cum[1:] > cum[:-1]
        adv &= tsecr >= 0
        if not adv.any():
            return
        keys, first = np.unique(self._tsval_keys, return_index=True)
        pos = np.minimum(np.searchsorted(keys, tsecr[adv]), keys.size - 1)
        hit = keys[pos] == tsecr[adv]
        samples = at[adv][hit] - self._tsval_ts[first[pos[hit]]]
        samples = samples[samples >= 0]
        if samples.size:
            self.ts_samples.add(samples)
        # keep only what a later ACK can still echo (TSvals compare modulo 2**32)
        keep = signed_diff(self._tsval_keys, int(tsecr[adv].max())) >= 0
        self._tsval_keys = self._tsval_keys[keep]
        self._tsval_ts = self._tsval_ts[keep]

    def _pairs(self, order: np.ndarray, abs_acks: np.ndarray, ack_ts: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Data/ACK pairs (tcptrace's rule with Karn's algorithm, module docstring)."""
        if self._pend_end.size == 0:
            return None
        out = None
        cum = np.maximum.accumulate(abs_acks)
        # first ACK (in capture order, after the segment) whose cumulative value covers its end
        k = np.maximum(np.searchsorted(cum, self._pend_end, side="left"), np.searchsorted(order, self._pend_order, side="right"))
        done = k < cum.size
        if done.any():
            kd = k[done]
            exact = abs_acks[kd] == self._pend_end[done]
            rx_at_ack = self._rexmits - np.searchsorted(np.sort(-self._rexmit_orders), -order[kd], side="left")
            clean = exact & (rx_at_ack == self._pend_rx[done])
            samples = ack_ts[kd][clean] - self._pend_ts[done][clean]
            at = ack_ts[kd][clean]
            ok = samples >= 0
            samples = samples[ok]
            if samples.size:
                self.samples.add(samples)
                by_time = np.argsort(at[ok], kind="stable")
                out = (at[ok][by_time], samples[by_time])
        keep = ~done
        if keep.any():
            self._pend_end = self._pend_end[keep]
            self._pend_ts = self._pend_ts[keep]
            self._pend_rx = self._pend_rx[keep]
            self._pend_order = self._pend_order[keep]
        else:  # every one acknowledged: the shared empty column, not four empty arrays
            self._pend_end = self._pend_ts = self._pend_rx = self._pend_order = _NOTHING
        oldest = self._pend_order.min() if self._pend_order.size else order[-1]
        relevant = self._rexmit_orders > oldest
        self._rexmit_orders = self._rexmit_orders[relevant] if relevant.any() else _NOTHING
        return out


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
        "first_ns", "last_ns", "idle_max_ns", "_fin_at"
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
        self._fin_at: int | None = None


class Connection:
    """One TCP connection (a flow epoch) and its two directions."""

    def __init__(self, conn_id: int, batch: PacketBatch, row: int, epoch: int) -> None:
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

    def finish(self) -> dict[str, object]:
        """The connection's identity, handshake, state and counters (the fields of the core's result)."""
        return dict(
            id=self.id, epoch=self.epoch, a_addr=self.a_addr, a_port=self.a_port, b_addr=self.b_addr, b_port=self.b_port,
            ipver=self.ipver, state=self.state(), packets=self.packets, vlan_tagged=self.vlan_tagged,
            backwards_timestamps=self.backwards_timestamps, syn_ns=self.syn_ts, synack_ns=self.synack_ts, hs_ack_ns=self.hs_ack_ts,
            window_scale_in_use=self.window_scale_in_use(), counts=(self._counts(0), self._counts(1)),
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

def reference_run(path: Path, chunk: int) -> tuple[dict, dict, dict]:
    """(events by (conn, dir), RTT samples of each chunk by (conn, dir), (finished fields,
    (sampler a2b, sampler b2a)) by id) of the reference stages, read in chunks of ``chunk`` bytes."""
    status = ReadStatus(str(path))
    table: FlowTable[Connection] = FlowTable(Connection)
    events: dict = {}
    rtt: dict = {}
    samplers: dict = {}
    results: dict = {}
    numbered = 0

    def finish(conns: list[Connection]) -> None:
        for conn in conns:
            results[conn.id] = (conn.finish(), (samplers.pop((conn.id, 0), RttSampler()), samplers.pop((conn.id, 1), RttSampler())))

    for batch in read_capture(str(path), status, None, chunk):
        back = status.clock.marks()
        touched = []
        for conn, rows in table.split(batch):
            if back.size:
                conn.backwards_timestamps += int(np.isin(batch.index[rows], back, assume_unique=True).sum())
            touched.append((conn, conn.consume(batch, rows)))
        new = sorted(table.new, key=lambda c: c.first_index)
        table.new.clear()
        for k, conn in enumerate(new):
            conn.id = numbered + k
        numbered += len(new)
        for conn, evs in touched:
            for d in (0, 1):
                events.setdefault((conn.id, d), []).append(evs[d])
                rtt.setdefault((conn.id, d), []).append(samplers.setdefault((conn.id, d), RttSampler()).feed(evs[d]))
        finish(table.expire(int(batch.ts_ns[-1])) if len(batch) else [])
    finish(table.finish_all())
    return events, rtt, results
