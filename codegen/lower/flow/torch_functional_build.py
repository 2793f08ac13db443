"""Writes ``torch_functional_table.py``: which parameters the functions of ``torch.nn.functional`` write in place, and
when, read from the source of ``torch/nn/functional.py`` in the installed torch and from ATen's schemas.

    python -m codegen.lower.flow.torch_functional_build          # rewrite the table from this torch
    python -m codegen.lower.flow.torch_functional_build --check  # exit 1 if the table differs

``F.embedding(ids, self.weight, max_norm=1.0)`` renorms the rows of ``weight`` it looks up in place (its body calls
``torch.embedding_renorm_(weight.detach(), ...)`` through ``_no_grad_embedding_renorm_`` when ``max_norm is not
None``), though ATen's ``embedding`` writes nothing: a function of the module is a Python body, and what it writes
is what its calls write. A parameter is written where the body hands it (or a view of it: ``weight.detach()``) to an
ATen op at an argument some overload's schema types ``Tensor(a!)`` (``torch.embedding_renorm_``, ``_VF.dropout_``,
the object of ``input.add_(...)``), or to a function of the module that writes that parameter (followed to a fixed
point). A write under ``if p:``, ``if p is not None:`` (or the ``else`` of ``if not p:``, ``if p is None:``), or
either side of ``a if p else b``, holds only when ``p`` is given; any other test guards nothing. A guard that the
body binds again guards nothing either. ``torch_functional.py`` reads the table;
``tests/flow/test_torch_functional.py`` rebuilds it from the pinned torch and compares.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from codegen.lower.flow.table_files import table_main, torch_source
from codegen.lower.flow.view_roots import alias_root

__all__ = ["build", "main"]

TABLE = Path(__file__).with_name("torch_functional_table.py")
_HEADER = '''"""Which parameters the functions of ``torch.nn.functional`` write in place (written by
``torch_functional_build.py``: do not edit)."""

from __future__ import annotations

__all__ = ["FUNCTIONS"]

# function -> the parameters named here (``@``: the position, none by keyword only; ``=``: the default is None or
# False) | each parameter it writes in place, with ``:`` and the parameters that must be given (not None, not False)
FUNCTIONS: dict[str, str] = {
'''
_Guarded = tuple[ast.Call, frozenset[str]]  # a call and the parameters that must be given for it to run


def _functions() -> dict[str, ast.FunctionDef]:
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


def _guarded(node: ast.AST, guards: frozenset[str]) -> Iterator[_Guarded]:
    """Each call under ``node`` with the parameters its ``if`` tests say are given (see above)."""
    if isinstance(node, (ast.If, ast.IfExp)):
        yield from _guarded(node.test, guards)
        body: list[ast.AST] = [*node.body] if isinstance(node.body, list) else [node.body]
        orelse: list[ast.AST] = [*node.orelse] if isinstance(node.orelse, list) else [node.orelse]
        for children, more in ((body, _given(node.test)), (orelse, _given(node.test, negated=True))):
            for child in children:
                yield from _guarded(child, guards | more)
        return
    if isinstance(node, ast.Call):
        yield node, guards
    for child in ast.iter_child_nodes(node):
        yield from _guarded(child, guards)


def _given(test: ast.expr, negated: bool = False) -> frozenset[str]:
    """The names ``test`` holding (or failing, ``negated``) says are given: ``p``, ``p is not None``, an ``and`` of
    them; ``not p``, ``p is None`` where it fails."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and not negated:
        return frozenset().union(*(_given(v) for v in test.values))
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _given(test.operand, not negated)
    if isinstance(test, ast.Name):
        return frozenset() if negated else frozenset({test.id})
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not _none(test.comparators[0]):
        return frozenset()
    given = isinstance(test.ops[0], ast.IsNot) != negated
    return frozenset({test.left.id}) if given and isinstance(test.left, ast.Name) else frozenset()


def _none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


