"""truth.json: the schema round-trips, and malformed files are refused with a clear error."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tcpsack_analyze.lab.droplog import Drop
from tcpsack_analyze.truth import (
    PROBE_COLUMNS,
    CaStateChange,
    Flow,
    Retransmission,
    Truth,
    TruthError,
    load,
    write,
)


def make_truth() -> Truth:
    flow = Flow(id=0, src="192.0.2.1", sport=40000, dst="192.0.2.2", dport=5001, isn=1000, cc="reno",
                bytes_sent=5000, bytes_received=5000, start=10.0, acked=11.0, kernel_total_retrans=1)
    drops = [
        Drop(t=10.2, direction="fwd", reason="loss", frame_len=1514, src="192.0.2.1", dst="192.0.2.2",
             sport=40000, dport=5001, seq=2449, ack=1, len=1448, flags="A"),
        Drop(t=10.3, direction="rev", reason="queue", frame_len=42),
    ]
    rtx = Retransmission(t=10.26, flow=0, seq=2449, rel_seq=1449, len=1448, segs=1, flags="A", ca_state="Recovery",
                         backoff=0, retransmits=0, timer=False, kind="fast", err=0, capture_t=10.259998)
    return Truth(
        params={"seed": 1}, sysctls={"sender": {"net.ipv4.tcp_sack": "1"}, "receiver": {}},
        topology={}, captures=[{"file": "sender.pcap", "point": "sender"}],
        clock={"alignment": {"matched": 1}}, emulator={}, trace={"lost_events": 0},
        flows=[flow], drops=drops, retransmissions=[rtx],
        ca_states=[CaStateChange(t=10.259, flow=0, state="Recovery")],
        probes=[[10.1, 0, 1, 2897, 10, 2147483647, 50000, 65000]],
        summary="one line", kernel="6.18", command="tcpsack-analyze lab run -o x",
    )


def test_round_trip(tmp_path: Path) -> None:
    truth = make_truth()
    write(truth, tmp_path / "truth.json")
    back = load(tmp_path)  # a directory holding truth.json works too
    assert back == truth
    assert back.path == tmp_path / "truth.json"
    assert list(back.probes_frame().columns) == list(PROBE_COLUMNS)
    assert back.probes_frame()["cwnd"].tolist() == [10]


def test_one_record_per_line(tmp_path: Path) -> None:
    write(make_truth(), tmp_path / "truth.json")
    lines = (tmp_path / "truth.json").read_text().splitlines()
    assert any(line.strip().startswith('{"t":10.26,') for line in lines)


def test_data_drops_only_from_the_flow_sender() -> None:
    truth = make_truth()
    assert [d.seq for d in truth.data_drops()] == [2449]
    assert truth.data_drops(flow=1) == []


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda o: o.update(schema="something else"), "not a lab truth file"),
        (lambda o: o.update(version=99), "version"),
        (lambda o: o.pop("drops"), "missing keys"),
        (lambda o: o.update(extra=1), "unknown keys"),
        (lambda o: o["retransmissions"][0].update(kind="magic"), "unknown retransmission kinds"),
        (lambda o: o["retransmissions"][0].pop("seq"), "malformed record"),
        (lambda o: o["probes"].update(columns=["t"]), "probes columns"),
    ],
)
def test_malformed_files_are_refused(tmp_path: Path, mutate: Callable[[dict[str, Any]], object], message: str) -> None:
    obj = make_truth().to_dict()
    mutate(obj)
    (tmp_path / "truth.json").write_text(json.dumps(obj))
    with pytest.raises(TruthError, match=message):
        load(tmp_path / "truth.json")


def test_not_json(tmp_path: Path) -> None:
    (tmp_path / "truth.json").write_text("{")
    with pytest.raises(TruthError, match="not JSON"):
        load(tmp_path)


def test_write_refuses_what_would_not_load(tmp_path: Path) -> None:
    truth = replace(make_truth(), retransmissions=[replace(make_truth().retransmissions[0], kind="magic")])
    with pytest.raises(TruthError):
        write(truth, tmp_path / "truth.json")
