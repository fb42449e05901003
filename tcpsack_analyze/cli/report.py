"""``tcpsack-analyze report``: per-connection, per-direction statistics of captures."""
from __future__ import annotations

import sys

import click

from tcpsack_analyze.cli.options import (
    analyse_all,
    check_filter,
    many_captures,
    refuse_overwrite,
)
from tcpsack_analyze.report.render import RENDERERS

EXIT_ERROR = 1  # nothing could be read
EXIT_INCOMPLETE = 3  # a prefix was read and reported; the rest could not be
TABLE_FORMATS = (".csv", ".parquet")


@click.command()
@click.argument("captures", nargs=-1, required=True, metavar="CAPTURE...")
@click.option("--conn", "conn_ids", multiple=True, type=int, metavar="ID", help="Only this connection (repeatable).")
@click.option("--format", "fmt", type=click.Choice(sorted(RENDERERS)), default="text", show_default=True)
@many_captures
@click.option("--table", metavar="FILE",
              help="Also write one row per connection and direction of all captures, with the capture's path, to FILE (.csv, or .parquet via pyarrow).")
@click.option("--force", is_flag=True, help="Overwrite the --table file if it exists.")
@click.option("--sender", is_flag=True,
              help="Add each direction's sender section: the best-fitting sender model, its confidence, the inferred "
                   "cwnd, the time share per limiting factor and the cwnd falling edges (runs `infer`; several "
                   "times slower than the report, so not by default).")
def report(
    captures: tuple[str, ...], conn_ids: tuple[int, ...], fmt: str, bpf: str | None, jobs: int | None,
    dask: str | None, table: str | None, force: bool, sender: bool,
) -> None:
    """Report every TCP connection of each CAPTURE (pcap or pcapng, maybe gzipped; - for stdin;
    a directory or glob for the captures in it), several captures in parallel.

    Exit status: 0 when every capture was read completely, 3 when a capture could only be read
    in part (its readable prefix is reported, with a warning), 1 when a capture could not be
    read at all (the others are still reported), 2 for bad options.
    """
    from dataclasses import replace

    from tcpsack_analyze.batch import CaptureJob

    if table is not None and not table.lower().endswith(TABLE_FORMATS):
        raise click.UsageError(f"--table {table}: the name must end in .csv or .parquet")
    refuse_overwrite(table, force, "--table")
    if sender and "-" in captures:
        raise click.UsageError("--sender reads the capture again and cannot read it from stdin ('-')")
    check_filter(bpf)
    runs = analyse_all(captures, CaptureJob(bpf, table=table is not None), jobs, dask)
    status = 0
    for run in runs:
        if run.report is None:
            click.echo(f"error: {run.error}", err=True)
            status = max(status, EXIT_ERROR)
            continue
        rep = run.report
        if sender:
            from tcpsack_analyze.report.sender import sender_report

            rep = sender_report(rep, bpf)
        if conn_ids:
            rep = replace(rep, connections=[c for c in rep.connections if c.id in conn_ids])
        sys.stdout.write(RENDERERS[fmt](rep))
        sys.stdout.flush()
        for line in rep.capture.warnings:
            click.echo(f"warning: {line}", err=True)
        if not rep.capture.complete:
            status = max(status, EXIT_INCOMPLETE)
        elif rep.capture.tcp_packets == 0:
            click.echo(f"warning: {run.path}: no TCP packets in the capture", err=True)
    if table is not None:
        _write_table(table, [r.table for r in runs if r.table is not None], conn_ids)
    sys.exit(status)


def _write_table(path: str, parts: list, conn_ids: tuple[int, ...]) -> None:
    """The captures' tables, one after the other, as CSV or Parquet."""
    import pandas as pd

    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame({"capture": []})
    if conn_ids:
        df = df[df["conn"].isin(conn_ids)].reset_index(drop=True)
    try:
        if path.lower().endswith(".parquet"):
            df.to_parquet(path, index=False)
        else:
            df.to_csv(path, index=False)
    except ImportError:
        raise click.UsageError("--table .parquet needs pyarrow: pip install pyarrow") from None
    except OSError as exc:
        raise click.FileError(path, exc.strerror) from None
