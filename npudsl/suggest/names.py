"""What a statement does with names, and whether everything it does shows in the captured graph (``ast``).

A statement may be moved past another only when neither touches a name the
other binds. The facts, over every part of the statement (lambdas,
comprehensions and walrus targets included, which only makes them larger):

- ``reads``: the names it loads (an augmented assignment's target too);
- ``writes``: the names it binds or deletes, and the receiver of a method that
  may change its object (``x.sort()``, ``s.add(v)``);
- ``visible``: whatever it does shows in the graph as ops or as local names.
  Not so for a store into an attribute or an item (``self.n = 1``, ``d[k] = v``), a
  read of an attribute that a class of the module makes a property (its code runs),
  ``global``/``nonlocal``, a container method (``xs.append(v)``), or a call of
  anything but torch (names imported from ``torch`` or ``math``), the model
  (``self....``), a method of a local value (``x.view(...)``) or a builtin
  without side effects (``len``, ``min``...) that the module does not shadow;
- ``pure``: it only binds or deletes local names and calls nothing, so it may
  run without a single op (``y = x``, ``del b``, ``n = x.shape[0]``).
"""

from __future__ import annotations

import ast

import attrs

__all__ = ["Facts", "Scope", "facts", "function_visible"]

_BUILTINS = frozenset(
    {
        "len",
        "int",
        "float",
        "bool",
        "min",
        "max",
        "abs",
        "range",
        "tuple",
        "list",
        "dict",
        "isinstance",
        "enumerate",
        "zip",
        "round",
        "divmod",
        "slice",
    }
)
_PYTHON_WRITES = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "setdefault",
        "popitem",
        "discard",
        "reverse",
        "appendleft",
        "extendleft",
        "popleft",
    }
)
_MAYBE_WRITES = frozenset({"add", "sort"})  # a set's or list's change, or a tensor op that makes a new tensor
_LIBRARIES = ("torch", "math")
_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Delete, ast.Pass)
_PURE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Delete, ast.Pass)
_HIDDEN = (ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom, ast.Yield, ast.YieldFrom, ast.Await)


@attrs.frozen(kw_only=True)
class Facts:
    reads: frozenset[str]
    writes: frozenset[str]
    visible: bool
    pure: bool

    def conflicts(self, other: Facts) -> bool:
        """One of the two binds, deletes or changes a name the other uses."""
        return bool(self.writes & (other.reads | other.writes) or other.writes & self.reads)


@attrs.frozen(kw_only=True)
class Scope:
    """The names a function's code may call: local values, and the module's torch imports."""

    locals: frozenset[str]
    libraries: frozenset[str]  # module-level names bound to torch or math (``torch``, ``nn``, ``F``...)
    shadowed: frozenset[str]  # names that may not be the builtins they spell
    properties: frozenset[str] = frozenset()  # attributes a class of the module computes (``@property``...)

    @classmethod
    def of(cls, module: ast.Module, function: ast.FunctionDef | ast.AsyncFunctionDef) -> Scope:
        libraries: set[str] = set()
        bound: set[str] = set()
        for statement in module.body:
            for name, source in _imports(statement):
                (libraries if source.split(".")[0] in _LIBRARIES else bound).add(name)
            bound |= {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(statement.name)
        arguments = function.args
        local = {
            a.arg
            for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
            if a is not None
        }
        local |= {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        return cls(
            locals=frozenset(local),
            libraries=frozenset(libraries),
            shadowed=frozenset(bound | local),
            properties=_properties(module),
        )


def _properties(module: ast.Module) -> frozenset[str]:
    """The methods of the module's classes that run on attribute access: reading one may do anything."""
    found = set()
    for statement in module.body:
        for item in statement.body if isinstance(statement, ast.ClassDef) else []:
            decorators = getattr(item, "decorator_list", [])
            names = {d.id if isinstance(d, ast.Name) else getattr(d, "attr", "") for d in decorators}
            if names & {"property", "cached_property", "setter", "getter", "deleter"}:
                found.add(getattr(item, "name", ""))
    return frozenset(found)


def _imports(statement: ast.stmt) -> list[tuple[str, str]]:
    if isinstance(statement, ast.Import):
        return [(a.asname or a.name.split(".")[0], a.name) for a in statement.names]
    if isinstance(statement, ast.ImportFrom) and not statement.level:
        return [(a.asname or a.name, statement.module or "") for a in statement.names]
    return []


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _call(call: ast.Call, scope: Scope, writes: set[str]) -> bool:
    """Whether what ``call`` does shows in the graph; the receiver of a possibly changing method joins ``writes``."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in _BUILTINS and func.id not in scope.shadowed
    if not isinstance(func, ast.Attribute) or func.attr in _PYTHON_WRITES:
        return False
    root = _root(func.value)
    if not isinstance(root, ast.Name):
        return True  # a method of a value: ``(a + b).sum()``
    if func.attr in _MAYBE_WRITES:
        writes.add(root.id)
    return root.id == "self" or root.id in scope.libraries or root.id in scope.locals


def _scan(tree: ast.AST, scope: Scope, reads: set[str], writes: set[str]) -> bool:
    visible = True
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (reads if isinstance(node.ctx, ast.Load) else writes).add(node.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            reads.add(node.target.id)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
            visible = False
        elif isinstance(node, ast.Attribute) and node.attr in scope.properties and _root(node) is not node:
            visible = False  # a property: code runs that the graph may not show
        elif isinstance(node, ast.Call):
            visible = _call(node, scope, writes) and visible
        elif isinstance(node, _HIDDEN):
            visible = False
    return visible


def facts(code: str, scope: Scope) -> Facts:
    """The facts of one line of simple statements (``code`` at column 0)."""
    try:
        body = ast.parse(code).body
    except SyntaxError:  # ``await`` or ``yield``, which only parse inside their function
        return Facts(reads=frozenset(), writes=frozenset(), visible=False, pure=False)
    reads: set[str] = set()
    writes: set[str] = set()
    visible = all(isinstance(s, _SIMPLE) for s in body) and all(_scan(s, scope, reads, writes) for s in body)
    pure = all(isinstance(s, _PURE) for s in body) and not any(
        isinstance(n, ast.Call) for s in body for n in ast.walk(s)
    )
    return Facts(reads=frozenset(reads), writes=frozenset(writes), visible=visible, pure=pure)


def function_visible(module: ast.Module, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether everything ``function``'s body does shows in the graph (the rule of :func:`facts`)."""
    scope = Scope.of(module, function)
    return all(_scan(statement, scope, set(), set()) for statement in function.body)
