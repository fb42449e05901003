"""``compare``: captures or flows side by side, and baseline runs against new runs (issue 12).

:mod:`.metrics` reads each item's figures from a report, :mod:`.sidebyside` sets them against a
baseline, :mod:`.noise` tests whether several new runs moved beyond the noise of several
baseline runs, :mod:`.rules` judges ``check``-style rules on either, :mod:`.output` formats them.
"""
from __future__ import annotations

from tcpsack_analyze.compare.metrics import (
    Figures,
    capture_figures,
    flow_figures,
    jain_index,
)
from tcpsack_analyze.compare.noise import NoiseTest, Shift, noise_test
from tcpsack_analyze.compare.sidebyside import Changes, Comparison, side_by_side

__all__ = [
    "Changes", "Comparison", "Figures", "NoiseTest", "Shift",
    "capture_figures", "flow_figures", "jain_index", "noise_test", "side_by_side",
]
