"""Golden outputs of every capture in tests/data and sample_traces and of a 100k-packet benchmark capture, frozen before a refactor.

One gzip-compressed JSON file per capture in ``tests/golden/``: the ``report --format json``
document, the ``details --format json`` regions, and every loss table of
:class:`~tcpsack_analyze.analysis.Analysis` (``*_df()``) as column lists. The test
(``test_golden.py``) recomputes them and compares; a refactor that must keep the numbers keeps
this file's output byte-for-byte, and a deliberate change regenerates the files and lists the
difference in its commit (``python3 tests/golden_outputs.py --write``).

The benchmark capture (issue 17: a capture like the benchmarks', 20 concurrent bulk transfers with
1% loss, sequence wraps, fast and RTO retransmissions) is not committed (10 MB): it is generated
by ``benchmarks/gen_synthetic.py`` (:func:`benchmark_capture`) and named :data:`BENCHMARK` in its
golden file. Its digest is checked, so that a change of the generator (or of numpy's random
streams) is told apart from a change of the analysis.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
GOLDEN = TESTS / "golden"
TABLES = ("retransmissions_df", "episodes_df", "incidents_df", "lost_df", "fills_df", "bursts_df")
#: The benchmark capture's name in its golden file, the generator's arguments (packets,
#: connections, seed, loss) and the SHA-256 of the pcap they make.
BENCHMARK = "benchmarks/synthetic_p100000_c20_s1_l0.01.pcap"
BENCHMARK_ARGS = (100_000, 20, 1, 0.01)
BENCHMARK_SHA256 = "68a385f0d2853120d19b4b94f1374c38fb2a479f8d2c096b39334e2b7d2ae7a5"


def captures() -> list[Path]:
    """Every capture the golden files cover, in a stable order."""
    found = [p.resolve() for base in (TESTS / "data", ROOT / "sample_traces") for p in base.rglob("*") if p.suffix in (".pcap", ".pcapng")]
    return sorted(found, key=lambda p: p.relative_to(ROOT).as_posix())


def benchmark_capture(directory: Path) -> Path:
    """Generate the benchmark capture in ``directory``; raise if it is not the one frozen."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import gen_synthetic

    path = directory / Path(BENCHMARK).name
    gen_synthetic.generate(path, *BENCHMARK_ARGS)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != BENCHMARK_SHA256:
        raise RuntimeError(f"benchmarks/gen_synthetic.py made a different capture (SHA-256 {digest}, "
                           f"not {BENCHMARK_SHA256}): the generator or numpy's random streams changed")
    return path


def label(path: Path) -> str:
    """How the golden files name a capture: its path in the repository (BENCHMARK for the generated one)."""
    return BENCHMARK if path.name == Path(BENCHMARK).name else path.relative_to(ROOT).as_posix()


def golden_name(path: Path) -> str:
    return label(path).replace("/", "__") + ".json.gz"


def _plain(v: Any) -> Any:
    """A JSON-safe value: NA/NaN as None, numpy scalars as Python ones."""
    if v is None:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    try:
        import pandas as pd

        if v is pd.NA:
            return None
    except ImportError:  # pragma: no cover
        pass
    return v


def outputs(path: Path) -> dict[str, Any]:
    """What the golden file of ``path`` holds, computed with the current code."""
    from tcpsack_analyze.analysis import analyze
    from tcpsack_analyze.loss.regions import find_regions, region_dicts
    from tcpsack_analyze.report.render import render_json

    a = analyze(str(path))
    out: dict[str, Any] = {"report": json.loads(render_json(a.report))}
    out["details"] = region_dicts(find_regions(str(path), a))
    tables = {}
    for name in TABLES:
        df = getattr(a, name)()
        tables[name] = {c: [_plain(v) for v in df[c].tolist()] for c in df.columns}
    out["tables"] = tables
    return out


def encode(path: Path, doc: dict[str, Any]) -> bytes:
    """The golden bytes: sorted keys, and the capture named by its path in the repository."""
    text = json.dumps(doc, sort_keys=True, indent=0, default=str)
    return text.replace(json.dumps(str(path))[1:-1], label(path)).encode()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="(re)write the golden files")
    ap.add_argument("paths", nargs="*", help=f"only these captures ({BENCHMARK}: the generated one)")
    args = ap.parse_args()
    GOLDEN.mkdir(exist_ok=True)
    scratch = tempfile.TemporaryDirectory()
    todo = [benchmark_capture(Path(scratch.name)) if p == BENCHMARK else Path(p).resolve() for p in args.paths]
    for path in todo or [*captures(), benchmark_capture(Path(scratch.name))]:
        target = GOLDEN / golden_name(path)
        data = encode(path, outputs(path))
        if args.write:
            target.write_bytes(gzip.compress(data, mtime=0))
            print(f"wrote {target.name} ({len(data)} bytes)")
        else:
            same = target.exists() and gzip.decompress(target.read_bytes()) == data
            print(f"{'same' if same else 'DIFFERENT'} {label(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
