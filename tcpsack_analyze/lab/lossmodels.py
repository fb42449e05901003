"""Seeded packet loss models for the lab's link emulator.

Each model answers one question per candidate packet, in order: drop it or not? The emulator
asks only for TCP segments that carry data (see :mod:`tcpsack_analyze.lab.link`), so "packet"
below means "data segment in this direction".

Models (all seeded, so a run is reproducible from its parameters):

- ``none``: never drops.
- ``random:P``: independent (Bernoulli) loss with probability P, netem's ``loss random``.
- ``bursty:P1:B``: with probability P1 per packet a *loss event* starts that drops B consecutive
  packets (the packet that started it and the next B-1). This is the model of the delay/loss
  testbed paper (000): P' = P1 events per packet, burst length b = B exactly, so the packet loss
  rate is P1*B / (1 + P1*(B-1)) (a packet inside a burst cannot start another one).
- ``ge:p:r[:loss_good[:loss_bad]]``: the two-state Gilbert-Elliott chain (Gilbert 1960, Elliott
  1963; the form netem and RFC 3611 section 4.7.2 use): the chain moves good->bad with
  probability p and bad->good with probability r once per packet, then the packet is lost with
  probability loss_good (default 0) in the good state, loss_bad (default 1) in the bad state.
  With the defaults (simple Gilbert model) the mean burst length is 1/r and the loss rate
  p / (p + r).

:func:`parse` turns the command-line spelling above into a model; :meth:`LossModel.spec` gives
it back, so the parameters recorded in ``truth.json`` are the ones that can rebuild the model.
"""
from __future__ import annotations

import random
from abc import ABC, abstractmethod

__all__ = ["BurstyLoss", "GilbertElliott", "LossModel", "NoLoss", "RandomLoss", "parse"]


class LossModel(ABC):
    """A seeded sequence of drop decisions, one per data packet."""

    name: str = ""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._rng = random.Random(seed)

    @abstractmethod
    def drop(self) -> bool:
        """Decide the fate of the next data packet: True to drop it."""

    @abstractmethod
    def params(self) -> dict[str, float]:
        """The model's parameters by name (recorded in ``truth.json``)."""

    @abstractmethod
    def expected_loss_rate(self) -> float:
        """The long-run fraction of packets dropped, from the parameters alone."""

    def spec(self) -> str:
        """The command-line spelling that :func:`parse` turns back into this model."""
        values = ":".join(f"{v:g}" for v in self.params().values())
        return f"{self.name}:{values}" if values else self.name


class NoLoss(LossModel):
    """Drops nothing."""

    name = "none"

    def drop(self) -> bool:
        return False

    def params(self) -> dict[str, float]:
        return {}

    def expected_loss_rate(self) -> float:
        return 0.0


class RandomLoss(LossModel):
    """Independent loss with probability ``p`` per packet."""

    name = "random"

    def __init__(self, p: float, seed: int) -> None:
        _check_probability("p", p)
        super().__init__(seed)
        self.p = p

    def drop(self) -> bool:
        return self._rng.random() < self.p

    def params(self) -> dict[str, float]:
        return {"p": self.p}

    def expected_loss_rate(self) -> float:
        return self.p


class BurstyLoss(LossModel):
    """Loss events that start with probability ``event_p`` and drop ``burst`` packets each."""

    name = "bursty"

    def __init__(self, event_p: float, burst: int, seed: int) -> None:
        _check_probability("event_p", event_p)
        if burst < 1 or int(burst) != burst:
            raise ValueError(f"burst length must be a positive integer, not {burst}")
        super().__init__(seed)
        self.event_p = event_p
        self.burst = int(burst)
        self._left = 0  # packets still to drop in the current event

    def drop(self) -> bool:
        if self._left > 0:
            self._left -= 1
            return True
        if self._rng.random() < self.event_p:
            self._left = self.burst - 1
            return True
        return False

    def params(self) -> dict[str, float]:
        return {"event_p": self.event_p, "burst": self.burst}

    def expected_loss_rate(self) -> float:
        # Renewal argument: a cycle is a geometric run of kept packets then one burst of b.
        p, b = self.event_p, self.burst
        return p * b / (1.0 + p * (b - 1))


class GilbertElliott(LossModel):
    """Two-state Markov loss: good/bad states with per-state loss probabilities."""

    name = "ge"

    def __init__(
        self, p: float, r: float, seed: int, loss_good: float = 0.0, loss_bad: float = 1.0
    ) -> None:
        for label, value in (("p", p), ("r", r), ("loss_good", loss_good), ("loss_bad", loss_bad)):
            _check_probability(label, value)
        if r == 0.0:
            raise ValueError("r = 0 would keep the chain in the bad state for ever")
        super().__init__(seed)
        self.p, self.r = p, r
        self.loss_good, self.loss_bad = loss_good, loss_bad
        self.bad = False

    def drop(self) -> bool:
        if self.bad:
            if self._rng.random() < self.r:
                self.bad = False
        elif self._rng.random() < self.p:
            self.bad = True
        return self._rng.random() < (self.loss_bad if self.bad else self.loss_good)

    def params(self) -> dict[str, float]:
        return {"p": self.p, "r": self.r, "loss_good": self.loss_good, "loss_bad": self.loss_bad}

    def expected_loss_rate(self) -> float:
        bad_share = self.p / (self.p + self.r) if self.p + self.r > 0 else 0.0
        return bad_share * self.loss_bad + (1.0 - bad_share) * self.loss_good


def parse(spec: str, seed: int) -> LossModel:
    """Build a model from its command-line spelling (see the module docstring).

    >>> parse("bursty:0.01:3", seed=1).params()
    {'event_p': 0.01, 'burst': 3}
    """
    name, *fields = spec.strip().split(":")
    try:
        values = [float(f) for f in fields]
    except ValueError:
        raise ValueError(f"loss model {spec!r}: parameters must be numbers") from None
    arity = {"none": (0, 0), "random": (1, 1), "bursty": (2, 2), "ge": (2, 4)}
    if name not in arity:
        raise ValueError(f"unknown loss model {name!r}: use none, random, bursty or ge")
    low, high = arity[name]
    if not low <= len(values) <= high:
        raise ValueError(f"loss model {spec!r}: {name} takes {low} to {high} parameters")
    if name == "none":
        return NoLoss(seed)
    if name == "random":
        return RandomLoss(values[0], seed)
    if name == "bursty":
        if not values[1].is_integer():
            raise ValueError(f"loss model {spec!r}: the burst length must be an integer")
        return BurstyLoss(values[0], int(values[1]), seed)
    return GilbertElliott(values[0], values[1], seed, *values[2:])


def _check_probability(label: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{label} must be a probability in [0, 1], not {value}")
