"""The time-sequence graph as one self-contained, zoomable HTML page, with a list of loss incidents.

Drawn with plotly: its ``to_html`` embeds plotly.js in the page, so the file opens offline in
any browser, and zooming, panning and hover labels come with it. The marks are those of
:func:`tcpsack_analyze.plots.timeseq.marks` (same thinning, same colours); beside the graph, a
list of the direction's loss incidents (:func:`~tcpsack_analyze.plots.timeseq.incident_windows`)
zooms to an incident's close-up when clicked, and "whole range" zooms back out.

A page is static: what was thinned (above ``THIN_ABOVE`` ticks, ACK points or SACK blocks) stays
thinned when zoomed in, at :data:`ZOOM` times the static figure's resolution; retransmissions,
losses and drops are all there.
"""
from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any

from tcpsack_analyze.loss.records import DOWNSTREAM, UPSTREAM
from tcpsack_analyze.plots import style
from tcpsack_analyze.plots.source import DirectionData, PlotError
from tcpsack_analyze.plots.timeseq import (
    COLUMNS,
    Points,
    Ranges,
    TimeSeqMarks,
    Window,
    incident_windows,
    marks,
    seq_range,
)
from tcpsack_analyze.truth import Truth

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["DIV_ID", "figure", "page"]

DIV_ID = "timeseq"  # the plot's element id in the page
ZOOM = 4  # thinning keeps 4x the columns of a static figure, for zooming in (a 1M-packet page: ~10-20 MB)

# matplotlib marker -> plotly marker symbol
_SYMBOLS = {
    "P": "cross", "s": "square", "D": "diamond", "X": "x", "d": "diamond-tall", "o": "circle", "x": "x-thin-open",
    "^": "triangle-up", "v": "triangle-down",
}
_COLORS = {"tab:blue": "#1f77b4", "tab:orange": "#ff7f0e", "tab:green": "#2ca02c", "tab:red": "#d62728", "tab:purple": "#9467bd",
           "tab:brown": "#8c564b", "tab:pink": "#e377c2", "tab:gray": "#7f7f7f", "tab:olive": "#bcbd22", "tab:cyan": "#17becf"}


def _color(c: str) -> str:
    return _COLORS.get(c, c)


def figure(m: TimeSeqMarks) -> go.Figure:
    """The plotly figure of the marks ``m``."""
    import plotly.graph_objects as go

    fig = go.Figure()

    def ranges(r: Ranges, mark: style.Mark, name: str, width: float) -> None:
        if len(r):
            x, y = r.polyline()
            fig.add_trace(go.Scattergl(x=x, y=y, mode="lines", line={"color": _color(mark.color), "width": width}, name=name, hoverinfo="skip"))

    def points(p: Points, mark: style.Mark, size: float, hollow: bool = False) -> None:
        if len(p):
            symbol = _SYMBOLS.get(mark.marker, "circle") + ("-open" if hollow and mark.marker != "x" else "")
            fig.add_trace(go.Scattergl(x=p.x, y=p.y, mode="markers", name=f"{mark.label} ({len(p)})",
                                       marker={"color": _color(mark.color), "symbol": symbol, "size": size},
                                       hovertemplate="%{x:.6f} s, seq %{y:.0f}<extra>" + html.escape(mark.label) + "</extra>"))

    ranges(m.data, style.DATA, f"{style.DATA.label} ({m.data_count})", 1.2)
    ranges(m.sack, style.SACK, f"{style.SACK.label} ({m.sack_count})", 2.5)
    ranges(m.dsack, style.DSACK, f"{style.DSACK.label} ({len(m.dsack)})", 2.5)
    for line, mark in ((m.ack, style.ACK), (m.rwnd, style.RWND)):
        if len(line):
            fig.add_trace(go.Scattergl(x=line.x, y=line.y, mode="lines", line={"color": _color(mark.color), "width": 1, "shape": "hv"}, name=mark.label))
    points(m.probes, style.PROBE, 8)
    for trig, p in m.rexmit.items():
        points(p, style.TRIGGER_MARKS[trig], 9)
    points(m.spurious, style.SPURIOUS, 15, hollow=True)
    for where, mark in ((DOWNSTREAM, style.LOST_DOWN), (UPSTREAM, style.LOST_UP)):
        if where in m.lost:
            points(m.lost[where], mark, 10)
    for cause, p in m.fills.items():
        points(p, style.FILLS[cause], 9)
    points(m.drops, style.TRUTH_DROP, 9)
    fig.update_layout(
        title={"text": m.title.replace("\n", "<br>"), "font": {"size": 13}},
        xaxis={"title": "time since the connection's first packet (s)", "range": list(m.xlim)},
        yaxis={"title": "relative sequence number (bytes)", "range": list(m.ylim), "tickformat": "d"},
        dragmode="zoom", template="plotly_white", height=700, legend={"font": {"size": 11}},
    )
    return fig


