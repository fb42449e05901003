"""``tcpsack-analyze plot``: draw a figure of one or more captures to a file."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tcpsack_analyze.cli.report import EXIT_ERROR
from tcpsack_analyze.errors import CaptureError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from tcpsack_analyze.plots.source import CaptureData
    from tcpsack_analyze.truth import Truth

EXIT_USAGE = 2  # bad options or choices, as click's own usage errors
KINDS = ("timeseq", "cwnd", "rtd", "bursts", "throughput")
SEVERAL = ("rtd", "bursts", "throughput")  # kinds that overlay several captures
WINDOWED = ("timeseq", "cwnd", "throughput")  # kinds that take --from/--to
FORMATS = ("png", "svg", "pdf", "html")


class _Refused(Exception):
    """A choice that cannot be drawn: one line for the user, and the exit status."""

    def __init__(self, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status


@click.command()
@click.argument("captures", nargs=-1, required=True, metavar="CAPTURE...")
@click.option("--kind", required=True, type=click.Choice(KINDS), help="The figure to draw.")
@click.option("--conn", "conn_id", type=int, metavar="ID", help="Only this connection (default: timeseq and cwnd the busiest direction, the others all).")
@click.option("--dir", "direction", type=click.Choice(["a2b", "b2a"]), help="Only this direction (default: those with data).")
@click.option("--from", "from_s", type=float, metavar="T", help="Start of the time range, seconds since the connection's first packet.")
@click.option("--to", "to_s", type=float, metavar="T", help="End of the time range, seconds since the connection's first packet.")
@click.option("--around-loss", type=click.IntRange(min=0), metavar="K",
              help="timeseq: close-up of loss incident K of the direction (its row among the direction's rows of incidents_df()).")
@click.option("--truth", "truth_path", type=click.Path(), metavar="TRUTH.json", help="A lab truth file: drops (timeseq), kernel cwnd (cwnd).")
@click.option("-o", "--output", required=True, type=click.Path(), metavar="FILE",
              help="The figure: .png, .svg, .pdf, or .html (timeseq: an interactive, self-contained page).")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
def plot(captures: tuple[str, ...], kind: str, conn_id: int | None, direction: str | None, from_s: float | None, to_s: float | None,
         around_loss: int | None, truth_path: str | None, output: str, force: bool) -> None:
    """Draw a figure of CAPTURE (pcap or pcapng, maybe gzipped) to FILE.

    \b
    timeseq     time-sequence graph of one direction: data, retransmissions by trigger,
                ACK, SACK and window lines, losses, truth drops; --around-loss K for a close-up
    cwnd        flight size and SACK pipe over time (segments), kernel cwnd from --truth
    rtd         RTD CDF and histogram per connection and pooled, recovery latency per incident
    bursts      burst lengths against the Gilbert-Elliott fit, losses per window
    throughput  throughput over time per connection and direction

    rtd, bursts and throughput overlay several captures. Times are seconds since the
    connection's first packet. Exit status: 0 when the figure was written, 1 when a capture
    could not be read or FILE not written, 2 for bad options or choices (an unknown connection,
    a direction without data, a range without packets, an existing FILE without --force).
    """
    try:
        fmt = _check_output(output, kind, force)
        _check_options(kind, captures, from_s, to_s, around_loss, truth_path)
        truth = _load_truth(truth_path)
        fig_or_html = _draw(kind, captures, conn_id, direction, from_s, to_s, around_loss, truth, fmt)
        _write(fig_or_html, output, fmt, force)
    except _Refused as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.status)
    sys.exit(0)


def _check_output(output: str, kind: str, force: bool) -> str:
    """The format of ``output`` from its suffix, refused early when it cannot be written."""
    path = Path(output)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise _Refused(f"{output}: unknown output format {path.suffix or '(no suffix)'!r} (one of {', '.join('.' + f for f in FORMATS)})")
    if fmt == "html" and kind != "timeseq":
        raise _Refused(f"{output}: only timeseq has an interactive (.html) form")
    if path.exists() and not force:
        raise _Refused(f"{output}: exists (use --force to overwrite)")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise _Refused(f"{output}: cannot write there ({parent} is not a writable directory)", EXIT_ERROR)
    return fmt


def _check_options(kind: str, captures: tuple[str, ...], from_s: float | None, to_s: float | None, around_loss: int | None,
                   truth_path: str | None) -> None:
    if len(captures) > 1 and kind not in SEVERAL:
        raise _Refused(f"--kind {kind} draws one capture (several: {', '.join(SEVERAL)})")
    if "-" in captures:
        raise _Refused("plot reads a capture twice and cannot read it from stdin ('-'); save it to a file first")
    if (from_s is not None or to_s is not None) and kind not in WINDOWED:
        raise _Refused(f"--from/--to apply to {', '.join(WINDOWED)}, not {kind}")
    if from_s is not None and to_s is not None and to_s < from_s:
        raise _Refused(f"--to {to_s:g} is before --from {from_s:g}")
    if around_loss is not None and (kind != "timeseq" or from_s is not None or to_s is not None):
        raise _Refused("--around-loss applies to timeseq only, without --from/--to")
    if truth_path is not None and kind not in ("timeseq", "cwnd"):
        raise _Refused(f"--truth applies to timeseq and cwnd, not {kind}")


def _load_truth(truth_path: str | None) -> Truth | None:
    if truth_path is None:
        return None
    from tcpsack_analyze.truth import TruthError, load

    try:
        return load(truth_path)
    except (OSError, TruthError) as exc:
        raise _Refused(f"{truth_path}: cannot read the truth file: {exc}", EXIT_ERROR) from None


def _load(captures: tuple[str, ...], conn_id: int | None, direction: str | None, events: bool, until_s: float | None) -> list[CaptureData]:
    from tcpsack_analyze.plots.source import PlotError, load

    out = []
    for path in captures:
        try:
            out.append(load(path, conn_id, direction, events=events, until_s=until_s))
        except CaptureError as exc:
            raise _Refused(str(exc), EXIT_ERROR) from None
        except PlotError as exc:
            raise _Refused(str(exc)) from None
    return out


def _draw(kind: str, captures: tuple[str, ...], conn_id: int | None, direction: str | None, from_s: float | None, to_s: float | None,
          around_loss: int | None, truth: Truth | None, fmt: str) -> Figure | str:
    """The figure (or, for .html, the page) of ``kind``."""
    from tcpsack_analyze.plots import bursts, cwnd, rtd, throughput, timeseq
    from tcpsack_analyze.plots.source import PlotError

    data = _load(captures, conn_id, direction, kind in WINDOWED, to_s)
    try:
        if kind == "timeseq":
            one = data[0].busiest()
            if fmt == "html":
                from tcpsack_analyze.plots import interactive

                timeseq.window(one, around_loss=around_loss)  # refuses an incident that does not exist
                return interactive.page(one, timeseq.window(one, from_s=from_s, to_s=to_s), truth, around_loss=around_loss)
            return timeseq.timeseq(one, from_s=from_s, to_s=to_s, around_loss=around_loss, truth=truth)
        if kind == "cwnd":
            return cwnd.cwnd(data[0].busiest(), from_s=from_s, to_s=to_s, truth=truth)
        if kind == "throughput":
            return throughput.throughput(data, from_s=from_s, to_s=to_s)
        if kind == "rtd":
            return rtd.rtd(data)
        return bursts.bursts(data)
    except PlotError as exc:
        raise _Refused(str(exc)) from None


def _write(fig: Figure | str, output: str, fmt: str, force: bool) -> None:
    try:
        with open(output, "wb" if force else "xb") as f:
            if isinstance(fig, str):
                f.write(fig.encode("utf-8"))
            else:
                fig.savefig(f, format=fmt)
    except FileExistsError:
        raise _Refused(f"{output}: exists (use --force to overwrite)") from None
    except OSError as exc:
        raise _Refused(f"{output}: cannot write: {exc.strerror or exc}", EXIT_ERROR) from None
