"""Time the capture reader alone: ``read_capture()`` over a synthetic capture, no connection work.

    python benchmarks/read_only.py [--packets 1000000] [--runs 3] [--pcapng]
                                   [--walk auto|interpreted|compiled] [--compile-cost]

Each run is a fresh interpreter (as a ``report`` command would be), so the figures include the
import of the reader and, when the compiled walker is used, numba's start-up; the wall and CPU
times are the best of ``--runs``, the peak RSS the largest. ``--walk`` forces the interpreted
or the compiled record walker (``auto``: the reader's own choice by capture size).
``--pcapng`` reads the same packets converted to pcapng (cached next to the pcap).
``--compile-cost`` measures numba's cost instead: importing numba and compiling the walker
kernels with an empty cache, then loading them from the cache.

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
from tcpsack_analyze.reader import ReadStatus, read_capture, walk
from tcpsack_analyze.reader.pcapng import pcapng_walk
mode = sys.argv[2]
if mode != "auto":
    for k in (walk.pcap_walk, pcapng_walk):
        k.compile_after = 0 if mode == "compiled" else 1 << 62
st = ReadStatus(sys.argv[1])
n = 0
for b in read_capture(sys.argv[1], st):
    n += len(b)
compiled = "numba" in sys.modules
print(time.perf_counter() - t0, time.process_time() - c0, st.counts.records, n, compiled)
"""

COMPILE = r"""
import time
import numpy as np
t0 = time.perf_counter()
import numba
t1 = time.perf_counter()
from tcpsack_analyze.reader.walk import pcap_walk
from tcpsack_analyze.reader.pcapng import pcapng_walk
buf, out = np.zeros(256, np.uint8), np.empty(4, np.int64)
t2 = time.perf_counter()
pcap_walk(True, buf, 0, 64, False, 262144, out)
t3 = time.perf_counter()
pcapng_walk(True, buf, 0, 64, False, False, 1, out)
t4 = time.perf_counter()
print(t1 - t0, t3 - t2, t4 - t3)
"""


def to_pcapng(pcap: Path, out: Path) -> None:
    """Write the records of the classic pcap ``pcap`` as Enhanced Packet Blocks of one interface."""
    from tcpsack_analyze.reader.pcap import iter_pcap
    from tcpsack_analyze.reader.source import ByteSource

    src = ByteSource(str(pcap))
    head = src.read(4)
    tmp = out.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 28))  # SHB
        f.write(struct.pack("<IIHHII", 1, 20, 1, 0, 0, 20))  # IDB: Ethernet, microseconds
        for b in iter_pcap(src, head, 16 << 20):
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
    src.close()
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
    parser.add_argument("--walk", choices=["auto", "interpreted", "compiled"], default="auto")
    parser.add_argument("--compile-cost", action="store_true", help="measure numba's import and compile costs")
    args = parser.parse_args(argv)

    if args.compile_cost:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            for label in ("empty cache", "cached"):
                rows = [run_child(COMPILE, env=env)[0] for _ in range(args.runs if label == "cached" else 1)]
                imp, pcap, ng = (min(float(r[i]) for r in rows) for i in range(3))
                print(f"numba ({label}): import {imp:.2f} s, pcap kernel {pcap:.2f} s, pcapng kernel {ng:.2f} s")
        return 0

    path, _ = capture(args.packets, args.connections, args.seed, args.loss)
    if args.pcapng:
        ng = path.with_suffix(".pcapng")
        if not ng.exists():
            to_pcapng(path, ng)
        path = ng
    runs = [run_child(CHILD, str(path), args.walk) for _ in range(args.runs)]
    wall = min(float(r[0][0]) for r in runs)
    cpu = min(float(r[0][1]) for r in runs)
    records, tcp, compiled = int(runs[0][0][2]), int(runs[0][0][3]), runs[0][0][4] == "True"
    rss = max(r[1] for r in runs)
    print(json.dumps({"capture": path.name, "walk": args.walk, "numba_loaded": compiled, "records": records,
                      "tcp_packets": tcp, "best_wall_s": round(wall, 3), "best_cpu_s": round(cpu, 3),
                      "packets_per_s": round(records / wall), "peak_rss_mb": round(rss, 1),
                      "load_avg": round(os.getloadavg()[0], 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
