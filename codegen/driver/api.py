"""The transformer's entry points: one source, or a run of many (see ``codegen.driver.run``)."""

from __future__ import annotations

import ast
import os

import attrs

from codegen.check.diagnostics import Diagnostic, Severity, TransformError
from codegen.check.validate import validate
from codegen.driver import pyast
from codegen.driver.modules import ModuleId, module_name_for
from codegen.driver.pyast import mentions_npudsl
from codegen.driver.triage import needs_analysis
from codegen.frontend.collect import Collection, NpudslNames, collect
from codegen.frontend.positions import Positions
from codegen.index.index import RunIndex, build_index
from codegen.lower.hygiene import ModuleNames
from codegen.lower.lower import lower
from codegen.lower.plan import ModulePlan
from codegen.rewrite.splice import rewrite_source
from codegen.targets import get_target
from npudsl import codes
from npudsl.devices import DEFAULT_DEVICE, Device

__all__ = [
    "Analysis",
    "TransformError",
    "analyze",
    "mentions_npudsl",
    "module_name_for",
    "transform_source",
    "transform_with_index",
]


def transform_source(source: str, *, path: str, target: str = "aclgraph", module_name: str | None = None) -> str:
    """Transform one module on its own; raise :class:`TransformError` on errors."""
    module_name = module_name or module_name_for(path)
    module = ModuleId(key=module_name, dotted=module_name, package=os.path.basename(path) == "__init__.py")
    index = build_index([(module, source)])
    code, diagnostics = transform_with_index(source, path=path, module_name=module_name, index=index, target=target)
    errors = tuple(d for d in diagnostics if d.severity is Severity.ERROR)
    if errors:
        raise TransformError(errors)
    return code


def syntax_error(exc: SyntaxError, path: str) -> Diagnostic:
    return Diagnostic(
        path=path,
        line=max(exc.lineno or 1, 1),
        col=max(exc.offset or 1, 1),
        code=codes.SYNTAX,
        message=f"syntax error: {exc.msg}",
        hint="fix the Python syntax first",
    )


@attrs.frozen(kw_only=True)
class Analysis:
    """The front half of a transform: everything but the rewrite (what ``npudsl check`` reports)."""

    diagnostics: tuple[Diagnostic, ...] = ()
    tree: ast.Module | None = None
    names: NpudslNames | None = None
    plan: ModulePlan | None = None  # None when an error stops the file
    module_names: ModuleNames | None = None  # the hygienic names the plan's generated code uses

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)


def analyze(
    source: str, *, path: str, module_name: str, index: RunIndex, target: str, device: Device = DEFAULT_DEVICE
) -> Analysis:
    """Parse, collect, validate (against ``device``), lower, and the target's own diagnostics."""
    if not needs_analysis(source, module_name, index):
        return Analysis()
    source = pyast.without_bom(source)
    try:
        tree = pyast.parse(source)
    except SyntaxError as exc:
        return Analysis(diagnostics=(syntax_error(exc, path),))
    except RecursionError:
        return Analysis(diagnostics=(_too_deep(path),))
    collection = collect(tree, source, path=path, module_name=module_name)
    found = Analysis(
        diagnostics=collection.diagnostics
        + validate(collection.ir, index, target=target, device=device, tree=tree, source=source)
    )
    if found.has_errors:
        return found
    return _lowered(collection, found.diagnostics, tree, source, index, target)


def _too_deep(path: str) -> Diagnostic:
    return Diagnostic(
        path=path,
        line=1,
        col=1,
        code=codes.SYNTAX,
        message="code nested too deeply to parse",
        hint="split the deepest expression into several statements",
    )


def _lowered(
    collection: Collection,
    diagnostics: tuple[Diagnostic, ...],
    tree: ast.Module,
    source: str,
    index: RunIndex,
    target: str,
) -> Analysis:
    """The analysis of a module without errors: its plan for ``target``, and the target's own diagnostics."""
    module_names = ModuleNames(tree)
    chosen = get_target(target)
    plan, planned = lower(collection.ir, index, tree, Positions(source), module_names, event_sync=chosen.event_sync)
    diagnose = getattr(chosen, "diagnose", lambda _ir, _plan: ())
    diagnostics = diagnostics + planned + tuple(diagnose(collection.ir, plan))
    return Analysis(diagnostics=diagnostics, tree=tree, names=collection.names, plan=plan, module_names=module_names)


def transform_with_index(
    source: str, *, path: str, module_name: str, index: RunIndex, target: str
) -> tuple[str, tuple[Diagnostic, ...]]:
    """(code, diagnostics) for one module of a run; the code is the input unchanged when there are errors."""
    found = analyze(source, path=path, module_name=module_name, index=index, target=target)
    plan = found.plan
    if found.has_errors or plan is None or not (plan.functions or plan.callers):
        return source, found.diagnostics
    assert found.tree is not None and found.names is not None and found.module_names is not None
    spelling = get_target(target).spelling(found.module_names)
    bom = pyast.BOM if source.startswith(pyast.BOM) else ""
    code = pyast.deep(rewrite_source, pyast.without_bom(source), found.tree, plan, spelling, found.names)
    return bom + code, found.diagnostics
