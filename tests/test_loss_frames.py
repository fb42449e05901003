"""The loss tables of ``Analysis`` and the loss sections of the text/JSON/CSV report.

On every lab sample capture: each table has one row per record, as many rows as the report
counts, every dataclass field and derived column, and the records refer to each other
consistently (a retransmission's episode exists in the same direction, an episode counts the
retransmissions that name it, a burst's length adds up to the lost transmissions).
"""
from __future__ import annotations

import csv
import dataclasses
import io
import json
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from tcpsack_analyze.analysis import Analysis, analyze
from tcpsack_analyze.loss.records import UPSTREAM, Fill, LossIncident, LostTransmission, RecoveryEpisode, Retransmission
from tcpsack_analyze.report.render import render_csv, render_json, render_text

SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"
CAPTURES = sorted(SAMPLES.glob("lab_*/*.pcap"))
KEY = ["conn", "direction"]


@cache
def analysis_of(path: Path) -> Analysis:
    return analyze(str(path))


def per_direction(df: pd.DataFrame) -> dict[tuple[int, str], int]:
    return {(int(c), str(d)): int(n) for (c, d), n in df.groupby(KEY).size().items()} if len(df) else {}


def directions(a: Analysis):
    for c in a.connections:
        for d in (c.a2b, c.b2a):
            yield (c.id, d.name), d.loss


def test_there_are_samples() -> None:
    assert len(CAPTURES) >= 6


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_row_counts_equal_the_report(path: Path) -> None:
    a = analysis_of(path)
    rx, ep, inc, lost, fills, bursts = (a.retransmissions_df(), a.episodes_df(), a.incidents_df(), a.lost_df(), a.fills_df(), a.bursts_df())
    counts = {name: per_direction(df) for name, df in
              (("rx", rx), ("ep", ep), ("inc", inc), ("lost", lost), ("fills", fills), ("bursts", bursts))}
    assert len(rx) == a.report.loss.retransmissions
    for key, s in directions(a):
        assert counts["rx"].get(key, 0) == s.retransmissions
        assert counts["ep"].get(key, 0) == s.episodes
        assert counts["inc"].get(key, 0) == s.incidents
        assert counts["lost"].get(key, 0) == s.lost_transmissions
        assert counts["fills"].get(key, 0) == sum(s.fills.values())
        assert counts["bursts"].get(key, 0) == s.pattern.bursts
        mine = rx[(rx.conn == key[0]) & (rx.direction == key[1])]
        assert mine.trigger.value_counts().to_dict() == s.by_trigger
        assert mine.ca_state.value_counts().to_dict() == s.sender_state
        mine_lost = lost[(lost.conn == key[0]) & (lost.direction == key[1])]
        assert int((mine_lost["where"] == UPSTREAM).sum()) == s.lost_upstream
        b = bursts[(bursts.conn == key[0]) & (bursts.direction == key[1])]
        assert int(b.length.sum()) == s.pattern.lost
        if len(b):
            assert int(b.length.max()) == s.pattern.burst_max


@pytest.mark.parametrize(
    ("method", "kind", "extra"),
    [
        ("retransmissions_df", Retransmission, ["length", "ca_state", "time_s", "covered_s", "rtd_ms", "silence_ms", "since_ack_ms", "srtt_ms"]),
        ("episodes_df", RecoveryEpisode, ["duration_ns", "duration_ms", "sack_finished_without_rto", "start_s", "end_s"]),
        ("incidents_df", LossIncident, ["latency_rexmit_ns", "latency_rexmit_ms", "latency_ack_ns", "latency_ack_ms", "first_s", "covered_s"]),
        ("lost_df", LostTransmission, ["time_s"]),
        ("fills_df", Fill, ["time_s", "opened_s"]),
    ],
)
@pytest.mark.parametrize("path", [SAMPLES / "lab_thin_stream" / "sender.pcap", SAMPLES / "lab_receiver_side" / "receiver.pcap"],
                         ids=lambda p: p.parent.name)
def test_columns(path: Path, method: str, kind: type, extra: list[str]) -> None:
    df = getattr(analysis_of(path), method)()
    fields = [f.name for f in dataclasses.fields(kind)]
    assert set(fields + extra) <= set(df.columns)
    assert list(df.columns[: len(fields)]) == fields