class _Reading:
    """What each function writes: parameter -> the sets of parameters that must be given for one of its writes (an
    empty set: written whatever is given), to a fixed point over the calls between the module's functions."""

    def __init__(self, functions: dict[str, ast.FunctionDef]) -> None:
        self.functions, self.ops = functions, _written_args()
        self.written: dict[str, dict[str, set[frozenset[str]]]] = {name: {} for name in functions}
        changed = True
        while changed:
            changed = False
            for name, fn in functions.items():
                for param, guards in self._writes(fn):
                    alternatives = self.written[name].setdefault(param, set())
                    changed |= guards not in alternatives
                    alternatives.add(guards)

    def _writes(self, fn: ast.FunctionDef) -> Iterator[tuple[str, frozenset[str]]]:
        params = _positional(fn) + [a.arg for a in fn.args.kwonlyargs]
        rebound = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for call, guards in _guarded(fn, frozenset()):
            for arg, needs in self._call_writes(call):
                root = alias_root(arg)
                if root in params and needs is not None:
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


def _positional(fn: ast.FunctionDef) -> list[str]:
    return [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]


def _passed(call: ast.Call, callee: ast.FunctionDef, param: str) -> ast.expr | None:
    """The argument ``call`` gives ``callee``'s parameter ``param``, by position or keyword (None: not given)."""
    position = _positional(callee).index(param) if param in _positional(callee) else None
    if position is not None and position < len(call.args) and not isinstance(call.args[position], ast.Starred):
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == param), None)


def _needed(call: ast.Call, callee: ast.FunctionDef, guards: frozenset[str]) -> frozenset[str] | None:
    """The caller's names that must be given for ``callee``'s guards to hold: a guard given as the caller's name
    needs it, one given otherwise holds (a literal None or False, or one left out with such a default: never)."""
    needed: set[str] = set()
    for guard in guards:
        arg = _passed(call, callee, guard)
        if (arg is None and _falsy_default(callee, guard)) or (arg is not None and _falsy(arg)):
            return None
        needed |= {arg.id} if isinstance(arg, ast.Name) else set()
    return frozenset(needed)


def _falsy(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in (None, False)


def _falsy_default(fn: ast.FunctionDef, param: str) -> bool:
    """``param`` of ``fn`` defaults to None or False."""
    positional = _positional(fn)
    defaults = dict(zip(positional[len(positional) - len(fn.args.defaults) :], fn.args.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True) if d})
    return param in defaults and _falsy(defaults[param])


def build() -> str:
    """The table's text for the installed torch."""
    functions = _functions()
    reading = _Reading(functions)
    rows = "".join(
        f'    "{name}": "{_signature(functions[name], written)} | {_writes_text(written)}",\n'
        for name, written in sorted(reading.written.items())
        if written and not name.startswith("_")
    )
    return _HEADER + rows + "}\n"


def _signature(fn: ast.FunctionDef, written: dict[str, set[frozenset[str]]]) -> str:
    """The parameters the writes name, each ``name@position`` (no position: by keyword only), ``=`` where its
    default is None or False."""
    named = sorted({*written, *(g for alternatives in written.values() for gs in alternatives for g in gs)})
    positional = _positional(fn)
    return " ".join(
        p + (f"@{positional.index(p)}" if p in positional else "") + "=" * _falsy_default(fn, p) for p in named
    )


def _writes_text(written: dict[str, set[frozenset[str]]]) -> str:
    """``weight:max_norm``, ``input`` (unconditional alternatives make the others moot)."""
    items = []
    for param, alternatives in sorted(written.items()):
        kept = [frozenset()] if frozenset() in alternatives else sorted(alternatives, key=sorted)
        items += [":".join([param, *sorted(guards)]) for guards in kept]
    return " ".join(items)


def main(argv: list[str] | None = None) -> int:
    return table_main("codegen.lower.flow.torch_functional_build", TABLE, build, argv)


if __name__ == "__main__":
    sys.exit(main())
