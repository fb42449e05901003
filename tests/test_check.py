"""``check``: rule grammar, metric paths against the report schema, evaluation, exit codes, JUnit."""
from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcpsack_analyze.check import CaptureInput, RuleError, bind, evaluate, load_rules, parse_rule
from tcpsack_analyze.check.metrics import MetricError, resolve
from tcpsack_analyze.check.output import render_junit, render_table
from tcpsack_analyze.check.rules import OPERATORS

ROOT = Path(__file__).resolve().parent.parent
NOSACK = ROOT / "sample_traces" / "lab_reno_nosack_bursty"


# ---------------------------------------------------------------- grammar
def test_parse_rule_parts():
    r = parse_rule("max(sender.loss.rtd_ms.p99) <= 1.5e2 or null")
    assert (r.aggregate, r.metric, r.op, r.threshold, r.null_ok) == ("max", "sender.loss.rtd_ms.p99", "<=", 150.0, True)
    r = parse_rule("sender.vantage == 'near sender'")
    assert (r.threshold, r.null_ok, r.aggregate) == ("near sender", False, None)
    assert parse_rule("sender.sack_permitted != false").threshold is False
    assert parse_rule("sender.loss.pattern.burst_histogram.3 < 2").metric.endswith("burst_histogram.3")
    assert isinstance(parse_rule("report.loss.retransmissions >= 7").threshold, int)


@pytest.mark.parametrize(
    "text",
    ["sender.x = 0", "sender.x <", "<= 3", "sender.x <= 3 and 4", "sender.x < 'a'", "avg(sender.x) < 3",
     "sender.x < nothing", "sender.x < 3 or", "__import__('os') == 1", ""],
)
def test_parse_rule_rejects(text):
    with pytest.raises(RuleError):
        parse_rule(text)


@given(
    path=st.from_regex(r"[a-z_][a-z0-9_]{0,8}(\.[a-z0-9_]{1,8}){0,4}", fullmatch=True).filter(lambda p: p not in ("true", "false")),
    op=st.sampled_from(sorted(OPERATORS)),
    value=st.one_of(st.integers(-10**9, 10**9), st.floats(allow_nan=False, allow_infinity=False)),
    null_ok=st.booleans(),
)
def test_parse_rule_roundtrip(path, op, value, null_ok):
    text = f"{path} {op} {value!r}" + (" or null" if null_ok else "")
    r = parse_rule(text)
    assert (r.metric, r.op, r.threshold, r.null_ok) == (path, op, value, null_ok)


@given(st.text(max_size=40))
def test_parse_rule_never_crashes(text):
    try:
        parse_rule(text)
    except RuleError:
        pass


def test_rule_file(tmp_path):
    f = tmp_path / "r.toml"
    f.write_text('[[rule]]\nname = "no RTO"\nexpr = "sender.loss.by_trigger.rto == 0"\n[[rule]]\nexpr = "sender.mss >= 536"\n')
    rules = load_rules(f)
    assert [r.name for r in rules] == ["no RTO", "sender.mss >= 536"]
    f.write_text('[[rule]]\nexp = "sender.mss >= 536"\n')
    with pytest.raises(RuleError, match="unknown key"):
        load_rules(f)
    f.write_text("[[rule]\n")
    with pytest.raises(RuleError, match="not valid TOML"):
        load_rules(f)


def test_example_rule_files_bind():
    for f in sorted((ROOT / "docs").glob("*.toml")):
        assert [bind(r) for r in load_rules(f)], f


# ---------------------------------------------------------------- metric paths
def test_resolve_valid_paths():
    assert resolve("sender.loss.rtd_ms.p99")[2].kind == "number"
    assert resolve("sender.loss.rtd_ms.p99")[2].nullable  # a summary without samples is null
    assert resolve("connection.state")[2].kind == "str"
    assert resolve("direction.sack_permitted")[2].kind == "bool"
    assert resolve("report.capture.complete")[:2] == ("report", ("capture", "complete"))
    leaf = resolve("sender.loss.by_trigger.rto")[2]
    assert leaf.missing_is_zero
    assert resolve("sender.loss.pattern.gilbert_elliott.p")[2].nullable


@pytest.mark.parametrize(
    "path,msg",
    [
        ("sender.loss.rtd_ms.p98", "did you mean 'p99'"),
        ("sender.loss.by_trigger.rot", "did you mean 'rto'"),
        ("flow.loss.retransmissions", "must start with a scope"),
        ("sender.loss.rtd_ms", "group of fields"),
        ("report.connections", "is a list"),
        ("sender.mss.value", "is a value"),
        ("sender.loss.pattern.burst_histogram.x", "integers"),
        ("sender", "name a field"),
    ],
)
def test_resolve_rejects(path, msg):
    with pytest.raises(MetricError, match=msg):
        resolve(path)


