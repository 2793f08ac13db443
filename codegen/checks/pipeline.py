"""``npudsl check`` on one file: what ``transform`` would report for it, with the cores of the chosen device.

The front half of the transform (parse, collect, validate, lower, the target's
own diagnostics) without the rewrite; nothing is written.
"""

from __future__ import annotations

import traceback

import attrs

from codegen import pyast
from codegen.api import mentions_npudsl, syntax_error
from codegen.collect import collect
from codegen.diagnostics import Diagnostic, Severity
from codegen.index import RunIndex
from codegen.lower import lower
from codegen.run import SourceFile
from codegen.targets import get_target
from codegen.validate import validate
from npudsl.devices import Device

__all__ = ["FileReport", "check_file", "check_source"]


@attrs.frozen(kw_only=True)
class FileReport:
    path: str
    diagnostics: tuple[Diagnostic, ...] = ()
    internal_error: str | None = None


def check_file(file: SourceFile, index: RunIndex, *, target: str, device: Device) -> FileReport:
    """Never raises: a bug in npudsl becomes ``internal_error``."""
    if file.error is not None or file.source is None:
        return FileReport(path=file.path, diagnostics=tuple(d for d in (file.error,) if d is not None))
    try:
        found = check_source(file.source, path=file.path, module_name=file.module, index=index, target=target,
                             device=device)
    except Exception:  # per-file work never raises out of the run
        return FileReport(path=file.path, internal_error=traceback.format_exc())
    return FileReport(path=file.path, diagnostics=found)


def check_source(source: str, *, path: str, module_name: str, index: RunIndex, target: str,
                 device: Device) -> tuple[Diagnostic, ...]:
    if not mentions_npudsl(source) and not any(c.module == module_name for cs in index.calls.values() for c in cs):
        return ()
    try:
        tree = pyast.parse(source)
    except SyntaxError as exc:
        return (syntax_error(exc, path),)
    collection = collect(tree, source, path=path, module_name=module_name)
    found = collection.diagnostics + validate(collection.ir, index, target=target, device=device)
    if any(d.severity is Severity.ERROR for d in found):
        return found
    diagnose = getattr(get_target(target), "diagnose", None)
    if diagnose is None:
        return found
    return found + tuple(diagnose(collection.ir, lower(collection.ir, index)))
