"""The one place that decides which decorators are npudsl's: the run index, the collector and the rewriter ask it.

Every decorator is resolved where Python evaluates it: the names its root may be
bound to at that point of its scope (a method's decorators see the class body,
then the module as it was when the class statement ran; a nested function's
decorators see the function's names, then those of every enclosing scope as
they may be at call time). Imports under ``if``/``try``, ``from npudsl import *``,
aliases (``S = npudsl.on_stream``), ``global`` rebinding from a function and the
user's own definitions all count. A name that is npudsl's decorator on one path
and something else on another, or a decorator spelled one way that means
npudsl's here and something else elsewhere in the module (the rewriter strips by
spelling), cannot be decided with certainty: that is diagnostic NPD110, and the
file is not transformed. An ``except ImportError`` that follows a ``try`` of
npudsl imports alone never runs where npudsl runs, so its fallbacks are ignored.
"""

from __future__ import annotations

import ast
import weakref

import attrs
import libcst as cst

from codegen.frontend.names import bindings, scopes
from codegen.frontend.names.bindings import DECORATORS, OTHER, STAR
from codegen.frontend.names.name_flow import Flow
from codegen.frontend.names.sites import Problem, Site

__all__ = ["DECORATORS", "NpudslNames", "Problem", "Site", "cst_spelling", "resolve"]

_Key = tuple[int, int]


def _key(node: ast.stmt | ast.expr) -> _Key:
    return node.lineno, node.col_offset


@attrs.frozen(kw_only=True)
class NpudslNames:
    """How one module spells npudsl, as :func:`resolve` found it."""

    aliases: dict[str, str]  # module-level name -> the decorator it may be bound to
    modules: frozenset[str]  # module-level names that may be bound to npudsl or npudsl.decorators
    verdicts: dict[_Key, str]  # decorator position -> the npudsl decorator it certainly is
    spellings: dict[str, str]  # how the rewriter recognizes them: "npudsl.on_stream" -> "on_stream"
    problems: tuple[Problem, ...] = ()  # NPD110: decorators that cannot be resolved with certainty
    sites: dict[_Key | None, dict[str, list[Site]]] = attrs.Factory(dict)  # scope -> name -> bindings
    rebound: frozenset[str] = frozenset()  # module names a function may rebind (``global``); "*": a star import

    def decorator(self, node: ast.expr) -> str | None:
        """The npudsl decorator that ``node`` (an element of a ``decorator_list``) certainly is, or None."""
        return self.verdicts.get(_key(node))

    def strips(self, decorator: cst.Decorator) -> bool:
        """Whether the rewriter drops this decorator (its spelling is npudsl's throughout the module)."""
        return cst_spelling(decorator.decorator) in self.spellings

    def bindings_of(self, name: str, scope: ast.ClassDef | None = None) -> tuple[Site, ...]:
        """Where ``name`` is bound in the module's scope, or in ``scope``'s class body."""
        return tuple(self.sites.get(_key(scope) if scope is not None else None, {}).get(name, ()))


def cst_spelling(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a decorator ``@a.b.c`` or ``@a.b.c(...)``, as :func:`_spelling` spells the ``ast`` one."""
    target = node.func if isinstance(node, cst.Call) else node
    attrs_: list[str] = []
    while isinstance(target, cst.Attribute):
        attrs_.append(target.attr.value)
        target = target.value
    return ".".join([target.value, *attrs_[::-1]]) if isinstance(target, cst.Name) else None


def _spelling(node: ast.expr) -> str | None:
    found = bindings.spelled(node)
    return ".".join([found[0], *found[1]]) if found else None


_RESOLVED: weakref.WeakKeyDictionary[ast.Module, dict[bool, NpudslNames]] = weakref.WeakKeyDictionary()


def resolve(tree: ast.Module, *, walrus: bool = True) -> NpudslNames:
    """Resolve every decorator of ``tree`` (``walrus=False``: the source has no ``:=``, skip looking).

    Once per tree (the index and the transform of a run both ask): callers must not change what they get.
    """
    known = _RESOLVED.setdefault(tree, {})
    if walrus not in known:
        known[walrus] = _resolve(tree, walrus)
    return known[walrus]


def _resolve(tree: ast.Module, walrus: bool) -> NpudslNames:
    flow = Flow(walrus=walrus)
    flow.run(tree)
    verdicts: dict[_Key, str] = {}
    problems = list(flow.problems)
    spellings = _consistent_spellings(flow, problems)
    for node, values, _ in flow.decorators:
        verdict = _verdict(node, values, problems)
        if verdict is not None:
            verdicts[_key(node)] = verdict
    return NpudslNames(
        aliases=scopes.decorator_aliases(flow.module),
        modules=scopes.npudsl_modules(flow.module),
        verdicts=verdicts,
        spellings=spellings,
        problems=tuple(problems),
        sites=flow.sites,
        rebound=frozenset(flow.rebound),
    )


def _candidates(values: frozenset[str]) -> set[str]:
    """Each value as a decorator name, OTHER or STAR."""
    return {value if value in (OTHER, STAR) else bindings.decorator_of(value) or OTHER for value in values}


def _verdict(node: ast.expr, values: frozenset[str], problems: list[Problem]) -> str | None:
    found = _candidates(values)
    ours = found & DECORATORS
    spelled = bindings.spelled(node)
    last = spelled[1][-1] if spelled and spelled[1] else (spelled[0] if spelled else "")
    if len(found) == 1 and ours:
        return ours.pop()
    if ours or (STAR in found and last in DECORATORS):
        text = _spelling(node)
        if ours:
            message = (
                f"cannot tell whether @{text} is npudsl's {' or '.join(sorted(ours))}: at this point it may "
                "also be bound to something else"
            )
        else:
            message = f"cannot tell whether @{text} is npudsl's {last}: it may come from a star import"
        problems.append(
            Problem(
                node=node,
                message=message,
                hint="bind the name once, e.g. `from npudsl import on_stream` at the top of the "
                "module (after any star import), and give your own functions other names",
            )
        )
    return None


def _consistent_spellings(flow: Flow, problems: list[Problem]) -> dict[str, str]:
    """Spelling -> decorator, for the decorators the rewriter can reach (none inside a function)."""
    meanings: dict[str, dict[str, ast.expr]] = {}
    for node, values, reachable in flow.decorators:
        text = _spelling(node)
        if reachable and text is not None:
            found = _candidates(values)
            meaning = found.pop() if len(found) == 1 else "?"
            meanings.setdefault(text, {}).setdefault(meaning, node)
    spellings = {}
    for text, seen in meanings.items():
        ours = [m for m in seen if m in DECORATORS]
        if len(seen) == 1 and ours:
            spellings[text] = ours[0]
        elif ours and len(seen) > 1:
            other = min((n for m, n in seen.items() if m != ours[0]), key=_key)
            problems.append(
                Problem(
                    node=seen[ours[0]],
                    message=f"@{text} is npudsl's {ours[0]} here but "
                    f"something else at line {other.lineno}; npudsl reads each spelling one way "
                    "per module",
                    hint="give your own decorator another name, or import npudsl's "
                    "under another name (`from npudsl import on_stream as S`)",
                )
            )
    return spellings
