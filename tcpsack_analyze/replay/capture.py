"""Replay a capture: observed vs each sender model over the path fitted from it (``replay``).

For every direction with data, :func:`replay_capture` fits a path (:mod:`.path`), picks the loss
process (the observed losses by position, the Gilbert-Elliott fit of the report, or a given
random or bursty one, :mod:`.loss`), runs each model over it for the same octets
(:mod:`.whatif`), and sets the observed transfer beside them, measured by the same loss stages
(:mod:`.outcome`). A direction where nothing can run says why (no data, no ACKs: a one-way
capture, no RTT sample).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from tcpsack_analyze.events import Dir, EventBatch, Placement
from tcpsack_analyze.loss.tracker import LossResult
from tcpsack_analyze.models.base import MODELS, SenderModel, SenderOptions
from tcpsack_analyze.replay.loss import LossSpec, lost_copies
from tcpsack_analyze.replay.outcome import Outcome, outcome
from tcpsack_analyze.replay.path import PathFit, fit_path
from tcpsack_analyze.replay.sender import Application
from tcpsack_analyze.replay.whatif import ModelReplay, model_name, replay_models

if TYPE_CHECKING:
    import pandas as pd

APPS = ("bulk", "observed")


@dataclass(frozen=True)
class DirectionReplay:
    """One direction: its fitted path, loss process, the observed transfer and each model's."""

    conn: int
    direction: str
    vantage: str
    status: str  # "ok", or why nothing could run
    fit: PathFit | None
    loss: str  # the loss process, in words
    observed: Outcome | None
    runs: tuple[ModelReplay, ...]
    observed_loss: LossResult | None = None  # the capture's loss records of this direction

    @property
    def outcomes(self) -> tuple[Outcome, ...]:
        """The observed transfer first, then each model's."""
        head = (self.observed,) if self.observed is not None else ()
        return head + tuple(r.outcome for r in self.runs)


@dataclass(frozen=True)
class CaptureReplay:
    """The replay of every direction of a capture (:func:`replay_capture`)."""

    path: str
    models: tuple[str, ...]
    loss: str  # as asked: observed, ge, none, random:P, bursty:P',b
    seed: int
    directions: tuple[DirectionReplay, ...]
    complete: bool
    warnings: tuple[str, ...]

    def frame(self) -> pd.DataFrame:
        """One row per direction and transfer (``observed``, then each model): every
        :class:`~tcpsack_analyze.replay.outcome.Outcome` field."""
        import pandas as pd

        columns = ["conn", "direction", *Outcome.__dataclass_fields__]
        rows = [{"conn": d.conn, "direction": d.direction, **asdict(o)} for d in self.directions for o in d.outcomes]
        return pd.DataFrame(rows, columns=columns)

    def incidents_df(self) -> pd.DataFrame:
        """One row per loss incident (a segment that needed repair) per direction and transfer
        (``observed``, then each model): its octets, retransmissions, and recovery time, first
        transmission to the ACK that covered it (``recovery_ms``; DOMAIN.md section 5)."""
        import pandas as pd

        columns = ["conn", "direction", "label", "start", "end", "first_s", "retransmissions", "lost_transmissions",
                   "recovery_ms"]
        rows = []
        for d in self.directions:
            labelled = ([("observed", d.observed_loss)] if d.observed_loss is not None else []) + [(r.model, r.loss) for r in d.runs]
            for label, res in labelled:
                for inc in res.incidents:
                    if not inc.lost:
                        continue
                    latency = None if inc.covered_ns is None else (inc.covered_ns - inc.first_ns) / 1e6
                    rows.append((d.conn, d.direction, label, inc.start, inc.end, inc.first_ns / 1e9, inc.retransmissions,
                                 inc.lost_transmissions, latency))
        return pd.DataFrame(rows, columns=columns)


def observed_app(events: EventBatch) -> Application:
    """The application as the capture shows it: by each time, the octets the sender had first
    sent (a lower bound of what it had written; for a bulk sender it is its own pace)."""
    new = events.is_data & (events.placement == Placement.NEW)
    t = events.time_ns[new] - int(events.time_ns[new][0])
    high = np.maximum.accumulate(events.end[new]) - int(events.start[new].min())
    keep = np.append(t[1:] != t[:-1], True)  # the last of the sends at one instant
    return Application(int(high[-1]), times_ns=tuple(t[keep].tolist()), written=tuple(high[keep].tolist()))


