"""Whether one read of a name in an expression is an op on its memory (``used_params.py`` asks, name by name).

The read is followed up through views (``x.unsqueeze(1)``, ``x[i]``, ``x.T``) to what takes it: an arithmetic or
comparison operand, a tensor method of ATen that reads more than metadata (not ``new_zeros``, ``size``), or an argument
of a ``torch`` function (also inside a list or tuple display, ``torch.cat([a, b])``) is an op, unless the function
may hand it back as it came (``F.dropout(x, p, training=self.training)``: in eval, ``x`` itself;
``torch_functional.handed_back``), where it is read only as the call's result is (``F.dropout(x, ...) + y``: either
the call ran an op on ``x`` or its result is ``x``; a name bound to that result holds ``x`` too, ``handed_names``);
an argument of a function
of the user's package the call surely reaches (``call_targets.py``: a module-level function, a private method of the
caller's class, a submodule's ``forward``) is one where that function surely uses its parameter (``follow``:
``used_params.surely_reads``, at most ``_DEPTH`` calls deep). A submodule of one of torch's layer classes (``self.proj =
nn.Linear(...)``) reads the arguments its class's ``forward`` surely runs an op on, as torch's sources say
(``torch_layer_reads.py``: ``nn.Linear`` its input; ``nn.Identity``, ``nn.Flatten``, ``nn.Dropout`` nothing). A tuple
passed whole counts for one of its elements where the function surely reads that element. Anything else (a call the run
cannot see, a value stored or returned) is no op here.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.index import scan
from codegen.index.call_targets import Scope, call_target
from codegen.index.factory_made import made_by
from codegen.index.returned import bound_once
from codegen.index.walked import per_node, walked
from codegen.lower.flow.imported_writes import module_functions
from codegen.lower.flow.imports import module_bindings
from codegen.lower.flow.schema import aliases_self, writes_self
from codegen.lower.flow.torch_functional import handed_back, handed_back_args
from codegen.lower.flow.torch_layer_reads import layer_reads, submodule_layer, torch_layer

__all__ = ["Scope", "Uses", "handed_names", "parents_of", "torch_names"]

_META = frozenset({"shape", "dtype", "device", "ndim", "size", "dim", "numel", "stride", "is_contiguous", "data_ptr"})
_SHAPED = frozenset({"is_tensor", "is_floating_point", "is_complex", "numel", "typename", "record_stream"})
_VIEWS = frozenset({"T", "mT", "H", "mH"})
_DEPTH = 4
_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _shaped(name: str) -> bool:
    """A method or ``torch`` function that reads a tensor's metadata only (``new_zeros``, ``empty_like``)."""
    return name in _META or name in _SHAPED or name.startswith("new_") or name.endswith("_like")


def parents_of(node: ast.AST) -> dict[int, ast.AST]:
    return {id(child): parent for parent in walked(node) for child in ast.iter_child_nodes(parent)}


