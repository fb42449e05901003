"""The sender-state contract of loss/states.py: the table is complete for what the tracker
asks, and the vocabulary prints and serialises as the plain strings of the report."""
from __future__ import annotations

import json

import pytest

from tcpsack_analyze.loss.states import TRANSITIONS, CaState, EpisodeEnd, Event, Trigger, ca_state, episode_state, transition


def test_strings_stay_plain() -> None:
    assert f"{Trigger.FAST}" == "fast" and str(EpisodeEnd.FULL_ACK) == "full_ack"
    assert json.dumps([Trigger.RTO, CaState.LOSS]) == '["rto", "Loss"]'
    assert Trigger.TLP == "tlp" and f"{CaState.OPEN:>6}" == "  Open"


def test_every_state_inside_an_episode_can_end_every_way() -> None:
    for state in (CaState.RECOVERY, CaState.LOSS):
        for what in (Event.FULL_ACK, Event.UNDONE, Event.END):
            nxt, ended = transition(state, what)
            assert nxt is CaState.OPEN and ended is not None


def test_a_timeout_during_recovery_ends_it_and_backoff_keeps_the_timeout_episode() -> None:
    assert transition(CaState.RECOVERY, Trigger.RTO) == (CaState.LOSS, EpisodeEnd.RTO)
    assert transition(CaState.LOSS, Event.BACKOFF) == (CaState.LOSS, None)
    assert transition(CaState.OPEN, Trigger.TLP) == (CaState.OPEN, None)


def test_pairs_outside_the_contract_are_refused() -> None:
    with pytest.raises(KeyError):
        transition(CaState.OPEN, Trigger.RECOVERY)  # a recovery resend needs an episode
    assert all(isinstance(k[0], CaState) for k in TRANSITIONS)


@pytest.mark.parametrize(("trigger", "episode", "state"), [
    ("tlp", None, "Open"), ("ambiguous", None, "unknown"), ("rto", "fast", "Loss"),
    ("fast", "fast", "Recovery"), ("recovery", "rto", "Loss"), ("recovery", "early", "Recovery"),
])
def test_implied_state_of_a_resend(trigger: str, episode: str | None, state: str) -> None:
    assert ca_state(trigger, episode) == state
    assert episode_state(None) is CaState.OPEN
