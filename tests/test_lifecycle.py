"""Connections are finished while the capture is read (src/flow/table.rs, "the connection-finished event").

Issue 16: memory bounded by the live connections. These pin the rule (which packet after an
ended connection starts the next epoch), that it does not depend on where batches end, that the
epochs of a flow are numbered on after its connections were finished, and that the memory held
does not grow with the number of finished connections (tracemalloc and live-object counts, not
timing).
"""
from __future__ import annotations

import sys
import tracemalloc
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from tcpbuild import A, Conversation

from tcpsack_analyze import flowcore
from tcpsack_analyze.analysis import analyze, stream_report

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import gen_many_flows  # noqa: E402


def _closed(conv: Conversation, t: float) -> float:
    """Handshake, 100 bytes each way, FIN each way, last ACK; returns the last packet's time."""
    t = conv.handshake(t, rtt=0.01)
    conv.send("a", t + 0.001, 1, 1, "PA", 100)
    conv.send("b", t + 0.011, 1, 101, "PA", 100)
    conv.send("a", t + 0.012, 101, 101, "FA")
    conv.send("b", t + 0.022, 101, 102, "FA")
    conv.send("a", t + 0.023, 102, 102, "A")
    return t + 0.023


@pytest.mark.parametrize(("gap", "epochs"), [(4.0, [0]), (6.0, [0, 1])])
def test_a_packet_after_the_close_delay_starts_the_next_epoch(tmp_path: Path, gap: float, epochs: list[int]) -> None:
    conv = Conversation()
    last = _closed(conv, 0.0)
    conv.send("b", last + gap, 102, 102, "A")  # a late ACK of the old connection
    conns = analyze(conv.write(tmp_path / "late.pcap")).connections
    assert [c.epoch for c in conns] == epochs
    assert sum(c.total_packets for c in conns) == 9


@pytest.mark.parametrize(("gap", "epochs"), [(100.0, [0]), (300.0, [0, 1])])
def test_after_a_reset_the_connection_waits_the_abort_delay(tmp_path: Path, gap: float, epochs: list[int]) -> None:
    conv = Conversation()
    t = conv.handshake(0.0, rtt=0.01)
    conv.send("b", t + 0.01, 1, 1, "R")
    conv.send("a", t + 0.01 + gap, 1, 1, "PA", 50)  # the RST was not the end (not accepted, a middlebox's)
    assert [c.epoch for c in analyze(conv.write(tmp_path / "rst.pcap")).connections] == epochs


def test_unanswered_syns_backing_off_stay_one_attempt(tmp_path: Path) -> None:
    conv = Conversation()
    for t in (0.0, 1.0, 3.0, 7.0, 15.0, 31.0, 63.0):  # Linux's SYN retries
        conv.send("a", t, 0, None, "S")
    (conn,) = analyze(conv.write(tmp_path / "syns.pcap")).connections
    assert conn.a2b.syn_count == 7 and conn.a2b.syn_rexmits == 6


def superseded_after_a_reset(path: Path) -> str:
    """A reset attempt, silent past the close delay (another flow's packet at 6 s makes the
    pipeline look: it waits for the abort delay), superseded at 10 s by a new attempt of its
    flow, then 400 s of the new one: the reset one must be finished once."""
    conv = Conversation()
    conv.send("a", 0.0, 0, None, "S")
    conv.send("b", 0.001, 0, 1, "RA")
    conv.ep["a"] = ("10.9.9.9", 4444)
    conv.send("a", 6.0, 0, None, "A", 10)
    conv.ep["a"] = A
    conv.send("a", 10.0, 77777, None, "S")
    for k in range(40):
        conv.send("b", 20.0 + 10 * k, 0, None, "A", 10)
    return conv.write(path)


@pytest.mark.parametrize("chunk", [40, 1 << 24])
def test_a_reset_connection_superseded_while_it_waits_is_finished_once(tmp_path: Path, chunk: int) -> None:
    """The Python flow table finished it twice (KeyError in _retire, a traceback) when a chunk
    ended between the 6 s packet and the new attempt; the core finishes it once."""
    conns = analyze(superseded_after_a_reset(tmp_path / "reset.pcap"), chunk_bytes=chunk).connections
    got = [(c.epoch, c.state, c.a2b.total_packets + c.b2a.total_packets) for c in conns]
    assert got == [(0, "reset", 2), (0, "no SYN seen", 1), (1, "open at end of capture", 41)]


def _web(tmp_path: Path, n: int, interval_us: int) -> str:
    path = tmp_path / f"web{n}_{interval_us}.pcap"
    gen_many_flows.write_pcap(path, gen_many_flows.web(n, interval_us, np.random.default_rng(1)))
    return str(path)


def test_finishing_does_not_depend_on_where_batches_end(tmp_path: Path) -> None:
    path = _web(tmp_path, 300, 30_000)  # 9 s: the first connections finish while it is read
    whole = asdict(analyze(path).report)
    for chunk in (3_000, 17_000, 100_000):
        assert asdict(analyze(path, chunk_bytes=chunk).report) == whole


def test_epochs_are_numbered_on_after_their_flow_was_retired(tmp_path: Path) -> None:
    conv = Conversation()
    t = 0.0
    for k in range(4):  # the same endpoints, a new connection every 10 s, each closed
        conv.isn = {"a": 1000 + 100_000 * k, "b": 5000 + 100_000 * k}
        t = _closed(conv, t) + 10.0
    conns = analyze(conv.write(tmp_path / "reuse.pcap"), chunk_bytes=2_000).connections
    assert [(c.id, c.epoch, c.state) for c in conns] == [(k, k, "complete") for k in range(4)]


def _peak_and_live(path: str) -> tuple[int, int, int, int]:
    """(traced peak bytes, most connections live at once, connections, most bytes the core's
    working state held) of streaming ``path``'s report. tracemalloc sees Python's allocations;
    the core (flow table, flow stage, RTT samplers) says what it holds."""
    most = held = 0
    make = flowcore.CoreFlows.chunks

    def counting(self: flowcore.CoreFlows):  # type: ignore[no-untyped-def]
        nonlocal most, held
        for item in make(self):
            most = max(most, self.core.live)
            held = max(held, self.core.held_bytes())
            yield item

    tracemalloc.start()
    try:
        flowcore.CoreFlows.chunks = counting  # type: ignore[method-assign]
        stream = stream_report(path, chunk_bytes=20_000)
        n = sum(1 for _ in stream)
        assert stream.capture.tcp_packets == 10 * n
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        flowcore.CoreFlows.chunks = make  # type: ignore[method-assign]
        tracemalloc.stop()
    return peak, most, n, held


def test_memory_does_not_grow_with_finished_connections(tmp_path: Path) -> None:
    # a connection every 50 ms: about a hundred live at once (the 5 s close delay), whatever the length
    _peak_and_live(_web(tmp_path, 50, 50_000))  # imports and caches, traced once before measuring
    short = _peak_and_live(_web(tmp_path, 400, 50_000))
    long = _peak_and_live(_web(tmp_path, 1600, 50_000))
    assert long[2] == 4 * short[2]
    assert long[1] <= short[1] + 10, (short, long)  # live connections: bounded by the delay
    assert short[1] < 200
    # what a finished connection leaves behind: its flow's epoch count, a count for the totals
    per_finished = (long[0] - short[0]) / (long[2] - short[2])
    assert per_finished < 1_000, (short, long, per_finished)
    core_per_finished = (long[3] - short[3]) / (long[2] - short[2])  # the core: a retired flow's epoch count
    assert core_per_finished < 200, (short, long, core_per_finished)
