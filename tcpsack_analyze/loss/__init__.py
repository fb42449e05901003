"""Loss forensics: retransmissions and their triggers, recovery episodes, delays, loss patterns."""
