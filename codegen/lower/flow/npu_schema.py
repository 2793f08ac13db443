"""Which arguments a torch_npu op writes, and which its result is, by its schema (``npu_table.py``).

``torch_npu.npu_rms_norm(x, w)`` is declared ``npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) ->
(Tensor, Tensor)``: it writes nothing. ``torch_npu.npu_scatter_nd_update_(cache, idx, upd)`` is declared with
``Tensor(a!) self``: it writes ``cache``, and its result ``-> Tensor(a!)`` is ``cache`` itself. Where the schema
leaves plain what the kernel writes, the table's ``KERNEL_WRITES`` says what (``npu_kv_rmsnorm_rope_cache``: its
two caches, read from op-plugin's sources) and ``RETURNED`` which results are arguments as they came; an op whose
kernel writes what nothing says (``UNDECLARED``), and a name the table lacks, are unknown: None. The table is
read on the first question only, so a run that calls no torch_npu op never loads it.
"""

from __future__ import annotations

import functools
import re

import attrs

__all__ = ["Param", "Returned", "returned_params", "written_params"]

_ARG = re.compile(r"^(?P<type>\S+)\s+(?P<name>\w+)(?:=.*)?$", re.S)


@attrs.frozen
class Param:
    """A parameter an overload writes: where a call may pass it (``position`` None: by keyword only)."""

    name: str
    position: int | None


@attrs.frozen
class Returned:
    """A result of an overload that is one of its arguments as it came."""

    position: int | None  # the element of the tuple it returns; None: the op returns this one tensor
    param: Param


def written_params(op: str, overload: str | None = None) -> tuple[tuple[Param, ...], ...] | None:
    """Per overload of ``op`` (only ``overload``, where named: ``default`` is the unnamed one), the parameters
    it writes; None where the table lacks the op or the overload, or the op writes what its schema hides."""
    overloads = _parsed(op)
    if overloads is None:
        return None
    chosen = [params for name, params in overloads if overload is None or name == _named(overload)]
    return tuple(chosen) if chosen else None


def _named(overload: str) -> str:
    return "" if overload == "default" else overload


def returned_params(op: str, overload: str | None = None) -> tuple[Returned, ...] | None:
    """The results of ``op`` (of ``overload`` only, where named) that may be one of its arguments; None where the
    table lacks the op or the overload."""
    from codegen.lower.flow.npu_table import RETURNED

    schemas = [(head.partition(".")[2], rest) for head, rest in _by_op().get(op, [])]
    chosen = [rest for name, rest in schemas if overload is None or name == _named(overload)]
    if not chosen:
        return None
    found = {r for rest in chosen for r in _aliased(rest)}
    for rest in chosen:
        params = {p.name: p.param for p in _params(rest.rpartition(") ->")[0])}
        single = not rest.rpartition(") ->")[2].strip().startswith("(")
        found |= {Returned(None if single else at, params[n]) for at, n in RETURNED.get(op, ()) if n in params}
    return tuple(sorted(found, key=lambda r: (r.position or 0, r.param.name)))


def _aliased(rest: str) -> set[Returned]:
    """The results a schema's text (after the op's name) types as an argument's alias set (``-> Tensor(a!)``)."""
    arguments, _, results = rest.rpartition(") ->")
    sets = {p.alias: p for p in _params(arguments) if p.alias}
    items = _split(results.strip()[1:-1]) if results.strip().startswith("(") else [results.strip()]
    single = len(items) == 1 and not results.strip().startswith("(")
    found = set()
    for at, item in enumerate(items):
        alias = re.match(r"Tensor\((\w+)!?\)", item)
        if alias is not None and alias.group(1) in sets:
            found.add(Returned(None if single else at, sets[alias.group(1)].param))
    return found


@functools.cache
def _parsed(op: str) -> tuple[tuple[str, tuple[Param, ...]], ...] | None:
    """(overload name, parameters written) for each schema of ``op``; None for an op unknown or undeclared."""
    from codegen.lower.flow.npu_table import KERNEL_WRITES, UNDECLARED

    schemas = _by_op().get(op)
    if schemas is None or op in UNDECLARED:
        return None
    hidden = frozenset(KERNEL_WRITES.get(op, ()))
    return tuple((head.partition(".")[2], _written(rest.rpartition(") ->")[0], hidden)) for head, rest in schemas)


@functools.cache
def _by_op() -> dict[str, list[tuple[str, str]]]:
    """op -> its schemas, each split at the argument list: (``name.overload``, the rest)."""
    from codegen.lower.flow.npu_table import SCHEMAS

    found: dict[str, list[tuple[str, str]]] = {}
    for schema in SCHEMAS:
        head, _, rest = schema.partition("(")
        found.setdefault(head.partition(".")[0], []).append((head, rest))
    return found


@attrs.frozen
class _Typed:
    param: Param
    alias: str  # the alias set its type names (``a`` of ``Tensor(a!)``), or ""
    writes: bool

    @property
    def name(self) -> str:
        return self.param.name


def _written(arguments: str, hidden: frozenset[str] = frozenset()) -> tuple[Param, ...]:
    """The parameters of an argument list (``Tensor(a!) self, Tensor x, *, Tensor(b!) out``) typed ``!``, and those
    named in ``hidden`` (the kernel writes them)."""
    return tuple(p.param for p in _params(arguments) if p.writes or p.name in hidden)


def _params(arguments: str) -> list[_Typed]:
    """Each parameter of an argument list, where a call may pass it, and its type's alias set."""
    found: list[_Typed] = []
    position: int | None = 0
    for argument in _split(arguments):
        if argument == "*":
            position = None
            continue
        match = _ARG.match(argument)
        if match is not None:
            alias = re.match(r"Tensor\((\w+)", match.group("type"))
            typed = Param(match.group("name"), position)
            found.append(_Typed(typed, alias.group(1) if alias else "", "!" in match.group("type")))
        position = None if position is None else position + 1
    return found


def _split(arguments: str) -> list[str]:
    """The arguments at the top level of the list: commas inside brackets or quotes do not split
    (``int[2] active_expert_range=[1, 2]``)."""
    parts, depth, quote, start = [], 0, "", 0
    for at, char in enumerate(arguments):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(arguments[start:at].strip())
            start = at + 1
    parts.append(arguments[start:].strip())
    return [part for part in parts if part]
