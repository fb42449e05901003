"""Time ``tcpsack-analyze report`` against ``tcptrace -n -l`` on large synthetic captures.

    python benchmarks/run.py [--packets 1000000] [--also 5000000] [--runs 3] [--keep DIR]
    python benchmarks/run.py --shape web --connections 10000 [--also 30000] --median
    python benchmarks/run.py --shape scan --connections 100000 --median

``--shape web|scan`` times many short connections instead of the bulk transfers (issue 16):
captures from ``gen_many_flows.py``, 10 packets per web connection and one (an unanswered SYN)
per scanned port, so ``--connections`` (and ``--also``) give the size and ``--packets`` is not
used; the targets printed are issue 16's (peak RSS under 500 MB; time within 2x of the bulk 1M
capture's, which this mode does not measure: compare with the table in README.md).

Captures come from ``gen_synthetic.py`` and are cached in ``benchmarks/out/`` (one file per
packets/connections/seed/loss combination). Each tool runs as a child process with its output
sent to /dev/null (or to ``DIR`` with ``--keep DIR``); the wall time is the best of ``--runs``
runs (their median with ``--median``) and the peak RSS is the child's own ``ru_maxrss`` from ``os.wait4`` (the largest of the
runs). The table gives packets/s; then the ratio of ours to tcptrace's packets/s on the first
capture and, with ``--also``, the growth of peak RSS from the first capture to the second.
Targets (see README.md): ours >= half of tcptrace's packets/s on 1M packets; peak RSS below
1 GB and within 20% between 1M and 5M packets.

When ``tcpsack-analyze report`` cannot run yet, the script says so and times tcptrace alone.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / "out"
RSS_LIMIT_MB = 1024.0
MANY_FLOWS_RSS_LIMIT_MB = 500.0  # issue 16
RSS_GROWTH_LIMIT = 0.20
SPEED_RATIO_TARGET = 0.5


@dataclass
class Measurement:
    """Best wall time and peak RSS of one tool on one capture."""

    tool: str
    packets: int
    seconds: float
    peak_rss_mb: float

    @property
    def rate(self) -> float:
        """Packets per second."""
        return self.packets / self.seconds


def capture(packets: int, connections: int, seed: int, loss: float) -> tuple[Path, int]:
    """Path of the cached synthetic capture (generated if missing) and its packet count."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"synthetic_p{packets}_c{connections}_s{seed}_l{loss:g}.pcap"
    truth = Path(f"{path}.truth.json")
    if not (path.exists() and truth.exists()):
        subprocess.run([sys.executable, str(HERE / "gen_synthetic.py"), "-o", str(path),
                        "--packets", str(packets), "--connections", str(connections),
                        "--seed", str(seed), "--loss", str(loss)], check=True)
    return path, int(json.loads(truth.read_text())["packets"])


