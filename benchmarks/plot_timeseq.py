"""Time to draw the time-sequence graph of a 1M-packet direction (the target: seconds).

    python benchmarks/plot_timeseq.py                 # 1M packets, one connection, 1% loss
    python benchmarks/plot_timeseq.py --packets 5000000 --format svg

The capture comes from ``run.py``'s cache (``benchmarks/out/``; generated on first use) with one
connection, so that one direction holds all the packets. Printed as one JSON line: seconds to
load (the analysis and the events, two passes over the capture), to compute the marks, to draw
them, to save the file, and how many marks were drawn against how many there were.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from run import capture

from tcpsack_analyze.plots import load
from tcpsack_analyze.plots.timeseq import draw, marks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packets", type=int, default=1_000_000)
    ap.add_argument("--loss", type=float, default=0.01)
    ap.add_argument("--format", default="png", choices=("png", "svg", "pdf"))
    args = ap.parse_args(argv)
    path, packets = capture(args.packets, 1, 1, args.loss)
    t0 = time.perf_counter()
    d = load(str(path)).busiest()
    t1 = time.perf_counter()
    m = marks(d)
    t2 = time.perf_counter()
    fig = draw(m)
    t3 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"timeseq.{args.format}"
        fig.savefig(out)
        size = out.stat().st_size
    t4 = time.perf_counter()
    print(json.dumps({
        "packets": packets, "events": len(d.require_events()), "load_s": round(t1 - t0, 2), "marks_s": round(t2 - t1, 2),
        "draw_s": round(t3 - t2, 2), "save_s": round(t4 - t3, 2), "render_s": round(t4 - t1, 2), "file_bytes": size,
        "data": [len(m.data), m.data_count], "acks": [len(m.ack), m.ack_count], "sack": [len(m.sack), m.sack_count],
        "retransmissions": sum(len(p) for p in m.rexmit.values()),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
