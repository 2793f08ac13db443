"""Remove npudsl's decorators (and the imports that only they used) from a source: the unannotated model.

``bench/suggest_quality.py`` strips the examples' hand-written decorators this way
before asking ``suggest`` for its own. Which decorators are npudsl's is decided by
:func:`codegen.frontend.names.resolve.resolve`, the transformer's own resolution.
"""

from __future__ import annotations

from typing import TypeVar

import libcst as cst
import libcst.matchers as m

from codegen.driver import pyast
from codegen.frontend.names.bindings import DECORATORS
from codegen.frontend.names.resolve import NpudslNames, resolve

__all__ = ["strip_decorators"]

_NPUDSL_FROM = m.ImportFrom(module=m.Name("npudsl") | m.Attribute(value=m.Name("npudsl"), attr=m.Name("decorators")))


_Def = TypeVar("_Def", cst.FunctionDef, cst.ClassDef)


class _Strip(cst.CSTTransformer):
    def __init__(self, names: NpudslNames) -> None:
        super().__init__()
        self.names = names

    def _kept(self, node: _Def) -> _Def:
        return node.with_changes(decorators=[d for d in node.decorators if not self.names.strips(d)])

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        return self._kept(updated)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        return self._kept(updated)

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        body = [s for s in (_without_decorators(small) for small in updated.body) if s is not None]
        if not body:
            return cst.RemovalSentinel.REMOVE
        return updated.with_changes(body=body)


def _without_decorators(node: cst.BaseSmallStatement) -> cst.BaseSmallStatement | None:
    if (
        not isinstance(node, cst.ImportFrom)
        or not m.matches(node, _NPUDSL_FROM)
        or isinstance(node.names, cst.ImportStar)
    ):
        return node
    names = [a for a in node.names if cst.Module([]).code_for_node(a.name) not in DECORATORS]
    if not names:
        return None
    names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node.with_changes(names=names)


def strip_decorators(source: str) -> str:
    """``source`` without npudsl's decorators and without importing them."""
    names = resolve(pyast.parse(source))
    return cst.parse_module(source).visit(_Strip(names)).code
