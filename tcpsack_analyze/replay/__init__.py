"""Closed-loop "what if" replay (issue 14): sender models over a path fitted from a capture.

One job per module: :mod:`.loss` (loss processes: the capture's losses by position, or the lab's
seeded random / bursty / Gilbert-Elliott models), :mod:`.receiver` (cumulative ACKs, SACK, delayed
ACKs), :mod:`.sender` (a model of :mod:`tcpsack_analyze.models` choosing segments as the RFCs
say), :mod:`.simulate` (the deterministic event loop and the :class:`~.simulate.Path`),
:mod:`.outcome` (a run measured by the capture's own loss stages), :mod:`.whatif` (models over a
path, from Python), :mod:`.path` (the path fitted from a capture), :mod:`.capture` (observed vs
each model, per direction: :func:`~.capture.replay_capture`) and :mod:`.render`. See
docs/replay.md.
"""
