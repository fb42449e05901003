"""The look shared by every figure: colours and markers per retransmission trigger, sizes.

One place, so that a fast retransmission is the same orange square on the time-sequence graph,
in the interactive page and in a legend, and a notebook can restyle all figures at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tcpsack_analyze.loss.records import AMBIGUOUS, EARLY, FAST, OTHER, RECOVERY, RTO, TLP

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FIGSIZE = (12.0, 6.5)  # inches: readable at a glance, legend beside the axes
DPI = 100
WIDE = (15.0, 5.0)  # three panels side by side


@dataclass(frozen=True)
class Mark:
    """How one kind of mark is drawn: matplotlib colour and marker, and its legend text."""

    color: str
    marker: str
    label: str


TRIGGER_MARKS: dict[str, Mark] = {
    FAST: Mark("tab:orange", "s", "fast retransmit"),
    EARLY: Mark("gold", "s", "early retransmit"),
    RECOVERY: Mark("tab:purple", "D", "recovery retransmit"),
    RTO: Mark("tab:red", "X", "RTO retransmit"),
    TLP: Mark("tab:cyan", "d", "tail loss probe"),
    OTHER: Mark("tab:brown", "o", "other retransmit (in Open)"),
    AMBIGUOUS: Mark("tab:gray", "o", "ambiguous retransmit"),
}
SPURIOUS = Mark("black", "o", "spurious (ring)")
DATA = Mark("tab:blue", "", "data segments")
ACK = Mark("tab:green", "", "cumulative ACK")
SACK = Mark("tab:olive", "", "SACK blocks")
DSACK = Mark("magenta", "", "D-SACK blocks")
RWND = Mark("goldenrod", "", "receive window (ACK + rwnd)")
LOST_DOWN = Mark("crimson", "x", "lost downstream")
LOST_UP = Mark("darkorange", "x", "lost upstream")
FILLS = {
    "retransmission": Mark("tab:pink", "P", "hole filled by a retransmission"),
    "reordering": Mark("tab:gray", "P", "hole filled by reordering"),
    "ambiguous": Mark("silver", "P", "hole filled (ambiguous)"),
}
PROBE = Mark("tab:brown", "^", "zero-window probe")
TRUTH_DROP = Mark("black", "v", "emulator drop (truth)")

SERIES_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray")


def axes(ax: Axes | None = None, figsize: tuple[float, float] = FIGSIZE) -> tuple[Figure, Axes]:
    """``ax`` and its figure, or a new figure with one axes. Figures are made without pyplot
    (no global state, nothing to close), which suits both notebooks and files."""
    if ax is not None:
        return ax.get_figure(), ax  # type: ignore[return-value]
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=DPI, layout="constrained")
    return fig, fig.add_subplot()


def panels(n: int, figsize: tuple[float, float] = WIDE) -> tuple[Figure, list[Axes]]:
    """A new figure with ``n`` axes side by side."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=DPI, layout="constrained")
    return fig, list(fig.subplots(1, n, squeeze=False)[0])
