"""What a method of the caller's object, or of one of its objects, writes where the run cannot read the method: any
of that object's state.

``class Model(ExtBase)`` with ``ExtBase`` from outside the run (a library, or a module of the package the run does
not hold: a file transformed alone, ``read_classes.py``): ``self.ext_update()``, which neither
``Model`` nor a base of the run defines, runs ``ExtBase``'s method, which may write any tensor of the object in
place (``self.buf.mul_(2)``); ``self.sub.reset()``, where ``__init__`` makes ``self.sub`` of a class from outside the
run (or by a factory of the module that may return anything but a class the run reads or knows: ``read_classes.py``),
may write any of ``self.sub``'s. Nothing the run reads says which,
so such a call writes ``self.*`` (``self.sub`` and ``self.sub.*``), and a pending call that reads any of that
state is joined before it (``crossing_writes.py``); one reading other state keeps its overlap. Before, such a call
wrote only its arguments (``foreign_writes.every_argument``). A method the run reads keeps its precise answer
(``call_state_writes.py``), and torch's classes are known from torch's own sources (``torch_module_methods.py``):
``nn.Linear``'s ``forward`` and ``parameters()`` write no tensor of their object, ``self.norm.reset_running_stats()``,
``self.proj.reset_parameters()``, ``self.to_empty(...)`` inherited from ``nn.Module`` or a batch norm's ``forward``
write its state, as a method the run cannot read may. A tensor's own
methods are read by their spelling (``written_exprs.py``): an attribute ``__init__`` makes by a call of torch is
no object of this kind. A module class of torch the table does not hold (``torch.ao.nn`` quantized and fused modules)
or of torch_npu is read as one the run cannot read. A method called on an item of a layer list
(``self.layers[i].reset_parameters()``) is read in the class every element holds, and writes the list's state; the
submodules and element classes of a class in a module read only when asked come from the class and its bases
(``object_submodules.py``).
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.class_chain import class_of, home_of
from codegen.index.walked import walked_of
from codegen.lower.flow import schema
from codegen.lower.flow.container_children import children_write
from codegen.lower.flow.import_chains import call_chain
from codegen.lower.flow.imported_writes import ModuleFunctions, module_functions
from codegen.lower.flow.init_builds import built_call, stores
from codegen.lower.flow.item_calls import item_call, own_method_writes
from codegen.lower.flow.npu_schema import written_params
from codegen.lower.flow.object_submodules import element_class, submodule_class
from codegen.lower.flow.read_classes import unread_bases, unread_class
from codegen.lower.flow.torch_module_methods import (
    torch_class,
    torch_method_runs_children,
    torch_method_writes,
    torch_method_writes_made,
)

__all__ = ["unread_method_writes"]

_THIRD_PARTY = ("torch", "torch_npu")  # whose classes are known without the run reading them (``read_classes.py``)


def unread_method_writes(call: ast.Call, functions: object, owner: str | None, receiver: str | None) -> frozenset[str]:
    """The caller's state ``call`` may write through a method of its object the run cannot read (see above), for a
    call in a method of class ``owner`` called on ``receiver``; none for any other call."""
    if not isinstance(functions, ModuleFunctions) or owner is None or receiver is None:
        return frozenset()
    item = item_call(call.func, receiver)
    if item is not None:
        return _item_writes(functions, owner, receiver, *item)
    chain = call_chain(call.func)
    if chain is None or chain[0] != receiver:
        return frozenset()
    if len(chain) == 3 and schema.writes_self(chain[2]) is not None:
        return frozenset()  # a tensor's method (``self.buf.sum()``): read by its spelling
    held = submodule_class(functions, owner, chain[1]) if len(chain) in (2, 3) else None
    if len(chain) == 3 or (len(chain) == 2 and held is not None):
        built = built_call(functions.index, functions.key, owner, chain[1])
        method = chain[2] if len(chain) == 3 else "forward"
        unread = held is not None and _writes(*held, method, built=built)
        return frozenset({f"{receiver}.{chain[1]}", f"{receiver}.{chain[1]}.*"}) if unread else frozenset()
    if len(chain) == 2 and not _stored(functions, owner, chain[1]) and _base_writes(functions, owner, chain[1]):
        return frozenset({f"{receiver}.*"})
    return frozenset()


def _item_writes(functions: ModuleFunctions, owner: str, receiver: str, attr: str, method: str) -> frozenset[str]:
    """What ``self.<attr>[i].<method>()`` may write: the list's state, where the class every element holds
    (``codegen/index/elements.py``) writes in that method, or nothing says which class (``nn.ModuleList`` built
    otherwise); a tensor's own method (``self.cache[i].copy_(v)``) is read by its spelling."""
    if schema.writes_self(method) is not None:
        return frozenset()
    held = element_class(functions, owner, attr)
    own = own_method_writes(functions, held, method) if held is not None else None  # the module's class: its body
    unread = held is None or (own if own is not None else _writes(functions, held, method))
    return frozenset({f"{receiver}.{attr}", f"{receiver}.{attr}.*"}) if unread else frozenset()


