"""Names a statement binds to memory one of its arguments may be: an argument a call returns as it came, a view of
one, or anything a function the run cannot read was given.

``c = x.mul_(2)`` (an ATen op writing ``self`` returns it), ``c = torch.relu_(x)``, ``c =
torch_npu.npu_scatter_nd_update_(x, i, u)`` (its schema's ``-> Tensor(a!)``) and ``k, ckv, kr, ckv_out =
torch_npu.npu_kv_rmsnorm_rope_cache(..., k_cache, ckv_cache)`` (its kernel returns the two caches as they came:
``foreign_writes.foreign_results``) bind names that are the argument: a later write in place through ``c`` writes
``x``, and a call on another stream reading ``c`` reads ``x``. So do views whatever their arguments (``v =
x.view(n, -1)``, ``v = x[i]``, ``v = torch.narrow(x, 0, s, n)``: an op whose ATen schema returns views of
``self``), a torch function called with ``inplace=True`` (``F.relu(x, inplace=True)`` returns ``x``), and the
result of a function no table knows and the run cannot read (``y = extlib.pick(x)``, a torch_npu op the table
lacks or whose kernel writes what nothing declares), or of a submodule whose class the run does not read
(``self.ident(x)``: ``nn.Identity`` hands back its input): it may be, or hold, any tensor it was
given, so it is paired with every argument's memory (only metadata, ``x.shape[0]``, passes none; nor does the
receiver, ``self.pcp_rank``). A function of the run is read (``run_results.py``). The planner groups each such binding
with what the argument may hold (``binding_aliases.py``), as it groups views: more joins at worst, never fewer. A tuple
unpacked from a known op pairs each name with its own element; any other target holds every argument the result
may be. The function an op's name stands for is read through the module's imports (``import torch_npu as tnpu``,
``from torch_npu import npu_silu_``); whether the run can read it, through its ``ModuleFunctions``
(``imported_writes.py``: a frozenset where it cannot).
"""

from __future__ import annotations

import ast

from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.aten_forms import aten_name
from codegen.lower.flow.binding_aliases import iterated, loops
from codegen.lower.flow.call_state_writes import Scope
from codegen.lower.flow.container_results import augmented, concatenated_results, summed_names
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.foreign_writes import every_argument, npu_op
from codegen.lower.flow.imported_writes import ModuleFunctions
from codegen.lower.flow.imports import module_bindings
from codegen.lower.flow.known_results import Held, known_results
from codegen.lower.flow.param_writes import resolved_function
from codegen.lower.flow.run_results import returned_arguments
from codegen.lower.flow.schema import writes_self
from codegen.lower.flow.value_views import choices, viewed
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["Pairs", "result_aliases"]

Pairs = list[tuple[ast.AST, frozenset[str], frozenset[str]]]  # (binding, names bound, memory they may be)
_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Imports = dict[str, tuple[str, ...]]
_Seen = frozenset[_Function]
_ATEN = "torch"


def result_aliases(fn: _Function, tree: ast.Module, scope: Scope | None = None) -> Pairs:
    """Each binding of ``fn`` (``tree``'s function) to a value that may be one of its arguments' memory; ``scope``
    says where a call goes (without it, a call of an imported function that is no torch op may return anything)."""
    return _pairs(fn, _imported(tree), scope, frozenset())


def _pairs(fn: _Function, imported: _Imports, scope: Scope | None, seen: _Seen) -> Pairs:
    found: Pairs = []
    bindings = [*((s, s.targets, s.value) for s in walked_of(fn, ast.Assign)), *_assigned(fn), *augmented(fn, scope)]
    for node, targets, value in bindings:
        held = _held(value, imported, scope, seen)
        for target in targets if held else []:
            found += [(node, names, memory) for names, memory in _paired(target, held) if names and memory]
    return found + _iterated(fn, imported, scope, seen) + summed_names(fn, scope)  # ``container_results.py``


def _iterated(fn: _Function, imported: _Imports, scope: Scope | None, seen: _Seen) -> Pairs:
    """``for c in self.pick(xs)``: a loop's target holds the items of what a call it iterates may return, whole."""
    given = [(n, v) for n in loops(fn) for v in iterated(n) if isinstance(v, (ast.Call, ast.BinOp))]  # + of calls
    held = [(n, _held(v, imported, scope, seen)) for n, v in given]
    return [(n, bound_names(n.target), m) for n, parts in held if (m := frozenset().union(*(p for _, p in parts)))]


def _assigned(fn: _Function) -> list[tuple[ast.AST, list[ast.expr], ast.expr]]:
    """``v: torch.Tensor = x[0]`` and ``(v := x[0])``: a binding as an assignment's."""
    nodes: list[ast.AnnAssign | ast.NamedExpr] = [*walked_of(fn, ast.AnnAssign), *walked_of(fn, ast.NamedExpr)]
    return [(n, [n.target], n.value) for n in nodes if n.value is not None]


@per_node
def _imported(tree: ast.Module) -> _Imports:
    """The module's imports: local name -> what it names (``("torch_npu", "npu_silu_")``)."""
    return {
        local: (*b.module.split("."), *([b.name] if b.name else [])) for local, b in module_bindings(tree, "").items()
    }


