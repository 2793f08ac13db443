"""The user's own name for a value of a captured graph, read from the user's source line.

Dynamo names nodes after the variables of the code it traced, and that code may be
generated (``out = x @ x.T`` for ``return x @ x.T``) or suffixed (``add_3``). The
source line that a node's stack trace points to is the user's own (the in-process
transform maps lines back), so the name comes from there: the assigned variable
(``h = x * 2`` gives ``h``; ``a, b = x.chunk(2)`` gives ``a`` for the first part),
else the expression itself (``return x.sin()`` gives ``x.sin()``). Graph inputs are
named by where dynamo found them (``x``, ``self.cache``). A view made on a line of
its own is named with the tensor it views: ``'flat' (a view of 'h')``.
"""

from __future__ import annotations

import ast
import functools
import linecache
import operator

import torch
import torch.fx

from npudsl.race._source import input_name, user_line

__all__ = ["describe", "describe_memory"]

_LONGEST = 48


def _short(text: str) -> str:
    return text if len(text) <= _LONGEST else text[: _LONGEST - 3] + "..."


def _target(target: ast.expr, index: int | None) -> str:
    if isinstance(target, (ast.Tuple, ast.List)):
        if index is not None and index < len(target.elts) and not any(isinstance(e, ast.Starred) for e in target.elts):
            return _target(target.elts[index], None)
        return ", ".join(_target(element, None) for element in target.elts)
    return ast.unparse(target)


@functools.lru_cache(maxsize=4096)
def _from_line(text: str, index: int | None) -> str | None:
    try:
        body = ast.parse(text.strip()).body
    except SyntaxError:
        return None
    statement = body[0] if len(body) == 1 else None
    if isinstance(statement, ast.Assign):
        return _target(statement.targets[0], index)
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        return _target(statement.target, index)
    if isinstance(statement, (ast.Return, ast.Expr)) and statement.value is not None:
        return _short(ast.unparse(statement.value))
    return None


def _index(node: torch.fx.Node) -> tuple[torch.fx.Node, int | None]:
    """A ``getitem`` with a constant index stands for that part of its (multi-output) argument."""
    if node.op == "call_function" and node.target is operator.getitem and isinstance(node.args[1], int):
        return node, node.args[1]
    return node, None


def describe(node: torch.fx.Node) -> str:
    """The user's name for ``node``'s value, quoted: ``'h'``, ``'x.sin()'``, ``'self.cache'``."""
    if node.op in ("placeholder", "get_attr"):
        return f"'{input_name(node)}'"
    node, index = _index(node)
    found = user_line(node)
    text = linecache.getline(found[0], found[1]) if found else ""
    name = _from_line(text, index) if text.strip() else None
    return f"'{name or node.name}'"


def describe_memory(memory: torch.fx.Node, through: torch.fx.Node, used_by: torch.fx.Node) -> str:
    """The user's name for the value ``through`` that ``used_by`` used, whose memory ``memory`` allocated.

    A view the user named on a line of its own is named with what it views; one written
    inside the using expression (``acc[..., :2].exp()``) has no name and is named by its memory.
    """
    line = user_line(through)
    if through is memory or line == user_line(used_by):
        return describe(memory)
    if line == user_line(memory):  # a part of a multi-output op: `first, second = h.chunk(2)`
        return describe(through)
    return f"{describe(through)} (a view of {describe(memory)})"
