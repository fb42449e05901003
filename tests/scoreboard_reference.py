"""Brute-force RFC 6675 scoreboard: one set entry per octet, every rule read off the RFC text.

The test oracle for :mod:`tcpsack_analyze.scoreboard`. It shares the interpretations written
in that module's docstring (exclusive edges, ceil(length / SMSS) segments per SACKed range,
hole-bounded NextSeg segments, the order of the ACK rules) but none of its range arithmetic:
IsLost, SetPipe and NextSeg walk the octets one by one, exactly as RFC 6675 section 4 words them.
Only usable on small sequence spaces (a few hundred octets).
"""
from __future__ import annotations

from collections.abc import Sequence

from tcpsack_analyze.scoreboard import AckResult, NextSegment


def _runs(octets: list[int]) -> list[int]:
    """Lengths of the maximal runs of consecutive integers in a sorted list."""
    lengths: list[int] = []
    prev = None
    for x in octets:
        if prev is not None and x == prev + 1:
            lengths[-1] += 1
        else:
            lengths.append(1)
        prev = x
    return lengths


class ReferenceScoreboard:
    def __init__(self, smss: int, dup_thresh: int = 3, start: int = 0) -> None:
        self.smss = smss
        self.dup_thresh = dup_thresh
        self.high_ack = start
        self.high_data = start
        self.sacked: set[int] = set()
        self.high_rxt = start
        self.rescue_rxt: int | None = None
        self.recovery_point: int | None = None
        self.in_recovery = False
        self.rto_point: int | None = None
        self.dup_acks = 0

    # IsLost: count SACKed octets > seq, and segments as ceil(run / SMSS) per run
    def is_lost(self, seq: int) -> bool:
        above = sorted(x for x in self.sacked if x > seq)
        segments = sum(-(-n // self.smss) for n in _runs(above))
        return segments >= self.dup_thresh or len(above) > (self.dup_thresh - 1) * self.smss

    def pipe(self) -> int:
        total = 0
        for s1 in range(self.high_ack, self.high_data):
            if s1 in self.sacked:
                continue
            if not self.is_lost(s1):
                total += 1
            if s1 < self.high_rxt:  # S1 <= HighRxt with HighRxt = high_rxt - 1
                total += 1
        return total

    def pipe_segments(self) -> int:
        total = 0
        not_lost = rxt = 0
        for s1 in range(self.high_ack, self.high_data + 1):
            if s1 == self.high_data or s1 in self.sacked:  # a hole ends
                total += -(-not_lost // self.smss) + -(-rxt // self.smss)
                not_lost = rxt = 0
                continue
            not_lost += not self.is_lost(s1)
            rxt += s1 < self.high_rxt
        return total

    def _segment_from(self, s: int) -> NextSegment:
        end = s
        while end < self.high_data and end not in self.sacked and end - s < self.smss:
            end += 1
        return NextSegment(s, end, 0)

    def next_seg(self, available_new_data: int = 0, send_window_end: int | None = None) -> NextSegment | None:
        highest_sacked = max(self.sacked) if self.sacked else None
        unsacked = [s for s in range(self.high_ack, self.high_data) if s not in self.sacked]
        for s2 in unsacked:  # rule 1
            if s2 >= self.high_rxt and highest_sacked is not None and s2 < highest_sacked and self.is_lost(s2):
                return self._segment_from(s2)._replace(rule=1)
        n = min(self.smss, available_new_data)  # rule 2
        if send_window_end is not None:
            n = min(n, send_window_end - self.high_data)
        if n > 0:
            return NextSegment(self.high_data, self.high_data + n, 2)
        for s3 in unsacked:  # rule 3
            if s3 >= self.high_rxt and highest_sacked is not None and s3 < highest_sacked:
                return self._segment_from(s3)._replace(rule=3)
        if self.in_recovery and unsacked and (self.rescue_rxt is None or self.high_ack > self.rescue_rxt):
            h = unsacked[-1]  # rule 4
            start = h
            while start - 1 >= self.high_ack and start - 1 not in self.sacked and h + 1 - (start - 1) <= self.smss:
                start -= 1
            return NextSegment(start, h + 1, 4)
        return None

    def can_enter_recovery(self) -> bool:
        return not self.in_recovery and (self.rto_point is None or self.high_ack >= self.rto_point)

    def on_send(self, seq: int, end: int, rescue: bool = False) -> None:
        if seq < self.high_data and self.in_recovery:
            if rescue:
                self.rescue_rxt = self.recovery_point
            else:
                self.high_rxt = max(self.high_rxt, min(end, self.high_data))
        self.high_data = max(self.high_data, end)

    def on_ack(self, cum_ack: int, blocks: Sequence[tuple[int, int]]) -> AckResult:
        dsack = None
        if blocks and (
            blocks[0][0] < cum_ack
            or (len(blocks) > 1 and blocks[1][0] <= blocks[0][0] and blocks[0][1] <= blocks[1][1])
        ):
            dsack = blocks[0]
        self.high_data = max([self.high_data, cum_ack] + [e for _, e in blocks])
        cumulative = cum_ack > self.high_ack
        newly_acked = sacked_then_acked = 0
        if cumulative:
            acked = set(range(self.high_ack, cum_ack))
            newly_acked = len(acked)
            sacked_then_acked = len(acked & self.sacked)
            self.sacked -= acked
            self.high_ack = cum_ack
        newly = set()
        for s, e in blocks:
            newly |= {x for x in range(s, e) if x >= self.high_ack} - self.sacked
        self.sacked |= newly
        exited = False
        if self.in_recovery and self.recovery_point is not None and self.high_ack >= self.recovery_point:
            self.in_recovery = False
            exited = True
        duplicate = bool(newly)
        if cumulative:
            self.dup_acks = 0
        loss = False
        if duplicate and not self.in_recovery:
            self.dup_acks += 1
            loss = self.can_enter_recovery() and (
                self.dup_acks >= self.dup_thresh or self.is_lost(self.high_ack)
            )
        return AckResult(
            high_ack=self.high_ack,
            newly_acked=newly_acked,
            newly_sacked=len(newly),
            sacked_then_acked=sacked_then_acked,
            delivered=newly_acked + len(newly) - sacked_then_acked,
            cumulative=cumulative,
            duplicate=duplicate,
            dsack=dsack,
            dup_acks=self.dup_acks,
            loss_detected=loss,
            exited_recovery=exited,
        )

    def enter_recovery(self) -> tuple[int, int] | None:
        assert self.can_enter_recovery()
        self.in_recovery = True
        self.recovery_point = self.high_data
        self.rto_point = None
        first = next((s for s in range(self.high_ack, self.high_data) if s not in self.sacked), None)
        if first is None:
            self.high_rxt = self.rescue_rxt = self.high_ack
            return None
        seg = self._segment_from(first)
        self.high_rxt = self.rescue_rxt = seg.end
        return (seg.start, seg.end)

    def on_rto(self, expunge_sack: bool) -> None:
        self.in_recovery = False
        self.recovery_point = self.rto_point = self.high_data
        self.high_rxt = self.high_ack
        self.dup_acks = 0
        if expunge_sack:
            self.sacked = set()