def _writes(functions: ModuleFunctions, held: str, method: str, depth: int = 0, built: ast.Call | None = None) -> bool:
    """``method`` of an object of the class (or factory) ``held``, made by the call ``built`` where known, may write
    its state: the run cannot read the class, or it is torch's and its method writes (``torch_module_methods.py``:
    ``reset_running_stats``) or runs children that write (``container_children.py``: ``nn.Sequential``), also where
    a class of the module derives it from torch (``class Norm(nn.LayerNorm)``) or a factory of the module returns
    one."""
    torch_cls = torch_class(functions, held)
    if torch_cls is not None and torch_method_runs_children(torch_cls, method):
        return children_write(functions, built, lambda child, call: _writes(functions, child, method, depth + 1, call))
    if torch_cls is not None:
        return torch_method_writes_made(torch_cls, method, built)
    if _untabled(functions, held):
        return True
    if class_of(functions.index, functions.key, held) is not None:
        inner = submodule_class(functions, held, method) if depth < 8 else None
        if inner is not None:  # a submodule the object holds (``self.shared.gate_up_proj(x)``): its ``forward``
            return _writes(*inner, "forward", depth + 1)
        return _base_writes(functions, held, method)
    home = home_of(functions.index, functions.key, held) if depth < 8 else None
    other = _module(functions, home[0]) if home is not None and home[0] != functions.key else None
    if home is not None and other is not None:  # a class of another module of the run (``from .norms import Norm``)
        return _writes(other, home[1], method, depth + 1)
    factory = functions.get(held) if functions.binding(held) is None and depth < 8 else None
    made = [r.value for r in walked_of(factory, ast.Return)] if factory is not None else []
    calls = [(scan.dotted_name(v.func), v) for v in made if isinstance(v, ast.Call)]
    return any(d is not None and _writes(functions, d, method, depth + 1, v) for d, v in calls) or unread_class(
        functions, held
    )


def _module(functions: ModuleFunctions, key: str) -> ModuleFunctions | None:
    """The functions of the run's module ``key``, where the run holds its tree."""
    tree_of = getattr(functions.index.returns, "tree_of", None)  # type: ignore[attr-defined]
    tree = tree_of(key) if tree_of is not None else None
    return module_functions(functions.index, key, tree) if tree is not None else None


def _base_writes(functions: ModuleFunctions, owner: str, method: str) -> bool:
    """``self.method()``, which neither class ``owner`` nor a base of the run defines, may write the object's state:
    a base the run cannot read, or a torch base whose method writes (``self.to_empty(...)``, ``self.reset_parameters()``
    of a subclass of ``nn.Linear``)."""
    cls = class_of(functions.index, functions.key, owner)
    torch_bases = [torch_class(functions, scan.dotted_name(b) or "") for b in cls.bases] if cls is not None else []
    runs = [torch_method_writes(b, method) or torch_method_runs_children(b, method) for b in torch_bases if b]
    written = any(runs)  # children of a derived container (``class Block(nn.Sequential)``) are not read
    untabled = cls is not None and any(_untabled(functions, scan.dotted_name(b) or "") for b in cls.bases)
    return written or untabled or unread_bases(functions, owner)


def _untabled(functions: ModuleFunctions, dotted: str) -> bool:
    """``dotted`` names a class of torch the table does not hold (``torch.ao.nn.intrinsic.BNReLU1d``, a quantized
    module, an observer) or of torch_npu (``FastBatchNorm1d`` counts its batches in place): its methods are not
    read, so they may write its state; an op (``torch.zeros``, ``torch_npu.npu_rms_norm``) makes a tensor instead."""
    root, *rest = dotted.split(".")
    bound = functions.binding(root)
    full = (*bound, *rest) if bound is not None else ()
    if not full or full[0] not in _THIRD_PARTY or torch_class(functions, dotted) is not None:
        return False
    return schema.writes_self(full[-1]) is None and written_params(full[-1]) is None


def _stored(functions: ModuleFunctions, owner: str, attr: str) -> bool:
    """Some method of the class stores ``attr`` on its object: a call of it is of what it holds, not a method."""
    cls = class_of(functions.index, functions.key, owner)
    return cls is None or any(name in (attr, "*") for name, _ in stores(cls))
