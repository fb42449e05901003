"""Figures of a capture's loss and recovery, drawn from the library's results.

One module per kind of figure, each returning a :class:`matplotlib.figure.Figure` (for notebooks,
and saved to a file by ``tcpsack-analyze plot``):

* :mod:`~tcpsack_analyze.plots.timeseq`: the time-sequence graph of one direction (tcptrace/xplot
  style), with retransmissions by trigger, ACK, SACK and window lines, losses and truth drops;
  :mod:`~tcpsack_analyze.plots.interactive` writes it as a zoomable HTML page;
* :mod:`~tcpsack_analyze.plots.cwnd`: flight size, SACK pipe and the kernel's cwnd over time;
* :mod:`~tcpsack_analyze.plots.rtd`: RTD CDF and histogram, recovery latency per incident;
* :mod:`~tcpsack_analyze.plots.bursts`: burst lengths against the Gilbert-Elliott fit, losses per window;
* :mod:`~tcpsack_analyze.plots.throughput`: throughput over time.

What a figure draws comes from :mod:`~tcpsack_analyze.plots.source`: the :class:`Analysis` of a
capture and the event streams of its directions, read by the library; no plot reads a capture.
Importing this package does not import matplotlib; the modules above do.
"""
from __future__ import annotations

from tcpsack_analyze.plots.source import CaptureData, DirectionData, PlotError, load

__all__ = ["CaptureData", "DirectionData", "PlotError", "load"]
