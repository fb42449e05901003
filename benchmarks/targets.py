"""Issue 17's "must hold" table in one run: `report` against `tcptrace -n -l`, side by side.

    python benchmarks/targets.py                 # every row, medians of 3 (about 10 minutes today)
    python benchmarks/targets.py --rows 1m small help --runs 5

Rows (each tool runs as a child process, output to /dev/null; the two tools alternate run by
run, so that a change of load touches both; wall time is the median of ``--runs``, peak RSS the
largest ``ru_maxrss``):

- ``1m``: 1M packets over 200 bulk connections, 1% loss (gen_synthetic.py);
- ``10m``: 10M packets of the same kind, ``report`` alone and with ``--jobs 2``;
- ``2000``: 1M packets over 2,000 bulk connections;
- ``web``: 1M packets over 100,000 ten-packet connections (gen_many_flows.py, a busy server);
- ``small``: a sample capture of under 10k packets;
- ``help``: ``tcpsack-analyze --help``.

The verdict of each target is printed under the table: at least 2x tcptrace's packets/s on one
core on 1M, 10M and 2,000 connections; at least 3x with ``--jobs 2`` on 10M; peak RSS under
150 MB on 10M and within 10% between 1M and 10M; the 100k-connection capture within 2x the time
of the bulk 1M one and under 150 MB; the small capture under 0.15 s; ``--help`` under 0.1 s.
Captures are generated on first use and cached in ``benchmarks/out/`` (about 1 GB for 10M).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from run import capture, many_flows_capture, ours_command, run_child

HERE = Path(__file__).resolve().parent
SMALL = HERE.parent / "sample_traces" / "http_206_sack_recovery.pcap"
ROWS = ("1m", "10m", "2000", "web", "small", "help")


@dataclass
class Timing:
    """Median wall time and largest peak RSS of one command over the runs."""

    label: str
    packets: int
    seconds: float
    rss_mb: float

    @property
    def rate(self) -> float:
        return self.packets / self.seconds if self.seconds > 0 else 0.0


def packets_in(path: Path) -> int:
    """TCP packets of a capture, as the reader decodes them (in a child process: a parent that
    imported the package would lend its RSS to the children it forks before they exec)."""
    code = "import sys\nfrom tcpsack_analyze.reader import ReadStatus, read_capture\n" \
        "print(sum(len(b) for b in read_capture(sys.argv[1], ReadStatus(sys.argv[1]))))"
    return int(subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True).stdout)


def alternate(commands: dict[str, list[str]], packets: int, runs: int) -> dict[str, Timing]:
    """Run each command ``runs`` times, taking turns; the median wall time of each."""
    walls: dict[str, list[float]] = {k: [] for k in commands}
    rss: dict[str, float] = {k: 0.0 for k in commands}
    for _ in range(runs):
        for label, cmd in commands.items():
            wall, peak = run_child(cmd, Path(os.devnull))
            walls[label].append(wall)
            rss[label] = max(rss[label], peak)
    out = {k: Timing(k, packets, statistics.median(v), rss[k]) for k, v in walls.items()}
    for t in out.values():
        print(f"| {t.label} | {t.packets:,} | {t.seconds:.3f} | {t.rate:,.0f} | {t.rss_mb:.1f} |", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    ours = ours_command()
    tcptrace = shutil.which("tcptrace")
    if ours is None or tcptrace is None:
        print("error: both tcpsack-analyze and tcptrace are needed", file=sys.stderr)
        return 2
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print("| row | packets | seconds (median) | packets/s | peak RSS MB |\n|---|---|---|---|---|")
    got: dict[str, dict[str, Timing]] = {}

    def bulk(row: str, packets: int, connections: int, jobs: bool = False) -> None:
        path, n = capture(packets, connections, 1, 0.01)
        cmds = {f"{row} tcptrace": [tcptrace, "-n", "-l", str(path)], f"{row} ours": ours + ["report", str(path), "--format", "json"]}
        if jobs:
            cmds[f"{row} ours --jobs 2"] = ours + ["report", str(path), "--format", "json", "--jobs", "2"]
        got[row] = alternate(cmds, n, args.runs)

    if "1m" in args.rows:
        bulk("1m", 1_000_000, 200)
    if "10m" in args.rows:
        bulk("10m", 10_000_000, 200, jobs=True)
    if "2000" in args.rows:
        bulk("2000", 1_000_000, 2000)
    if "web" in args.rows:
        path, n = many_flows_capture("web", 100_000, 1)
        got["web"] = alternate({"web tcptrace": [tcptrace, "-n", "-l", str(path)],
                                "web ours": ours + ["report", str(path), "--format", "json"]}, n, args.runs)
    if "small" in args.rows:
        n = packets_in(SMALL)
        got["small"] = alternate({"small tcptrace": [tcptrace, "-n", "-l", str(SMALL)], "small ours": ours + ["report", str(SMALL)]}, n, args.runs)
    if "help" in args.rows:
        got["help"] = alternate({"help ours": ours + ["--help"]}, 1, args.runs)

    print(f"load average at end: {os.getloadavg()[0]:.2f}\n")
    verdicts: list[tuple[str, bool]] = []
    for row in ("1m", "10m", "2000"):
        if row in got:
            t = got[row]
            ratio = t[f"{row} ours"].rate / t[f"{row} tcptrace"].rate
            verdicts.append((f"{row}: ours/tcptrace packets/s {ratio:.2f} (>= 2)", ratio >= 2))
    if "10m" in got:
        t = got["10m"]
        ratio = t["10m ours --jobs 2"].rate / t["10m tcptrace"].rate
        verdicts.append((f"10m --jobs 2: ours/tcptrace packets/s {ratio:.2f} (>= 3)", ratio >= 3))
        rss = t["10m ours"].rss_mb
        verdicts.append((f"10m: peak RSS {rss:.0f} MB (< 150)", rss < 150))
        if "1m" in got:
            growth = rss / got["1m"]["1m ours"].rss_mb - 1
            verdicts.append((f"peak RSS 1M -> 10M {growth:+.1%} (within 10%)", abs(growth) <= 0.10))
    if "web" in got:
        w = got["web"]["web ours"]
        verdicts.append((f"100k connections: peak RSS {w.rss_mb:.0f} MB (< 150)", w.rss_mb < 150))
        if "1m" in got:
            ratio = w.seconds / got["1m"]["1m ours"].seconds
            verdicts.append((f"100k connections: {ratio:.2f}x the bulk 1M time (<= 2)", ratio <= 2))
    if "small" in got:
        s = got["small"]["small ours"].seconds
        verdicts.append((f"small capture: {s:.3f} s (< 0.15)", s < 0.15))
    if "help" in got:
        h = got["help"]["help ours"].seconds
        verdicts.append((f"--help: {h:.3f} s (< 0.1)", h < 0.1))
    for text, ok in verdicts:
        print(f"- {text}: {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
