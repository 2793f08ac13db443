"""Stage 4: write a plan into the source with libcst: ``@on_stream`` where the moves are, and its import.

- A callee whose every call in the model moves to one stream gets the decorator
  itself: the method, or the submodule's class (its ``forward``).
- Otherwise each moved call gets a small method on the caller that wraps it,
  decorated, and the call goes through it (``self.branch_a(x)`` becomes
  ``self._branch_a(x)``): that is how one instance of a class can move while
  another of the same class stays.
- A call whose statement moves up (:mod:`npudsl.suggest.hoist`) goes, with its
  own leading comments, in front of the statement it now precedes; nothing
  else in its block moves.
- ``from npudsl import on_stream`` joins an existing ``from npudsl import`` or
  starts its own block after the module's imports.
"""

from __future__ import annotations

from typing import TypeVar

import attrs
import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

from npudsl.suggest.blocks import Scoped
from npudsl.suggest.hoist import Hoist
from npudsl.suggest.import_line import with_on_stream_import
from npudsl.suggest.units import Site

__all__ = ["Edit", "Wrap", "apply_edits", "self_calls", "wrappable"]

_Def = TypeVar("_Def", cst.FunctionDef, cst.ClassDef)


@attrs.frozen(kw_only=True)
class Wrap:
    """Route the call ``self.<attribute>(...)`` of ``site`` through a decorated method ``name``."""

    site: Site
    attribute: str
    name: str
    stream: str


@attrs.frozen(kw_only=True)
class Edit:
    decorate: dict[str, str]  # "Class" or "Class.method" -> stream
    wraps: tuple[Wrap, ...] = ()
    hoists: tuple[Hoist, ...] = ()


def _decorator(stream: str) -> cst.Decorator:
    return cst.Decorator(decorator=cst.parse_expression(f"on_stream({stream!r})".replace("'", '"')))


def _self_call(attribute: str) -> m.Call:
    return m.Call(func=m.Attribute(value=m.Name("self"), attr=m.Name(attribute)))


def _parameters(call: cst.Call) -> list[str] | None:
    """The wrapper's parameters for ``call``'s arguments; None when they cannot be mirrored (``*a``, ``**k``)."""
    names: list[str] = []
    for i, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is not None:
            names.append(arg.keyword.value)
        elif isinstance(arg.value, cst.Name) and arg.value.value not in ("self", *names):
            names.append(arg.value.value)
        else:
            names.append(f"arg{i}")
    return names if len(set(names)) == len(names) else None


def _wrapper(wrap: Wrap, call: cst.Call) -> cst.FunctionDef:
    names = _parameters(call) or []
    passed = [f"{n}={n}" if a.keyword is not None else n for n, a in zip(names, call.args)]
    code = (
        f"def {wrap.name}(self{''.join(', ' + n for n in names)}):\n"
        f"    return self.{wrap.attribute}({', '.join(passed)})\n"
    )
    function = cst.ensure_type(cst.parse_statement(code), cst.FunctionDef)
    return function.with_changes(decorators=[_decorator(wrap.stream)])


class _Calls(Scoped):
    """The calls ``self.<attribute>(...)`` on each line of one method."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[tuple[str, int, str], list[cst.Call]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and m.matches(node.func.value, m.Name("self")):
            span = self.get_metadata(PositionProvider, node)
            for line in range(span.start.line, span.end.line + 1):
                key = (".".join(self.scope), line, node.func.attr.value)
                self.found.setdefault(key, []).append(node)


def _calls(wrapper: MetadataWrapper) -> dict[tuple[str, int, str], list[cst.Call]]:
    visitor = _Calls()
    wrapper.visit(visitor)
    return visitor.found


def self_calls(module: cst.Module) -> dict[tuple[str, int, str], list[cst.Call]]:
    """The calls ``self.<attribute>(...)`` of ``module``, by (method, line, attribute): what :func:`wrappable`
    asks (read once per file: a modeling file has thousands of lines)."""
    return _calls(MetadataWrapper(module, unsafe_skip_copy=True))


def wrappable(calls: dict[tuple[str, int, str], list[cst.Call]], site: Site, attribute: str) -> bool:
    """Whether ``site`` is one call ``self.<attribute>(...)`` (in :func:`self_calls`) whose arguments a wrapper
    can mirror."""
    found = calls.get((site.caller, site.line, attribute), [])
    return len(found) == 1 and _parameters(found[0]) is not None


class _Apply(cst.CSTTransformer):
    def __init__(self, edit: Edit, calls: dict[cst.Call, Wrap], lines: dict[cst.CSTNode, int]) -> None:
        super().__init__()
        self.edit = edit
        self.calls = calls
        self.lines = lines  # each statement's first line
        self.scope: list[str] = []

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        lines = [self.lines[s] for s in original.body]
        slot = {h.line: lines.index(h.before) for h in self.edit.hoists if h.line in lines and h.before in lines}
        if not slot:
            return updated
        keys = [(slot[line], 0, i) if line in slot else (i, 1, i) for i, line in enumerate(lines)]
        return updated.with_changes(body=[updated.body[i] for i in sorted(range(len(lines)), key=keys.__getitem__)])

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(node.name.value)

    def _decorated(self, node: _Def) -> _Def:
        stream = self.edit.decorate.get(".".join(self.scope))
        self.scope.pop()
        if stream is None:
            return node
        return node.with_changes(decorators=[_decorator(stream), *node.decorators])

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        return self._decorated(updated)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        if not isinstance(updated.body, cst.IndentedBlock):  # ``class A: ...`` holds no method to wrap
            return self._decorated(updated)
        body: list[cst.BaseStatement] = []
        for statement in updated.body.body:
            name = statement.name.value if isinstance(statement, cst.FunctionDef) else None
            for call, wrap in self.calls.items():
                if wrap.site.caller == f"{updated.name.value}.{name}":
                    lines = statement.leading_lines if body and isinstance(statement, cst.FunctionDef) else ()
                    body.append(_wrapper(wrap, call).with_changes(leading_lines=lines))
            body.append(statement)
        updated = updated.with_changes(body=updated.body.with_changes(body=body))
        return self._decorated(updated)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        wrap = self.calls.get(original)
        if wrap is None:
            return updated
        return updated.with_changes(func=updated.func.with_changes(attr=cst.Name(wrap.name)))


def apply_edits(source: str, edit: Edit) -> str:
    """``source`` with ``edit`` written in (the same text when it asks for nothing)."""
    if not edit.decorate and not edit.wraps:
        return source
    wrapper = MetadataWrapper(cst.parse_module(source))
    found = _calls(wrapper)
    calls = {found[(w.site.caller, w.site.line, w.attribute)][0]: w for w in edit.wraps}
    lines: dict[cst.CSTNode, int] = {
        node: span.start.line
        for node, span in wrapper.resolve(PositionProvider).items()
        if isinstance(node, cst.BaseStatement)
    }
    return with_on_stream_import(wrapper.module.visit(_Apply(edit, calls, lines))).code
