"""The loss section of a direction (loss/summary.py), from hand-built conversations."""
from __future__ import annotations

from test_stages_from_events import Talk, fast_retransmit

from tcpsack_analyze.loss.summary import LossSummary, summarize


def _summary(talk: Talk) -> LossSummary:
    return summarize(talk.run(), throughput_Bps=1e5, mss=1000, data_packets=10, peer_acks=10, gilbert_elliott=None)


def test_a_direction_without_loss_has_empty_figures_of_its_own() -> None:
    """The figures of a direction without loss records are made once and copied: each summary
    has its own dicts (a caller that edits one does not edit the next)."""
    talks = [Talk(), Talk()]
    for talk in talks:
        talk.warm_up(6)
    first, second = (_summary(t) for t in talks)
    assert first == second
    assert (first.retransmissions, first.by_trigger, first.episodes, first.rtd_ms.count, first.pattern.lost) == (0, {}, 0, 0, 0)
    assert first.pattern.segments == 6 and first.pattern.P == 0.0
    first.by_trigger["fast"] = 1
    assert second.by_trigger == {} and _summary(talks[1]).by_trigger == {}


def test_a_direction_with_a_loss_reads_its_records() -> None:
    talk = fast_retransmit()
    s = _summary(talk)
    assert (s.retransmissions, s.by_trigger, s.episodes, s.episodes_ended, s.rtd_ms.count) == (1, {"fast": 1}, 1, {"full_ack": 1}, 1)
    assert s.pattern.lost == 1 and s.pattern.bursts == 1 and s.pattern_from == "resends"
