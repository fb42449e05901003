"""What ``report`` holds per connection of a many-flows capture, from tracemalloc.

    PYTHONPATH=$PWD python benchmarks/profile_many_flows.py [--connections 3000] [--top 15]

Issue 16: 1M packets over 100k 10-packet connections peak at about 11.7 GB. This makes a web
capture (``gen_many_flows.py``), runs :func:`tcpsack_analyze.analysis.analyze` under tracemalloc
and prints, per connection, the bytes still allocated at three points, by source line:

1. when the first connection report is built: every connection's working state (flow table,
   per-direction state, loss trackers) and its loss results, all alive at once;
2. after ``analyze`` returned: what the :class:`Analysis` keeps (reports, loss tables);
3. the JSON text of the report.

Python's allocations only (numpy's buffers are traced too; mmap'd and C-library memory is not),
so the totals are below the RSS, and tracemalloc slows the run about 3x: use a few thousand
connections.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen_many_flows

from tcpsack_analyze import analysis
from tcpsack_analyze.report.render import RENDERERS


def show(title: str, snapshot: tracemalloc.Snapshot, baseline: tracemalloc.Snapshot, per: int, top: int) -> None:
    """The largest allocations by source line that grew since ``baseline``, in bytes per connection."""
    stats = [s for s in snapshot.compare_to(baseline, "lineno") if s.size_diff > 0]
    total = sum(s.size_diff for s in stats)
    print(f"\n{title}: {total / per:,.0f} bytes per connection")
    for s in stats[:top]:
        frame = s.traceback[0]
        where = frame.filename.split("site-packages/")[-1].split("tcpsack_analyze/")[-1]
        print(f"  {s.size_diff / per:>9,.0f} B  {s.count_diff / per:>6.1f} blocks  {where}:{frame.lineno}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=3000)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    n = args.connections
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "web.pcap"
        gen_many_flows.write_pcap(path, gen_many_flows.web(n, 100, np.random.default_rng(1)))
        snapshots: list[tracemalloc.Snapshot] = []
        build = analysis.connection_report

        def first_report(*a: object, **k: object) -> object:
            if not snapshots:
                snapshots.append(tracemalloc.take_snapshot())
            return build(*a, **k)  # type: ignore[arg-type]

        analysis.connection_report = first_report  # type: ignore[assignment]
        tracemalloc.start()
        baseline = tracemalloc.take_snapshot()
        result = analysis.analyze(str(path))
        after = tracemalloc.take_snapshot()
        text = RENDERERS["json"](result.report)
        rendered = tracemalloc.take_snapshot()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(f"{n} web connections, {10 * n} packets; traced peak {peak / n:,.0f} bytes per connection")
    show("1. working state and loss results, all connections alive", snapshots[0], baseline, n, args.top)
    show("2. kept by the Analysis after analyze() returned", after, baseline, n, args.top)
    print(f"\n3. JSON report: {len(text) / n:,.0f} bytes of text per connection "
          f"({sum(s.size_diff for s in rendered.compare_to(after, 'lineno') if s.size_diff > 0) / n:,.0f} B allocated)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
