"""Turn a run's raw pieces (trace events, drop log, traffic results) into a :class:`Truth`.

Pure data work, separate from the orchestration in :mod:`~tcpsack_analyze.lab.runner`, so it
can be read (and changed) without the processes around it. Flows are identified by the
sender's port: all lab flows share the two addresses and the receiver port.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcpsack_analyze.lab.alignment import SegmentIndex, alignment_stats
from tcpsack_analyze.lab.droplog import Drop
from tcpsack_analyze.lab.topology import LabError
from tcpsack_analyze.lab.tracing import CA_STATES, ClockOffset, Retransmit, TraceEvents
from tcpsack_analyze.lab.wire import flags_text
from tcpsack_analyze.seqspace import wire_sub
from tcpsack_analyze.truth import CaStateChange, Flow, Retransmission

__all__ = ["Assembled", "assemble", "classify", "summary_line"]

_SYN, _FIN = 0x02, 0x01
_LOSS, _RECOVERY = CA_STATES.index("Loss"), CA_STATES.index("Recovery")


@dataclass
class Assembled:
    """The derived parts of the truth (the rest is copied from the run's configuration)."""

    flows: list[Flow]
    drops: list[Drop]
    retransmissions: list[Retransmission]
    ca_states: list[CaStateChange]
    probes: list[list[float | int]]
    alignment: dict[str, Any]
    failed_retransmits: int


def classify(event: Retransmit, first_in_recovery: bool) -> str:
    """The trigger of a retransmission (see :data:`tcpsack_analyze.truth.KINDS`)."""
    if event.timer:
        if event.ca_state == _LOSS:
            return "rto"
        return "rack_timer" if event.ca_state == _RECOVERY else "tlp"
    if event.ca_state == _RECOVERY:
        return "fast" if first_in_recovery else "recovery"
    return "loss_recovery" if event.ca_state == _LOSS else "other"


def assemble(
    events: TraceEvents,
    clock: ClockOffset,
    sent: list[dict[str, Any]],
    received: list[dict[str, Any]],
    drops: list[Drop],
    sender_addr: str,
    receiver_addr: str,
    sender_pcap: Path | None,
) -> Assembled:
    """Join trace events, traffic results and the drop log into the truth's records."""
    isn = {e.sport: e.isn for e in events.established}
    got = {r["peer_port"]: r["bytes"] for r in received}
    flows = [
        Flow(id=s["flow"], src=sender_addr, sport=s["sport"], dst=receiver_addr, dport=s["dport"],
             isn=isn.get(s["sport"]), cc=s["cc"], bytes_sent=s["bytes"],
             bytes_received=got.get(s["sport"]), start=s["start"], acked=s["acked"],
             kernel_total_retrans=s["kernel_total_retrans"])
        for s in sent
    ]
    by_port = {f.sport: f for f in flows}

    def rel(sport: int, seq: int) -> int | None:
        base = isn.get(sport)
        return None if base is None else int(wire_sub(seq, base))

    index = SegmentIndex(sender_pcap) if sender_pcap is not None else None
    residuals: list[float] = []
    unmatched = 0
    retransmissions: list[Retransmission] = []
    state_changes = sorted(events.ca_changes, key=lambda c: c.t)
    recovery_started: dict[int, int] = {}  # sport -> time of the latest entry into Recovery
    ci = 0
    seen_in_episode: set[tuple[int, int]] = set()
    for ev in events.retransmits:
        while ci < len(state_changes) and state_changes[ci].t <= ev.t:
            c = state_changes[ci]
            if c.state == _RECOVERY:
                recovery_started[c.sport] = c.t
            ci += 1
        if ev.sport not in by_port:
            continue  # a socket of the namespace that is not one of the run's flows
        length = int(wire_sub(ev.end_seq, ev.seq)) - bool(ev.tcp_flags & _SYN) - bool(ev.tcp_flags & _FIN)
        relative = rel(ev.sport, ev.seq)
        flow = by_port[ev.sport]
        if relative is not None and relative > flow.bytes_sent + 2:
            raise LabError(f"traced retransmission at relative seq {relative} lies beyond the data sent: "
                           "the skb layout this kernel uses is not the one the trace program assumes")
        episode = (ev.sport, recovery_started.get(ev.sport, -1))
        first = ev.ca_state == _RECOVERY and episode not in seen_in_episode
        if ev.ca_state == _RECOVERY:
            seen_in_episode.add(episode)
        t = clock.to_realtime(ev.t)
        capture_t = None
        if index is not None and ev.err == 0:
            capture_t = index.nearest(ev.sport, ev.dport, ev.seq, t)
            if capture_t is None:
                unmatched += 1
            else:
                residuals.append(capture_t - t)
        retransmissions.append(Retransmission(
            t=t, flow=flow.id, seq=ev.seq, rel_seq=relative, len=length, segs=ev.segs,
            flags=flags_text(ev.tcp_flags), ca_state=CA_STATES[ev.ca_state], backoff=ev.backoff,
            retransmits=ev.retransmits, timer=ev.timer, kind=classify(ev, first), err=ev.err,
            capture_t=capture_t,
        ))
    ca_states = [
        CaStateChange(t=clock.to_realtime(c.t), flow=by_port[c.sport].id, state=CA_STATES[c.state])
        for c in state_changes if c.sport in by_port
    ]
    probes: list[list[float | int]] = [
        [round(clock.to_realtime(p.t), 9), by_port[p.sport].id, rel(p.sport, p.snd_una) or 0,
         rel(p.sport, p.snd_nxt) or 0, p.cwnd, p.ssthresh, p.srtt_us, p.snd_wnd]
        for p in events.probes if p.sport in by_port
    ]
    if index is None:
        alignment: dict[str, Any] = {"method": "none: no sender-side capture to align with"}
    else:
        alignment = {"method": "traced retransmissions matched to the sender capture by seq and len",
                     **alignment_stats(residuals, unmatched)}
    return Assembled(
        flows=flows,
        drops=drops,
        retransmissions=retransmissions,
        ca_states=ca_states,
        probes=probes,
        alignment=alignment,
        failed_retransmits=sum(1 for r in retransmissions if r.err != 0),
    )


def summary_line(flows: list[Flow], drops: list[Drop], retransmissions: list[Retransmission],
                 alignment: dict[str, Any]) -> str:
    """The one-line account of a run printed by ``lab run`` and saved as ``summary.txt``."""
    reasons = Counter(d.reason for d in drops)
    places = Counter(d.where for d in drops if d.where is not None)
    split = f" ({places['upstream']} upstream, {places['downstream']} downstream of the mid point)" if places else ""
    kinds = Counter(r.kind for r in retransmissions if r.err == 0)
    kinds_text = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none"
    duration = max(f.acked for f in flows) - min(f.start for f in flows)
    align = (f"alignment median {alignment['median_us']:.1f} us, max |{alignment['max_abs_us']:.1f}| us"
             if "median_us" in alignment else "alignment n/a")
    return (f"{len(flows)} flow(s) {flows[0].cc}: {sum(f.bytes_sent for f in flows)} B in {duration:.2f} s; "
            f"drops: {reasons['loss']} loss, {reasons['queue']} queue{split}; "
            f"retransmissions: {sum(kinds.values())} ({kinds_text}), "
            f"{sum(r.segs for r in retransmissions if r.err == 0)} segments; {align}")