def test_bursts_columns_even_when_empty() -> None:
    a = analyze(str(SAMPLES.parent / "tests" / "data" / "public" / "tcpdump_tcp_handshake_nano_sll.pcap"))
    assert list(a.bursts_df().columns) == ["conn", "direction", "first_tx", "first_time_ns", "first_time_s", "first_index", "length"]
    assert len(a.bursts_df()) == 0 and len(a.retransmissions_df()) == 0


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_records_refer_to_each_other(path: Path) -> None:
    a = analysis_of(path)
    rx, ep, inc = a.retransmissions_df(), a.episodes_df(), a.incidents_df()
    episodes = {(int(c), d, int(i)) for c, d, i in ep[["conn", "direction", "id"]].itertuples(index=False)}
    with_episode = rx[rx.episode.notna()]
    for c, d, e in with_episode[["conn", "direction", "episode"]].itertuples(index=False):
        assert (int(c), d, int(e)) in episodes
    # an episode counts the retransmissions that name it
    named = with_episode.groupby(["conn", "direction", "episode"]).size()
    for row in ep.itertuples(index=False):
        assert named.get((row.conn, row.direction, row.id), 0) == row.retransmissions
    # times in seconds and delays in ms agree with the ns columns
    assert ((rx.time_s * 1e9 - rx.time_ns.astype("float64")).abs() < 1e3).all()
    have = inc.covered_ns.notna()
    assert ((inc.latency_ack_ms[have] - (inc.covered_ns[have] - inc.first_ns[have]) / 1e6).abs() < 1e-6).all()
    assert (inc.latency_rexmit_ms >= 0).all()
    # RTD is the gap since the previous transmission of the same bytes
    assert (rx.rtd_ms.dropna() >= 0).all()


def test_bursts_point_at_lost_transmissions() -> None:
    a = analysis_of(SAMPLES / "lab_reno_sack_bursty" / "sender.pcap")
    bursts, lost = a.bursts_df(), a.lost_df()
    assert len(bursts) and bursts.first_index.notna().all()
    lost_index = set(lost["index"].dropna().astype(int))
    assert set(bursts.first_index.astype(int)) <= lost_index
    times = dict(zip(lost["index"].dropna().astype(int), lost.time_ns[lost["index"].notna()].astype(int)))
    for row in bursts.itertuples(index=False):
        assert times[int(row.first_index)] == row.first_time_ns
        assert row.first_time_s == pytest.approx(row.first_time_ns / 1e9)


# --------------------------------------------------------------------------- the report's loss sections


def test_text_report_has_the_loss_sections() -> None:
    a = analysis_of(SAMPLES / "lab_thin_stream" / "sender.pcap")
    text = render_text(a.report)
    s = a.connections[0].a2b.loss
    assert "a->b loss:" in text and "loss totals (all connections, samples pooled):" in text
    rows = {line.split(":")[0].strip(): line for line in text.splitlines() if ":" in line}
    assert f"{s.by_trigger.get('recovery', 0)}/{s.by_trigger.get('rto', 0)}/{s.by_trigger.get('tlp', 0)}" in rows["rexmt recov/rto/tlp"]
    assert f"{s.rtd_ms.median:.1f} ms" in rows["RTD median"]
    assert f"{s.latency_ack_ms.p99:.1f} ms" in rows["ACK latency p99"]
    assert f"{s.pattern.P:.5f}" in rows["loss rate P"]
    assert f"{s.lost_downstream}/{s.lost_upstream}" in rows["lost down/upstream"]
    assert f"{s.retransmissions} (fast" in text


def test_json_is_asdict_with_schema_2() -> None:
    a = analysis_of(SAMPLES / "lab_reno_sack_bursty" / "sender.pcap")
    doc = json.loads(render_json(a.report))
    assert doc["schema_version"] >= 2  # 2 brought the loss sections; 3 the sender section (report --sender)
    loss = doc["connections"][0]["a2b"]["loss"]
    assert loss == json.loads(json.dumps(dataclasses.asdict(a.connections[0].a2b.loss)))
    assert doc["loss"]["retransmissions"] == loss["retransmissions"]


def test_csv_flattens_nested_fields() -> None:
    a = analysis_of(SAMPLES / "lab_reno_sack_bursty" / "sender.pcap")
    rows = list(csv.DictReader(io.StringIO(render_csv(a.report))))
    s = a.connections[0].a2b.loss
    row = rows[0]
    assert float(row["loss_rtd_ms_median"]) == pytest.approx(s.rtd_ms.median)
    assert int(row["loss_by_trigger_fast"]) == s.by_trigger["fast"]
    assert int(row["loss_by_trigger_rto"]) == 0  # every trigger has its column
    assert float(row["loss_pattern_gilbert_elliott_p"]) == pytest.approx(s.pattern.gilbert_elliott.p)
    assert row["loss_pattern_burst_histogram"] == " ".join(f"{k}:{v}" for k, v in sorted(s.pattern.burst_histogram.items()))
    assert rows[1]["loss_pattern_gilbert_elliott_p"] == ""  # the quiet direction: empty, same columns
    assert not any(v.startswith("{") for r in rows for v in r.values())
