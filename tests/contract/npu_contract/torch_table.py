"""An API table of an installed torch namespace (e.g. `torch.cuda`), by introspection."""

from __future__ import annotations

import importlib
import inspect
import types
import warnings

from npu_contract.model import ApiEntry, ApiKind, ApiTable, Param, ParamKind

__all__ = ["build_torch_table"]

_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: ParamKind.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: ParamKind.POSITIONAL_OR_KEYWORD,
    inspect.Parameter.VAR_POSITIONAL: ParamKind.VAR_POSITIONAL,
    inspect.Parameter.KEYWORD_ONLY: ParamKind.KEYWORD_ONLY,
    inspect.Parameter.VAR_KEYWORD: ParamKind.VAR_KEYWORD,
}


def _params(obj: object, *, drop_first: bool = False) -> tuple[Param, ...] | None:
    try:
        sig = inspect.signature(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    params = tuple(
        Param(name=p.name, kind=_KINDS[p.kind], has_default=p.default is not inspect.Parameter.empty)
        for p in sig.parameters.values()
    )
    return params[1:] if drop_first and params else params


def _member(cls: type, qualified: str, name: str) -> ApiEntry:
    raw = inspect.getattr_static(cls, name)
    full = f"{qualified}.{name}"
    if isinstance(raw, (property, types.GetSetDescriptorType, types.MemberDescriptorType)):
        return ApiEntry(name=full, kind=ApiKind.VALUE)
    if not callable(getattr(cls, name, None)):
        return ApiEntry(name=full, kind=ApiKind.VALUE)
    plain = inspect.isfunction(raw)  # looked up on an instance, `self` is bound
    return ApiEntry(name=full, kind=ApiKind.METHOD, params=_params(getattr(cls, name), drop_first=plain))


def _foreign_module(child: object, parent: types.ModuleType) -> bool:
    """A module imported from elsewhere (`torch.cuda.torch`), not a submodule."""
    return inspect.ismodule(child) and not child.__name__.startswith(parent.__name__ + ".")


def _entries(qualified: str, obj: object, depth: int) -> list[ApiEntry]:
    if inspect.ismodule(obj):
        out = [ApiEntry(name=qualified, kind=ApiKind.MODULE, closed=depth > 0)]
        for name in dir(obj) if depth > 0 else ():
            child = getattr(obj, name, None)
            if not name.startswith("_") and not _foreign_module(child, obj):
                out += _entries(f"{qualified}.{name}", child, depth - 1)
        return out
    if inspect.isclass(obj):
        out = [ApiEntry(name=qualified, kind=ApiKind.CLASS, params=_params(obj))]
        return out + [_member(obj, qualified, n) for n in dir(obj) if not n.startswith("_")]
    if callable(obj):
        return [ApiEntry(name=qualified, kind=ApiKind.FUNCTION, params=_params(obj))]
    return [ApiEntry(name=qualified, kind=ApiKind.VALUE)]


def build_torch_table(namespace: str = "torch.cuda", *, depth: int = 2) -> ApiTable:
    """Public names under `namespace` of the installed torch (submodules `depth` deep)."""
    module = importlib.import_module(namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        entries = {e.name: e for e in _entries(namespace, module, depth)}
    return ApiTable(entries=entries, roots=frozenset({namespace}))
