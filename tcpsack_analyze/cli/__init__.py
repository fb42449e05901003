"""The ``tcpsack-analyze`` command line.

The CLI is thin: each subcommand parses options, calls the library and prints what the
library returns. Subcommands live in one module each, named here and imported when used.
"""
from __future__ import annotations

import atexit
import gc
import importlib
import os
from typing import Any

import click

from tcpsack_analyze import __version__

# At exit the interpreter runs a last garbage collection over every object still alive (numpy's and
# our modules', the report): 15-20 ms of a 0.16 s `report` of a small capture (issue 17 asks for
# under 0.15 s). Nothing the command line holds then needs the collector: files are closed by
# `with`, and stdout/stderr are flushed by the interpreter itself. Freezing moves those objects
# out of the collector's sight for that last pass (gc.freeze, Python 3.7+); atexit callbacks run
# before it. A process that merely imports the CLI (the tests) is affected only when it exits.
atexit.register(gc.freeze)

# numpy's OpenBLAS starts a thread per core at import, and they spin waiting for work: 5% of a
# 1M-packet `report`'s samples (perf) on a 2-core machine, for nothing, since no command does
# linear algebra large enough to share (the per-packet work is in the compiled core). One thread,
# unless the user set it; set here because numpy reads it once, when it is first imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


class _LazyGroup(click.Group):
    """Subcommands imported when run, not at start-up: ``report`` should not pay for the lab's
    or ``details``' imports (click documents this pattern as lazily loading subcommands).

    ``--help`` lists the subcommands with a summary given here, so that listing them imports
    none of them (they import pandas, the lab, matplotlib: 0.4 s and 75 MB before the list
    printed); tests/test_cli.py checks each summary against its command's own help.
    """

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = {name: where for name, (where, _) in lazy.items()}  # command name -> "module:attribute"
        self.summaries = {name: summary for name, (_, summary) in lazy.items()}

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

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The list of subcommands, as click writes it, from the summaries (no import)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            if name in self.commands or name not in self.summaries:
                cmd = self.get_command(ctx, name)
                if cmd is None or cmd.hidden:
                    continue
                rows.append((name, cmd.get_short_help_str(limit)))
            else:
                # shortened by click itself (click 8.5 made utils.make_default_short_help private)
                rows.append((name, click.Command(name, help=self.summaries[name]).get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=_LazyGroup,
    lazy={
        "report": ("tcpsack_analyze.cli.report:report", "Report every TCP connection of each CAPTURE (pcap or pcapng, maybe gzipped; - for stdin; "
                   "a directory or glob for the captures in it), several captures in parallel."),
        "details": ("tcpsack_analyze.cli.details:details", "Show the packets around each loss incident of CAPTURE (pcap or pcapng, maybe gzipped)."),
        "infer": ("tcpsack_analyze.cli.infer:infer", "Infer the sender's congestion control and cwnd in each direction of CAPTURE."),
        "replay": ("tcpsack_analyze.cli.replay:replay", "Replay each direction of CAPTURE with other sender models over the same path."),
        "check": ("tcpsack_analyze.cli.check:check", "Check rules on the report of each CAPTURE (files, directories or globs)."),
        "compare": ("tcpsack_analyze.cli.compare:compare", "Compare captures side by side, the first as the baseline: throughput, retransmissions, "
                    "timeouts, RTD, their ratio/changes against the baseline, and Jain's fairness index across them (--flows: across the flows)."),
        "lab": ("tcpsack_analyze.cli.lab:lab", "Reproducible TCP transfers over an emulated path (Linux, root)."),
        "plot": ("tcpsack_analyze.cli.plot:plot", "Draw a figure of CAPTURE (pcap or pcapng, maybe gzipped) to FILE."),
    },
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="tcpsack-analyze")
def main() -> None:
    """Analyse TCP loss recovery in packet captures (pcap, pcapng)."""
