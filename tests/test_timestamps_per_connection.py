"""Out-of-order timestamps are counted per connection as well as per capture (issue 16,
reader/clock.py, AnalysisClock.marks): a connection counts its own packets that the capture's clock counted."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from tcpbuild import Conversation

from tcpsack_analyze.analysis import analyze
from tcpsack_analyze.reader.clock import JUMP_NS, AnalysisClock


def test_each_connection_counts_its_own_steps_back(tmp_path: Path) -> None:
    one = Conversation()
    two = Conversation(a=("10.0.0.3", 41000))
    t = one.handshake(0.0, rtt=0.01)
    two.handshake(0.5, rtt=0.01)
    one.send("a", t + 1.0, 1, 1, "PA", 100)
    two.send("a", 0.9, 1, 1, "PA", 100)  # written after the record at t + 1.0: a step back
    one.send("b", t + 1.2, 1, 101, "A")
    one.send("a", t + 0.05, 101, 1, "PA", 100)  # and another, of the first connection
    merged = Conversation()
    merged.packets = sorted(one.packets[:3] + two.packets[:3], key=lambda p: p.time) + [one.packets[3], two.packets[3], *one.packets[4:]]
    rep = analyze(merged.write(tmp_path / "merged.pcap")).report
    assert rep.capture.out_of_order_timestamps == 2
    by_port = {c.a_port: c.out_of_order_timestamps for c in rep.connections}
    assert by_port == {40000: 1, 41000: 1}


def test_marks_agree_with_the_clock_counts() -> None:
    rng = np.random.default_rng(5)
    clock = AnalysisClock()
    marked = 0
    for chunk in range(20):
        raw = np.cumsum(rng.integers(-3_000, 10_000, 500)) + 1_700_000_000 * 10**9 + chunk * 10**10
        if chunk == 7:
            raw[100:] -= 2 * JUMP_NS  # a clock stepped back by years: followed, counted once
        if chunk == 9:
            raw[5] = -1  # absurd: not a step back
        before = clock.counts.backwards
        clock.advance(raw)
        marks = clock.marks()
        assert marks.size == clock.counts.backwards - before
        assert np.all((marks >= chunk * 500) & (marks < (chunk + 1) * 500))
        marked += marks.size
    assert marked == clock.counts.backwards > 100
