"""A ``sync="manual"`` side block that ends a function keeps its input: the wait that orders the input's reuse is the
caller's.

vllm-ascend's native shared expert (``tests/corpus/vllm_native_shared_expert``): ``forward`` runs its phases on
the shared stream, reads its input there and returns; the only thing that orders that read is the user event the
last phase records (``moe:shared_done``), waited for by whoever calls it, in another class and file. The
hand-written version of the row waits for it in the same function, right after the block, and needs no
``record_stream``; the generated function cannot know that its caller waits before it allocates (a file
transformed alone is safe for any caller), so it keeps the input. ``Early`` waits before it allocates (no race
either way); ``Late`` allocates first, which races once the keep is taken out.
"""

from __future__ import annotations

import re

import pytest
import torch

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import after, on_stream, records, runtime


class Shared(nn.Module):
    @on_stream("shared", sync="manual")
    @after("moe:ready")
    @records("moe:shared_done")
    def part(self, x):
        return torch.sigmoid(x) * 2

    def forward(self, x):
        return self.part(x)


class Early(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    def forward(self, x):
        h = x * 1
        runtime.record("moe:ready")
        out = self.shared(h)
        runtime.wait("moe:shared_done")
        return out + x * 2


class Late(Early):
    def forward(self, x):
        h = x * 1
        runtime.record("moe:ready")
        out = self.shared(h)
        y = x * 2
        runtime.wait("moe:shared_done")
        return out + y
"""

_KEEP = re.compile(r"\w+\.record_stream\(x, \"shared\"\)")


def _code() -> str:
    return transform_source(SOURCE, path="m.py", target="portable")


def test_the_input_is_kept_once() -> None:
    assert len(_KEEP.findall(_code())) == 1


@pytest.mark.parametrize("caller", ["Early", "Late"])
def test_race_free_and_exact(caller: str) -> None:
    x = torch.randn(2, 3)
    got = run_checked(_code(), "portable", lambda m: getattr(m, caller)(), (x,))
    torch.testing.assert_close(got, torch.sigmoid(x) * 2 + x * 2)


def test_without_the_keep_a_caller_that_allocates_first_races() -> None:
    code = _KEEP.sub("pass", _code())
    x = torch.randn(2, 3)
    run_checked(code, "portable", lambda m: m.Early(), (x,))
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(code, "portable", lambda m: m.Late(), (x,))
