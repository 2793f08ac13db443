"""A public function whose side call reads a parameter keeps it, however its callers in the run hold it.

sglang's DSA attention (``tests/corpus/sglang_dsa_alt_stream``, ``npu_mla_preprocess``): the fused prologue reads
``hidden_states`` on "alt_stream", the main stream reads it again, then allocates before the join, which comes
before the function returns. Its one caller in the run reads ``hidden_states`` after the call (the indexer), so in
that model the keep is droppable (``python -m bench.sync_generated sglang_dsa_alt_stream`` names it, once per
layer). The hand version needs none because its helper is private and its caller visibly reads the tensor after
the join. The generated function is public: a caller outside the run may hand it a temporary it never reads again,
and a captured graph frees that tensor after its last use (the main stream's read inside the function), while the
side stream may still read it. ``Holds`` is the run's caller: race-free with the keep taken out. ``Drops``,
appended to the generated code, is a caller the run cannot see: it races once the keep is taken out. The same
function named ``_prep`` (private, every caller in the run holds the tensor: ``codegen/index/held_params.py``)
keeps nothing.
"""

from __future__ import annotations

import pytest
import torch

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


@on_stream("alt")
class Pre(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


class Holds(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = Pre()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 1
        out = prep(self, h)
        return out + h


def prep(m: "Holds", x: torch.Tensor) -> torch.Tensor:
    y = m.pre(x)
    q = x * 3
    r = q + 1
    return y + r
"""

DROPS = """

class Drops(Holds):
    def forward(self, x):
        return prep(self, x * 1)
"""

KEEP = '        runtime.record_stream(x, "alt")\n'


def _generated(source: str = SOURCE) -> str:
    return transform_source(source, path="m.py", target="portable")


def _want(x: torch.Tensor) -> torch.Tensor:
    return x * 2 + x * 3 + 1


def test_the_public_function_keeps_its_parameter_though_the_run_s_caller_holds_it() -> None:
    assert _generated().count(KEEP) == 1


def test_without_the_keep_only_a_caller_that_drops_the_tensor_races() -> None:
    x = torch.randn(4, 3)
    dropped = _generated().replace(KEEP, "") + DROPS
    torch.testing.assert_close(run_checked(dropped, "portable", lambda m: m.Holds(), (x,)), _want(x) + x)
    with pytest.raises(StreamRaceError, match=r"read on stream 'alt'.* then dropped, and stream 'default' allocates"):
        run_checked(dropped, "portable", lambda m: m.Drops(), (x,))
    kept = _generated() + DROPS
    torch.testing.assert_close(run_checked(kept, "portable", lambda m: m.Drops(), (x,)), _want(x))


def test_a_private_function_every_caller_holds_the_tensor_of_keeps_nothing() -> None:
    private = SOURCE.replace("prep(", "_prep(")
    assert "record_stream" not in _generated(private)
