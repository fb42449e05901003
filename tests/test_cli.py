"""The command line's shape: every subcommand listed, and a report that imports only what it needs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

import tcpsack_analyze
from tcpsack_analyze.cli import main

SAMPLE = Path(__file__).resolve().parent.parent / "sample_traces" / "http_206_sack_recovery.pcap"


def test_help_lists_every_subcommand() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    commands = result.output.split("Commands:")[1].split()
    assert {"report", "details", "lab"} <= set(commands)


def test_help_imports_no_subcommand() -> None:
    """``--help`` lists the subcommands without importing them (the lab, pandas, matplotlib)."""
    code = (
        "import sys\n"
        "from tcpsack_analyze.cli import main\n"
        "try:\n    main(['--help'])\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        "late = sorted(m for m in sys.modules if m.startswith(('pandas', 'matplotlib', 'numpy', 'tcpsack_analyze.lab', 'tcpsack_analyze.cli.')))\n"
        "print('LOADED', late)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "report" in out and out.strip().splitlines()[-1] == "LOADED []"


def test_help_summaries_are_the_commands_own() -> None:
    """The summaries ``--help`` lists without importing a subcommand are what the subcommand says."""
    ctx = click.Context(main)
    for name, summary in main.summaries.items():  # type: ignore[attr-defined]
        cmd = main.get_command(ctx, name)
        assert cmd is not None, name
        for limit in (40, 80, 1000):
            assert click.utils.make_default_short_help(summary, limit) == cmd.get_short_help_str(limit), (name, limit)


def test_unknown_subcommand_is_one_clear_error() -> None:
    result = CliRunner().invoke(main, ["reprot"])
    assert result.exit_code == 2 and "No such command 'reprot'" in result.output


# What a plain `report` of a small capture must not import (issue 17: under 0.15 s for < 10k packets):
# pandas alone costs 0.5-1 s of start-up and the report is built from dataclasses; the plotting
# libraries, the lab and the sender models (`report --sender`, `infer`) belong to other commands;
# multiprocessing only to --jobs over several captures.
NOT_FOR_REPORT = ("pandas", "matplotlib", "plotly", "scipy", "pyarrow", "dask", "distributed", "tqdm", "multiprocessing",
                  "concurrent.futures", "tcpsack_analyze.lab", "tcpsack_analyze.models", "tcpsack_analyze.plots",
                  "tcpsack_analyze.replay", "tcpsack_analyze.truth", "tcpsack_analyze.cli.details")


def test_report_does_not_import_pandas_or_the_lab() -> None:
    code = (
        "import sys\n"
        "from tcpsack_analyze.cli import main\n"
        f"try:\n    main(['report', {str(SAMPLE)!r}])\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        f"late = sorted(m for m in sys.modules if m.startswith({NOT_FOR_REPORT!r}))\n"
        "print('LOADED', late)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "TCP connection 0" in out
    assert out.strip().splitlines()[-1] == "LOADED []"


def test_package_level_analyze() -> None:
    a = tcpsack_analyze.analyze(str(SAMPLE))
    assert len(a.report.connections) == 2 and a.report.capture.complete
    assert len(a.connections_df()) == 4  # pandas comes in with the first table


def _report(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tcpsack_analyze", "report", *args], capture_output=True, text=True, timeout=120)


def test_conn_that_no_capture_has_is_an_error_not_an_empty_report() -> None:
    """--conn 99 on a capture of two connections: one warning naming what the capture has, an
    error line and exit 2 (bad option), streamed (json, csv) or not (text)."""
    for fmt in ("text", "json", "csv"):
        r = _report(str(SAMPLE), "--conn", "99", "--format", fmt)
        assert r.returncode == 2, (fmt, r.stderr)
        assert r.stderr.splitlines() == [
            f"warning: {SAMPLE}: no connection 99 (its connections are 0 to 1)",
            "error: --conn: none of the connections asked for is in the captures read",
        ], fmt


def test_conn_found_in_one_capture_is_reported_with_a_warning_for_the_others() -> None:
    r = _report(str(SAMPLE), "--conn", "1", "--conn", "7", "--format", "json")
    assert r.returncode == 0 and "no connection 7" in r.stderr
    import json

    assert [c["id"] for c in json.loads(r.stdout)["connections"]] == [1]
