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
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from codegen.index import scan
from codegen.index.walked import walked_of
from codegen.lower.flow.class_state import ClassState, Effect, sequence
from codegen.lower.flow.exprs import chain_root
from codegen.lower.flow.object_attributes import constructed, per_call
from codegen.lower.flow.object_chains import Chain, Here, chain_class, class_named, state_chains
from codegen.lower.flow.spelling import spelled_expr

__all__ = ["given_arguments", "state_keeps", "through_locals"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
Holds = Callable[[ast.expr], bool | None]  # True: the object; None: a binding of it that does nothing; False: not


def state_keeps(
    index: Any,
    here: Here,
    call: ast.Call,
    key: str,
    receiver: str | None,
    objects: frozenset[str],
    attributes: frozenset[str],
    classed: frozenset[str],
) -> tuple[tuple[str, ...], frozenset[str]] | None:
    """The caller's expressions to keep for its call ``call`` of ``key`` (``receiver``: the source of the callee's
    ``self``): the tensors the callee reads of the objects the caller changes (``objects``: names whose object it
    changes, given to a parameter of ``classed``, those annotated with a class; ``attributes``: its object's
    attributes it changes through a local), and the caller's names holding the objects it is given. None: one cannot
    be named."""
    module, _, qualname = key.partition(":")
    tree = here[1] if module == here[0] else getattr(getattr(index, "returns", None), "tree_of", lambda _: None)(module)
    fn = scan.functions_by_qualname(tree).get(qualname) if tree is not None else None
    chains = state_chains(fn, attributes) if fn is not None and fn.args.args and receiver else []
    if fn is None or not fn.args.args or chains is None:
        return None
    given = given_arguments(call, fn)
    keeps: list[str] = []
    holders: set[str] = set()
    for name, argument in given.items():
        if chain_root(argument) in objects and name in classed and not isinstance(argument, ast.Attribute):
            found = _param_keeps(index, here, module, fn, name, argument)
            if found is None:
                return None
            keeps += found
            holders.add(chain_root(argument))
    for chain in chains:
        found = _chain_keeps(index, here, module, qualname, fn, chain, given, receiver or "")
        if found is None:
            return None
        keeps += found
    return tuple(dict.fromkeys(keeps)), frozenset(holders)


def _param_keeps(index: Any, here: Here, module: str, fn: _Function, name: str, argument: ast.expr) -> list[str] | None:
    """``argument.attr`` for each attribute to keep of the object the parameter ``name`` is given."""
    param = next(a for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs) if a.arg == name)
    cls = class_named(index, here, module, _annotation_name(param.annotation))
    named = _named(cls[1], fn.body, lambda n: isinstance(n, ast.Name) and n.id == name) if cls else None
    return None if named is None or not _plain(argument) else [f"{spelled_expr(argument)}.{a}" for a in sorted(named)]


def _annotation_name(written: ast.expr | None) -> str:
    """The name an annotation gives its class: ``X``, ``mod.X``, the text of ``"X"``; "" where it writes no name."""
    if isinstance(written, ast.Constant) and isinstance(written.value, str):
        return written.value
    return (scan.dotted_name(written) or "") if written is not None else ""


def _chain_keeps(
    index: Any,
    here: Here,
    module: str,
    qualname: str,
    fn: _Function,
    chain: Chain,
    given: dict[str, ast.expr],
    receiver: str,
) -> list[str] | None:
    """``<receiver>.a.b[<argument>].attr`` for each attribute to keep of the object a state chain reaches."""
    cls = chain_class(index, here, module, qualname.rpartition(".")[0], chain)
    index_given = given.get(chain.index) if isinstance(chain.index, str) else ast.Constant(chain.index)
    if cls is None or index_given is None or not isinstance(index_given, (ast.Name, ast.Constant)):
        return None
    named = _named(cls, fn.body, chain.holds)
    spelled = f"{receiver}.{'.'.join(chain.path)}[{spelled_expr(index_given)}]"
    return None if named is None else [f"{spelled}.{a}" for a in sorted(named)]


def _named(cls: ast.ClassDef | None, body: list[ast.stmt], holds: Holds) -> frozenset[str] | None:
    """The attributes to keep of the object ``holds`` recognizes in ``body`` (None: not nameable)."""
    state = ClassState(cls) if cls is not None else None
    if state is None or not state.plain:
        return None
    effect = sequence(
        body, lambda node: Effect() if holds(node) is None else state.use(node, lambda n: holds(n) is True)
    )
    if effect is None:
        return None
    wanted = effect.needs & per_call(cls)  # type: ignore[arg-type]
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


def through_locals(fn: _Function, call: ast.Call, keeps: tuple[str, ...]) -> tuple[str, ...]:
    """``keeps`` spelled through the caller's locals where one holds the start of a keep: ``token_dispatchers =
    self.experts.token_dispatchers`` at the top of ``fn``, before the call, bound nowhere else, makes
    ``self.experts.token_dispatchers[i].topk_weights`` read ``token_dispatchers[i].topk_weights`` (unless ``fn``
    stores that chain itself, or a part of it)."""
    if not keeps:
        return keeps
    stored = [n.id for n in walked_of(fn, ast.Name) if not isinstance(n.ctx, ast.Load)]
    held: dict[str, str] = {}
    for stmt in fn.body:
        if stmt.lineno >= call.lineno or not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target = stmt.targets[0]
        if isinstance(target, ast.Name) and stored.count(target.id) == 1 and _attributes(stmt.value):
            held[spelled_expr(stmt.value)] = target.id
    targets = [spelled_expr(t) for t in walked_of(fn, ast.Attribute) if not isinstance(t.ctx, ast.Load)]
    held = {text: name for text, name in held.items() if not any(t.startswith(text) for t in targets)}
    return tuple(_respelled(k, held) for k in keeps)


def _respelled(keep: str, held: dict[str, str]) -> str:
    for text, name in held.items():
        if keep.startswith(f"{text}["):
            return name + keep[len(text) :]
    return keep


def _attributes(node: ast.expr) -> bool:
    """A chain of attributes of a name (``self.experts.token_dispatchers``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)
