"""The lab's network: sender and receiver namespaces joined through a middle namespace.

::

    [sender ns]  <prefix>s ==veth== <prefix>ms  [middle ns: emulator]  <prefix>mr ==veth== <prefix>r  [receiver ns]
    192.0.2.1/24                                                                         192.0.2.2/24

The middle namespace holds no addresses: the emulator process bridges its two veth ends at
layer 2 (ARP included). A run with a mid capture point (``Topology(mid=True)``) gets one more
veth pair, both ends in the middle namespace, which the emulator routes every frame through
between the path's two sections::

    <prefix>ms -> [upstream section] -> <prefix>mu ==veth== <prefix>md -> [downstream section] -> <prefix>mr

so a tcpdump on ``<prefix>mu`` sees what survived the upstream section, before the downstream
one (and the reverse direction the other way round). Addresses come from TEST-NET-1 (RFC 5737), which exists only inside
these namespaces. Every name starts with a per-run prefix (``tsa`` + 6 random hex digits), so
two runs at once do not collide, and :meth:`Topology.close` (also the context manager's exit)
kills whatever still runs in the namespaces and deletes them, which removes the veths too.

Offloads (TSO, GSO, GRO, checksum) are turned off on every veth end so the captures show
wire-sized segments with real checksums, and so frames re-injected by the emulator's packet
sockets carry valid checksums. IPv6 is disabled so no neighbour discovery appears in captures.
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["RECEIVER_ADDR", "SENDER_ADDR", "LabError", "Topology", "ns_cmd"]

SENDER_ADDR = "192.0.2.1"
RECEIVER_ADDR = "192.0.2.2"
_PREFIX_LEN = 24
_NETNS_DIR = Path("/run/netns")


class LabError(RuntimeError):
    """A lab run cannot go on (missing tool, no privileges, a command failed)."""


def ns_cmd(namespace: str, *argv: str) -> list[str]:
    """The argv that runs ``argv`` inside ``namespace`` (``ip netns exec``)."""
    return ["ip", "netns", "exec", namespace, *argv]


def run(argv: list[str]) -> str:
    """Run a setup command; its stdout, or a :class:`LabError` that quotes its stderr."""
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise LabError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


@dataclass
class Topology:
    """Three namespaces and two veth pairs (three with a mid point) with per-run unique names."""

    mid: bool = False
    prefix: str = field(default_factory=lambda: "tsa" + secrets.token_hex(3))
    _created: list[str] = field(default_factory=list)

    @property
    def sender_ns(self) -> str:
        return f"{self.prefix}-snd"

    @property
    def middle_ns(self) -> str:
        return f"{self.prefix}-mid"

    @property
    def receiver_ns(self) -> str:
        return f"{self.prefix}-rcv"

    @property
    def sender_if(self) -> str:
        """The sender's veth end (in the sender namespace): where a sender capture listens."""
        return f"{self.prefix}s"

    @property
    def receiver_if(self) -> str:
        """The receiver's veth end (in the receiver namespace)."""
        return f"{self.prefix}r"

    @property
    def middle_sender_if(self) -> str:
        """The middle namespace's end facing the sender (emulator input for ``fwd``)."""
        return f"{self.prefix}ms"

    @property
    def middle_receiver_if(self) -> str:
        """The middle namespace's end facing the receiver (emulator input for ``rev``)."""
        return f"{self.prefix}mr"

    @property
    def mid_upstream_if(self) -> str:
        """The mid point's end facing the sender (middle namespace): where a mid capture listens."""
        return f"{self.prefix}mu"

    @property
    def mid_downstream_if(self) -> str:
        """The mid point's end facing the receiver (middle namespace)."""
        return f"{self.prefix}md"

    def netns_inode(self, namespace: str) -> int:
        """The namespace's inode number: what the kernel's ``net->ns.inum`` holds."""
        return os.stat(_NETNS_DIR / namespace).st_ino

    def __enter__(self) -> Topology:
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _build(self) -> None:
        for ns in (self.sender_ns, self.middle_ns, self.receiver_ns):
            run(["ip", "netns", "add", ns])
            self._created.append(ns)
            run(ns_cmd(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                       "net.ipv6.conf.default.disable_ipv6=1"))
            run(ns_cmd(ns, "ip", "link", "set", "lo", "up"))
        run(["ip", "link", "add", self.sender_if, "netns", self.sender_ns, "type", "veth",
             "peer", "name", self.middle_sender_if, "netns", self.middle_ns])
        run(["ip", "link", "add", self.receiver_if, "netns", self.receiver_ns, "type", "veth",
             "peer", "name", self.middle_receiver_if, "netns", self.middle_ns])
        ends = [
            (self.sender_ns, self.sender_if, SENDER_ADDR),
            (self.middle_ns, self.middle_sender_if, None),
            (self.middle_ns, self.middle_receiver_if, None),
            (self.receiver_ns, self.receiver_if, RECEIVER_ADDR),
        ]
        if self.mid:
            run(["ip", "link", "add", self.mid_upstream_if, "netns", self.middle_ns, "type", "veth",
                 "peer", "name", self.mid_downstream_if, "netns", self.middle_ns])
            ends += [(self.middle_ns, self.mid_upstream_if, None), (self.middle_ns, self.mid_downstream_if, None)]
        for ns, ifname, addr in ends:
            run(ns_cmd(ns, "ethtool", "-K", ifname, "tx", "off", "rx", "off", "tso", "off",
                       "gso", "off", "gro", "off"))
            if addr is not None:
                run(ns_cmd(ns, "ip", "addr", "add", f"{addr}/{_PREFIX_LEN}", "dev", ifname))
            run(ns_cmd(ns, "ip", "link", "set", ifname, "up"))

    def offloads(self, namespace: str, ifname: str) -> dict[str, str]:
        """The interface's offload settings as ethtool reports them (for ``truth.json``)."""
        wanted = ("tcp-segmentation-offload", "generic-segmentation-offload",
                  "generic-receive-offload", "tx-checksumming", "rx-checksumming")
        out = run(ns_cmd(namespace, "ethtool", "-k", ifname))
        pairs = (line.split(":", 1) for line in out.splitlines() if ":" in line)
        return {k.strip(): v.strip().split()[0] for k, v in pairs if k.strip() in wanted}

    def close(self) -> None:
        """Kill what still runs in the namespaces, then delete them (and so the veths)."""
        for ns in reversed(self._created):
            pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, check=False)
            for pid in pids.stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        self._created.clear()
