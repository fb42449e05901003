"""The event boundary (events.py): per-event views, columns, and events_of on real captures."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tcpsack_analyze
from tcpsack_analyze.events import ACK, SYN, Ack, Dir, EventBatch, Kind, Placement, Send

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_traces" / "http_206_sack_recovery.pcap"

sends = st.builds(
    Send, time_ns=st.integers(0, 2**62), index=st.integers(0, 2**40), start=st.integers(0, 2**40), end=st.integers(0, 2**40),
    flags=st.integers(0, 255), tsval=st.none() | st.integers(0, 2**32 - 1), placement=st.sampled_from(list(Placement)),
)
blocks = st.lists(st.tuples(st.integers(0, 2**40), st.integers(0, 2**40)), max_size=4).map(tuple)
acks = st.builds(
    Ack, time_ns=st.integers(0, 2**62), index=st.integers(0, 2**40), ack=st.integers(0, 2**40), sack=blocks, dsack=st.booleans(),
    dup=st.booleans(), win=st.integers(0, 2**30), tsecr=st.none() | st.integers(0, 2**32 - 1), flags=st.integers(0, 255),
)


@given(st.lists(sends | acks, max_size=30))
def test_events_round_trip_through_columns(events: list) -> None:
    batch = EventBatch.of(events)
    assert len(batch) == len(events)
    assert list(batch) == events
    assert int(batch.is_send.sum()) == sum(isinstance(e, Send) for e in events)
    half = len(events) // 2
    assert list(EventBatch.concat([batch.take(slice(0, half)), batch.take(slice(half, None))])) == events


def test_more_than_four_sack_blocks_is_refused() -> None:
    with pytest.raises(ValueError, match="RFC 2018"):
        EventBatch.of([Ack(0, 0, 1, ((1, 2),) * 5, False, False, 0, None, ACK)])


def test_is_data_leaves_out_bare_syn_fin_and_probes() -> None:
    evs = [Send(0, 0, 1, 1, SYN, None, Placement.NONE), Send(1, 1, 1, 2, 0, None, Placement.PROBE),
           Send(2, 2, 1, 101, 0, None, Placement.NEW), Send(3, 3, 1, 101, 0, None, Placement.REXMIT)]
    assert EventBatch.of(evs).is_data.tolist() == [False, False, True, True]
    assert [e.resent for e in evs] == [False, False, False, True]


def test_direction_names_parse_both_ways() -> None:
    for d in Dir:
        assert Dir.parse(d.label) is d and Dir.parse(d.arrow) is d and Dir.parse(int(d)) is d
        assert d.peer.peer is d
    with pytest.raises(ValueError, match="a2b or b2a"):
        Dir.parse("up")


def test_events_of_a_sample_agrees_with_the_report() -> None:
    """The stream of b2a of connection 1 holds exactly what the report counted for it."""
    a = tcpsack_analyze.analyze(str(SAMPLE))
    rep = a.connections[1]
    ev = tcpsack_analyze.events_of(str(SAMPLE), conn=1, direction="b2a")
    assert np.all(np.diff(ev.index) > 0)  # capture order, each packet once
    data = ev.is_send & (ev.end > ev.start)
    assert int(data.sum()) == rep.b2a.data_packets
    assert int((ev.placement == Placement.REXMIT).sum()) == rep.b2a.rexmit_packets
    assert int(ev.is_ack.sum()) == rep.a2b.ack_packets  # a's ACKs of b's data
    assert int(ev.dup.sum()) == rep.a2b.duplicate_acks
    assert int(ev.dsack.sum()) == rep.a2b.dsack_packets
    assert int((ev.nsack > 0).sum()) == rep.a2b.sack_packets
    retrans = a.retransmissions_df()
    mine = retrans[(retrans.conn == 1) & (retrans.direction == "b2a")]
    assert sorted(mine["index"].tolist()) == sorted(ev.index[ev.placement == Placement.REXMIT].tolist())


def test_events_of_refuses_an_unknown_connection() -> None:
    with pytest.raises(KeyError, match="no connection 99"):
        tcpsack_analyze.events_of(str(SAMPLE), conn=99)


def test_kind_column_matches_views() -> None:
    ev = tcpsack_analyze.events_of(str(SAMPLE), conn=1, direction=Dir.B2A)
    kinds = [Kind.SEND if isinstance(e, Send) else Kind.ACK for e in ev]
    assert kinds == ev.kind.tolist()
