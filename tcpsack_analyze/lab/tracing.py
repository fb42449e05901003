"""The sender kernel's own account of a lab run, from tracepoints read with bpftrace.

Tracepoints used (formats checked on Linux 6.18, ``/sys/kernel/tracing/events/...``):

- ``tcp:tcp_probe``: fires at the start of ``tcp_rcv_established`` for each segment the socket
  receives (for a data sender: each ACK), with snd_una, snd_nxt, snd_cwnd (segments), ssthresh,
  srtt (microseconds, already divided by 8) and snd_wnd. The values are the state *before* the
  kernel processes that ACK. It fires only in ESTABLISHED.
- ``tcp:tcp_retransmit_skb``: fires after each (re)transmission attempt of an skb, with ``err``
  (0 when the segment went out). Its ``state`` field is the *socket* state (TCP_ESTABLISHED...),
  not the congestion state, and it has no sequence numbers, so the program reads them from the
  skb's control block (``struct tcp_skb_cb`` at ``offsetof(struct sk_buff, cb)`` = 40: next,
  prev, dev/rbnode, sk, tstamp, unchanged since Linux 4.x) and reads ``icsk_ca_state``,
  ``icsk_backoff`` and ``icsk_retransmits`` from the socket. One event can cover several MSS
  (``tcp_gso_segs``): the skb is cut into wire segments below TCP, so the capture shows them
  as consecutive segments starting at the traced sequence number.
- ``tcp:tcp_cong_state_set``: every change of the congestion state (Open, Disorder, CWR,
  Recovery, Loss: ``enum tcp_ca_state``).
- ``sock:inet_sock_set_state`` SYN_SENT -> ESTABLISHED: snd_una is then ISN + 1, which gives the
  initial sequence number without a capture.
- ``timer:timer_expire_entry/exit`` for ``tcp_write_timer``: a retransmission inside it was sent
  by the retransmission timer (RTO, tail loss probe or RACK reordering timer; the congestion
  state tells which), one outside it was clocked by an ACK. This kernel has no kprobes, so
  tracepoints are all there is. A timer that finds the socket owned by the application defers
  its work to ``release_sock``; such a retransmission is reported as ACK-clocked.

Events are kept only for sockets in the sender's network namespace (``net->ns.inum``), so runs
at once do not see each other. bpftrace stamps events with ``nsecs``, CLOCK_MONOTONIC; captures
use CLOCK_REALTIME. :func:`measure_clock_offset` measures realtime - monotonic by bracketing
one clock's reading between two of the other, and the runner converts every event with it.
"""
from __future__ import annotations

import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tcpsack_analyze.lab.process import Started, start
from tcpsack_analyze.lab.topology import LabError
from tcpsack_analyze.seqspace import wire_add

__all__ = [
    "CA_STATES",
    "CaChange",
    "ClockOffset",
    "Established",
    "KernelTrace",
    "Probe",
    "Retransmit",
    "TraceEvents",
    "ensure_tracefs",
    "measure_clock_offset",
    "parse",
]

CA_STATES = ("Open", "Disorder", "CWR", "Recovery", "Loss")
"""``enum tcp_ca_state`` (include/net/tcp.h) by value."""

_TRACEFS = Path("/sys/kernel/tracing")
_SKB_CB_OFFSET = 40

_PROGRAM = r"""
BEGIN { printf("READY\n"); }
tracepoint:timer:timer_expire_entry /args->function == kaddr("tcp_write_timer")/ { @in_timer[cpu] = 1; }
tracepoint:timer:timer_expire_exit { delete(@in_timer[cpu]); }
tracepoint:sock:inet_sock_set_state
/args->protocol == 6 && args->oldstate == 2 && args->newstate == 1/ {
  $sk = (struct sock *)args->skaddr;
  if ($sk->__sk_common.skc_net.net->ns.inum == NETNS) {
    printf("E %llu %u %u %u\n", nsecs, args->sport, args->dport, ((struct tcp_sock *)args->skaddr)->snd_una);
  }
}
tracepoint:tcp:tcp_probe {
  $sk = (struct sock *)args->skaddr;
  if ($sk->__sk_common.skc_net.net->ns.inum == NETNS) {
    printf("P %llu %u %u %u %u %u %u %u %u\n", nsecs, args->sport, args->dport, args->snd_una,
           args->snd_nxt, args->snd_cwnd, args->ssthresh, args->srtt, args->snd_wnd);
  }
}
tracepoint:tcp:tcp_retransmit_skb {
  $sk = (struct sock *)args->skaddr;
  if ($sk->__sk_common.skc_net.net->ns.inum == NETNS) {
    $cb = (struct tcp_skb_cb *)((uint64)args->skbaddr + SKB_CB);
    $icsk = (struct inet_connection_sock *)args->skaddr;
    printf("R %llu %u %u %u %u %u %u %u %u %u %d %d %u\n", nsecs, args->sport, args->dport, $cb->seq,
           $cb->end_seq, $cb->tcp_gso_segs, $cb->tcp_flags, $icsk->icsk_ca_state, $icsk->icsk_backoff,
           $icsk->icsk_retransmits, args->state, args->err, @in_timer[cpu]);
  }
}
tracepoint:tcp:tcp_cong_state_set {
  $sk = (struct sock *)args->skaddr;
  if ($sk->__sk_common.skc_net.net->ns.inum == NETNS) {
    printf("C %llu %u %u %u\n", nsecs, args->sport, args->dport, args->cong_state);
  }
}
END { clear(@in_timer); }
"""


