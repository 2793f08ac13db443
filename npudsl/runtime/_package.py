"""The transformed modules of one run, as new module objects beside the user's (which stay as they are).

Only definitions run again: classes, functions, imports, and the statements the transform added
(events, helpers). Everything else of the user's module, a script's top-level code above all, keeps
the value it has in the user's module, whose namespace each new module starts from. An import of
another module of the run binds the transformed one, so a caller and its callee agree on the protocol.
Code keeps the user's file and line numbers (tracebacks and race messages name the user's lines).
"""

from __future__ import annotations

import ast
import difflib
import sys
import types
from collections.abc import Iterable

__all__ = ["build_modules", "line_map"]


def line_map(original: str, transformed: str) -> list[int]:
    """``result[n]``: the original line that transformed line ``n`` (1-based) stands for.

    Lines equal up to indentation map to each other; inserted lines map to the
    original line they precede (the last line at the end of the file).
    """
    old = [line.strip() for line in original.splitlines()]
    new = [line.strip() for line in transformed.splitlines()]
    result = [1] * (len(new) + 2)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(j2 - j1):
            nearest = i1 + k if tag == "equal" else min(i1 + k, max(i2 - 1, i1))
            result[j1 + k + 1] = min(nearest + 1, max(len(old), 1))
    result[-1] = result[-2] if len(result) > 2 else 1
    return result


def _mapped(tree: ast.Module, original: str, transformed: str) -> ast.Module:
    mapping = line_map(original, transformed)
    for node in ast.walk(tree):
        if "lineno" in node._attributes:
            node.lineno = mapping[min(node.lineno, len(mapping) - 1)]  # type: ignore[attr-defined]
            end = getattr(node, "end_lineno", None)
            node.end_lineno = mapping[min(end, len(mapping) - 1)] if end is not None else None  # type: ignore[attr-defined]
    return tree


def _imported(stmt: ast.stmt, package: str) -> list[str]:
    """The absolute module names an import statement reads."""
    if isinstance(stmt, ast.Import):
        return [alias.name for alias in stmt.names]
    if isinstance(stmt, ast.ImportFrom):
        base = package.split(".") if package else []
        if stmt.level:
            base = base[: len(base) - stmt.level + 1] if stmt.level > 1 else base
            return [".".join([*base, stmt.module] if stmt.module else base)]
        return [stmt.module or ""]
    return []


def _order(items: dict[str, tuple[types.ModuleType, ast.Module]]) -> list[str]:
    """Modules after the run modules they import (a cycle keeps the given order)."""
    done: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in done or name in path:
            return
        module, tree = items[name]
        for stmt in tree.body:
            for target in _imported(stmt, module.__package__ or ""):
                if target in items:
                    visit(target, (*path, name))
        done.append(name)

    for name in items:
        visit(name, ())
    return done


def _bind_import(
    stmt: ast.ImportFrom | ast.Import, namespace: dict, package: str, made: dict[str, types.ModuleType]
) -> bool:
    """Bind an import of a transformed module of the run from it; False when the import reads none."""
    targets = _imported(stmt, package)
    if not any(t in made for t in targets):
        return False
    if isinstance(stmt, ast.ImportFrom):
        source = made.get(targets[0])
        if source is None:
            return False
        for alias in stmt.names:
            namespace[alias.asname or alias.name] = getattr(source, alias.name)
        return True
    for alias in stmt.names:
        if alias.name in made and alias.asname:
            namespace[alias.asname] = made[alias.name]
    return all(alias.asname for alias in stmt.names if alias.name in made)


def build_modules(found: Iterable[tuple[types.ModuleType, str, str, str]], suffix: str) -> dict[str, types.ModuleType]:
    """New modules for ``(user module, original source, transformed source, path)``, by the user's module name."""
    items: dict[str, tuple[types.ModuleType, ast.Module]] = {}
    sources: dict[str, tuple[str, str, str]] = {}
    for module, original, transformed, path in found:
        items[module.__name__] = (module, _mapped(ast.parse(transformed, path), original, transformed))
        sources[module.__name__] = (original, transformed, path)
    made: dict[str, types.ModuleType] = {}
    for name in _order(items):
        module, tree = items[name]
        made[name] = _execute(module, tree, *sources[name], suffix=suffix, made=made)
    return made


def _execute(
    module: types.ModuleType,
    tree: ast.Module,
    original: str,
    _transformed: str,
    path: str,
    *,
    suffix: str,
    made: dict[str, types.ModuleType],
) -> types.ModuleType:
    fresh = types.ModuleType(f"{module.__name__}{suffix}")
    sys.modules[fresh.__name__] = fresh  # dynamo reads a traced function's globals back by module name
    fresh.__dict__.update({k: v for k, v in vars(module).items() if k not in ("__name__", "__spec__", "__loader__")})
    kept = {ast.dump(stmt) for stmt in ast.parse(original).body}
    package = module.__package__ or ""
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) and _bind_import(stmt, fresh.__dict__, package, made):
            continue
        definition = isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        if definition or ast.dump(stmt) not in kept:
            code = compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec")
            exec(code, fresh.__dict__)  # noqa: S102 - the user's definitions, as an import would run them
    return fresh
