"""Render the sync analysis of a caller as the caller's code with marker statements in place.

Stream calls are ``self.<name>(...)`` for the names given; the markers read ``join(name)``,
``join_if_forked(name)`` (a *may* join) and ``relay(producer, consumer)``.
"""

from __future__ import annotations

import ast
import textwrap

from codegen.lower.flow.analyze import analyze
from codegen.lower.flow.exprs import data_reads
from codegen.lower.flow.own_calls import aware_call
from codegen.lower.flow.transfer import Join, SiteView

__all__ = ["marked"]


def _sites(fn: ast.FunctionDef, streams: dict[str, str]) -> tuple[dict[ast.stmt, SiteView], list[str]]:
    sites: dict[ast.stmt, SiteView] = {}
    names: list[str] = []
    for stmt in ast.walk(fn):
        call = aware_call(stmt) if isinstance(stmt, ast.stmt) else None
        func = call.func if call is not None else None
        if not (isinstance(func, ast.Attribute) and func.attr in streams):
            continue
        bare = frozenset(a.id for a in call.args if isinstance(a, ast.Name))
        other = [a for a in call.args if not isinstance(a, ast.Name)]
        reads = set().union(*(data_reads(a) for a in other)) if other else set()
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        bound = frozenset(n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name))
        sites[stmt] = SiteView(
            index=len(names),
            names=bound,
            bare=bare,
            reads=frozenset(reads),
            guarded=func.attr.startswith("guarded"),
            event=func.attr,
        )
        names.append(func.attr)
    return sites, names


class _ByStream:
    """Calls relate by their streams only (no guards)."""

    def __init__(self, tags: list[str]) -> None:
        self.tags = tags
        self.dropped: dict[ast.stmt, frozenset[str]] = {}

    def consume(self, producer: int, consumer: int) -> str:
        return "none" if self.tags[producer] == self.tags[consumer] else "relay"

    def covers(self, earlier: int, later: int) -> bool:
        return self.tags[earlier] == self.tags[later]

    def state_of(self, site: int) -> frozenset[str]:
        return frozenset()


def _marker(step: object, names: list[str]) -> ast.stmt:
    if isinstance(step, Join):
        text = f"join_if_forked({names[step.site]})" if step.may else f"join({names[step.site]})"
    else:
        text = f"relay({names[step.site]}, {names[step.to]})"
    return ast.parse(text).body[0]


def marked(source: str, streams: dict[str, str]) -> str:
    """``source`` (one function) with the analysis' steps spelled as marker statements."""
    tree = ast.parse(textwrap.dedent(source))
    fn = tree.body[0]
    sites, names = _sites(fn, streams)
    result = analyze(fn, sites, _ByStream([streams[n] for n in names]))
    for node in list(ast.walk(fn)):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or not block or not isinstance(block[0], ast.stmt):
                continue
            out = []
            for stmt in block:
                out += [_marker(s, names) for s in result.at(("before", stmt, ""))]
                out.append(stmt)
            out += [_marker(s, names) for s in result.at(("end", node, field))]
            setattr(node, field, out)
    return ast.unparse(fn) + "\n"
