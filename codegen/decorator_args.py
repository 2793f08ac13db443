"""Read one decorator's literal arguments into its IR node, or say what is wrong."""

from __future__ import annotations

import ast
import inspect
from typing import Any

from npudsl import _rules
from codegen.diagnostics import Diagnostic
from codegen.ir import CoreLimit, Events, Guard, KeepOutput, Stream
from codegen.positions import Positions

__all__ = ["parse"]

_SHAPES = {
    "on_stream": inspect.signature(lambda tag, priority=0, *, when=None, sync="auto": None),
    "after": inspect.signature(lambda *events, when=None: None),
    "records": inspect.signature(lambda *events, when=None: None),
    "core_limit": inspect.signature(lambda aicore, vector, *, when=None: None),
    "keep_output": inspect.signature(lambda *, clone=False, when=None: None),
}

Result = tuple[Any, list[Diagnostic]]


class _Invalid(Exception):
    def __init__(self, node: ast.AST, code: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.node, self.code, self.message, self.hint = node, code, message, hint


def parse(decorator: str, node: ast.expr, positions: Positions, path: str) -> Result:
    """The IR node for ``node`` (an ``@decorator`` or ``@decorator(...)``), or diagnostics."""
    loc = positions.loc(node)
    try:
        bound, arg_nodes = _bind(decorator, node)
        if decorator in ("after", "records") and not bound.arguments.get("events"):
            raise _Invalid(node, "NPD109", f"@{decorator} needs at least one event name",
                           f'name the events, e.g. @{decorator}("dispatched")')
        for name, value in bound.arguments.items():
            _check(decorator, name, value, arg_nodes[name])
        return _build(decorator, bound.arguments, loc), []
    except _Invalid as bad:
        at = positions.loc(bad.node)
        return None, [Diagnostic(path=path, line=at.line, col=at.col, code=bad.code,
                                 message=bad.message, hint=bad.hint)]


def _bind(decorator: str, node: ast.expr) -> tuple[inspect.BoundArguments, dict[str, Any]]:
    if not isinstance(node, ast.Call):
        if decorator == "keep_output":
            return _SHAPES[decorator].bind(), {}
        raise _Invalid(node, "NPD109", f"@{decorator} needs arguments",
                       f"call it: @{decorator}(...)")
    values, nodes = [], []
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            raise _Invalid(arg, "NPD101", f"@{decorator} arguments must be literals, not *args", "spell each one out")
        values.append(_literal(decorator, arg))
        nodes.append(arg)
    kwvalues = {}
    kwnodes = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise _Invalid(kw.value, "NPD101", f"@{decorator} arguments must be literals, not **kwargs",
                           "spell each one out")
        kwvalues[kw.arg], kwnodes[kw.arg] = _literal(decorator, kw.value), kw.value
    try:
        bound = _SHAPES[decorator].bind(*values, **kwvalues)
    except TypeError as exc:
        raise _Invalid(node, "NPD109", f"@{decorator}: {exc}", f"see the signature of {decorator} in the docs") from None
    by_name = {name: kwnodes.get(name) for name in bound.arguments}
    positional = iter(nodes)
    for name, param in _SHAPES[decorator].parameters.items():
        if name in bound.arguments and name not in kwnodes:
            by_name[name] = nodes if param.kind is param.VAR_POSITIONAL else next(positional)
    return bound, by_name


def _literal(decorator: str, node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise _Invalid(node, "NPD101", f"@{decorator} arguments must be literals (str, int, bool, None)",
                       "npudsl reads decorators without running code; use a literal, or when=\"dotted.name\"") from None


def _check(decorator: str, name: str, value: object, node: Any) -> None:
    if name == "events":
        for event, event_node in zip(value, node):  # type: ignore[call-overload]
            _raise(_rules.check_event(event), event_node)
        return
    check = {"tag": _rules.check_tag, "priority": _rules.check_priority, "when": _rules.check_when,
             "sync": _rules.check_sync, "clone": _rules.check_clone,
             "aicore": lambda v: _rules.check_cores("aicore", v),
             "vector": lambda v: _rules.check_cores("vector", v)}[name]
    _raise(check(value), node)


def _raise(violation: _rules.Violation | None, node: ast.AST) -> None:
    if violation is not None:
        raise _Invalid(node, violation.code, violation.message, violation.hint)


def _build(decorator: str, args: dict[str, Any], loc: Any) -> Any:
    when = Guard(dotted=args["when"]) if args.get("when") else None
    if decorator == "on_stream":
        return Stream(tag=args["tag"], priority=args.get("priority", 0), sync=args.get("sync", "auto"),
                      when=when, loc=loc)
    if decorator in ("after", "records"):
        return Events(names=tuple(args["events"]), when=when, loc=loc)
    if decorator == "core_limit":
        return CoreLimit(aicore=args["aicore"], vector=args["vector"], when=when, loc=loc)
    return KeepOutput(clone=args.get("clone", False), when=when, loc=loc)

