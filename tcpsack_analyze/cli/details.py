"""``tcpsack-analyze details``: the retransmission region of each loss incident (loss_details style)."""
from __future__ import annotations

import json
import sys

import click

from tcpsack_analyze.analysis import analyze
from tcpsack_analyze.cli.report import EXIT_ERROR, EXIT_INCOMPLETE
from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.loss.regions import (
    CONTEXT,
    TRIGGER_CHOICES,
    find_regions,
    region_dicts,
    render_text,
)

EXIT_USAGE = 2  # bad options, as click's own usage errors


def _fail(message: str, status: int) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(status)


@click.command()
@click.argument("capture", metavar="CAPTURE")
@click.option("--conn", "conn_id", type=int, metavar="ID", help="Only this connection.")
@click.option("--min-rtd", "min_rtd", type=click.FloatRange(min=0), metavar="MS",
              help="Only incidents with a retransmission sent at least MS ms after the previous transmission of its bytes.")
@click.option("--trigger", type=click.Choice(TRIGGER_CHOICES),
              help="Only incidents with a retransmission of this trigger (spurious: one later shown unnecessary).")
@click.option("--context", type=click.IntRange(min=0), default=CONTEXT, show_default=True, metavar="N",
              help="Packets shown before the original transmission.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def details(capture: str, conn_id: int | None, min_rtd: float | None, trigger: str | None, context: int, fmt: str) -> None:
    """Show the packets around each loss incident of CAPTURE (pcap or pcapng, maybe gzipped).

    One region per segment that needed repair: from a few packets before its original
    transmission to the ACK that covered it, then the retransmission count, the two recovery
    latencies and each retransmission's trigger with its evidence. The capture is read twice
    (first to find the incidents, then for their packets), so it cannot come from stdin.

    Exit status: 0 when the capture was read completely, 3 when only a prefix could be read
    (its regions are shown, with a warning), 1 when it could not be read at all, 2 for bad options.
    """
    if capture == "-":
        _fail("details reads the capture twice and cannot read it from stdin ('-'); save it to a file first", EXIT_USAGE)
    try:
        result = analyze(capture)
        ids = [c.id for c in result.report.connections]
        if conn_id is not None and conn_id not in ids:
            have = f"connections 0-{max(ids)}" if ids else "no TCP connections"
            _fail(f"{capture}: no connection {conn_id} (the capture has {have})", EXIT_USAGE)
        regions = find_regions(capture, result, conn=conn_id, min_rtd_ms=min_rtd, trigger=trigger, context=context)
    except CaptureError as exc:
        _fail(str(exc), EXIT_ERROR)
    cap = result.report.capture
    if fmt == "json":
        sys.stdout.write(json.dumps(region_dicts(regions), indent=1) + "\n")
    else:
        total = sum(len(res.incident_table) for res in result.loss.values())
        sys.stdout.write(f"{capture}: {len(regions)} retransmission regions ({total} loss incidents in the capture)\n")
        if regions:
            sys.stdout.write("\n" + render_text(regions))
    for line in cap.warnings:
        click.echo(f"warning: {line}", err=True)
    if not cap.complete:
        sys.exit(EXIT_INCOMPLETE)
    if cap.tcp_packets == 0:
        click.echo(f"warning: {capture}: no TCP packets in the capture", err=True)
    sys.exit(0)
