"""Streaming must not change results: the report is the same whatever the batch size.

State carried between batches (sequence unwrapping, holes, pending RTT samples, duplicate-ACK
runs, epochs) is exercised by cutting real captures into batches of a few records.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpsack_analyze.analysis import analyze

DATA = Path(__file__).parent / "data" / "public"
CASES = [
    "zeek_http_206_example_a.pcap",  # SACK recovery
    "arkime_wireshark_retrans.pcap",  # no SACK, many retransmissions
    "suricata_bug7657_port_reuse.pcap",  # epochs
    "ndpi_sites_22ifaces.pcapng",  # pcapng, many interfaces
]


@pytest.mark.parametrize("name", CASES)
@settings(max_examples=3, deadline=None)
@given(chunk=st.integers(min_value=2_000, max_value=60_000))
def test_report_does_not_depend_on_batch_size(name: str, chunk: int) -> None:
    whole = asdict(analyze(str(DATA / name)).report)
    cut = asdict(analyze(str(DATA / name), chunk_bytes=chunk).report)
    assert cut == whole


LAB = Path(__file__).parent / "data" / "lab"
LOSS_TABLES = ("retransmissions_df", "episodes_df", "incidents_df", "lost_df", "fills_df", "bursts_df")


def _loss_tables(path: Path, chunk: int | None) -> dict[str, object]:
    an = analyze(str(path)) if chunk is None else analyze(str(path), chunk_bytes=chunk)
    out: dict[str, object] = {name: getattr(an, name)().to_dict("list") for name in LOSS_TABLES}
    for key, res in an.loss.items():
        out[f"{key} rtd"] = sorted(res.rtd_samples_ns.tolist())
        out[f"{key} rto rtd"] = sorted(res.rto_rtd_samples_ns.tolist())
        out[f"{key} lost"] = (res.lost_flags.tolist(), res.lost_times.tolist())
    return out


@pytest.mark.parametrize("path", [
    LAB / "thin_300" / "sender.pcap",  # D-SACKs, tail probes
    LAB / "ack_queue" / "sender.pcap",  # timeouts
    LAB / "both_bursty" / "sender.pcap",  # bursts
    DATA / "arkime_wireshark_retrans.pcap",  # resends of acknowledged bytes, 40 ms apart
])
def test_loss_records_do_not_depend_on_batch_size(path: Path) -> None:
    """Records move from objects to tables at the end of each batch (loss/tracker.py): the
    records, their order and what is derived from them must not depend on where batches end."""
    whole = _loss_tables(path, None)
    assert whole["retransmissions_df"]["index"]  # type: ignore[index]
    for chunk in (2_107, 20_000, 150_000):  # 2107: a segment was once settled between two resends
        assert _loss_tables(path, chunk) == whole


def test_records_move_before_the_end() -> None:
    """On a capture much longer than the D-SACK horizon, records leave the objects while reading."""
    from tcpsack_analyze.analysis import _Pipeline
    from tcpsack_analyze.reader import ReadStatus

    path = str(LAB / "thin_300" / "sender.pcap")
    pipe = _Pipeline(path, ReadStatus(path), None, 20_000, 60.0)
    for chunk in pipe.flows.chunks():
        if chunk.batch is None:  # the end: the trackers as they were before it
            break
        (live, _, _), _, moved = pipe.flows.core.loss_state()
    assert moved > 10 * max(live, 1), (moved, live)
