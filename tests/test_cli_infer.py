"""``tcpsack-analyze infer``: output, options and exit status."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tcpsack_analyze.cli import main

ROOT = Path(__file__).resolve().parent.parent
RENO = str(ROOT / "sample_traces/lab_reno_sack_bursty/sender.pcap")


def test_text() -> None:
    r = CliRunner().invoke(main, ["infer", RENO, "--model", "sack", "--model", "cubic"])
    assert r.exit_code == 0, r.output
    assert "conn 0 a2b (near sender, SMSS 1448): sack (confidence" in r.output
    assert "naive bound (flight size" in r.output
    assert "conn 0 b2a (near receiver, SMSS 0): no data sent in this direction: no model can run" in r.output


def test_json_and_a_users_model() -> None:
    r = CliRunner().invoke(main, ["infer", RENO, "--model", "reno", "--model", "test_models_base:Fixed",
                                  "--profile", "rfc", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["schema"] == "tcpsack-analyze/infer" and doc["schema_version"] == 2
    a2b = doc["directions"][0]
    assert {run["model"] for run in a2b["runs"]} == {"reno", "Fixed"}
    assert all(isinstance(v["text"], str) for run in a2b["runs"] for v in run["violations"])
    for run in a2b["runs"]:
        assert sum(run["violations_by_kind"].values()) == run["violation_count"]
        assert len(run["violations"]) == min(run["violation_count"], 20)


def test_json_lists_the_first_violations_unless_all_are_asked_for() -> None:
    args = ["infer", RENO, "--model", "tahoe", "--profile", "rfc", "--format", "json"]
    short = json.loads(CliRunner().invoke(main, args).output)["directions"][0]["runs"][0]
    full = json.loads(CliRunner().invoke(main, [*args, "--all-violations"]).output)["directions"][0]["runs"][0]
    assert short["violation_count"] == full["violation_count"] == len(full["violations"]) > 20
    assert short["violations"] == full["violations"][:20]


def test_bad_options_and_input(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["infer", RENO, "--model", "bbr"])
    assert r.exit_code == 2 and "unknown model 'bbr'" in r.output
    r = CliRunner().invoke(main, ["infer", RENO, "--model", "os:path"])
    assert r.exit_code == 2 and "not a SenderModel subclass" in r.output
    r = CliRunner().invoke(main, ["infer", "-"])
    assert r.exit_code == 2 and "stdin" in r.output
    r = CliRunner().invoke(main, ["infer", RENO, "--conn", "7"])
    assert r.exit_code == 2 and "no connection 7" in r.output
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"not a capture at all")
    r = CliRunner().invoke(main, ["infer", str(junk)])
    assert r.exit_code == 1 and r.output.startswith("error: ") and "Traceback" not in r.output
