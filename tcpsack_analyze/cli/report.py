"""``tcpsack-analyze report``: per-connection, per-direction statistics of captures."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from tcpsack_analyze.cli.options import (
    analyse_all,
    check_filter,
    many_captures,
    refuse_overwrite,
)
from tcpsack_analyze.report.render import RENDERERS, STREAMED

if TYPE_CHECKING:
    from tcpsack_analyze.report.model import ConnectionReport

EXIT_ERROR = 1  # nothing could be read
EXIT_INCOMPLETE = 3  # a prefix was read and reported; the rest could not be
TABLE_FORMATS = (".csv", ".parquet")
GC_FIRST_GENERATION = 50_000  # allocations between collections of the youngest generation (Python's default: 700)


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

    One capture reported as json or csv is written as its connections are finished, so memory
    holds the live connections, not the report (the others are reported whole).

    Exit status: 0 when every capture was read completely, 3 when a capture could only be read
    in part (its readable prefix is reported, with a warning), 1 when a capture could not be
    read at all (the others are still reported), 2 for bad options (--conn naming no connection of any capture).
    """
    import gc
    from dataclasses import replace

    from tcpsack_analyze.batch import CaptureJob, expand

    # a capture of many connections allocates many small long-lived objects: collect cycles
    # (there are few) less often (10k web connections: 17-21 s -> 14 s; cf. gc.set_threshold)
    gc.set_threshold(GC_FIRST_GENERATION, 20, 100)

    if table is not None and not table.lower().endswith(TABLE_FORMATS):
        raise click.UsageError(f"--table {table}: the name must end in .csv or .parquet")
    refuse_overwrite(table, force, "--table")
    if sender and "-" in captures:
        raise click.UsageError("--sender reads the capture again and cannot read it from stdin ('-')")
    check_filter(bpf)
    paths, failed = expand(captures)
    if fmt in STREAMED and table is None and not sender and len(paths) == 1 and not failed:
        sys.exit(_stream(paths[0], fmt, bpf, conn_ids))
    runs = analyse_all(captures, CaptureJob(bpf, table=table is not None), jobs, dask)
    status = 0
    found: set[int] = set()
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
            found |= _selected(run.path, conn_ids, len(rep.connections))
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
    sys.exit(_no_selected(conn_ids, found, status))


def _selected(path: str, conn_ids: tuple[int, ...], count: int) -> set[int]:
    """Which of ``conn_ids`` the capture at ``path`` has (its ``count`` connections are numbered
    0 to count - 1); a warning line for those it has not."""
    have = {i for i in conn_ids if 0 <= i < count}
    missing = sorted(set(conn_ids) - have)
    if missing:
        span = "it has no TCP connection" if not count else "its only connection is 0" if count == 1 else f"its connections are 0 to {count - 1}"
        click.echo(f"warning: {path}: no connection {', '.join(map(str, missing))} ({span})", err=True)
    return have


def _no_selected(conn_ids: tuple[int, ...], found: set[int], status: int) -> int:
    """The exit status: 2 (a bad option) when --conn named connections that no capture read
    has, so a script does not take an empty report for a clean one."""
    if conn_ids and not found and status != EXIT_ERROR:
        click.echo("error: --conn: none of the connections asked for is in the captures read", err=True)
        return 2
    return status


def _stream(path: str, fmt: str, bpf: str | None, conn_ids: tuple[int, ...]) -> int:
    """Report one capture as its connections are finished (analysis.stream_report); the exit status."""
    from tcpsack_analyze.analysis import stream_report
    from tcpsack_analyze.errors import CaptureError
    from tcpsack_analyze.progress import byte_progress
    from tcpsack_analyze.reader.bpf import FilterError
    from tcpsack_analyze.report.render import write_csv, write_json

    stream = stream_report(path, bpf)
    seen = 0  # connections streamed (numbered 0 to seen - 1)

    def selected(c: ConnectionReport) -> bool:
        nonlocal seen
        seen += 1
        return not conn_ids or c.id in conn_ids

    conns = (c for c in stream if selected(c))
    try:
        with byte_progress(path, enabled=True):
            if fmt == "json":
                write_json(conns, lambda: (stream.capture, stream.totals), sys.stdout)
            else:
                write_csv(conns, sys.stdout)
    except (CaptureError, FilterError) as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_ERROR
    sys.stdout.flush()
    cap = stream.capture
    for line in cap.warnings:
        click.echo(f"warning: {line}", err=True)
    found = _selected(path, conn_ids, seen) if conn_ids else set()
    if not cap.complete:
        return EXIT_INCOMPLETE
    if cap.tcp_packets == 0:
        click.echo(f"warning: {path}: no TCP packets in the capture", err=True)
    return _no_selected(conn_ids, found, 0)


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
