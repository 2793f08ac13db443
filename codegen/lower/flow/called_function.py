"""Which function a call at the end of a recording body reaches, where the run can read its body (GE's tokens).

GE orders a user event on what a recording body's last work makes (``ge_returned.py``); where that work is a call
of the user's own function, what it makes is that function's body's to say: ``ge_called.py`` reads which element
of its returned tuple it makes last, ``ge_made_by.py`` whether it makes the one value it returns at all. The body
is read where the call certainly reaches it: a plain name that the recording body does not bind, bound once in its
module, naming a module-level function of no decorator (a decorator may return anything; a stream function
switches streams) bound once in the module that defines it, this one or the one it imports it from
(``index.returns.tree_of``: a file of the run, or its package's file on disk, so together and alone agree); a
method of the recording body's own class called on its receiver (``self.pick(x)``), defined once there with no
decorator; or, for a submodule the receiver holds (``self.skip(x)``), the ``forward`` of its class where the run
reads it, also inherited from a base of the run (the class and its ``forward`` of no decorator: a stream class's
call switches streams). A call reaching nothing the run can read is None.
"""

from __future__ import annotations

import ast

import attrs

from codegen.index.class_chain import class_of
from codegen.index.returned import bound_once
from codegen.index.returns import run_returns
from codegen.index.submodule_forward import submodule_forward
from codegen.lower.flow.exprs import binding_name
from codegen.lower.flow.import_chains import absolute_imports, run_package
from codegen.lower.flow.inherited_forward import class_forward, submodule_class
from codegen.lower.flow.local_returns import local_returns
from codegen.lower.flow.tensors import Returns

__all__ = ["Callee", "binds", "callee_of"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen
class Callee:
    module: str  # the run key of the module that defines it
    tree: ast.Module
    node: _Function  # its definition
    owner: str | None = None  # a method's class
    receiver: str | None = None  # a method's first parameter

    def returns(self, index: object) -> Returns:
        """The return annotations its body can see (``local_returns.py``)."""
        qualname = f"{self.owner}.{self.node.name}" if self.owner else self.node.name
        seen = run_returns(index, self.module, self.tree, self.owner, self.receiver)
        return local_returns(self.tree, qualname, self.receiver, seen, index=index, module=self.module)


def callee_of(call: ast.Call, at: Callee, index: object) -> Callee | None:
    """The function ``call`` reaches from the body of ``at``, where the run reads it."""
    if isinstance(call.func, ast.Name):
        return None if binds(at.node, call.func.id) else _module_function(call.func.id, at.module, at.tree, index)
    func = call.func
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name) or at.owner is None:
        return None
    if func.value.id != at.receiver or any(at.receiver in _bound(n) for s in at.node.body for n in ast.walk(s)):
        return None  # another object, or the receiver rebound
    method = _defined(_class_body(at.tree, at.owner), func.attr, at.tree)
    if method is None:
        return _submodule_forward(func.attr, at, index)
    first = method.args.args[0].arg if method.args.args else None
    return None if first is None else attrs.evolve(at, node=method, receiver=first)


def _submodule_forward(attr: str, at: Callee, index: object) -> Callee | None:
    """The ``forward`` that ``self.<attr>(...)`` runs, where the run reads the submodule's class
    (``submodule_forward.py``: assigned by the class's ``__init__`` or a base's, in any file of the run), or the one
    it inherits from a base of the run (``inherited_forward.py``), neither the class nor its ``forward`` decorated."""
    found = submodule_forward(index, at.module, at.owner or "", attr) or _inherited(attr, at, index)
    if found is None:
        return None
    module, owner, tree, fn = found
    cls = class_of(index, module, owner)
    if cls is None or cls.decorator_list or fn.decorator_list or not fn.args.args:
        return None
    return Callee(module, tree, fn, owner, fn.args.args[0].arg)


def _inherited(attr: str, at: Callee, index: object) -> tuple[str, str, ast.Module, _Function] | None:
    home = submodule_class(index, at.module, at.owner or "", attr)
    return class_forward(index, *home) if home is not None else None


def _module_function(name: str, module: str, tree: ast.Module, index: object) -> Callee | None:
    """The module-level function ``name`` names in ``module``: its own, or the one it imports."""
    if name not in bound_once(tree):
        return None
    own = _defined(tree.body, name, tree)
    if own is not None:
        return Callee(module, tree, own)
    chain = absolute_imports(tree, run_package(index, module)).get(name)
    tree_of = getattr(getattr(index, "returns", None), "tree_of", None)
    if chain is None or len(chain) < 2 or tree_of is None:
        return None
    home = index.key_of(".".join(chain[:-1]))  # type: ignore[attr-defined]
    home_tree = tree_of(home)
    found = _defined(home_tree.body, chain[-1], home_tree) if home_tree is not None else None
    return None if found is None or home_tree is None else Callee(home, home_tree, found)


def _class_body(tree: ast.Module, owner: str) -> list[ast.stmt]:
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner]
    return classes[0].body if len(classes) == 1 else []


def _defined(body: list[ast.stmt], name: str, tree: ast.Module) -> ast.FunctionDef | None:
    """The plain function ``name`` of ``body`` (a module's or a class's), defined once and bound by nothing else
    there (at module level, by nothing else in the module)."""
    defs = [n for n in body if isinstance(n, ast.FunctionDef) and n.name == name]
    if len(defs) != 1 or defs[0].decorator_list or sum(_binds_at(stmt, name) for stmt in body) != 1:
        return None
    return defs[0] if body is not tree.body or name in bound_once(tree) else None


def _binds_at(stmt: ast.stmt, name: str) -> bool:
    """A statement of a module's or class's body binds ``name`` (a definition, or any other binding in it)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name == name
    return any(name in _bound(node) for node in ast.walk(stmt))


def binds(fn: _Function, name: str) -> bool:
    """``fn`` (its nested scopes too) may bind ``name``: the call may not reach the module's function."""
    return any(name in _bound(node) for part in (fn.args, *fn.body) for node in ast.walk(part))


def _bound(node: ast.AST) -> tuple[str, ...]:
    """The names ``node`` binds: a stored name, a parameter, a ``global``, or what ``exprs.binding_name`` reads (a
    definition, an import, an ``except ... as``, a ``match`` capture)."""
    if isinstance(node, ast.Name):
        return () if isinstance(node.ctx, ast.Load) else (node.id,)
    if isinstance(node, ast.arg):
        return (node.arg,)
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return tuple(node.names)
    named = binding_name(node)
    return (named,) if named else ()
