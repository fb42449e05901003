"""tcpsack-analyze: TCP loss recovery, SACK and retransmission analysis of packet captures.

``tcpsack_analyze.analyze(path, filter=None)`` is :func:`tcpsack_analyze.analysis.analyze`,
imported on first use (PEP 562) so that importing the package stays cheap.
"""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["analyze", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "analyze":
        from tcpsack_analyze.analysis import analyze

        return analyze
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
