"""The Python flow table, flow stage and RTT sampler, run as the reference of the core's
(tests/test_flow_core.py)."""
from __future__ import annotations

from pathlib import Path

from tcpsack_analyze.analysis import _Pipeline
from tcpsack_analyze.reader import ReadStatus
from tcpsack_analyze.rtt import RttSampler


def reference_run(path: Path, chunk: int) -> tuple[dict, dict, dict]:
    """(events by (conn, dir), RTT samples of each chunk by (conn, dir), (result, (sampler a2b,
    sampler b2a)) by id) of the Python stages."""
    pipe = _Pipeline(str(path), ReadStatus(str(path)), None, chunk, 60.0, stages=False, keep_events=True)
    events: dict = {}
    rtt: dict = {}
    samplers: dict = {}
    results: dict = {}
    for _batch, touched, finished in pipe.batches():
        for conn, _rows, evs in touched:
            assert evs is not None
            for d in (0, 1):
                events.setdefault((conn.id, d), []).append(evs[d])
                rtt.setdefault((conn.id, d), []).append(samplers.setdefault((conn.id, d), RttSampler()).feed(evs[d]))
        for conn in finished:
            results[conn.id] = (conn.finish(), (samplers.pop((conn.id, 0), RttSampler()), samplers.pop((conn.id, 1), RttSampler())))
    return events, rtt, results
