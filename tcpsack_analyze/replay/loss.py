"""Loss processes of the closed-loop replay: which data transmissions the path drops.

The lab's seeded loss models (:mod:`tcpsack_analyze.lab.lossmodels`: random, bursty with a fixed
burst length as paper 000, Gilbert-Elliott) are the one implementation of each process; this
module adds the replay of a capture's own losses and the command line's spelling:

* ``observed``: the capture's lost transmissions (the loss tracker's ``LostTransmission``
  records, DOMAIN.md section 7) replayed *by position in the data stream*: a simulated segment
  is lost on its n-th transmission when the capture lost the n-th transmission of most of its
  octets (n = 0 the original, 1 the first resend, ...). So a model meets the same holes at the
  same octets, and a lost retransmission is lost again, whatever its timing; a model that
  resends more often than the sender did meets no more losses than the capture showed.
* ``ge``: the Gilbert-Elliott chain fitted to the capture's lost flags (one per data
  transmission in send order) by
  :func:`~tcpsack_analyze.loss.patterns.fit_gilbert_elliott` (the report's fit).
* ``random:P``: independent loss with probability P (paper 000's "isolated" loss).
* ``bursty:P',b``: loss events with probability P' per transmission, each dropping b in a row
  (paper 000's bursty loss); ``bursty:P':b`` (the lab's spelling) is accepted too.

A :class:`LossSpec` is a recipe; :meth:`LossSpec.make` builds a fresh model for a seed, so every
sender model of one replay meets the same sequence of fates ("common random numbers"), and a
replay is the same for the same seed.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tcpsack_analyze.lab.lossmodels import BurstyLoss, GilbertElliott, LossModel, NoLoss, RandomLoss
from tcpsack_analyze.loss.patterns import GilbertElliott as FittedGE
from tcpsack_analyze.rangeset import RangeSet


class ObservedLoss(LossModel):
    """The capture's lost transmissions, by octet and transmission number (module docstring).

    ``lost`` holds ``(start, end, n)``: the n-th transmission of ``[start, end)`` was lost.
    """

    name = "observed"

    def __init__(self, lost: Sequence[tuple[int, int, int]], seed: int = 0) -> None:
        super().__init__(seed)
        self.lost = tuple(lost)
        self._ranges: dict[int, RangeSet] = {}
        for start, end, n in self.lost:
            self._ranges.setdefault(n, RangeSet()).add(start, end)
        self._sent: RangeSet = RangeSet()  # octets sent once at least
        self._copies: dict[int, int] = {}  # segment start -> transmissions so far

    def drop_segment(self, start: int, end: int) -> bool:
        """Whether this transmission of ``[start, end)`` is lost."""
        n = self._copies.get(start, 0)
        self._copies[start] = n + 1
        lost = self._ranges.get(n)
        return lost is not None and 2 * lost.overlap(start, end) > end - start

    def drop(self) -> bool:
        raise TypeError("observed losses are keyed by octets: call drop_segment(start, end)")

    def params(self) -> dict[str, float]:
        return {"lost": float(len(self.lost))}

    def expected_loss_rate(self) -> float:
        return 0.0


def segment_dropper(model: LossModel) -> Callable[[int, int], bool]:
    """The model as ``drop(start, end)``: the observed losses look at the octets, the others draw
    once per transmission in send order."""
    if isinstance(model, ObservedLoss):
        return model.drop_segment
    return lambda start, end: model.drop()


def lost_copies(starts: np.ndarray, ends: np.ndarray, originals: np.ndarray, first: int) -> tuple[tuple[int, int, int], ...]:
    """``(start, end, n)`` of a capture's lost transmissions, in octets counted from ``first``
    (the simulated sender's first octet is 1): ``n`` is 0 for a lost original, and one more
    than the lost copies of the same octets before it otherwise (records in time order)."""
    out = []
    seen: dict[int, int] = {}
    for s, e, o in zip(starts.tolist(), ends.tolist(), originals.tolist()):
        n = 0 if o else max(1, seen.get(s, 0))
        seen[s] = n + 1
        out.append((s - first + 1, e - first + 1, n))
    return tuple(out)


@dataclass(frozen=True)
class LossSpec:
    """How the path loses data: ``kind`` (none, observed, ge, random, bursty) and its parameters."""

    kind: str
    p: float = 0.0  # random: P; bursty: P'; ge: good -> bad
    r: float = 1.0  # ge: bad -> good
    burst: int = 1  # bursty: b
    loss_good: float = 0.0  # ge
    loss_bad: float = 1.0  # ge
    lost: tuple[tuple[int, int, int], ...] = ()  # observed: (start, end, n), see ObservedLoss

    def make(self, seed: int) -> LossModel:
        """A fresh seeded loss model (its state starts over)."""
        if self.kind == "observed":
            return ObservedLoss(self.lost, seed)
        if self.kind == "random":
            return RandomLoss(self.p, seed)
        if self.kind == "bursty":
            return BurstyLoss(self.p, self.burst, seed)
        if self.kind == "ge":
            return GilbertElliott(self.p, self.r, seed, self.loss_good, self.loss_bad)
        return NoLoss(seed)

    def describe(self) -> str:
        if self.kind == "observed":
            return f"observed ({len(self.lost)} lost transmissions, replayed by position in the data stream)"
        if self.kind == "random":
            return f"random, P = {self.p:g}"
        if self.kind == "bursty":
            return f"bursty, P' = {self.p:g}, b = {self.burst}"
        if self.kind == "ge":
            return (f"Gilbert-Elliott fitted to the capture: p = {self.p:.4g}, r = {self.r:.4g}, "
                    f"loss {self.loss_good:.3g} (good) / {self.loss_bad:.3g} (bad)")
        return "none"

    @classmethod
    def observed(cls, lost: Sequence[tuple[int, int, int]]) -> LossSpec:
        """The capture's lost transmissions as ``(start, end, n)`` (:func:`lost_copies`)."""
        return cls("observed", lost=tuple(lost))

    @classmethod
    def fitted(cls, fit: FittedGE | None) -> LossSpec:
        """The Gilbert-Elliott fit of a direction (None: no losses to fit, so none)."""
        if fit is None or fit.r <= 0:
            return cls("none")
        return cls("ge", p=fit.p, r=fit.r, loss_good=fit.loss_good, loss_bad=fit.loss_bad)


def parse(spec: str) -> LossSpec:
    """The command line's ``observed | ge | none | random:P | bursty:P',b``. ``observed`` and ``ge``
    come back without their data (the caller fills them from the capture). Raises ValueError
    with a one-line message."""
    kind, _, arg = spec.strip().partition(":")
    if kind in ("observed", "ge", "none") and not arg:
        return LossSpec(kind)
    try:
        if kind == "random" and arg:
            p = float(arg)
            RandomLoss(p, 0)  # the lab's model checks the parameter
            return LossSpec("random", p=p)
        if kind == "bursty" and arg:
            p_text, _, b_text = arg.replace(":", ",").partition(",")
            p, b = float(p_text), float(b_text)
            if not b.is_integer():
                raise ValueError(f"the burst length b must be a whole number, not {b_text}")
            BurstyLoss(p, int(b), 0)
            return LossSpec("bursty", p=p, burst=int(b))
    except ValueError as exc:
        raise ValueError(f"loss {spec!r}: {exc}") from None
    raise ValueError(f"unknown loss process {spec!r}: use observed, ge, none, random:P or bursty:P',b")


__all__ = ["LossSpec", "ObservedLoss", "lost_copies", "parse", "segment_dropper"]