def test_bind_checks_threshold_type():
    with pytest.raises(RuleError, match="is a str"):
        bind(parse_rule("sender.vantage == 3"))
    with pytest.raises(RuleError, match="needs a number"):
        bind(parse_rule("max(sender.vantage) == 'x'"))


# ---------------------------------------------------------------- evaluation on hand-built reports
def _direction(name: str, data: int, rto: int | None, p99: float | None) -> dict:
    return {"name": name, "data_packets": data, "loss": {"by_trigger": {} if rto is None else {"rto": rto}, "rtd_ms": None if p99 is None else {"p99": p99}}}


def _report(*conns: tuple[dict, dict], complete: bool = True) -> dict:
    return {
        "capture": {"complete": complete, "error": None if complete else "x at byte 9: truncated"},
        "connections": [
            {"id": i, "a_addr": "10.0.0.1", "a_port": 1000 + i, "b_addr": "10.0.0.2", "b_port": 80, "a2b": a, "b2a": b}
            for i, (a, b) in enumerate(conns)
        ],
    }


def _check(rules: list[str], *caps: CaptureInput):
    return evaluate([bind(parse_rule(r)) for r in rules], list(caps))


def test_sender_scope_skips_ack_only_directions_and_missing_count_is_zero():
    rep = _report((_direction("a2b", 10, None, 80.0), _direction("b2a", 0, None, None)))
    res = _check(["sender.loss.by_trigger.rto == 0", "sender.loss.rtd_ms.p99 < 100"], CaptureInput("c", rep))
    assert [(o.status, o.checked) for o in res.outcomes] == [("pass", 1), ("pass", 1)]
    assert res.exit_status == 0


def test_failure_names_connection_direction_value_threshold():
    rep = _report((_direction("a2b", 10, 2, 80.0), _direction("b2a", 0, None, None)),
                  (_direction("a2b", 5, 0, 20.0), _direction("b2a", 3, 1, 30.0)))
    res = _check(["sender.loss.by_trigger.rto == 0"], CaptureInput("c.pcap", rep))
    assert res.exit_status == 1
    got = [(f.connection, f.direction, f.value, f.threshold, f.status) for f in res.findings]
    assert got == [(0, "a2b", 2, 0, "fail"), (1, "b2a", 1, 0, "fail")]
    table = render_table(res)
    assert "1 (10.0.0.1:1001-10.0.0.2:80)" in table and "== 0" in table


def test_null_fails_closed_unless_accepted():
    rep = _report((_direction("a2b", 10, None, None), _direction("b2a", 0, None, None)))
    assert _check(["sender.loss.rtd_ms.p99 < 100"], CaptureInput("c", rep)).exit_status == 2
    assert _check(["sender.loss.rtd_ms.p99 < 100 or null"], CaptureInput("c", rep)).exit_status == 0


def test_unreadable_or_incomplete_capture_is_an_error_not_a_pass():
    good = _report((_direction("a2b", 10, 0, 1.0), _direction("b2a", 0, None, None)))
    cut = _report((_direction("a2b", 10, 0, 1.0), _direction("b2a", 0, None, None)), complete=False)
    res = _check(["sender.loss.by_trigger.rto == 0"], CaptureInput("a", good), CaptureInput("b", cut), CaptureInput("c", None, "c: empty file"))
    assert [o.status for o in res.outcomes] == ["pass", "error", "error"]
    assert "truncated" in res.outcomes[1].message and "empty file" in res.outcomes[2].message
    assert res.exit_status == 2


def test_nothing_to_check_is_an_error():
    res = _check(["sender.loss.by_trigger.rto == 0"], CaptureInput("c", _report()))
    assert res.outcomes[0].status == "error" and res.exit_status == 2


def test_error_outranks_failure():
    rep = _report((_direction("a2b", 10, 3, None), _direction("b2a", 0, None, None)))
    res = _check(["sender.loss.by_trigger.rto == 0", "sender.loss.rtd_ms.p99 < 5"], CaptureInput("c", rep))
    assert [o.status for o in res.outcomes] == ["fail", "error"] and res.exit_status == 2


