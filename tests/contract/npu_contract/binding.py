"""Does a call's argument list fit a signature? (names, kinds, counts)"""

from __future__ import annotations

import libcst as cst

from npu_contract.model import Param, ParamKind

__all__ = ["check_arguments"]

_POSITIONAL = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
_NAMED = (*_POSITIONAL, ParamKind.KEYWORD_ONLY)

Finding = tuple[cst.CSTNode, str]


def _spelled(params: tuple[Param, ...]) -> str:
    marks = {ParamKind.VAR_POSITIONAL: "*", ParamKind.VAR_KEYWORD: "**"}
    return "(" + ", ".join(marks.get(p.kind, "") + p.name + ("=…" if p.has_default else "") for p in params) + ")"


def _too_many(params: tuple[Param, ...], positional: list[cst.Arg]) -> list[Finding]:
    limit = sum(p.kind in _POSITIONAL for p in params)
    if len(positional) <= limit or any(p.kind is ParamKind.VAR_POSITIONAL for p in params):
        return []
    message = f"takes at most {limit} positional argument(s), {len(positional)} given; signature {_spelled(params)}"
    return [(positional[limit], message)]


def _keyword(params: tuple[Param, ...], arg: cst.Arg, bound: set[str]) -> list[Finding]:
    name = arg.keyword.value if arg.keyword else ""
    found = next((p for p in params if p.name == name and p.kind in _NAMED), None)
    if found is None:
        if any(p.kind is ParamKind.VAR_KEYWORD for p in params):
            return []
        return [(arg, f"has no parameter {name!r}; signature {_spelled(params)}")]
    if found.kind is ParamKind.POSITIONAL_ONLY:
        return [(arg, f"parameter {name!r} is positional-only")]
    if name in bound:
        return [(arg, f"got multiple values for parameter {name!r}")]
    bound.add(name)
    return []


def check_arguments(params: tuple[Param, ...], call: cst.Call) -> list[Finding]:
    """Problems binding `call`'s arguments to `params`, each with the node to blame."""
    positional = [a for a in call.args if a.keyword is None and a.star == ""]
    starred = any(a.star for a in call.args)
    findings = _too_many(params, positional)
    bound = {p.name for p in [p for p in params if p.kind in _POSITIONAL][: len(positional)]}
    for arg in call.args:
        if arg.keyword is not None:
            findings += _keyword(params, arg, bound)
    missing = [p.name for p in params if p.kind in _NAMED and not p.has_default and p.name not in bound]
    if missing and not starred:
        findings.append((call, f"missing required argument(s) {', '.join(missing)}; signature {_spelled(params)}"))
    return findings
