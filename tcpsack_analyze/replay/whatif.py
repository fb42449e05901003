"""Run sender models over one path: the closed loop's Python entry point.

:func:`replay_model` runs one model (a registered name or a
:class:`~tcpsack_analyze.models.base.SenderModel` subclass) as a sender over a
:class:`~tcpsack_analyze.replay.simulate.Path` with a loss process, and measures the run with
the capture's own loss stages (:mod:`.outcome`), except its timeouts and slow starts, which the
model knows (a capture's are the loss tracker's reading: a lone segment resent by the timer
looks like a tail loss probe to it). :func:`replay_models` runs several on the same
path and the same seed: every model meets the same sequence of fates by transmission number.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from tcpsack_analyze.loss.tracker import LossResult
from tcpsack_analyze.models.base import SenderModel, SenderOptions, model_class
from tcpsack_analyze.replay.loss import LossSpec
from tcpsack_analyze.replay.outcome import Outcome, outcome, summarize_events, track_events
from tcpsack_analyze.replay.sender import Application, Sender
from tcpsack_analyze.replay.simulate import Path, Trace, run


@dataclass(frozen=True)
class ModelReplay:
    """One model's simulated transfer: what it achieved, the run itself, and the loss tracker's
    records of it (incidents, retransmissions, episodes, as for a capture)."""

    model: str
    outcome: Outcome
    trace: Trace
    loss: LossResult


def model_name(model: str | type[SenderModel]) -> str:
    cls = model_class(model)
    return cls.name or cls.__name__


def replay_model(
    model: str | type[SenderModel],
    path: Path,
    smss: int,
    app: Application | int,
    loss: LossSpec,
    *,
    options: SenderOptions | None = None,
    seed: int = 0,
    limit_s: float = 3600.0,
    bundle: bool = True,
) -> ModelReplay:
    """Run ``model`` as the sender of ``app`` (or a bulk transfer of that many octets);
    ``bundle``: resends carry the outstanding data after them, up to SMSS (:mod:`.sender`)."""
    cls = model_class(model)
    application = app if isinstance(app, Application) else Application(app)
    sender = Sender(cls(smss, options or SenderOptions.rfc()), application, bundle=bundle)
    trace = run(sender, path, loss.make(seed), limit_s=limit_s)
    name = model_name(model)
    res = track_events(trace.events, smss)
    measured = outcome(name, trace.events, summarize_events(trace.events, smss, res))
    return ModelReplay(name, dataclasses.replace(measured, timeouts=trace.timeouts, slow_starts=1 + trace.loss_entries), trace, res)


def replay_models(
    models: Sequence[str | type[SenderModel]],
    path: Path,
    smss: int,
    app: Application | int,
    loss: LossSpec,
    *,
    options: SenderOptions | None = None,
    seed: int = 0,
    limit_s: float = 3600.0,
    bundle: bool = True,
) -> tuple[ModelReplay, ...]:
    """:func:`replay_model` for each of ``models``, same path, loss process, seed and options."""
    return tuple(replay_model(m, path, smss, app, loss, options=options, seed=seed, limit_s=limit_s, bundle=bundle) for m in models)


__all__ = ["ModelReplay", "model_name", "replay_model", "replay_models"]
