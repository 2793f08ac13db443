"""The corpus overlap benchmark: the generated code keeps the hand schedule's simulated saving.

The four entries issue 26 added are measured (docs/performance.md, section 5.1).
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from bench import overlap_kept_corpus
from bench.overlap_kept import GOAL
from bench.overlap_kept_shapes import Captured, recording_backend, schedule

NEW = ["ge_mla_waits", "ge_moe_mc2_waits", "same_stream_chain", "vllm_native_shared_expert"]


@pytest.mark.parametrize("name", NEW)
def test_generated_code_keeps_the_hand_saving(name: str) -> None:
    generated, hand = overlap_kept_corpus.compare(name)
    assert hand > 0.05, "the hand schedule overlaps too little to measure anything"
    assert generated >= GOAL * hand, f"{name} keeps {generated / hand:.1%} of the hand saving"


def test_every_corpus_entry_with_a_hand_version_is_measured() -> None:
    from corpus.registry import NAMES

    assert overlap_kept_corpus.entries() == [name for name in NAMES if name in overlap_kept_corpus.entries()]
    assert set(NEW) <= set(overlap_kept_corpus.entries())


class _WritesItsInput(nn.Module):
    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        kept = x[index.nonzero().squeeze(1)]  # a data-dependent size
        x.add_(1)
        return kept * 2


def test_the_cost_model_prices_the_shapes_of_a_real_run() -> None:
    seen: list[Captured] = []
    x, index = torch.ones(8, 4), torch.tensor([1, 0, 1, 1, 0, 0, 0, 1])
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        torch._dynamo.reset()
        torch.compile(_WritesItsInput(), backend=recording_backend(seen, lambda gm, _: gm.forward), fullgraph=True)(
            x, index
        )
    (kept_x,) = [value for value in seen[0].inputs if value.shape == (8, 4)]
    assert torch.equal(x, torch.full((8, 4), 2.0)) and torch.equal(kept_x, torch.ones(8, 4)), (
        "the inputs are kept as they were before the run"
    )
    (mul,) = [slot for slot in schedule(seen[0]).slots if slot.label == "mul"]
    assert mul.end - mul.start == pytest.approx(1e6 * 2 * 4 * 4 * 4 / 1.6e12)  # 4 rows kept, read and written