@attrs.frozen(kw_only=True)
class Uses:
    scope: Scope
    parents: dict[int, ast.AST]
    depth: int
    follow: Callable[[Scope, _Function, str, int], bool]  # the function surely reads that key (``used_params``)

    def used(self, node: ast.expr) -> bool:
        """The value of ``node`` (a name, or a view of one) is read by an op."""
        parent = self.parents.get(id(node))
        if isinstance(parent, (ast.Subscript, ast.Attribute)) and parent.value is node:
            return self._member(parent)
        if isinstance(parent, (ast.BinOp, ast.AugAssign)) or (
            isinstance(parent, ast.UnaryOp) and not isinstance(parent.op, ast.Not)
        ):
            return True
        if isinstance(parent, ast.Compare):
            return not all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in parent.ops)
        if isinstance(parent, ast.keyword):
            call = self.parents.get(id(parent))
            return isinstance(call, ast.Call) and self._argument(call, parent.arg)
        if isinstance(parent, ast.Call) and node in parent.args:
            return self._argument(parent, parent.args.index(node))
        if isinstance(parent, (ast.List, ast.Tuple)):
            call = self.parents.get(id(parent))
            return isinstance(call, ast.Call) and parent in call.args and self._torch(call.func)
        return False

    def passed(self, node: ast.Name, index: int) -> bool:
        """The tuple ``node`` is passed whole to a call that surely reads its element ``index``."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.keyword):
            call = self.parents.get(id(parent))
            return isinstance(call, ast.Call) and self._argument(call, parent.arg, index)
        if isinstance(parent, ast.Call) and node in parent.args:
            return self._argument(parent, parent.args.index(node), index)
        return False

    def _member(self, member: ast.Subscript | ast.Attribute) -> bool:
        """``x[i]`` or ``x.attr``: a view followed on, a method that reads data, or metadata (no read)."""
        if isinstance(member, ast.Subscript) or member.attr in _VIEWS:
            return self.used(member)
        call = self.parents.get(id(member))
        if _shaped(member.attr) or not (isinstance(call, ast.Call) and call.func is member):
            return False
        if aliases_self(member.attr):
            return self.used(call)
        return writes_self(member.attr) is not None  # an ATen op (a name the table does not hold: unknown)

    def _argument(self, call: ast.Call, slot: int | str | None, index: int | None = None) -> bool:
        """``call`` surely reads its argument ``slot`` (``index``: that element of the tuple passed there)."""
        if self._torch(call.func):
            shaped = isinstance(call.func, ast.Attribute) and _shaped(call.func.attr)
            handed = not shaped and handed_back(call, _dotted(self.scope, call.func), slot)
            return not shaped and (not handed or (index is None and self.used(call)))  # its result is read
        target = call_target(self.scope, call.func)
        if target is None and slot is not None and index is None:
            return self._layer_reads(call.func, slot)
        if target is None or slot is None or self.depth >= _DEPTH:
            return False
        scope, fn = target
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        params = params[1:] if scope.receiver is not None else params
        if isinstance(slot, int) and any(isinstance(a, ast.Starred) for a in call.args[: slot + 1]):
            return False
        param = slot if isinstance(slot, str) else (params[slot] if slot < len(params) else None)
        if param is None:
            return False
        return self.follow(scope, fn, param if index is None else f"{param}[{index}]", self.depth + 1)

    def _torch(self, func: ast.expr) -> bool:
        return _torch(self.scope, func)

    def _layer_reads(self, func: ast.expr, slot: int | str) -> bool:
        """``self.proj(x)`` of a submodule of torch's class whose ``forward`` surely reads that argument
        (``torch_layer_reads.py``)."""
        scope = self.scope
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)) or scope.owner is None:
            return False
        made = scope.index.submodules.get(f"{scope.module}:{scope.owner}", {}).get(func.attr)  # type: ignore[attr-defined]
        if made is None:  # a module the run reads for its functions only (``returns.tree_of``)
            classes = [c for c in scope.tree.body if isinstance(c, ast.ClassDef) and c.name == scope.owner]
            made = scan.submodule_assignments(classes[0]).get(func.attr) if len(classes) == 1 else None
        if func.value.id != scope.receiver:
            return False
        if made is None:  # assigned by a base in another module of the run, or by nothing the run reads
            layer = submodule_layer(scope.index, scope.module, scope.owner, func.attr)
        else:
            layer = _made_layer(scope, made)
        return layer is not None and layer_reads(layer, slot)


def _torch(scope: Scope, func: ast.expr) -> bool:
    """``torch.cat``, ``F.rms_norm``: a function of an imported ``torch`` module."""
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in torch_names(scope.tree)


def _dotted(scope: Scope, func: ast.expr) -> tuple[str, ...]:
    """``F.dropout`` -> ``torch.nn.functional.dropout``, through the module's imports."""
    chain = (scan.dotted_name(func) or "").split(".")
    bound = module_bindings(scope.tree, "").get(chain[0])
    if bound is None:
        return tuple(chain)
    return (*bound.module.split("."), *([bound.name] if bound.name else []), *chain[1:])


def handed_names(scope: Scope, stmt: ast.stmt, names: set[str]) -> set[str]:
    """The name ``stmt`` binds to a ``torch`` call that may hand back, as it came, the tensor one of ``names`` holds
    (``z = F.dropout(t, p, training=self.training)``: ``t`` in eval, ``torch_functional.handed_back_args``). It holds
    that memory wherever the call ran no op on it, so a later op on it reads the tensor either way."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return set()
    value = stmt.value
    if not (isinstance(value, ast.Call) and _torch(scope, value.func)):
        return set()
    handed = handed_back_args(value, _dotted(scope, value.func))
    return {stmt.targets[0].id} if any(isinstance(a, ast.Name) and a.id in names for a in handed) else set()


def _made_layer(scope: Scope, made: str) -> str | None:
    """The table's class ``made`` names in the scope's module: itself, or what a factory of the run makes
    (``factory_made.py``: ``self.proj = linear(h, h)``, ``def linear(...): return nn.Linear(...)``)."""
    home, made = made_by(scope.index, scope.module, made) or (scope.module, made)
    tree_of = getattr(getattr(scope.index, "returns", None), "tree_of", None)
    tree = scope.tree if home == scope.module else tree_of(home) if tree_of is not None else None
    return torch_layer(module_functions(scope.index, home, tree), made) if tree is not None else None


@per_node
def torch_names(tree: ast.Module) -> frozenset[str]:
    """The names the module binds once, at its top, to ``torch`` or a module of it (``import torch``, ``from torch.nn
    import functional as F``)."""
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found |= {a.asname or a.name.partition(".")[0] for a in node.names if a.name.partition(".")[0] == "torch"}
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").partition(".")[0] == "torch":
            found |= {a.asname or a.name for a in node.names}
    return frozenset(found & bound_once(tree))