def many_flows_capture(shape: str, connections: int, seed: int) -> tuple[Path, int]:
    """Path of the cached web/scan capture (generated if missing) and its packet count."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{shape}_c{connections}_s{seed}.pcap"
    if not path.exists():
        subprocess.run([sys.executable, str(HERE / "gen_many_flows.py"), "-o", str(path), "--shape", shape,
                        "--connections", str(connections), "--seed", str(seed)], check=True)
    return path, (path.stat().st_size - 24) // 70  # every record is 16 + 54 bytes


def run_child(cmd: list[str], stdout: Path) -> tuple[float, float]:
    """Run ``cmd`` once with stdout to ``stdout``: wall seconds and peak RSS in MB.

    Raises CalledProcessError (with the tail of stderr) when the command fails.
    """
    with open(stdout, "wb") as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            tail = err.read()[-2000:].decode(errors="replace")
            raise subprocess.CalledProcessError(proc.returncode, cmd, stderr=tail)
    return elapsed, usage.ru_maxrss / 1024.0  # ru_maxrss is in KiB on Linux


def measure(tool: str, cmd: list[str], packets: int, runs: int, keep: Path | None, median: bool = False) -> Measurement:
    """Best-of-``runs`` (or median) wall time and largest peak RSS of ``cmd``."""
    stdout = keep / f"{tool}_{packets}.out" if keep else Path(os.devnull)
    results = [run_child(cmd, stdout) for _ in range(runs)]
    seconds = statistics.median(r[0] for r in results) if median else min(r[0] for r in results)
    return Measurement(tool, packets, seconds, max(r[1] for r in results))


def ours_command() -> list[str] | None:
    """The ``tcpsack-analyze`` command if its ``report`` subcommand runs, else None (says why)."""
    # the console script installed beside this interpreter; not the first one on PATH, which may
    # be a version manager's shim (pyenv's is a bash script that finds the interpreter again:
    # some 60 ms a run, which is not the tool's)
    beside = Path(sys.executable).parent / "tcpsack-analyze"
    exe = str(beside) if beside.exists() else shutil.which("tcpsack-analyze")
    base = [exe] if exe else [sys.executable, "-c", "from tcpsack_analyze.cli import main; main()"]
    probe = subprocess.run(base + ["report", "--help"], capture_output=True, text=True,
                           check=False)
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"NOTE: `tcpsack-analyze report` is not available yet ({reason}); "
              "timing tcptrace only.", file=sys.stderr)
        return None
    return base


def _row(m: Measurement) -> None:
    """One line of the table, printed as soon as it is measured."""
    print(f"{m.tool:<16} {m.packets:>10} {m.seconds:>9.2f} {m.rate:>12,.0f} {m.peak_rss_mb:>12.1f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=["bulk", "web", "scan"], default="bulk",
                        help="bulk transfers (gen_synthetic.py) or many short connections (gen_many_flows.py)")
    parser.add_argument("--packets", type=int, default=1_000_000, help="packets of the capture (bulk)")
    parser.add_argument("--also", type=int, help="packets (bulk) or connections (web, scan) of a second, larger capture")
    parser.add_argument("--connections", type=int, help="concurrent transfers (bulk, default 200) or connections (web, scan)")
    parser.add_argument("--median", action="store_true", help="report the median wall time of the runs, not the best")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--loss", type=float, default=0.01)
    parser.add_argument("--runs", type=int, default=3, help="runs per tool and capture")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep each tool's output in DIR instead of /dev/null")
    args = parser.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)

    ours = ours_command()
    tcptrace = shutil.which("tcptrace")
    if tcptrace is None:
        print("NOTE: tcptrace is not installed; nothing to compare with.", file=sys.stderr)
    if ours is None and tcptrace is None:
        return 1

    print(f"{'tool':<16} {'packets':>10} {'seconds':>9} {'packets/s':>12} {'peak RSS MB':>12}", flush=True)
    many = args.shape != "bulk"
    if many and not args.connections:
        parser.error("--shape web/scan needs --connections")
    results: dict[str, list[Measurement]] = {"tcpsack-analyze": [], "tcptrace": []}
    first = args.connections if many else args.packets
    for size in [first] + ([args.also] if args.also else []):
        if many:
            path, packets = many_flows_capture(args.shape, size, args.seed)
        else:
            path, packets = capture(size, args.connections or 200, args.seed, args.loss)
        if tcptrace is not None:
            results["tcptrace"].append(measure(
                "tcptrace", [tcptrace, "-n", "-l", str(path)], packets, args.runs, args.keep, args.median))
            _row(results["tcptrace"][-1])
        if ours is not None:
            results["tcpsack-analyze"].append(measure(
                "tcpsack-analyze", ours + ["report", str(path), "--format", "json"],
                packets, args.runs, args.keep, args.median))
            _row(results["tcpsack-analyze"][-1])

    mine, theirs = results["tcpsack-analyze"], results["tcptrace"]
    if mine and theirs:
        ratio = mine[0].rate / theirs[0].rate
        verdict = "met" if ratio >= SPEED_RATIO_TARGET else "NOT met"
        print(f"ours/tcptrace packets/s on {mine[0].packets} packets: {ratio:.2f} "
              f"(target >= {SPEED_RATIO_TARGET}: {verdict})")
    for rows in results.values():
        if len(rows) == 2:
            growth = rows[1].peak_rss_mb / rows[0].peak_rss_mb - 1
            print(f"{rows[0].tool} peak RSS growth {rows[0].packets} -> {rows[1].packets} "
                  f"packets: {growth:+.1%}")
    if mine and many:
        peak = max(m.peak_rss_mb for m in mine)
        print(f"ours peak RSS {peak:.0f} MB (issue 16 target < {MANY_FLOWS_RSS_LIMIT_MB:.0f} MB: "
              f"{'met' if peak < MANY_FLOWS_RSS_LIMIT_MB else 'NOT met'})")
    elif mine:
        peak = max(m.peak_rss_mb for m in mine)
        print(f"ours peak RSS {peak:.0f} MB (target < {RSS_LIMIT_MB:.0f} MB: "
              f"{'met' if peak < RSS_LIMIT_MB else 'NOT met'})")
        if len(mine) == 2:
            growth = mine[1].peak_rss_mb / mine[0].peak_rss_mb - 1
            print(f"ours RSS growth target (within {RSS_GROWTH_LIMIT:.0%}): "
                  f"{'met' if growth <= RSS_GROWTH_LIMIT else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
