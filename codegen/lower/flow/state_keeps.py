"""The tensors a stream call reads through objects the caller changes, named: ``record_stream`` of each, no walk.

vllm_qwen3_dbo's caller fills a dispatcher on its own stream (``token_dispatchers[i].preprocess_and_permtute1(...)``)
and its stream calls read what it left there: the dispatch is given the dispatcher (``token_dispatcher:
TokenDispatcher``), the combine takes it from its module's state (``self.experts.token_dispatchers[i]``). Those
tensors must be kept alive for the side stream, which reads them after the caller's stream goes on (and drops
them: ``_release``). They are named from the dispatcher's class, in any file the run holds (``class_state.py``):
the attributes the call's body reads before storing them itself and that a method stores per call
(``object_attributes.py``), spelled in the caller's terms (``token_dispatchers[i].permuted_tokens``;
``self.experts.token_dispatchers[i].topk_weights``, the callee's index parameter replaced by the caller's
argument). :func:`state_keeps` gives them, or None where a class is unknown or the body uses such an object
otherwise: the call then stays at once (NPD501). Keeping names rather than walking the object also keeps
``torch.compile`` to one graph: a walk guards on which attributes the object has, which its first call changes.

A tensor needs the keep only where its last reference may go while the side stream reads it. An object that
outlives the caller (given to it, a parameter it never binds again, or its own state: ``self.a.b``) holds its
attributes past the caller's join, so of such an object only what the body lets go of is kept (stored or deleted
on some path, ``Effect.drops``: ``take``'s ``self.t = None``); ``s = meta.t.sum()`` keeps nothing. An object the
caller builds dies with it: all it reads is kept. A chain of the caller's own state given whole (``self.side(x,
self.a.b)`` after ``self.a.b.load(x)``) is read as a given object too, where it was left unkept.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import attrs

from codegen.index import scan
from codegen.lower.flow.changed_objects import changed_below, object_path
from codegen.lower.flow.class_state import ClassState, Effect, sequence
from codegen.lower.flow.exprs import chain_root
from codegen.lower.flow.object_attributes import constructed, per_call
from codegen.lower.flow.object_chains import Chain, Here, chain_class, class_named, state_chains
from codegen.lower.flow.spelling import spelled_expr

__all__ = ["Asked", "given_arguments", "state_keeps"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
Holds = Callable[[ast.expr], bool | None]  # True: the object; None: a binding of it that does nothing; False: not
Keeps = tuple[tuple[str, ...], frozenset[str]]  # the expressions to keep, the caller's names holding the objects


@attrs.frozen(kw_only=True)
class Asked:
    """One call as the caller asks it: the run, the module lowered, the call, its callee's key and the source of the
    callee's ``self``; ``objects``: the names whose object the caller changes (``changed_objects.changed_roots``),
    ``own``: the paths of its receiver's state it changes (``self.a.b``), ``attributes``: its object's attributes it
    changes through a local, ``classed``: the callee's parameters annotated with a class, ``kept``: the caller's
    names whose objects outlive it (``changed_objects.kept_names``: given to it, or its receiver)."""

    index: Any
    here: Here
    call: ast.Call
    key: str
    receiver: str | None
    objects: frozenset[str]
    own: frozenset[str]
    attributes: frozenset[str]
    classed: frozenset[str]
    kept: frozenset[str]


def state_keeps(asked: Asked) -> Keeps | None:
    """The caller's expressions to keep for the call: the tensors the callee reads of the objects the caller changes
    (given to a parameter annotated with a class, or reached through its receiver's state), and the caller's names
    holding the objects it is given. None: one cannot be named."""
    module, _, qualname = asked.key.partition(":")
    fn = _callee(asked, module, qualname)
    chains = state_chains(fn, asked.attributes) if fn is not None and asked.receiver else []
    if fn is None or chains is None:
        return None
    given = given_arguments(asked.call, fn)
    params = _params_keeps(asked, module, fn, given)
    chained = [_chain_keeps(asked, module, qualname, fn, chain, given) for chain in chains]
    if params is None or any(found is None for found in chained):
        return None
    keeps = [*params[0], *(k for found in chained for k in found or ())]
    return tuple(dict.fromkeys(keeps)), params[1]


def _callee(asked: Asked, module: str, qualname: str) -> _Function | None:
    """The callee's definition, in the module lowered or another of the run (None: not found, or no ``self``)."""
    here, returns = asked.here, getattr(asked.index, "returns", None)
    tree = here[1] if module == here[0] else getattr(returns, "tree_of", lambda _: None)(module)
    fn = scan.functions_by_qualname(tree).get(qualname) if tree is not None else None
    return fn if fn is not None and fn.args.args else None


def _params_keeps(asked: Asked, module: str, fn: _Function, given: dict[str, ast.expr]) -> Keeps | None:
    """What to keep of the changed objects the call is given, and the caller's names holding them."""
    keeps: list[str] = []
    holders: set[str] = set()
    for name, argument in given.items():
        if name in asked.classed and _changed(asked, argument):
            found = _param_keeps(asked, module, fn, name, argument)
            if found is None:
                return None
            keeps += found
            holders |= set() if isinstance(argument, ast.Attribute) else {chain_root(argument)}
    return tuple(keeps), frozenset(holders)


def _changed(asked: Asked, argument: ast.expr) -> bool:
    """The caller changes the object ``argument`` names: one it holds by name (or an item of it), or a chain of its
    receiver's state changed at or below it (``self.a.b`` of ``self.a.b.load(x)``)."""
    if not isinstance(argument, ast.Attribute):
        return chain_root(argument) in asked.objects
    path = object_path(argument)
    return path is not None and changed_below(path, asked.own) and _plain(argument)


def _param_keeps(asked: Asked, module: str, fn: _Function, name: str, argument: ast.expr) -> list[str] | None:
    """``argument.attr`` for each attribute to keep of the object the parameter ``name`` is given: each the body
    reads that a call may have made; of an object that outlives the caller, only those the body may let go of
    (stored or deleted: the object's own reference keeps the others alive past the caller's join)."""
    param = next(a for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs) if a.arg == name)
    cls = class_named(asked.index, asked.here, module, _annotation_name(param.annotation))
    outlives = chain_root(argument) in asked.kept
    named = _named(cls[1], fn.body, lambda n: isinstance(n, ast.Name) and n.id == name, outlives) if cls else None
    return None if named is None or not _plain(argument) else [f"{spelled_expr(argument)}.{a}" for a in sorted(named)]


