"""``npudsl check`` on one file: what ``transform`` would report for it, with the cores of the chosen device.

The front half of the transform (``codegen.driver.api.analyze``) without the rewrite;
nothing is written.
"""

from __future__ import annotations

import traceback

import attrs

from codegen.check.diagnostics import Diagnostic
from codegen.driver.api import analyze
from codegen.driver.run import SourceFile
from codegen.index.index import RunIndex
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
        found = check_source(
            file.source, path=file.path, module_name=file.module, index=index, target=target, device=device
        )
    except Exception:  # per-file work never raises out of the run
        return FileReport(path=file.path, internal_error=traceback.format_exc())
    return FileReport(path=file.path, diagnostics=found)


def check_source(
    source: str, *, path: str, module_name: str, index: RunIndex, target: str, device: Device
) -> tuple[Diagnostic, ...]:
    return analyze(source, path=path, module_name=module_name, index=index, target=target, device=device).diagnostics
