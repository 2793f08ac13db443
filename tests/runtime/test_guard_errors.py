"""Guard mistakes said as one positioned line at the decorator (NPD205, NPD206), and compile's input checked."""

from __future__ import annotations

import os

import pytest
import torch

import guard_models
import npudsl
from helpers import marked_line


def _where(marker: str) -> str:
    path = os.path.relpath(guard_models.__file__).replace(os.sep, "/")
    return f"{path}:{marked_line(guard_models.__file__, marker).rsplit(':', 1)[1]}:6: "


def test_a_tensor_for_a_bool_guard_names_the_guard_and_its_position() -> None:
    model = guard_models.Flagged()
    with pytest.raises(npudsl.NpudslError) as raised:
        model.branch(torch.ones(2), enabled=torch.tensor(True))
    assert str(raised.value).startswith(_where("P:tensor") + "NPD206 when='enabled' on Flagged.branch is a tensor")
    assert "(hint: pass True/False, e.g. enabled=True, not torch.tensor(True)" in str(raised.value)


def test_a_python_bool_guard_still_runs() -> None:
    model = guard_models.Flagged()
    assert torch.equal(model.branch(torch.ones(2), enabled=False), torch.full((2,), 2.0))


def test_a_typo_in_a_self_guard_names_the_attribute_and_the_close_one() -> None:
    with pytest.raises(npudsl.NpudslError) as raised:
        guard_models.Flagged().typo(torch.ones(2))
    assert str(raised.value) == (
        _where("P:typo") + "NPD205 'self.multistrem' on Flagged.typo: Flagged has no "
        "attribute 'multistrem' (hint: did you mean \"self.multistream\"?)"
    )


def test_compile_refuses_a_plain_function_with_a_hint() -> None:
    def double(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    with pytest.raises(
        npudsl.NpudslError,
        match=r"^npudsl.compile takes an nn.Module, not a function "
        r".*double \(hint: call the decorated code from an nn.Module's forward",
    ):
        npudsl.compile(double)


def test_compile_refuses_the_class_instead_of_an_instance() -> None:
    with pytest.raises(npudsl.NpudslError, match=r"not the class Flagged \(hint: pass Flagged\(\.\.\.\)\)"):
        npudsl.compile(guard_models.Flagged)


def test_a_guard_rooted_at_nothing_is_positioned_with_a_hint() -> None:
    from npudsl.runtime.guards import read_dotted

    def side(x):
        return x

    with pytest.raises(npudsl.NpudslError) as raised:
        read_dotted("cfg.limit", side, (1,), {})
    here = os.path.relpath(__file__).replace(os.sep, "/")
    assert str(raised.value).startswith(
        f"{here}:{side.__code__.co_firstlineno}:5: NPD204 'cfg.limit': 'cfg' is neither a parameter of"
    )
    assert str(raised.value).endswith(
        "(hint: root it at self, a parameter or a global of the module, as npudsl check says)"
    )
