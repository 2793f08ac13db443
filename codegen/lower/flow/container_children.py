"""The children a torch container runs, read where the caller's object builds it: what its ``forward`` writes.

``self.seq = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))`` in ``__init__``, then ``self.seq(x)``:
``Sequential.forward`` writes nothing itself, it calls each child in turn (``torch_module_methods.py``: it runs its
children), and the batch norm's ``forward`` counts its batches and updates its running stats in place. So the
container's call writes its state where some child's call does, read from the arguments of the one call that builds it:
a call of a class (torch's, or one the run reads: the ``forward`` it defines, by its body) is a child, a literal (a
layer count) is none, and anything else (a module held by a name, ``*layers``, an ``OrderedDict``) is a child nothing
says of: the call may write. An attribute stored elsewhere too, or built otherwise, has children nothing says of as
well. Children ``__init__`` holds in a local first (``layer = Layer(d); nn.TransformerEncoder(layer, 6)``,
``nn.Sequential(*blocks)`` of a list made once) are read through it (``init_locals.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from codegen.index import scan
from codegen.index.class_chain import home_of
from codegen.lower.flow.imported_writes import ModuleFunctions, module_functions
from codegen.lower.flow.init_builds import arguments
from codegen.lower.flow.item_calls import own_method_writes
from codegen.lower.flow.torch_module_methods import torch_class

__all__ = ["children_write"]

Writes = Callable[[str, ast.Call], bool]  # a child's class (dotted) and the call making it -> it may write


def children_write(functions: ModuleFunctions, built: ast.Call | None, writes: Writes) -> bool:
    """Some child of the container ``built`` makes may write its state when the container runs it (see above)."""
    if built is None:
        return True
    return any(_child_writes(functions, a, writes) for a in arguments(built))


def _child_writes(functions: ModuleFunctions, value: ast.expr, writes: Writes) -> bool:
    if isinstance(value, ast.Constant):
        return False  # a size, a name, a flag: no module
    dotted = scan.dotted_name(value.func) if isinstance(value, ast.Call) else None
    if dotted is None or not isinstance(value, ast.Call) or not _a_module_class(functions, dotted):
        return True
    own = _own_forward_writes(functions, dotted)
    return own if own is not None else writes(dotted, value)


def _own_forward_writes(functions: ModuleFunctions, dotted: str) -> bool | None:
    """Whether the ``forward`` a class of the run defines itself changes its object (its body:
    ``item_calls.own_method_writes``), read in the module holding the class; None where it does not define one."""
    home = home_of(functions.index, functions.key, dotted)
    held = functions if home is None or home[0] == functions.key else _module(functions, home[0])
    return own_method_writes(held, home[1], "forward") if home is not None and held is not None else None


def _module(functions: ModuleFunctions, key: str) -> ModuleFunctions | None:
    tree_of = getattr(functions.index.returns, "tree_of", None)  # type: ignore[attr-defined]
    tree = tree_of(key) if tree_of is not None else None
    return module_functions(functions.index, key, tree) if tree is not None else None


def _a_module_class(functions: ModuleFunctions, dotted: str) -> bool:
    """``dotted`` names torch's module class of the table or a class the run reads (not a builtin, a factory)."""
    return torch_class(functions, dotted) is not None or home_of(functions.index, functions.key, dotted) is not None
