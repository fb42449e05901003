"""Options shared by the commands that read many captures (``report``, ``check``, ``compare``)."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from tcpsack_analyze.batch import CaptureJob, CaptureRun
    from tcpsack_analyze.check.evaluate import CheckResult

F = TypeVar("F", bound=Callable[..., Any])


def many_captures(fn: F) -> F:
    """``--filter``, ``--jobs`` and ``--dask``: how the captures are read and where."""
    fn = click.option(
        "--dask", "dask", metavar="ADDRESS",
        help="Run the per-capture work on this Dask scheduler (e.g. tcp://10.0.0.1:8786); its "
        "workers need tcpsack-analyze installed and the capture paths readable.",
    )(fn)
    fn = click.option(
        "--jobs", "-j", type=click.IntRange(min=1), metavar="N",
        help="Captures analysed in parallel (default: one per core).",
    )(fn)
    fn = click.option("--filter", "bpf", metavar="EXPR", help="BPF filter in tcpdump syntax, applied by libpcap.")(fn)
    return fn


def rule_results(fn: F) -> F:
    """``--junit``, ``--force`` and ``--format``: where the results of rules go."""
    fn = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)(fn)
    fn = click.option("--force", is_flag=True, help="Overwrite the --junit file if it exists.")(fn)
    fn = click.option("--junit", metavar="FILE", help="Also write JUnit XML: one test case per rule and capture.")(fn)
    return fn


def write_junit(path: str | None, result: CheckResult) -> None:
    """The rules' results as JUnit XML (its existence was refused before any work, without --force)."""
    if path is not None:
        from tcpsack_analyze.check.output import render_junit

        with open(path, "wb") as fh:
            fh.write(render_junit(result))


def check_filter(bpf: str | None) -> None:
    """A bad filter is a usage error (exit 2), found before any capture is read."""
    if bpf:
        from tcpsack_analyze.reader.bpf import BpfFilter, FilterError

        try:
            BpfFilter(bpf)
        except FilterError as exc:
            raise click.UsageError(str(exc)) from None


def refuse_overwrite(path: str | None, force: bool, option: str) -> None:
    """No output file is overwritten silently: an existing one needs ``--force``."""
    if path is not None and os.path.exists(path) and not force:
        raise click.UsageError(f"{option} {path}: the file exists; use --force to overwrite it")


def analyse_all(
    captures: Sequence[str], job: CaptureJob, jobs: int | None, dask: str | None
) -> list[CaptureRun]:
    """Every capture named (directories and globs expanded) through ``job``, in order; an
    argument naming no capture comes back as a failed run, after the others."""
    from tcpsack_analyze.batch import PathError, expand, run_all

    paths, failed = expand(captures)
    if len(paths) == 1:
        job = replace(job, progress=True)  # one capture, read in this process: a bar of bytes
    try:
        return (run_all(job, paths, jobs=jobs, dask=dask, on_error=job.failed) if paths else []) + failed
    except PathError as exc:
        raise click.UsageError(str(exc)) from None
