"""The link emulator process: an AF_PACKET "bump in the wire" between two interfaces.

This kernel has no netem qdisc, so delay and loss are done in user space: the process opens a
raw AF_PACKET socket on each of two veth ends (in the lab's middle namespace), reads every
frame that arrives on one, passes it through that direction's :class:`LinkDirection`, and
writes it out of the other end at its delivery time, or logs its drop. Frames are timed by the
kernel's receive timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME), the clock tcpdump stamps captures
with, so drop times line up with the captures.

With a mid point (:class:`MidPoint`) the path has two sections per direction and the process
runs four links: sender end -> upstream section -> the mid veth pair -> downstream section ->
receiver end, and back the same way. The downstream links are the ones a run without a mid point
has (same settings, same seeds), the upstream ones are seeded apart (:data:`UPSTREAM_SEED_OFFSET`).

Run as ``python -m tcpsack_analyze.lab.emulator CONFIG.json`` inside the middle namespace; it
prints ``ready`` once all its sockets are bound, and on SIGTERM or SIGINT writes its counters to
the config's ``stats`` path and exits. Python copies each frame twice and wakes on a timer;
tens of Mbit/s and delays above a millisecond are reproduced faithfully, which is what the
lab's captures need.
"""
from __future__ import annotations

import gc
import json
import select
import signal
import socket
import struct
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from tcpsack_analyze.lab.droplog import DOWNSTREAM, UPSTREAM, Drop, write_drop
from tcpsack_analyze.lab.link import LinkConfig, LinkDirection

__all__ = ["UPSTREAM_SEED_OFFSET", "EmulatorConfig", "MidPoint", "main"]

UPSTREAM_SEED_OFFSET = 2**32
"""Added to a direction's seed for its upstream section, so the two sections' loss decisions are
independent and the downstream section keeps the seed a run without a mid point uses."""

_ETH_P_ALL = 0x0003
_SOL_PACKET = 263
_PACKET_IGNORE_OUTGOING = 23  # Linux 4.20: do not read back the frames we send
_SO_TIMESTAMPNS = 35
_SCM_TIMESTAMPNS = _SO_TIMESTAMPNS
_MAX_FRAME = 65536
_TIMESPEC = struct.Struct("qq")


@dataclass(frozen=True)
class MidPoint:
    """The mid capture point: the veth pair frames cross between the path's two sections.

    ``forward`` and ``reverse`` are the upstream section (sender <-> mid point); frames towards
    the receiver leave on ``upstream_if`` and arrive on ``downstream_if``, replies the other way.
    """

    upstream_if: str
    downstream_if: str
    forward: LinkConfig
    reverse: LinkConfig

    def to_dict(self) -> dict[str, object]:
        """For the emulator's configuration file."""
        return dict(self.__dict__, forward=self.forward.to_dict(), reverse=self.reverse.to_dict())

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> MidPoint:
        """Inverse of :meth:`to_dict`."""
        return cls(**dict(obj, forward=LinkConfig(**obj["forward"]), reverse=LinkConfig(**obj["reverse"])))


@dataclass(frozen=True)
class EmulatorConfig:
    """What the emulator process needs: interfaces, per-direction links, seed, output paths.

    ``forward`` applies to frames from ``sender_if`` (towards the receiver), ``reverse`` to
    frames from ``receiver_if``; with a ``mid`` point, these are the downstream section.
    """

    sender_if: str
    receiver_if: str
    forward: LinkConfig
    reverse: LinkConfig
    seed: int
    drop_log: str
    stats: str
    mid: MidPoint | None = None

    def to_json(self) -> str:
        """The file the runner hands to the emulator process."""
        obj = dict(self.__dict__, forward=self.forward.to_dict(), reverse=self.reverse.to_dict(),
                   mid=None if self.mid is None else self.mid.to_dict())
        return json.dumps(obj)

    @classmethod
    def from_json(cls, text: str) -> EmulatorConfig:
        """Inverse of :meth:`to_json`."""
        obj = json.loads(text)
        obj["forward"] = LinkConfig(**obj["forward"])
        obj["reverse"] = LinkConfig(**obj["reverse"])
        obj["mid"] = None if obj.get("mid") is None else MidPoint.from_dict(obj["mid"])
        return cls(**obj)


@dataclass
class _Stage:
    """One link between two interfaces: frames read on ``source`` leave on ``sink`` when due."""

    link: LinkDirection
    source: socket.socket
    sink: socket.socket
    pending: deque[tuple[float, bytes]] = field(default_factory=deque)


