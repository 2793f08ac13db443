"""The orderings GE cannot express through tensors: positioned NPD4xx errors of the ``ge`` target."""

from __future__ import annotations

from collections.abc import Iterator

from codegen.diagnostics import Diagnostic
from codegen.ir import Events, ModuleIR, StreamFunction

__all__ = ["problems"]


def problems(ir: ModuleIR) -> Iterator[Diagnostic]:
    """Every @after/@records that the ge target cannot turn into ``npu_wait_tensor`` edges."""
    for fn in ir.functions:
        for spec in fn.records:
            yield from _check_records(ir.path, fn, spec)
        for spec in fn.waits:
            yield from _check_after(ir.path, fn, spec)


def _check_records(path: str, fn: StreamFunction, spec: Events) -> Iterator[Diagnostic]:
    if fn.owner is None:
        yield _module_level(path, fn, spec, "records")
    elif not fn.returns_value:
        yield _error(path, spec, "NPD402", f"@records on {fn.qualname}, which returns no tensor: under GE an "
                     "event is the tensor the body returns", "return the tensor the waiters must wait for")


def _check_after(path: str, fn: StreamFunction, spec: Events) -> Iterator[Diagnostic]:
    """(An event nobody records is NPD201, for every target.)"""
    if fn.owner is None:
        yield _module_level(path, fn, spec, "after")
    elif not fn.inputs:
        yield _error(path, spec, "NPD403", f"@after on {fn.qualname}, which has no tensor input: under GE "
                     "only the consumers of a tensor can wait", "pass the tensor the body works on as an argument")


def _module_level(path: str, fn: StreamFunction, spec: Events, decorator: str) -> Diagnostic:
    return _error(path, spec, "NPD401", f"@{decorator} on module-level function {fn.name}: under GE the "
                  "recorded tensor is kept on the instance, and a function has none",
                  "make the recorder and its waiters methods of one class, or use another target")


def _error(path: str, spec: Events, code: str, message: str, hint: str) -> Diagnostic:
    return Diagnostic(path=path, line=spec.loc.line, col=spec.loc.col, code=code, message=message, hint=hint)
