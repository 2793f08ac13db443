"""The return annotations a caller can see by spelling: what a call's result is, where the module says.

A caller's calls carry no types; the annotations the module writes do. A caller sees the module's functions
(``f``), in a method its class's methods (``self.f``) and the torch.nn layers its ``__init__`` assigns
(``self.norm = nn.LayerNorm(h)``: its forward returns one tensor; where the run is given, a base's ``__init__`` of
the run and a factory of the run count too, ``self.proj = linear(d)``), and the run's functions the module imports
(``codegen/index/returns.py``).
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.class_chain import submodule_classes
from codegen.lower.flow.tensors import Returns

__all__ = ["local_returns"]

# torch.nn layers whose forward returns one tensor, as ``__init__`` makes them (``self.norm = nn.LayerNorm(h)``).
_ONE_TENSOR_LAYERS = frozenset(
    {
        "Linear",
        "LayerNorm",
        "RMSNorm",
        "GroupNorm",
        "BatchNorm1d",
        "BatchNorm2d",
        "Embedding",
        "Conv1d",
        "Conv2d",
        "Dropout",
        "Identity",
        "GELU",
        "SiLU",
        "ReLU",
        "Tanh",
        "Sigmoid",
        "Softmax",
    }
)
_TENSOR = ast.parse("torch.Tensor", mode="eval").body


def local_returns(
    tree: ast.Module,
    qualname: str,
    receiver: str | None,
    imported: Returns | None = None,
    *,
    index: object = None,
    module: str = "",
) -> Returns:
    """The return annotations the caller ``qualname`` can see, by spelling; ``imported``: those of the run's
    functions the module imports; ``index`` and ``module``: the run and the caller's module in it, where the layers
    a base's ``__init__`` or a factory of the run makes count too."""
    owner = qualname.rpartition(".")[0]
    found: dict[str, ast.expr] = dict(imported or {})
    found.update(_layers(tree, owner, receiver, index, module))
    found.update(_functions(tree, owner, receiver))
    return found


def _layers(tree: ast.Module, owner: str, receiver: str | None, index: object, module: str) -> Returns:
    """In a method, the torch.nn layers of one tensor its class's ``__init__`` assigns (``self.norm``), or a base's
    of the run, or a factory of the run makes (``class_chain.submodule_classes``)."""
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == owner]
    if receiver is None or not classes:
        return {}
    found: Returns = {}
    for attr, (_, made) in submodule_classes(index, module, classes[0]).items():
        layer = made.rpartition(".")[2]
        if made.startswith(("nn.", "torch.nn.")) and layer in _ONE_TENSOR_LAYERS:
            found[f"{receiver}.{attr}"] = _TENSOR
    return found


def _functions(tree: ast.Module, owner: str, receiver: str | None) -> Returns:
    """The module's annotated functions (``f``), and in a method its class's annotated methods (``self.f``)."""
    found: Returns = {}
    for name, fn in scan.functions_by_qualname(tree).items():
        if fn.returns is None:
            continue
        if "." not in name:
            found[name] = fn.returns
        elif receiver is not None and name.rpartition(".")[0] == owner:
            found[f"{receiver}.{name.rpartition('.')[2]}"] = fn.returns
    return found
