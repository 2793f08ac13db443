"""What a run knows across files: stream functions, submodules and their call sites.

Built with the standard ``ast`` module (several times faster than a libcst parse),
before any file is rewritten, so a decorated class in one file is known at its
call sites in another.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

import attrs

from codegen import naming, pyast, scan
from codegen.collect import collect
from codegen.ir import Loc, StreamFunction
from codegen.modules import ModuleId, absolute_import
from codegen.plan import EventRef
from codegen.positions import Positions

__all__ = ["CalleeInfo", "CallInfo", "ModuleId", "RunIndex", "build_index"]


@attrs.frozen(kw_only=True)
class CalleeInfo:
    key: str  # "module:Class.method" or "module:function"
    tag: str
    when: str | None
    auto: bool  # automatic fork/join
    fork: EventRef
    join: EventRef
    params: tuple[str, ...] = ()  # the function's parameter names (a decorated class: its forward's)


@attrs.frozen(kw_only=True)
class CallInfo:
    callee: str
    module: str
    caller: str  # qualname of the calling function
    attr: str
    on_self: bool
    caller_stream: str  # the stream the caller runs on ("default" unless decorated)
    bindable: bool
    source: str | None  # where the caller's module imports the callee's class from
    loc: Loc | None = None  # the call's position in the caller's module


@attrs.frozen(kw_only=True)
class RunIndex:
    callees: dict[str, CalleeInfo]
    classes: dict[str, tuple[str, ...]]  # class name -> forward keys of decorated classes
    submodules: dict[str, dict[str, str]]  # "module:Class" -> {attribute: class name}
    calls: dict[str, tuple[CallInfo, ...]]  # callee key -> visible call sites
    imports: dict[str, dict[str, tuple[str, str]]]  # module -> {local name: (import spec, name imported)}
    stream_calls: dict[str, tuple[CallInfo, ...]] = attrs.Factory(dict)  # like calls, for every stream function
    modules: dict[str, ModuleId] = attrs.Factory(dict)  # module key -> its identity (see codegen.modules)

    def resolve(self, module: str, owner: str | None, attr: str, *, on_self: bool) -> str | None:
        """The callee key of ``self.<attr>(...)`` (or ``attr(...)``) in ``owner``, if visible."""
        if not on_self:
            key = f"{module}:{attr}"
            return key if key in self.callees else None
        key = f"{module}:{owner}.{attr}"
        if key in self.callees:
            return key
        cls = self.submodules.get(f"{module}:{owner}", {}).get(attr)
        local = f"{module}:{cls}.forward"
        if local in self.callees:
            return local
        return self._imported_class(module, cls) if cls else None

    def _imported_class(self, module: str, local: str) -> str | None:
        """The decorated class that ``local`` is imported as in ``module``: the one its import really names."""
        origin = self.imports.get(module, {}).get(local)
        if origin is None:
            return None
        source = absolute_import(origin[0], self._module(module))
        keys = [key for key in self.classes.get(origin[1], ())
                if self._module(key.split(":", 1)[0]).dotted == source]
        return keys[0] if len(keys) == 1 else None

    def _module(self, key: str) -> ModuleId:
        return self.modules.get(key) or ModuleId.of(key)

    def import_source(self, module: str, key: str) -> str | None:
        """How ``module`` imports the module that defines ``key`` (None: it is the same module)."""
        callee_module, qualname = key.split(":", 1)
        if callee_module == module:
            return None
        cls = qualname.split(".", 1)[0]
        for local, (spec, name) in self.imports.get(module, {}).items():
            if name == cls and self._imported_class(module, local) == key:
                return spec
        return None

    def joins_at_call_site(self, key: str) -> bool:
        sites = self.calls.get(key, ())
        return bool(sites) and all(site.bindable for site in sites)

    def consumer_streams(self, key: str) -> tuple[str, ...]:
        streams = sorted({site.caller_stream for site in self.calls.get(key, ())})
        return tuple(streams) or ("default",)


def build_index(files: Iterable[tuple[str | ModuleId, str]]) -> RunIndex:
    """Index ``(module, source)`` pairs (a module is its run key, or its :class:`ModuleId`); sources that
    fail to parse are skipped."""
    trees = []
    positions = []
    modules: dict[str, ModuleId] = {}
    for module, source in files:
        found = ModuleId.of(module)
        source = pyast.without_bom(source)
        try:
            trees.append((found.key, pyast.parse(source), source))
        except (SyntaxError, ValueError):
            continue
        modules[found.key] = found
        positions.append(Positions(source))
    callees: dict[str, CalleeInfo] = {}
    classes: dict[str, list[str]] = {}
    submodules: dict[str, dict[str, str]] = {}
    for module, tree, source in trees:
        _collect_definitions(module, tree, source, callees, classes, submodules)
    partial = RunIndex(callees=callees, classes={k: tuple(v) for k, v in classes.items()},
                       submodules=submodules, calls={}, modules=modules,
                       imports={module: scan.imported_names(tree) for module, tree, _ in trees})
    calls: dict[str, list[CallInfo]] = {}
    stream_calls: dict[str, list[CallInfo]] = {}
    for (module, tree, _), where in zip(trees, positions):
        for callee, info in _collect_calls(module, tree, partial, where):
            stream_calls.setdefault(callee, []).append(info)
            if partial.callees[callee].auto:
                calls.setdefault(callee, []).append(info)
    return attrs.evolve(partial, calls={k: tuple(v) for k, v in calls.items()},
                        stream_calls={k: tuple(v) for k, v in stream_calls.items()})


def _collect_definitions(module: str, tree: ast.Module, source: str, callees: dict[str, CalleeInfo],
                         classes: dict[str, list[str]], submodules: dict[str, dict[str, str]]) -> None:
    """The stream functions of one module, exactly as the collector reads them (the two never disagree)."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            submodules[f"{module}:{node.name}"] = scan.submodule_assignments(node)
    if not pyast.mentions_npudsl(source):
        return
    streams = [fn for fn in collect(tree, source, path=module, module_name=module).ir.functions
               if fn.stream is not None]
    for fn in streams:
        if fn.class_level:
            classes.setdefault(fn.owner or "", []).append(f"{module}:{fn.qualname}")
        shared = any(o.name == fn.name and o.owner != fn.owner for o in streams)
        key = f"{module}:{fn.qualname}"
        callees[key] = CalleeInfo(key=key, **_stream_fields(fn),
                                  fork=_sync_event(module, fn.owner, fn.name, "fork", fn.class_level, shared),
                                  join=_sync_event(module, fn.owner, fn.name, "join", fn.class_level, shared))


