"""``tcpsack-analyze report``: per-connection, per-direction statistics of captures."""
from __future__ import annotations

import sys

import click

from tcpsack_analyze.analysis import analyze
from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.reader.bpf import FilterError
from tcpsack_analyze.report.render import RENDERERS

EXIT_ERROR = 1  # nothing could be read
EXIT_INCOMPLETE = 3  # a prefix was read and reported; the rest could not be


@click.command()
@click.argument("captures", nargs=-1, required=True, metavar="CAPTURE...")
@click.option("--filter", "bpf", metavar="EXPR", help="BPF filter in tcpdump syntax, applied by libpcap.")
@click.option("--conn", "conn_ids", multiple=True, type=int, metavar="ID", help="Only this connection (repeatable).")
@click.option("--format", "fmt", type=click.Choice(sorted(RENDERERS)), default="text", show_default=True)
def report(captures: tuple[str, ...], bpf: str | None, conn_ids: tuple[int, ...], fmt: str) -> None:
    """Report every TCP connection of each CAPTURE (pcap or pcapng, maybe gzipped; - for stdin).

    Exit status: 0 when every capture was read completely, 3 when a capture could only be read
    in part (its readable prefix is reported, with a warning), 1 when a capture could not be
    read at all, 2 for bad options.
    """
    status = 0
    for path in captures:
        try:
            result = analyze(path, bpf)
        except FilterError as exc:
            raise click.UsageError(str(exc)) from None
        except CaptureError as exc:
            click.echo(f"error: {exc}", err=True)
            status = max(status, EXIT_ERROR)
            continue
        rep = result.report
        if conn_ids:
            from dataclasses import replace

            rep = replace(rep, connections=[c for c in rep.connections if c.id in conn_ids])
        sys.stdout.write(RENDERERS[fmt](rep))
        for line in rep.capture.warnings:
            click.echo(f"warning: {line}", err=True)
        if not rep.capture.complete:
            status = max(status, EXIT_INCOMPLETE)
        elif rep.capture.tcp_packets == 0:
            click.echo(f"warning: {path}: no TCP packets in the capture", err=True)
    sys.exit(status)
