"""The hand-annotated Hugging Face MoE files on every device target: transformed, imported from a real file under
the target's CPU stand-ins, captured whole with the target's race-checking backend, and equal to the unmodified
model (the portable target is covered with ``suggest`` in ``test_hf_suggest.py``)."""

from __future__ import annotations

import builtins
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers")
sys.path.insert(0, str(Path(__file__).parents[1] / "suggest"))
from corpus.matrix import _traceable  # noqa: E402

from codegen.driver.api import transform_source  # noqa: E402
from hf_models import ARCHITECTURES, hand_annotated, standalone  # noqa: E402
from npudsl.testing import standins  # noqa: E402
from npudsl.testing.targets import _RECORD_STREAM  # noqa: E402
from npudsl.timeline.capture import load_example, pick_model  # noqa: E402

TARGETS = ("aclgraph", "ge", "npugraph_ex", "cuda")


def _outputs(path: Path, *, target: str | None = None) -> list[torch.Tensor]:
    module = load_example(str(path))
    inputs = module.example_inputs()
    torch.manual_seed(0)
    model = pick_model(module)
    if target is not None:  # one eager step first makes the streams and events (the stand-in has no device)
        with torch.no_grad():
            model(*inputs)
        torch._dynamo.reset()
        model = torch.compile(model, backend=standins.checking_backend(target), fullgraph=True)
    with torch.no_grad():
        out = model(*inputs)
    return [out] if isinstance(out, torch.Tensor) else list(out)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_hand_annotation_is_race_free_and_exact_on_every_target(name: str, target: str, tmp_path: Path) -> None:
    arch = ARCHITECTURES[name]
    original = standalone(arch, tmp_path)
    (tmp_path / "hand").mkdir()
    hand = hand_annotated(arch, original, tmp_path / "hand")
    generated = tmp_path / "hand" / f"gen_{target}_{original.name}"
    generated.write_text(_traceable(transform_source(hand.read_text(), path=str(hand), target=target), target))
    expected = _outputs(original)
    setattr(builtins, _RECORD_STREAM, standins.record_stream)
    try:
        with standins.installed(target):
            actual = _outputs(generated, target=target)
    finally:
        delattr(builtins, _RECORD_STREAM)
    assert len(actual) == len(expected) and all(torch.equal(a, e) for a, e in zip(actual, expected))
    assert "stream" in generated.read_text()  # the shared expert's call site switches streams