def replay_capture(
    capture: str,
    models: Sequence[str | type[SenderModel]] | None = None,
    loss: str | LossSpec = "observed",
    *,
    options: SenderOptions | None = None,
    seed: int = 0,
    app: str = "bulk",
    conn: Sequence[int] | None = None,
    filter: str | None = None,  # noqa: A002 - the name users expect
    delack_ms: float | None = None,
    limit_s: float = 3600.0,
) -> CaptureReplay:
    """Replay every direction (of the connections ``conn``) of ``capture`` with ``models`` (all
    registered by default; names or SenderModel subclasses) and the RFCs' options by default.

    ``loss``: ``observed``, ``ge``, ``none`` or a :class:`LossSpec` (``random``/``bursty``; see
    :func:`~tcpsack_analyze.replay.loss.parse`). ``app``: ``bulk`` (all the data at once) or
    ``observed`` (the sender's observed pace of new data as the application's writes: for thin
    or application-limited streams). Raises CaptureError when nothing could be read.
    """
    from tcpsack_analyze.models.infer import selected, sender_mss
    from tcpsack_analyze.replay.loss import parse

    if app not in APPS:
        raise ValueError(f"app must be one of {', '.join(APPS)}, not {app!r}")
    spec = parse(loss) if isinstance(loss, str) else loss
    chosen = list(models) if models else sorted(MODELS)
    analysis, conns, streams, facts = selected(capture, conn, filter)
    report = analysis.report
    out = []
    for c in conns:
        for d, peer in ((c.a2b, c.b2a), (c.b2a, c.a2b)):
            ev = streams.get((c.id, d.name), EventBatch.empty())
            smss = sender_mss(ev, d.mss)
            turnaround = facts[c.id][Dir.parse(d.name)].turnaround_ns if c.id in facts else None
            mins = [s.min for s in (d.rtt_ms, d.rtt_ts_ms) if s.min is not None]
            high = d.rtt_ms.p90 if d.rtt_ms.count else d.rtt_ts_ms.p90
            fit = fit_path(ev, smss, rtt_min_ms=min(mins, default=None), rtt_high_ms=high, turnaround_ns=turnaround,
                           near_sender=d.vantage == "near sender", delayed_acks=d.loss.delayed_acks,
                           window=peer.window_max, delack_ms=delack_ms)
            if isinstance(fit, str):
                out.append(DirectionReplay(c.id, d.name, d.vantage, fit, None, "", None, ()))
                continue
            res = analysis.loss.get((c.id, d.name))
            if spec.kind == "observed":
                lost = res.lost_table if res is not None else None
                first = int(ev.start[ev.is_data].min())
                dir_spec = LossSpec.observed(() if lost is None or not len(lost) else lost_copies(
                    lost.ints("start")[0], lost.ints("end")[0], np.asarray(lost.column("original"), bool), first))
            elif spec.kind == "ge":
                dir_spec = LossSpec.fitted(d.loss.pattern.gilbert_elliott)
            else:
                dir_spec = spec
            if dir_spec.kind == "observed" and fit.path.queue is not None:
                fit = dataclasses.replace(fit, path=dataclasses.replace(fit.path, queue=None), notes=fit.notes + (
                    "the queue delays but drops nothing: the observed losses include its drops",))
            application = observed_app(ev) if app == "observed" else Application(fit.octets)
            runs = replay_models(chosen, fit.path, smss, application, dir_spec, options=options, seed=seed, limit_s=limit_s)
            out.append(DirectionReplay(c.id, d.name, d.vantage, "ok", fit, dir_spec.describe(), outcome("observed", ev, d.loss), runs, res))
    names = tuple(model_name(m) for m in chosen)
    label = loss if isinstance(loss, str) else loss.kind
    return CaptureReplay(capture, names, label, seed, tuple(out), report.capture.complete, tuple(report.capture.warnings))


__all__ = ["APPS", "CaptureReplay", "DirectionReplay", "observed_app", "replay_capture"]
