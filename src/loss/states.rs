//! The vocabulary of loss forensics and the sender states it implies (the contract of
//! `tcpsack_analyze/loss/states.py`, whose enums name these values in Python and whose
//! `TRANSITIONS` table is read from [`TRANSITIONS`] here: one table).
//!
//! For each direction the tracker infers one sender state ([`CaState`], Linux's names): Open,
//! Recovery (fast/SACK recovery, RFC 5681/6582/6675) or Loss (after a retransmission timeout,
//! RFC 6298 section 5). It changes only on the inputs of [`TRANSITIONS`]: a resend, classified
//! by its [`Trigger`] when it is seen, the cumulative ACK passing the recovery point, the
//! episode's first resend shown spurious, and the end of the capture. A change out of Recovery
//! or Loss ends the current recovery episode with the [`EpisodeEnd`] the table names.

/// An enum of names: its values in order (`ALL`, codes 0, 1, ...) and the name of each, as
/// Python's enums of `loss/states.py` and `loss/records.py` spell them.
macro_rules! named {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum $name {
            $($(#[$vm])* $var),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            pub fn name(self) -> &'static str {
                match self {
                    $($name::$var => $s),+
                }
            }
        }
    };
}
pub(crate) use named;

named! {
    /// What made the sender resend (domain.md section 4). The order is the Python enum's.
    Trigger { Fast = "fast", Early = "early", Recovery = "recovery", Rto = "rto", Tlp = "tlp", Other = "other", Ambiguous = "ambiguous" }
}

named! {
    /// Why a resend was unnecessary (domain.md section 4).
    Spurious { Dsack = "dsack", Eifel = "eifel", EarlyAck = "early_ack", Acked = "already_acked" }
}

named! {
    /// How a recovery episode ended.
    EpisodeEnd { FullAck = "full_ack", Rto = "rto", Undone = "undone", EndOfCapture = "end_of_capture" }
}

named! {
    /// The sender state a resend implies.
    CaState { Open = "Open", Recovery = "Recovery", Loss = "Loss" }
}

named! {
    /// What can move the sender state besides the resends (named by their [`Trigger`]); the
    /// names are the members of `loss/states.py`'s `Event`.
    Event {
        /// the timer fires again without progress since the last timeout
        Backoff = "BACKOFF",
        /// the cumulative ACK passes the recovery point
        FullAck = "FULL_ACK",
        /// the episode's first resend is shown spurious
        Undone = "UNDONE",
        /// the capture ends
        End = "END",
        /// a go-back-N resend shows the sender did not undo the timeout episode judged spurious
        Resume = "RESUME",
        /// a resend of the head after a partial ACK shows the sender did not undo the recovery
        /// judged spurious
        ResumeRecovery = "RESUME_RECOVERY",
    }
}

/// What happened: a resend of some trigger, or an [`Event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    Resend(Trigger),
    Event(Event),
}

use CaState::{Loss, Open, Recovery};
use Input::{Event as E, Resend as R};

/// (state, what happened) -> (next state, how the current episode ends, or None if it goes on)
pub const TRANSITIONS: [(CaState, Input, CaState, Option<EpisodeEnd>); 19] = [
    (Open, R(Trigger::Fast), Recovery, None),
    (Open, R(Trigger::Early), Recovery, None),
    (Open, R(Trigger::Rto), Loss, None),
    (Open, R(Trigger::Tlp), Open, None), // a probe starts no episode
    (Open, R(Trigger::Other), Open, None),
    (Open, R(Trigger::Ambiguous), Open, None),
    (Recovery, R(Trigger::Recovery), Recovery, None),
    (Recovery, R(Trigger::Rto), Loss, Some(EpisodeEnd::Rto)), // a new timeout episode begins
    (Loss, R(Trigger::Recovery), Loss, None),                 // go-back-N after the timeout
    (Loss, R(Trigger::Rto), Loss, Some(EpisodeEnd::Rto)),     // after progress: a new timeout episode
    (Loss, E(Event::Backoff), Loss, None),                    // the same timeout episode, backed off
    (Recovery, E(Event::FullAck), Open, Some(EpisodeEnd::FullAck)),
    (Loss, E(Event::FullAck), Open, Some(EpisodeEnd::FullAck)),
    (Recovery, E(Event::Undone), Open, Some(EpisodeEnd::Undone)),
    (Loss, E(Event::Undone), Open, Some(EpisodeEnd::Undone)),
    (Recovery, E(Event::End), Open, Some(EpisodeEnd::EndOfCapture)),
    // a sender that does not undo (no Eifel response, RFC 4015; ns-3) goes on with go-back-N
    // after a spurious timeout: the undone Loss episode comes back
    (Open, E(Event::Resume), Loss, None),
    // ... and a NewReno sender that does not undo its fast recovery goes on resending the head
    // at each partial ACK (RFC 6582 section 3.2 step 5): the undone Recovery episode comes back
    (Open, E(Event::ResumeRecovery), Recovery, None),
    (Loss, E(Event::End), Open, Some(EpisodeEnd::EndOfCapture)),
];

/// The next state and the end of the current episode, per [`TRANSITIONS`]; None for a pair the
/// contract does not allow (the tracker never asks for one).
pub fn transition(state: CaState, what: Input) -> Option<(CaState, Option<EpisodeEnd>)> {
    TRANSITIONS.iter().find(|t| t.0 == state && t.1 == what).map(|t| (t.2, t.3))
}

/// The state inside an episode that began with `trigger` (Open outside any).
pub fn episode_state(trigger: Option<Trigger>) -> CaState {
    match trigger {
        None => Open,
        Some(Trigger::Rto) => Loss,
        Some(_) => Recovery,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_episode_state_can_end_every_way() {
        for s in [Recovery, Loss] {
            for e in [Event::FullAck, Event::Undone, Event::End] {
                let (next, ended) = transition(s, E(e)).unwrap();
                assert!(next == Open && ended.is_some());
            }
        }
        assert_eq!(transition(Recovery, R(Trigger::Rto)), Some((Loss, Some(EpisodeEnd::Rto))));
        assert_eq!(transition(Open, R(Trigger::Recovery)), None);
        assert_eq!(episode_state(Some(Trigger::Tlp)), Recovery);
    }
}
