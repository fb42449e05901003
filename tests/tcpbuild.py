"""Build small TCP conversations with scapy and write them as pcap files, for unit tests."""
from __future__ import annotations

from pathlib import Path

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.utils import wrpcap

A = ("10.0.0.1", 40000)
B = ("10.0.0.2", 80)


class Conversation:
    """Packets between A (the opener) and B, with explicit times."""

    def __init__(self, isn_a: int = 1000, isn_b: int = 5000, a: tuple[str, int] = A, b: tuple[str, int] = B) -> None:
        self.isn = {"a": isn_a, "b": isn_b}
        self.ep = {"a": a, "b": b}
        self.packets: list = []

    def send(self, side: str, t: float, seq: int, ack: int | None = None, flags: str = "A", length: int = 0,
             win: int = 65535, options: list | None = None) -> None:
        """``seq`` and ``ack`` are relative to the ISNs (of the sender and of the peer)."""
        peer = "b" if side == "a" else "a"
        (src, sport), (dst, dport) = self.ep[side], self.ep[peer]
        tcp = TCP(sport=sport, dport=dport, flags=flags, seq=(self.isn[side] + seq) % 2**32, window=win,
                  options=options or [])
        if ack is not None:
            tcp.ack = (self.isn[peer] + ack) % 2**32
        pkt = Ether() / IP(src=src, dst=dst) / tcp / (b"x" * length)
        pkt.time = t
        self.packets.append(pkt)

    def handshake(self, t: float = 0.0, rtt: float = 0.1, near: str = "a", wscale: tuple[int, int] | None = None,
                  sack: bool = True) -> float:
        """SYN, SYN-ACK, ACK; the capture point is near ``near``. Returns the time of the last packet."""
        opt_a: list = [("MSS", 1460)] + ([("SAckOK", b"")] if sack else []) + ([("WScale", wscale[0])] if wscale else [])
        opt_b: list = [("MSS", 1460)] + ([("SAckOK", b"")] if sack else []) + ([("WScale", wscale[1])] if wscale else [])
        far, close = (rtt, 0.0001) if near == "a" else (0.0001, rtt)
        self.send("a", t, 0, None, "S", options=opt_a)
        self.send("b", t + far, 0, 1, "SA", options=opt_b)
        self.send("a", t + far + close, 1, 1, "A")
        return t + far + close

    def write(self, path: Path) -> str:
        wrpcap(str(path), self.packets)
        return str(path)


def sack(*blocks: tuple[int, int], isn: int) -> list:
    """A SACK option with edges relative to ``isn``."""
    return [("SAck", tuple(((isn + e) % 2**32) for blk in blocks for e in blk))]
