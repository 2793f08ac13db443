"""Whether the class every element of the object's module list holds says what a call on an item writes.

``item_state_writes.py`` reads ``self.layers[i](h)`` and ``self.ds[j].prepare(h)`` as writing the list's state
and anything under it: nothing there says which class the item is. Where the list's element class is known
(``object_submodules.element_class``: the class ``nn.ModuleList(Layer() for ...)`` holds), the method itself
decides: torch's by the table (``unread_methods.py``, which names the list's state where it writes), and a class
of the module by its body and the calls it makes (``call_state_writes.method_state_writes``). A method that
changes nothing of its object (``Layer.forward`` running only its submodules' ``nn.Linear``) writes nothing, so a
staging side call reading ``self.layers[i + 1].qweight`` keeps its overlap across the layer call. Where the
method is inherited, or the class is not the module's own, nothing is decided: the coarse reading stands.
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.class_chain import class_of
from codegen.lower.flow.import_chains import call_chain
from codegen.lower.flow.imported_writes import ModuleFunctions
from codegen.lower.flow.object_submodules import element_class, submodule_class
from codegen.lower.flow.torch_module_methods import torch_class

__all__ = ["item_call", "item_call_decided", "own_method_writes"]


def item_call(func: ast.expr, receiver: str) -> tuple[str, str] | None:
    """(list attribute, method) of ``self.layers[i].reset_parameters`` (``forward`` for ``self.layers[i]``)."""
    method = func.attr if isinstance(func, ast.Attribute) else "forward"
    item = func.value if isinstance(func, ast.Attribute) else func
    chain = call_chain(item.value) if isinstance(item, ast.Subscript) else None
    return (chain[1], method) if chain is not None and len(chain) == 2 and chain[0] == receiver else None


def item_call_decided(call: ast.Call, functions: object, owner: str | None, receiver: str | None) -> bool:
    """``call`` is on an item of ``receiver``'s list whose element class says what it writes: torch's (the table), a
    torch submodule of the element (``self.layers[i].proj(h)``), or a method the module's own class defines (its
    body). ``call_state_writes`` then answers for it (``unread_methods.py``: the list's state where it writes)."""
    if not isinstance(functions, ModuleFunctions) or owner is None or receiver is None:
        return False
    found = item_call(call.func, receiver)
    held = element_class(functions, owner, found[0]) if found is not None else None
    if found is None or held is None:
        return False
    if torch_class(functions, held) is not None or own_method_writes(functions, held, found[1]) is not None:
        return True
    inner = submodule_class(functions, held, found[1])
    return inner is not None and torch_class(*inner) is not None


def own_method_writes(functions: ModuleFunctions, held: str, method: str) -> bool | None:
    """Whether ``method`` of the module's class ``held`` changes its object (its body and the calls it makes:
    ``call_state_writes.method_state_writes``); None where the class does not define it."""
    cls = class_of(functions.index, functions.key, held)
    fn = next((f for f in scan.functions_of(cls) if f.name == method), None) if cls is not None else None
    if fn is None:
        return None
    from codegen.lower.flow.call_state_writes import method_state_writes  # it reads this module's callers

    return bool(method_state_writes(fn, functions, held))
