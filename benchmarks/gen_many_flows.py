"""Generate a capture of many short connections: a busy web server, or a SYN scan.

    python benchmarks/gen_many_flows.py -o FILE --shape web --connections 100000 [--seed 1]
    python benchmarks/gen_many_flows.py -o FILE --shape scan --connections 1000000 [--answered 0]

Issue 16: a capture of 1M packets over 100k connections took minutes and gigabytes where 1M
packets over 200 bulk connections take seconds; this makes that shape (and a SYN scan's) on
demand, for ``benchmarks/run.py --shape web|scan``. Classic pcap, little-endian, microsecond
timestamps, Ethernet, headers only (snap length 54: every record is Ethernet + IPv4 + a 20-byte
TCP header, no options; the IP total length gives the real size).

- ``web``: the capture is taken at the server (192.0.2.1:443); connection ``i`` comes from
  client 10.0.0.0 + i, port 20000 + i % 40000, starts at i * ``--interval`` µs, has an RTT
  drawn from 5-80 ms, and is 10 packets: SYN; SYN-ACK; ACK; request (300 B, PSH); response
  (1448 B); response (1448 B, PSH); ACK of the response; server FIN; client FIN-ACK; last ACK.
- ``scan``: one scanner (198.51.100.7, source port 40000 + i % 20000) sends a SYN to port
  1 + i % 65535 of 10.0.0.0 + i // 65535 every ``--interval`` µs; a share ``--answered`` of the
  ports answer with RST-ACK (closed), the others stay silent (filtered). One or two packets
  per connection.

Packets are written in time order. Everything is vectorised with numpy (no per-packet Python).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

EPOCH_S = 1_700_000_000
SNAPLEN = 54
SERVER_IP, SERVER_PORT = 0xC0000201, 443  # 192.0.2.1
CLIENT_BASE = 0x0A000000  # 10.0.0.0
SCANNER_IP = 0xC6336407  # 198.51.100.7
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
RECORD = np.dtype([
    ("ts_sec", "<u4"), ("ts_usec", "<u4"), ("incl_len", "<u4"), ("orig_len", "<u4"),
    ("eth", "u1", 12), ("ethertype", ">u2"),
    ("ip_vhl", "u1"), ("ip_tos", "u1"), ("ip_len", ">u2"), ("ip_id", ">u2"), ("ip_frag", ">u2"),
    ("ip_ttl", "u1"), ("ip_proto", "u1"), ("ip_sum", ">u2"), ("ip_src", ">u4"), ("ip_dst", ">u4"),
    ("sport", ">u2"), ("dport", ">u2"), ("seq", ">u4"), ("ack", ">u4"), ("doff", "u1"), ("flags", "u1"),
    ("win", ">u2"), ("sum", ">u2"), ("urp", ">u2"),
])
assert RECORD.itemsize == 16 + SNAPLEN

# web: per packet of a connection: from the client?, flags, payload, time in RTTs + µs, seq and
# ack offsets (relative to the client's and the server's ISN + 1)
WEB = [
    # client, flags, payload, rtts, us, seq offset (own), ack offset (peer's)
    (True, SYN, 0, 0, 0, -1, None),
    (False, SYN | ACK, 0, 0, 10, -1, 0),
    (True, ACK, 0, 1, 0, 0, 0),
    (True, PSH | ACK, 300, 1, 10, 0, 0),
    (False, ACK, 1448, 1, 50, 0, 300),
    (False, PSH | ACK, 1448, 1, 60, 1448, 300),
    (True, ACK, 0, 2, 0, 300, 2896),
    (False, FIN | ACK, 0, 2, 10, 2896, 300),
    (True, FIN | ACK, 0, 3, 0, 300, 2897),
    (False, ACK, 0, 3, 10, 2897, 301),
]


def _columns(n: int) -> dict[str, np.ndarray]:
    return {name: np.zeros(n, np.int64) for name in ("t", "src", "dst", "sport", "dport", "seq", "ack", "flags", "paylen")}


def web(connections: int, interval_us: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The packets of ``connections`` 10-packet web connections (see the module doc)."""
    i = np.arange(connections, dtype=np.int64)
    start = i * interval_us
    rtt = rng.integers(5_000, 80_000, connections)
    client, cport = CLIENT_BASE + i, 20000 + i % 40000
    server, sport = np.full(connections, SERVER_IP), np.full(connections, SERVER_PORT)
    isn_c, isn_s = rng.integers(0, 1 << 32, connections), rng.integers(0, 1 << 32, connections)
    parts = []
    for from_client, flags, paylen, rtts, us, seq_off, ack_off in WEB:
        p = _columns(connections)
        p["t"] = start + rtts * rtt + us
        own, peer = (isn_c, isn_s) if from_client else (isn_s, isn_c)
        p["src"], p["dst"] = (client, server) if from_client else (server, client)
        p["sport"], p["dport"] = (cport, sport) if from_client else (sport, cport)
        p["seq"] = (own + 1 + seq_off) % (1 << 32)
        p["ack"] = np.zeros(connections, np.int64) if ack_off is None else (peer + 1 + ack_off) % (1 << 32)
        p["flags"][:] = flags
        p["paylen"][:] = paylen
        parts.append(p)
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def scan(connections: int, interval_us: int, answered: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The packets of a SYN scan of ``connections`` ports (see the module doc)."""
    i = np.arange(connections, dtype=np.int64)
    syn = _columns(connections)
    syn["t"] = i * interval_us
    syn["src"], syn["dst"] = np.full(connections, SCANNER_IP), CLIENT_BASE + i // 65535
    syn["sport"], syn["dport"] = 40000 + i % 20000, 1 + i % 65535
    syn["seq"] = rng.integers(0, 1 << 32, connections)
    syn["flags"][:] = SYN
    k = np.flatnonzero(rng.random(connections) < answered)
    rst = {name: v[k].copy() for name, v in syn.items()}
    rst["t"] += rng.integers(100, 2_000, k.size)
    rst["src"], rst["dst"] = syn["dst"][k], syn["src"][k]
    rst["sport"], rst["dport"] = syn["dport"][k], syn["sport"][k]
    rst["ack"], rst["seq"] = (syn["seq"][k] + 1) % (1 << 32), np.zeros(k.size, np.int64)
    rst["flags"][:] = RST | ACK
    return {name: np.concatenate([syn[name], rst[name]]) for name in syn}


def write_pcap(path: Path, pk: dict[str, np.ndarray]) -> int:
    """Write the packets in time order as a pcap; returns how many."""
    order = np.argsort(pk["t"], kind="stable")
    n = int(order.size)
    rec = np.zeros(n, RECORD)
    t = pk["t"][order]
    rec["ts_sec"], rec["ts_usec"] = EPOCH_S + t // 1_000_000, t % 1_000_000
    rec["incl_len"] = SNAPLEN
    rec["orig_len"] = SNAPLEN + pk["paylen"][order]
    rec["eth"] = np.frombuffer(bytes.fromhex("020000000002020000000001"), np.uint8)
    rec["ethertype"], rec["ip_vhl"], rec["ip_ttl"], rec["ip_proto"] = 0x0800, 0x45, 64, 6
    rec["ip_len"] = 40 + pk["paylen"][order]
    rec["ip_frag"] = 0x4000
    for name in ("src", "dst"):
        rec[f"ip_{name}"] = pk[name][order]
    for name in ("sport", "dport", "seq", "ack", "flags"):
        rec[name] = pk[name][order]
    rec["doff"], rec["win"] = 5 << 4, 64240
    with open(path, "wb") as out:
        out.write(np.array([0xA1B2C3D4, 0x00040002, 0, 0, SNAPLEN, 1], "<u4").tobytes())
        out.write(rec.tobytes())
    return n


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", required=True, type=Path, help="pcap file to write")
    parser.add_argument("--shape", choices=["web", "scan"], default="web")
    parser.add_argument("--connections", type=int, default=100_000)
    parser.add_argument("--interval", type=int, default=100, metavar="US", help="µs between connection starts")
    parser.add_argument("--answered", type=float, default=0.0, help="scan: share of probes answered by RST-ACK")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.connections < 1 or args.interval < 1 or not 0 <= args.answered <= 1:
        parser.error("--connections and --interval must be positive, --answered in [0, 1]")
    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    pk = web(args.connections, args.interval, rng) if args.shape == "web" else scan(args.connections, args.interval, args.answered, rng)
    n = write_pcap(args.output, pk)
    print(f"{args.output}: {n} packets, {args.connections} {args.shape} connections in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
