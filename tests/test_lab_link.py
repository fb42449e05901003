"""One emulated link direction (sans-I/O): loss only on data, drop-tail queue, delay, drop log."""
from __future__ import annotations

import io
import json
from pathlib import Path

import dpkt
import pytest

from tcpsack_analyze.lab.droplog import UPSTREAM, Drop, read_drops, write_drop
from tcpsack_analyze.lab.link import LinkConfig, LinkDirection
from tcpsack_analyze.lab.wire import decode, flags_text


def frame(payload: int = 1000, flags: int = dpkt.tcp.TH_ACK, seq: int = 1000) -> bytes:
    tcp = dpkt.tcp.TCP(sport=5000, dport=80, seq=seq, ack=77, flags=flags, data=b"x" * payload)
    ip = dpkt.ip.IP(src=bytes([10, 0, 0, 1]), dst=bytes([10, 0, 0, 2]), p=6, data=tcp)
    ip.len = len(bytes(ip))
    eth = dpkt.ethernet.Ethernet(src=b"\x02" * 6, dst=b"\x04" * 6, type=0x0800, data=ip)
    return bytes(eth)


def test_decode_fields_and_padding() -> None:
    seg = decode(frame(0) + b"\0" * 6)  # Ethernet padding is not payload
    assert seg is not None and seg.payload_len == 0 and not seg.is_data
    seg = decode(frame(100, dpkt.tcp.TH_PUSH | dpkt.tcp.TH_ACK, seq=42))
    assert seg is not None
    assert (seg.src, seg.dst, seg.sport, seg.dport, seg.seq, seg.ack) == ("10.0.0.1", "10.0.0.2", 5000, 80, 42, 77)
    assert seg.payload_len == 100 and flags_text(seg.flags) == "PA"
    assert decode(b"\xff" * 60) is None


def test_delay_only() -> None:
    link = LinkDirection.build("fwd", LinkConfig(delay=0.025), seed=1)
    assert link.offer(1.0, frame()) == pytest.approx(1.025)


def test_loss_model_drops_data_only_and_logs_fields() -> None:
    link = LinkDirection.build("fwd", LinkConfig(loss="random:1"), seed=1)
    assert link.offer(0.0, frame(0)) == 0.0  # a pure ACK passes even with p = 1
    assert link.offer(0.0, frame(0, dpkt.tcp.TH_SYN)) == 0.0
    drop = link.offer(2.5, frame(500, seq=9))
    assert isinstance(drop, Drop)
    assert (drop.t, drop.direction, drop.reason, drop.seq, drop.len, drop.flags) == (2.5, "fwd", "loss", 9, 500, "A")
    assert link.drops_by_reason == {"loss": 1, "queue": 0} and link.forwarded == 2


def test_rate_serialises_and_queue_drops_tail() -> None:
    rate = 8_000_000.0  # 1 MB/s
    link = LinkDirection.build("fwd", LinkConfig(delay=0.01, rate=rate, queue=3), seed=1)
    f = frame(1000)
    tx = (len(f) + 24) * 8 / rate
    results = [link.offer(0.0, f) for _ in range(5)]
    assert results[:3] == pytest.approx([0.01 + tx, 0.01 + 2 * tx, 0.01 + 3 * tx])
    assert all(isinstance(r, Drop) and r.reason == "queue" for r in results[3:])
    # once the first frame has left, there is room for one more behind the others
    assert link.offer(tx * 1.01, f) == pytest.approx(0.01 + 4 * tx)


def test_queue_drops_non_tcp_frames_too() -> None:
    link = LinkDirection.build("rev", LinkConfig(rate=1000.0, queue=1), seed=1)
    arp = b"\xff" * 6 + b"\x02" * 6 + b"\x08\x06" + b"\0" * 28
    assert isinstance(link.offer(0.0, arp), float)
    drop = link.offer(0.0, arp)
    assert isinstance(drop, Drop) and drop.reason == "queue" and drop.seq is None


def test_delivery_times_never_decrease() -> None:
    link = LinkDirection.build("fwd", LinkConfig(delay=0.005, rate=1e6, queue=10, loss="random:0.2"), seed=4)
    times = [r for i in range(500) if isinstance(r := link.offer(i * 0.0005, frame(200)), float)]
    assert times == sorted(times)


def test_drop_log_round_trip(tmp_path: Path) -> None:
    drops = [
        Drop.of(1.5, "fwd", "loss", 1514, decode(frame(1448))),
        Drop.of(2.0, "rev", "queue", 42, None),
    ]
    buf = io.StringIO()
    for d in drops:
        write_drop(buf, d)
    path = tmp_path / "drops.jsonl"
    path.write_text(buf.getvalue())
    assert read_drops(path) == drops
    assert json.loads(buf.getvalue().splitlines()[0])["reason"] == "loss"
    with pytest.raises(ValueError):
        Drop.of(0.0, "fwd", "gremlins", 60, None)


def test_drops_say_which_section_of_a_path_with_a_mid_point() -> None:
    drop = LinkDirection.build("fwd", LinkConfig(loss="random:1"), seed=1, where=UPSTREAM).offer(1.0, frame(500))
    plain = LinkDirection.build("fwd", LinkConfig(loss="random:1"), seed=1).offer(1.0, frame(500))
    assert isinstance(drop, Drop) and isinstance(plain, Drop)
    assert drop.where == UPSTREAM and drop.to_dict()["where"] == "upstream"
    assert plain.where is None and "where" not in plain.to_dict()  # records of runs without a mid point as before
    assert Drop.from_dict(drop.to_dict()) == drop and Drop.from_dict(plain.to_dict()) == plain
    with pytest.raises(ValueError):
        Drop.of(0.0, "fwd", "loss", 60, None, where="sideways")


def test_bad_config_rejected() -> None:
    with pytest.raises(ValueError):
        LinkConfig(loss="random:2")
    with pytest.raises(ValueError):
        LinkConfig(queue=0)