def _held(value: ast.expr, imported: _Imports, scope: Scope | None, seen: _Seen) -> Held:
    """What ``value`` may be of the caller's names: a call's result, or a view (``x[i]``, ``x[i].view(n, -1)``)."""
    parts = choices(value) or concatenated_results(value, scope)  # ``self.pair(a) + self.pair(b)``: both lists
    if parts is not None:  # ``a if c else b[i]``, ``(a, b[i])``, ``list(xs)``: what each part may be
        return [(at, _names(part, imported, scope, seen)) for at, part in parts]
    if isinstance(value, ast.Call):
        return _results(value, imported, scope, seen)
    root = viewed(value, imported)
    return [(None, frozenset({root}))] if root else []


def _names(value: ast.expr, imported: _Imports, scope: Scope | None, seen: _Seen) -> frozenset[str]:
    """The names a part of a choice or a display may be: itself, or what it may be as a value."""
    if isinstance(value, ast.Name):
        return frozenset() if value.id in imported else frozenset({value.id})
    return frozenset().union(*(names for _, names in _held(value, imported, scope, seen)))


def _results(call: ast.Call, imported: _Imports, scope: Scope | None, seen: _Seen) -> Held:
    """The arguments ``call``'s result may be: ``x`` of ``x.add_(1)`` or ``x.view(n, -1)``, what the function it
    names returns (by its tables, its body where the run reads it), every argument where nothing says."""
    func, dotted = call.func, _dotted(call.func, imported)
    if isinstance(func, ast.Attribute) and _dotted(func.value, imported) is None and writes_self(aten_name(func.attr)):
        return [(None, alias_sources(func.value))]
    if dotted is not None and (npu_op(dotted) is not None or dotted[0] == _ATEN):
        return known_results(call, dotted)
    callee = resolved_function(call, scope.functions, scope.owner, scope.receiver) if scope is not None else None
    if callee is not None:
        given = returned_arguments(call, callee, (_value_held, _callee_pairs), seen)
        return [(None, _own(frozenset().union(*(alias_sources(a) for a in given)), scope))]
    if _unread_submodule(call, scope):  # ``self.ident(x)``: ``nn.Identity`` returns its input
        return [(None, _own(every_argument(call), scope))]
    root = viewed(call, imported)
    if root is not None or dotted is None:
        return [(None, frozenset({root}))] if root else []
    functions = scope.functions if scope is not None else None
    if isinstance(functions, ModuleFunctions):  # where the run cannot read the callee: a frozenset
        reached = functions.reached(call, scope.owner, scope.receiver)  # type: ignore[union-attr]
        return [(None, _own(every_argument(call), scope))] if isinstance(reached, frozenset) else []
    return [(None, every_argument(call))]


def _unread_submodule(call: ast.Call, scope: Scope | None) -> bool:
    """``self.<attr>(...)`` of a submodule ``__init__`` makes of a class the run does not read (a function of the
    run is resolved before): what its ``forward`` returns may be what it was given."""
    func, functions = call.func, scope.functions if scope is not None else None
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name) or scope is None:
        return False
    if func.value.id != scope.receiver or not scope.owner or not isinstance(functions, ModuleFunctions):
        return False
    return func.attr in functions.index.submodules.get(f"{functions.key}:{scope.owner}", {})  # type: ignore[attr-defined]


def _own(names: frozenset[str], scope: Scope | None) -> frozenset[str]:
    """``names`` but the receiver: ``self.pcp_rank`` handed to a call gives its result none of the object's memory
    the planner tracks by name (its state is read and written by attribute: ``state_views.py``)."""
    return names - {scope.receiver} if scope is not None and scope.receiver else names


def _value_held(value: ast.expr, scope: Scope, seen: _Seen) -> frozenset[str]:
    """What a value a function of the run returns may hold of its names (``run_results.py``)."""
    held = _held(value, _imported(_tree(scope)), scope, seen)
    return frozenset().union(*(names for _, names in held))


def _callee_pairs(fn: _Function, scope: Scope, seen: _Seen) -> Pairs:
    return _pairs(fn, _imported(_tree(scope)), scope, seen)


def _tree(scope: Scope) -> ast.Module:
    tree = getattr(scope.functions, "tree", None)
    return tree if tree is not None else ast.Module(body=[], type_ignores=[])


def _dotted(node: ast.expr, imported: _Imports) -> tuple[str, ...] | None:
    """``tnpu.npu_silu_`` -> ``("torch_npu", "npu_silu_")``, through the module's imports; None for a chain that
    starts at no imported name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in imported:
        return None
    return (*imported[node.id], *reversed(parts))


def _paired(target: ast.expr, held: Held) -> list[tuple[frozenset[str], frozenset[str]]]:
    """Each name of ``target`` with the arguments its part of the result may be."""
    whole = frozenset().union(*(names for _, names in held))
    elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else []
    if not elements or any(at is None for at, _ in held) or any(isinstance(e, ast.Starred) for e in elements):
        return [(bound_names(target), whole)]
    return [
        (bound_names(element), frozenset().union(*(names for where, names in held if where == at)))
        for at, element in enumerate(elements)
    ]