def page(data: DirectionData, win: Window | None = None, truth: Truth | None = None, *, around_loss: int | None = None) -> str:
    """The HTML page of ``data``'s time-sequence graph in ``win`` (all of it when None), with the
    list of the loss incidents that begin in it; ``around_loss`` opens the page zoomed to that
    incident (it must be in the list)."""
    m = marks(data, win, truth, ZOOM * COLUMNS)
    fig = figure(m)
    items: list[dict[str, Any]] = []
    for k, w in enumerate(incident_windows(data)):
        if win is not None and not win.start_ns <= w.start_ns <= win.end_ns:
            continue
        x0, x1 = float(data.seconds(w.start_ns)), float(data.seconds(w.end_ns))
        pad = max((x1 - x0) * 0.05, 1e-4)
        y0, y1 = seq_range(data, w)
        items.append({"k": k, "x": [x0 - pad, x1 + pad], "y": [y0, y1], "text": w.short, "title": w.caption})
    if around_loss is not None:
        first = next((it for it in items if it["k"] == around_loss), None)
        if first is None:
            raise PlotError(f"{data.name}: no loss incident {around_loss} in the range drawn")
        fig.update_layout(xaxis_range=first["x"], yaxis_range=first["y"])
    body = fig.to_html(full_html=False, include_plotlyjs=True, div_id=DIV_ID, config={"scrollZoom": True, "displaylogo": False, "responsive": True})
    rows = "\n".join(
        f'<li><a href="#" class="incident" id="incident-{it["k"]}" data-k="{it["k"]}" '
        f'title="{html.escape(it["title"])}">{html.escape(it["text"])}</a></li>' for it in items
    ) or "<li>no loss incidents</li>"
    title = html.escape(m.title.splitlines()[0])
    whole = {"x": list(m.xlim), "y": list(m.ylim)}
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 0; }}
#graph {{ width: calc(100vw - 27em); }}
#side {{ position: fixed; top: 0; right: 0; width: 24em; height: 100vh; overflow-y: auto; font-size: 13px;
         border-left: 1px solid #ccc; padding: 0 1em; background: white; }}
#side a.current {{ font-weight: bold; }}
#side li {{ margin-bottom: 0.5em; }}
</style></head>
<body>
<div id="graph">{body}</div>
<div id="side"><h3>Loss incidents ({len(items)})</h3>
<p><a href="#" id="whole">whole range</a> &middot; drag to zoom, scroll to zoom, shift-drag to pan</p>
<ol start="0" style="padding-left: 0; list-style: none">
{rows}
</ol></div>
<script>
const incidents = {json.dumps(items)};
const whole = {json.dumps(whole)};
function zoomTo(view, link) {{
  Plotly.relayout("{DIV_ID}", {{"xaxis.range": view.x, "yaxis.range": view.y}});
  document.querySelectorAll("#side a").forEach(a => a.classList.remove("current"));
  if (link) link.classList.add("current");
}}
document.querySelectorAll("a.incident").forEach(a => a.addEventListener("click", ev => {{
  ev.preventDefault();
  zoomTo(incidents[Number(a.dataset.k)], a);
}}));
document.getElementById("whole").addEventListener("click", ev => {{ ev.preventDefault(); zoomTo(whole, null); }});
</script>
</body></html>
"""
