"""Which arguments a torch_npu op writes, by its schema (``npu_table.py``): ``Tensor(a!)``, nothing else.

``torch_npu.npu_rms_norm(x, w)`` is declared ``npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) ->
(Tensor, Tensor)``: it writes nothing. ``torch_npu.npu_scatter_nd_update_(cache, idx, upd)`` is declared with
``Tensor(a!) self``: it writes ``cache``. An op whose kernel writes an argument its schema leaves plain
(``npu_kv_rmsnorm_rope_cache``: ``UNDECLARED``), and a name the table lacks, are unknown: None. The table is
read on the first question only, so a run that calls no torch_npu op never loads it.
"""

from __future__ import annotations

import functools
import re

import attrs

__all__ = ["Param", "written_params"]

_ARG = re.compile(r"^(?P<type>\S+)\s+(?P<name>\w+)(?:=.*)?$", re.S)


@attrs.frozen
class Param:
    """A parameter an overload writes: where a call may pass it (``position`` None: by keyword only)."""

    name: str
    position: int | None


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


@functools.cache
def _parsed(op: str) -> tuple[tuple[str, tuple[Param, ...]], ...] | None:
    """(overload name, parameters written) for each schema of ``op``; None for an op unknown or undeclared."""
    from codegen.lower.flow.npu_table import UNDECLARED

    schemas = _by_op().get(op)
    if schemas is None or op in UNDECLARED:
        return None
    return tuple((head.partition(".")[2], _written(rest.rpartition(") ->")[0])) for head, rest in schemas)


@functools.cache
def _by_op() -> dict[str, list[tuple[str, str]]]:
    """op -> its schemas, each split at the argument list: (``name.overload``, the rest)."""
    from codegen.lower.flow.npu_table import SCHEMAS

    found: dict[str, list[tuple[str, str]]] = {}
    for schema in SCHEMAS:
        head, _, rest = schema.partition("(")
        found.setdefault(head.partition(".")[0], []).append((head, rest))
    return found


def _written(arguments: str) -> tuple[Param, ...]:
    """The parameters of an argument list (``Tensor(a!) self, Tensor x, *, Tensor(b!) out``) typed ``!``."""
    written: list[Param] = []
    position: int | None = 0
    for argument in _split(arguments):
        if argument == "*":
            position = None
            continue
        match = _ARG.match(argument)
        if match is not None and "!" in match.group("type"):
            written.append(Param(match.group("name"), position))
        position = None if position is None else position + 1
    return tuple(written)


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
