"""The ``tcpsack-analyze`` command line.

The CLI is thin: each subcommand parses options, calls the library and prints what the
library returns. Subcommands live in one module each, named here and imported when used.
"""
from __future__ import annotations

import importlib
from typing import Any

import click

from tcpsack_analyze import __version__


class _LazyGroup(click.Group):
    """Subcommands imported when run, not at start-up: ``report`` should not pay for the lab's
    or ``details``' imports (click documents this pattern as lazily loading subcommands)."""

    def __init__(self, *args: Any, lazy: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = lazy  # command name -> "module:attribute"

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self._lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self._lazy or cmd_name in self.commands:
            return super().get_command(ctx, cmd_name)
        module, _, attr = self._lazy[cmd_name].partition(":")
        try:
            command = getattr(importlib.import_module(module), attr)
        except ImportError:  # the lab needs Linux-only pieces; the rest of the CLI works without them
            return None
        self.add_command(command, cmd_name)
        return command


@click.group(
    cls=_LazyGroup,
    lazy={
        "report": "tcpsack_analyze.cli.report:report",
        "details": "tcpsack_analyze.cli.details:details",
        "infer": "tcpsack_analyze.cli.infer:infer",
        "replay": "tcpsack_analyze.cli.replay:replay",
        "check": "tcpsack_analyze.cli.check:check",
        "compare": "tcpsack_analyze.cli.compare:compare",
        "lab": "tcpsack_analyze.cli.lab:lab",
        "plot": "tcpsack_analyze.cli.plot:plot",
    },
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="tcpsack-analyze")
def main() -> None:
    """Analyse TCP loss recovery in packet captures (pcap, pcapng)."""
