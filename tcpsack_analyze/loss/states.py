"""The vocabulary of loss forensics and the sender states it implies, as enums and tables.

Contract (the loss tracker, ``src/loss/tracker.rs`` behind ``loss/tracker.py``, is the only code
that changes these states):

* For each direction the tracker infers one **sender state** (:class:`CaState`, Linux's names):
  ``Open`` (no recovery), ``Recovery`` (fast/SACK recovery, RFC 5681/6582/6675) or ``Loss``
  (after a retransmission timeout, RFC 6298 section 5). It is never read from the capture: it is
  what the retransmissions seen so far imply.
* The state changes only on the events of :data:`TRANSITIONS`: a resend, classified by its
  :class:`Trigger` when it is seen, the cumulative ACK passing the episode's recovery point, the
  episode's first resend being shown spurious, and the end of the capture. A change out of
  ``Recovery`` or ``Loss`` ends the current *recovery episode* with the :class:`EpisodeEnd` the
  table names; a change into them starts one.
* Where a transition happens (``src/loss/tracker.rs``): resends in ``on_rexmit``, the recovery
  point in ``advance``, undoing in ``spurious``, the capture's end in ``finish``. Nothing else
  assigns an episode's end.
* The table itself is the core's (``src/loss/states.rs``, ``TRANSITIONS``, what the tracker
  steps by); :data:`TRANSITIONS` here is built from it, so the two cannot differ.

Values are ``str`` enums: they compare equal to, and serialise (JSON, CSV, tables) as, the plain
strings the report has always printed ("fast", "full_ack", "Recovery").
"""
from __future__ import annotations

import enum

from tcpsack_analyze import _core


class _Name(str, enum.Enum):
    """A str enum that prints as its value (as 3.11's StrEnum does, also on 3.10)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Trigger(_Name):
    """What made the sender resend (domain.md section 4)."""

    FAST = "fast"  # first resend of an episode after DupThresh dupACKs, or IsLost under SACK
    EARLY = "early"  # first resend of an episode after fewer dupACKs (early/thin/RACK)
    RECOVERY = "recovery"  # a further resend inside an episode
    RTO = "rto"  # the retransmission timer
    TLP = "tlp"  # tail loss probe: the highest segment, about 2 SRTT after the last send
    OTHER = "other"  # ACK-clocked in Open, with no dupACK, SACK block or timer behind it
    AMBIGUOUS = "ambiguous"  # the capture cannot tell (no ACK, no RTT sample yet)


class Spurious(_Name):
    """Why a resend was unnecessary (domain.md section 4)."""

    DSACK = "dsack"  # the receiver reported the bytes twice (RFC 2883)
    EIFEL = "eifel"  # the covering ACK echoed an older transmission's TSval (RFC 3522)
    EARLY_ACK = "early_ack"  # covered before its own ACK could come back
    ACKED = "already_acked"  # the bytes were acknowledged before the resend was seen


class EpisodeEnd(_Name):
    """How a recovery episode ended."""

    FULL_ACK = "full_ack"  # the cumulative ACK passed the recovery point
    RTO = "rto"  # a timeout ended it (and began a Loss episode)
    UNDONE = "undone"  # its first resend was spurious (RFC 3522 section 2: the sender undoes)
    END_OF_CAPTURE = "end_of_capture"


class CaState(_Name):
    """The sender state a resend implies (Linux's congestion-avoidance state names)."""

    OPEN = "Open"
    RECOVERY = "Recovery"
    LOSS = "Loss"
    UNKNOWN = "unknown"


class Event(enum.Enum):
    """What can move the sender state (besides the resends, named by their :class:`Trigger`)."""

    BACKOFF = "the timer fires again without progress since the last timeout"
    FULL_ACK = "the cumulative ACK passes the recovery point"
    UNDONE = "the episode's first resend is shown spurious"
    END = "the capture ends"
    RESUME = "a go-back-N resend shows the sender did not undo the timeout episode judged spurious"
    RESUME_RECOVERY = "a resend of the head after a partial ACK shows the sender did not undo the recovery judged spurious"


def _core_transitions() -> dict[tuple[CaState, Trigger | Event], tuple[CaState, EpisodeEnd | None]]:
    """The core's transition table (``src/loss/states.rs``) in this module's enums."""
    table: dict[tuple[CaState, Trigger | Event], tuple[CaState, EpisodeEnd | None]] = {}
    for state, kind, name, nxt, ended in _core.transitions():
        what: Trigger | Event = Trigger(name) if kind == "trigger" else Event[name]
        table[CaState(state), what] = (CaState(nxt), None if ended is None else EpisodeEnd(ended))
    return table


# (state, what happened) -> (next state, how the current episode ends, or None if it goes on):
# Open -> Recovery on a fast or early resend, -> Loss on a timeout (a probe, an Open resend or an
# ambiguous one starts no episode); a timeout in Recovery, or after progress in Loss, ends the
# episode (rto) and begins a timeout episode, a timer firing again without progress backs it off;
# a full ACK, an undone first resend or the capture's end return to Open; a go-back-N resend or a
# partial ACK's resend from a sender that did not undo brings an undone episode back
TRANSITIONS: dict[tuple[CaState, Trigger | Event], tuple[CaState, EpisodeEnd | None]] = _core_transitions()

# the state each trigger implies for the resend itself, given the episode it belongs to
_IMPLIED: dict[Trigger, CaState | None] = {
    Trigger.TLP: CaState.OPEN,
    Trigger.OTHER: CaState.OPEN,
    Trigger.AMBIGUOUS: CaState.UNKNOWN,
    Trigger.RTO: CaState.LOSS,
    Trigger.FAST: None,  # None: Recovery, or Loss inside a timeout episode
    Trigger.EARLY: None,
    Trigger.RECOVERY: None,
}


def episode_state(episode_trigger: str | None) -> CaState:
    """The state inside an episode that began with ``episode_trigger`` (Open outside any)."""
    if episode_trigger is None:
        return CaState.OPEN
    return CaState.LOSS if episode_trigger == Trigger.RTO else CaState.RECOVERY


def ca_state(trigger: str, episode_trigger: str | None) -> CaState:
    """The sender state a resend's trigger implies: ``Loss`` after a timeout, ``Recovery``,
    ``Open`` for a probe, ``unknown`` when the trigger is ambiguous."""
    implied = _IMPLIED[Trigger(trigger)]
    return implied if implied is not None else (CaState.LOSS if episode_trigger == Trigger.RTO else CaState.RECOVERY)


def transition(state: CaState, what: Trigger | Event) -> tuple[CaState, EpisodeEnd | None]:
    """The next state and the end of the current episode, per :data:`TRANSITIONS`.

    Raises :class:`KeyError` for a pair the contract does not allow (a resend of trigger
    ``recovery`` outside an episode, say): the tracker never asks for one.
    """
    return TRANSITIONS[state, what]


__all__ = ["CaState", "EpisodeEnd", "Event", "Spurious", "TRANSITIONS", "Trigger", "ca_state", "episode_state", "transition"]
