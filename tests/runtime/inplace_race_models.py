"""Broken/correct pairs for in-place writes and views, written with the runtime API directly.

Same conventions as ``race_models``: ``fixed`` picks the variant, ``# P:<name>`` marks
the first access of the racing pair (the producer, a write, or the read that a later
write may overtake) and ``# C:<name>`` the second; the message must name both lines.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from npudsl import runtime

__all__ = ["PAIRS"]


class Pair(nn.Module):
    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.fixed = fixed


class WriteAfterSideRead(Pair):
    """The side stream reads x while the main stream adds to it in place."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x * 1
        runtime.record("war.fork")
        with runtime.stream("side"):
            runtime.wait("war.fork")
            y = x * 2  # P:write_after_side_read
            runtime.record("war.read")
        if self.fixed:
            runtime.wait("war.read")
        x.add_(1)  # C:write_after_side_read
        runtime.wait("war.read")
        return x + y


class ReadAfterInPlaceWrite(Pair):
    """The side stream waits for an event recorded before the main stream's in-place write."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        buf = torch.zeros_like(x)
        if not self.fixed:
            runtime.record("raw.ready")
        buf.copy_(x)  # P:read_after_in_place_write
        if self.fixed:
            runtime.record("raw.ready")
        with runtime.stream("side"):
            runtime.wait("raw.ready")
            y = buf.sin()  # C:read_after_in_place_write
            runtime.record("raw.done")
        runtime.wait("raw.done")
        return y


class ViewMadeOnMain(Pair):
    """A view made on the main stream, read on the side stream: the producer is the viewed tensor's."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 2  # P:view_made_on_main
        flat = h.view(-1)
        if self.fixed:
            runtime.record("view.ready")
        with runtime.stream("side"):
            if self.fixed:
                runtime.wait("view.ready")
            y = flat + 1  # C:view_made_on_main
            runtime.record("view.done")
        runtime.wait("view.done")
        return y


class SliceOfTensorBeingWritten(Pair):
    """The side stream reads x[..., :2] while the main stream still writes x in place."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        acc = x * 1
        runtime.record("slice.fork")
        acc.mul_(3)  # P:slice_of_tensor_being_written
        if self.fixed:
            runtime.record("slice.fork")
        with runtime.stream("side"):
            runtime.wait("slice.fork")
            y = acc[..., :2].exp()  # C:slice_of_tensor_being_written
            runtime.record("slice.done")
        runtime.wait("slice.done")
        return y


class TransposeThenInPlace(Pair):
    """The side stream reads a transpose of h; the main stream then writes h in place."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + 1
        runtime.record("tr.fork")
        with runtime.stream("side"):
            runtime.wait("tr.fork")
            t = h.transpose(0, 1)
            y = t @ h  # P:transpose_then_in_place
            runtime.record("tr.done")
        if self.fixed:
            runtime.wait("tr.done")
        F.relu(h, inplace=True)  # C:transpose_then_in_place
        runtime.wait("tr.done")
        return y.sum() + h


class SetItemWhileSideReads(Pair):
    """x[0] = 0 on the main stream while the side stream reads x."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.clone()
        runtime.record("set.fork")
        with runtime.stream("side"):
            runtime.wait("set.fork")
            y = h.sum(dim=0)  # P:set_item_while_side_reads
            runtime.record("set.done")
        if self.fixed:
            runtime.wait("set.done")
        h[0] = 0.0  # C:set_item_while_side_reads
        runtime.wait("set.done")
        return h * y


class OutArgumentOnSide(Pair):
    """The side stream writes buf through out=; the main stream reads buf without waiting."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        buf = torch.empty_like(x)
        runtime.record("out.fork")
        with runtime.stream("side"):
            runtime.wait("out.fork")
            torch.mul(x, 2, out=buf)  # P:out_argument_on_side
            runtime.record("out.done")
        if self.fixed:
            runtime.wait("out.done")
        y = buf.reshape(-1)[:3].sum()  # C:out_argument_on_side
        runtime.wait("out.done")
        return y + x


class TwoStreamsWriteOneBuffer(Pair):
    """Both streams write the same buffer in place, unordered."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        buf = x * 1
        runtime.record("waw.fork")
        with runtime.stream("side"):
            runtime.wait("waw.fork")
            buf.add_(2)  # P:two_streams_write_one_buffer
            runtime.record("waw.done")
        if self.fixed:
            runtime.wait("waw.done")
        buf.mul_(5)  # C:two_streams_write_one_buffer
        runtime.wait("waw.done")
        return buf


class AugmentedAssignWhileSideReads(Pair):
    """``x += 1`` on a tensor is an in-place write: the side stream may still be reading x."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x * 1
        count = x.shape[0]
        runtime.record("aug.fork")
        with runtime.stream("side"):
            runtime.wait("aug.fork")
            y = x.cos()  # P:augmented_assign_while_side_reads
            runtime.record("aug.read")
        if self.fixed:
            runtime.wait("aug.read")
        x += 1  # C:augmented_assign_while_side_reads
        count += 1  # a number: a new value, no write
        runtime.wait("aug.read")
        return x + y * count


PAIRS = {
    "write_after_side_read": WriteAfterSideRead,
    "read_after_in_place_write": ReadAfterInPlaceWrite,
    "view_made_on_main": ViewMadeOnMain,
    "slice_of_tensor_being_written": SliceOfTensorBeingWritten,
    "transpose_then_in_place": TransposeThenInPlace,
    "set_item_while_side_reads": SetItemWhileSideReads,
    "out_argument_on_side": OutArgumentOnSide,
    "two_streams_write_one_buffer": TwoStreamsWriteOneBuffer,
    "augmented_assign_while_side_reads": AugmentedAssignWhileSideReads,
}
