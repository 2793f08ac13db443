"""What a race error says and how it reaches the user: the user's names, one exception, no dynamo frames."""

from __future__ import annotations

import os
import traceback

import pytest
import torch
from torch import nn

import inplace_race_models
import race_models
from helpers import marked_line
from npudsl import StreamRaceError, runtime
from npudsl.race import npudsl_backend


class CacheWrittenWhileSideReads(nn.Module):
    """The side stream reads a buffer of the model while the main stream updates it in place."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("cache", torch.zeros(3, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        runtime.record("cache.fork")
        with runtime.stream("side"):
            runtime.wait("cache.fork")
            total = self.cache.sum()  # P:cache
            runtime.record("cache.done")
        self.cache.add_(x)  # C:cache
        runtime.wait("cache.done")
        return total * x


class SplitThenRead(nn.Module):
    """Both halves of a chunk, made on the side stream, read on the main stream unsynchronized."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with runtime.stream("side"):
            first, second = (x * 2).chunk(2, dim=-1)  # P:split
            runtime.record("split.done")
        y = second.exp()  # C:split
        runtime.wait("split.done")
        return y + first


def _race(model: nn.Module) -> StreamRaceError:
    with pytest.raises(StreamRaceError) as caught:
        torch.compile(model, backend=npudsl_backend, fullgraph=True)(torch.randn(3, 4))
    return caught.value


def test_a_buffer_is_named_as_the_user_wrote_it() -> None:
    message = str(_race(CacheWrittenWhileSideReads()))
    assert message.startswith("tensor 'self.cache' is read on stream 'side' at " + marked_line(__file__, "P:cache"))
    assert f"written in place on stream 'default' at {marked_line(__file__, 'C:cache')}" in message


def test_a_part_of_a_multi_output_op_is_named_by_its_own_variable() -> None:
    message = str(_race(SplitThenRead()))
    assert message.startswith(f"tensor 'second' made on stream 'side' at {marked_line(__file__, 'P:split')}")


def test_the_error_is_one_exception_with_npudsl_text_and_no_dynamo_frames() -> None:
    error = _race(race_models.MainReadsSide(fixed=False))
    assert isinstance(error, StreamRaceError) and type(error).__name__ == "StreamRaceError"
    assert error.__cause__ is None and error.__suppress_context__
    assert str(error).startswith("tensor 'y' made on stream 'side'") and "\n" not in str(error)
    frames = traceback.extract_tb(error.__traceback__)
    inside_torch = [f.filename for f in frames if f"torch{os.sep}_dynamo" in f.filename]
    assert all(name.endswith("eval_frame.py") for name in inside_torch)  # the compile call itself, nothing deeper
    assert frames[-1].filename.endswith(os.path.join("npudsl", "race", "__init__.py"))
    assert traceback.format_exception_only(error)[0].startswith("npudsl.StreamRaceError: tensor 'y'")


def test_a_view_on_its_own_line_is_named_with_what_it_views() -> None:
    message = str(_race(inplace_race_models.ViewMadeOnMain(fixed=False)))
    assert message.startswith("tensor 'flat' (a view of 'h') made on stream 'default'")


def test_a_view_inside_the_reading_expression_is_named_by_its_memory() -> None:
    message = str(_race(inplace_race_models.SliceOfTensorBeingWritten(fixed=False)))
    assert message.startswith("tensor 'acc' written in place on stream 'default'")
