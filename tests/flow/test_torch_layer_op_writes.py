"""No layer of the installed torch writes its input by an in-place op of its own: only through ``torch.nn.functional``.

``torch_layer_writes_table.py`` reads what a layer's ``forward`` hands to a function of ``torch.nn.functional`` that
writes (``nn.ReLU(inplace=True)``). A ``forward`` could also write its input itself, ``input.add_(1)``,
``torch.relu_(input)``, ``input += b``, in a method it calls, on a view: ``forward_op_writes.py`` reads that by the
ATen schema of each op (``param_writes.py``, the reading every function of the run gets), and the builder adds what
it finds. Here it finds nothing in the pinned torch, as its docstring says; on made-up layers it finds each spelling.

Each class is the one ``torch.nn`` exports by its name: ``_functions.py`` defines autograd ``Function`` classes named
``SyncBatchNorm`` and ``CrossMapLRN2d``, and, first in sorted order, they stood for the layers (their ``forward``'s
``ctx`` stores read as writes of every argument, bases ``Function`` instead of ``_BatchNorm``/``Module``).
"""

from __future__ import annotations

import ast

import pytest

from codegen.lower.flow import torch_module_sources
from codegen.lower.flow.forward_op_writes import forward_op_writes
from codegen.lower.flow.torch_module_sources import TorchClass, TorchFile, method_home, torch_classes

torch = pytest.importorskip("torch")

LAYERS = """\
def _bump(t):
    t.mul_(2)


class Viewed(Module):
    def forward(self, input, other):
        v = input.view(-1)
        return v.clamp_(0) + other


class Helped(Module):
    def forward(self, input, other):
        self._helper(other)
        return _bump(input)

    def _helper(self, t):
        t += 1


class Inherits(Helped):
    pass


class FunctionForm(Module):
    def forward(self, input):
        return torch.relu_(input[0])


class OwnMemory(Module):
    def forward(self, input):
        out = input.new_zeros(input.shape)
        out.add_(input)
        return out.exp()
"""


def _made_up() -> dict[str, TorchClass]:
    tree = ast.parse(LAYERS)
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    file = TorchFile(frozenset({"torch"}), functions)
    made = {n.name: torch_module_sources._class(n, file) for n in tree.body if isinstance(n, ast.ClassDef)}
    return {**torch_classes(), **made}


def test_no_layer_of_the_installed_torch_writes_its_input_by_an_op_of_its_own() -> None:
    classes = torch_classes()
    assert {name: w for name in classes if (w := forward_op_writes(classes, name))} == {}


@pytest.mark.parametrize(
    ("cls", "written"),
    [
        ("Viewed", ["input@0"]),
        ("Helped", ["input@0", "other@1"]),
        ("Inherits", ["input@0", "other@1"]),
        ("FunctionForm", ["input@0"]),
        ("OwnMemory", []),
    ],
)
def test_each_spelling_of_an_in_place_op_is_read(cls: str, written: list[str]) -> None:
    assert forward_op_writes(_made_up(), cls) == written


def test_each_class_is_the_one_torch_nn_exports() -> None:
    classes = torch_classes()
    exported = [n for n in classes if isinstance(getattr(torch.nn, n, None), type)]
    assert {"SyncBatchNorm", "CrossMapLRN2d", "ReLU6"} <= set(exported)
    for name in exported:
        bases = tuple(b.__name__ for b in getattr(torch.nn, name).__bases__ if b is not object)
        assert classes[name].bases == bases, name


def test_a_method_is_found_where_python_finds_it() -> None:
    classes = torch_classes()
    assert method_home(classes, "ReLU6", "forward") == "Hardtanh"
    assert method_home(classes, "ReLU6", "__init__") == "ReLU6"
    assert method_home(classes, "SyncBatchNorm", "state_dict") == "Module"
    assert method_home(classes, "ReLU6", "no_such_method") is None
    assert method_home(classes, "NotATorchClass", "forward") is None
    for name in classes:
        home = method_home(classes, name, "forward")
        if isinstance(getattr(torch.nn, name, None), type) and home is not None:
            assert getattr(torch.nn, name).forward.__qualname__ == f"{home}.forward", name
