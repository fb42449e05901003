"""Generate a large synthetic capture of concurrent SACK bulk transfers, with ground truth.

    python benchmarks/gen_synthetic.py -o FILE --packets 1000000 --connections 200 --seed 1 \
        [--loss 0.01]

The output is a classic pcap (little-endian, microsecond timestamps, LINKTYPE_ETHERNET,
snaplen 96): headers only, each record's caplen is min(96, wire length) and the IP total length
gives the real size. IP and TCP checksums are left at zero (no tool checks them on a capture
taken at the sender, where checksum offload makes them meaningless anyway).

Model, per connection (one IPv4 client, "host a", sends bulk data to "host b"):

* The capture point is at the sender: every segment the sender transmits is on the wire once,
  losses happen downstream, and the receiver's ACKs are seen one RTT after the data that
  triggered them (no queueing: the RTT is constant per connection).
* Handshake: SYN and SYN-ACK carry MSS 1448, SACK-permitted, timestamps and window scale 7
  (in Linux order); then the third ACK. Every later segment carries the timestamps option
  (NOP NOP TS). The sender's timestamp clock ticks in milliseconds; so does the receiver's.
* Data: segments of 1448 bytes (the last one shorter), sent at a fixed pace of ``RTT / W``
  with W (segments per RTT) drawn per connection. The receive window (3 MB) never limits the
  sender except after an RTO, see below.
* Receiver: a delayed ACK for every second in-order segment; an immediate ACK for every segment
  that arrives while a hole exists or that fills a hole. ACKs sent while a hole exists carry
  SACK blocks (NOP NOP SACK after the timestamps, at most 3 blocks): first the block holding the
  segment just received, then the others by descending sequence number. The timestamp echo
  follows RFC 7323 (TS.Recent is updated only by a segment at or below the last ACK sent). A
  final odd segment is acknowledged by the delayed-ACK timer (40 ms).
* Loss: each first transmission is lost with probability ``--loss`` (the last 3 data segments
  excepted, so that every loss has 3 SACKed segments above it). The sender retransmits the hole
  on the ACK for the third delivered segment above it (RFC 6675 IsLost, i.e. the third
  duplicate ACK). 5% of these fast retransmissions are lost too: the sender then stops sending
  new data, the dupACKs run out after one RTT, and an RTO retransmission (RTO = 200 ms + RTT)
  follows; new data resumes when its ACK arrives. RTO retransmissions are never lost.
* Close: once all data is acknowledged, FIN/ACK from a, FIN/ACK from b one RTT later, and a's
  last ACK.
* About half of the connections start with an ISN a few MB below 2**32, so that their sequence
  numbers wrap during the transfer; the others have a random ISN.

Packets are interleaved in time order over the file (connections start within the first 2 s
and run concurrently). The packet count is ``--packets`` up to a few packets per connection.
Per-connection event logic is vectorised with numpy (a Python step only per RTO loss), and
the records are laid out in bulk: a structured array with one 112-byte row per packet (pcap
record header plus up to 96 captured bytes), filled column by column, then compacted to each
record's length with a boolean mask.

Ground truth goes to ``FILE.truth.json``: per connection the endpoints, ISNs, RTT and, per
direction ("a2b" is the data direction, "b2a" the ACK direction), the figures tcptrace's
``-l`` prints, under the key names of ``tests/tcptrace_output.py``: ``total_packets``,
``actual_data_pkts``, ``actual_data_bytes``, ``unique_bytes_sent``, ``rexmt_data_pkts``,
``rexmt_data_bytes``, ``sack_pkts_sent``, ``dsack_pkts_sent``, ``max_sack_blks_ack``,
``syn_pkts_sent``, ``fin_pkts_sent``; plus ``losses``, ``fast_retransmits`` and
``rto_retransmits`` for a2b. The SYN and the FIN carry no payload and are not data packets.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

SNAPLEN = 96
MSS = 1448
WSCALE = 7
RETX_LOSS = 0.05  # share of fast retransmissions that are lost too
RTO_MIN_US = 200_000
DELACK_US = 40_000
NEVER_LOST_TAIL = 3
EPOCH_S = 1_700_000_000
WIN_A = 64256 >> WSCALE  # sender's (scaled) window field, it receives no data
WIN_B = (3 << 20) >> WSCALE  # receiver's (scaled) window field: 3 MB
SYN_WIN_A, SYN_WIN_B = 64240, 65160
TS_BASE_A, TS_BASE_B = 1_000_000, 7_000_000

# TCP flags
FIN, SYN, PSH, ACK = 0x01, 0x02, 0x08, 0x10

# Rows of the record array: pcap record header, Ethernet, IPv4, TCP, then TCP options. The
# layout of the option fields is the one of every segment but SYNs (NOP NOP TS [NOP NOP SACK]);
# SYN options are written as raw bytes. Data packets' payload follows the 12 option bytes.
ROW = 112
RECORD = np.dtype({
    "names": ["ts_sec", "ts_usec", "incl_len", "orig_len", "eth", "ethertype",
              "ip_vhl", "ip_len", "ip_id", "ip_frag", "ip_ttl", "ip_proto", "ip_src", "ip_dst",
              "sport", "dport", "seq", "ack", "doff", "flags", "win",
              "ts_head", "tsval", "tsecr", "sack_head", "sack"],
    "formats": ["<u4", "<u4", "<u4", "<u4", ("u1", 12), ">u2",
                "u1", ">u2", ">u2", ">u2", "u1", "u1", ">u4", ">u4",
                ">u2", ">u2", ">u4", ">u4", "u1", "u1", ">u2",
                ("u1", 4), ">u4", ">u4", ("u1", 4), (">u4", 6)],
    "offsets": [0, 4, 8, 12, 16, 28,
                30, 32, 34, 36, 38, 39, 42, 46,
                50, 52, 54, 58, 62, 63, 64,
                70, 74, 78, 82, 86],
    "itemsize": ROW,
})
TCP_OPTIONS_AT = 70
ETH_ADDRS = np.array([0x02, 0, 0, 0, 0, 0x0B, 0x02, 0, 0, 0, 0, 0x0A], np.uint8)  # dst, src
SYN_OPTIONS = np.array([2, 4, MSS >> 8, MSS & 0xFF, 4, 2, 8, 10, 0, 0, 0, 0, 0, 0, 0, 0,
                        1, 3, 3, WSCALE], np.uint8)
TS_HEAD = np.array([1, 1, 8, 10], np.uint8)

# Per-packet arrays kept between simulation and layout, and the wrap of their wire fields
PACKET_DTYPES = {"t": np.int64, "dir": np.uint8, "seq": np.uint32,
                 "ack": np.uint32, "flags": np.uint8, "win": np.uint16, "paylen": np.uint16,
                 "tsval": np.uint32, "tsecr": np.uint32, "nsack": np.uint8,
                 "sack_edges": np.uint32, "ip_id": np.uint16, "conn": np.int32}
MASKS = {"seq": 0xFFFFFFFF, "ack": 0xFFFFFFFF, "tsval": 0xFFFFFFFF, "tsecr": 0xFFFFFFFF,
         "sack_edges": 0xFFFFFFFF, "ip_id": 0xFFFF}


def _be_bytes(values: np.ndarray) -> np.ndarray:
    """Big-endian bytes of 32-bit values, one row of 4 per value."""
    return values.astype(">u4").view(np.uint8).reshape(-1, 4)


def _group_starts(keys: np.ndarray) -> np.ndarray:
    """Indices where a sorted key array starts a new run of equal values."""
    return np.flatnonzero(np.r_[keys.size > 0, keys[1:] != keys[:-1]])


def _rank_in_group(keys: np.ndarray) -> np.ndarray:
    """Position of each element within its run of equal values (keys sorted)."""
    starts = _group_starts(keys)
    lengths = np.diff(np.r_[starts, keys.size])
    return np.arange(keys.size) - np.repeat(starts, lengths)


class Connection:
    """One simulated bulk transfer: its parameters, its packets and its ground truth.

    The random parameters come first from the connection's own generator, so that simulating
    again with another segment count keeps them (and the loss pattern of the common prefix).
    """

    def __init__(self, index: int, seed: np.random.SeedSequence, loss: float) -> None:
        self.index = index
        self.seed = seed
        self.loss = loss
        rng = np.random.default_rng(seed)
        self.rtt = int(rng.integers(10_000, 100_001))
        self.dt = max(self.rtt // int(rng.integers(16, 65)), 20)
        self.t0 = int(rng.integers(0, 2_000_000))
        self.wrap_at = float(rng.random()) if rng.random() < 0.5 else None
        self.isn_a = int(rng.integers(0, 2**32))
        self.isn_b = int(rng.integers(0, 2**32))
        self.last_len = int(rng.integers(1, MSS + 1))
        self.rng_state = rng.bit_generator.state
        self.a_ip = 0x0A010000 + index + 1
        self.b_ip = 0x0A020000 + index % 250 + 1
        self.a_port = 20000 + index % 40000
        self.b_port = 5001
        self.packets: dict[str, np.ndarray] = {}
        self.truth: dict[str, Any] = {}

    def simulate(self, n_seg: int) -> int:
        """Simulate ``n_seg`` data segments; fill :attr:`packets` and :attr:`truth`."""
        if n_seg < NEVER_LOST_TAIL + 1:
            raise ValueError("too few packets per connection")
        rng = np.random.default_rng()
        rng.bit_generator.state = self.rng_state
        rtt, rto = self.rtt, RTO_MIN_US + self.rtt
        seglen = np.full(n_seg, MSS, np.int64)
        seglen[-1] = self.last_len
        off = np.zeros(n_seg + 1, np.int64)
        np.cumsum(seglen, out=off[1:])
        total = int(off[-1])
        isn_a = self.isn_a if self.wrap_at is None else 2**32 - 1 - int(self.wrap_at * total)

        lost = rng.random(n_seg) < self.loss
        lost[-NEVER_LOST_TAIL:] = False
        holes = np.flatnonzero(lost)
        retx_lost = rng.random(holes.size) < RETX_LOSS
        delivered_new = np.flatnonzero(~lost)
        trigger = delivered_new[np.searchsorted(delivered_new, holes) + 2]

        t_syn = self.t0
        t_hs_ack = t_syn + rtt + 5
        t_new = t_hs_ack + 5 + np.arange(n_seg, dtype=np.int64) * self.dt
        for m in np.flatnonzero(retx_lost):  # an RTO stalls the sender until its ACK
            r1 = t_new[trigger[m]] + rtt + 5
            stop = np.searchsorted(t_new, r1, "right")
            resume = r1 + rto + rtt + 10
            if stop < n_seg and t_new[stop] < resume:
                t_new[stop:] += resume - t_new[stop]
        r1 = t_new[trigger] + rtt + 5
        r2 = r1[retx_lost] + rto

        # every transmission, in sending order (kind 0 new, 1 fast retransmit, 2 RTO)
        tx_t = np.concatenate([t_new, r1, r2])
        tx_k = np.concatenate([np.arange(n_seg), holes, holes[retx_lost]])
        tx_kind = np.concatenate([np.zeros(n_seg, np.int8), np.ones(holes.size, np.int8),
                                  np.full(r2.size, 2, np.int8)])
        tx_ok = np.concatenate([~lost, ~retx_lost, np.ones(r2.size, bool)])
        order = np.lexsort((tx_kind, tx_t))
        tx_t, tx_k, tx_kind, tx_ok = tx_t[order], tx_k[order], tx_kind[order], tx_ok[order]

        # receiver: delivered segments in arrival order
        ev_t, ev_k, ev_retx = tx_t[tx_ok], tx_k[tx_ok], tx_kind[tx_ok] > 0
        n_ev = ev_t.size
        top = np.maximum.accumulate(ev_k)
        opened = np.searchsorted(top, holes, "right")  # first arrival above the hole
        filled = np.empty(holes.size, np.int64)  # arrival of its delivered retransmission
        retx_at = np.flatnonzero(ev_retx)
        filled[np.searchsorted(holes, ev_k[retx_at])] = retx_at

        # (arrival, open hole) pairs, sorted by arrival then hole
        span = filled - opened
        pair_h = np.repeat(holes, span)
        pair_e = np.repeat(opened - (np.cumsum(span) - span), span) + np.arange(int(span.sum()))
        o = np.lexsort((pair_h, pair_e))
        pair_h, pair_e = pair_h[o], pair_e[o]
        n_holes = np.bincount(pair_e, minlength=n_ev)
        rcv_nxt = top + 1
        first = _group_starts(pair_e)
        rcv_nxt[pair_e[first]] = pair_h[first]

        # SACK blocks: received runs above each open hole, up to the next hole or the top
        same = np.r_[pair_e[1:] == pair_e[:-1], False]
        left = pair_h + 1
        right = np.where(same, np.roll(pair_h, -1), top[pair_e] + 1)
        ok = left < right
        blk_e, blk_l, blk_r = pair_e[ok], left[ok], right[ok]
        k = ev_k[blk_e]
        latest_last = ~((blk_l <= k) & (k < blk_r))
        o = np.lexsort((-blk_l, latest_last, blk_e))
        blk_e, blk_l, blk_r = blk_e[o], blk_l[o], blk_r[o]
        rank = _rank_in_group(blk_e)
        keep = rank < 3
        blk_e, blk_l, blk_r, rank = blk_e[keep], blk_l[keep], blk_r[keep], rank[keep]
        nsack = np.bincount(blk_e, minlength=n_ev)
        edges = np.zeros((n_ev, 6), np.int64)
        edges[blk_e, 2 * rank] = off[blk_l]
        edges[blk_e, 2 * rank + 1] = off[blk_r]

        # which arrivals the receiver ACKs: immediately while holes exist or when filling one,
        # else every second segment of a run of in-order arrivals
        immediate = (n_holes > 0) | ev_retx
        run_start = ~immediate & np.r_[True, immediate[:-1]]
        idx = np.arange(n_ev)
        pos = idx - np.maximum.accumulate(np.where(run_start, idx, 0))
        acked = immediate | (pos % 2 == 1)
        ack_delay = np.zeros(n_ev, np.int64)
        if not acked[-1]:
            acked[-1] = True
            ack_delay[-1] = DELACK_US
        if rcv_nxt[-1] != n_seg:
            raise AssertionError("simulation left data unacknowledged")
        last_ack = np.maximum.accumulate(np.where(acked, rcv_nxt, 0))
        updates = ev_k <= np.r_[0, last_ack[:-1]]
        recent = np.maximum.accumulate(np.where(updates, idx, 0))
        ev_tsval = TS_BASE_A + ev_t // 1000

        # b -> a: SYN-ACK, ACKs, FIN-ACK
        ack_t = ev_t[acked] + rtt + ack_delay[acked]
        t_fin = int(ack_t[-1]) + 200
        fin_seq = isn_a + 1 + total
        n_ack = ack_t.size
        b_t = np.concatenate([[t_syn + rtt], ack_t, [t_fin + rtt]])
        b_tsval = TS_BASE_B + (b_t - rtt // 2) // 1000
        syn_tsval = TS_BASE_A + t_syn // 1000
        b = {
            "t": b_t,
            "seq": np.r_[self.isn_b, np.full(n_ack + 1, self.isn_b + 1)],
            "ack": np.concatenate([[isn_a + 1], isn_a + 1 + off[rcv_nxt[acked]], [fin_seq + 1]]),
            "flags": np.r_[SYN | ACK, np.full(n_ack, ACK), FIN | ACK],
            "win": np.r_[SYN_WIN_B, np.full(n_ack + 1, WIN_B)],
            "paylen": np.zeros(n_ack + 2, np.int64),
            "tsval": b_tsval,
            "tsecr": np.concatenate([[syn_tsval], ev_tsval[recent[acked]],
                                     [TS_BASE_A + t_fin // 1000]]),
            "nsack": np.r_[0, nsack[acked], 0],
        }
        b_edges = np.zeros((n_ack + 2, 6), np.int64)
        used = np.arange(6) < 2 * nsack[acked][:, None]
        b_edges[1:-1] = np.where(used, edges[acked] + (isn_a + 1), 0)

        # a -> b: SYN, third ACK, every transmission, FIN, last ACK
        n_tx = tx_t.size
        a_t = np.concatenate([[t_syn, t_hs_ack], tx_t, [t_fin, t_fin + rtt + 5]])
        flags = np.full(n_tx, ACK)
        flags[tx_k == n_seg - 1] |= PSH
        seen = np.searchsorted(b_t, a_t, "right") - 1
        a = {
            "t": a_t,
            "seq": np.concatenate([[isn_a, isn_a + 1], isn_a + 1 + off[tx_k],
                                   [fin_seq, fin_seq + 1]]),
            "ack": np.r_[0, np.full(n_tx + 2, self.isn_b + 1), self.isn_b + 2],
            "flags": np.r_[SYN, ACK, flags, FIN | ACK, ACK],
            "win": np.r_[SYN_WIN_A, np.full(n_tx + 3, WIN_A)],
            "paylen": np.r_[0, 0, seglen[tx_k], 0, 0],
            "tsval": TS_BASE_A + a_t // 1000,
            "tsecr": np.where(seen >= 0, b_tsval[np.maximum(seen, 0)], 0),
            "nsack": np.zeros(a_t.size, np.int64),
        }

        # merge both directions in time order (at equal times, the arriving ACK first)
        n_a, n_b = a_t.size, b_t.size
        merged = {name: np.concatenate([a[name], b[name]]) for name in a}
        direction = np.r_[np.zeros(n_a, np.int64), np.ones(n_b, np.int64)]
        merged["sack_edges"] = np.concatenate([np.zeros((n_a, 6), np.int64), b_edges])
        merged["dir"] = direction
        merged["ip_id"] = np.r_[np.arange(n_a), np.arange(n_b)]
        merged["conn"] = np.full(n_a + n_b, self.index)
        order = np.argsort(merged["t"] * 2 + (1 - direction), kind="stable")
        self.packets = {name: (values[order] & MASKS.get(name, -1)).astype(PACKET_DTYPES[name])
                        for name, values in merged.items()}

        rexmt = np.r_[holes, holes[retx_lost]]
        self.truth = {
            "index": self.index,
            "a_addr": _ip_text(self.a_ip), "a_port": self.a_port,
            "b_addr": _ip_text(self.b_ip), "b_port": self.b_port,
            "isn_a": isn_a, "isn_b": self.isn_b,
            "wraps": isn_a + 1 + total >= 2**32,
            "rtt_us": rtt, "segment_interval_us": self.dt, "data_segments": n_seg,
            "a2b": {
                "total_packets": n_a, "actual_data_pkts": n_tx,
                "actual_data_bytes": int(seglen[tx_k].sum()), "unique_bytes_sent": total,
                "rexmt_data_pkts": int(rexmt.size), "rexmt_data_bytes": int(seglen[rexmt].sum()),
                "sack_pkts_sent": 0, "dsack_pkts_sent": 0, "max_sack_blks_ack": 0,
                "syn_pkts_sent": 1, "fin_pkts_sent": 1,
                "losses": int(holes.size), "fast_retransmits": int(holes.size),
                "rto_retransmits": int(retx_lost.sum()),
            },
            "b2a": {
                "total_packets": n_b, "actual_data_pkts": 0, "actual_data_bytes": 0,
                "unique_bytes_sent": 0, "rexmt_data_pkts": 0, "rexmt_data_bytes": 0,
                "sack_pkts_sent": int((nsack[acked] > 0).sum()), "dsack_pkts_sent": 0,
                "max_sack_blks_ack": int(nsack.max(initial=0)),
                "syn_pkts_sent": 1, "fin_pkts_sent": 1,
            },
        }
        return n_a + n_b


def _ip_text(addr: int) -> str:
    """Dotted-quad text of an IPv4 address."""
    return ".".join(str((addr >> s) & 0xFF) for s in (24, 16, 8, 0))


def _plan(conn: Connection, budget: int) -> None:
    """Simulate ``conn`` with the segment count that makes about ``budget`` packets."""
    n_seg = max((budget - 6) * 2 // 3, NEVER_LOST_TAIL + 1)
    got = conn.simulate(n_seg)
    if got != budget:
        n_seg = max(n_seg + round((budget - got) * n_seg / got), NEVER_LOST_TAIL + 1)
        conn.simulate(n_seg)


def _write_records(out: BinaryIO, pk: dict[str, np.ndarray], conns: list[Connection]) -> None:
    """Lay out the pcap records of the packets ``pk`` (time-sorted) and append them to ``out``."""
    n = pk["t"].size
    rec = np.zeros(n, RECORD)
    t = pk["t"]
    is_syn = (pk["flags"] & SYN) != 0
    nsack = pk["nsack"].astype(np.int64)
    thl = np.where(is_syn, 40, 32 + np.where(nsack > 0, 4 + 8 * nsack, 0))
    ip_len = 20 + thl + pk["paylen"].astype(np.int64)
    wire = 14 + ip_len
    caplen = np.minimum(wire, SNAPLEN)
    a_ip = np.array([c.a_ip for c in conns], np.int64)[pk["conn"]]
    b_ip = np.array([c.b_ip for c in conns], np.int64)[pk["conn"]]
    a_port = np.array([c.a_port for c in conns], np.int64)[pk["conn"]]
    b_port = np.array([c.b_port for c in conns], np.int64)[pk["conn"]]
    from_a = pk["dir"] == 0

    rec["ts_sec"] = EPOCH_S + t // 1_000_000
    rec["ts_usec"] = t % 1_000_000
    rec["incl_len"] = caplen
    rec["orig_len"] = wire
    rec["eth"] = ETH_ADDRS
    rec["eth"][~from_a] = np.r_[ETH_ADDRS[6:], ETH_ADDRS[:6]]
    rec["ethertype"] = 0x0800
    rec["ip_vhl"] = 0x45
    rec["ip_len"] = ip_len
    rec["ip_id"] = pk["ip_id"]
    rec["ip_frag"] = 0x4000  # DF
    rec["ip_ttl"] = 64
    rec["ip_proto"] = 6
    rec["ip_src"] = np.where(from_a, a_ip, b_ip)
    rec["ip_dst"] = np.where(from_a, b_ip, a_ip)
    rec["sport"] = np.where(from_a, a_port, b_port)
    rec["dport"] = np.where(from_a, b_port, a_port)
    rec["seq"] = pk["seq"]
    rec["ack"] = pk["ack"]
    rec["doff"] = (thl // 4) << 4
    rec["flags"] = pk["flags"]
    rec["win"] = pk["win"]
    rec["ts_head"] = TS_HEAD
    rec["tsval"] = pk["tsval"]
    rec["tsecr"] = pk["tsecr"]
    sacked = np.flatnonzero(nsack > 0)
    head = np.zeros((sacked.size, 4), np.uint8)
    head[:, :2] = 1
    head[:, 2] = 5
    head[:, 3] = 2 + 8 * nsack[sacked]
    rec["sack_head"][sacked] = head
    rec["sack"] = pk["sack_edges"]

    raw = rec.view(np.uint8).reshape(n, ROW)
    syns = np.flatnonzero(is_syn)
    opts = np.broadcast_to(SYN_OPTIONS, (syns.size, SYN_OPTIONS.size)).copy()
    opts[:, 8:12] = _be_bytes(pk["tsval"][syns])
    opts[:, 12:16] = _be_bytes(pk["tsecr"][syns])
    raw[syns, TCP_OPTIONS_AT:TCP_OPTIONS_AT + SYN_OPTIONS.size] = opts
    keep = np.arange(ROW) < (16 + caplen)[:, None]
    out.write(raw[keep].tobytes())


def generate(path: Path, packets: int, connections: int, seed: int,
             loss: float = 0.01, chunk: int = 1 << 18) -> dict[str, Any]:
    """Write the synthetic capture to ``path`` and its ground truth to ``path.truth.json``.

    Returns the ground truth (also written to the sidecar).
    """
    if not 0 < connections <= 65000:
        raise ValueError("connections must be in 1..65000")
    seeds = np.random.SeedSequence(seed).spawn(connections)
    conns = [Connection(i, s, loss) for i, s in enumerate(seeds)]
    budgets = np.full(connections, packets // connections)
    budgets[: packets % connections] += 1
    for conn, budget in zip(conns, budgets):
        _plan(conn, int(budget))

    merged = {name: np.concatenate([c.packets[name] for c in conns])
              for name in PACKET_DTYPES}
    for conn in conns:
        conn.packets = {}
    order = np.argsort(merged["t"] * 2 + (1 - merged["dir"]), kind="stable")
    total = int(order.size)
    with open(path, "wb") as out:
        out.write(np.array([0xA1B2C3D4, 0x00040002, 0, 0, SNAPLEN, 1], "<u4").tobytes())
        for start in range(0, total, chunk):
            sel = order[start:start + chunk]
            _write_records(out, {name: v[sel] for name, v in merged.items()}, conns)
    truth = {
        "generator": {"packets": packets, "connections": connections, "seed": seed,
                      "loss": loss, "retransmission_loss": RETX_LOSS, "mss": MSS,
                      "snaplen": SNAPLEN},
        "packets": total,
        "connections": [c.truth for c in conns],
    }
    Path(f"{path}.truth.json").write_text(json.dumps(truth, indent=1))
    return truth


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", required=True, type=Path, help="pcap file to write")
    parser.add_argument("--packets", type=int, default=1_000_000, help="about this many packets")
    parser.add_argument("--connections", type=int, default=200, help="concurrent transfers")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--loss", type=float, default=0.01,
                        help="loss probability of a first transmission")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    truth = generate(args.output, args.packets, args.connections, args.seed, args.loss)
    elapsed = time.perf_counter() - start
    print(f"{args.output}: {truth['packets']} packets, {args.connections} connections "
          f"in {elapsed:.2f} s ({truth['packets'] / elapsed:,.0f} packets/s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
