"""Many captures at once: ``report DIR --table`` with one worker against N workers.

    python benchmarks/many_captures.py [--captures 100] [--packets 20000] [--jobs 2] [--runs 1]

Generates ``--captures`` synthetic captures (``gen_synthetic.py``, seeds 1..N, 10 connections
each) into ``benchmarks/out/many-<captures>x<packets>/`` on first use, then runs
``tcpsack-analyze report DIR --table T.csv --force --jobs J`` for J = 1 and J = ``--jobs`` as
child processes (output to /dev/null) and prints, per J: the best wall time of ``--runs``, the
speed-up over J = 1, the peak RSS of the largest single process (``ru_maxrss`` from
``os.wait4``, which covers the child and its workers) and the peak of the whole process tree's
RSS summed (sampled every 50 ms with psutil), and whether the table is complete: one row per
connection and direction of every capture, against the generator's own connection counts.
Expected on a machine with J free cores: speed-up close to J, memory growing with the workers
(one capture each), not with the number of captures.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gen_synthetic import generate

CONNECTIONS = 10


def make_captures(count: int, packets: int) -> tuple[Path, int]:
    """The capture directory (generated once) and the number of connection-direction rows."""
    out = HERE / "out" / f"many-{count}x{packets}"
    out.mkdir(parents=True, exist_ok=True)
    rows = 0
    for seed in range(1, count + 1):
        path = out / f"c{seed:03d}.pcap"
        truth = Path(str(path) + ".truth.json")
        if not truth.exists():
            generate(path, packets, CONNECTIONS, seed)
        rows += 2 * len(json.loads(truth.read_text())["connections"])
    return out, rows


def _tree_rss(pid: int, stop: threading.Event, peak: list[int]) -> None:
    import psutil

    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    while not stop.wait(0.05):
        try:
            procs = [root, *root.children(recursive=True)]
            peak[0] = max(peak[0], sum(p.memory_info().rss for p in procs))
        except psutil.Error:
            continue


def run_once(directory: Path, table: Path, jobs: int) -> tuple[float, float, float | None]:
    """Wall seconds, largest process's peak RSS (MB), and the tree's summed peak RSS (MB)."""
    cmd = ["tcpsack-analyze", "report", str(directory), "--table", str(table), "--force", "--jobs", str(jobs)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stop, peak = threading.Event(), [0]
    try:
        import psutil  # noqa: F401 - only to know whether the tree can be sampled

        sampler: threading.Thread | None = threading.Thread(target=_tree_rss, args=(proc.pid, stop, peak), daemon=True)
        sampler.start()
    except ImportError:
        sampler = None
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stop.set()
    if sampler is not None:
        sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"report --jobs {jobs} failed ({proc.returncode}): {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_maxrss / 1024, (peak[0] / 2**20 if sampler is not None else None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--captures", type=int, default=100)
    parser.add_argument("--packets", type=int, default=20_000, help="about this many packets per capture")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="workers to compare with one")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args(argv)
    directory, expected_rows = make_captures(args.captures, args.packets)
    table = directory.parent / f"{directory.name}.table.csv"
    base = None
    print(f"{args.captures} captures of ~{args.packets} packets in {directory}")
    print(f"{'jobs':>4}  {'wall s':>7}  {'speed-up':>8}  {'max proc RSS MB':>15}  {'tree RSS MB':>11}  table")
    for jobs in sorted({1, args.jobs}):
        best = min((run_once(directory, table, jobs) for _ in range(args.runs)), key=lambda m: m[0])
        wall, proc_mb, tree_mb = best
        base = base or wall
        with open(table, newline="") as fh:
            rows = sum(1 for _ in csv.DictReader(fh))
        complete = "complete" if rows == expected_rows else f"INCOMPLETE: {rows} of {expected_rows} rows"
        tree = f"{tree_mb:11.0f}" if tree_mb is not None else f"{'-':>11}"
        print(f"{jobs:>4}  {wall:7.2f}  {base / wall:8.2f}  {proc_mb:15.0f}  {tree}  {complete}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
