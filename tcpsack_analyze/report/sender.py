"""The report's ``sender`` section per direction (issue 14): the open-loop inference summed up.

``report --sender`` (or :func:`with_sender` from Python) runs every sender model over each
direction (:func:`~tcpsack_analyze.models.infer.infer_capture`, Linux profile) and puts
:func:`~tcpsack_analyze.models.section.sender_section` into ``DirectionReport.sender``: best
model, confidence, cwnd min/median/max, time share per limiting factor, falling edges. It is an
option, not part of every report, because the models run one event at a time in Python: about 8x
the time of the report itself (docs/models.md "Speed").
"""
from __future__ import annotations

from dataclasses import replace

from tcpsack_analyze.models.infer import CaptureInference, infer_capture
from tcpsack_analyze.models.section import sender_section
from tcpsack_analyze.report.model import CaptureReport, ConnectionReport, DirectionReport


def with_sender(report: CaptureReport, inference: CaptureInference) -> CaptureReport:
    """``report`` with each direction's ``sender`` section from ``inference`` (of the same capture)."""
    sections = {(d.conn, d.direction): sender_section(d) for d in inference.directions}

    def direction(c: ConnectionReport, d: DirectionReport) -> DirectionReport:
        section = sections.get((c.id, d.name))
        return d if section is None else replace(d, sender=section)

    conns = [replace(c, a2b=direction(c, c.a2b), b2a=direction(c, c.b2a)) for c in report.connections]
    return replace(report, connections=conns)


def sender_report(report: CaptureReport, filter: str | None = None) -> CaptureReport:  # noqa: A002 - the name users expect
    """``report`` with the sender sections inferred from its capture (read again, by path)."""
    return with_sender(report, infer_capture(report.capture.path, filter=filter))


__all__ = ["sender_report", "with_sender"]
