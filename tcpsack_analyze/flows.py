"""The flow table: which connection, and which direction, each packet belongs to.

A *flow* is an unordered pair of endpoints (address, port). A *connection* is a flow plus an
epoch (DOMAIN.md section 1): a SYN without ACK whose sequence number differs from the
connection's ISN starts a new connection on the same flow when the previous one saw a FIN or
RST, was silent for longer than ``reuse_silence_s``, or never had a SYN answered (an earlier
attempt given up, as in port scans and SYN probes; tshark splits such attempts too). The flow key has no VLAN in it, so a
connection whose two directions are tagged differently stays one connection.

Direction 0 ("a->b") is the side that opened the connection: the sender of the first SYN, the
receiver of the first SYN-ACK, or else the sender of the first packet seen.

**The connection-finished event** (issue 16; memory bounded by the live connections): a
connection that has *ended* and then stayed silent long enough on the analysis clock is handed
back by :meth:`FlowTable.expire` and leaves the table; its caller finishes it into its frozen
result and drops its working state. Ended, and how long is long enough:

- *closed*: a FIN seen in both directions; silent for more than ``close_delay_s`` (5 s, Zeek's
  ``tcp_close_delay``), which the last ACK, a FIN retransmitted in TIME-WAIT or a closing RST
  fall within;
- *reset* (a RST seen) or *attempt* (a side sent SYNs and nothing else, the other side nothing):
  silent for more than ``abort_delay_s`` (240 s, twice RFC 9293's two-minute MSL). A RST is
  often not the end (one the peer did not accept, a middlebox's): captures in tests/data go on
  13, 15 and 77 s after one; and an unanswered SYN is retransmitted with a backoff past a minute.

A packet of that flow seen later starts a new connection (the next epoch), as one after the
reuse rule above does; tcptrace would add it to the old one. The rule is applied per packet (a
packet more than the delay after an ended connection's last one starts the next epoch), and
:meth:`FlowTable.expire` only hands back connections that rule has already closed to any later
packet, so the connections do not depend on where batches end. A connection that has not ended
is never finished before the end of the capture, however long it is silent (an idle SSH session
is still one connection). The flow table keeps the epoch count of a flow whose connections all
finished (:class:`_Retired`, 41 bytes a flow), so epochs are numbered as if it kept them all.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Generic, Protocol, TypeVar

import numpy as np

from tcpsack_analyze.reader.decode import ACK, FIN, RST, SYN, PacketBatch

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