def _open(ifname: str) -> socket.socket:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(_ETH_P_ALL))
    sock.setsockopt(_SOL_PACKET, _PACKET_IGNORE_OUTGOING, 1)
    sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind((ifname, _ETH_P_ALL))
    sock.setblocking(False)
    return sock


def _receive(sock: socket.socket) -> tuple[bytes, float] | None:
    """One frame and its kernel receive time, or None when the socket is drained."""
    try:
        frame, ancdata, _flags, _addr = sock.recvmsg(_MAX_FRAME, socket.CMSG_SPACE(_TIMESPEC.size))
    except BlockingIOError:
        return None
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == _SCM_TIMESTAMPNS:
            sec, nsec = _TIMESPEC.unpack(data[: _TIMESPEC.size])
            return frame, sec + nsec * 1e-9
    return frame, time.time()


class _Stop(Exception):
    """Raised by the signal handler to leave the forwarding loop."""


def _on_signal(_signum: int, _frame: FrameType | None) -> None:
    raise _Stop


def _stages(config: EmulatorConfig) -> list[_Stage]:
    """The links and the sockets they read and write: two stages, four with a mid point."""

    def section(near: socket.socket, far: socket.socket, forward: LinkConfig, reverse: LinkConfig,
                seed_offset: int, where: str | None) -> list[_Stage]:
        """Both directions of one section of path, from ``near`` (sender side) to ``far``."""
        return [
            _Stage(LinkDirection.build("fwd", forward, 2 * config.seed + seed_offset, where), near, far),
            _Stage(LinkDirection.build("rev", reverse, 2 * config.seed + 1 + seed_offset, where), far, near),
        ]

    sender, receiver = _open(config.sender_if), _open(config.receiver_if)
    mid = config.mid
    if mid is None:
        return section(sender, receiver, config.forward, config.reverse, 0, None)
    up, down = _open(mid.upstream_if), _open(mid.downstream_if)
    return (section(down, receiver, config.forward, config.reverse, 0, DOWNSTREAM)
            + section(sender, up, mid.forward, mid.reverse, UPSTREAM_SEED_OFFSET, UPSTREAM))


def _counters(link: LinkDirection) -> dict[str, object]:
    """One link's counters for ``truth.json`` (``emulator``)."""
    return {"forwarded": link.forwarded, "drops": dict(link.drops_by_reason),
            "loss_model": link.loss.spec(), "seed": link.loss.seed}


def serve(config: EmulatorConfig) -> dict[str, dict[str, object]]:
    """Forward frames through the links until SIGTERM/SIGINT; return the counters."""
    stages = _stages(config)
    by_fd = {stage.source.fileno(): stage for stage in stages}
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    late_max, late_over_1ms = 0.0, 0
    gc.disable()  # frames are plain bytes: no cycles to collect, and no collector pauses
    with open(config.drop_log, "w") as log:
        print("ready", flush=True)
        try:
            while True:
                heads = [stage.pending[0][0] for stage in stages if stage.pending]
                timeout = max(0.0, min(heads) - time.time()) if heads else None
                readable, _, _ = select.select(list(by_fd), [], [], timeout)
                for fd in readable:
                    stage = by_fd[fd]
                    while (got := _receive(stage.source)) is not None:
                        frame, arrival = got
                        verdict = stage.link.offer(arrival, frame)
                        if isinstance(verdict, Drop):
                            write_drop(log, verdict)
                        else:
                            stage.pending.append((verdict, frame))
                now = time.time()
                for stage in stages:
                    queue = stage.pending
                    while queue and queue[0][0] <= now:
                        due, frame = queue.popleft()
                        late_max = max(late_max, now - due)
                        late_over_1ms += now - due > 1e-3
                        stage.sink.send(frame)
        except _Stop:
            pass
    stats: dict[str, dict[str, object]] = {}
    for stage in stages:
        section = stats if stage.link.where != UPSTREAM else stats.setdefault("upstream", {})
        section[stage.link.name] = _counters(stage.link)
    stats["timing"] = {"max_late_s": late_max, "late_over_1ms": late_over_1ms}
    Path(config.stats).write_text(json.dumps(stats))
    return stats


def main(argv: list[str] | None = None) -> None:
    """Entry point of the emulator process: ``python -m tcpsack_analyze.lab.emulator CONFIG``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: python -m tcpsack_analyze.lab.emulator CONFIG.json")
    serve(EmulatorConfig.from_json(Path(args[0]).read_text()))


if __name__ == "__main__":
    main()
