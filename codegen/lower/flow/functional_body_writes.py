"""Which parameters the Python bodies of ``torch.nn.functional`` write in place, read from torch's own source.

``F.embedding(ids, self.weight, max_norm=1.0)`` renorms the rows of ``weight`` it looks up (its body calls
``torch.embedding_renorm_(weight.detach(), ...)`` through ``_no_grad_embedding_renorm_`` when ``max_norm is not
None``), though ATen's ``embedding`` writes nothing: a function of the module is a Python body, and what it writes
is what its calls write. A parameter is written where the body hands it (or a view of it: ``weight.detach()``) to an
ATen op at an argument some overload's schema types ``Tensor(a!)`` (``torch.embedding_renorm_``, ``_VF.dropout_``,
the object of ``input.add_(...)``), or to a function of the module that writes that parameter (followed to a fixed
point), under the ``if`` tests that guard the call (``functional_guards.py``); a guard that the body binds again
guards nothing. A write through a name the body has rebound to a copy of its own (``var = var.clone()``) writes the
copy (``functional_local_copies.py``). What the kernels write through slots their schemas leave plain
(``F.batch_norm``'s running stats) is read by running them (``functional_probe.py``).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator

from codegen.lower.flow.functional_guards import guarded_calls
from codegen.lower.flow.functional_local_copies import copied_before
from codegen.lower.flow.table_files import torch_source
from codegen.lower.flow.view_roots import alias_root

__all__ = ["Written", "body_writes", "falsy_default", "functional_sources", "positional"]

Written = dict[str, dict[str, set[frozenset[str]]]]  # function -> parameter -> the sets of guards of its writes


def functional_sources() -> dict[str, ast.FunctionDef]:
    """The functions of ``torch.nn.functional`` by name (an alias ``threshold = _threshold`` too; of overloads, the
    body)."""
    path = torch_source("nn", "functional.py")
    found: dict[str, ast.FunctionDef] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and not any(_overload(d) for d in node.decorator_list):
            found[node.name] = node
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in found:
            found.update({t.id: found[node.value.id] for t in node.targets if isinstance(t, ast.Name)})
    return found


def _overload(decorator: ast.expr) -> bool:
    """``@_overload``: a signature only, the body follows."""
    return isinstance(decorator, ast.Name) and decorator.id.endswith("overload")


def _written_args() -> dict[str, frozenset[int | str]]:
    """ATen op -> the positions and names of the arguments some overload types ``Tensor(a!)`` (``out=`` aside)."""
    import torch

    found: dict[str, set[int | str]] = defaultdict(set)
    for schema in torch._C._jit_get_all_schemas():
        name = schema.name.partition("::")[2]
        if schema.name.startswith("aten::") and not schema.overload_name.endswith("out"):
            for i, a in enumerate(schema.arguments):
                if a.alias_info is not None and a.alias_info.is_write and a.name != "out":
                    found[name] |= {a.name} if a.kwarg_only else {i, a.name}
    return {name: frozenset(args) for name, args in found.items()}


def body_writes(functions: dict[str, ast.FunctionDef]) -> Written:
    """What each function's body writes: parameter -> the sets of parameters that must be given for one of its
    writes (an empty set: written whatever is given), to a fixed point over the calls between the functions."""
    reading = _Reading(functions)
    changed = True
    while changed:
        changed = False
        for name, fn in functions.items():
            for param, guards in reading.writes(fn):
                alternatives = reading.written[name].setdefault(param, set())
                changed |= guards not in alternatives
                alternatives.add(guards)
    return reading.written


class _Reading:
    """The functions, the ATen ops' written arguments, and what each function is found to write so far."""

    def __init__(self, functions: dict[str, ast.FunctionDef]) -> None:
        self.functions, self.ops = functions, _written_args()
        self.written: Written = {name: {} for name in functions}

    def writes(self, fn: ast.FunctionDef) -> Iterator[tuple[str, frozenset[str]]]:
        params = positional(fn) + [a.arg for a in fn.args.kwonlyargs]
        rebound = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for call, guards in guarded_calls(fn):
            for arg, needs in self._call_writes(call):
                root = alias_root(arg)
                if root in params and needs is not None and not copied_before(fn, root, call):
                    yield root, (guards | needs) & frozenset(params) - rebound

    def _call_writes(self, call: ast.Call) -> Iterator[tuple[ast.expr, frozenset[str] | None]]:
        """Each argument ``call`` writes, with the caller's names that must be given for it (None: it is not)."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.functions:
            callee = self.functions[func.id]
            for param, alternatives in self.written[func.id].items():
                arg = _passed(call, callee, param)
                yield from ((arg, _needed(call, callee, g)) for g in alternatives if arg is not None)
        elif isinstance(func, ast.Attribute) and func.attr in self.ops:
            args = list(call.args) if _module_like(func.value) else [func.value, *call.args]  # a method: ``self``
            written = self.ops[func.attr]
            yield from ((a, frozenset()) for i, a in enumerate(args) if i in written)
            yield from ((k.value, frozenset()) for k in call.keywords if k.arg in written)


def _module_like(node: ast.expr) -> bool:
    """``torch``, ``_VF``, ``torch._C._nn``: a namespace of ops, not a tensor."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in ("torch", "_VF")


def positional(fn: ast.FunctionDef) -> list[str]:
    return [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]


def _passed(call: ast.Call, callee: ast.FunctionDef, param: str) -> ast.expr | None:
    """The argument ``call`` gives ``callee``'s parameter ``param``, by position or keyword (None: not given)."""
    position = positional(callee).index(param) if param in positional(callee) else None
    if position is not None and position < len(call.args) and not isinstance(call.args[position], ast.Starred):
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == param), None)


def _needed(call: ast.Call, callee: ast.FunctionDef, guards: frozenset[str]) -> frozenset[str] | None:
    """The caller's names that must be given for ``callee``'s guards to hold: a guard given as the caller's name
    needs it, one given otherwise holds (a literal None or False, or one left out with such a default: never)."""
    needed: set[str] = set()
    for guard in guards:
        arg = _passed(call, callee, guard)
        if (arg is None and falsy_default(callee, guard)) or (arg is not None and _falsy(arg)):
            return None
        needed |= {arg.id} if isinstance(arg, ast.Name) else set()
    return frozenset(needed)


def _falsy(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in (None, False)


def falsy_default(fn: ast.FunctionDef, param: str) -> bool:
    """``param`` of ``fn`` defaults to None or False."""
    params = positional(fn)
    defaults = dict(zip(params[len(params) - len(fn.args.defaults) :], fn.args.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True) if d})
    return param in defaults and _falsy(defaults[param])