@dataclass(frozen=True, slots=True)
class Established:
    """The sender socket reached ESTABLISHED; ``isn`` is its initial sequence number."""

    t: int
    sport: int
    dport: int
    isn: int


@dataclass(frozen=True, slots=True)
class Probe:
    """One ``tcp_probe``: the socket's state when an ACK arrived, before processing it."""

    t: int
    sport: int
    dport: int
    snd_una: int
    snd_nxt: int
    cwnd: int
    ssthresh: int
    srtt_us: int
    snd_wnd: int


@dataclass(frozen=True, slots=True)
class Retransmit:
    """One ``tcp_retransmit_skb`` with the skb's sequence range and the socket's state."""

    t: int
    sport: int
    dport: int
    seq: int
    end_seq: int
    segs: int
    tcp_flags: int
    ca_state: int
    backoff: int
    retransmits: int
    sk_state: int
    err: int
    timer: bool


@dataclass(frozen=True, slots=True)
class CaChange:
    """``tcp_cong_state_set``: the congestion state became ``state``."""

    t: int
    sport: int
    dport: int
    state: int


@dataclass
class TraceEvents:
    """Everything the trace produced, each list in time order (``t`` in monotonic ns)."""

    established: list[Established]
    probes: list[Probe]
    retransmits: list[Retransmit]
    ca_changes: list[CaChange]
    lost_events: int


def parse(text: str, lost_text: str = "") -> TraceEvents:
    """Parse the program's output lines (and bpftrace's stderr for lost-event counts)."""
    events = TraceEvents([], [], [], [], sum(int(n) for n in re.findall(r"Lost (\d+) events", lost_text)))
    for line in text.splitlines():
        tag, *fields = line.split() or [""]
        if tag not in ("E", "P", "R", "C"):
            continue  # bpftrace's own messages and blank lines
        v = [int(f) for f in fields]
        if tag == "E":
            events.established.append(Established(v[0], v[1], v[2], int(wire_add(v[3], -1))))
        elif tag == "P":
            events.probes.append(Probe(*v))
        elif tag == "R":
            events.retransmits.append(Retransmit(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8],
                                                 v[9], v[10], v[11], timer=bool(v[12])))
        else:
            events.ca_changes.append(CaChange(*v))
    for series in (events.established, events.probes, events.retransmits, events.ca_changes):
        series.sort(key=lambda e: e.t)  # per-CPU buffers arrive interleaved
    return events


@dataclass(frozen=True)
class ClockOffset:
    """CLOCK_REALTIME - CLOCK_MONOTONIC in ns, and the half-width of the bracket measuring it."""

    offset_ns: int
    uncertainty_ns: int

    def to_realtime(self, mono_ns: int) -> float:
        """A monotonic timestamp as capture-clock seconds."""
        return (mono_ns + self.offset_ns) / 1e9


def measure_clock_offset(samples: int = 200) -> ClockOffset:
    """Bracket a monotonic reading between two realtime ones; keep the tightest bracket."""
    best: tuple[int, int] | None = None
    for _ in range(samples):
        before = time.clock_gettime_ns(time.CLOCK_REALTIME)
        mono = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        after = time.clock_gettime_ns(time.CLOCK_REALTIME)
        width = after - before
        if best is None or width < best[1]:
            best = ((before + after) // 2 - mono, width)
    assert best is not None
    return ClockOffset(best[0], (best[1] + 1) // 2)


def ensure_tracefs() -> None:
    """Mount tracefs at /sys/kernel/tracing if it is not there (bpftrace needs its events)."""
    if (_TRACEFS / "events").is_dir():
        return
    proc = subprocess.run(["mount", "-t", "tracefs", "nodev", str(_TRACEFS)], capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not (_TRACEFS / "events").is_dir():
        raise LabError(f"tracefs is not mounted and mounting it failed: {proc.stderr.strip()}")


class KernelTrace:
    """The bpftrace process for one run, filtered on the sender's network namespace."""

    def __init__(self, netns_inode: int) -> None:
        self.program = _PROGRAM.replace("NETNS", str(netns_inode)).replace("SKB_CB", str(_SKB_CB_OFFSET))
        self.proc: Started | None = None

    def start(self, logdir: Path) -> None:
        """Start bpftrace and wait until its probes are attached."""
        ensure_tracefs()
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "BPFTRACE_PERF_RB_PAGES": "4096"}
        self.proc = start(["bpftrace", "-B", "line", "-e", self.program], "bpftrace", logdir,
                          ready_on_stdout="READY", env=env)

    def stop(self) -> TraceEvents:
        """Stop bpftrace (SIGINT, so it drains its buffers) and parse what it printed."""
        assert self.proc is not None, "stop() before start()"
        stderr = self.proc.stop(signal.SIGINT)
        return parse(self.proc.read_stdout(), stderr)
