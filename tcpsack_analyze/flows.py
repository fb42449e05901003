"""The flow table: which connection, and which direction, each packet belongs to.

A *flow* is an unordered pair of endpoints (address, port). A *connection* is a flow plus an
epoch (DOMAIN.md section 1): a SYN without ACK whose sequence number differs from the
connection's ISN starts a new connection on the same flow when the previous one saw a FIN or
RST, was silent for longer than ``reuse_silence_s``, or never had a SYN answered (an earlier
attempt given up, as in port scans and SYN probes; tshark splits such attempts too). The flow key has no VLAN in it, so a
connection whose two directions are tagged differently stays one connection.

Direction 0 ("a->b") is the side that opened the connection: the sender of the first SYN, the
receiver of the first SYN-ACK, or else the sender of the first packet seen.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, Protocol, TypeVar

import numpy as np

from tcpsack_analyze.reader.decode import ACK, FIN, RST, SYN, PacketBatch

DEFAULT_REUSE_SILENCE_S = 60.0


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


C = TypeVar("C", bound=Epoch)


class Flow(Generic[C]):
    """One endpoint pair and its current connection."""

    __slots__ = ("key", "current", "count")

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.current: C | None = None
        self.count = 0


class FlowTable(Generic[C]):
    """Assigns packets to connections; connections are created by ``make_connection``."""

    def __init__(self, make_connection: Callable[[int, PacketBatch, int, int], C], reuse_silence_s: float = DEFAULT_REUSE_SILENCE_S) -> None:
        self._flows: dict[bytes, Flow[C]] = {}
        self._make = make_connection
        self._next_id = 0
        self.reuse_silence_ns = int(reuse_silence_s * 1e9)
        self.connections: list[C] = []

    def _new_connection(self, flow: Flow[C], batch: PacketBatch, row: int) -> C:
        conn = self._make(self._next_id, batch, row, flow.count)
        self._next_id += 1
        flow.count += 1
        flow.current = conn
        self.connections.append(conn)
        return conn

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
        for u in range(first.shape[0]):
            rows = order[bounds[u] : bounds[u + 1]]
            kb = key[first[u]].tobytes()
            flow = self._flows.get(kb)
            if flow is None:
                flow = self._flows[kb] = Flow[C](kb)
            yield from self._epochs(flow, batch, rows, syn_only)

    def _epochs(self, flow: Flow[C], batch: PacketBatch, rows: np.ndarray, syn_only: np.ndarray) -> Iterator[tuple[C, np.ndarray]]:
        conn = flow.current
        if conn is None:
            conn = self._new_connection(flow, batch, int(rows[0]))
            conn.syn_isn = None
        syn_rows = np.nonzero(syn_only[rows])[0]
        if syn_rows.size == 0:
            yield conn, rows
            return
        # rare path: SYNs in this batch may open new epochs
        begin = 0
        ts = batch.ts_ns
        flags = batch.flags
        for k in syn_rows.tolist():
            row = int(rows[k])
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
