"""``check``: rules on the report's metrics, for CI (issue 12).

:mod:`.rules` parses rule expressions and rule files, :mod:`.metrics` finds a rule's metric in
the report's schema, :mod:`.evaluate` judges the rules on captures' reports, and :mod:`.output`
formats the result as a table, JSON or JUnit XML.
"""
from __future__ import annotations

from tcpsack_analyze.check.evaluate import (
    CaptureInput,
    CheckResult,
    Finding,
    Outcome,
    bind,
    evaluate,
)
from tcpsack_analyze.check.rules import Rule, RuleError, load_rules, parse_rule

__all__ = ["CaptureInput", "CheckResult", "Finding", "Outcome", "Rule", "RuleError", "bind", "evaluate", "load_rules", "parse_rule"]
