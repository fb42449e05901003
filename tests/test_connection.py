"""Per-connection state on hand-built conversations: each test pins one rule of the report."""
from __future__ import annotations

from pathlib import Path

import pytest

from tcpbuild import Conversation, sack
from tcpsack_analyze.analysis import analyze


def _one(path: str):
    conns = analyze(path).connections
    assert len(conns) == 1
    return conns[0]


def _bulk(conv: Conversation, t: float, start: int, count: int, mss: int = 1000, gap: float = 0.001) -> float:
    for i in range(count):
        conv.send("a", t, start + i * mss, 1, "A", length=mss)
        t += gap
    return t


def test_sequence_wrap_is_not_a_retransmission(tmp_path: Path) -> None:
    conv = Conversation(isn_a=2**32 - 2500)  # the data crosses 2**32 after two segments
    t = conv.handshake()
    t = _bulk(conv, t, 1, 10)
    conv.send("b", t + 0.1, 1, 10001)
    c = _one(conv.write(tmp_path / "wrap.pcap"))
    assert c.a2b.unique_bytes == 10000
    assert c.a2b.rexmit_packets == 0
    assert c.a2b.snd_max == 10001 and c.a2b.snd_una == 10001


def test_retransmitted_bytes_are_the_overlap(tmp_path: Path) -> None:
    conv = Conversation()
    t = conv.handshake()
    t = _bulk(conv, t, 1, 4)  # 1..4001
    conv.send("a", t + 0.3, 1001, 1, "A", length=1000)  # full resend
    conv.send("a", t + 0.4, 3501, 1, "A", length=1000)  # half old, half new
    c = _one(conv.write(tmp_path / "rx.pcap"))
    assert c.a2b.rexmit_packets == 2
    assert c.a2b.rexmit_bytes == 1500
    assert c.a2b.unique_bytes == 4500
    assert c.a2b.data_bytes == 6000


def test_hole_filled_later_is_out_of_order_not_retransmission(tmp_path: Path) -> None:
    conv = Conversation()
    t = conv.handshake(near="b")  # receiver side: the lost segment never passed the capture point
    conv.send("a", t + 0.01, 1, 1, "A", length=1000)
    conv.send("a", t + 0.02, 2001, 1, "A", length=1000)  # 1001..2001 missing
    conv.send("a", t + 0.30, 1001, 1, "A", length=1000)
    c = _one(conv.write(tmp_path / "hole.pcap"))
    assert c.a2b.rexmit_packets == 0
    assert c.a2b.out_of_order_packets == 1
    assert c.a2b.unique_bytes == 3000


def test_sack_dsack_and_dupacks(tmp_path: Path) -> None:
    conv = Conversation()
    t = conv.handshake()
    isn_a = conv.isn["a"]
    t = _bulk(conv, t, 1, 5)  # 1..5001, 1001..2001 lost downstream
    conv.send("b", t + 0.10, 1, 1001)
    for k, right in enumerate((3001, 4001, 5001)):
        conv.send("b", t + 0.11 + k / 1000, 1, 1001, options=sack((2001, right), isn=isn_a))
    conv.send("a", t + 0.12, 1001, 1, "A", length=1000)  # fast retransmit
    conv.send("b", t + 0.22, 1, 5001)
    conv.send("a", t + 0.23, 1001, 1, "A", length=1000)  # spurious resend
    conv.send("b", t + 0.33, 1, 5001, options=sack((1001, 2001), isn=isn_a))  # D-SACK below the ACK
    c = _one(conv.write(tmp_path / "sack.pcap"))
    assert c.b2a.sack_packets == 4
    assert c.b2a.dsack_packets == 1
    assert c.b2a.max_sack_blocks == 1
    assert c.b2a.duplicate_acks == 3
    assert c.b2a.triple_duplicate_acks == 1
    assert c.a2b.rexmit_packets == 2


def test_window_scale_applied_only_with_both_syns(tmp_path: Path) -> None:
    conv = Conversation()
    t = conv.handshake(wscale=(2, 7))
    conv.send("b", t + 0.1, 1, 1, win=100)
    c = _one(conv.write(tmp_path / "ws.pcap"))
    assert c.b2a.window_scale == 7 and c.a2b.window_scale == 2
    assert c.b2a.window_max == 100 << 7

    mid = Conversation()  # no handshake: scale unknown, windows reported unscaled
    mid.send("a", 1.0, 1, 1, "A", length=100)
    mid.send("b", 1.1, 1, 101, win=100)
    c = _one(mid.write(tmp_path / "nosyn.pcap"))
    assert c.a2b.window_scale is None and c.b2a.window_scale is None
    assert c.b2a.window_max == 100
    assert c.state == "no SYN seen"


def test_port_reuse_after_fin_is_a_new_connection(tmp_path: Path) -> None:
    conv = Conversation()
    t = conv.handshake()
    conv.send("a", t + 0.01, 1, 1, "FA")
    conv.send("b", t + 0.02, 1, 2, "FA")
    conv.send("a", t + 0.03, 2, 2, "A")
    conv.isn = {"a": 777777, "b": 888888}
    conv.handshake(t=t + 1.0)
    conv.send("a", t + 1.3, 1, 1, "A", length=10)
    conns = analyze(conv.write(tmp_path / "reuse.pcap")).connections
    assert [c.epoch for c in conns] == [0, 1]
    assert [c.state for c in conns] == ["complete", "open at end of capture"]
    assert conns[1].a2b.unique_bytes == 10


def test_syn_retransmission_stays_in_its_connection(tmp_path: Path) -> None:
    conv = Conversation()
    conv.send("a", 0.0, 0, None, "S")
    conv.send("a", 1.0, 0, None, "S")
    conv.handshake(t=3.0)
    c = _one(conv.write(tmp_path / "synrx.pcap"))
    assert c.a2b.syn_count == 3
    assert c.a2b.syn_rexmits == 2
    assert c.a2b.rexmit_packets == 0


def test_rtt_samples_follow_karn(tmp_path: Path) -> None:
    conv = Conversation()
    t = conv.handshake(near="a", rtt=0.1)
    conv.send("a", t + 0.01, 1, 1, "A", length=1000)
    conv.send("b", t + 0.11, 1, 1001)  # sample: 100 ms
    conv.send("a", t + 0.20, 1001, 1, "A", length=1000)
    conv.send("a", t + 0.50, 1001, 1, "A", length=1000)  # RTO resend: no sample for this segment
    conv.send("b", t + 0.60, 1, 2001)
    c = _one(conv.write(tmp_path / "karn.pcap"))
    assert c.a2b.rtt_ms.count == 1
    assert c.a2b.rtt_ms.min == pytest.approx(100.0, abs=0.01)


@pytest.mark.parametrize(("near", "expected"), [("a", "near opener"), ("b", "near responder")])
def test_vantage_from_handshake(tmp_path: Path, near: str, expected: str) -> None:
    conv = Conversation()
    conv.handshake(near=near, rtt=0.08)
    c = _one(conv.write(tmp_path / "v.pcap"))
    assert c.vantage.position == expected
    assert c.vantage.method == "handshake"
    assert c.a2b.vantage == ("near sender" if near == "a" else "near receiver")
