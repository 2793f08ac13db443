"""The transformer's entry points: one source, or a run of many (see ``codegen.run``)."""

from __future__ import annotations

import os
import re

from codegen import pyast
from codegen.collect import collect
from codegen.diagnostics import Diagnostic, InternalError, Severity, TransformError
from codegen.index import RunIndex, build_index
from codegen.lower import lower
from codegen.rewrite.splice import rewrite_source
from codegen.targets import get_target
from codegen.validate import validate

__all__ = ["InternalError", "TransformError", "mentions_npudsl", "module_name_for", "transform_source",
           "transform_with_index"]

_NPUDSL = re.compile(r"\bnpudsl\b")


def mentions_npudsl(source: str) -> bool:
    """The cheap test: a file that never names npudsl has nothing to transform."""
    return _NPUDSL.search(source) is not None


def module_name_for(path: str) -> str:
    """The dotted module name of ``path``, walking up through packages (folders with ``__init__.py``)."""
    path = os.path.abspath(path)
    parts = [os.path.splitext(os.path.basename(path))[0]]
    folder = os.path.dirname(path)
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.append(os.path.basename(folder))
        folder = os.path.dirname(folder)
    if parts[0] == "__init__" and len(parts) > 1:
        parts = parts[1:]
    return ".".join(reversed(parts))


def transform_source(source: str, *, path: str, target: str = "aclgraph", module_name: str | None = None) -> str:
    """Transform one module on its own; raise :class:`TransformError` on errors."""
    module_name = module_name or module_name_for(path)
    index = build_index([(module_name, source)])
    code, diagnostics = transform_with_index(source, path=path, module_name=module_name, index=index, target=target)
    errors = tuple(d for d in diagnostics if d.severity is Severity.ERROR)
    if errors:
        raise TransformError(errors)
    return code


def syntax_error(exc: SyntaxError, path: str) -> Diagnostic:
    return Diagnostic(path=path, line=max(exc.lineno or 1, 1), col=max(exc.offset or 1, 1), code="NPD001",
                      message=f"syntax error: {exc.msg}", hint="fix the Python syntax first")


def transform_with_index(source: str, *, path: str, module_name: str, index: RunIndex,
                         target: str) -> tuple[str, tuple[Diagnostic, ...]]:
    """(code, diagnostics) for one module of a run; the code is the input unchanged when there are errors."""
    if not mentions_npudsl(source) and not _calls_into(index, module_name):
        return source, ()
    try:
        tree = pyast.parse(source)
    except SyntaxError as exc:
        return source, (syntax_error(exc, path),)
    collection = collect(tree, source, path=path, module_name=module_name)
    diagnostics = collection.diagnostics + validate(collection.ir, index, target=target)
    if any(d.severity is Severity.ERROR for d in diagnostics):
        return source, diagnostics
    plan = lower(collection.ir, index)
    chosen = get_target(target)
    diagnostics += tuple(getattr(chosen, "diagnose", lambda _ir, _plan: ())(collection.ir, plan))
    if any(d.severity is Severity.ERROR for d in diagnostics):
        return source, diagnostics
    if not plan.functions and not plan.joins:
        return source, diagnostics
    return rewrite_source(source, tree, plan, chosen, collection.names), diagnostics


def _calls_into(index: RunIndex, module_name: str) -> bool:
    return any(call.module == module_name for calls in index.calls.values() for call in calls)
