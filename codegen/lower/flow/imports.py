"""What the top-level imports of a module bind: local name -> the module, or the module and name, it stands for."""

from __future__ import annotations

import ast

import attrs

from codegen.index.walked import per_node, walked_of

__all__ = ["Binding", "function_bindings", "module_bindings", "package_of", "resolve_spec"]


@attrs.frozen(kw_only=True)
class Binding:
    """``import a.b as x`` -> module "a.b"; ``from a import b as x`` -> module "a", name "b"."""

    module: str
    name: str | None = None  # None: the local name is the module itself
    spec: str  # how the module is spelled in the import (leading dots kept), for generated imports


def package_of(module: str, *, is_package: bool) -> str:
    """The package relative imports of ``module`` resolve against."""
    return module if is_package else module.rpartition(".")[0]


def resolve_spec(spec: str, package: str) -> str:
    """``..layers`` seen from ``package`` -> an absolute module name."""
    level = len(spec) - len(spec.lstrip("."))
    if not level:
        return spec
    parts = package.split(".") if package else []
    base = parts[: len(parts) - (level - 1)] if level > 1 else parts
    rest = spec[level:]
    return ".".join([*base, rest] if rest else base)


def module_bindings(tree: ast.Module, package: str) -> dict[str, Binding]:
    """Local names bound by imports at module level (also under top-level ``if``/``try``): a dict of the caller's
    own, read once per module and package (the index, the checks and each caller's lowering ask again)."""
    kept = _kept_bindings(tree)
    if package not in kept:
        kept[package] = _bindings(tree, package)
    return dict(kept[package])


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@per_node
def _kept_bindings(tree: ast.Module) -> dict[str, dict[str, Binding]]:
    return {}  # a package -> the module's bindings seen from it


def function_bindings(tree: ast.Module, package: str) -> dict[str, Binding | None]:
    """Local names bound by imports inside the module's functions (``def forward(self, x): import torch_npu``), each
    with what it names; None where two such imports bind one name to different things."""
    found: dict[str, Binding | None] = {}
    inside = {id(n): n for fn in walked_of(tree, _FUNCTIONS) for n in walked_of(fn, (ast.Import, ast.ImportFrom))}
    for node in inside.values():
        for local, binding in _bindings_of([node], package).items():
            found[local] = binding if found.get(local, binding) == binding else None
    return found


def _bindings(tree: ast.Module, package: str) -> dict[str, Binding]:
    return _bindings_of(_top_level(tree.body), package)


def _bindings_of(nodes: list[ast.stmt], package: str) -> dict[str, Binding]:
    found: dict[str, Binding] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                target = alias.name if alias.asname else local
                found[local] = Binding(module=target, spec=target)
        elif isinstance(node, ast.ImportFrom):
            spec = "." * node.level + (node.module or "")
            module = resolve_spec(spec, package)
            for alias in node.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = Binding(module=module, name=alias.name, spec=spec)
    return found


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If):
            out += _top_level(node.body) + _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            out += _top_level(node.body) + [n for h in node.handlers for n in _top_level(h.body)]
    return out
