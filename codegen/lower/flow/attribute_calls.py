"""Where a call through an attribute of the caller's object goes: ``self.norm(x)`` runs the ``forward`` of the class
``__init__`` makes ``self.norm`` of, ``self.cache.update(x)`` that class's ``update``.

The class is read where the run index records the attribute's store (``codegen/index/definitions.py``), or where a
factory of the run that makes it is defined (``factory_made.py``); a torch layer writes the tensors its caller hands
it as torch's table says, read with the call that built it (``nn.ReLU(inplace=True)``: ``torch_layer_writes.py``);
an attribute a base class in another module assigns is read there (``class_chain.forward_of``), and a method a base
of the run defines where the object's class does not (``inherited_methods.py``). The module's own functions and
imports are ``imported_writes.ModuleFunctions``', which asks this module of every such call.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from codegen.index import scan
from codegen.index.class_chain import forward_of, unknown_attribute
from codegen.index.factory_made import made_by
from codegen.lower.flow.foreign_writes import every_argument
from codegen.lower.flow.inherited_methods import base_method
from codegen.lower.flow.init_builds import built_call
from codegen.lower.flow.torch_layer_writes import torch_layer_written

if TYPE_CHECKING:
    from codegen.lower.flow.imported_writes import ModuleFunctions, Reached

__all__ = ["attribute_call"]


def attribute_call(
    module: ModuleFunctions, call: ast.Call, owner: str, rest: tuple[str, ...]
) -> Reached | frozenset[str] | None:
    """Where ``call`` of ``self.<rest>`` in a method of class ``owner`` of ``module`` goes, for an attribute
    ``__init__`` makes of one class: a function of the run, or the caller's names it may write."""
    made = module.index.submodules.get(f"{module.key}:{owner}", {}).get(rest[0])  # type: ignore[attr-defined]
    if made is None or scan.own_call(made):  # a base's in another module, one the run lacks, a factory handed
        return _inherited(module, call, owner, rest)
    factory = made_by(module.index, module.key, made)
    home, made = factory or (module.key, made)  # a factory's class, named at home
    held = module if home == module.key else module.by_key(home)
    if held is None:
        return every_argument(call)

    def built() -> ast.Call | None:  # the call that made it, read only for a torch layer
        return None if factory else built_call(module.index, module.key, owner, rest[0])

    written = _torch_layer(held, call, made, rest, built)
    return written if written is not None else _made(held, call, made, rest)


def _torch_layer(
    held: ModuleFunctions, call: ast.Call, made: str, rest: tuple[str, ...], built: Callable[[], ast.Call | None]
) -> frozenset[str] | None:
    """The caller's names ``self.act(x)`` writes where ``made`` names a torch layer of the table (``nn.ReLU``
    imported in ``held``), built by the call ``built`` finds (None: not known); None for any other class or
    method, or a layer the table does not list."""
    layer = held.binding(made.split(".")[0]) if rest[1:] in ((), ("forward",)) else None
    return torch_layer_written(call, (*layer, *made.split(".")[1:]), built()) if layer is not None else None


def _made(held: ModuleFunctions, call: ast.Call, made: str, rest: tuple[str, ...]) -> Reached | frozenset[str] | None:
    """``self.norm(x)`` / ``self.cache.update(x)`` for an attribute holding the class ``made`` names in ``held``."""
    parts = tuple(made.split("."))  # ``Norm``, or ``layers.Norm`` through ``from . import layers``
    if made in held or (made not in held.classes and held.binding(parts[0]) is None):
        return every_argument(call)  # a factory whose class is not known, an alias, a local: any class
    method = (*parts, *rest[1:]) if len(rest) > 1 else (*parts, "forward")
    return held.inside(call, method, 0) if made in held.classes else held.imported(call, method, 0, True)


def _inherited(
    module: ModuleFunctions, call: ast.Call, owner: str, rest: tuple[str, ...]
) -> Reached | frozenset[str] | None:
    """``self.norm(x)`` / ``self.cache.update(x)`` for an attribute a base class in another module assigns
    (``class_chain.py``); a base of the package the run does not hold may assign anything: every argument."""
    if (owner, rest[0]) not in module.forwards:
        module.forwards[(owner, rest[0])] = forward_of(module.index, module.key, owner, rest[0])
    found = module.forwards[(owner, rest[0])]
    if found is None:  # no attribute a base assigns: a method a base of the run defines (``inherited_methods``)
        inherited = base_method(module.index, module.key, owner, rest)
        if inherited is None:  # an attribute the object stores, of a class not known: any class
            return every_argument(call) if unknown_attribute(module.index, module.key, owner, rest[0]) else None
        held = module if inherited[0] == module.key else module.by_key(inherited[0])
        return held.inside(call, inherited[1:], 0) if held is not None else None
    home, qualname = found
    held = module.by_key(home) if home else None
    if held is None:
        return every_argument(call)
    return held.inside(call, (qualname.rpartition(".")[0], *(rest[1:] or ("forward",))), 0)
