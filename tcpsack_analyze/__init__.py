"""tcpsack-analyze: TCP loss recovery, SACK and retransmission analysis of packet captures.

The public surface, for notebooks and other programs (everything else is internal):

* :func:`analyze` reads a capture and returns an :class:`Analysis` (the report's dataclasses
  and pandas tables of the loss records);
* :func:`events_of` returns the event stream of one direction of one connection
  (:class:`EventBatch` of :class:`Send` and :class:`Ack` events, :class:`Dir`,
  :class:`Placement`), the input of every analysis stage; hand-made events go through
  :meth:`EventBatch.of`;
* the report's result types (:class:`CaptureReport`, :class:`ConnectionReport`,
  :class:`DirectionReport`) and the error raised for an unreadable capture (:class:`CaptureError`).

Names are imported on first use (PEP 562), so that ``import tcpsack_analyze`` stays cheap.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_WHERE = {
    "analyze": "tcpsack_analyze.analysis",
    "events_of": "tcpsack_analyze.analysis",
    "Analysis": "tcpsack_analyze.analysis",
    "Ack": "tcpsack_analyze.events",
    "Dir": "tcpsack_analyze.events",
    "EventBatch": "tcpsack_analyze.events",
    "Kind": "tcpsack_analyze.events",
    "Placement": "tcpsack_analyze.events",
    "Send": "tcpsack_analyze.events",
    "StreamFacts": "tcpsack_analyze.events",
    "CaptureReport": "tcpsack_analyze.report.model",
    "ConnectionReport": "tcpsack_analyze.report.model",
    "DirectionReport": "tcpsack_analyze.report.model",
    "CaptureError": "tcpsack_analyze.errors",
}
__all__ = sorted(_WHERE) + ["__version__"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
