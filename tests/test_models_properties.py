"""Invariants of every sender model under random conversations (hypothesis).

For any sequence of sends, cumulative ACKs, duplicate ACKs with SACK blocks, retransmissions
and timeouts: cwnd >= 1 SMSS, ssthresh >= 2 SMSS, pipe >= 0 and the window never negative; and
the same events give the same states (the models are deterministic).
"""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from modelkit import SMSS, ack, send

from tcpsack_analyze.events import Ack, Send
from tcpsack_analyze.models import MODELS, SenderOptions, model_class

OPS = st.lists(st.tuples(st.sampled_from(["new", "ack", "dup", "rexmit", "timeout"]), st.integers(0, 7), st.integers(0, 3)),
               max_size=80)
PROFILES = {"rfc": SenderOptions.rfc(), "linux": SenderOptions.linux(),
            "abc": SenderOptions(slow_start="abc", reduction="classic", thin_dupack=True, thin_linear_timeouts=True)}


def conversation(ops: list[tuple[str, int, int]]) -> list[Send | Ack | int]:
    """Events (or an int: a timeout at that time in ns) that a sender could have seen."""
    out: list[Send | Ack | int] = []
    una = nxt = 0  # in segments
    sacked: set[int] = set()
    t = 0.0
    for op, a, b in ops:
        t += 1 + a
        if op == "new":
            out.append(send(t, nxt, count=a + 1, tsval=int(t)))
            nxt += a + 1
        elif op == "ack" and nxt > una:
            una = min(nxt, una + a + 1)
            sacked = {s for s in sacked if s >= una}
            out.append(ack(t, una, tsecr=int(t) - 1))
        elif op == "dup" and nxt > una + 1:
            s = una + 1 + (a % (nxt - una - 1))
            sacked.add(s)
            blocks = tuple((x, x + 1) for x in sorted(sacked)[-3:])
            out.append(ack(t, una, sack=blocks if b else (), dup=True))
        elif op == "rexmit" and nxt > una:
            out.append(send(t, una + (a % (nxt - una)), resent=True, tsval=int(t)))
        elif op == "timeout" and nxt > una:
            out.append(int(t * 1_000_000))
    return out


def run(name: str, options: SenderOptions, events: list[Send | Ack | int]) -> list[tuple[int, int, int, str]]:
    m = model_class(name)(SMSS, options)
    trace = []
    for ev in events:
        if isinstance(ev, int):
            m.on_timeout(ev)
        elif isinstance(ev, Send):
            m.on_send(ev)
        else:
            m.on_ack(ev)
        assert m.cwnd >= SMSS, (name, m.cwnd)
        assert m.ssthresh >= 2 * SMSS, (name, m.ssthresh)
        assert m.pipe >= 0 and m.send_window() >= 0
        trace.append((m.cwnd, m.ssthresh, m.pipe, m.state.value))
    return trace


@settings(max_examples=60, deadline=None)
@given(OPS, st.sampled_from(sorted(MODELS)), st.sampled_from(sorted(PROFILES)))
def test_invariants_and_determinism(ops: list[tuple[str, int, int]], name: str, profile: str) -> None:
    events = conversation(ops)
    assert run(name, PROFILES[profile], events) == run(name, PROFILES[profile], events)
