"""The core's flow table, flow stage and RTT sampler (src/flow/, src/rtt_sampler.rs) against the
Python reference they were ported from, on every capture of the golden files and on generated
many-flows captures (web and a scan, whose connections are finished while the capture is read),
whole and cut into small chunks: every event of every direction (all columns and SACK blocks),
every chunk's data/ACK RTT samples, and each finished connection's identity, handshake, state,
counters (DirectionCounts) and RTT samples must be the same (docs/core.md, "Same answers")."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from flow_reference import reference_run
from golden_outputs import ROOT, captures
from test_lifecycle import superseded_after_a_reset

from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.events import EventBatch
from tcpsack_analyze.flowcore import CoreFlows
from tcpsack_analyze.reader import ReadStatus

sys.path.insert(0, str(ROOT / "benchmarks"))
import gen_many_flows  # noqa: E402

COLUMNS = ("kind", "time_ns", "index", "flags", "start", "end", "placement", "tsval", "ack", "win", "tsecr", "nsack", "dup", "dsack")
IDENTITY = ("id", "epoch", "a_addr", "a_port", "b_addr", "b_port", "ipver", "state", "packets", "vlan_tagged", "backwards_timestamps",
            "syn_ns", "synack_ns", "hs_ack_ns", "window_scale_in_use", "counts")


def core_run(path: Path, chunk: int) -> tuple[dict, dict, dict]:
    """(events by (conn, dir), RTT samples of each chunk by (conn, dir), finished results by id)."""
    events: dict = {}
    rtt: dict = {}
    results: dict = {}
    for ch in CoreFlows(str(path), ReadStatus(str(path)), None, chunk).chunks():
        for t in ch.touched:
            for d in (0, 1):
                events.setdefault((t.id, d), []).append(t.events[d])
                rtt.setdefault((t.id, d), []).append(t.rtt[d])
        for f in ch.finished:
            results[f.id] = f
    return events, rtt, results


def _event_difference(a: EventBatch, b: EventBatch) -> str | None:
    if len(a) != len(b):
        return f"{len(a)} events != {len(b)}"
    for c in COLUMNS:
        x, y = getattr(a, c), getattr(b, c)
        if not np.array_equal(x, y):
            i = int(np.flatnonzero(x != y)[0])
            return f"{c} of record {a.index[i]}: {x[i]} != {y[i]}"
    for i in np.flatnonzero(a.nsack > 0).tolist():
        if a.blocks(i) != b.blocks(i):
            return f"SACK blocks of record {a.index[i]}: {a.blocks(i)} != {b.blocks(i)}"
    return None


def _samples(parts: list) -> tuple[list[int], list[int]]:
    got = [p for p in parts if p is not None]
    return (np.concatenate([p[0] for p in got]).tolist(), np.concatenate([p[1] for p in got]).tolist()) if got else ([], [])


def differences(path: Path, chunk: int) -> list[str]:
    try:
        ref_events, ref_rtt, ref_results = reference_run(path, chunk)
    except CaptureError:
        with pytest.raises(CaptureError):
            core_run(path, chunk)
        return []
    events, rtt, results = core_run(path, chunk)
    out = []
    if sorted(ref_events) != sorted(events) or sorted(ref_results) != sorted(results):
        return [f"connections: {sorted(ref_results)} != {sorted(results)}"]
    for key in sorted(events):
        if (diff := _event_difference(EventBatch.concat(ref_events[key]), EventBatch.concat(events[key]))) is not None:
            out.append(f"events of {key}: {diff}")
        if _samples(ref_rtt[key]) != _samples(rtt[key]):
            out.append(f"RTT samples of {key}")
    for cid, (ref, samplers) in sorted(ref_results.items()):
        got = results[cid]
        out += [f"conn {cid} {name}: {ref[name]} != {getattr(got, name)}" for name in IDENTITY if ref[name] != getattr(got, name)]
        for d, sampler in enumerate(samplers):
            for bag in ("samples", "ts_samples"):
                if sorted(getattr(sampler, bag).array().tolist()) != sorted(getattr(got.rtt[d], bag).array().tolist()):
                    out.append(f"conn {cid} direction {d} RTT {bag}")
    return out


@pytest.mark.parametrize("chunk", [16 << 20, 1 << 16], ids=["whole", "64KiB"])
@pytest.mark.parametrize("path", captures(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_core_flow_stage_equals_the_reference(path: Path, chunk: int) -> None:
    assert differences(path, chunk) == []


def test_core_flow_table_equals_the_fixed_reference_when_a_reset_connection_is_superseded(tmp_path: Path) -> None:
    """The reference finished such a connection twice (KeyError) until fixed as the core does."""
    path = Path(superseded_after_a_reset(tmp_path / "reset.pcap"))
    for chunk in (40, 1 << 16):
        assert differences(path, chunk) == []


@pytest.mark.parametrize(("shape", "extra"), [("web", []), ("scan", ["--answered", "0.3"])])
def test_core_flow_table_equals_the_reference_over_many_flows(tmp_path: Path, shape: str, extra: list[str]) -> None:
    path = tmp_path / f"{shape}.pcap"
    gen_many_flows.main(["-o", str(path), "--shape", shape, "--connections", "4000", "--interval", "3000", *extra])
    for chunk in (1 << 16, 1 << 20):
        assert differences(path, chunk) == []
    _, _, results = core_run(path, 1 << 16)
    assert len(results) == 4000


def test_events_of_one_connection_gets_only_its_events_across(tmp_path: Path) -> None:
    """events_of asks the core for one connection's events (set_events_for): they equal that
    connection's events of the full stream, and no other connection's cross into Python."""
    from tcpsack_analyze.analysis import events_of, stream_events

    path = tmp_path / "web.pcap"
    gen_many_flows.main(["-o", str(path), "--shape", "web", "--connections", "50", "--interval", "200000"])
    full: dict = {}
    for cid, evs in stream_events(str(path), chunk_bytes=4096):
        full.setdefault(cid, []).append(evs[1])
    assert _event_difference(events_of(str(path), conn=17, direction="b2a", chunk_bytes=4096), EventBatch.concat(full[17])) is None
    flows = CoreFlows(str(path), ReadStatus(str(path)), None, 4096, stages=False)
    flows.core.set_events_for([17])
    assert {t.id for chunk in flows.chunks() for t in chunk.touched} == {17}
    assert flows.core.connections == 50
