"""tcpsack-analyze: TCP loss recovery, SACK and retransmission analysis of packet captures."""
from __future__ import annotations

__version__ = "0.1.0"
