"""``tcpsack-analyze lab run``: options are checked before anything is created."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tcpsack_analyze.cli.lab import lab


@pytest.mark.parametrize(
    "args, message",
    [
        (["--loss", "random:2"], "probability"),
        (["--loss", "fancy:1"], "unknown loss model"),
        (["--bytes", "10", "--seconds", "1"], "exactly one of"),
        (["--thin", "4:100"], "COUNT:BYTES:INTERVAL"),
        (["--queue", "0"], "at least one frame"),
    ],
)
def test_bad_options_are_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(lab, ["run", "-o", str(tmp_path / "out"), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "out").exists()


def test_help_lists_the_testbed_knobs() -> None:
    result = CliRunner().invoke(lab, ["run", "--help"])
    assert result.exit_code == 0
    for option in ("--delay", "--rate", "--queue", "--loss", "--cc", "--no-sack", "--thin", "--capture", "--snaplen"):
        assert option in result.output
