"""Many captures at once: expand directories and globs, run the per-capture work in parallel.

The per-capture work is a top-level function of one path (so it pickles by reference) that never
raises for a bad capture: it returns the error in its result, so one bad file among many is
reported and the others go on (issue 12). :func:`run_all` runs it in this process (one job),
in a ``concurrent.futures`` process pool (``jobs`` workers; memory is bounded by the workers,
each holding one capture's state), or on a Dask cluster (``dask.distributed``, the same function
shipped to the workers, which must have ``tcpsack_analyze`` installed). Results come back in the
order of the paths, whichever way they were computed, so the outputs are identical.

A progress bar (tqdm, on stderr) is drawn only when stderr is a terminal.
"""
from __future__ import annotations

import functools
import glob
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tcpsack_analyze.errors import CaptureError
from tcpsack_analyze.progress import byte_progress

if TYPE_CHECKING:
    import pandas as pd

    from tcpsack_analyze.report.model import CaptureReport

# What a directory contributes: files whose names end so (gzip-compressed ones too).
CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".dmp")
R = TypeVar("R")


class PathError(ValueError):
    """The captures cannot be dispatched (e.g. the Dask scheduler cannot be reached)."""


def _is_capture(path: Path) -> bool:
    name = path.name.lower().removesuffix(".gz")
    return path.is_file() and name.endswith(CAPTURE_SUFFIXES)


def expand(args: Iterable[str]) -> tuple[list[str], list[CaptureRun]]:
    """The capture files named by ``args``, in order: a directory as the captures under it
    (recursively, sorted), a glob as its sorted matches, anything else as given (a file, ``-``
    for stdin, or a missing path, whose error the per-capture work reports). An empty directory
    or a glob that matches nothing comes back as a failed :class:`CaptureRun`, so it is reported
    like an unreadable capture and the others go on."""
    paths: list[str] = []
    failed: list[CaptureRun] = []
    for arg in args:
        if os.path.isdir(arg):
            found = sorted(str(p) for p in Path(arg).rglob("*") if _is_capture(p))
            paths += found
            if not found:
                failed.append(CaptureRun(arg, None, error=f"{arg}: no capture files in the directory (looked for {', '.join(CAPTURE_SUFFIXES)}, maybe .gz)"))
        elif glob.has_magic(arg) and not os.path.exists(arg):
            found = sorted(p for p in glob.glob(arg, recursive=True) if os.path.isfile(p))
            paths += found
            if not found:
                failed.append(CaptureRun(arg, None, error=f"{arg}: no file matches"))
        else:
            paths.append(arg)
    return paths, failed


def _progress(total: int, unit: str) -> Any:
    """A tqdm bar on a terminal, else None (nothing drawn when stderr is piped)."""
    if total <= 1 or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, file=sys.stderr, leave=False)


def run_all(
    fn: Callable[[str], R],
    paths: Sequence[str],
    *,
    jobs: int | None = None,
    dask: str | None = None,
    on_error: Callable[[str, BaseException], R] | None = None,
) -> list[R]:
    """``[fn(p) for p in paths]``, computed locally (``jobs`` processes, default one per core)
    or on the Dask scheduler at address ``dask``; results in the order of ``paths``.

    ``fn`` reports a bad capture in its result; what it cannot catch (a worker that died, a
    Dask worker without the package) becomes ``on_error(path, exception)`` for that path alone,
    so the other captures still come back (without ``on_error`` the exception propagates)."""
    jobs = min(jobs or os.cpu_count() or 1, len(paths))
    if dask is not None:
        pending = _on_dask(fn, paths, dask)
    elif jobs <= 1 or "-" in paths:  # stdin cannot be read by another process
        pending = (functools.partial(fn, p) for p in paths)
    else:
        pending = _in_pool(fn, paths, jobs)
    bar = _progress(len(paths), "capture")
    results: list[R] = []
    try:
        for path, result in zip(paths, pending):
            try:
                results.append(result())
            except Exception as exc:
                if on_error is None:
                    raise
                results.append(on_error(path, exc))
            if bar is not None:
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    return results


def _in_pool(fn: Callable[[str], R], paths: Sequence[str], jobs: int) -> Iterator[Callable[[], R]]:
    """Each path's result getter, in order; a worker holds one capture at a time."""
    from concurrent.futures import ProcessPoolExecutor  # here: multiprocessing costs a one-capture run ~10 ms to import

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(fn, p) for p in paths]
        for f in futures:
            yield f.result


def _on_dask(fn: Callable[[str], R], paths: Sequence[str], address: str) -> Iterator[Callable[[], R]]:
    try:
        from distributed import Client
    except ImportError:
        raise PathError("--dask needs dask.distributed: pip install 'dask[distributed]'") from None
    try:
        client = Client(address, set_as_default=False)  # timeout: dask's distributed.comm.timeouts.connect
    except (OSError, TimeoutError, ValueError) as exc:
        raise PathError(f"--dask {address}: cannot reach the scheduler: {exc}") from None
    return _gather(client, fn, paths)


def _gather(client: Any, fn: Callable[[str], R], paths: Sequence[str]) -> Iterator[Callable[[], R]]:
    with client:
        for f in client.map(fn, list(paths), pure=False):
            yield f.result


@dataclass(frozen=True)
class CaptureRun:
    """What the per-capture work returns: the report (frozen dataclasses, picklable), the
    per-connection-direction table (when asked for), or the one-line error that kept the capture
    from being read."""

    path: str
    report: CaptureReport | None
    table: pd.DataFrame | None = None  # Analysis.connections_df() with a leading ``capture`` column
    error: str | None = None

    def report_dict(self) -> dict[str, Any] | None:
        """The report as ``report --format json`` gives it (what rules and comparisons read)."""
        if self.report is None:
            return None
        from tcpsack_analyze.report.render import render_json

        return dict(json.loads(render_json(self.report)))


@dataclass(frozen=True)
class CaptureJob:
    """The per-capture work, a picklable callable: analyse ``path`` and keep what is asked."""

    bpf: str | None = None
    table: bool = False
    progress: bool = False  # a bar of bytes read (one capture read in this process, on a terminal)

    @staticmethod
    def failed(path: str, exc: BaseException) -> CaptureRun:
        """The run of a capture whose work did not come back (worker died, cluster error)."""
        return CaptureRun(path, None, error=f"{path}: not analysed: {type(exc).__name__}: {exc}")

    def __call__(self, path: str) -> CaptureRun:
        from tcpsack_analyze.analysis import analyze
        from tcpsack_analyze.reader.bpf import FilterError

        try:
            with byte_progress(path, enabled=self.progress):
                result = analyze(path, self.bpf)
        except (CaptureError, FilterError) as exc:
            return CaptureRun(path, None, error=str(exc))
        df = None
        if self.table:
            df = result.connections_df()
            df.insert(0, "capture", path)
        return CaptureRun(path, result.report, df)
