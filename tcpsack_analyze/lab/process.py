"""Child processes of a lab run: started in their own session, waited for, always stopped.

Each helper (emulator, tcpdump, bpftrace, traffic) is started with its output in files (a
full pipe would stall it) and in a new session, so the terminal's Ctrl-C reaches only the
runner, which then stops its children in order (tcpdump needs SIGINT to flush its capture)
and kills any that do not exit.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tcpsack_analyze.lab.topology import LabError

__all__ = ["Started", "start"]

_READY_TIMEOUT = 30.0
_STOP_TIMEOUT = 10.0


@dataclass
class Started:
    """A running child and the files that collect its stdout and stderr."""

    name: str
    popen: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path

    def running(self) -> bool:
        return self.popen.poll() is None

    def read_stdout(self) -> str:
        return self.stdout.read_text(errors="replace")

    def read_stderr(self) -> str:
        return self.stderr.read_text(errors="replace")

    def wait(self, timeout: float) -> int:
        """Wait for a normal exit; a :class:`LabError` (with its stderr) if it overruns or fails."""
        try:
            code = self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise LabError(f"{self.name} did not finish within {timeout:g} s") from None
        if code != 0:
            raise LabError(f"{self.name} exited with {code}: {self.read_stderr().strip()[-2000:]}")
        return code

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> str:
        """Send ``sig`` to its process group, SIGKILL it if it lingers; return its stderr."""
        if self.running():
            try:
                os.killpg(self.popen.pid, sig)
                self.popen.wait(_STOP_TIMEOUT)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait()
        return self.read_stderr()


def start(
    argv: list[str],
    name: str,
    logdir: Path,
    ready_on_stdout: str | None = None,
    ready_on_stderr: str | None = None,
    env: dict[str, str] | None = None,
) -> Started:
    """Start ``argv`` with its output in ``logdir``; if a ready text is given, return only once
    it has been printed."""
    slug = "".join(c if c.isalnum() else "_" for c in name)
    out, err = logdir / f"{slug}.stdout", logdir / f"{slug}.stderr"
    with out.open("wb") as fo, err.open("wb") as fe:
        popen = subprocess.Popen(argv, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL,
                                 start_new_session=True, env=env)
    child = Started(name, popen, out, err)
    deadline = time.monotonic() + _READY_TIMEOUT
    while ready_on_stdout is not None and ready_on_stdout not in child.read_stdout() or (
        ready_on_stderr is not None and ready_on_stderr not in child.read_stderr()
    ):
        if not child.running():
            raise LabError(f"{name} exited before it was ready: {child.read_stderr().strip()[-2000:]}")
        if time.monotonic() > deadline:
            child.stop(signal.SIGKILL)
            raise LabError(f"{name} not ready after {_READY_TIMEOUT:g} s")
        time.sleep(0.02)
    return child