def _annotation_name(written: ast.expr | None) -> str:
    """The name an annotation gives its class: ``X``, ``mod.X``, the text of ``"X"``; "" where it writes no name."""
    if isinstance(written, ast.Constant) and isinstance(written.value, str):
        return written.value
    return (scan.dotted_name(written) or "") if written is not None else ""


def _chain_keeps(
    asked: Asked, module: str, qualname: str, fn: _Function, chain: Chain, given: dict[str, ast.expr]
) -> list[str] | None:
    """``<receiver>.a.b[<argument>].attr`` for each attribute to keep of the object a state chain reaches."""
    cls = chain_class(asked.index, asked.here, module, qualname.rpartition(".")[0], chain)
    index_given = given.get(chain.index) if isinstance(chain.index, str) else ast.Constant(chain.index)
    if cls is None or index_given is None or not isinstance(index_given, (ast.Name, ast.Constant)):
        return None
    named = _named(cls, fn.body, chain.holds)
    spelled = f"{asked.receiver}.{'.'.join(chain.path)}[{spelled_expr(index_given)}]"
    return None if named is None else [f"{spelled}.{a}" for a in sorted(named)]


def _named(
    cls: ast.ClassDef | None, body: list[ast.stmt], holds: Holds, outlives: bool = False
) -> frozenset[str] | None:
    """The attributes to keep of the object ``holds`` recognizes in ``body`` (None: not nameable); of an object that
    ``outlives`` the caller, those the body may let go of."""
    state = ClassState(cls) if cls is not None else None
    if state is None or not state.plain:
        return None
    effect = sequence(
        body, lambda node: Effect() if holds(node) is None else state.use(node, lambda n: holds(n) is True)
    )
    if effect is None:
        return None
    wanted = effect.needs & per_call(cls) & (effect.drops if outlives else effect.needs)  # type: ignore[arg-type]
    return wanted if wanted <= effect.sure | constructed(state, cls) else None  # type: ignore[arg-type]


def given_arguments(call: ast.Call, fn: _Function) -> dict[str, ast.expr]:
    """The callee's parameters (not its ``self``) that the call gives a value, by name (none where it spreads
    ``*args`` or ``**kwargs``)."""
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)][1:]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return {}
    given = dict(zip(positional, call.args, strict=False))
    given.update({k.arg: k.value for k in call.keywords if k.arg is not None})
    return given


def _plain(node: ast.expr) -> bool:
    """Names, attributes and items by a name or constant: the same value at the keep as at the call."""
    allowed = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Load)
    return all(isinstance(n, allowed) for n in ast.walk(node))
