"""A check's result as a table of failures (people), JSON (machines) and JUnit XML (CI systems).

JUnit XML follows the schema CI systems read (Jenkins, GitLab, GitHub test reporters): one
``<testsuite>`` holding one ``<testcase>`` per rule and capture, with ``classname`` the capture
and ``name`` the rule; a failed rule has a ``<failure>``, a rule that could not be evaluated an
``<error>``, each with the failing items in its text.
"""
from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from dataclasses import asdict
from typing import Any

from tcpsack_analyze.check.evaluate import (
    ERROR,
    FAIL,
    PASS,
    CheckResult,
    Finding,
    Outcome,
)

TABLE_HEADER = ("capture", "connection", "direction", "metric", "value", "threshold", "status")


def _value(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, float) and not math.isnan(v):
        return f"{v:.6g}"
    return str(v)


def _row(f: Finding) -> tuple[str, ...]:
    conn = "" if f.connection is None else f"{f.connection} ({f.endpoints})"
    return (f.capture, conn, f.direction or "", f.metric, _value(f.value), f"{f.op} {_value(f.threshold)}", f.status)


def render_table(result: CheckResult) -> str:
    """Failing and unevaluated items, one line each, then a one-line summary."""
    rows = [_row(f) for f in result.findings]
    rows += [(o.capture, "", "", o.rule.metric, "", f"{o.rule.op} {_value(o.rule.threshold)}", f"{ERROR}: {o.message}")
             for o in result.outcomes if o.status == ERROR and not o.findings]
    counts = {s: sum(o.status == s for o in result.outcomes) for s in (PASS, FAIL, ERROR)}
    summary = f"{len(result.outcomes)} checks: {counts[PASS]} passed, {counts[FAIL]} failed, {counts[ERROR]} could not be evaluated\n"
    if not rows:
        return summary
    widths = [max(len(r[i]) for r in [TABLE_HEADER, *rows]) for i in range(len(TABLE_HEADER))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [TABLE_HEADER, *rows]]
    return "\n".join(lines) + "\n\n" + summary


def result_dict(result: CheckResult) -> dict[str, Any]:
    """Every outcome with its rule and findings, and the exit status."""
    return {"exit_status": result.exit_status, "outcomes": [asdict(o) for o in result.outcomes]}


def render_json(result: CheckResult) -> str:
    return json.dumps(result_dict(result), indent=1, default=str) + "\n"


def _case_text(o: Outcome) -> str:
    lines = [o.message] if o.message else []
    lines += ["  ".join(_row(f)) + (f"  {f.message}" if f.message else "") for f in o.findings]
    return "\n".join(lines)


def render_junit(result: CheckResult) -> bytes:
    """JUnit XML: one test case per rule and capture."""
    suite = ET.Element(
        "testsuite",
        name="tcpsack-analyze check",
        tests=str(len(result.outcomes)),
        failures=str(sum(o.status == FAIL for o in result.outcomes)),
        errors=str(sum(o.status == ERROR for o in result.outcomes)),
    )
    for o in result.outcomes:
        case = ET.SubElement(suite, "testcase", classname=o.capture, name=o.rule.name)
        if o.status != PASS:
            tag = "failure" if o.status == FAIL else "error"
            first = o.message or f"{len(o.findings)} of {o.checked} items: {o.rule.text}"
            node = ET.SubElement(case, tag, message=first, type=tag)
            node.text = _case_text(o)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
