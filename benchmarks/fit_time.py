"""Time the Gilbert-Elliott fits of a capture (issue 17 phase 6): the CPU time of
``fit_gilbert_elliott_all`` over every direction's loss sequence, best of ``--runs``.

    python benchmarks/fit_time.py CAPTURE [--runs 10]

The capture is analysed once to collect the sequences (not timed); then the fits alone are
timed, as one call, and their passes counted. The figures are in benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from tcpsack_analyze.analysis import stream_report
from tcpsack_analyze.loss.patterns import fit_gilbert_elliott_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("capture")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    sequences: list[np.ndarray] = []
    list(stream_report(args.capture, on_result=lambda res: sequences.extend(r.lost_flags for r in res.loss)))
    best, fits = float("inf"), []
    for _ in range(args.runs):
        start = time.process_time()
        fits = fit_gilbert_elliott_all(sequences)
        best = min(best, time.process_time() - start)
    fitted = [f for f in fits if f is not None]
    runs = sum(int(np.count_nonzero(np.diff(s.astype(np.int8)))) + 1 for s in sequences if s.any())
    passes = [f.iterations for f in fitted]
    print(f"{args.capture}: {len(sequences)} directions, {len(fitted)} fitted, {sum(map(len, sequences)):,} transmissions, "
          f"{runs:,} runs; passes mean {np.mean(passes) if passes else 0:.1f}, at the cap {sum(not f.converged for f in fitted)}; "
          f"fit {best * 1e3:.1f} ms CPU (best of {args.runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
