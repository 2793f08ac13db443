"""Import statements, with relative imports made absolute."""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import libcst as cst

__all__ = ["ImportRef", "dotted", "imports_of"]


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


@attrs.frozen(kw_only=True)
class ImportRef:
    """`module` is absolute; `name` is None for `import module`."""

    module: str
    name: str | None = None


def _resolve_relative(module: str, is_package: bool, level: int, target: str) -> str:
    if level == 0:
        return target
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([target] if target else []))


def imports_of(stmt: cst.CSTNode, module: str, *, is_package: bool) -> Iterator[tuple[str, ImportRef]]:
    """(local name, what it refers to) for an import statement; `*` for a star import."""
    if isinstance(stmt, cst.Import):
        for alias in stmt.names:
            full = dotted(alias.name) or ""
            if alias.asname is not None:
                yield alias.asname.name.value, ImportRef(module=full)
            else:
                yield full.split(".")[0], ImportRef(module=full.split(".")[0])
    elif isinstance(stmt, cst.ImportFrom):
        target = dotted(stmt.module) if stmt.module is not None else ""
        source = _resolve_relative(module, is_package, len(stmt.relative), target or "")
        if isinstance(stmt.names, cst.ImportStar):
            yield "*", ImportRef(module=source)
            return
        for alias in stmt.names:
            name = dotted(alias.name) or ""
            local = alias.asname.name.value if alias.asname is not None else name
            yield local, ImportRef(module=source, name=name)
