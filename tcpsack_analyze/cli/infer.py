"""``tcpsack-analyze infer``: which sender model explains each direction, and the inferred cwnd."""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

import click

from tcpsack_analyze.cli.report import EXIT_ERROR, EXIT_INCOMPLETE
from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.models import MODELS, SenderModel
from tcpsack_analyze.models.base import PROFILES
from tcpsack_analyze.models.infer import infer_capture
from tcpsack_analyze.models.render import RENDERERS
from tcpsack_analyze.reader.bpf import FilterError


def _model(value: str) -> str | type[SenderModel]:
    """A registered name, or ``module:Class`` naming a SenderModel subclass of the user's."""
    if value in MODELS:
        return value
    module, sep, attr = value.partition(":")
    if not sep:
        raise click.BadParameter(f"unknown model {value!r} (one of {', '.join(sorted(MODELS))}, or module:Class)")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise click.BadParameter(f"cannot import {value!r}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, SenderModel)):
        raise click.BadParameter(f"{value!r} is not a SenderModel subclass")
    return cls


@click.command()
@click.argument("capture", metavar="CAPTURE")
@click.option("--conn", "conn_ids", multiple=True, type=int, metavar="ID", help="Only this connection (repeatable).")
@click.option("--model", "model_names", multiple=True, metavar="NAME",
              help=f"A sender model to run (repeatable; default all): {', '.join(sorted(MODELS))}, "
                   "or module:Class for a SenderModel subclass of your own.")
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default="linux", show_default=True,
              help="Shared model options: Linux's (IW 10, PRR, RACK-TLP, 200 ms minimum RTO), the RFCs' "
                   "(per-ACK slow start, 1 s minimum RTO, no RACK-TLP) or ns-3's (the RFCs' with ns-3's "
                   "congestion avoidance, ssthresh, CUBIC arithmetic and recovery bookkeeping: SACK emulated "
                   "from duplicate ACKs when the receiver does not SACK, see SenderOptions.ns3).")
@click.option("--filter", "bpf", metavar="EXPR", help="BPF filter in tcpdump syntax, applied by libpcap.")
@click.option("--format", "fmt", type=click.Choice(sorted(RENDERERS)), default="text", show_default=True)
@click.option("--all-violations", is_flag=True,
              help="List every violation of every model (by default the text shows the best model's first 5, the "
                   "JSON each model's first 20 and a count per kind).")
def infer(capture: str, conn_ids: tuple[int, ...], model_names: tuple[str, ...], profile: str, bpf: str | None, fmt: str,
          all_violations: bool) -> None:
    """Infer the sender's congestion control and cwnd in each direction of CAPTURE.

    Every model is driven by the observed sends and ACKs (open loop) and judged on which sends
    it would have allowed; models are ranked by the share of sends they allow, and the best is
    reported with a confidence, or "no loss-based model fits". The flight size is shown beside
    as the naive bound. See docs/models.md.

    Exit status: 0 when the capture was read completely, 3 when only a prefix could be read,
    1 when it could not be read at all, 2 for bad options.
    """
    if capture == "-":
        raise click.UsageError("infer reads the capture more than once and cannot read it from stdin ('-')")
    models = [_model(m) for m in model_names] or None
    options = PROFILES[profile]()
    result = read_capture(capture, conn_ids, lambda: infer_capture(capture, models, options, conn=conn_ids or None, filter=bpf))
    sys.stdout.write(RENDERERS[fmt](result, all_violations))
    finish(result)


class _PerDirection(Protocol):
    """What ``infer`` and ``replay`` return: per-direction results of one capture read."""

    @property
    def directions(self) -> Sequence[object]: ...

    @property
    def complete(self) -> bool: ...

    @property
    def warnings(self) -> Sequence[str]: ...


R = TypeVar("R", bound=_PerDirection)


def read_capture(capture: str, conn_ids: tuple[int, ...], compute: Callable[[], R]) -> R:
    """Run ``compute``, a library call that reads ``capture`` per direction (``infer``,
    ``replay``): a bad filter or a connection not in the capture is a usage error (exit 2), an
    unreadable capture one error line and exit 1."""
    try:
        result = compute()
    except FilterError as exc:
        raise click.UsageError(str(exc)) from None
    except CaptureError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    if conn_ids and not result.directions:
        raise click.UsageError(f"{capture}: no connection {', '.join(map(str, conn_ids))} in the capture")
    return result


def finish(result: _PerDirection) -> None:
    """The warnings on stderr; exit 0, or 3 when only a prefix of the capture could be read."""
    for line in result.warnings:
        click.echo(f"warning: {line}", err=True)
    sys.exit(0 if result.complete else EXIT_INCOMPLETE)
