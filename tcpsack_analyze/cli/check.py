"""``tcpsack-analyze check``: fail CI when a metric of the report crosses a threshold."""
from __future__ import annotations

import sys

import click

from tcpsack_analyze.cli import options


@click.command()
@click.argument("captures", nargs=-1, required=True, metavar="CAPTURE...")
@click.option("--rules", "rule_files", multiple=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="TOML rule file ([[rule]] tables with expr and name; repeatable).")
@click.option("--rule", "rule_texts", multiple=True, metavar="EXPR",
              help="Inline rule, e.g. 'sender.loss.by_trigger.rto == 0' (repeatable).")
@options.many_captures
@options.rule_results
def check(
    captures: tuple[str, ...], rule_files: tuple[str, ...], rule_texts: tuple[str, ...], bpf: str | None,
    jobs: int | None, dask: str | None, junit: str | None, force: bool, fmt: str,
) -> None:
    """Check rules on the report of each CAPTURE (files, directories or globs).

    A rule is METRIC OP VALUE [or null]: METRIC is a path in the report's JSON (docs/report.md)
    after a scope: report. (the capture), connection. (each connection), direction. (each
    direction), sender. (each direction that sent payload); e.g. sender.loss.rtd_ms.p99 <= 300.
    An aggregate such as max(sender.loss.rtd_ms.p99) <= 300 pools over all captures. A misspelt
    metric is an error. See docs/check.md.

    Exit status: 0 every rule held, 1 a rule failed, 2 a rule could not be evaluated (a null
    metric, nothing to check), a capture could not be read completely, or bad options.
    """
    from tcpsack_analyze.batch import CaptureJob
    from tcpsack_analyze.check import (
        CaptureInput,
        RuleError,
        bind,
        evaluate,
        load_rules,
        parse_rule,
    )
    from tcpsack_analyze.check.output import render_json, render_table

    if not rule_files and not rule_texts:
        raise click.UsageError("no rule: give --rules FILE or --rule EXPR")
    try:
        rules = [r for f in rule_files for r in load_rules(f)] + [parse_rule(t) for t in rule_texts]
        bound = [bind(r) for r in rules]
    except RuleError as exc:
        raise click.UsageError(str(exc)) from None
    options.refuse_overwrite(junit, force, "--junit")
    options.check_filter(bpf)
    runs = options.analyse_all(captures, CaptureJob(bpf), jobs, dask)
    for run in runs:
        if run.error is not None:
            click.echo(f"error: {run.error}", err=True)
    result = evaluate(bound, [CaptureInput(r.path, r.report_dict(), r.error) for r in runs])
    sys.stdout.write(render_table(result) if fmt == "text" else render_json(result))
    options.write_junit(junit, result)
    sys.exit(result.exit_status)