def _stream_fields(fn: StreamFunction) -> dict[str, object]:
    assert fn.stream is not None
    when = fn.stream.when.dotted if fn.stream.when else None
    return {"tag": fn.stream.tag, "when": when, "auto": fn.auto_sync, "params": fn.params}


def _sync_event(module: str, owner: str | None, name: str, role: str, class_level: bool, shared: bool) -> EventRef:
    var = naming.sync_var(owner, name, role, class_level=class_level, shared=shared)
    return EventRef(var=var, tag=naming.event_tag(module, owner, name, role))


def _collect_calls(module: str, tree: ast.Module, index: RunIndex,
                   positions: Positions) -> Iterable[tuple[str, CallInfo]]:
    """Visible calls of every stream function (automatic or not), with their positions."""
    searched = _owners_that_may_call(module, tree, index)
    for owner, fn in scan.all_functions(tree):
        if searched is not None and owner not in searched:
            continue
        own = index.callees.get(f"{module}:{owner}.{fn.name}" if owner else f"{module}:{fn.name}")
        caller_stream = own.tag if own is not None else "default"
        for call, bindable in scan.calls_in(fn):
            on_self, attr = scan.callee_name(call)
            if attr is None:
                continue
            key = index.resolve(module, owner, attr, on_self=on_self)
            if key is not None:
                qualname = f"{owner}.{fn.name}" if owner else fn.name
                yield key, CallInfo(callee=key, module=module, caller=qualname, attr=attr, on_self=on_self,
                                    caller_stream=caller_stream, bindable=bindable,
                                    source=index.import_source(module, key), loc=positions.loc(call))


def _owners_that_may_call(module: str, tree: ast.Module, index: RunIndex) -> set[str | None] | None:
    """The classes (None: module level) whose calls can resolve at all; None when any function's can.

    ``resolve`` finds ``f(...)`` only when ``module:f`` is a callee, and ``self.x(...)`` in class
    ``C`` only through a callee ``module:C.x`` or a submodule ``x`` of ``C``: a class with neither
    needs no walk through its calls.
    """
    local = [key.split(":", 1)[1] for key in index.callees if key.split(":", 1)[0] == module]
    if any("." not in name for name in local):
        return None
    searched: set[str | None] = {name.split(".", 1)[0] for name in local}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name not in searched and any(
                index.resolve(module, node.name, attr, on_self=True) is not None
                for attr in index.submodules.get(f"{module}:{node.name}", {})):
            searched.add(node.name)
    return searched
