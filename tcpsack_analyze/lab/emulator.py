"""The link emulator process: an AF_PACKET "bump in the wire" between two interfaces.

This kernel has no netem qdisc, so delay and loss are done in user space: the process opens a
raw AF_PACKET socket on each of two veth ends (in the lab's middle namespace), reads every
frame that arrives on one, passes it through that direction's :class:`LinkDirection`, and
writes it out of the other end at its delivery time, or logs its drop. Frames are timed by the
kernel's receive timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME), the clock tcpdump stamps captures
with, so drop times line up with the captures.

Run as ``python -m tcpsack_analyze.lab.emulator CONFIG.json`` inside the middle namespace; it
prints ``ready`` once both sockets are bound, and on SIGTERM or SIGINT writes its counters to
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
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from tcpsack_analyze.lab.droplog import Drop, write_drop
from tcpsack_analyze.lab.link import LinkConfig, LinkDirection

__all__ = ["EmulatorConfig", "main"]

_ETH_P_ALL = 0x0003
_SOL_PACKET = 263
_PACKET_IGNORE_OUTGOING = 23  # Linux 4.20: do not read back the frames we send
_SO_TIMESTAMPNS = 35
_SCM_TIMESTAMPNS = _SO_TIMESTAMPNS
_MAX_FRAME = 65536
_TIMESPEC = struct.Struct("qq")


@dataclass(frozen=True)
class EmulatorConfig:
    """What the emulator process needs: interfaces, per-direction links, seed, output paths.

    ``forward`` applies to frames from ``sender_if`` (towards the receiver), ``reverse`` to
    frames from ``receiver_if``.
    """

    sender_if: str
    receiver_if: str
    forward: LinkConfig
    reverse: LinkConfig
    seed: int
    drop_log: str
    stats: str

    def to_json(self) -> str:
        """The file the runner hands to the emulator process."""
        obj = dict(self.__dict__, forward=self.forward.to_dict(), reverse=self.reverse.to_dict())
        return json.dumps(obj)

    @classmethod
    def from_json(cls, text: str) -> EmulatorConfig:
        """Inverse of :meth:`to_json`."""
        obj = json.loads(text)
        obj["forward"] = LinkConfig(**obj["forward"])
        obj["reverse"] = LinkConfig(**obj["reverse"])
        return cls(**obj)


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


def serve(config: EmulatorConfig) -> dict[str, dict[str, object]]:
    """Forward frames between the two interfaces until SIGTERM/SIGINT; return the counters."""
    links = {
        "fwd": LinkDirection.build("fwd", config.forward, seed=2 * config.seed),
        "rev": LinkDirection.build("rev", config.reverse, seed=2 * config.seed + 1),
    }
    socks = {"fwd": _open(config.sender_if), "rev": _open(config.receiver_if)}
    out = {"fwd": socks["rev"], "rev": socks["fwd"]}
    by_fd = {s.fileno(): name for name, s in socks.items()}
    pending: dict[str, deque[tuple[float, bytes]]] = {"fwd": deque(), "rev": deque()}
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    late_max, late_over_1ms = 0.0, 0
    gc.disable()  # frames are plain bytes: no cycles to collect, and no collector pauses
    with open(config.drop_log, "w") as log:
        print("ready", flush=True)
        try:
            while True:
                heads = [q[0][0] for q in pending.values() if q]
                timeout = max(0.0, min(heads) - time.time()) if heads else None
                readable, _, _ = select.select(list(by_fd), [], [], timeout)
                for fd in readable:
                    name = by_fd[fd]
                    while (got := _receive(socks[name])) is not None:
                        frame, arrival = got
                        verdict = links[name].offer(arrival, frame)
                        if isinstance(verdict, Drop):
                            write_drop(log, verdict)
                        else:
                            pending[name].append((verdict, frame))
                now = time.time()
                for name, queue in pending.items():
                    while queue and queue[0][0] <= now:
                        due, frame = queue.popleft()
                        late_max = max(late_max, now - due)
                        late_over_1ms += now - due > 1e-3
                        out[name].send(frame)
        except _Stop:
            pass
    stats: dict[str, dict[str, object]] = {
        name: {"forwarded": link.forwarded, "drops": dict(link.drops_by_reason),
               "loss_model": link.loss.spec(), "seed": link.loss.seed}
        for name, link in links.items()
    }
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
