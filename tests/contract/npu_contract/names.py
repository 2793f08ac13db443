"""What the names of a generated file stand for: import aliases and instances.

Flow-insensitive on purpose: generated code binds each alias and each stream,
event or config once. A target bound to two different things is dropped.
"""

from __future__ import annotations

import libcst as cst

from npu_contract.model import ApiKind, ApiTable
from npu_contract.pysource import dotted

__all__ = ["FileNames", "collect_names"]

_AMBIGUOUS = "?"


class FileNames:
    """Local dotted names -> qualified API names."""

    def __init__(self, table: ApiTable) -> None:
        self.table = table
        self.aliases: dict[str, str] = {}
        self.instances: dict[str, str] = {}
        # `torchair.x` used without an import still means torchair (and is checked)
        self._root_heads = frozenset(r.split(".")[0] for r in table.roots)

    def qualify(self, name: str) -> str | None:
        """The canonical qualified name of `name` as written, or None if local."""
        for target in sorted(self.instances, key=len, reverse=True):
            cls = self.instances[target]
            if cls != _AMBIGUOUS and (name == target or name.startswith(target + ".")):
                return cls + name[len(target) :]
        head, _, rest = name.partition(".")
        base = self.aliases.get(head, head if head in self._root_heads else None)
        if base is None:
            return None
        return self.table.canonical(base + ("." + rest if rest else ""))

    def bind_instance(self, target: str, cls: str | None) -> None:
        old = self.instances.get(target)
        self.instances[target] = cls if cls is not None and old in (None, cls) else _AMBIGUOUS


class _Collector(cst.CSTVisitor):
    def __init__(self, names: FileNames) -> None:
        self.names = names

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name) or ""
            local = alias.asname.name.value if alias.asname else full.split(".")[0]
            self.names.aliases[local] = full if alias.asname else local

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = dotted(node.module) or ""
        for alias in node.names:
            name = dotted(alias.name) or ""
            local = alias.asname.name.value if alias.asname else name
            self.names.aliases[local] = f"{module}.{name}"


class _Instances(cst.CSTVisitor):
    def __init__(self, names: FileNames) -> None:
        self.names = names

    def _class_of(self, value: cst.BaseExpression | None) -> str | None:
        if not isinstance(value, cst.Call) or dotted(value.func) is None:
            return None
        qualified = self.names.qualify(dotted(value.func) or "")
        entry = self.names.table.entries.get(qualified or "")
        return qualified if entry is not None and entry.kind is ApiKind.CLASS else None

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        name = dotted(target)
        if name is not None and (name in self.names.instances or self._class_of(value)):
            self.names.bind_instance(name, self._class_of(value))

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)


def collect_names(module: cst.Module, table: ApiTable) -> FileNames:
    """Import aliases first, then the targets assigned an instance of an API class."""
    names = FileNames(table)
    module.visit(_Collector(names))
    module.visit(_Instances(names))
    return names
