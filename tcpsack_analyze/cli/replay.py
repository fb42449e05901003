"""``tcpsack-analyze replay``: what other senders would have done over the same path (closed loop)."""
from __future__ import annotations

import sys

import click

from tcpsack_analyze.cli.infer import _model, finish, read_capture
from tcpsack_analyze.cli.options import refuse_overwrite
from tcpsack_analyze.models import MODELS
from tcpsack_analyze.models.base import PROFILES
from tcpsack_analyze.replay.capture import APPS, CaptureReplay
from tcpsack_analyze.replay.render import RENDERERS


@click.command()
@click.argument("capture", metavar="CAPTURE")
@click.option("--model", "model_names", multiple=True, metavar="NAME",
              help=f"A sender model to run (repeatable; default all): {', '.join(sorted(MODELS))}, "
                   "or module:Class for a SenderModel subclass of your own.")
@click.option("--loss", "loss", default="observed", show_default=True, metavar="PROCESS",
              help="The path's losses: observed (the capture's, by position in the data stream), ge (the "
                   "Gilbert-Elliott fit of the capture's), none, random:P, or bursty:P',b (loss events with "
                   "probability P' per segment, b segments each).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random loss processes.")
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default="rfc", show_default=True,
              help="Shared model options: the RFCs' (per-ACK slow start, 1 s minimum RTO), Linux's "
                   "(byte-counting slow start, 200 ms minimum RTO, PRR, undo) or ns-3's (the RFCs' with ns-3's "
                   "congestion avoidance, ssthresh, CUBIC arithmetic and recovery bookkeeping: SACK emulated "
                   "from duplicate ACKs when the receiver does not SACK, see SenderOptions.ns3).")
@click.option("--app", type=click.Choice(APPS), default="bulk", show_default=True,
              help="The application: bulk (all the data at once) or observed (the sender's observed pace "
                   "of new data, for thin or application-limited streams).")
@click.option("--delack-ms", type=click.FloatRange(min=0, min_open=True), metavar="MS",
              help="The receiver's delayed-ACK timer (default 40 ms, Linux's minimum: an assumption).")
@click.option("--conn", "conn_ids", multiple=True, type=int, metavar="ID", help="Only this connection (repeatable).")
@click.option("--filter", "bpf", metavar="EXPR", help="BPF filter in tcpdump syntax, applied by libpcap.")
@click.option("--format", "fmt", type=click.Choice(sorted(RENDERERS)), default="text", show_default=True)
@click.option("--table", metavar="FILE", help="Also write one row per direction and transfer to FILE (.csv).")
@click.option("--force", is_flag=True, help="Overwrite the --table file if it exists.")
def replay(capture: str, model_names: tuple[str, ...], loss: str, seed: int, profile: str, app: str,
           delack_ms: float | None, conn_ids: tuple[int, ...], bpf: str | None, fmt: str, table: str | None,
           force: bool) -> None:
    """Replay each direction of CAPTURE with other sender models over the same path.

    A path is fitted from the capture (base RTT; bottleneck rate and queue when the RTT samples
    show a queue; the receiver's SACK, delayed ACKs and window) and each model sends the same
    data over it, in a small deterministic simulator, with the observed losses (by position in
    the data stream) or a loss process of your choice. Observed and each model side by side:
    duration, throughput, timeouts, slow starts, retransmissions, RTD, recovery time per
    incident, all measured by the same loss stages as `report`. See docs/replay.md.

    Exit status: 0 when the capture was read completely, 3 when only a prefix could be read,
    1 when it could not be read at all, 2 for bad options.
    """
    from tcpsack_analyze.replay.capture import replay_capture
    from tcpsack_analyze.replay.loss import parse

    if capture == "-":
        raise click.UsageError("replay reads the capture more than once and cannot read it from stdin ('-')")
    if table is not None and not table.lower().endswith(".csv"):
        raise click.UsageError(f"--table {table}: the name must end in .csv")
    refuse_overwrite(table, force, "--table")
    try:
        parse(loss)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--loss") from None
    models = [_model(m) for m in model_names] or None
    options = PROFILES[profile]()
    result = read_capture(capture, conn_ids, lambda: replay_capture(
        capture, models, loss, options=options, seed=seed, app=app, conn=conn_ids or None, filter=bpf, delack_ms=delack_ms))
    sys.stdout.write(RENDERERS[fmt](result))
    if table is not None:
        _write_table(table, result)
    finish(result)


def _write_table(path: str, result: CaptureReplay) -> None:
    try:
        result.frame().to_csv(path, index=False)
    except OSError as exc:
        raise click.FileError(path, exc.strerror) from None
