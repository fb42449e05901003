"""Many captures: expanding directories and globs, parallel and Dask runs, the combined table."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tcpsack_analyze.batch import CaptureJob, expand, run_all
from tcpsack_analyze.progress import byte_progress, read_position

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_traces"
SMALL = ["lab_thin_stream/sender.pcap", "http_206_sack_recovery.pcap", "lab_bottleneck/sender.pcap"]


@pytest.fixture
def capture_dir(tmp_path: Path) -> Path:
    """A directory of three small captures in two levels, beside files that are not captures."""
    (tmp_path / "sub").mkdir()
    shutil.copy(SAMPLES / SMALL[0], tmp_path / "b.pcap")
    shutil.copy(SAMPLES / SMALL[1], tmp_path / "a.pcap")
    shutil.copy(SAMPLES / SMALL[2], tmp_path / "sub" / "c.pcap")
    (tmp_path / "truth.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    return tmp_path


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(["tcpsack-analyze", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_expand_directories_globs_and_missing_paths(capture_dir: Path, tmp_path_factory):
    paths, failed = expand([str(capture_dir)])
    assert [Path(p).relative_to(capture_dir).as_posix() for p in paths] == ["a.pcap", "b.pcap", "sub/c.pcap"]
    assert failed == []
    paths, _ = expand([str(capture_dir / "*.pcap"), str(capture_dir / "missing.pcap")])
    assert [Path(p).name for p in paths] == ["a.pcap", "b.pcap", "missing.pcap"]  # the missing one fails when read
    empty = tmp_path_factory.mktemp("empty")
    paths, failed = expand([str(empty), str(capture_dir / "*.pcapng")])
    assert paths == [] and [f.path for f in failed] == [str(empty), str(capture_dir / "*.pcapng")]
    assert all(f.report is None and f.error for f in failed)


def test_parallel_run_equals_serial_run(capture_dir: Path):
    paths, _ = expand([str(capture_dir)])
    serial = run_all(CaptureJob(table=True), paths, jobs=1)
    parallel = run_all(CaptureJob(table=True), paths, jobs=2)
    assert [r.path for r in parallel] == paths
    assert [r.report for r in serial] == [r.report for r in parallel]
    for s, p in zip(serial, parallel):
        pd.testing.assert_frame_equal(s.table, p.table)


def _explode(path: str) -> str:
    if path.endswith("b"):
        raise RuntimeError("boom")
    return path.upper()


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_exception_in_the_work_fails_that_path_alone(jobs: int):
    got = run_all(_explode, ["a", "b", "c"], jobs=jobs, on_error=lambda p, e: f"{p}: {e}")
    assert got == ["A", "b: boom", "C"]
    with pytest.raises(RuntimeError):
        run_all(_explode, ["a", "b"], jobs=jobs)


def _connection_counts(paths: list[str]) -> list[int]:
    """Connections per capture, from each capture's own report (analysed separately)."""
    from tcpsack_analyze import analyze

    return [len(analyze(p).report.connections) for p in paths]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_report_table_of_a_directory(capture_dir: Path, tmp_path_factory, suffix: str):
    out = tmp_path_factory.mktemp("out") / f"table{suffix}"
    r = _run("report", str(capture_dir), "--table", str(out), "--jobs", "2")
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    paths, _ = expand([str(capture_dir)])
    per_capture = df.groupby("capture", sort=False).size()
    assert list(per_capture.index) == paths
    assert list(per_capture) == [2 * n for n in _connection_counts(paths)]  # one row per connection-direction
    if suffix == ".parquet":
        return
    again = _run("report", str(capture_dir), "--table", str(out))
    assert again.returncode == 2 and "--force" in again.stderr
    assert _run("report", str(capture_dir), "--table", str(out), "--force").returncode == 0


def test_report_bad_capture_among_good_ones(capture_dir: Path):
    (capture_dir / "bad.pcap").write_bytes(b"\xd4\xc3\xb2\xa1 this is not a capture")
    r = _run("report", str(capture_dir), "--jobs", "2")
    assert r.returncode == 1  # not all read
    assert "bad.pcap" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout.count("TCP connection 0:") == 3  # the three good ones are still reported


def test_report_table_name_must_say_its_format(tmp_path: Path):
    r = _run("report", str(SAMPLES / SMALL[0]), "--table", str(tmp_path / "t.xlsx"))
    assert r.returncode == 2 and ".csv or .parquet" in r.stderr


def test_dask_run_gives_the_local_table(capture_dir: Path, tmp_path_factory):
    distributed = pytest.importorskip("distributed")
    out = tmp_path_factory.mktemp("out")
    local = _run("report", str(capture_dir), "--table", str(out / "local.csv"), "--jobs", "1")
    assert local.returncode == 0, local.stderr
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
                                  dashboard_address=None) as cluster:
        remote = _run("report", str(capture_dir), "--table", str(out / "dask.csv"), "--dask", cluster.scheduler_address)
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout
    pd.testing.assert_frame_equal(pd.read_csv(out / "local.csv"), pd.read_csv(out / "dask.csv"))


def test_dask_scheduler_unreachable_is_one_error():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    r = subprocess.run(["tcpsack-analyze", "check", str(SAMPLES / SMALL[0]), "--rule", "report.capture.complete == true",
                        "--dask", "tcp://127.0.0.1:9"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and "cannot reach the scheduler" in r.stderr and "Traceback" not in r.stderr


def test_read_position_follows_the_open_file(tmp_path: Path):
    f = tmp_path / "x.bin"
    f.write_bytes(bytes(5000))
    assert read_position(str(f)) is None  # not open
    fd = os.open(f, os.O_RDONLY)
    try:
        os.read(fd, 1234)
        assert read_position(str(f)) == 1234
    finally:
        os.close(fd)


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path: Path, capfd):
    f = tmp_path / "big.pcap"
    with open(f, "wb") as fh:
        fh.truncate(64 << 20)  # sparse: large enough for a bar
    with byte_progress(str(f)):
        pass
    assert capfd.readouterr().err == ""


def test_progress_bar_of_bytes_read_on_a_terminal(tmp_path: Path, monkeypatch):
    import fcntl
    import pty
    import select
    import struct
    import sys
    import termios
    import time

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    term = os.fdopen(slave, "w")
    monkeypatch.setattr(sys, "stderr", term)
    f = tmp_path / "big.pcap"
    with open(f, "wb") as fh:
        fh.truncate(64 << 20)  # 67.1 MB, sparse
    shown = b""
    try:
        with byte_progress(str(f)):
            fd = os.open(f, os.O_RDONLY)
            os.lseek(fd, 40 << 20, os.SEEK_SET)  # as if 41.9 MB had been read
            time.sleep(0.8)  # a few polls
            os.close(fd)
        term.flush()
        while select.select([master], [], [], 0.5)[0]:
            shown += os.read(master, 1 << 16)
    finally:
        term.close()
        os.close(master)
    assert b"41.9M/67.1M" in shown
