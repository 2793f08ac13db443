"""Seed 003, scenario 2: with target="portable", an output used after the next call raises StaleOutputError."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

import npudsl
import stale_models
from helpers import marked_line
from npudsl.runtime import loader

STEPS = 4


@pytest.fixture(autouse=True)
def _fresh_transforms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "_CACHE", {})


def _tokens() -> list[torch.Tensor]:
    torch.manual_seed(1)
    return [torch.randn(2, 4) for _ in range(STEPS)]


def _keep_last(step: Callable[[torch.Tensor], torch.Tensor]) -> list[torch.Tensor]:
    """A sampler that compares each step's output with the previous one it kept."""
    last, changes = None, []
    for x in _tokens():
        out = step(x)
        if last is not None:
            changes.append(out - last)  # U:keep_last
        last = out
    return changes


def _feed_back(step: Callable[[torch.Tensor], torch.Tensor]) -> list[torch.Tensor]:
    """A decode loop: each step's output is the next step's input; every output is read before the next call."""
    x, seen = _tokens()[0], []
    for _ in range(STEPS):
        x = step(x)
        seen.append(x.sum())
    return seen


def test_keeping_last_steps_output_raises_naming_both_lines() -> None:
    compiled = npudsl.compile(stale_models.Step(), fullgraph=True)
    with pytest.raises(npudsl.StaleOutputError) as caught:
        _keep_last(compiled)
    message = str(caught.value)
    made = marked_line(stale_models.__file__, "P:logits")
    assert message.startswith(f"output 'logits' of the compiled model, made at {made} by call 1, ")
    assert f"is used at {marked_line(__file__, 'U:keep_last')} after call 2 overwrote its graph memory" in message
    assert "@keep_output(clone=True)" in message and "clone_outputs=True" in message


def test_the_error_is_raised_where_the_stale_tensor_is_read() -> None:
    compiled = npudsl.compile(stale_models.Step(), fullgraph=True)
    first = compiled(_tokens()[0])
    shape = first.shape
    compiled(_tokens()[1])
    assert first.shape == shape and first.dtype == torch.float32  # its description is not graph memory
    for read in (lambda: first.sum(), lambda: first[0], lambda: first.tolist(), lambda: torch.cat([first, first])):
        with pytest.raises(npudsl.StaleOutputError, match="after call 2 overwrote"):
            read()


def test_passing_a_stale_output_to_the_model_raises_one_clear_error() -> None:
    compiled = npudsl.compile(stale_models.Step(), fullgraph=True)
    first = compiled(_tokens()[0])
    compiled(_tokens()[1])
    with pytest.raises(npudsl.StaleOutputError) as caught:
        compiled(first)  # U:passed_stale
    assert f"is used at {marked_line(__file__, 'U:passed_stale')}" in str(caught.value)
    assert caught.value.__cause__ is None and "BackendCompilerFailed" not in str(caught.value)


@pytest.mark.parametrize(
    ("model", "options"),
    [
        (stale_models.ClonedStep, {}),
        (stale_models.Step, {"clone_outputs": True}),
    ],
    ids=["keep_output_clone", "clone_outputs"],
)
def test_cloned_outputs_are_never_stale(model: type[torch.nn.Module], options: dict[str, bool]) -> None:
    expected = _keep_last(stale_models.Step())
    changes = _keep_last(npudsl.compile(model(), fullgraph=True, **options))
    assert all(torch.equal(a, b) for a, b in zip(changes, expected, strict=True))


def test_a_copy_the_user_made_is_never_stale() -> None:
    compiled = npudsl.compile(stale_models.Step(), fullgraph=True)
    expected = _keep_last(stale_models.Step())
    changes = _keep_last(lambda x: compiled(x).clone())
    assert all(torch.equal(a, b) for a, b in zip(changes, expected, strict=True))


def test_an_output_passed_back_as_the_next_input_is_fine() -> None:
    expected = _feed_back(stale_models.Step())
    seen = _feed_back(npudsl.compile(stale_models.Step(), fullgraph=True))
    assert all(torch.equal(a, b) for a, b in zip(seen, expected, strict=True))


def test_inputs_are_not_outputs() -> None:
    compiled = npudsl.compile(stale_models.Step(), fullgraph=True)
    tokens = _tokens()
    for x in tokens:
        compiled(x)
    assert torch.stack(tokens).sum().isfinite()  # every input is still the user's
