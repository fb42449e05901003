"""One lab run, from configuration to ``truth.json``, with everything removed afterwards.

Order of events: build the namespaces, apply and read back the TCP settings, start the
emulator, the kernel trace and the captures (each waited for until ready), run the receiver
and the sender, let the last packets drain, stop the captures, the trace and the emulator, and
assemble the truth. Every process and namespace is registered for removal as soon as it exists,
and removal runs on success, on error, on Ctrl-C and on SIGTERM.
"""
from __future__ import annotations

import json
import os
import platform
import random
import shutil
import signal
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from tcpsack_analyze import __version__
from tcpsack_analyze.lab.assemble import assemble, summary_line
from tcpsack_analyze.lab.capture import DEFAULT_SNAPLEN, Capture
from tcpsack_analyze.lab.droplog import read_drops
from tcpsack_analyze.lab.emulator import EmulatorConfig, MidPoint
from tcpsack_analyze.lab.link import LinkConfig
from tcpsack_analyze.lab.process import start
from tcpsack_analyze.lab.settings import TcpSettings, check_applied, read_back
from tcpsack_analyze.lab.topology import (
    RECEIVER_ADDR,
    SENDER_ADDR,
    LabError,
    Topology,
    ns_cmd,
)
from tcpsack_analyze.lab.tracing import KernelTrace, measure_clock_offset
from tcpsack_analyze.lab.traffic import Traffic
from tcpsack_analyze.truth import Truth, write

__all__ = ["CAPTURE_POINTS", "REQUIRED_TOOLS", "RunConfig", "check_environment", "run"]

REQUIRED_TOOLS = ("ip", "tcpdump", "bpftrace", "ethtool", "sysctl")
CAPTURE_POINTS = ("sender", "mid", "receiver")
_DRAIN = 0.2  # seconds after the last ACK for the captures to see the connection close


@dataclass(frozen=True)
class RunConfig:
    """Everything a run depends on; recorded in ``truth.json`` as ``params``.

    ``upstream`` (forward, reverse) puts a mid point on the path: its links are the first
    section, sender -> mid point, and ``forward``/``reverse`` then the second, mid point ->
    receiver. A ``mid`` capture point needs one (the links may be plain: no delay, no loss).
    """

    forward: LinkConfig
    reverse: LinkConfig
    tcp: TcpSettings
    traffic: Traffic
    capture: tuple[str, ...] = ("sender",)
    snaplen: int = DEFAULT_SNAPLEN
    seed: int = 1
    port: int = field(default_factory=lambda: random.randint(20000, 60000))
    timeout: float = 120.0
    upstream: tuple[LinkConfig, LinkConfig] | None = None

    def __post_init__(self) -> None:
        bad = set(self.capture) - set(CAPTURE_POINTS)
        if bad or not self.capture:
            raise ValueError(f"capture points must be among {CAPTURE_POINTS}, not {sorted(bad) or 'none'}")
        if "mid" in self.capture and self.upstream is None:
            raise ValueError("a mid capture point needs an upstream section (RunConfig.upstream)")

    @property
    def path_delay(self) -> float:
        """One-way delay sender -> receiver over both sections, seconds."""
        return self.forward.delay + (0.0 if self.upstream is None else self.upstream[0].delay)

    def to_dict(self) -> dict[str, object]:
        """For ``truth.json`` (``upstream`` only on a path with a mid point)."""
        out: dict[str, object] = {
            "forward": self.forward.to_dict(), "reverse": self.reverse.to_dict(),
            "tcp": self.tcp.to_dict(), "traffic": self.traffic.to_dict(),
            "capture": list(self.capture), "snaplen": self.snaplen, "seed": self.seed,
            "port": self.port,
        }
        if self.upstream is not None:
            out["upstream"] = {"forward": self.upstream[0].to_dict(), "reverse": self.upstream[1].to_dict()}
        return out


def check_environment() -> None:
    """Raise :class:`LabError` naming what is missing for a run on this machine."""
    if sys.platform != "linux":
        raise LabError("the lab needs Linux (network namespaces, AF_PACKET, tracepoints)")
    if os.geteuid() != 0:
        raise LabError("the lab needs root (namespaces, packet sockets, tracepoints)")
    missing = [tool for tool in REQUIRED_TOOLS if shutil.which(tool) is None]
    if missing:
        raise LabError(f"missing tools: {', '.join(missing)} (Debian: iproute2 tcpdump bpftrace ethtool procps)")


class _Terminated(Exception):
    """SIGTERM arrived: unwind like Ctrl-C so the cleanup runs."""


def _on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    raise _Terminated("terminated by SIGTERM")


