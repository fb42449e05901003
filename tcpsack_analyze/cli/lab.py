"""``tcpsack-analyze lab``: make real captures with the sender kernel's truth beside them."""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from tcpsack_analyze.lab.capture import DEFAULT_SNAPLEN
from tcpsack_analyze.lab.link import LinkConfig
from tcpsack_analyze.lab.runner import CAPTURE_POINTS, RunConfig, run
from tcpsack_analyze.lab.settings import CONGESTION_CONTROLS, TcpSettings
from tcpsack_analyze.lab.topology import LabError
from tcpsack_analyze.lab.traffic import Traffic

__all__ = ["lab"]


@click.group()
def lab() -> None:
    """Reproducible TCP transfers over an emulated path (Linux, root)."""


@lab.command("run")
@click.option("-o", "--output", "outdir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Directory for the capture(s), truth.json and summary.txt.")
@click.option("--delay", type=float, default=25.0, show_default=True, help="One-way delay, ms (both directions; with a mid point: mid point <-> receiver).")
@click.option("--reverse-delay", type=float, help="One-way delay receiver->sender, ms [default: --delay].")
@click.option("--rate", type=float, default=0.0, show_default=True, help="Bottleneck rate sender->receiver, Mbit/s (0: none).")
@click.option("--reverse-rate", type=float, default=0.0, show_default=True, help="Bottleneck rate receiver->sender, Mbit/s.")
@click.option("--queue", type=int, default=100, show_default=True, help="Drop-tail queue of the forward bottleneck, packets.")
@click.option("--reverse-queue", type=int, default=100, show_default=True, help="Drop-tail queue of the reverse bottleneck.")
@click.option("--loss", default="none", show_default=True,
              help="Forward loss model (with a mid point: after it): none | random:P | bursty:P1:B | "
                   "ge:p:r[:loss_good[:loss_bad]] (data segments only).")
@click.option("--reverse-loss", default="none", show_default=True, help="Reverse loss model (same spellings).")
@click.option("--upstream-loss", default="none", show_default=True,
              help="Forward loss model of the section sender -> mid point (same spellings); the options above "
                   "then describe the section mid point -> receiver. An --upstream-* option or --capture mid "
                   "puts the mid point on the path.")
@click.option("--upstream-delay", type=float, default=0.0, show_default=True,
              help="One-way delay of the first section (sender <-> mid point), ms, both directions.")
@click.option("--cc", type=click.Choice(CONGESTION_CONTROLS), default="cubic", show_default=True,
              help="Sender congestion control (set per socket).")
@click.option("--sack/--no-sack", default=True, show_default=True, help="SACK (RFC 2018) on both ends.")
@click.option("--dsack/--no-dsack", default=True, show_default=True, help="D-SACK (RFC 2883).")
@click.option("--rack/--no-rack", default=True, show_default=True, help="RACK loss detection (net.ipv4.tcp_recovery).")
@click.option("--tlp/--no-tlp", default=True, show_default=True, help="Tail loss probe (net.ipv4.tcp_early_retrans).")
@click.option("--timestamps/--no-timestamps", default=True, show_default=True, help="TCP timestamps (RFC 7323).")
@click.option("--thin-linear-timeouts/--no-thin-linear-timeouts", default=False, show_default=True,
              help="Linear RTO backoff for thin streams.")
@click.option("--bytes", "nbytes", type=int, help="Bulk transfer of this many bytes per flow.")
@click.option("--seconds", type=float, help="Bulk transfer for this many seconds per flow.")
@click.option("--thin", help="Thin stream COUNT:BYTES:INTERVAL (seconds), with TCP_NODELAY.")
@click.option("--flows", type=int, default=1, show_default=True, help="Concurrent connections.")
@click.option("--capture", "capture_at", type=click.Choice(["sender", "mid", "receiver", "both"]), multiple=True,
              default=["sender"], show_default=True,
              help="Where to capture; repeat for several points (both: sender and receiver; mid: between the "
                   "upstream section and the rest).")
@click.option("--snaplen", type=int, default=DEFAULT_SNAPLEN, show_default=True, help="Capture snap length, bytes.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the loss models.")
@click.option("--timeout", type=float, default=120.0, show_default=True, help="Give up on the transfer after this long, s.")
def run_command(outdir: Path, delay: float, reverse_delay: float | None, rate: float, reverse_rate: float,
                queue: int, reverse_queue: int, loss: str, reverse_loss: str, upstream_loss: str,
                upstream_delay: float, cc: str, sack: bool, dsack: bool, rack: bool, tlp: bool, timestamps: bool,
                thin_linear_timeouts: bool, nbytes: int | None, seconds: float | None, thin: str | None,
                flows: int, capture_at: tuple[str, ...], snaplen: int, seed: int, timeout: float) -> None:
    """Run one transfer through the emulated path; write captures and truth.json to -o DIR."""
    if nbytes is None and seconds is None and thin is None:
        nbytes = 1_000_000
    points = {p for at in capture_at for p in (("sender", "receiver") if at == "both" else (at,))}
    capture = tuple(p for p in CAPTURE_POINTS if p in points)
    try:
        upstream = None
        if "mid" in points or upstream_loss != "none" or upstream_delay:
            upstream = (LinkConfig(upstream_delay / 1e3, loss=upstream_loss), LinkConfig(upstream_delay / 1e3))
        config = RunConfig(
            forward=LinkConfig(delay / 1e3, rate * 1e6, queue, loss),
            reverse=LinkConfig((delay if reverse_delay is None else reverse_delay) / 1e3,
                               reverse_rate * 1e6, reverse_queue, reverse_loss),
            tcp=TcpSettings(cc, sack, dsack, rack, tlp, timestamps, thin_linear_timeouts),
            traffic=Traffic(flows, nbytes, seconds, thin),
            capture=capture, snaplen=snaplen, seed=seed, timeout=timeout, upstream=upstream,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    argv = sys.argv[sys.argv.index("run") + 1 :] if "run" in sys.argv else []
    command = " ".join([click.get_current_context().command_path, shlex.join(argv)])
    try:
        truth = run(config, outdir, command)
    except LabError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(truth.summary)
