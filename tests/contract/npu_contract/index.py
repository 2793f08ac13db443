"""Build the API table of torchair and torch.npu from the wheel's sources."""

from __future__ import annotations

import functools
from pathlib import Path

from npu_contract.configs import config_tree
from npu_contract.fetch import TORCH_NPU_VERSION, open_wheel
from npu_contract.model import ApiEntry, ApiKind, ApiTable, Param
from npu_contract.pysource import ClassInfo, FunctionInfo
from npu_contract.resolve import Definition, SourceTree

__all__ = ["ALIASES", "NAMESPACES", "build_npu_table", "load_npu_table"]

# public prefix -> module that defines it
NAMESPACES = {
    "torchair": "torchair",
    "torchair.scope": "torchair.scope",
    "torchair.ops": "torchair.ops",
    "torch.npu": "torch_npu.npu",
    "torch.npu.npugraph_ex": "torch_npu.npu.npugraph_ex",
    "torch.npu.npugraph_ex.scope": "torch_npu.npu.npugraph_ex.scope",
}
ALIASES = {"torch_npu.npu": "torch.npu", "torch_npu.dynamo.torchair": "torchair"}
_ROOTS = frozenset({"torchair", "torch.npu", "torch_npu"})
_CONFIG_CLASS = "torchair.CompilerConfig"


def _bound(fn: FunctionInfo) -> tuple[Param, ...]:
    """The parameters a caller passes: `self`/`cls` dropped unless static."""
    return fn.params if "staticmethod" in fn.decorators else fn.params[1:]


def _members(tree: SourceTree, cls: Definition) -> tuple[dict[str, FunctionInfo], bool]:
    chain, closed = tree.class_chain(cls)
    merged: dict[str, FunctionInfo] = {}
    for found in chain:
        assert isinstance(found.info, ClassInfo)
        merged.update(found.info.methods)
    return merged, closed


def _class_entries(tree: SourceTree, name: str, cls: Definition) -> list[ApiEntry]:
    methods, closed = _members(tree, cls)
    ctor = methods.get("__init__") or methods.get("__new__")
    params = _bound(ctor) if ctor else (() if closed else None)
    origin = f"{cls.module}.{cls.name}"
    out = [ApiEntry(name=name, kind=ApiKind.CLASS, params=params, closed=closed, origin=origin)]
    for method, fn in methods.items():
        if method.startswith("_"):
            continue
        kind = ApiKind.VALUE if "property" in fn.decorators else ApiKind.METHOD
        params = None if kind is ApiKind.VALUE else _bound(fn)
        out.append(ApiEntry(name=f"{name}.{method}", kind=kind, params=params, origin=f"{origin}.{method}"))
    return out


def _entries(tree: SourceTree, name: str, found: Definition) -> list[ApiEntry]:
    origin = f"{found.module}.{found.name}" if found.kind != "module" else found.module
    if found.kind == "class":
        return _class_entries(tree, name, found)
    if found.kind == "function":
        assert isinstance(found.info, FunctionInfo)
        return [ApiEntry(name=name, kind=ApiKind.FUNCTION, params=found.info.params, origin=origin)]
    if found.kind == "module":
        return [ApiEntry(name=name, kind=ApiKind.MODULE, closed=name in NAMESPACES, origin=origin)]
    return [ApiEntry(name=name, kind=ApiKind.VALUE, origin=origin)]


def _namespace(tree: SourceTree, prefix: str, module: str) -> list[ApiEntry]:
    out = [ApiEntry(name=prefix, kind=ApiKind.MODULE, origin=module)]
    for export in tree.exports(module):
        found = tree.resolve(module, export)
        if found is not None:
            out += _entries(tree, f"{prefix}.{export}", found)
    return out


def build_npu_table(tree: SourceTree) -> ApiTable:
    """Every public name of NAMESPACES, plus CompilerConfig's option paths."""
    entries = {"torch_npu": ApiEntry(name="torch_npu", kind=ApiKind.MODULE, closed=False, origin="torch_npu")}
    for prefix, module in NAMESPACES.items():
        entries.update((e.name, e) for e in _namespace(tree, prefix, module))
    config = config_tree(tree, tree.resolve("torchair", "CompilerConfig"))
    return ApiTable(entries=entries, roots=_ROOTS, aliases=dict(ALIASES), config=config, config_class=_CONFIG_CLASS)


@functools.cache
def _cached_table(version: str, directory: str | None) -> ApiTable:
    wheel = open_wheel(version, Path(directory) if directory else None)
    try:
        return build_npu_table(SourceTree(wheel))
    finally:
        wheel.close()


def load_npu_table(version: str = TORCH_NPU_VERSION, directory: Path | None = None) -> ApiTable:
    """Fetch (once) the torch-npu wheel and index torchair and torch.npu from it."""
    return _cached_table(version, str(directory) if directory else None)
