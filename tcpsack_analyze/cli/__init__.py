"""The ``tcpsack-analyze`` command line.

The CLI is thin: each subcommand parses options, calls the library and prints what the
library returns. Subcommands live in one module each and are registered here.
"""
from __future__ import annotations

import click

from tcpsack_analyze import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tcpsack-analyze")
def main() -> None:
    """Analyse TCP loss recovery in packet captures (pcap, pcapng)."""


def _register() -> None:
    from tcpsack_analyze.cli.details import details
    from tcpsack_analyze.cli.report import report

    main.add_command(report)
    main.add_command(details)
    try:  # the lab needs Linux-only pieces; the rest of the CLI works without them
        from tcpsack_analyze.cli.lab import lab
    except ImportError:  # pragma: no cover - lab module not present on this install
        return
    main.add_command(lab)


_register()
