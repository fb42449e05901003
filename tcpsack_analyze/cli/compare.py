"""``tcpsack-analyze compare``: captures or flows side by side; baseline runs against new runs."""
from __future__ import annotations

import sys

import click

from tcpsack_analyze.cli import options


@click.command()
@click.argument("captures", nargs=-1, metavar="[CAPTURE...]")
@click.option("--flows", is_flag=True, help="Compare the flows (directions that sent data) of the captures, not the captures.")
@click.option("--baseline", "baseline", multiple=True, metavar="CAPTURE",
              help="A baseline run (repeatable; a directory or glob counts as all its captures).")
@click.option("--new", "new", multiple=True, metavar="CAPTURE", help="A new run (repeatable, as --baseline).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap resampling.")
@click.option("--resamples", type=click.IntRange(min=100), default=10_000, show_default=True, help="Bootstrap resamples.")
@click.option("--rule", "rule_texts", multiple=True, metavar="EXPR",
              help="Rule on a compared metric, e.g. 'throughput_ratio >= 0.9' or 'timeouts_moved <= 0' (repeatable).")
@options.many_captures
@options.rule_results
def compare(
    captures: tuple[str, ...], flows: bool, baseline: tuple[str, ...], new: tuple[str, ...], seed: int, resamples: int,
    rule_texts: tuple[str, ...], bpf: str | None, jobs: int | None, dask: str | None, junit: str | None, force: bool, fmt: str,
) -> None:
    """Compare captures side by side, the first as the baseline: throughput, retransmissions,
    timeouts, RTD, their ratio/changes against the baseline, and Jain's fairness index across
    them (--flows: across the flows). With --baseline and --new (several runs each), say per
    metric whether the new runs moved beyond run-to-run noise (bootstrap confidence interval of
    the difference of medians of per-flow samples; deterministic for a --seed).

    Exit status: 0 every --rule held (or none given), 1 a rule failed, 2 a rule could not be
    evaluated, a capture could not be read completely, or bad options.
    """
    from tcpsack_analyze import compare as cmp
    from tcpsack_analyze.batch import CaptureJob, CaptureRun
    from tcpsack_analyze.check.output import render_table
    from tcpsack_analyze.check.rules import RuleError, parse_rules
    from tcpsack_analyze.compare.output import (
        render_comparison,
        render_json,
        render_noise,
    )
    from tcpsack_analyze.compare.rules import (
        NOISE_NAMES,
        SIDE_BY_SIDE_NAMES,
        bind,
        judge_comparison,
        judge_noise,
    )

    noise = bool(baseline or new)
    if noise and (captures or not baseline or not new):
        raise click.UsageError("give either CAPTURE... or both --baseline and --new, not a mix")
    if not noise and not captures:
        raise click.UsageError("nothing to compare: give CAPTURE... or --baseline/--new")
    try:
        rules = bind(parse_rules(rule_texts), NOISE_NAMES if noise else SIDE_BY_SIDE_NAMES)
    except RuleError as exc:
        raise click.UsageError(str(exc)) from None
    options.refuse_overwrite(junit, force, "--junit")
    options.check_filter(bpf)
    groups = [options.analyse_all(g, CaptureJob(bpf), jobs, dask) for g in ((baseline, new) if noise else (captures,))]
    runs = [r for g in groups for r in g]
    read_status = 0
    for run in runs:
        if run.report is None:
            click.echo(f"error: {run.error}", err=True)
            read_status = 2
        elif not run.report.capture.complete:
            click.echo(f"warning: {run.path}: read only in part: {run.report.capture.error}", err=True)
            read_status = 2

    def figures(part: list[CaptureRun], per_flow: bool) -> list[cmp.Figures]:
        ok = [(r.path, d) for r in part if (d := r.report_dict()) is not None]
        if per_flow:
            return [f for path, d in ok for f in cmp.flow_figures(path, d)]
        return [cmp.capture_figures(path, d) for path, d in ok]

    result: cmp.Comparison | cmp.NoiseTest
    if noise:
        base, fresh = groups
        result = cmp.noise_test(figures(base, True), figures(fresh, True), baseline_captures=len(base),
                                new_captures=len(fresh), resamples=resamples, seed=seed)
        judged = judge_noise(rules, result)
        text = render_noise(result)
    else:
        items = figures(runs, flows)
        if not items:
            click.echo("error: nothing to compare: no capture could be read" + (" or has a flow" if flows else ""), err=True)
            sys.exit(2)
        if len(items) < 2:
            what = "flow (a direction that sent data)" if flows else "capture that could be read"
            hint = "" if flows else "; --flows compares the flows of one capture"
            click.echo(f"error: nothing to compare: only one {what}{hint}", err=True)
            sys.exit(2)
        result = cmp.side_by_side(items)
        judged = judge_comparison(rules, result)
        text = render_comparison(result)
    if fmt == "json":
        sys.stdout.write(render_json(result, judged if rules else None))
    else:
        sys.stdout.write(text + ("\n" + render_table(judged) if rules else ""))
    options.write_junit(junit, judged)
    sys.exit(max(read_status, judged.exit_status))
