"""What a connection of a many-flows capture costs in memory, from tracemalloc.

    PYTHONPATH=$PWD python benchmarks/profile_many_flows.py [--connections 3000] [--top 15]

Issue 16: 1M packets over 100k 10-packet connections peaked at 11.7 GB, about 110 KB held per
connection to the end. This makes a web capture (``gen_many_flows.py``) and prints, per
connection, the bytes allocated by source line:

1. live: every connection's working state (flow table, per-direction state, loss trackers,
   RTT samplers), all live at once (read with a close delay longer than the capture);
2. finished: its frozen :class:`~tcpsack_analyze.results.ConnectionResult` once the working state
   is dropped (what waits in the id-order queue, or what a notebook keeps);
3. streamed: the peak of ``report --format json`` written to /dev/null as the connections are
   finished (a connection every ``--interval`` µs, 5 ms by default: the close delay of 5 s holds
   about 1000 at once; read in chunks of 256 KB, about 3700 packets, so that batches hold a few
   hundred connections, as a 16 MB chunk of a capture of 10,000 times the packets would hold a
   few tens of thousands), with the JSON text per connection.

Python's allocations only (numpy's buffers are traced too; mmap'd and C-library memory is not),
so the totals are below the RSS, and tracemalloc slows the run about 3x: use a few thousand
connections.
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen_many_flows

from tcpsack_analyze.analysis import _Pipeline, stream_report
from tcpsack_analyze.reader import DEFAULT_CHUNK, ReadStatus
from tcpsack_analyze.report.render import write_json


CHUNK = 256 << 10


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
    parser.add_argument("--interval", type=int, default=5000, metavar="US", help="µs between connection starts (3.)")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    n = args.connections
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "web.pcap"
        gen_many_flows.write_pcap(path, gen_many_flows.web(n, 100, np.random.default_rng(1)))
        spread = Path(tmp) / "spread.pcap"
        gen_many_flows.write_pcap(spread, gen_many_flows.web(n, args.interval, np.random.default_rng(1)))
        list(stream_report(str(path)))  # imports and caches, before anything is traced

        tracemalloc.start()
        baseline = tracemalloc.take_snapshot()
        pipe = _Pipeline(str(path), ReadStatus(str(path)), None, DEFAULT_CHUNK, 60.0, (1e9, 1e9))  # nothing finishes early
        core_live = 0
        for chunk in pipe.flows.chunks():
            if chunk.batch is not None:
                core_live = pipe.flows.core.held_bytes() + pipe.flows.core.loss_state()[1]
                live = tracemalloc.take_snapshot()
            else:
                results = [pipe._finish(f) for f in chunk.finished]
            del chunk
        del pipe
        finished = tracemalloc.take_snapshot()
        del results
        tracemalloc.stop()

        tracemalloc.start()
        stream = stream_report(str(spread), chunk_bytes=CHUNK)
        with open(os.devnull, "w") as sink:
            write_json(stream, lambda: (stream.capture, stream.totals), sink)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        text = io.StringIO()
        stream = stream_report(str(spread))
        write_json(stream, lambda: (stream.capture, stream.totals), text)
    print(f"{n} web connections, {10 * n} packets")
    show("1. working state, all connections live (Python allocations)", live, baseline, n, args.top)
    print(f"   and in the core (flow table, flow stage, RTT samplers; loss trackers' outstanding data): {core_live / n:,.0f} bytes per connection")
    show("2. frozen results, working state dropped", finished, baseline, n, args.top)
    print(f"\n3. streamed report (a connection every {args.interval} µs, chunks of {CHUNK >> 10} KB): traced peak {peak / 1e6:.1f} MB "
          f"({peak / n:,.0f} B per connection of the capture); JSON {len(text.getvalue()) / n:,.0f} bytes per connection")
    return 0


if __name__ == "__main__":
    sys.exit(main())
