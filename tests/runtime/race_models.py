"""Broken/correct pairs for the race checker, written with the runtime API directly.

Each class takes ``fixed``: False builds the racy variant, True the synchronized
one. Comments ``# P:<name>`` and ``# C:<name>`` mark the producer and consumer
lines the error message must name. On CPU every runtime op is a no-op, so the
eager module is the single-stream reference.
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from npudsl import runtime

__all__ = ["PAIRS"]


class SideReadsMain(nn.Module):
    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.fixed = fixed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 2  # P:side_reads_main
        runtime.record("fork")
        with runtime.stream("side"):
            if self.fixed:
                runtime.wait("fork")
            y = h + 1  # C:side_reads_main
            runtime.record("join")
        runtime.wait("join")
        return y * 3


class MainReadsSide(nn.Module):
    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.fixed = fixed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with runtime.stream("side"):
            y = x.sin()  # P:main_reads_side
            runtime.record("join")
        if self.fixed:
            runtime.wait("join")
        return y * x  # C:main_reads_side


class WaitBeforeRecord(nn.Module):
    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.fixed = fixed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fixed:
            runtime.record("ready")
        with runtime.stream("side"):
            runtime.wait("ready")  # C:wait_before_record
            y = x.cos()
        if not self.fixed:
            runtime.record("ready")  # P:wait_before_record
        return y


class CrossWithoutRecordStream(nn.Module):
    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.fixed = fixed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with runtime.stream("side"):
            y = x.exp()  # P:cross_without_record_stream
            if self.fixed:
                runtime.record_stream(y, "default")
            runtime.record("made")
        runtime.wait("made")
        z = y + x  # C:cross_without_record_stream
        with runtime.stream("side"):
            w = x.tanh()
            runtime.record("again")
        runtime.wait("again")
        return z * w


class CrossWriteWithoutRecordStream(nn.Module):
    """The main stream's last use of the side stream's tensor is an in-place write: a side allocation before that
    write is known done may be handed the memory, and the write lands in the new tensor."""

    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.fixed = fixed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with runtime.stream("side"):
            y = x.exp()  # P:cross_write_without_record_stream
            if self.fixed:
                runtime.record_stream(y, "default")
            runtime.record("made")
        runtime.wait("made")
        y.mul_(2)  # C:cross_write_without_record_stream
        with runtime.stream("side"):
            w = x.tanh()
            runtime.record("again")
        runtime.wait("again")
        return w


class NestedStreams(nn.Module):
    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.fixed = fixed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with runtime.stream("outer"):
            with runtime.stream("inner"):
                y = x * 5  # P:nested_streams
                runtime.record("inner_done")
            if self.fixed:
                runtime.wait("inner_done")
            z = y - 1  # C:nested_streams
        return z


class GuardedStream(nn.Module):
    """The racy body is only racy when the guard turns the side stream on."""

    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.multistream = not fixed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + 2  # P:guarded_stream
        with runtime.stream("side") if self.multistream else contextlib.nullcontext():
            y = h * h  # C:guarded_stream
            if self.multistream:
                runtime.record("guarded_join")
        if self.multistream:
            runtime.wait("guarded_join")
        return y


class RecordTooEarly(nn.Module):
    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.fixed = fixed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with runtime.stream("a"):
            if not self.fixed:
                runtime.record("a_done")
            y = x.sigmoid()  # P:record_too_early
            if self.fixed:
                runtime.record("a_done")
        with runtime.stream("c"):
            runtime.wait("a_done")
            z = y * 2  # C:record_too_early
            runtime.record("c_done")
        runtime.wait("c_done")
        runtime.wait("a_done")
        return z + y


class ThirdStreamTransitive(nn.Module):
    """Stream c learns about a's work through main: a -> main -> c."""

    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.fixed = fixed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with runtime.stream("a"):
            y = x.abs()  # P:third_stream
            runtime.record("a_done")
        if not self.fixed:
            runtime.record("main_ready")
        runtime.wait("a_done")
        if self.fixed:
            runtime.record("main_ready")
        with runtime.stream("c"):
            runtime.wait("main_ready")
            z = y + 1  # C:third_stream
            runtime.record("c_done")
        runtime.wait("c_done")
        return z


PAIRS = {
    "side_reads_main": SideReadsMain,
    "main_reads_side": MainReadsSide,
    "wait_before_record": WaitBeforeRecord,
    "cross_without_record_stream": CrossWithoutRecordStream,
    "cross_write_without_record_stream": CrossWriteWithoutRecordStream,
    "nested_streams": NestedStreams,
    "guarded_stream": GuardedStream,
    "record_too_early": RecordTooEarly,
    "third_stream": ThirdStreamTransitive,
}
