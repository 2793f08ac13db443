"""GE: which attributes of the caller's object are submodules, whose call changes only the submodule itself.

A fork edge may go where no other work of the function changes the object's state the call reads
(``ge_given.state_untouched``). A call through the object, ``self.gate_proj(x)``, may be a method of the object
(anything of it may change) or a submodule's call (only that submodule may). It is the second where ``__init__``
assigns the attribute a torch.nn layer (``self.gate_proj = nn.Linear(...)``) or an instance of a class of the same
module, built from arguments that do not pass the object itself (a layer that holds its parent could change it).
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.walked import walked_of

__all__ = ["submodules"]


def submodules(tree: ast.Module, qualname: str, receiver: str | None) -> frozenset[str]:
    """The attributes ``__init__`` of the caller's class assigns a submodule (see above)."""
    owner = qualname.rpartition(".")[0]
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    if receiver is None or owner not in classes:
        return frozenset()
    return frozenset(
        attr
        for attr, made in _built(classes[owner]).items()
        if made is not None and (made.startswith(("nn.", "torch.nn.")) or made in classes)
    )


def _built(cls: ast.ClassDef) -> dict[str, str | None]:
    """``self.attr = Layer(...)`` in ``__init__`` -> "Layer"; None where an argument reads ``self`` or the
    attribute is assigned more than once."""
    found: dict[str, str | None] = {}
    for fn in (f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"):
        receiver = fn.args.args[0].arg if fn.args.args else None
        for node in walked_of(fn, ast.stmt):
            for target in scan.assignment_targets(node):
                if isinstance(target, ast.Attribute) and _is(target.value, receiver):
                    found[target.attr] = None if target.attr in found else _layer(node, receiver)
    return found


def _layer(node: ast.stmt, receiver: str | None) -> str | None:
    value = getattr(node, "value", None)
    if not isinstance(value, ast.Call) or any(_is(n, receiver) for n in ast.walk(value)):
        return None
    return scan.dotted_name(value.func)


def _is(node: ast.AST, receiver: str | None) -> bool:
    return isinstance(node, ast.Name) and node.id == receiver
