"""Packet capture with tcpdump inside a lab namespace.

tcpdump (libpcap) writes classic pcap with the Ethernet link type and microsecond
CLOCK_REALTIME timestamps, the format every peer tool (tcptrace, tshark) reads. It runs with
``-Z root`` so it can write into a root-owned output directory, with a large kernel buffer so
a burst does not overflow it, and in immediate mode: otherwise libpcap hands packets over in
ring blocks retired up to a second late, and the last block is lost when tcpdump is stopped.
Its own count of kernel drops is recorded: a capture that lost packets is not ground truth.
"""
from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from pathlib import Path

from tcpsack_analyze.lab.process import Started, start
from tcpsack_analyze.lab.topology import ns_cmd

__all__ = ["DEFAULT_SNAPLEN", "Capture"]

DEFAULT_SNAPLEN = 128
_BUFFER_KIB = 16384


@dataclass
class Capture:
    """One running tcpdump: where (``point``: sender, mid or receiver), on what, into which file."""

    point: str
    namespace: str
    interface: str
    path: Path
    snaplen: int
    proc: Started | None = None

    def start(self, logdir: Path) -> None:
        """Start tcpdump and wait until it listens."""
        argv = ns_cmd(self.namespace, "tcpdump", "-i", self.interface, "-s", str(self.snaplen),
                      "-B", str(_BUFFER_KIB), "--immediate-mode", "-Z", "root", "-U", "-n",
                      "-w", str(self.path))
        self.proc = start(argv, f"tcpdump ({self.point})", logdir, ready_on_stderr="listening on")

    def stop(self) -> dict[str, object]:
        """Stop tcpdump (SIGINT, so it flushes) and return its description for ``truth.json``."""
        assert self.proc is not None, "stop() before start()"
        stderr = self.proc.stop(signal.SIGINT)
        pattern = r"(\d+) packets? (captured|received by filter|dropped by kernel)"
        counts = {key: int(n) for n, key in re.findall(pattern, stderr)}
        return {
            "file": self.path.name,
            "point": self.point,
            "interface": self.interface,
            "snaplen": self.snaplen,
            "linktype": "EN10MB",
            "packets_captured": counts.get("captured"),
            "dropped_by_kernel": counts.get("dropped by kernel"),
        }
