"""Objects a stream function reaches through its own module's state, and the classes of objects, across files.

vllm_qwen3_dbo's combine takes its micro-batch's dispatcher from its module's state:
``token_dispatcher = self.experts.token_dispatchers[i]``. A :class:`Chain` is such an expression: attributes of the
callee's ``self`` through submodules (``self.experts``: a class ``__init__`` assigns, ``class_chain.submodule_classes``)
ending in a list of one class (``token_dispatchers``, ``codegen/index/elements.py``), indexed by a parameter or a
constant, perhaps bound once to a local. A class is found by the name written in a module: defined there, or
imported by name from a module the run holds (``from .layers import TokenDispatcher``), read from that module's
tree (``index.returns.tree_of``): a file transformed alone, whose run lacks it, finds none.
"""

from __future__ import annotations

import ast
from typing import Any

import attrs

from codegen.index.class_chain import element_classes_made, submodule_classes
from codegen.index.walked import walked_of
from codegen.lower.flow.imports import resolve_spec

__all__ = ["Chain", "Here", "chain_class", "class_named", "held_class", "state_chains"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
Here = tuple[str, ast.Module]  # the module being lowered: its run key, its tree
Found = tuple[str, ast.ClassDef]  # a class: its module's run key, its definition


@attrs.frozen
class Chain:
    path: tuple[str, ...]  # the attributes from ``self`` (``("experts", "token_dispatchers")``)
    index: str | int  # the callee's parameter, or a constant, the list is indexed by
    dump: str  # the expression (``ast.dump``): every spelling of it holds the same object
    alias: str | None  # the local bound once to it, at the top of the body
    binding: ast.Assign | None

    def holds(self, node: ast.expr) -> bool | None:
        """True: ``node`` holds the object; None: the local's one binding to it (it does nothing); False: not."""
        if self.binding is not None and (node is self.binding.value or node is self.binding.targets[0]):
            return None
        named = isinstance(node, ast.Name) and node.id == self.alias and isinstance(node.ctx, ast.Load)
        return named or ast.dump(node) == self.dump


def state_chains(fn: _Function, attributes: frozenset[str]) -> list[Chain] | None:
    """The chains of ``fn`` that start at an attribute in ``attributes``; None: ``fn`` reaches those attributes some
    other way, or calls a method of its object (which may reach them)."""
    owner = fn.args.args[0].arg
    starts = [n for n in walked_of(fn, ast.Attribute) if _on(n, owner) and n.attr in attributes]
    calls = [n for n in walked_of(fn, ast.Call) if _on(n.func, owner)]
    chains = {ast.dump(c): c for c in walked_of(fn, ast.Subscript) if _chain(c, owner, attributes)}
    covered = {id(n) for c in chains.values() for n in ast.walk(c)}
    rebound = {n.id for n in _stored(fn)}  # type: ignore[attr-defined]
    if calls or any(id(s) not in covered for s in starts) or any(c.slice.id in rebound for c in _named(chains)):
        return None
    return [_made(fn, c, owner) for c in chains.values()]


def _named(chains: dict[str, ast.Subscript]) -> list[Any]:
    return [c for c in chains.values() if isinstance(c.slice, ast.Name)]


def _chain(node: ast.Subscript, owner: str, attributes: frozenset[str]) -> bool:
    """``owner.a.b[k]``: attributes only, the first in ``attributes``, ``k`` a name or an integer."""
    path = _path(node.value, owner)
    key = node.slice
    return bool(path) and path[0] in attributes and (isinstance(key, ast.Name) or _integer(key))


def _made(fn: _Function, node: ast.Subscript, owner: str) -> Chain:
    key = node.slice
    index: str | int = key.id if isinstance(key, ast.Name) else key.value  # type: ignore[attr-defined]
    binding = next((s for s in fn.body if isinstance(s, ast.Assign) and _binds(s, node)), None)
    alias = binding.targets[0].id if binding is not None else None  # type: ignore[attr-defined]
    if alias is not None and sum(isinstance(n, ast.Name) and n.id == alias for n in _stored(fn)) != 1:
        binding, alias = None, None
    path = tuple(_path(node.value, owner))
    return Chain(path=path, index=index, dump=ast.dump(node), alias=alias, binding=binding)


def chain_class(index: Any, here: Here, module: str, owner: str, chain: Chain) -> ast.ClassDef | None:
    """The class of the objects the list at the end of ``chain`` holds, from the callee's class ``owner``."""
    found = class_named(index, here, module, owner)
    for attr in chain.path[:-1]:
        found = held_class(index, here, found, attr) if found else None
    written = element_classes_made(index, found[0], found[1]).get(chain.path[-1]) if found else None
    last = class_named(index, here, *written) if written else None
    return last[1] if last else None


def held_class(index: Any, here: Here, found: Found, attr: str) -> Found | None:
    """The class of the submodule ``attr`` an object of the class ``found`` holds (``class_chain.submodule_classes``:
    its ``__init__``'s or a base's, a factory read as the class it makes), read in the module that names it."""
    written = submodule_classes(index, found[0], found[1]).get(attr)
    return class_named(index, here, *written) if written else None


def class_named(index: Any, here: Here, module: str, written: str) -> Found | None:
    """The class the bare name ``written`` stands for in ``module``: defined there, or imported by name from a
    module the run holds."""
    tree = _tree(index, here, module)
    defined = [s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == written] if tree else []
    if len(defined) == 1:
        return module, defined[0]
    imported = getattr(index, "imports", {}).get(module, {}).get(written) if written.isidentifier() else None
    if imported is None:
        return None
    home = index.key_of(resolve_spec(imported[0], index.package_of(module)))
    tree = _tree(index, here, home)
    defined = [s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == imported[1]] if tree else []
    return (home, defined[0]) if len(defined) == 1 else None


def _tree(index: Any, here: Here, module: str) -> ast.Module | None:
    if module == here[0]:
        return here[1]
    tree_of = getattr(getattr(index, "returns", None), "tree_of", None)
    return tree_of(module) if tree_of is not None else None


def _path(node: ast.expr, owner: str) -> list[str]:
    path: list[str] = []
    while isinstance(node, ast.Attribute):
        path.insert(0, node.attr)
        node = node.value
    return path if isinstance(node, ast.Name) and node.id == owner else []


def _on(node: ast.AST, owner: str) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == owner


def _integer(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _binds(stmt: ast.stmt, node: ast.expr) -> bool:
    return isinstance(stmt, ast.Assign) and stmt.value is node and [type(t) for t in stmt.targets] == [ast.Name]


def _stored(fn: _Function) -> list[ast.AST]:
    return [n for n in walked_of(fn, ast.Name) if not isinstance(n.ctx, ast.Load)]
