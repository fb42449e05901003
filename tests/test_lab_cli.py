"""``tcpsack-analyze lab run``: options are checked before anything is created, and map onto RunConfig."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tcpsack_analyze.cli.lab import lab
from tcpsack_analyze.lab.link import LinkConfig
from tcpsack_analyze.lab.runner import RunConfig
from tcpsack_analyze.lab.settings import TcpSettings
from tcpsack_analyze.lab.topology import LabError
from tcpsack_analyze.lab.traffic import Traffic


@pytest.mark.parametrize(
    "args, message",
    [
        (["--loss", "random:2"], "probability"),
        (["--loss", "fancy:1"], "unknown loss model"),
        (["--bytes", "10", "--seconds", "1"], "exactly one of"),
        (["--thin", "4:100"], "COUNT:BYTES:INTERVAL"),
        (["--queue", "0"], "at least one frame"),
        (["--upstream-loss", "random:2"], "probability"),
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
    for option in ("--delay", "--rate", "--queue", "--loss", "--upstream-loss", "--upstream-delay", "--cc", "--no-sack",
                   "--thin", "--capture", "--snaplen"):
        assert option in result.output



def _config_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> RunConfig:
    """The RunConfig the command builds from ``args`` (the run itself is stubbed out)."""
    seen: list[RunConfig] = []

    def stub(config: RunConfig, _outdir: Path, _command: str) -> None:
        seen.append(config)
        raise LabError("not running")

    monkeypatch.setattr("tcpsack_analyze.cli.lab.run", stub)
    result = CliRunner().invoke(lab, ["run", "-o", str(tmp_path / "out"), *args])
    assert result.exit_code == 1 and "not running" in result.output, result.output
    return seen[0]


def test_upstream_options_and_mid_capture_put_a_mid_point_on_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config_of(tmp_path, monkeypatch, "--capture", "mid", "--capture", "sender", "--delay", "15",
                        "--upstream-delay", "10", "--upstream-loss", "random:0.1")
    assert config.capture == ("sender", "mid")
    assert config.upstream == (LinkConfig(0.01, loss="random:0.1"), LinkConfig(0.01))
    assert config.path_delay == pytest.approx(0.025)
    assert _config_of(tmp_path, monkeypatch, "--capture", "mid").upstream == (LinkConfig(), LinkConfig())
    plain = _config_of(tmp_path, monkeypatch, "--capture", "both")
    assert plain.capture == ("sender", "receiver") and plain.upstream is None and "upstream" not in plain.to_dict()
    with pytest.raises(ValueError, match="upstream section"):
        RunConfig(LinkConfig(), LinkConfig(), TcpSettings(), Traffic(bytes=1), capture=("mid",))