def test_aggregate_pools_over_captures():
    a = _report((_direction("a2b", 10, 1, 50.0), _direction("b2a", 0, None, None)))
    b = _report((_direction("a2b", 10, 2, 150.0), _direction("b2a", 4, None, None)))
    caps = (CaptureInput("a", a), CaptureInput("b", b))
    res = _check(["max(sender.loss.rtd_ms.p99) <= 100", "sum(sender.loss.by_trigger.rto) == 3", "median(sender.loss.rtd_ms.p99) == 100 or null"], *caps)
    assert [(o.capture, o.status, o.checked) for o in res.outcomes] == [
        ("(all captures)", "fail", 3), ("(all captures)", "pass", 3), ("(all captures)", "pass", 3)]
    assert res.outcomes[0].findings[0].value == 150.0


def test_junit_one_case_per_rule_and_capture():
    a = _report((_direction("a2b", 10, 1, 50.0), _direction("b2a", 0, None, None)))
    res = _check(["sender.loss.by_trigger.rto == 0", "sender.loss.rtd_ms.p99 < 100"], CaptureInput("a", a), CaptureInput("b", None, "b: bad"))
    suite = ET.fromstring(render_junit(res)).find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "1", "2")
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("a", "sender.loss.by_trigger.rto == 0"), ("a", "sender.loss.rtd_ms.p99 < 100"),
        ("b", "sender.loss.by_trigger.rto == 0"), ("b", "sender.loss.rtd_ms.p99 < 100")]
    assert cases[0].find("failure") is not None and cases[1].find("failure") is None
    assert cases[2].find("error") is not None


# ---------------------------------------------------------------- the command on a lab capture
def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(["tcpsack-analyze", "check", *args], capture_output=True, text=True, env=env, cwd=ROOT)


def test_check_lab_sample_fail_and_pass_with_junit(tmp_path):
    # kernel truth of this run: 143 retransmissions, 5 of them by the retransmission timer
    truth = json.loads((NOSACK / "truth.json").read_text())
    assert any(r["kind"] == "rto" for r in truth["retransmissions"]) and len(truth["retransmissions"]) > 0
    pcap = str(NOSACK / "sender.pcap")
    must_pass = "sender.loss.retransmissions >= 1"
    must_fail = "sender.loss.by_trigger.rto == 0"
    junit = tmp_path / "check.xml"

    ok = _run(pcap, "--rule", must_pass, "--junit", str(junit), "-j", "1")
    assert ok.returncode == 0, ok.stderr
    cases = ET.parse(junit).getroot().findall("./testsuite/testcase")
    assert [(c.get("name"), list(c)) for c in cases] == [(must_pass, [])]

    again = _run(pcap, "--rule", must_pass, "--junit", str(junit))
    assert again.returncode == 2 and "--force" in again.stderr  # never overwritten silently

    bad = _run(pcap, "--rule", must_pass, "--rule", must_fail, "--junit", str(junit), "--force")
    assert bad.returncode == 1, bad.stderr
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    failed = {c.get("name"): c.find("failure") for c in suite.findall("testcase")}
    assert failed[must_pass] is None and failed[must_fail] is not None
    assert "sender.loss.by_trigger.rto" in bad.stdout and "a2b" in bad.stdout


def test_check_typo_is_exit_2_not_a_pass():
    r = _run(str(NOSACK / "sender.pcap"), "--rule", "sender.loss.by_trigger.rot == 0")
    assert r.returncode == 2 and "did you mean 'rto'" in r.stderr and "Traceback" not in r.stderr


def test_check_bad_capture_among_good_ones(tmp_path):
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"not a capture at all")
    cut = tmp_path / "cut.pcap"
    cut.write_bytes((NOSACK / "sender.pcap").read_bytes()[:50_000])
    r = _run(str(NOSACK / "sender.pcap"), str(bad), str(cut), "--rule", "sender.loss.retransmissions >= 1", "--format", "json", "-j", "2")
    assert r.returncode == 2 and "bad.pcap" in r.stderr and "Traceback" not in r.stderr
    doc = json.loads(r.stdout)
    assert [o["status"] for o in doc["outcomes"]] == ["pass", "error", "error"]
    assert doc["exit_status"] == 2


@pytest.mark.parametrize("command", ["check", "compare", "report"])
def test_help_imports_no_heavy_module(command):
    code = (
        "import sys\nfrom click.testing import CliRunner\nfrom tcpsack_analyze.cli import main\n"
        f"r = CliRunner().invoke(main, ['{command}', '--help'])\nassert r.exit_code == 0, r.output\n"
        "print(sorted(m for m in ('pandas', 'dask', 'distributed', 'matplotlib', 'tqdm', 'pyarrow') if m in sys.modules))"
    )
    out = subprocess.run(["python3", "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert out.stdout.strip() == "[]"