def run(config: RunConfig, outdir: Path, command: str = "") -> Truth:
    """Run the lab once; write the captures, ``truth.json`` and ``summary.txt`` into ``outdir``."""
    check_environment()
    outdir.mkdir(parents=True, exist_ok=True)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        # the work directory holds the children's logs: it must outlive their cleanup
        with tempfile.TemporaryDirectory(prefix="tsa-lab-") as tmp, ExitStack() as stack:
            return _run(config, outdir, Path(tmp), command, stack)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(config: RunConfig, outdir: Path, work: Path, command: str, stack: ExitStack) -> Truth:
    topo = stack.enter_context(Topology(mid=config.upstream is not None))
    for ns in (topo.sender_ns, topo.receiver_ns):
        config.tcp.apply(ns)
    sysctls = {"sender": read_back(topo.sender_ns), "receiver": read_back(topo.receiver_ns)}
    for end, values in sysctls.items():
        check_applied(config.tcp, values, end)

    mid = None if config.upstream is None else MidPoint(topo.mid_upstream_if, topo.mid_downstream_if,
                                                        *config.upstream)
    emu_config = EmulatorConfig(topo.middle_sender_if, topo.middle_receiver_if, config.forward,
                                config.reverse, config.seed, str(work / "drops.jsonl"),
                                str(work / "emulator.json"), mid)
    (work / "emulator-config.json").write_text(emu_config.to_json())
    emulator = start(ns_cmd(topo.middle_ns, sys.executable, "-m", "tcpsack_analyze.lab.emulator",
                            str(work / "emulator-config.json")), "emulator", work, ready_on_stdout="ready")
    stack.callback(emulator.stop)

    trace = KernelTrace(topo.netns_inode(topo.sender_ns))
    trace.start(work)
    assert trace.proc is not None
    stack.callback(trace.proc.stop, signal.SIGINT)

    captures = []
    listen_on = {"sender": (topo.sender_ns, topo.sender_if), "receiver": (topo.receiver_ns, topo.receiver_if),
                 "mid": (topo.middle_ns, topo.mid_upstream_if)}
    for point in config.capture:
        ns, ifname = listen_on[point]
        cap = Capture(point, ns, ifname, outdir / f"{point}.pcap", config.snaplen)
        cap.start(work)
        assert cap.proc is not None
        stack.callback(cap.proc.stop, signal.SIGINT)
        captures.append(cap)

    clock_before = measure_clock_offset()
    py = sys.executable
    receiver = start(ns_cmd(topo.receiver_ns, py, "-m", "tcpsack_analyze.lab.traffic", "recv",
                            str(work / "received.json"), "--port", str(config.port),
                            "--flows", str(config.traffic.flows)),
                     "receiver", work, ready_on_stdout="ready")
    stack.callback(receiver.stop)
    sender = start(ns_cmd(topo.sender_ns, py, "-m", "tcpsack_analyze.lab.traffic", "send",
                          str(work / "sent.json"), "--dst", RECEIVER_ADDR, "--port", str(config.port),
                          "--cc", config.tcp.cc, *config.traffic.sender_options()),
                   "sender", work)
    stack.callback(sender.stop)
    budget = config.timeout + config.traffic.expected_duration()
    sender.wait(budget)
    receiver.wait(10.0)
    time.sleep(_DRAIN + 2 * config.path_delay)
    clock_after = measure_clock_offset()

    capture_info = [cap.stop() for cap in captures]
    events = trace.stop()
    emulator.stop()
    emulator_stats = json.loads((work / "emulator.json").read_text())

    sent = json.loads((work / "sent.json").read_text())["flows"]
    received = json.loads((work / "received.json").read_text())["flows"]
    sender_pcap = outdir / "sender.pcap" if "sender" in config.capture else None
    parts = assemble(events, clock_before, sent, received, read_drops(work / "drops.jsonl"),
                     SENDER_ADDR, RECEIVER_ADDR, sender_pcap)
    summary = summary_line(parts.flows, parts.drops, parts.retransmissions, parts.alignment)
    offloads = {"sender": topo.offloads(topo.sender_ns, topo.sender_if),
                "receiver": topo.offloads(topo.receiver_ns, topo.receiver_if)}
    if topo.mid:
        offloads["mid"] = topo.offloads(topo.middle_ns, topo.mid_upstream_if)
    truth = Truth(
        params=config.to_dict(),
        sysctls=sysctls,
        topology={
            "sender_addr": SENDER_ADDR, "receiver_addr": RECEIVER_ADDR, "prefix": topo.prefix,
            "emulator": "AF_PACKET bump in the wire in a middle namespace (tcpsack_analyze.lab.emulator)",
            "offloads": offloads,
        },
        captures=capture_info,
        clock={
            "capture_clock": "CLOCK_REALTIME", "trace_clock": "CLOCK_MONOTONIC",
            "realtime_minus_monotonic_ns": clock_before.offset_ns,
            "offset_uncertainty_ns": clock_before.uncertainty_ns,
            "offset_drift_ns": clock_after.offset_ns - clock_before.offset_ns,
            "alignment": parts.alignment,
        },
        emulator=emulator_stats,
        trace={"tool": "bpftrace", "lost_events": events.lost_events,
               "failed_retransmits": parts.failed_retransmits,
               "probes": len(parts.probes)},
        flows=parts.flows,
        drops=parts.drops,
        retransmissions=parts.retransmissions,
        ca_states=parts.ca_states,
        probes=parts.probes,
        summary=summary,
        kernel=platform.release(),
        command=command or f"tcpsack-analyze {__version__} (library call)",
    )
    write(truth, outdir / "truth.json")
    truth.path = outdir / "truth.json"
    (outdir / "summary.txt").write_text(summary + "\n")
    return truth
