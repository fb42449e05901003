"""The lab's traffic: a receiver that drains connections and a bulk or thin-stream sender.

Both run as their own processes inside their namespaces::

    python -m tcpsack_analyze.lab.traffic recv RESULT.json --port P --flows N
    python -m tcpsack_analyze.lab.traffic send RESULT.json --dst A --port P --flows N --cc reno \\
        (--bytes B | --seconds T | --thin K:S:INTERVAL)

The receiver prints ``ready`` once listening. Each sender flow sets its congestion control per
socket (TCP_CONGESTION), connects, sends, and then waits until the kernel reports nothing left
unacknowledged (SIOCOUTQ = 0) before it closes: ``tcp:tcp_probe`` fires only in ESTABLISHED, so
closing early would cut the truth's cwnd series short of the last ACKs. A thin stream
(thesis 001: few packets in flight, application-limited) writes K messages of S bytes every
INTERVAL seconds with TCP_NODELAY, so each message leaves as one segment.

Each process writes a JSON result: per flow the ports, bytes, times (CLOCK_REALTIME) and what
the socket reported (congestion control, TCP_INFO's total retransmissions), a cross-check of
the traced truth.
"""
from __future__ import annotations

import argparse
import fcntl
import json
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ThinSpec", "Traffic", "main"]

_SIOCOUTQ = 0x5411  # TIOCOUTQ: bytes not yet acknowledged (sent or not) on a TCP socket
_TCPI_TOTAL_RETRANS = 100  # offset of tcpi_total_retrans in struct tcp_info (linux/tcp.h)
_CHUNK = 65536


class ThinSpec:
    """``K:S:INTERVAL``: K messages of S bytes, one every INTERVAL seconds."""

    def __init__(self, text: str) -> None:
        try:
            count, size, interval = text.split(":")
            self.count, self.size, self.interval = int(count), int(size), float(interval)
        except ValueError:
            raise ValueError(f"thin stream {text!r}: expected COUNT:BYTES:INTERVAL") from None
        if self.count < 1 or self.size < 1 or self.interval <= 0:
            raise ValueError(f"thin stream {text!r}: all three must be positive")

    def __str__(self) -> str:
        return f"{self.count}:{self.size}:{self.interval:g}"


@dataclass(frozen=True)
class Traffic:
    """What the sender does: ``flows`` concurrent connections, each bulk (``bytes`` or
    ``seconds``) or a thin stream (``thin``, a :class:`ThinSpec` spelling); exactly one of the
    three is set."""

    flows: int = 1
    bytes: int | None = None
    seconds: float | None = None
    thin: str | None = None

    def __post_init__(self) -> None:
        if sum(x is not None for x in (self.bytes, self.seconds, self.thin)) != 1:
            raise ValueError("traffic needs exactly one of bytes, seconds, thin")
        if self.flows < 1:
            raise ValueError("at least one flow")
        if self.thin is not None:
            ThinSpec(self.thin)

    def sender_options(self) -> list[str]:
        """The options of ``traffic send`` that say what to send."""
        opts = ["--flows", str(self.flows)]
        if self.bytes is not None:
            return [*opts, "--bytes", str(self.bytes)]
        if self.seconds is not None:
            return [*opts, "--seconds", f"{self.seconds:g}"]
        return [*opts, "--thin", str(self.thin)]

    def expected_duration(self) -> float:
        """A rough upper bound of the application's sending time (thin streams and timed bulk)."""
        if self.thin is not None:
            spec = ThinSpec(self.thin)
            return spec.count * spec.interval
        return self.seconds or 0.0

    def to_dict(self) -> dict[str, object]:
        """For ``truth.json``."""
        kind = "thin" if self.thin is not None else "bulk"
        return {"kind": kind, "flows": self.flows, "bytes": self.bytes, "seconds": self.seconds, "thin": self.thin}


def _outq(sock: socket.socket) -> int:
    return int(struct.unpack("i", fcntl.ioctl(sock.fileno(), _SIOCOUTQ, b"\0\0\0\0"))[0])


def _total_retrans(sock: socket.socket) -> int:
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    return int(struct.unpack_from("I", info, _TCPI_TOTAL_RETRANS)[0])


def _send_flow(args: argparse.Namespace, result: dict[str, Any]) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, args.cc.encode())
    if args.thin:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.connect((args.dst, args.port))
    result["sport"] = sock.getsockname()[1]
    result["dport"] = args.port
    result["cc"] = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
    result["start"] = time.time()
    sent = 0
    if args.thin:
        spec = ThinSpec(args.thin)
        start = time.monotonic()
        for i in range(spec.count):
            time.sleep(max(0.0, start + i * spec.interval - time.monotonic()))
            sock.sendall(b"t" * spec.size)
            sent += spec.size
    else:
        block = b"b" * _CHUNK
        deadline = time.monotonic() + args.seconds if args.seconds else None
        while True:
            n = _CHUNK if args.bytes is None else min(_CHUNK, args.bytes - sent)
            if n <= 0 or (deadline is not None and time.monotonic() >= deadline):
                break
            sock.sendall(block[:n])
            sent += n
    result["bytes"] = sent
    result["app_done"] = time.time()
    while _outq(sock) > 0:  # stay ESTABLISHED until every byte is acknowledged
        time.sleep(0.005)
    result["acked"] = time.time()
    result["kernel_total_retrans"] = _total_retrans(sock)
    sock.shutdown(socket.SHUT_WR)
    while sock.recv(_CHUNK):
        pass
    sock.close()


def _send(args: argparse.Namespace) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = [{"flow": i} for i in range(args.flows)]
    errors: list[Exception] = []

    def flow(i: int) -> None:
        try:
            _send_flow(args, results[i])
        except Exception as exc:  # re-raised in the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=flow, args=(i,)) for i in range(args.flows)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def _recv(args: argparse.Namespace) -> list[dict[str, Any]]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", args.port))
    listener.listen(args.flows)
    print("ready", flush=True)
    results: list[dict[str, Any]] = []

    def drain(conn: socket.socket, peer: tuple[str, int]) -> None:
        got = 0
        while data := conn.recv(_CHUNK):
            got += len(data)
        conn.close()
        results.append({"peer_port": peer[1], "bytes": got, "eof": time.time()})

    threads = []
    for _ in range(args.flows):
        conn, peer = listener.accept()
        threads.append(threading.Thread(target=drain, args=(conn, peer)))
        threads[-1].start()
    for t in threads:
        t.join()
    listener.close()
    return results


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``send`` or ``recv``, then the result path and options."""
    parser = argparse.ArgumentParser(prog="python -m tcpsack_analyze.lab.traffic")
    parser.add_argument("role", choices=["send", "recv"])
    parser.add_argument("result", type=Path)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--flows", type=int, default=1)
    parser.add_argument("--dst")
    parser.add_argument("--cc", default="cubic")
    parser.add_argument("--bytes", type=int)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--thin")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.role == "send" and sum(x is not None for x in (args.bytes, args.seconds, args.thin)) != 1:
        parser.error("send needs exactly one of --bytes, --seconds, --thin")
    flows = _send(args) if args.role == "send" else _recv(args)
    args.result.write_text(json.dumps({"flows": flows}))


if __name__ == "__main__":
    main()
