"""Follow names across the modules of the wheel to where they are defined."""

from __future__ import annotations

from typing import Literal

import attrs

from npu_contract.fetch import WheelSource
from npu_contract.pysource import ClassInfo, FunctionInfo, ModuleInfo, parse_module

__all__ = ["Definition", "SourceTree", "WHEEL_PACKAGES"]

# import name -> folder inside the wheel
WHEEL_PACKAGES = {"torchair": "torch_npu/dynamo/torchair", "torch_npu": "torch_npu"}
_MAX_HOPS = 12

DefKind = Literal["function", "class", "module", "value"]


@attrs.frozen(kw_only=True)
class Definition:
    kind: DefKind
    module: str
    name: str
    info: FunctionInfo | ClassInfo | None = None


class SourceTree:
    """The modules of `torchair` and `torch_npu`, parsed when first asked for."""

    def __init__(self, wheel: WheelSource) -> None:
        self.wheel = wheel
        self._modules: dict[str, ModuleInfo | None] = {}

    def _member(self, module: str) -> tuple[str, bool] | None:
        head, _, rest = module.partition(".")
        if head not in WHEEL_PACKAGES:
            return None
        base = "/".join([WHEEL_PACKAGES[head]] + (rest.split(".") if rest else []))
        for member, is_package in ((f"{base}/__init__.py", True), (f"{base}.py", False)):
            if self.wheel.has(member):
                return member, is_package
        return None

    def module(self, name: str) -> ModuleInfo | None:
        if name not in self._modules:
            found = self._member(name)
            self._modules[name] = (
                None if found is None else parse_module(name, self.wheel.read(found[0]), is_package=found[1])
            )
        return self._modules[name]

    def is_module(self, name: str) -> bool:
        return self._member(name) is not None

    def exports(self, module: str) -> tuple[str, ...]:
        """`__all__`, else the public names defined or imported from the wheel."""
        info = self.module(module)
        if info is None:
            return ()
        if info.all_names is not None:
            return info.all_names
        inside = [k for k, r in info.imports.items() if r.name is not None and self._member(r.module.split(".")[0])]
        names = [*info.functions, *info.classes, *info.values, *inside]
        return tuple(dict.fromkeys(n for n in names if not n.startswith("_")))

    def resolve(self, module: str, name: str, hops: int = 0) -> Definition | None:
        """Where `module.name` is defined (following imports and `*`)."""
        info = self.module(module)
        if info is None or hops > _MAX_HOPS:
            return None
        if name in info.functions:
            return Definition(kind="function", module=module, name=name, info=info.functions[name])
        if name in info.classes:
            return Definition(kind="class", module=module, name=name, info=info.classes[name])
        if name in info.imports:
            return self._imported(info.imports[name].module, info.imports[name].name, hops)
        if name in info.values:
            return Definition(kind="value", module=module, name=name)
        for star in info.star_imports:
            if name in self.exports(star):
                return self.resolve(star, name, hops + 1)
        return self._submodule(f"{module}.{name}")

    def _imported(self, module: str, name: str | None, hops: int) -> Definition | None:
        if name is None:
            return self._submodule(module)
        return self._submodule(f"{module}.{name}") or self.resolve(module, name, hops + 1)

    def _submodule(self, module: str) -> Definition | None:
        if not self.is_module(module):
            return None
        return Definition(kind="module", module=module, name=module.rsplit(".", 1)[-1])

    def resolve_dotted(self, module: str, name: str) -> Definition | None:
        """`a.b.c` as written inside `module`."""
        head, *rest = name.split(".")
        found = self.resolve(module, head)
        for part in rest:
            if found is None or found.kind != "module":
                return None
            found = self.resolve(found.module, part)
        return found

    def class_chain(self, cls: Definition) -> tuple[list[Definition], bool]:
        """The class and its bases found in the wheel (base first); and whether all were found."""
        assert isinstance(cls.info, ClassInfo)
        chain, closed = [], True
        for base in cls.info.bases:
            if base == "object":
                continue
            found = self.resolve_dotted(cls.module, base)
            if found is None or found.kind != "class":
                closed = False
                continue
            sub, sub_closed = self.class_chain(found)
            chain += sub
            closed = closed and sub_closed
        return chain + [cls], closed
