"""The class a name written in one module of the run stands for, read from that module's own imports.

A submodule assignment is recorded as written (``self.mla_preprocess = NPUFusedMLAPreprocess(self)`` ->
``"NPUFusedMLAPreprocess"``), in the namespace of the module that writes it. A caller in *another* module
reaches that submodule through a parameter annotated with the owning class (sglang's
``forward_dsa_prepare_npu(m: "DeepseekV2AttentionMLA", ...)`` calling ``m.mla_preprocess.forward(...)``), so the
written name must be read where it was written, not where it is called: :func:`class_in` does, from the imports
the run index recorded for that module (``from .mla_npu import NPUFusedMLAPreprocess``; a name imported from two
places, or bound otherwise too, is not recorded, ``blocks.imported_names``). A module the run did not read, or a
name it binds some other way, resolves to nothing: the call then stays on its caller's stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from codegen.lower.flow.imports import resolve_spec

__all__ = ["class_in"]


class _Index(Protocol):
    @property
    def imports(self) -> Mapping[str, Mapping[str, tuple[str, str]]]: ...

    @property
    def submodules(self) -> Mapping[str, Mapping[str, str]]: ...

    def package_of(self, module: str) -> str: ...

    def key_of(self, dotted: str) -> str: ...


def class_in(index: _Index, module: str, written: str) -> str | None:
    """The run key (``module:Class``) of the class that the bare name ``written`` is imported as in ``module``
    (a run key), when that module imports it by name, certainly, from a module of the run that defines it."""
    imported = index.imports.get(module, {}).get(written) if written.isidentifier() else None
    if imported is None:
        return None
    spec, name = imported
    key = f"{index.key_of(resolve_spec(spec, index.package_of(module)))}:{name}"
    return key if key in index.submodules else None  # every class of every module the run indexed is there
