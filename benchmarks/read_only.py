"""Time the capture reader alone: ``read_capture()`` over a synthetic capture, no connection work.

    python benchmarks/read_only.py [--packets 1000000] [--runs 3] [--pcapng] [--chunk BYTES]

Each run is a fresh interpreter (as a ``report`` command would be), so the figures include the
import of the reader (numpy and the compiled core); the wall and CPU times are the best of
``--runs``, the peak RSS the largest. ``--pcapng`` reads the same packets converted to pcapng
(cached next to the pcap).

Captures come from ``run.py``'s cache (``benchmarks/out/``; generated on first use).
"""
from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from run import capture

CHILD = r"""
import sys, time, resource
t0, c0 = time.perf_counter(), time.process_time()
from tcpsack_analyze.reader import ReadStatus, read_capture
st = ReadStatus(sys.argv[1])
n = 0
for b in read_capture(sys.argv[1], st, chunk_bytes=int(sys.argv[2])):
    n += len(b)
    del b
print(time.perf_counter() - t0, time.process_time() - c0, st.counts.records, n)
"""


def to_pcapng(pcap: Path, out: Path) -> None:
    """Write the records of the classic pcap ``pcap`` as Enhanced Packet Blocks of one interface."""
    from tcpsack_analyze.reader import chunk_records, open_capture

    core = open_capture(str(pcap))
    tmp = out.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 28))  # SHB
        f.write(struct.pack("<IIHHII", 1, 20, 1, 0, 0, 20))  # IDB: Ethernet, microseconds
        while core.next_chunk(16 << 20):
            b = chunk_records(core)
            cl = b.caplen
            blen = 32 + (cl + 3) // 4 * 4
            offs = np.concatenate([[0], np.cumsum(blen)[:-1]])
            block = np.zeros(int(blen.sum()), dtype=np.uint8)
            us = (b.ts_ns // 1000).astype(np.uint64)
            words = np.stack([np.full_like(cl, 6), blen, np.zeros_like(cl), (us >> np.uint64(32)).astype(np.int64),
                              (us & np.uint64(0xFFFFFFFF)).astype(np.int64), cl, b.wirelen], axis=1).astype("<u4")
            block[offs[:, None] + np.arange(28)] = words.view(np.uint8).reshape(-1, 28)
            block[(offs + blen - 4)[:, None] + np.arange(4)] = blen.astype("<u4")[:, None].view(np.uint8)
            seg = np.repeat(np.arange(cl.size), cl)
            within = np.arange(seg.size) - np.repeat(np.cumsum(cl) - cl, cl)
            block[offs[seg] + 28 + within] = b.buf[b.start[seg] + within]
            f.write(block.tobytes())
    tmp.rename(out)


def run_child(code: str, *args: str, env: dict | None = None) -> tuple[list[str], float]:
    """Run ``code`` in a fresh interpreter: its stdout fields and its peak RSS in MB."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=out, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"child failed with status {status}")
        out.seek(0)
        return out.read().decode().split(), usage.ru_maxrss / 1024.0


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packets", type=int, default=1_000_000)
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--loss", type=float, default=0.01)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pcapng", action="store_true", help="read the capture converted to pcapng")
    parser.add_argument("--chunk", type=int, default=16 << 20, help="bytes of capture per batch (read_capture's chunk_bytes)")
    args = parser.parse_args(argv)

    path, _ = capture(args.packets, args.connections, args.seed, args.loss)
    if args.pcapng:
        ng = path.with_suffix(".pcapng")
        if not ng.exists():
            to_pcapng(path, ng)
        path = ng
    runs = [run_child(CHILD, str(path), str(args.chunk)) for _ in range(args.runs)]
    wall = min(float(r[0][0]) for r in runs)
    cpu = min(float(r[0][1]) for r in runs)
    records, tcp = int(runs[0][0][2]), int(runs[0][0][3])
    rss = max(r[1] for r in runs)
    print(json.dumps({"capture": path.name, "chunk_bytes": args.chunk, "records": records,
                      "tcp_packets": tcp, "best_wall_s": round(wall, 3), "best_cpu_s": round(cpu, 3),
                      "packets_per_s": round(records / wall), "peak_rss_mb": round(rss, 1),
                      "load_avg": round(os.getloadavg()[0], 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
